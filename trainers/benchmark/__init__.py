"""``semrel benchmark``: any models scored on every labelled set of the suite.

* :mod:`.api` -- :func:`~.api.benchmark`, the whole command in one call (``semrel.benchmark``);
* :mod:`.options` -- its options' rules (the command's flags state them too);
* :mod:`.overlap` -- what a model trained or chose on; a set holding any of it is refused;
* :mod:`.cells` -- one model on one set: ρ and r with intervals, n, the human ceiling, the MSE
  beside its lower bound, or why there are none;
* :mod:`.run` -- the sets loaded, every cell, the paired comparisons corrected across sets;
* :mod:`.report` -- the table, Markdown, JSON, picture and model-card section.

The sets are :func:`semrel.dataset_scripts.benchmark_sets.benchmark_sets`; the models are
scored through :func:`semrel.trainers.scoring.load_scorer` (cached units). Names are imported on
first use, so the command's parser reads :mod:`.options` without numpy.
"""

from __future__ import annotations

import importlib

_EXPORTS = {"benchmark": "api", "NothingScored": "api", "BenchmarkResult": "run", "load_sets": "run",
            "run_benchmark": "run"}  # name -> its module in this package
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
