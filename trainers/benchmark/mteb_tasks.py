"""The benchmark sets as MTEB STS tasks (the ``mteb`` extra), so MTEB scores what
``semrel benchmark`` scores: :func:`mteb_tasks` gives one local ``AbsTaskSTS`` per loaded,
unconditional set of :func:`~semrel.dataset_scripts.benchmark_sets.select_sets` (the same rows;
``load_data`` sets them, no Hub), its ``TaskMetadata`` read from the dataset's spec (its
:class:`~semrel.dataset_scripts.spec.MtebFacts`, licence, citation, homepage).

    import mteb
    from sentence_transformers import SentenceTransformer
    results = mteb.evaluate(SentenceTransformer(path), tasks=mteb_tasks(only=[dataset_id]), cache=None)

MTEB's ``cosine_spearman`` is Spearman's ρ of the cosines against the gold scores, the figure
``semrel benchmark`` gives a bi-encoder (its intervals, ceilings and comparisons MTEB has not).
mteb is imported inside the functions: semrel imports without the extra.
"""

from __future__ import annotations

import re
import sys
from functools import cache

from semrel.dataset_scripts.benchmark_sets import BenchmarkSet, select_sets
from semrel.dataset_scripts.registry import REGISTRY

from .run import load_sets

# a spec's Hub licence id -> MTEB's licence vocabulary ("other": the licence's link, as MTEB
# takes a custom licence)
NOT_SPECIFIED = "not specified"
CONDITIONAL = "conditional pairs: an MTEB STS task has no condition to give the model"


def task_name(bset: BenchmarkSet) -> str:
    """``Semrel`` and the set's name in CamelCase: ``my-sts-2025/en/test/News`` ->
    ``SemrelMySts2025EnTestNews``."""
    return "Semrel" + "".join(part[:1].upper() + part[1:] for part in re.split(r"[^0-9A-Za-z]+", bset.name))


def mteb_licence(dataset: str) -> str:
    """The dataset's licence in MTEB's terms: the spec's Hub id where MTEB knows it, the
    licence's link for a custom licence ("other"), ``not specified`` where none is stated."""
    from typing import get_args

    from mteb.types import Licenses

    licence = REGISTRY[dataset].licence
    if licence.hub_id == "other":
        return licence.link
    return licence.hub_id if licence.hub_id in get_args(Licenses) else NOT_SPECIFIED


def task_metadata(bset: BenchmarkSet, n: int):
    """The ``TaskMetadata`` of ``bset`` (``n`` pairs), from its dataset's spec; mteb validates it
    on construction."""
    from mteb.abstasks.task_metadata import TaskMetadata

    spec = REGISTRY[bset.dataset]
    facts = spec.benchmark.mteb
    lo, hi = bset.score_range
    return TaskMetadata(
        name=task_name(bset),
        description=f"{spec.pretty_name}: the {n} pairs of semrel's benchmark set {bset.name}, "
                    f"gold scores on [{lo:g}, {hi:g}].",
        reference=spec.homepage,
        dataset={"path": f"semrel/{bset.name}", "revision": "local"},  # rows set by load_data
        type="STS", category="t2t", modalities=["text"],
        eval_splits=[bset.split], eval_langs=facts.eval_langs(bset.languages),
        main_score="cosine_spearman",
        domains=list(facts.domains), task_subtypes=[], license=mteb_licence(bset.dataset),
        annotations_creators=facts.annotations_creators, dialect=[],
        sample_creation=facts.sample_creation, bibtex_citation=spec.citation)


@cache
def _task_class():
    """The one ``AbsTaskSTS`` subclass; each task is a subclass of it with its own metadata."""
    import datasets
    from mteb.abstasks.sts import AbsTaskSTS

    class SemrelSTS(AbsTaskSTS):
        """A semrel benchmark set (``semrel_set``) over its loaded ``semrel_rows``."""

        semrel_set: BenchmarkSet
        semrel_rows: datasets.Dataset

        def load_data(self, **kwargs) -> None:
            self.dataset = datasets.DatasetDict({self.semrel_set.split: self.semrel_rows})
            self.data_loaded = True

    return SemrelSTS


def mteb_task(bset: BenchmarkSet, rows):
    """A local MTEB STS task over ``rows`` (``sentence1``, ``sentence2``, ``score``), the loaded
    rows of ``bset`` (a ``PairRows`` or a ``datasets.Dataset``); ``min_score``/``max_score`` its
    native score range."""
    import datasets

    base = _task_class()
    lo, hi = bset.score_range
    rows = datasets.Dataset.from_dict({name: list(rows[name])
                                       for name in ("sentence1", "sentence2", "score")})
    cls = type(task_name(bset), (base,), {"metadata": task_metadata(bset, len(rows)),
                                         "min_score": lo, "max_score": hi,
                                         "semrel_set": bset, "semrel_rows": rows})
    return cls()


def mteb_tasks(*, only=None, mirror=None, cache_dir=None, log=None) -> list:
    """One MTEB STS task per benchmark set (``only`` as ``semrel benchmark --only`` takes it)
    that loads and has no conditions (declared by its spec, or a ``condition`` column); each set
    left out is said to ``log`` (default: standard error) with why (no labels, no user data,
    conditional)."""
    log = log or (lambda line: print(line, file=sys.stderr))
    tasks = []
    for entry in load_sets(select_sets(only, mirror=mirror, cache_dir=cache_dir), mirror=mirror):
        if entry.rows is None:
            log(f"{entry.bset.name}: left out ({entry.status}: {entry.reason})")
        elif entry.bset.conditional or "condition" in entry.rows.column_names:
            log(f"{entry.bset.name}: left out ({CONDITIONAL})")
        else:
            tasks.append(mteb_task(entry.bset, entry.rows))
    return tasks


def spearman_by_set(result, tasks) -> dict[str, float]:
    """MTEB's ``cosine_spearman`` per benchmark set name, from the result of
    ``mteb.evaluate(model, tasks=tasks)`` over tasks of :func:`mteb_task`."""
    sets = {task.metadata.name: task.semrel_set for task in tasks}
    scores = {}
    for task_result in result.task_results:
        bset = sets[task_result.task_name]
        scores[bset.name] = float(task_result.scores[bset.split][0]["cosine_spearman"])
    return scores
