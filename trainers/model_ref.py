"""Any model argument as a local folder of a known kind: :func:`resolve_model_ref`.

``--model`` (fit, cv, predict, ensemble members, benchmark) takes a packaged name (``minilm``,
``mpnet``, ``e5-small``), a local folder, or a Hub model id ``namespace/name[@revision]``. The
kind is read from the folder's files (:func:`detect_kind`), ``kind=`` overrides it:

* ``semrel`` -- a run saved by ``semrel fit`` (``semrel_encoder.json``);
* ``ensemble`` -- a folder written by ``semrel ensemble`` (``semrel_ensemble.json``);
* ``bi-encoder`` -- a sentence-transformers model (``modules.json``);
* ``cross-encoder`` -- a sentence-transformers ``CrossEncoder`` (a sequence-classification
  transformer with one label);
* ``transformer`` -- a plain transformers encoder (``config.json`` alone): a starting point for
  fit, scored zero-shot with mean pooling.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from semrel.dataset_scripts.pretrained import PACKAGED_MODELS, packaged_model_path
from semrel.dataset_scripts.sources import sha256_of
from semrel.metrics.errors import MissingPathError, ParameterError

from .run_folder.files import CARD, CHECKPOINTS, CONFIG, ENCODER_CONFIG, ENSEMBLE

KINDS = ("semrel", "ensemble", "bi-encoder", "cross-encoder", "transformer")
ST_MODULES = "modules.json"


@dataclass(frozen=True)
class ModelRef:
    """A resolved model argument: ``spec`` as given, the local ``path``, its ``kind`` (one of
    :data:`KINDS`), the Hub ``revision`` it was fetched at (None for local folders and packaged
    names)."""

    spec: str
    path: Path
    kind: str
    revision: str | None = None


def detect_kind(folder: Path, parameter: str = "model", value=None) -> str:
    """The kind of model in ``folder`` read from its files; a ParameterError when none fits."""
    if (folder / ENCODER_CONFIG).is_file():
        return "semrel"
    if (folder / ENSEMBLE).is_file():
        return "ensemble"
    if (folder / ST_MODULES).is_file():
        return "bi-encoder"
    config = folder / CONFIG
    if config.is_file():
        try:
            loaded = json.loads(config.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ParameterError(parameter, value or str(folder), f"{CONFIG} is not valid JSON "
                                 f"({exc})") from None
        architectures = loaded.get("architectures") or []
        if any(a.endswith("ForSequenceClassification") for a in architectures):
            return "cross-encoder"
        return "transformer"
    raise ParameterError(parameter, value or str(folder), "a folder of unknown kind: none of "
                         f"{ENCODER_CONFIG}, {ENSEMBLE}, {ST_MODULES} or {CONFIG} is in it")


def resolve_model_ref(spec: str, *, kind: str | None = None, parameter: str = "model") -> ModelRef:
    """``spec`` (a packaged name or a local folder) as a :class:`ModelRef`; ``kind`` overrides
    the detected kind. Errors name ``parameter`` and what was tried."""
    if kind is not None and kind not in KINDS:
        raise ParameterError(f"{parameter} kind", kind, f"not one of {', '.join(KINDS)}")
    if spec in PACKAGED_MODELS:
        path = packaged_model_path(spec)
        return ModelRef(spec, Path(path), kind or detect_kind(Path(path), parameter, spec))
    path = Path(spec).expanduser()
    if path.is_dir():
        return ModelRef(spec, path, kind or detect_kind(path, parameter, spec))
    raise MissingPathError(parameter, spec, "neither a model folder nor a packaged model name "
                           f"({', '.join(sorted(PACKAGED_MODELS))})")


def content_hash(folder: Path) -> str:
    """sha256 over the sorted (relative path, sha256) of every file that makes the model: all files
    of ``folder`` except its card and a run's local checkpoints. Two folders with the same bytes
    get the same hash wherever they lie; a changed weight changes it."""
    digest = hashlib.sha256()
    for file in sorted(p for p in folder.rglob("*") if p.is_file()):
        relative = file.relative_to(folder)
        if relative.parts[0] == CHECKPOINTS or relative.as_posix() == CARD or relative.parts[0] == ".cache":
            continue
        digest.update(f"{relative.as_posix()}\0{sha256_of(file)}\n".encode())
    return digest.hexdigest()
