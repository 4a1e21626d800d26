"""What a folder or file argument must be before a command reads or writes it.

Every check raises a :class:`~semrel.metrics.errors.ParameterError` naming the parameter, the path
and what is wrong with it (the CLI words the parameter as its flag), before anything is loaded or
trained:

* :func:`check_transformer_folder`: a model folder as ``save_pretrained`` writes it: a
  ``config.json`` that is a JSON object and whole weights (``model.safetensors``, its sharded
  index and shards, or ``pytorch_model.bin``); safetensors files are opened header-first with
  ``safetensors.safe_open``, which refuses a truncated file.
* :func:`check_run_folder`: a model saved by semrel (``semrel_encoder.json`` with a known
  ``kind``) or an ensemble folder (:func:`check_ensemble_folder`: ``semrel_ensemble.json`` and
  the members it holds); :func:`check_member_folder` a model given as an ensemble member;
* :func:`~trainers.kinds.check_model_kind`: a folder as a model of a kind, detected or forced
  (``--model-kind``), each kind by the files that make it one (:mod:`~trainers.kinds`), so that
  no kind loads with weights drawn at random; :func:`check_folder`: a folder that is there;
  :func:`recorded_score_range` is the score range the run was trained on, :func:`member_facts`
  what an ensemble member says of itself.
* :func:`check_checkpoint_folder`, :func:`check_cv_folder`: a checkpoint to resume from, a
  member's CV.
* :func:`check_output_file`, :func:`check_output_folder`: a path that can be written (its nearest
  existing ancestor is a writable folder: :func:`~semrel.metrics.output_files.unwritable`); a file
  argument must not be a folder, a folder argument not a file. A missing parent is created on
  writing.
"""

from __future__ import annotations

from pathlib import Path

from semrel.dataset_scripts.schema import check_score_range
from semrel.metrics.errors import MissingPathError, ParameterError
from semrel.metrics.output_files import unwritable

from ..kinds import check_model_kind, get
from .files import (
    CONFIG,
    ENCODER_CONFIG,
    ENSEMBLE,
    HEAD,
    METRICS,
    PREDICTIONS,
    SAFETENSORS,
    SAFETENSORS_INDEX,
    SELECTION,
    TORCH_WEIGHTS,
    check_safetensors,
    read_checked,
    read_encoder_config,
    read_ensemble,
    read_json_object,
    read_metrics,
    read_trainer_state,
)
from .predictions import cv_folds, read_predictions
from .schema import SAFETENSORS_INDEX_SCHEMA


def check_folder(path, parameter: str, what: str) -> Path:
    """``path`` as a folder that exists and holds something (``what`` names it in errors)."""
    folder = Path(path).expanduser()
    if not folder.exists():
        raise MissingPathError(parameter, str(path), f"no such {what}")
    if not folder.is_dir():
        raise ParameterError(parameter, str(path), f"is a file, not a {what}")
    if not any(folder.iterdir()):
        raise ParameterError(parameter, str(path), f"is an empty folder, not a {what}")
    return folder


def check_transformer_folder(path, parameter: str = "model_path") -> Path:
    """``path`` as a transformer folder that ``from_pretrained`` can load: ``config.json`` a
    JSON object, weights present and whole; else a ParameterError on ``parameter``."""
    folder = check_folder(path, parameter, "model folder")
    if not (folder / CONFIG).is_file():
        raise ParameterError(parameter, str(path), f"holds no {CONFIG}: not a model folder "
                             f"(save_pretrained writes {CONFIG} and {SAFETENSORS})")
    read_json_object(folder / CONFIG, parameter, str(path))
    if (folder / SAFETENSORS).is_file():
        check_safetensors(folder / SAFETENSORS, parameter, str(path))
    elif (folder / SAFETENSORS_INDEX).is_file():
        index = read_checked(folder / SAFETENSORS_INDEX, SAFETENSORS_INDEX_SCHEMA, parameter, str(path))
        for shard in sorted(set(index["weight_map"].values())):
            if not (folder / shard).is_file():
                raise ParameterError(parameter, str(path), f"lacks {shard}, a weights shard "
                                     f"that {SAFETENSORS_INDEX} names")
            check_safetensors(folder / shard, parameter, str(path))
    elif not (folder / TORCH_WEIGHTS).is_file() or (folder / TORCH_WEIGHTS).stat().st_size == 0:
        raise ParameterError(parameter, str(path), f"holds no weights ({SAFETENSORS} or "
                             f"{TORCH_WEIGHTS}) beside its {CONFIG}")
    return folder


def check_run_folder(path, parameter: str = "model_path", *, written_by_fit: bool = False) -> Path:
    """``path`` as a model saved by semrel (:func:`check_encoder_folder`) or an ensemble folder
    (:func:`check_ensemble_folder`); ``written_by_fit``: a run folder of ``semrel fit`` (with its
    ``metrics.json``), as ensemble members are. A ParameterError on ``parameter`` otherwise."""
    if (Path(path).expanduser() / ENSEMBLE).is_file() and not written_by_fit:
        return check_ensemble_folder(path, parameter)
    return check_encoder_folder(path, parameter, written_by_fit=written_by_fit)


def check_ensemble_folder(path, parameter: str = "model_path") -> Path:
    """``path`` as an ensemble folder: a ``semrel_ensemble.json`` whose members it holds are
    models of the kinds it records (:func:`~trainers.kinds.check_model_kind`; a packaged name or Hub model is
    checked when it is resolved on loading). A ParameterError on ``parameter`` otherwise."""
    folder = check_folder(path, parameter, "model folder")
    if not (folder / ENSEMBLE).is_file():
        raise MissingPathError(parameter, str(path), f"holds no {ENSEMBLE}: not an ensemble "
                               "folder written by `semrel ensemble`")
    raw = read_ensemble(folder, parameter, str(path))
    for member, model in zip(raw["members"], raw.get("models") or [None] * len(raw["members"]),
                             strict=True):
        if model is not None and model["source"] != "folder":
            continue
        try:
            check_model_kind(folder / member, "semrel" if model is None else model["kind"], parameter)
        except ParameterError as exc:
            raise ParameterError(parameter, str(path), f"its member {member} {exc.rule}") from None
    return folder


def check_member_folder(path, kind: str, parameter: str = "members") -> bool:
    """``path``, a model of ``kind`` (a name of :mod:`~trainers.kinds`), as an ensemble member,
    as its kind checks one (:meth:`~trainers.kinds.base.ModelKind.check_member`): a run folder of
    ``semrel fit`` checked whole, its predictions too; an ensemble refused. True for a fit run,
    whose record and predictions the ensemble reads."""
    return get(kind).check_member(path, parameter)


def check_encoder_folder(path, parameter: str = "path", *, written_by_fit: bool = False) -> Path:
    """``path`` as a model saved by ``PairEncoder.save_pretrained``: a transformer folder
    (:func:`check_transformer_folder`) with a ``semrel_encoder.json`` (an encoder ``kind`` and
    its options), whole condition layers (``semrel_head.safetensors``) where it has them and a
    ``metrics.json`` where it has one, each as its schema says; ``written_by_fit``: a run
    folder of ``semrel fit``, its ``metrics.json`` there and its predictions files too."""
    folder = check_folder(path, parameter, "model folder")
    if not (folder / ENCODER_CONFIG).is_file():
        raise MissingPathError(parameter, str(path), f"holds no {ENCODER_CONFIG}: not a model "
                               "saved by `semrel fit` (a plain transformer folder is a starting "
                               "model for fit)")
    check_transformer_folder(folder, parameter)
    kind = read_encoder_config(folder, parameter, str(path))["kind"]
    if kind != "cross" and (folder / HEAD).is_file():  # a cross-encoder's is refused on loading
        check_safetensors(folder / HEAD, parameter, str(path))
    if (folder / METRICS).is_file():
        read_metrics(folder, parameter, str(path))
    elif written_by_fit:
        raise ParameterError(parameter, str(path), f"holds no {METRICS}: not a run folder "
                             "written by `semrel fit`")
    if written_by_fit:
        for name in (PREDICTIONS, SELECTION):
            if (folder / name).is_file():
                read_predictions(folder, name, parameter, str(path))
    return folder


def recorded_score_range(path) -> tuple[tuple[float, float], str] | None:
    """``((lo, hi), file)``: the native score range the model at ``path`` was trained on and
    the file that records it (``metrics.json`` of a fit run, ``semrel_ensemble.json`` of an
    ensemble); None for a model saved without that record (``PairEncoder.save_pretrained``
    alone)."""
    folder = Path(path)
    for name, read in ((ENSEMBLE, read_ensemble), (METRICS, read_metrics)):
        if (folder / name).is_file():
            recorded = read(folder, "model_path", str(path))["score_range"]
            try:
                return check_score_range(recorded), name
            except ParameterError:
                raise ParameterError("model_path", str(path), f"{name} records score_range "
                                     f"{recorded!r}, not two numbers lo < hi") from None
    return None


def member_facts(path: Path) -> dict:
    """What an ensemble member, a run folder of ``semrel fit`` checked whole, says of itself:
    encoder kind and conditioning (``semrel_encoder.json``), data and score range
    (``metrics.json``)."""
    if not ((path / ENCODER_CONFIG).is_file() and (path / METRICS).is_file()):
        raise FileNotFoundError(f"ensemble member {path}: not a model folder written by "
                                f"`semrel fit` (needs {ENCODER_CONFIG} and {METRICS})")
    check_encoder_folder(path, "members", written_by_fit=True)
    options, result = read_encoder_config(path, "members"), read_metrics(path, "members")
    return {"encoder": options["kind"], "conditional": options.get("conditional", False),
            "data": result.get("data"), "score_range": tuple(result.get("score_range") or ())}


def check_checkpoint_folder(path, parameter: str = "resume_from_checkpoint") -> Path:
    """``path`` as a complete Trainer checkpoint to resume from: ``trainer_state.json`` (which
    transformers writes last) as its schema says, its weights whole where they are safetensors."""
    folder = check_folder(path, parameter, "checkpoint folder")
    read_trainer_state(path, parameter)
    if (folder / SAFETENSORS).is_file():
        check_safetensors(folder / SAFETENSORS, parameter, str(path))
    return folder


def check_cv_folder(path, parameter: str = "cv_dirs") -> Path:
    """``path`` as the folder of a member's CV: its fold runs' ``eval_predictions.json`` as their
    schema says (which folds it must hold is the ensemble's to check)."""
    folder = check_folder(path, parameter, "CV folder")
    for fold in cv_folds(folder):
        read_predictions(fold, PREDICTIONS, parameter, str(path), f"{fold.name}/{PREDICTIONS}")
    return folder


def _check_writable(path, parameter: str, folder: Path) -> None:
    """A file can be created in ``folder``, the one that will hold what ``path`` names."""
    problem = unwritable(folder)
    if problem is None:
        return
    where, reason = problem
    if reason is None:
        raise ParameterError(parameter, str(path), f"cannot be created: {where} is a file, not a "
                             "folder")
    raise ParameterError(parameter, str(path), f"cannot be written: no file can be created in "
                         f"{where} ({reason})")


def check_output_file(path, parameter: str = "path") -> Path:
    """``path`` as a file to write: not a folder, and creatable in its folder."""
    target = Path(path).expanduser()
    if target.is_dir():
        raise ParameterError(parameter, str(path), "is a folder; give the name of the file to "
                             "write")
    _check_writable(path, parameter, target.parent)
    return target


def check_output_folder(path, parameter: str = "output_dir") -> Path:
    """``path`` as a folder to write into: not a file, and writable (where it exists) or
    creatable (where it does not)."""
    target = Path(path).expanduser()
    if target.exists() and not target.is_dir():
        raise ParameterError(parameter, str(path), "is a file, not a folder")
    _check_writable(path, parameter, target)
    return target
