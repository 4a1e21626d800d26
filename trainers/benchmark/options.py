"""The options of :func:`~.api.benchmark` and their rules, which the flags of ``semrel benchmark``
state too. Standard library only (with :mod:`semrel.metrics.errors`), so the command's parser
imports nothing heavy.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from semrel.metrics.errors import ParameterError

MIN_RESAMPLES = 100
# 1,000 resamples of 1,000 pairs cost ~0.05 s CPU in a cell's interval, ~0.08 s in a comparison
# (benchmarks/results/speed.md, "Correlation intervals: speed"); every set for three models took ~3 min
# per 1,000 resamples, so the bound is ~5 hours there; memory grows by 8 bytes a resample
MAX_RESAMPLES = 100_000
RESAMPLES_COST = (" (about 0.1 s per 1,000 resamples and 1,000 pairs in each cell and comparison; 3 min "
                  "per 1,000 for every set and three models)")


def _integer(value, parameter: str, least: int, most: int | None = None, why: str = "") -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < least or (most is not None and value > most):
        rule = f">= {least}" if most is None else f"from {least} to {most}{why}"
        raise ParameterError(parameter, value, f"must be an integer {rule}")


def _names(value, parameter: str, example: str) -> list[str]:
    """A list of names or paths; one string (whose letters would be taken one by one) is refused."""
    if isinstance(value, (str, os.PathLike)) or not isinstance(value, (list, tuple)):
        raise ParameterError(parameter, value, f"must be a list (e.g. [{example!r}])")
    for item in value:
        if not isinstance(item, (str, os.PathLike)):
            raise ParameterError(parameter, item, "must be a name or path (a string)")
    return [str(item) for item in value]


def check_options(models, only, *, batch_size, max_length, n_resamples, score_cache, progress) -> tuple:
    """``models`` and ``only`` as lists of strings (at least one model), the numbers in their
    bounds, ``score_cache`` a folder, True or False and ``progress`` a bool or None; a
    ParameterError naming the first option that breaks its rule."""
    models = _names(models, "models", "minilm")
    if not models:
        raise ParameterError("models", models, "names no model: give at least one")
    only = None if only is None else _names(only, "only", "semrel-2024/eng")
    _integer(batch_size, "batch_size", 1)
    if max_length is not None:
        _integer(max_length, "max_length", 1)
    _integer(n_resamples, "n_resamples", MIN_RESAMPLES, MAX_RESAMPLES, RESAMPLES_COST)
    if not isinstance(score_cache, (bool, str, os.PathLike)):
        raise ParameterError("score_cache", score_cache, "must be a folder, True (the default folder: "
                             "$SEMREL_CACHE/scores, else ~/.cache/semrel/scores) or False (keep nothing on disk)")
    if progress is not None and not isinstance(progress, bool):
        raise ParameterError("progress", progress, "must be True, False or None (when stderr is a terminal)")
    return models, only


def check_data_dirs(data_dirs: Mapping | None) -> dict[str, str]:
    """``{dataset: folder}`` of the user-supplied data, each folder one that exists."""
    if data_dirs is None:
        return {}
    if not isinstance(data_dirs, Mapping):
        raise ParameterError("data_dirs", data_dirs, "must map a dataset to its folder (e.g. {'c-sts': '~/csts'})")
    for name, folder in data_dirs.items():
        if not Path(folder).expanduser().is_dir():
            raise ParameterError("data_dirs", f"{name}={folder}", f"{folder} is not a folder")
    return {str(name): str(folder) for name, folder in data_dirs.items()}
