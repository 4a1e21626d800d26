"""semrel.metrics: the math of every metric as plain numpy/scipy functions, and an evaluate
module folder per metric.

The functions (importable and testable without evaluate): :mod:`.bws` (readers, counting scores,
tuple design), :mod:`.split_half` (split-half reliability), :mod:`.agreement` (inter/intra
annotator agreement), :mod:`.overlap` (Dice lexical overlap), :mod:`.lower_bound` (the MSE lower
bound), :mod:`.correlation`, :mod:`.correlation_intervals` (Fisher-z and bootstrap intervals),
:mod:`.human_correlation` (correlation with humans: aggregation, groups), :mod:`.compare` (two
systems: Williams' test, Zou's interval, the paired bootstrap), :mod:`.ceiling` (the human
ceiling: √ of the gold's split-half reliability stepped up by Spearman–Brown, the average single
annotator, the fraction of the ceiling), :mod:`.submission` (the SemEval-2024 Task 1 evaluation:
PairID-aligned Spearman per language). Under them all,
:mod:`.errors` (the project's errors and the ``on_invalid`` rule, standard library only) and
:mod:`.text_numbers` (numbers written as text); users' files are read by :mod:`.input_files`.

Each ``<name>/`` folder beside them (:func:`names`) is a thin evaluate module over those functions:
``<name>.py``, its card ``README.md``, ``requirements.txt`` and ``app.py`` (the Space, through
:mod:`.space_app`). The modules share :mod:`.module_inputs` (strict inputs), :mod:`.arrow_columns`
and :mod:`.citations`, imported as ``semrel.metrics...`` from the installed package. Load one with
``evaluate.load(module_path("bws_scores"))``.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent


def folders() -> dict[str, Path]:
    """name -> folder of every evaluate module: each ``<name>/<name>.py`` in a folder of this
    package's ``__path__`` (a folder that is a Python package, such as ``split_half/``, holds math,
    not a module). A metric is its folder: nothing lists them by hand."""
    found = {}
    for root in map(Path, __path__):
        for path in sorted(root.glob("*/*.py")):
            if path.stem == path.parent.name and not (path.parent / "__init__.py").exists():
                found.setdefault(path.stem, path.parent)
    return dict(sorted(found.items()))


def names() -> list[str]:
    """The evaluate modules shipped with semrel (see :func:`folders`)."""
    return list(folders())


def module_path(name: str) -> str:
    """The folder of metric ``name`` in the installed package, for ``evaluate.load``.

    >>> Path(module_path("bws_scores")).name
    'bws_scores'
    """
    found = folders()
    if name not in found:
        raise ValueError(f"unknown metric {name!r}; semrel has {', '.join(found)}")
    return str(found[name])
