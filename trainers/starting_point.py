"""Where ``semrel fit`` starts: the transformer folder of any model argument
(:class:`~trainers.model_ref.ModelRef`) for the encoder it trains (:func:`starting_folder`), and
what the run's card and ``metrics.json`` say of it (:func:`base_model`).

* ``transformer`` -- the folder: a new head (cross) or pooling (bi, tri) over it.
* ``bi-encoder`` (sentence-transformers) -- its Transformer module's folder (the root or
  ``0_Transformer``). Its modules must be Transformer, Pooling and Normalize (cosine ignores
  the norm; a Dense layer would be dropped: refused); a bi- or tri-encoder keeps its pooling,
  which must be ``--pooling`` (mean or cls; another is refused).
* ``cross-encoder`` (sentence-transformers ``CrossEncoder``) -- the folder: a cross-encoder goes
  on training it, its one-label head included; a bi- or tri-encoder takes its transformer
  without the head (how a bi-encoder may start from a cross-encoder's base).
* ``semrel`` -- a run of ``semrel fit``, as its transformer: the same encoder goes on training
  it (a cross-encoder its head too), another kind starts a new head over it. A run with layers
  only semrel loads (a tri-encoder's condition layers, ``semrel_head.safetensors``) is refused,
  and so is a pooling other than the run's.
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


def _bi_encoder_start(ref: ModelRef, encoder: str, pooling: str, parameter: str) -> Path:
    modules = _modules(ref, parameter)
    other = [kind for kind, _ in modules if kind not in ST_KEPT]
    if other or not modules or modules[0][0] != "Transformer":
        raise ParameterError(parameter, ref.spec, f"a sentence-transformers model of modules "
                             f"{' -> '.join(k for k, _ in modules)}: fit starts from one of "
                             f"{', '.join(ST_KEPT)} (a Transformer first), where no layer is dropped")
    if encoder != "cross":
        pooled = [folder for kind, folder in modules if kind == "Pooling"]
        if not pooled or not (ref.path / pooled[0] / CONFIG).is_file():
            raise ParameterError(parameter, ref.spec, "a sentence-transformers model without a "
                                 f"Pooling module ({CONFIG}): a {encoder}-encoder keeps the "
                                 "pooling it starts from")
        config = ref.path / pooled[0] / CONFIG
        mode = sentence_transformers_pooling(read_json_object(config, parameter, ref.spec))
        _same_pooling(ref, mode, pooling, f"its {pooled[0]}/{CONFIG}", parameter)
    return ref.path / modules[0][1]


def _same_pooling(ref: ModelRef, mode: str, pooling: str, where: str, parameter: str) -> None:
    if mode == pooling:
        return
    hint = f"set {{pooling}} {mode} to keep it" if mode in ("mean", "cls") else \
        "semrel pools by mean or cls: start from its transformer ({model_kind} transformer)"
    raise ParameterError(parameter, ref.spec, f"pools by {mode} ({where}), not by {pooling} "
                         f"({{pooling}}): {hint}")


def _semrel_start(ref: ModelRef, encoder: str, pooling: str, parameter: str) -> Path:
    options = read_encoder_config(ref.path, parameter, ref.spec)
    if (ref.path / HEAD).is_file() or options["kind"] == "tri":
        raise ParameterError(parameter, ref.spec, f"a {options['kind']}-encoder run with layers "
                             f"only semrel loads ({HEAD}) cannot be a starting point: start from "
                             "the transformer it was trained from")
    if encoder != "cross" and options["kind"] != "cross":
        _same_pooling(ref, options.get("pooling") or "mean", pooling, "its semrel_encoder.json",
                      parameter)
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


def starting_folder(ref: ModelRef, encoder: str, pooling: str = "mean",
                    parameter: str = "model_path") -> Path:
    """The transformer folder an ``encoder`` ('cross' | 'bi' | 'tri') pooled by ``pooling``
    starts from (see the module docstring); a ParameterError on ``parameter`` in one line for a
    model it cannot start from."""
    if ref.kind == "ensemble":
        raise ParameterError(parameter, ref.spec, "an ensemble cannot be fine-tuned; pass one of "
                             "its members")
    if ref.kind == "semrel":
        folder = _semrel_start(ref, encoder, pooling, parameter)
    elif ref.kind == "bi-encoder":
        folder = _bi_encoder_start(ref, encoder, pooling, parameter)
    else:  # cross-encoder, transformer
        folder = ref.path
    if encoder == "cross":
        _one_label(folder, ref, parameter)
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
