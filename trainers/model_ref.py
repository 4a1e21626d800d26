"""Any model argument as a local folder of a known kind: :func:`resolve_model_ref`.

``--model`` (fit, cv, predict, ensemble members, benchmark) takes a packaged name (``minilm``,
``mpnet``, ``e5-small``), a local folder, or a Hub model id ``namespace/name[@revision]``
(fetched into the Hugging Face cache by :func:`~trainers.hub_models.fetch_model`; a local folder
of the same name wins, and ``namespace/name`` whose ``namespace`` is a local folder is a local
path: where it is missing, that is said and the Hub is not asked). A packaged name is not a kind:
it names a folder, whose kind is detected like any other. The kind is read from the folder's
files by the kinds themselves (:func:`~trainers.kinds.detect`: ``semrel``, ``ensemble``,
``bi-encoder``, ``cross-encoder``, ``transformer``, each a module of :mod:`~trainers.kinds`),
``kind=`` (``--model-kind``) overrides it, and a folder that is not of that kind is refused
before loading (:func:`~trainers.kinds.check_model_kind`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from semrel.dataset_scripts.pretrained import PACKAGED_MODELS, packaged_model_path
from semrel.dataset_scripts.sources import sha256_of
from semrel.metrics.errors import MissingPathError, ParameterError

from . import kinds
from .run_folder.files import CARD, CHECKPOINTS


@dataclass(frozen=True)
class ModelRef:
    """A resolved model argument: ``spec`` as given, the local ``path``, its ``kind`` (a name of
    :mod:`~trainers.kinds`; :attr:`model_kind` is the kind itself), the Hub ``revision``
    (commit sha) it was fetched at and its ``hub_id`` (both None for local folders and packaged
    names)."""

    spec: str
    path: Path
    kind: str
    revision: str | None = None
    hub_id: str | None = None

    @property
    def model_kind(self):
        """The :class:`~trainers.kinds.base.ModelKind` called :attr:`kind`."""
        return kinds.get(self.kind)

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


def detect_kind(folder: Path, parameter: str = "model", value=None) -> str:
    """The kind of model in ``folder`` read from its files (:func:`~trainers.kinds.detect`); a
    ParameterError when none fits."""
    return kinds.detect(folder, parameter, value)


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
    if kind is not None:
        kinds.get(kind)  # a name no kind has: a ParameterError on model_kind
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
