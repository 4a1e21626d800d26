"""Where ``semrel fit`` starts: the transformer folder of any model argument
(:class:`~trainers.model_ref.ModelRef`) for the encoder it trains (:func:`starting_folder`), and
what the run's card and ``metrics.json`` say of it (:func:`base_model`).

Each kind says where it starts (:meth:`~trainers.kinds.base.ModelKind.start`) and the pooling a
bi- or tri-encoder keeps from it (:meth:`~trainers.kinds.base.ModelKind.own_pooling`): a
``transformer`` or a ``cross-encoder`` its folder (a cross-encoder goes on training its one-label
head; a bi- or tri-encoder takes its transformer without the head), a sentence-transformers
``bi-encoder`` its Transformer module (Transformer, Pooling and Normalize modules only), a
``semrel`` run its transformer (not a run with layers only semrel loads); an ``ensemble`` is
refused. A bi- or tri-encoder pools by mean or cls (another pooling is refused), by its
``pooling`` option: where that is not the model's own, :func:`pooling_note` says so.

A cross-encoder needs a head of one label: a sequence-classification model with more labels is
refused (start from its base transformer). Every refusal is a ParameterError in one line.
"""

from __future__ import annotations

from pathlib import Path

from semrel.dataset_scripts.pretrained import PACKAGED_MODELS, known_base_model
from semrel.metrics.errors import ParameterError

from .model_ref import ModelRef
from .options import POOLINGS
from .run_folder.files import CARD, CONFIG, read_json_object


def own_pooling(ref: ModelRef, encoder: str, parameter: str = "model_path") -> tuple[str, str] | None:
    """``(pooling, the file that says it)`` of the model a bi- or tri-``encoder`` starts from, as
    its kind reads it; None where there is none to keep (a cross-encoder, a transformer, a
    cross-encoder run)."""
    return None if encoder == "cross" else ref.model_kind.own_pooling(ref, encoder, parameter)


def pooling_note(ref: ModelRef, encoder: str, pooling: str) -> str | None:
    """What to say when a bi- or tri-encoder pools otherwise than the model it starts from (it
    pools by ``pooling``, its option), or None."""
    own = own_pooling(ref, encoder)
    if own is None or own[0] == pooling:
        return None
    return (f"{ref.spec} pools by {own[0]} ({own[1][4:]}); this {encoder}-encoder pools by "
            f"{pooling}, as its pooling option says (set it to {own[0]} to keep the model's)")


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
    folder = ref.model_kind.start(ref, parameter)
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
