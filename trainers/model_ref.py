"""Any model argument as a local folder of a known kind: :func:`resolve_model_ref`.

``--model`` (fit, cv, predict, ensemble members, benchmark) takes a packaged name (``minilm``,
``mpnet``, ``e5-small``), a local folder, or a Hub model id ``namespace/name[@revision]``
(fetched into the Hugging Face cache by :func:`~trainers.hub_models.fetch_model`; a local folder
of the same name wins, and ``namespace/name`` whose ``namespace`` is a local folder is a local
path: where it is missing, that is said and the Hub is not asked). The kind is read from the
folder's files (:func:`detect_kind`), ``kind=`` (``--model-kind``) overrides it, and a folder
that is not of that kind is refused before loading
(:func:`~trainers.run_folder.checks.check_model_kind`):

* ``semrel`` -- a run saved by ``semrel fit`` (``semrel_encoder.json``);
* ``ensemble`` -- a folder written by ``semrel ensemble`` (``semrel_ensemble.json``);
* ``bi-encoder`` -- a sentence-transformers model (``modules.json``);
* ``cross-encoder`` -- a sentence-transformers ``CrossEncoder`` (``modules.json`` with
  ``model_type: CrossEncoder`` in ``config_sentence_transformers.json``, or a
  sequence-classification transformer alone);
* ``transformer`` -- a plain transformers encoder (``config.json`` alone): a starting point for
  fit, scored zero-shot with mean pooling.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from semrel.dataset_scripts.pretrained import PACKAGED_MODELS, packaged_model_path
from semrel.dataset_scripts.sources import sha256_of
from semrel.metrics.errors import MissingPathError, ParameterError

from .options import MODEL_KINDS
from .run_folder.files import (
    CARD,
    CHECKPOINTS,
    CONFIG,
    ENCODER_CONFIG,
    ENSEMBLE,
    ST_CONFIG,
    ST_MODULES,
    read_json_object,
)

KINDS = MODEL_KINDS
ST_KINDS = {"SentenceTransformer": "bi-encoder", "CrossEncoder": "cross-encoder"}  # ST model_type


@dataclass(frozen=True)
class ModelRef:
    """A resolved model argument: ``spec`` as given, the local ``path``, its ``kind`` (one of
    :data:`KINDS`), the Hub ``revision`` (commit sha) it was fetched at and its ``hub_id``
    (both None for local folders and packaged names)."""

    spec: str
    path: Path
    kind: str
    revision: str | None = None
    hub_id: str | None = None

    @property
    def fingerprint(self) -> str:
        """What names this model in a run's fingerprint: ``hub_id@sha`` for a Hub model (the
        same wherever the cache lies), else the folder."""
        return f"{self.hub_id}@{self.revision}" if self.hub_id else str(self.path)

    def record(self) -> dict:
        """The model as ``metrics.json`` records it (``start_model``): spec, kind, Hub id and
        revision."""
        return {"spec": self.spec, "kind": self.kind, "hub_id": self.hub_id,
                "revision": self.revision}


def _sentence_transformers_kind(folder: Path, parameter: str, value) -> str:
    """bi-encoder or cross-encoder, as ``config_sentence_transformers.json`` says (a
    SentenceTransformer when it says nothing, as sentence-transformers before v4 wrote it)."""
    if not (folder / ST_CONFIG).is_file():
        return "bi-encoder"
    model_type = read_json_object(folder / ST_CONFIG, parameter, value).get("model_type",
                                                                           "SentenceTransformer")
    if model_type not in ST_KINDS:
        raise ParameterError(parameter, value, f"a sentence-transformers {model_type} ({ST_CONFIG}"
                             f"): semrel takes a SentenceTransformer or a CrossEncoder")
    return ST_KINDS[model_type]


def detect_kind(folder: Path, parameter: str = "model", value=None) -> str:
    """The kind of model in ``folder`` read from its files; a ParameterError when none fits."""
    value = value or str(folder)
    if (folder / ENCODER_CONFIG).is_file():
        return "semrel"
    if (folder / ENSEMBLE).is_file():
        return "ensemble"
    if (folder / ST_MODULES).is_file():
        return _sentence_transformers_kind(folder, parameter, value)
    if (folder / CONFIG).is_file():
        architectures = read_json_object(folder / CONFIG, parameter, value).get("architectures")
        if any(str(a).endswith("ForSequenceClassification") for a in architectures or []):
            return "cross-encoder"
        return "transformer"
    if not any(folder.iterdir()):
        raise ParameterError(parameter, value, "is an empty folder, not a model folder")
    raise ParameterError(parameter, value, "a folder of unknown kind: none of "
                         f"{ENCODER_CONFIG}, {ENSEMBLE}, {ST_MODULES} or {CONFIG} is in it")


def _missing_local(path: Path) -> str:
    """Why ``namespace/name``, whose namespace is a local folder, is a local path that is not
    there (the closest folder name in the namespace, where one is close)."""
    import difflib

    near = difflib.get_close_matches(path.name, [p.name for p in path.parent.iterdir() if p.is_dir()], n=1)
    guess = f" (did you mean {path.parent / near[0]}?)" if near else ""
    return (f"no such model folder: {path.parent} holds no {path.name}{guess}; a Hub model id is not "
            "tried where its namespace is a local folder")


def resolve_model_ref(spec: str, *, kind: str | None = None, parameter: str = "model") -> ModelRef:
    """``spec`` as a :class:`ModelRef`: a packaged name, a local folder, else a Hub model id
    ``namespace/name[@revision]`` fetched into the Hugging Face cache
    (:func:`~trainers.hub_models.fetch_model`; a local folder of that name wins, and where its
    namespace is a local folder it is a local path that is missing). ``kind`` overrides the
    detected kind. Errors name ``parameter`` and what was tried."""
    if kind is not None and kind not in KINDS:
        raise ParameterError("model_kind", kind, f"not one of {', '.join(KINDS)}")
    spec = str(spec)
    if spec in PACKAGED_MODELS:
        path = packaged_model_path(spec)
        return ModelRef(spec, Path(path), kind or detect_kind(Path(path), parameter, spec))
    path = Path(spec).expanduser()
    if path.is_dir():
        return ModelRef(spec, path, kind or detect_kind(path, parameter, spec))
    if path.exists():
        raise ParameterError(parameter, spec, "is a file, not a model folder")
    from .hub_models import fetch_model, hub_model_id

    hub = hub_model_id(spec)
    if hub is None:
        raise MissingPathError(parameter, spec, "no such model folder, and neither a packaged "
                               f"model name ({', '.join(sorted(PACKAGED_MODELS))}) nor a Hub "
                               "model id (namespace/name[@revision])")
    if path.parent.is_dir():
        raise MissingPathError(parameter, spec, _missing_local(path))
    folder, revision = fetch_model(*hub, parameter=parameter, value=spec)
    return ModelRef(spec, folder, kind or detect_kind(folder, parameter, spec), revision, hub[0])


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
