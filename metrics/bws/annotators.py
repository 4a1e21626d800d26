"""Per-annotator checks of a BWS collection in progress: agreement with the others, random-like and time flags.

**Agreement (leave-one-out).** Every annotation implies paired comparisons (best > each other
item, each other item > worst: :func:`semrel.metrics.bws.scoring.implied_pairs`). For annotator a,
each of their pairs (w, l) is checked against the counting scores of the *other* annotators'
annotations, s_-a(i) = (net(i) - net_a(i)) / (app(i) - app_a(i)): 1 if s_-a(w) > s_-a(l), 1/2 on a
tie, 0 otherwise; pairs with an item no one else annotated are left out. An annotation's agreement
is the mean over its pairs; an annotator's the mean over their annotations, with a normal
interval mean +- z sd / sqrt(n). A random chooser agrees 1/2 in expectation.

**Random-like**: at least ``min_annotations`` annotations and agreement not above 1/2 by a
one-sided z-test at ``alpha_test`` (the crowd-sts "random-like" filter, here against the others'
scores rather than a fixed key). **Time** (where the file has seconds per annotation): ``fast``
when an annotator's median time is below ``fast_share`` of the median of the annotators' medians,
``slow`` when above ``1 / fast_share`` of it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from ..errors import DataValidationError
from .counting import Annotations, factorize, tally
from .scoring import implied_pairs


@dataclass(frozen=True)
class AnnotatorChecks:
    """One entry per annotator, in ``annotators`` order (sorted ids)."""

    annotators: np.ndarray
    annotations: np.ndarray
    agreement: np.ndarray  # NaN where none of their pairs could be checked
    low: np.ndarray
    high: np.ndarray
    random_like: np.ndarray
    seconds_median: np.ndarray | None = None
    fast: np.ndarray | None = None
    slow: np.ndarray | None = None


def annotator_checks(ann: Annotations, annotators, seconds=None, *, min_annotations: int = 5,
                     alpha_test: float = 0.05, fast_share: float = 0.25, level: float = 0.95,
                     source: str = "<annotations>") -> AnnotatorChecks:
    """Leave-one-out agreement, random-like and time flags per annotator (see module doc);
    ``annotators`` and ``seconds`` (optional) hold one value per annotation of ``ann``."""
    annotators = np.asarray(annotators)
    if annotators.shape != ann.best.shape:
        raise ValueError(f"annotators needs one value per annotation ({len(ann.best)}), got {annotators.shape}")
    code, distinct = factorize(annotators)
    order = np.argsort(np.array(distinct, dtype=object).astype(str), kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    code, ids = rank[code], np.array(distinct, dtype=object)[order]
    if len(ids) < 2:
        raise DataValidationError(source, None, "annotator checks need at least 2 annotators",
                                  f"every annotation is by {ids[0]!r}; agreement with the others has no others")
    n_items, n_ann = len(ann.items), len(ids)
    app, n_best, n_worst = tally(ann)
    net = n_best - n_worst
    k = ann.tuples.shape[1]
    # per (annotator, item): appearances and net, as sorted keys annotator * n_items + item
    keys, app_a = np.unique(np.repeat(code, k) * n_items + ann.tuples.ravel(), return_counts=True)
    net_a = np.zeros(len(keys))
    np.add.at(net_a, np.searchsorted(keys, code * n_items + ann.best), 1.0)
    np.add.at(net_a, np.searchsorted(keys, code * n_items + ann.worst), -1.0)
    winners, losers, row = implied_pairs(ann.tuples, ann.best, ann.worst, with_source=True)

    def loo(item):  # (score without the pair's annotator, defined)
        at = np.searchsorted(keys, code[row] * n_items + item)
        den = app[item] - app_a[at]
        with np.errstate(divide="ignore", invalid="ignore"):
            return (net[item] - net_a[at]) / den, den > 0

    (s_w, ok_w), (s_l, ok_l) = loo(winners), loo(losers)
    ok = ok_w & ok_l
    agree = np.where(s_w > s_l, 1.0, np.where(s_w == s_l, 0.5, 0.0))
    pairs = np.bincount(row[ok], minlength=len(ann.best))
    per_annotation = np.bincount(row[ok], agree[ok], minlength=len(ann.best))
    checked = pairs > 0
    per_annotation = per_annotation[checked] / pairs[checked]
    who = code[checked]
    n = np.bincount(who, minlength=n_ann)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.bincount(who, per_annotation, n_ann) / n
        var = np.bincount(who, per_annotation ** 2, n_ann) / n - mean ** 2
        se = np.sqrt(np.maximum(var, 0) / np.maximum(n - 1, 1))
        z = norm.ppf((1 + level) / 2)
        # one-sided test of mean > 1/2; a zero spread gives z = +-inf (or NaN at exactly 1/2: not above)
        above = np.nan_to_num((mean - 0.5) / se, nan=0.0) > norm.ppf(1 - alpha_test)
    random_like = (n >= min_annotations) & ~above
    result = dict(annotators=ids, annotations=np.bincount(code, minlength=n_ann), agreement=mean,
                  low=mean - z * se, high=mean + z * se, random_like=random_like)
    if seconds is not None:
        result.update(_time_flags(np.asarray(seconds, dtype=np.float64), code, n_ann, fast_share))
    return AnnotatorChecks(**result)


def _time_flags(seconds: np.ndarray, code: np.ndarray, n_ann: int, fast_share: float) -> dict:
    order = np.lexsort((seconds, code))
    starts = np.searchsorted(code[order], np.arange(n_ann))
    counts = np.bincount(code, minlength=n_ann)
    s = seconds[order]
    median = (s[starts + (counts - 1) // 2] + s[starts + counts // 2]) / 2
    typical = np.median(median)
    return {"seconds_median": median, "fast": median < fast_share * typical, "slow": median > typical / fast_share}
