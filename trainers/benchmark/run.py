"""Score models on benchmark sets: every cell (:mod:`.cells`), and with two or more models their
paired comparison per set, corrected across the sets.

Each model encodes the distinct texts of every set it may score in one pass first
(:meth:`~trainers.scoring.base.Scorer.precompute`: sorted by length, cached), so the cells only
read what is computed. Comparison: :func:`semrel.metrics.compare.compare_correlations` on the
pairs both models scored -- the paired bootstrap of the Spearman difference (its percentile
95 % interval and two-sided p) and Williams' test of the Pearson difference; each pair of models
is tested on every set it shares, and the Spearman p-values of those tests are Holm-adjusted
together (:func:`semrel.metrics.multiple_testing.holm`), so "better on some set" claims keep a
5 % family-wise error rate.
"""

from __future__ import annotations

import itertools
import sys
import time
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from semrel.dataset_scripts.benchmark_sets import BenchmarkSet, NoLabels
from semrel.dataset_scripts.ceilings import HumanCeiling, human_ceiling
from semrel.metrics.compare import compare_correlations, smallest_bootstrap_p
from semrel.metrics.errors import DataValidationError, ParameterError
from semrel.metrics.multiple_testing import CORRECTIONS, holm

from .cells import Cell, refusal, score_cell
from .names import hide, public_names
from .overlap import seen_by

CORRECTION = (f"{CORRECTIONS['holm']}, over the sets each pair of models shares; on the paired "
              "bootstrap p-value of the Spearman difference")


@dataclass(frozen=True)
class PairRows:
    """A loaded set's columns as Python lists, read from Arrow once (a ``datasets`` column is
    iterated one formatted row at a time: ~30 µs a row); ``rows[name]``, ``len(rows)`` and
    ``rows.column_names`` as a ``datasets.Dataset`` has them."""

    columns: dict[str, list]

    @classmethod
    def of(cls, dataset) -> PairRows:
        return cls(dataset.to_dict())

    @property
    def column_names(self) -> list[str]:
        return list(self.columns)

    def __len__(self) -> int:
        return len(self.columns["score"])

    def __getitem__(self, name: str) -> list:
        return self.columns[name]


@dataclass
class LoadedSet:
    """A benchmark set as loaded: ``rows`` (None where it could not be), why not (``reason``),
    and its human ceiling."""

    bset: BenchmarkSet
    rows: object = None
    status: str = "loaded"
    reason: str = ""
    ceiling: HumanCeiling | None = None

    def as_dict(self) -> dict:
        b = self.bset
        return {"name": b.name, "dataset": b.dataset, "config": b.config, "split": b.split,
                "subset": b.subset, "score_range": list(b.score_range), "languages": list(b.languages),
                "n": 0 if self.rows is None else len(self.rows), "status": self.status,
                "reason": self.reason, "ceiling": None if self.ceiling is None else asdict(self.ceiling)}


@dataclass
class BenchmarkResult:
    """Every model, set, cell and comparison of one run; ``correction``: the multiple-comparison
    correction, in words; ``names``, ``hidden``: each model's name and what replaces a path of
    this machine in a reason (:func:`.names.public_names`), which :meth:`public` applies;
    ``written``: the files :func:`~.api.benchmark` wrote."""

    models: list[dict]
    sets: list[LoadedSet]
    cells: list[Cell]
    comparisons: list[dict]
    correction: str = CORRECTION
    names: dict[str, str] = field(default_factory=dict)
    hidden: dict[str, str] = field(default_factory=dict)
    written: list = field(default_factory=list)

    def cell(self, model: str, set_name: str) -> Cell:
        return next(c for c in self.cells if c.model == model and c.set == set_name)

    def public(self) -> BenchmarkResult:
        """The result as files and cards show it: each model by its name, never its path, and
        no path of a model or the home folder in any reason."""
        def name(spec: str) -> str:
            return self.names.get(spec, spec)

        def clean(text: str) -> str:
            return hide(text, self.hidden)

        return BenchmarkResult(
            [{**m, "spec": name(m["spec"])} for m in self.models],
            [replace(s, reason=clean(s.reason)) for s in self.sets],
            [replace(c, model=name(c.model), reason=clean(c.reason)) for c in self.cells],
            [{**c, "model1": name(c["model1"]), "model2": name(c["model2"]),
              **({"error": clean(c["error"])} if "error" in c else {})} for c in self.comparisons],
            self.correction)

    def as_dict(self) -> dict:
        return {"models": self.models, "sets": [s.as_dict() for s in self.sets],
                "cells": [c.as_dict() for c in self.cells], "comparisons": self.comparisons,
                "correction": self.correction}


def load_sets(sets: list[BenchmarkSet], *, mirror=None) -> list[LoadedSet]:
    """Each set loaded, or marked (skipped: no labels, no user data; failed: a data error, in
    one line), with its human ceiling."""
    loaded = []
    for bset in sets:
        entry = LoadedSet(bset)
        if bset.skip:
            entry.status, entry.reason = "skipped", bset.skip
        else:
            try:
                entry.rows = PairRows.of(bset.load())
            except NoLabels as exc:
                entry.status, entry.reason = "skipped", str(exc)
            except (DataValidationError, ParameterError, OSError, ValueError) as exc:
                entry.status, entry.reason = "failed", f"{bset.name}: {exc}".splitlines()[0]
        if entry.rows is not None:
            entry.ceiling = ceiling_of(bset, mirror)
        loaded.append(entry)
    return loaded


def ceiling_of(bset: BenchmarkSet, mirror=None) -> HumanCeiling:
    """The set's human ceiling (a subset's where it has one)."""
    return human_ceiling(bset.dataset, bset.config, bset.split, mirror=mirror, subset=bset.subset)


def run_benchmark(scorers: list, sets: list[LoadedSet], *, n_resamples: int = 1000,
                  log=None) -> BenchmarkResult:
    """Every cell of ``scorers`` (:func:`~trainers.scoring.load_scorer`) × ``sets``
    (:func:`load_sets`), then the comparisons (see module docstring). ``log``: a function
    that takes a line of progress (default: stderr)."""
    log = log or (lambda line: print(line, file=sys.stderr, flush=True))
    models, cells = [], []
    for scorer in scorers:
        seen = seen_by(scorer)
        start = time.perf_counter()
        refused = {s.bset.name: refusal(scorer, seen, s.bset, s.rows) for s in sets if s.rows is not None}
        columns = _columns([s for s in sets if s.rows is not None and not refused[s.bset.name]],
                           scorer.conditional)
        computed = scorer.precompute(*columns)
        encode_seconds = time.perf_counter() - start
        log(f"{scorer.spec}: {computed} text units computed, the rest cached "
            f"({len(columns[0])} pairs, {encode_seconds:.1f} s)")
        for entry in sets:
            if entry.rows is None:
                cells.append(Cell(scorer.spec, entry.bset.name, entry.status, entry.reason))
                continue
            value = entry.ceiling.value if entry.ceiling else None
            cells.append(score_cell(scorer, entry.bset, entry.rows, value, refused[entry.bset.name],
                                    n_resamples=n_resamples))
        models.append({"spec": scorer.spec, "kind": scorer.kind, "key": scorer.key,
                       "settings": scorer.settings(), **scorer.facts,
                       "conditional": scorer.conditional,
                       "training_on_record": seen.known, "computed": computed,
                       "seconds": time.perf_counter() - start, "encode_seconds": encode_seconds})
    comparisons = compare_models([m["spec"] for m in models], sets, cells, n_resamples=n_resamples)
    return BenchmarkResult(models, sets, cells, comparisons, CORRECTION,
                           *public_names([(scorer.spec, scorer.path) for scorer in scorers]))


def _columns(sets: list[LoadedSet], conditional: bool) -> tuple[list, list, list | None]:
    s1, s2, c = [], [], []
    for entry in sets:
        s1 += entry.rows["sentence1"]
        s2 += entry.rows["sentence2"]
        if conditional:
            c += entry.rows["condition"]
    return s1, s2, c if conditional else None


def compare_models(models: list[str], sets: list[LoadedSet], cells: list[Cell], *,
                   n_resamples: int = 1000) -> list[dict]:
    """Per set, each pair of models that both scored it (see module docstring); the Holm-adjusted
    p-value of each pair of models over its sets in ``spearman_p_holm``."""
    by_key = {(c.model, c.set): c for c in cells}
    out = []
    for first, second in itertools.combinations(models, 2):
        tests = []
        for entry in sets:
            a, b = by_key.get((first, entry.bset.name)), by_key.get((second, entry.bset.name))
            if not (a and b and a.status == b.status == "scored"):
                continue
            gold = np.asarray(entry.rows["score"], dtype=np.float64)
            record = {"set": entry.bset.name, "model1": first, "model2": second}
            try:
                record.update(compare_correlations(a.predictions, b.predictions, gold,
                                                   n_resamples=n_resamples).as_dict())
            except ValueError as exc:
                record["error"] = str(exc)
            tests.append(record)
        tested = [t for t in tests if "error" not in t]
        floor = holm_floor(len(tested), n_resamples)
        for t, p in zip(tested, holm([t["spearman_p_value"] for t in tested]), strict=True):
            t["spearman_p_holm"], t["spearman_p_holm_floor"] = float(p), floor
        out += tests
    return out


def holm_floor(m: int, n_resamples: int) -> float:
    """The smallest Holm-adjusted p that ``m`` tests can reach with bootstrap p-values of
    ``n_resamples`` resamples: ``min(1, m · 2 / (B + 1))`` (a two-sided bootstrap p is at least
    :func:`~semrel.metrics.compare.smallest_bootstrap_p`, ``2 / (B + 1)``; Holm multiplies the
    smallest p by m). At 0.05 or above no set can be called different at the 5 % family-wise
    level, however large the difference."""
    return min(1.0, m * smallest_bootstrap_p(n_resamples))


def resamples_for(m: int, floor: float = 0.005) -> int:
    """The resamples B that bring :func:`holm_floor` of ``m`` tests down to ``floor``
    (``2m / (B + 1) ≤ floor``)."""
    return int(np.ceil(2 * m / floor)) - 1
