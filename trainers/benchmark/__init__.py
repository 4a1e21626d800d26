"""``semrel benchmark``: any models scored on every labelled set of the suite.

* :mod:`.overlap` -- what a model trained or chose on; a set holding any of it is refused;
* :mod:`.cells` -- one model on one set: ρ and r with intervals, n, the human ceiling, the MSE
  beside its lower bound, or why there are none;
* :mod:`.run` -- the sets loaded, every cell, the paired comparisons corrected across sets;
* :mod:`.report` -- the table, Markdown, JSON, picture and model-card section.

The sets are :func:`semrel.dataset_scripts.benchmark_sets.benchmark_sets`; the models are
scored through :func:`semrel.trainers.scoring.load_scorer` (cached units).
"""

from .run import BenchmarkResult, load_sets, run_benchmark

__all__ = ["BenchmarkResult", "load_sets", "run_benchmark"]
