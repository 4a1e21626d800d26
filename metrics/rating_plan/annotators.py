"""Per-annotator checks of a collection in progress: leave-one-out agreement, the crowd-sts
filters, and re-test consistency.

- **Leave-one-out agreement** (Sido et al. 2021 §5, leave-one-out as
  :func:`semrel.metrics.agreement.inter_annotator_agreement`): Pearson r of the annotator's ratings
  against the mean of the *other* raters of the same items, (Σ − x)/(m − 1), over the items with
  >= 2 raters; computed for every annotator at once from grouped sums. ``random_like``: at least
  ``MIN_LOO_ITEMS`` such items and a Fisher-z 95% interval of r whose lower end is <= 0 (not shown
  to agree better than chance).
- **crowd-sts filters** (Solomon et al. 2021 §5.1; :mod:`semrel.metrics.annotator_filters`):
  low variance (ddof-1 std < 1 on 1–5, i.e. a quarter of the scale's width), slow (mean seconds
  > 300, where the file has ``seconds``), high random (mean on random control pairs >= mean on the
  others, where the file has ``is_random``), disagreeable (reduced labels around the scale's
  middle). ``fast``: a mean time below a quarter of the median annotator's (semrel's rule, not
  the paper's: a click-through).
- **Re-test**: an annotator's later rating of an item they rated before against their first;
  per annotator the count and the mean absolute difference, and over the file Pearson r
  (:func:`semrel.metrics.agreement.intra_annotator_agreement`) where >= 2 re-tests exist.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..agreement import AgreementResult, intra_annotator_agreement
from ..annotator_filters import disagreeable, high_random, low_variance, slow
from .table import RatingTable

MIN_LOO_ITEMS = 5
FAST_SHARE = 0.25
FILTER_WIDTH = 4.0  # the width of the 1-5 scale the crowd-sts low-variance threshold (std 1) is for


@dataclass(frozen=True)
class AnnotatorReport:
    """One row per annotator (``table``, indexed by annotator) and the file's re-test agreement."""

    table: pd.DataFrame  # ratings, mean, std, loo_r, loo_items, retests, retest_mad, flags
    retest: AgreementResult | None


def loo_agreement(table: RatingTable) -> pd.DataFrame:
    """Per annotator: items with other raters, Pearson r against the others' mean (NaN below 3 items)."""
    f = table.first
    item, ann, x = table.item[f], table.annotator[f], table.score[f]
    m = np.bincount(item, minlength=len(table.items))
    total = np.bincount(item, x, minlength=len(table.items))
    shared = m[item] >= 2
    y = np.where(shared, (total[item] - x) / np.maximum(m[item] - 1, 1), 0.0)
    n_a = len(table.annotators)

    def per(w):
        return np.bincount(ann[shared], w[shared], minlength=n_a)

    n, sx, sy = per(np.ones_like(x)), per(x), per(y)
    sxx, syy, sxy = per(x * x), per(y * y), per(x * y)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (n * sxy - sx * sy) / np.sqrt((n * sxx - sx * sx) * (n * syy - sy * sy))
    r = np.where(n >= 3, r, np.nan)
    return pd.DataFrame({"loo_items": n.astype(np.int64), "loo_r": r})


def annotator_report(table: RatingTable) -> AnnotatorReport:
    """Every check of the module docstring, one row per annotator, flags as a ``;``-joined column."""
    f = table.first
    long = pd.DataFrame({"pair_id": table.item[f], "worker_id": table.annotators[table.annotator[f]],
                         "label": table.score[f]})
    low, high = table.scale
    rows = long.groupby("worker_id")["label"].agg(ratings="size", mean="mean", std=lambda s: s.std(ddof=1))
    loo = loo_agreement(table)
    loo.index = pd.Index(table.annotators, name="worker_id")
    rows = rows.join(loo)
    flags = {name: set() for name in ("low_variance", "random_like", "slow", "fast", "high_random", "disagreeable")}
    flags["low_variance"] = set(low_variance(long, min_std=(high - low) / FILTER_WIDTH).flagged)
    z = np.arctanh(np.clip(rows["loo_r"].to_numpy(), -0.999999, 0.999999))
    with np.errstate(invalid="ignore", divide="ignore"):
        half = 1.96 / np.sqrt(rows["loo_items"].to_numpy() - 3.0)
    chance = (rows["loo_items"].to_numpy() >= MIN_LOO_ITEMS) & (z - half <= 0)
    flags["random_like"] = set(rows.index[chance])
    flags["disagreeable"] = set(disagreeable(long, midpoint=(low + high) / 2).flagged)
    if table.seconds is not None:
        long["seconds"] = table.seconds[f]
        flags["slow"] = set(slow(long).flagged)
        mean_time = long.groupby("worker_id")["seconds"].mean()
        flags["fast"] = set(mean_time.index[mean_time < FAST_SHARE * mean_time.median()])
        rows["seconds_mean"] = mean_time
    if table.is_random is not None:
        long["is_random"] = table.is_random[f]
        flags["high_random"] = set(high_random(long).flagged)
    rows["flags"] = [";".join(name for name, who in flags.items() if w in who) for w in rows.index]
    retests, retest = _retests(table), None
    rows = rows.join(retests).fillna({"retests": 0}).astype({"retests": np.int64})
    if int((~table.first).sum()) >= 2:
        retest = intra_annotator_agreement(table.item, table.annotator, table.score)
    return AnnotatorReport(rows, retest)


def _retests(table: RatingTable) -> pd.DataFrame:
    """Per annotator with re-tests: how many, and their mean absolute difference from the first rating."""
    key = table.item * len(table.annotators) + table.annotator
    _, first_row, pair = np.unique(key, return_index=True, return_inverse=True)
    again = ~table.first
    diff = np.abs(table.score[again] - table.score[first_row[pair.ravel()][again]])
    frame = pd.DataFrame({"worker_id": table.annotators[table.annotator[again]], "d": diff})
    out = frame.groupby("worker_id")["d"].agg(retests="size", retest_mad="mean")
    return out
