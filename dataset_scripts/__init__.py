"""semrel datasets: builders over the upstream releases, stable splits, the shared pair schema.

    from semrel.dataset_scripts import load
    load("str-2021", "cv-fold-0")["test"]     # 1,100 pairs (docs/datasets.md runs this)

Importing the package is light: the registry (and with it ``datasets``, pandas, scipy) is
imported on first use of ``REGISTRY``/``get_spec``/``load``; torch, sentence-transformers,
matplotlib and the crowd-sts measures' libraries only where a function needs them.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import DataValidationError, SourceError
from .sources import Source, fetch

if TYPE_CHECKING:
    import datasets

    from .registry import REGISTRY, DatasetSpec, get_spec

__all__ = ["load", "builder", "REGISTRY", "DatasetSpec", "get_spec", "Source", "fetch",
           "DataValidationError", "SourceError", "code_hash"]
_LAZY = {"REGISTRY", "DatasetSpec", "get_spec"}


def __getattr__(name: str):
    if name in _LAZY:
        from . import registry

        return getattr(registry, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@lru_cache(maxsize=1)
def code_hash() -> str:
    """Cache key: package version + the bytes of every builder file (in each folder of this
    package's ``__path__``), so edits never serve stale rows."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        digest = hashlib.sha256(version("semrel").encode())
    except PackageNotFoundError:
        digest = hashlib.sha256(b"semrel-unversioned")
    for root in map(Path, __path__):
        for path in sorted(root.rglob("*")):
            if path.suffix in {".py", ".md", ".j2"} and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def builder(dataset_id: str, config: str | None = None, *, mirror=None, data_dir=None,
            cache_dir=None, **builder_kwargs):
    """An un-prepared builder of ``dataset_id``/``config`` (default: the dataset's default
    config), its cache keyed on :func:`code_hash` and on the user's files (see
    :class:`dataset_scripts.base.SemrelBuilder`)."""
    from .registry import get_spec

    spec = get_spec(dataset_id)
    return spec.builder_class(
        config_name=config,
        data_dir=None if data_dir is None else str(data_dir),
        cache_dir=None if cache_dir is None else str(cache_dir),
        hash=code_hash(),
        dataset_name=dataset_id.replace("-", "_"),
        mirror=mirror,
        **builder_kwargs,
    )


def load(dataset_id: str, config: str | None = None, *, mirror=None, data_dir=None,
         cache_dir=None, **builder_kwargs) -> datasets.DatasetDict:
    """Build (or reuse from cache, while the upstream files it was made of check out in the
    mirror: :mod:`dataset_scripts.base`) ``dataset_id``/``config`` and return its splits."""
    b = builder(dataset_id, config, mirror=mirror, data_dir=data_dir, cache_dir=cache_dir,
                **builder_kwargs)
    b.download_and_prepare()
    return b.as_dataset()
