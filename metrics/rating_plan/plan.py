"""Everything ``semrel ratings plan`` reports, as one function over a :class:`~.table.RatingTable`.

    >>> import numpy as np
    >>> from semrel.metrics.rating_plan.table import make_table
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.normal(size=300)
    >>> x = truth[:, None] + rng.normal(size=(300, 4))  # 4 raters, noise = truth: R_K = K / (K + 1)
    >>> table = make_table(np.repeat(np.arange(300), 4), np.tile(["a", "b", "c", "d"], 300), x.ravel(),
    ...                    scale=(-9, 9))
    >>> p = plan_ratings(table, raters=8, target=0.9, n_resamples=100)
    >>> round(p.plan.now.value, 1), round(p.plan.spearman_brown.reliability.value, 1)  # 4/5, 8/9
    (0.8, 0.9)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import ParameterError
from .annotators import AnnotatorReport, annotator_report
from .next_batch import shrunk_sd, widest_assignment
from .projection import Plan, project
from .reliability import (
    ItemMeans,
    Ranged,
    alpha_from,
    alpha_moments,
    item_means,
    krippendorff_alpha,
    ranged,
    resample_weights,
)
from .table import RatingTable, panel

LEAST_CERTAIN = 10


@dataclass(frozen=True)
class RatingPlan:
    """Where the collection stands (reliability, α, item means, annotators) and the plan."""

    n_items: int
    n_annotators: int
    n_ratings: int  # first ratings of (item, annotator) pairs
    n_retests: int
    raters: tuple[int, float, int]  # per item: min, median, max
    plan: Plan
    alpha: Ranged
    means: ItemMeans
    items: np.ndarray  # item labels, in the order of ``means``
    annotators: AnnotatorReport
    next_batch: pd.DataFrame | None = None  # item, raters, more: where the next ratings go (widest first)

    def least_certain(self, n: int = LEAST_CERTAIN) -> pd.DataFrame:
        """The ``n`` items with the widest intervals (rated once first: no interval at all)."""
        width = np.where(np.isnan(self.means.high), np.inf, self.means.high - self.means.low)
        order = np.argsort(-width, kind="stable")[:n]
        return pd.DataFrame({"item": self.items[order], "raters": self.means.raters[order],
                             "mean": self.means.mean[order], "low": self.means.low[order],
                             "high": self.means.high[order]})

    def as_dict(self) -> dict:
        """Plain JSON-ready figures; ``projected`` names the reliability at K raters per item."""
        p = self.plan

        def r(x: Ranged | None):
            return None if x is None else {"value": _num(x.value), "low": _num(x.low), "high": _num(x.high),
                                           "confidence": x.confidence}

        def proj(x):
            return {"reliability": r(x.reliability), "asymptote": r(x.asymptote), "raters_needed": r(x.raters_needed)}

        rows = self.annotators.table.reset_index().rename(columns={"worker_id": "annotator"})
        return {
            "items": self.n_items, "annotators": self.n_annotators, "ratings": self.n_ratings,
            "retests": self.n_retests,
            "raters_per_item": dict(zip(("min", "median", "max"), self.raters, strict=True)),
            "reliability": {"split_half": p.split_half, "spearman_brown": r(p.now)},
            "krippendorff_alpha": r(self.alpha),
            "trace": [{"raters": int(k), **r(t)} for k, t in zip(p.trace_raters, p.trace, strict=True)],
            "projected": {"raters": p.raters, "reliability": r(getattr(p, p.trusted.replace("-", "_")).reliability),
                          "trusted": p.trusted, "disagree": p.disagree, "why": p.why,
                          "spearman_brown": proj(p.spearman_brown), "resampled": proj(p.resampled)},
            "target": None if p.target is None else {"value": p.target, "ratings_needed": r(p.ratings_needed)},
            "least_certain": self.least_certain().to_dict("records"),
            "annotator_table": [{k: _num(v) for k, v in row.items()} for row in rows.to_dict("records")],
            "retest": None if self.annotators.retest is None else vars(self.annotators.retest),
            "next_batch": None if self.next_batch is None else self.next_batch.to_dict("records"),
        }


def _num(v):
    """JSON has no NaN/inf: None, and numpy scalars as Python numbers."""
    if isinstance(v, (float, np.floating)):
        return None if not math.isfinite(v) else float(v)
    return v.item() if isinstance(v, np.generic) else v


def plan_ratings(table: RatingTable, *, raters: int | None = None, target: float | None = None,
                 max_raters: int | None = None, seed: int = 0, trials: int = 200, n_resamples: int = 400,
                 confidence: float = 0.95, next_ratings: int | None = None) -> RatingPlan:
    """The plan of a checked rating table; ``raters`` K (default: twice the median raters per item);
    ``next_ratings``: where that many more ratings help most (:func:`.next_batch.widest_assignment`)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ParameterError("seed", seed, "must be an integer >= 0")
    values, counts = panel(table)
    median = float(np.median(counts))
    k = raters if raters is not None else max(2, int(round(2 * median)))
    plan = project(values, counts, raters=k, target=target, max_raters=max_raters, trials=trials,
                   n_resamples=n_resamples, seed=seed, confidence=confidence)
    moments = alpha_moments(values, counts)
    rng = np.random.default_rng([seed, 1])
    boot = alpha_from(np.concatenate([w @ moments for w in resample_weights(len(moments), n_resamples, rng)]))
    f = table.first
    alpha = ranged(krippendorff_alpha(table.item[f], table.score[f]), boot, confidence)
    batch = None
    if next_ratings is not None:
        if next_ratings < 1:
            raise ParameterError("next_ratings", next_ratings, "must be >= 1")
        more = widest_assignment(shrunk_sd(values, counts), counts, next_ratings)
        order = np.argsort(-more, kind="stable")[: int((more > 0).sum())]
        batch = pd.DataFrame({"item": table.items[order], "raters": counts[order], "more": more[order]})
    return RatingPlan(len(table.items), len(table.annotators), int(f.sum()), int((~f).sum()),
                      (int(counts.min()), median, int(counts.max())), plan, alpha,
                      item_means(values, counts, confidence), table.items, annotator_report(table), batch)

