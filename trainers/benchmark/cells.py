"""One cell of the benchmark: one model on one set -- its figures, or why there are none.

A scored cell holds Spearman's ρ (seeded paired-bootstrap 95 % interval) and Pearson's r
(Fisher-z interval) of the model's scores against the gold scores
(:mod:`semrel.metrics.correlation_intervals`), n, ρ as a fraction of the set's human ceiling
(:func:`semrel.dataset_scripts.ceilings.human_ceiling`) where there is one, and, for a set with
per-item annotations (Czech News STS), the MSE on the native scale beside the MSE lower bound of
averaged gold (:func:`semrel.metrics.lower_bound.mse_lower_bound`). The bootstrap interval is kept
in the score cache's ``intervals/`` folder, keyed by the sha256 of the scores and the gold and the
interval's options (:func:`kept_spearman`), so a warm run does not resample again. Any other cell is marked:
``refused`` (trained on these pairs; a conditional set for an unconditional model),
``skipped`` (no labels, no data) or ``failed`` (the figure cannot be computed), with the reason.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from semrel.dataset_scripts.benchmark_sets import BenchmarkSet
from semrel.metrics.correlation_intervals import Estimate, Interval, pearson_interval, spearman_interval
from semrel.metrics.kept_figures import kept
from semrel.metrics.lower_bound import mse_lower_bound

from .overlap import Seen, overlap

STATUSES = ("scored", "refused", "skipped", "failed")


@dataclass
class Cell:
    """A model on a set (see module docstring); figures None where the cell is not scored.
    ``truncated``: pairs with a text cut at ``max_length`` tokens (scored as cut)."""

    model: str
    set: str
    status: str
    reason: str = ""
    n: int = 0
    spearman: float | None = None
    spearman_ci: tuple[float, float] | None = None
    pearson: float | None = None
    pearson_ci: tuple[float, float] | None = None
    ceiling: float | None = None
    fraction_of_ceiling: float | None = None
    mse: float | None = None
    mse_lower_bound: float | None = None
    truncated: int = 0
    max_length: int = 0
    seconds: float = 0.0
    predictions: np.ndarray | None = field(default=None, repr=False)

    def as_dict(self) -> dict:
        record = asdict(self)
        record.pop("predictions")
        return record

    @property
    def mark(self) -> str:
        """A short mark for tables: the status where the cell is not scored, ``cut N`` where
        pairs were truncated."""
        if self.status != "scored":
            return self.status
        return f"cut {self.truncated}" if self.truncated else ""


def unscored(cells: list[Cell]) -> str | None:
    """Why a benchmark has no figure at all (no cell scored; each status counted), or None
    where a cell was scored."""
    counts = {s: sum(c.status == s for c in cells) for s in STATUSES}
    if counts["scored"]:
        return None
    return ("no set could be scored (" + ", ".join(f"{n} cells {s}" for s, n in counts.items() if n)
            + "; the marked cells above say why)")


def refusal(scorer, seen: Seen, bset: BenchmarkSet, rows) -> str | None:
    """Why ``scorer`` may not score ``rows``: conditions it would ignore or lack, or pairs it
    trained or chose on (:func:`~.overlap.overlap`)."""
    conditional_set = "condition" in rows.column_names
    if conditional_set and not scorer.conditional:
        return "an unconditional model: it would ignore the conditions of these pairs"
    if scorer.conditional and not conditional_set:
        return "a conditional model: these pairs have no condition"
    return overlap(seen, bset, rows)


def score_cell(scorer, bset: BenchmarkSet, rows, ceiling: float | None, why: str | None, *,
               n_resamples: int = 1000) -> Cell:
    """The cell of ``scorer`` on ``bset`` (its loaded ``rows``); ``why``: the :func:`refusal`
    of the pair, where there is one."""
    start = time.perf_counter()
    cell = Cell(scorer.spec, bset.name, "scored", n=len(rows), ceiling=ceiling)
    if why:
        cell.status, cell.reason = "refused", why
        return cell
    condition = rows["condition"] if scorer.conditional else None
    scores = scorer.scored(rows["sentence1"], rows["sentence2"], condition)
    gold = np.asarray(rows["score"], dtype=np.float64)
    cell.predictions, cell.truncated, cell.max_length = scores.values, scores.truncated, scores.max_length
    try:
        rho = kept_spearman(scores.values, gold, n_resamples, scorer.cache_folder)
        r = pearson_interval(scores.values, gold)
    except ValueError as exc:  # constant scores, too few pairs
        cell.status, cell.reason = "failed", str(exc)
        return cell
    cell.spearman, cell.spearman_ci = rho.value, (rho.interval.low, rho.interval.high)
    cell.pearson, cell.pearson_ci = r.value, (r.interval.low, r.interval.high)
    if ceiling:
        cell.fraction_of_ceiling = rho.value / ceiling
    if "annotations" in rows.column_names:
        _mse(cell, scorer, bset, rows, scores.values)
    cell.seconds = time.perf_counter() - start
    return cell


def kept_spearman(values: np.ndarray, gold: np.ndarray, n_resamples: int, folder: Path | None) -> Estimate:
    """:func:`~semrel.metrics.correlation_intervals.spearman_interval` of ``values`` against
    ``gold``, kept in ``folder/intervals`` (:mod:`semrel.metrics.kept_figures`; computed each time
    where ``folder`` is None: no score cache)."""
    options = {"n_resamples": n_resamples, "confidence": 0.95, "method": "auto", "seed": 0}  # all in the key

    def compute():
        return spearman_interval(values, gold, **options)

    if folder is None:
        return compute()
    digest = hashlib.sha256(len(values).to_bytes(8, "little"))
    for array in (values, gold):
        digest.update(np.ascontiguousarray(array, dtype=np.float64).tobytes())
    return kept(folder / "intervals", "semrel.metrics.correlation_intervals.spearman_interval",
                {"data": digest.hexdigest(), **options}, compute, encode=_estimate_fields, decode=_estimate)


def _estimate_fields(e: Estimate) -> dict:
    return {"value": e.value, "low": e.interval.low, "high": e.interval.high, "confidence": e.interval.confidence,
            "method": e.interval.method, "n": e.n}


def _estimate(f: dict) -> Estimate:
    return Estimate(f["value"], Interval(f["low"], f["high"], f["confidence"], f["method"]), f["n"])


def _mse(cell: Cell, scorer, bset: BenchmarkSet, rows, values: np.ndarray) -> None:
    """MSE on the native scale (the score read on the [0, 1] label scale, a cosine as is) and
    the lower bound of averaged gold; none for logits, which have no scale."""
    if scorer.scale == "logit":
        cell.reason = "MSE: none (the model's scores are logits, on no scale)"
        return
    lo, hi = bset.score_range
    result = mse_lower_bound(rows["annotations"], lo + values * (hi - lo))
    cell.mse, cell.mse_lower_bound = result.mse, result.bound
