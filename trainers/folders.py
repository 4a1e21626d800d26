"""What a folder or file argument must be before a command reads or writes it, and writes that
leave no truncated file.

Every check raises a :class:`~semrel.metrics.errors.ParameterError` naming the parameter, the path and
what is wrong with it (the CLI words the parameter as its flag), before anything is loaded or
trained:

* :func:`check_transformer_folder`: a model folder as ``save_pretrained`` writes it: a
  ``config.json`` that is a JSON object and whole weights (``model.safetensors``, its sharded
  index and shards, or ``pytorch_model.bin``); safetensors files are opened header-first with
  ``safetensors.safe_open``, which refuses a truncated file.
* :func:`check_run_folder`: a model saved by semrel (``semrel_encoder.json`` with a known
  ``kind``) or an ensemble folder (``semrel_ensemble.json`` and its members);
  :func:`recorded_score_range` is the score range the run was trained on.
* :func:`check_output_file`, :func:`check_output_folder`: a path that can be written (its nearest
  existing ancestor is a writable folder, tried by creating a file there); a file argument
  must not be a folder, a folder argument not a file. A missing parent is created on writing.
* :func:`write_text_whole`: write beside the target and rename over it (``os.replace``), so a
  failure (full disk, kill) leaves the previous file or none, never a truncated one.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from semrel.metrics.errors import MissingPathError, ParameterError

from .options import check_score_range

CONFIG = "config.json"
ENCODER_CONFIG = "semrel_encoder.json"  # trainers.models.CONFIG_NAME
HEAD = "semrel_head.safetensors"  # trainers.models.HEAD_NAME
ENSEMBLE = "semrel_ensemble.json"  # trainers.ensemble.ENSEMBLE_FILE
METRICS = "metrics.json"
PREDICTIONS = "eval_predictions.json"  # trainers.ensemble.PREDICTIONS_FILE
SAFETENSORS, SAFETENSORS_INDEX = "model.safetensors", "model.safetensors.index.json"
TORCH_WEIGHTS = "pytorch_model.bin"
TRAINER_STATE = "trainer_state.json"


def read_json_object(file: Path, parameter: str, value, name: str | None = None) -> dict:
    """The JSON object in ``file``; a ParameterError on ``parameter`` naming the file (as
    ``name``, default its file name) when it is not one (truncated, corrupt, not an object)."""
    name = name or file.name
    try:
        raw = json.loads(file.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ParameterError(parameter, value, f"{name} is not UTF-8 text ({exc.reason})"
                             ) from None
    except json.JSONDecodeError as exc:
        raise ParameterError(parameter, value, f"{name} is not valid JSON (truncated or "
                             f"corrupt: {exc.msg}, line {exc.lineno} column {exc.colno})"
                             ) from None
    if not isinstance(raw, dict):
        raise ParameterError(parameter, value, f"{name} is not a JSON object")
    return raw


def _whole_safetensors(file: Path, parameter: str, value) -> None:
    from safetensors import safe_open

    try:
        with safe_open(str(file), "numpy"):
            pass
    except Exception as exc:  # SafetensorError: truncated, corrupt header
        reason = str(exc).removeprefix("Error while deserializing header: ")
        raise ParameterError(parameter, value, f"{file.name} is not a whole safetensors file "
                             f"(truncated or corrupt: {reason})") from None


def _folder(path, parameter: str, what: str) -> Path:
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
    folder = _folder(path, parameter, "model folder")
    if not (folder / CONFIG).is_file():
        raise ParameterError(parameter, str(path), f"holds no {CONFIG}: not a model folder "
                             "(save_pretrained writes config.json and model.safetensors)")
    read_json_object(folder / CONFIG, parameter, str(path))
    if (folder / SAFETENSORS).is_file():
        _whole_safetensors(folder / SAFETENSORS, parameter, str(path))
    elif (folder / SAFETENSORS_INDEX).is_file():
        index = read_json_object(folder / SAFETENSORS_INDEX, parameter, str(path))
        for shard in sorted(set((index.get("weight_map") or {}).values())):
            if not (folder / shard).is_file():
                raise ParameterError(parameter, str(path), f"lacks {shard}, a weights shard "
                                     f"that {SAFETENSORS_INDEX} names")
            _whole_safetensors(folder / shard, parameter, str(path))
    elif not (folder / TORCH_WEIGHTS).is_file() or (folder / TORCH_WEIGHTS).stat().st_size == 0:
        raise ParameterError(parameter, str(path), f"holds no weights ({SAFETENSORS} or "
                             f"{TORCH_WEIGHTS}) beside its {CONFIG}")
    return folder


def check_run_folder(path, parameter: str = "model_path", *, written_by_fit: bool = False) -> Path:
    """``path`` as a model saved by semrel (:func:`check_encoder_folder`) or an ensemble folder
    (a ``semrel_ensemble.json`` whose members are such models); ``written_by_fit``: a run
    folder of ``semrel fit`` (with its ``metrics.json``), as ensemble members are. A
    ParameterError on ``parameter`` otherwise."""
    folder = _folder(path, parameter, "model folder")
    if (folder / ENSEMBLE).is_file() and not written_by_fit:
        raw = read_json_object(folder / ENSEMBLE, parameter, str(path))
        members = raw.get("members")
        if not (isinstance(members, list) and members and all(isinstance(m, str) for m in members)):
            raise ParameterError(parameter, str(path), f"{ENSEMBLE} names no members (a list of "
                                 "member folders)")
        for member in members:
            try:
                check_encoder_folder(folder / member, parameter)
            except ParameterError as exc:
                raise ParameterError(parameter, str(path), f"its member {member} {exc.rule}"
                                     ) from None
        return folder
    return check_encoder_folder(path, parameter, written_by_fit=written_by_fit)


def check_encoder_folder(path, parameter: str = "path", *, written_by_fit: bool = False) -> Path:
    """``path`` as a model saved by ``PairEncoder.save_pretrained``: a transformer folder
    (:func:`check_transformer_folder`) with a ``semrel_encoder.json`` whose ``kind`` is an
    encoder kind (and whole condition layers, ``semrel_head.safetensors``, where it has them);
    ``written_by_fit``: also a ``metrics.json``, as ``semrel fit`` writes."""
    from .models import ENCODER_KINDS

    folder = _folder(path, parameter, "model folder")
    if not (folder / ENCODER_CONFIG).is_file():
        raise MissingPathError(parameter, str(path), f"holds no {ENCODER_CONFIG}: not a model "
                               "saved by `semrel fit` (a plain transformer folder is a starting "
                               "model for fit)")
    check_transformer_folder(folder, parameter)
    kind = read_json_object(folder / ENCODER_CONFIG, parameter, str(path)).get("kind")
    if kind not in ENCODER_KINDS:
        got = "has no 'kind'" if kind is None else f"has kind {kind!r}"
        raise ParameterError(parameter, str(path), f"{ENCODER_CONFIG} {got}; it must be one of "
                             f"{', '.join(ENCODER_KINDS)}")
    if kind != "cross" and (folder / HEAD).is_file():  # a cross-encoder's is refused on loading
        _whole_safetensors(folder / HEAD, parameter, str(path))
    if (folder / METRICS).is_file():
        read_json_object(folder / METRICS, parameter, str(path))
    elif written_by_fit:
        raise ParameterError(parameter, str(path), f"holds no {METRICS}: not a run folder "
                             "written by `semrel fit`")
    return folder


def recorded_score_range(path) -> tuple[tuple[float, float], str] | None:
    """``((lo, hi), file)``: the native score range the model at ``path`` was trained on and
    the file that records it (``metrics.json`` of a fit run, ``semrel_ensemble.json`` of an
    ensemble); None for a model saved without that record (``PairEncoder.save_pretrained``
    alone)."""
    folder = Path(path)
    for name in (ENSEMBLE, METRICS):
        if (folder / name).is_file():
            recorded = read_json_object(folder / name, "model_path", str(path)).get("score_range")
            if recorded is None:
                return None
            try:
                return check_score_range(recorded), name
            except ParameterError:
                raise ParameterError("model_path", str(path), f"{name} records score_range "
                                     f"{recorded!r}, not two numbers lo < hi") from None
    return None


def check_checkpoint_folder(path, parameter: str = "resume_from_checkpoint") -> Path:
    """``path`` as a complete Trainer checkpoint to resume from: ``trainer_state.json`` (which
    transformers writes last) a JSON object, its weights whole where they are safetensors."""
    folder = _folder(path, parameter, "checkpoint folder")
    if not (folder / TRAINER_STATE).is_file():
        raise ParameterError(parameter, str(path), f"is not a complete checkpoint (no "
                             f"{TRAINER_STATE})")
    read_json_object(folder / TRAINER_STATE, parameter, str(path))
    if (folder / SAFETENSORS).is_file():
        _whole_safetensors(folder / SAFETENSORS, parameter, str(path))
    return folder


def check_cv_folder(path, parameter: str = "cv_dirs") -> Path:
    """``path`` as the folder of a member's CV: its fold runs' ``eval_predictions.json`` are
    JSON objects (which folds it must hold is the ensemble's to check)."""
    folder = _folder(path, parameter, "CV folder")
    for fold in sorted(folder.iterdir()):
        if (fold / PREDICTIONS).is_file():
            read_json_object(fold / PREDICTIONS, parameter, str(path), f"{fold.name}/{PREDICTIONS}")
    return folder


def _nearest_existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _check_writable(path, parameter: str, target: Path) -> None:
    """The folder that will hold ``target`` (its nearest existing ancestor) is a folder in which
    a file can be created."""
    where = _nearest_existing(target.parent)
    if not where.is_dir():
        raise ParameterError(parameter, str(path), f"cannot be created: {where} is a file, not a "
                             "folder")
    try:
        handle, probe = tempfile.mkstemp(prefix=".semrel-probe-", dir=where)
    except OSError as exc:
        raise ParameterError(parameter, str(path), f"cannot be written: no file can be created in "
                             f"{where} ({exc.strerror})") from None
    os.close(handle)
    os.unlink(probe)


def check_output_file(path, parameter: str = "path") -> Path:
    """``path`` as a file to write: not a folder, and creatable (:func:`_check_writable`)."""
    target = Path(path).expanduser()
    if target.is_dir():
        raise ParameterError(parameter, str(path), "is a folder; give the name of the file to "
                             "write")
    _check_writable(path, parameter, target)
    return target


def check_output_folder(path, parameter: str = "output_dir") -> Path:
    """``path`` as a folder to write into: not a file, and writable (where it exists) or
    creatable (where it does not)."""
    target = Path(path).expanduser()
    if target.exists() and not target.is_dir():
        raise ParameterError(parameter, str(path), "is a file, not a folder")
    _check_writable(path, parameter, target / "x")
    return target


def write_text_whole(path, text: str, parameter: str = "path") -> Path:
    """Write ``text`` to ``path`` (parents created) beside it, then rename it in: a failure leaves
    whatever was at ``path`` before, and no partial file; a ParameterError on ``parameter``
    says why it failed."""
    path = Path(path)
    staged = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(staged, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(staged, path)
    except OSError as exc:
        try:
            staged.unlink(missing_ok=True)
        except OSError:  # the folder itself is unusable: there is nothing to clean
            pass
        raise ParameterError(parameter, str(path), f"could not be written ({exc.strerror}); "
                             "whatever was there is unchanged") from None
    return path
