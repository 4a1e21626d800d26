"""Human ceilings kept on disk, keyed by what they are computed from: :func:`kept_ceiling`.

A dataset's ceiling hook (``<dataset>/ceiling.py``) computes a :class:`~.ceilings.HumanCeiling`
from raw annotations (crowd-sts's 16 configs and splits: a bootstrap over annotators and 1,000
split halves each, about 40 s of a run over every benchmark set). The hook's computing function
takes the sha256 of every file it reads; :func:`kept_ceiling` keeps its result in
``$SEMREL_CACHE/ceilings`` (else ``~/.cache/semrel/ceilings``) as :mod:`semrel.metrics.kept_figures`
keeps a figure: keyed by the function, its arguments but ``mirror`` (where the files were read
from), semrel's code and the library versions; a damaged file computed again, a folder that cannot
be written never a failed run. In one process the result is also kept in memory. To compute every
ceiling again, delete the folder.
"""

from __future__ import annotations

import functools
import inspect
from pathlib import Path

from semrel.metrics.kept_figures import cache_root, kept

from .ceilings import HumanCeiling

FOLDER = "ceilings"


def ceilings_folder() -> Path:
    """``$SEMREL_CACHE/ceilings``, else ``~/.cache/semrel/ceilings``."""
    return cache_root() / FOLDER


def _decoded(fields: dict) -> HumanCeiling:
    return HumanCeiling(**{k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()})


def kept_ceiling(function):
    """``function`` (hashable arguments, among them the digests of the files it reads; returns a
    :class:`HumanCeiling`) kept in memory and on disk (module docstring)."""
    signature, name = inspect.signature(function), f"{function.__module__}.{function.__qualname__}"

    @functools.lru_cache(maxsize=32)
    def kept_function(*args):
        arguments = {k: v for k, v in signature.bind(*args).arguments.items() if k != "mirror"}
        return kept(ceilings_folder(), name, arguments, lambda: function(*args),
                    encode=HumanCeiling.as_dict, decode=_decoded)

    kept_function.__wrapped__, kept_function.__doc__ = function, function.__doc__
    return kept_function
