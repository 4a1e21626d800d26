"""Every kind of model a ``--model`` may be, one module each, found by :func:`discover`.

A module of this package that declares ``KIND`` (a :class:`~.base.ModelKind`) is a kind: its
``name`` is the ``--model-kind`` value (recorded in ``metrics.json`` and ``semrel_ensemble.json``),
and it says how it detects itself from a folder, checks its files, starts a fit, scores pairs,
what its card says and which pairs it has seen. Nothing lists the modules by hand: a new kind is
one new module (a kind kept elsewhere, a test's toy, joins by extending this package's
``__path__`` and :func:`discover` again, as the dataset registry does).

* ``semrel`` (:mod:`.semrel_run`), ``ensemble`` (:mod:`.ensemble`), ``bi-encoder``
  (:mod:`.bi_encoder`), ``cross-encoder`` (:mod:`.cross_encoder`), ``transformer``
  (:mod:`.transformer`), in the order they are asked to detect a folder.
* A packaged name (``minilm``, ``mpnet``, ``e5-small``) is not a kind: it names a folder whose
  kind is detected like any other (each is a ``bi-encoder``), which is what a run records;
  :func:`~trainers.model_ref.resolve_model_ref` resolves it.

Standard library only: the kind modules are imported on first use (:func:`kinds`), so what
imports this registry (the run folder's schema, the CLI's flags) imports no kind.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from semrel.metrics.errors import ParameterError

__all__ = ["REGISTRY", "check_model_kind", "detect", "discover", "get", "kinds", "names"]


def discover(package: str = __package__) -> dict:
    """name -> kind of every module of ``package`` that declares ``KIND``, in detection order
    (each kind's ``order``), over each folder of the package's ``__path__``."""
    found = {}
    for module in pkgutil.iter_modules(importlib.import_module(package).__path__, f"{package}."):
        kind = getattr(importlib.import_module(module.name), "KIND", None)
        if kind is None:
            continue
        if kind.name in found:
            raise ValueError(f"model kind {kind.name!r} declared twice ({module.name})")
        found[kind.name] = kind
    return dict(sorted(found.items(), key=lambda item: item[1].order))


REGISTRY: dict = {}  # filled by kinds() on first use


def kinds() -> dict:
    """name -> :class:`~.base.ModelKind`, in detection order."""
    if not REGISTRY:
        REGISTRY.update(discover())
    return REGISTRY


def names() -> tuple[str, ...]:
    """The ``--model-kind`` values, in detection order."""
    return tuple(kinds())


def get(name: str, parameter: str = "model_kind"):
    """The kind called ``name``; a ParameterError on ``parameter`` when there is none."""
    if name not in kinds():
        raise ParameterError(parameter, name, f"not one of {', '.join(names())}")
    return kinds()[name]


def detect(folder: Path, parameter: str = "model", value=None) -> str:
    """The name of the first kind (in detection order) whose files ``folder`` holds; a
    ParameterError naming the files each kind looks for when none does."""
    value = value or str(folder)
    for kind in kinds().values():
        if kind.detects(folder, parameter, value):
            return kind.name
    if not any(folder.iterdir()):
        raise ParameterError(parameter, value, "is an empty folder, not a model folder")
    files = list(dict.fromkeys(f for kind in kinds().values() for f in kind.files))
    listed = f"{', '.join(files[:-1])} or {files[-1]}" if len(files) > 1 else files[0]
    raise ParameterError(parameter, value, f"a folder of unknown kind: none of {listed} is in it")


def check_model_kind(path, kind: str, parameter: str = "model") -> Path:
    """``path`` checked whole as a model of ``kind`` (read from its files or forced), before
    anything is loaded (:meth:`~.base.ModelKind.check`): a folder that is not of ``kind`` is a
    ParameterError on ``parameter``, so no kind is loaded with weights drawn at random."""
    return get(kind).check(path, parameter)
