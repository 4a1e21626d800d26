"""Where ``semrel fit`` starts: the transformer folder of any model argument
(:class:`~trainers.model_ref.ModelRef`) for the encoder it trains (:func:`starting_folder`), and
what the run's card and ``metrics.json`` say of it (:func:`base_model`).

* ``transformer`` -- the folder: a new head (cross) or pooling (bi, tri) over it.
* ``bi-encoder`` (sentence-transformers) -- its Transformer module's folder (the root or
  ``0_Transformer``). Its modules must be Transformer, Pooling and Normalize (cosine ignores
  the norm; a Dense layer would be dropped: refused); a bi- or tri-encoder pools by mean or cls
  (another pooling is refused), by its ``pooling`` option: where that is not the model's own,
  :func:`pooling_note` says so.
* ``cross-encoder`` (sentence-transformers ``CrossEncoder``) -- the folder: a cross-encoder goes
  on training it, its one-label head included; a bi- or tri-encoder takes its transformer
  without the head (how a bi-encoder may start from a cross-encoder's base).
* ``semrel`` -- a run of ``semrel fit``, as its transformer: the same encoder goes on training
  it (a cross-encoder its head too), another kind starts a new head over it. A run with layers
  only semrel loads (a tri-encoder's condition layers, ``semrel_head.safetensors``) is refused;
  a pooling other than the run's is said, as for a sentence-transformers model.
* ``ensemble`` -- refused: an ensemble cannot be fine-tuned; pass one of its members.

A cross-encoder needs a head of one label: a sequence-classification model with more labels is
refused (start from its base transformer). Every refusal is a ParameterError in one line.
"""

from __future__ import annotations

import json
from pathlib import Path

from semrel.dataset_scripts.pretrained import PACKAGED_MODELS, known_base_model
from semrel.metrics.errors import ParameterError

from .model_ref import ModelRef
from .options import POOLINGS
from .run_folder.files import CARD, CONFIG, HEAD, ST_MODULES, read_encoder_config, read_json_object

ST_KEPT = ("Transformer", "Pooling", "Normalize")  # sentence-transformers modules fit can start from
LEGACY_POOLING = {  # sentence-transformers' pooling_mode_* keys, in its order
    "pooling_mode_cls_token": "cls", "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_tokens": "mean", "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens": "weightedmean", "pooling_mode_lasttoken": "lasttoken"}


def sentence_transformers_pooling(config: dict) -> str:
    """The pooling a sentence-transformers ``Pooling`` config declares (``pooling_mode``, or its
    legacy ``pooling_mode_*`` flags; mean when none is set), several joined by ``+``."""
    mode = config.get("pooling_mode")
    if mode is None:
        mode = [name for key, name in LEGACY_POOLING.items() if config.get(key)] or "mean"
    return mode if isinstance(mode, str) else "+".join(map(str, mode))


def _modules(ref: ModelRef, parameter: str) -> list[tuple[str, str]]:
    """(type's last name, folder) of each module ``modules.json`` lists."""
    try:
        listed = json.loads((ref.path / ST_MODULES).read_text(encoding="utf-8"))
        return [(str(m["type"]).rsplit(".", 1)[-1], str(m.get("path") or "")) for m in listed]
    except (OSError, ValueError, TypeError, KeyError):
        raise ParameterError(parameter, ref.spec, f"{ST_MODULES} is not a list of modules with a "
                             "type and a path") from None


def _bi_encoder_start(ref: ModelRef, parameter: str) -> Path:
    modules = _modules(ref, parameter)
    other = [kind for kind, _ in modules if kind not in ST_KEPT]
    if other or not modules or modules[0][0] != "Transformer":
        raise ParameterError(parameter, ref.spec, f"a sentence-transformers model of modules "
                             f"{' -> '.join(k for k, _ in modules)}: fit starts from one of "
                             f"{', '.join(ST_KEPT)} (a Transformer first), where no layer is dropped")
    return ref.path / modules[0][1]


def own_pooling(ref: ModelRef, encoder: str, parameter: str = "model_path") -> tuple[str, str] | None:
    """``(pooling, the file that says it)`` of the model a bi- or tri-``encoder`` starts from: a
    sentence-transformers bi-encoder's Pooling module, a semrel bi- or tri-encoder run's; None
    where there is none to keep (a cross-encoder, a transformer, a cross-encoder run)."""
    if encoder == "cross":
        return None
    if ref.kind == "semrel":
        options = read_encoder_config(ref.path, parameter, ref.spec)
        return None if options["kind"] == "cross" else (options.get("pooling") or "mean",
                                                        "its semrel_encoder.json")
    if ref.kind != "bi-encoder":
        return None
    pooled = [folder for kind, folder in _modules(ref, parameter) if kind == "Pooling"]
    if not pooled or not (ref.path / pooled[0] / CONFIG).is_file():
        raise ParameterError(parameter, ref.spec, "a sentence-transformers model without a "
                             f"Pooling module ({CONFIG}): a {encoder}-encoder keeps the pooling it "
                             "starts from")
    config = read_json_object(ref.path / pooled[0] / CONFIG, parameter, ref.spec)
    return sentence_transformers_pooling(config), f"its {pooled[0]}/{CONFIG}"


def pooling_note(ref: ModelRef, encoder: str, pooling: str) -> str | None:
    """What to say when a bi- or tri-encoder pools otherwise than the model it starts from (it
    pools by ``pooling``, its option), or None."""
    own = own_pooling(ref, encoder)
    if own is None or own[0] == pooling:
        return None
    return (f"{ref.spec} pools by {own[0]} ({own[1][4:]}); this {encoder}-encoder pools by "
            f"{pooling}, as its pooling option says (set it to {own[0]} to keep the model's)")


def _semrel_start(ref: ModelRef, parameter: str) -> Path:
    options = read_encoder_config(ref.path, parameter, ref.spec)
    if (ref.path / HEAD).is_file() or options["kind"] == "tri":
        raise ParameterError(parameter, ref.spec, f"a {options['kind']}-encoder run with layers "
                             f"only semrel loads ({HEAD}) cannot be a starting point: start from "
                             "the transformer it was trained from")
    return ref.path


def _one_label(folder: Path, ref: ModelRef, parameter: str) -> None:
    """A cross-encoder starts from a head of one label, or from a transformer without a head."""
    config = read_json_object(folder / CONFIG, parameter, ref.spec) if (folder / CONFIG).is_file() else {}
    if not any(str(a).endswith("ForSequenceClassification") for a in config.get("architectures") or []):
        return
    labels = len(config.get("id2label") or {}) or config.get("num_labels", 1)
    if labels != 1:
        raise ParameterError(parameter, ref.spec, f"its classification head has {labels} labels; "
                             "a cross-encoder scores with one: start from its base transformer")


def starting_folder(ref: ModelRef, encoder: str, parameter: str = "model_path") -> Path:
    """The transformer folder an ``encoder`` ('cross' | 'bi' | 'tri') starts from (see the
    module docstring); a ParameterError on ``parameter`` in one line for a model it cannot start
    from. The encoder pools by its own option, which may differ from the model's
    (:func:`pooling_note` says so)."""
    if ref.kind == "ensemble":
        raise ParameterError(parameter, ref.spec, "an ensemble cannot be fine-tuned; pass one of "
                             "its members")
    if ref.kind == "semrel":
        folder = _semrel_start(ref, parameter)
    elif ref.kind == "bi-encoder":
        folder = _bi_encoder_start(ref, parameter)
    else:  # cross-encoder, transformer
        folder = ref.path
    if encoder == "cross":
        _one_label(folder, ref, parameter)
    own = own_pooling(ref, encoder, parameter)
    if own is not None and own[0] not in POOLINGS:
        raise ParameterError(parameter, ref.spec, f"pools by {own[0]} ({own[1]}); semrel pools by "
                             f"{' or '.join(POOLINGS)}: start from its transformer "
                             "({model_kind} transformer)")
    return folder


def base_model(ref: ModelRef, folder: Path) -> tuple[str, str | None] | None:
    """``(Hub id, licence)`` for the card's ``base_model``/``license``: a Hub model's id (its
    card's licence, where it names one other than ``other``), a packaged model's, or a folder
    whose weights are a packaged model's (:func:`known_base_model`); else None."""
    if ref.hub_id:
        licence = None
        if (ref.path / CARD).is_file():
            from huggingface_hub import ModelCard

            licence = ModelCard.load(ref.path / CARD, ignore_metadata_errors=True).data.license
        return ref.hub_id, licence if isinstance(licence, str) and licence != "other" else None
    if ref.spec in PACKAGED_MODELS:
        return PACKAGED_MODELS[ref.spec].hub_id, PACKAGED_MODELS[ref.spec].license
    return known_base_model(folder)
