"""The files of run and ensemble folders: every name, and the one reader and writer of each.

Readers check what they read (:func:`read_checked`: whole, a JSON object, as its schema in
:mod:`.schema` declares) and raise a :class:`~semrel.metrics.errors.ParameterError` naming the
parameter that gave the folder, the file, the key and the rule it breaks; writers
write each file whole (:func:`~semrel.metrics.output_files.written_whole`: beside it, then
renamed in, so a failure leaves the previous file or none). Standard library only.
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath

from semrel.metrics.errors import ParameterError
from semrel.metrics.output_files import write_whole

from .schema import (
    ENCODER_SCHEMA,
    ENSEMBLE_SCHEMA,
    FINGERPRINT_SCHEMA,
    METRICS_SCHEMA,
    SEEN_SCHEMA,
    TRAINER_STATE_SCHEMA,
    Schema,
)

# the transformer, as save_pretrained writes it (weights whole in one file, sharded, or torch's)
CONFIG = "config.json"
SAFETENSORS, SAFETENSORS_INDEX = "model.safetensors", "model.safetensors.index.json"
TORCH_WEIGHTS = "pytorch_model.bin"
TOKENIZER = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
             "vocab.txt", "vocab.json", "merges.txt", "sentencepiece.bpe.model", "spiece.model",
             "spm.model", "tokenizer.model")  # what tokenizers of the encoders semrel trains save
# a sentence-transformers model's files beside the transformer (module folders hold a config.json)
ST_MODULES, ST_CONFIG = "modules.json", "config_sentence_transformers.json"
SENTENCE_TRANSFORMERS = (ST_MODULES, ST_CONFIG, "sentence_bert_config.json")
# semrel's files beside it
ENCODER_CONFIG = "semrel_encoder.json"  # the model's kind and options
HEAD = "semrel_head.safetensors"  # parameters outside the transformer (tri-encoder)
METRICS = "metrics.json"  # what fit measured and the options it ran with
PREDICTIONS = "eval_predictions.json"  # scores on the evaluated split, with the gold labels
SELECTION = "selection_predictions.json"  # the kept model's dev predictions
SEEN = "seen_pairs.json"  # hashes of the pairs it trained and chose its checkpoint on
CARD = "README.md"  # the model card
CHECKPOINTS = "checkpoints"  # the Trainer's checkpoint-N folders; stays local
RUN_FILE = f"{CHECKPOINTS}/semrel_run.json"  # the run's fingerprint (names the local model path)
TRAINER_STATE = "trainer_state.json"  # transformers writes it last into a checkpoint
WEIGHT_FILES = ("*.safetensors", "*.bin", "*.pt", "*.pth", "*.onnx")  # patterns of weights files
# an ensemble folder
ENSEMBLE = "semrel_ensemble.json"  # method, members, weights / stack / references
MEMBERS = "members"  # copies of the member run folders
# what a model repo needs, by file name (anything else in a folder stays local)
TRANSFORMER_FILES = (CONFIG, SAFETENSORS, SAFETENSORS_INDEX, TORCH_WEIGHTS)  # + the shards the index names
MODULE_FILES = (CONFIG, SAFETENSORS)  # in each module folder modules.json names (1_Pooling/, ...)
SEMREL_FILES = (ENCODER_CONFIG, HEAD, CARD, METRICS)


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


def read_checked(file: Path, schema: Schema, parameter: str, value, name: str | None = None) -> dict:
    """The JSON object in ``file`` (:func:`read_json_object`) that ``schema`` takes; else a
    ParameterError on ``parameter`` naming the file (``name``), the key and its rule."""
    record = read_json_object(file, parameter, value, name)
    fault = schema.fault(record)
    if fault:
        raise ParameterError(parameter, value, f"{name or file.name} {fault}")
    return record


def check_safetensors(file: Path, parameter: str, value) -> None:
    """``file`` is a whole safetensors file (``safe_open`` reads its header, refusing a
    truncated one), else a ParameterError on ``parameter``."""
    from safetensors import safe_open

    try:
        with safe_open(str(file), "numpy"):
            pass
    except Exception as exc:  # SafetensorError: truncated, corrupt header
        reason = str(exc).removeprefix("Error while deserializing header: ")
        raise ParameterError(parameter, value, f"{file.name} is not a whole safetensors file "
                             f"(truncated or corrupt: {reason})") from None


def write_text(path, text: str, parameter: str = "path") -> Path:
    """Write ``text`` to ``path`` whole (parents created); a ParameterError on ``parameter``
    says why it could not be, and whatever was at ``path`` before is still there."""
    def failed(exc: OSError, kept: bool) -> ParameterError:
        return ParameterError(parameter, str(path), f"could not be written ({exc.strerror}); "
                              "whatever was there is unchanged")

    return write_whole(path, text, parameter, error=failed)


def write_json(path, record: dict, parameter: str = "output_dir", **dumps) -> Path:
    """``record`` as JSON (``json.dumps`` options ``dumps``) by :func:`write_text`."""
    return write_text(path, json.dumps(record, **dumps), parameter)


def read_encoder_config(folder: Path, parameter: str = "path", value=None) -> dict:
    """``semrel_encoder.json``: ``{"kind": ..., <the model's options>}``."""
    return read_checked(Path(folder) / ENCODER_CONFIG, ENCODER_SCHEMA, parameter,
                        str(folder) if value is None else value)


def write_encoder_config(folder: Path, kind: str, options: dict) -> Path:
    return write_json(Path(folder) / ENCODER_CONFIG, {"kind": kind, **options}, "path", indent=2)


def read_metrics(folder: Path, parameter: str = "model_path", value=None) -> dict:
    """``metrics.json`` of a run (:class:`~semrel.trainers.fitting.FitResult` as a record)."""
    return read_checked(Path(folder) / METRICS, METRICS_SCHEMA, parameter,
                        str(folder) if value is None else value)


def write_metrics(folder: Path, record: dict) -> Path:
    """``metrics.json``; a figure must be a number or null (NaN is not JSON)."""
    return write_json(Path(folder) / METRICS, record, indent=2, allow_nan=False)


def read_seen(folder: Path, parameter: str = "model", value=None) -> dict | None:
    """``seen_pairs.json`` of a run (:mod:`.seen`), or None where the run has none (written
    before semrel recorded it)."""
    file = Path(folder) / SEEN
    if not file.is_file():
        return None
    return read_checked(file, SEEN_SCHEMA, parameter, str(folder) if value is None else value)


def write_seen(folder: Path, record: dict) -> Path:
    return write_json(Path(folder) / SEEN, record, "output_dir")


def read_fingerprint(folder: Path, parameter: str = "output_dir", value=None) -> dict | None:
    """The run fingerprint an output folder holds (``checkpoints/semrel_run.json``), or None."""
    file = Path(folder) / RUN_FILE
    if not file.is_file():
        return None
    return read_checked(file, FINGERPRINT_SCHEMA, parameter, str(folder) if value is None else value,
                        RUN_FILE)


def write_fingerprint(folder: Path, run: dict) -> Path:
    return write_json(Path(folder) / RUN_FILE, run, indent=2)


def read_trainer_state(checkpoint, parameter: str = "resume_from_checkpoint") -> dict:
    """A Trainer checkpoint's ``trainer_state.json`` (transformers writes it last: a
    checkpoint without it is not complete)."""
    state = Path(checkpoint) / TRAINER_STATE
    if not state.is_file():
        raise ParameterError(parameter, str(checkpoint), "is not a complete "
                             f"checkpoint (no {TRAINER_STATE})")
    return read_checked(state, TRAINER_STATE_SCHEMA, parameter, str(checkpoint))


def checkpoint_step(checkpoint) -> int:
    """The global step of a complete Trainer checkpoint (its ``trainer_state.json``)."""
    return read_trainer_state(checkpoint)["global_step"]


def read_ensemble(folder: Path, parameter: str = "path", value=None) -> dict:
    """``semrel_ensemble.json`` of an ensemble folder."""
    return read_checked(Path(folder) / ENSEMBLE, ENSEMBLE_SCHEMA, parameter,
                        str(folder) if value is None else value)


def write_ensemble(folder: Path, raw: dict) -> Path:
    return write_json(Path(folder) / ENSEMBLE, raw, "path", indent=1)


def read_tolerant(file: Path, kind: type = dict):
    """The JSON value of type ``kind`` in ``file``, or None where there is none (missing,
    unreadable, corrupt, another type: the publishing guards report those)."""
    try:
        raw = json.loads(Path(file).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return raw if isinstance(raw, kind) else None


def inside(name) -> str | None:
    """``name`` as a relative POSIX path inside a folder, or None (absolute, ``..``, not text)."""
    if not isinstance(name, str) or not name or "\\" in name:
        return None
    path = PurePosixPath(name)
    return None if path.is_absolute() or ".." in path.parts else path.as_posix()


def members_inside(folder: Path) -> list[str]:
    """The members an ensemble folder's ``semrel_ensemble.json`` names inside it (copied
    folders), read by :func:`read_tolerant`."""
    members = (read_tolerant(Path(folder) / ENSEMBLE) or {}).get("members")
    return [m for m in map(inside, members if isinstance(members, list) else []) if m]


def model_repo_files(folder: Path) -> list[str]:
    """The files of one model folder that a model repo needs (relative POSIX paths): those of
    :data:`TRANSFORMER_FILES` (and the weight shards its index names), :data:`TOKENIZER`,
    :data:`SENTENCE_TRANSFORMERS` (and :data:`MODULE_FILES` of each module folder modules.json
    names) and :data:`SEMREL_FILES` that it holds."""
    folder = Path(folder)
    index = read_tolerant(folder / SAFETENSORS_INDEX) or {}
    shards = index.get("weight_map") if isinstance(index.get("weight_map"), dict) else {}
    modules = read_tolerant(folder / ST_MODULES, list) or []
    module_dirs = [d for m in modules if isinstance(m, dict) and (d := inside(m.get("path")))]
    names = [*TRANSFORMER_FILES, *filter(None, map(inside, shards.values())), *TOKENIZER,
             *SENTENCE_TRANSFORMERS, *(f"{d}/{f}" for d in module_dirs for f in MODULE_FILES),
             *SEMREL_FILES]
    return sorted(n for n in set(names) if (folder / n).is_file())


def run_data(folder: Path) -> str | None:
    """What a model folder was trained on, as its ``metrics.json`` records it (``data``:
    ``"<id>/<config>"``, a Hub id or a folder), else its ``eval_predictions.json``'s; None
    where neither says."""
    for name in (METRICS, PREDICTIONS):
        data = (read_tolerant(Path(folder) / name) or {}).get("data")
        if isinstance(data, str) and data:
            return data
    return None
