"""Every dataset of the suite: the spec each dataset package declares, found by :func:`discover`.

A dataset package under ``semrel.dataset_scripts`` declares ``SPEC`` (a
:class:`~semrel.dataset_scripts.spec.DatasetSpec`) in its ``spec.py``; nothing lists the packages
by hand. A dataset kept elsewhere (a test fixture, another package) joins with :func:`register`.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil

from .spec import DatasetSpec

__all__ = ["REGISTRY", "DatasetSpec", "discover", "get_spec", "register", "registered_id"]


def discover(package: str = __package__) -> dict[str, DatasetSpec]:
    """dataset id -> spec of every subpackage of ``package`` that has a ``spec`` module (its
    ``SPEC``), over each folder of the package's ``__path__``; sorted by id."""
    found = {}
    for module in pkgutil.iter_modules(importlib.import_module(package).__path__, f"{package}."):
        if module.ispkg and importlib.util.find_spec(f"{module.name}.spec") is not None:
            spec = importlib.import_module(f"{module.name}.spec").SPEC
            if spec.dataset_id in found:
                raise ValueError(f"dataset id {spec.dataset_id!r} declared twice ({module.name})")
            found[spec.dataset_id] = spec
    return dict(sorted(found.items()))


REGISTRY: dict[str, DatasetSpec] = discover()


def register(spec: DatasetSpec) -> DatasetSpec:
    """Add a dataset declared outside ``semrel.dataset_scripts`` to :data:`REGISTRY`."""
    REGISTRY[spec.dataset_id] = spec
    return spec


def get_spec(dataset_id: str) -> DatasetSpec:
    try:
        return REGISTRY[dataset_id]
    except KeyError:
        raise KeyError(f"unknown dataset {dataset_id!r}; known: {', '.join(sorted(REGISTRY))}") from None


def registered_id(data_name: str | None) -> str | None:
    """The dataset id in a loaded data name ``"<id>/<config>"`` (``PairData.name``, a run's
    ``metrics.json`` ``data``) when that id is registered here; None for anything else (a local
    folder, a dataset semrel does not build)."""
    dataset_id = str(data_name or "").split("/")[0]
    return dataset_id if dataset_id in REGISTRY else None
