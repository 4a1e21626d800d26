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
* :func:`check_model_kind`: a folder as a model of a kind, detected or forced (``--model-kind``),
  each kind by the files that make it one, so that no kind loads with weights drawn at random:
  a bi-encoder by its ``modules.json`` (:func:`check_sentence_transformers_modules`: each
  module's folder and files), a cross-encoder by a trained sequence-classification head of one
  label (:func:`check_cross_encoder_folder`);
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
    ST_CONFIG,
    ST_MODULES,
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
    models of the kinds it records (:func:`check_model_kind`; a packaged name or Hub model is
    checked when it is resolved on loading). A ParameterError on ``parameter`` otherwise."""
    folder = _folder(path, parameter, "model folder")
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
    """``path``, a model of ``kind`` (:data:`~trainers.model_ref.KINDS`), as an ensemble member:
    a run folder of ``semrel fit`` (checked whole, its predictions too), a model semrel saved
    without its run record (:func:`check_encoder_folder`), or a model semrel did not train
    (:func:`check_model_kind`); an ensemble is refused. True for a fit run, whose record and
    predictions the ensemble reads."""
    if kind == "ensemble":
        raise ParameterError(parameter, str(path), "is an ensemble folder; an ensemble's members are "
                             "models: give its members instead")
    if kind == "semrel":
        fit_run = (Path(path) / METRICS).is_file()
        check_encoder_folder(path, parameter, written_by_fit=fit_run)
        return fit_run
    check_model_kind(path, kind, parameter)
    return False


def check_model_kind(path, kind: str, parameter: str = "model") -> Path:
    """``path`` checked whole as a model of ``kind`` (one of :data:`~trainers.model_ref.KINDS`,
    read from its files or forced), before anything is loaded: ``semrel`` by
    :func:`check_encoder_folder`, ``ensemble`` by :func:`check_ensemble_folder`, ``bi-encoder``
    by :func:`check_bi_encoder_folder`, ``cross-encoder`` by :func:`check_cross_encoder_folder`,
    ``transformer`` by :func:`check_transformer_folder`. A folder that is not of ``kind`` is a
    ParameterError on ``parameter``: no kind is loaded with weights drawn at random."""
    check = {"semrel": check_encoder_folder, "ensemble": check_ensemble_folder,
             "bi-encoder": check_bi_encoder_folder, "cross-encoder": check_cross_encoder_folder,
             "transformer": check_transformer_folder}[kind]
    return check(path, parameter)


def check_bi_encoder_folder(path, parameter: str = "model") -> Path:
    """``path`` as a sentence-transformers ``SentenceTransformer``: a ``modules.json`` whose
    modules are whole (:func:`check_sentence_transformers_modules`), and no other model type in
    ``config_sentence_transformers.json`` (none: a SentenceTransformer, as sentence-transformers
    before v4 wrote it); a ParameterError on ``parameter`` otherwise."""
    folder = _folder(path, parameter, "model folder")
    if not (folder / ST_MODULES).is_file():
        raise ParameterError(parameter, str(path), f"holds no {ST_MODULES}: not a sentence-"
                             "transformers bi-encoder")
    said = read_json_object(folder / ST_CONFIG, parameter, str(path)) if (folder / ST_CONFIG).is_file() else {}
    model_type = said.get("model_type", "SentenceTransformer")
    if model_type != "SentenceTransformer":
        raise ParameterError(parameter, str(path), f"is a sentence-transformers {model_type} "
                             f"({ST_CONFIG}), not a bi-encoder")
    check_sentence_transformers_modules(folder, parameter, str(path))
    return folder


def _modules(folder: Path, parameter: str, value) -> list[dict]:
    """The modules ``modules.json`` lists, each with a type and a path."""
    import json

    try:
        listed = json.loads((folder / ST_MODULES).read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ParameterError(parameter, value, f"{ST_MODULES} is not UTF-8 text ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise ParameterError(parameter, value, f"{ST_MODULES} is not valid JSON (truncated or "
                             f"corrupt: {exc.msg}, line {exc.lineno} column {exc.colno})") from None
    if not isinstance(listed, list) or not listed or not all(
            isinstance(m, dict) and isinstance(m.get("type"), str) and isinstance(m.get("path"), str)
            for m in listed):
        raise ParameterError(parameter, value, f"{ST_MODULES} is not a list of modules with a type "
                             "and a path")
    return listed


def _module_config(where: Path, shown: str, kind: str, keys: tuple, parameter: str, value) -> dict:
    """A module folder's ``config.json``, holding one of ``keys`` (each of ``keys``' tuples)."""
    if not (where / CONFIG).is_file():
        raise ParameterError(parameter, value, f"{shown}{CONFIG} is missing: the {kind} module "
                             f"{ST_MODULES} names has no configuration")
    config = read_json_object(where / CONFIG, parameter, value, f"{shown}{CONFIG}")
    for needed in keys:
        if not any(key in config for key in needed):
            raise ParameterError(parameter, value, f"{shown}{CONFIG} gives no {' or '.join(needed)} "
                                 f"for its {kind} module")
    return config


def check_sentence_transformers_modules(folder: Path, parameter: str, value) -> None:
    """Each module ``modules.json`` lists is one sentence-transformers can load without drawing
    a weight: a type of sentence-transformers' own (semrel runs no code a model brings), a path
    inside ``folder``; a Transformer's folder a whole transformer folder, a Pooling's
    ``config.json`` giving its dimension, a Dense's its features and whole weights. A
    ParameterError on ``parameter`` naming the file and the module otherwise."""
    for module in _modules(folder, parameter, value):
        kind, rel = module["type"].rsplit(".", 1)[-1], module["path"]
        if not module["type"].startswith("sentence_transformers."):
            raise ParameterError(parameter, value, f"{ST_MODULES} names a module of type "
                                 f"{module['type']}, not one of sentence-transformers' own (semrel "
                                 "runs no code a model brings)")
        if Path(rel).is_absolute() or ".." in Path(rel).parts:
            raise ParameterError(parameter, value, f"{ST_MODULES} names {rel} for its {kind} module, "
                                 "a folder outside the model")
        where, shown = folder / rel, f"{rel}/" if rel else ""
        if kind in ("Transformer", "Pooling", "Dense") and not where.is_dir():
            raise ParameterError(parameter, value, f"{ST_MODULES} names {rel} for its {kind} module, "
                                 "a folder it lacks")
        if kind == "Transformer":
            try:
                check_transformer_folder(where, parameter)
            except ParameterError as exc:
                raise ParameterError(parameter, value, f"its {kind} module {rel} {exc.rule}" if rel
                                     else exc.rule) from None
        elif kind == "Pooling":
            _module_config(where, shown, kind, (("embedding_dimension", "word_embedding_dimension"),),
                           parameter, value)
        elif kind == "Dense":
            _module_config(where, shown, kind, (("in_features",), ("out_features",)), parameter, value)
            if (where / SAFETENSORS).is_file():
                check_safetensors(where / SAFETENSORS, parameter, value)
            elif not (where / TORCH_WEIGHTS).is_file():
                raise ParameterError(parameter, value, f"{rel} holds no weights ({SAFETENSORS} or "
                                     f"{TORCH_WEIGHTS}) for its {kind} module")


def check_cross_encoder_folder(path, parameter: str = "model") -> Path:
    """``path`` as a cross-encoder: a transformer folder (:func:`check_transformer_folder`;
    its sentence-transformers modules whole where it has them) whose ``config.json`` names a
    ``...ForSequenceClassification`` of one label and whose weights hold that head's tensors
    (:func:`~trainers.classification_head.missing_head_tensors`); a ParameterError on
    ``parameter`` otherwise: a folder without a trained head is not a cross-encoder."""
    from ..classification_head import missing_head_tensors

    folder = check_transformer_folder(path, parameter)
    if (folder / ST_MODULES).is_file():
        check_sentence_transformers_modules(folder, parameter, str(path))
    config = read_json_object(folder / CONFIG, parameter, str(path))
    named = [str(a) for a in config.get("architectures") or []]
    heads = [a for a in named if a.endswith("ForSequenceClassification")]
    random = "(loading it as one would draw that head at random)"
    if not heads:
        raise ParameterError(parameter, str(path), f"is not a cross-encoder: its {CONFIG} names "
                             f"{' and '.join(named) or 'no architecture'}, not a sequence-"
                             f"classification head {random}")
    labels = len(config.get("id2label") or {}) or config.get("num_labels", 1)
    if labels != 1:
        raise ParameterError(parameter, str(path), f"its classification head has {labels} labels; "
                             "a cross-encoder scores with one")
    try:
        missing = missing_head_tensors(folder)
    except ValueError as exc:  # a model transformers cannot build, torch weights it cannot read
        raise ParameterError(parameter, str(path), str(exc)) from None
    if missing:
        raise ParameterError(parameter, str(path), f"is not a cross-encoder: its {CONFIG} names "
                             f"{heads[0]}, but its weights hold no {', '.join(missing)} {random}")
    return folder


def check_encoder_folder(path, parameter: str = "path", *, written_by_fit: bool = False) -> Path:
    """``path`` as a model saved by ``PairEncoder.save_pretrained``: a transformer folder
    (:func:`check_transformer_folder`) with a ``semrel_encoder.json`` (an encoder ``kind`` and
    its options), whole condition layers (``semrel_head.safetensors``) where it has them and a
    ``metrics.json`` where it has one, each as its schema says; ``written_by_fit``: a run
    folder of ``semrel fit``, its ``metrics.json`` there and its predictions files too."""
    folder = _folder(path, parameter, "model folder")
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
    folder = _folder(path, parameter, "checkpoint folder")
    read_trainer_state(path, parameter)
    if (folder / SAFETENSORS).is_file():
        check_safetensors(folder / SAFETENSORS, parameter, str(path))
    return folder


def check_cv_folder(path, parameter: str = "cv_dirs") -> Path:
    """``path`` as the folder of a member's CV: its fold runs' ``eval_predictions.json`` as their
    schema says (which folds it must hold is the ensemble's to check)."""
    folder = _folder(path, parameter, "CV folder")
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
