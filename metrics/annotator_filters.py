"""Annotator filters over a tidy long table of annotations (one row per annotation: columns
``pair_id``, ``worker_id``, ``label``, and per filter ``seconds``, ``is_random``): the scale-free
math of four of the five heuristics of Solomon et al. (2021, crowd-sts paper §5.1), thresholds as
keyword arguments (defaults: the authors' code, on labels 1–5).

Each returns a :class:`FilterResult`: the per-worker statistic it reads (one row per worker of the
table) and the set of flagged workers. Workers for whom a statistic is undefined (too few labels)
are never flagged. The crowd-sts package adds the fifth (sentiment, which needs a text scorer) and
runs them on its data; a collection in progress runs them through :mod:`semrel.metrics.rating_plan`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class FilterResult:
    """``stats``: one row per worker (index ``worker_id``); ``flagged``: the workers the rule flags."""

    name: str
    stats: pd.DataFrame
    flagged: frozenset[str]


def _require(annotations: pd.DataFrame, columns: Iterable[str], name: str) -> None:
    missing = [c for c in columns if c not in annotations.columns]
    if missing:
        raise ValueError(f"{name}: annotation table lacks column(s) {missing}")


def _result(name: str, annotations: pd.DataFrame, stats: pd.DataFrame,
            flag: pd.Series) -> FilterResult:
    workers = pd.Index(sorted(annotations["worker_id"].unique()), name="worker_id")
    stats = stats.reindex(workers)
    flag = flag.reindex(workers, fill_value=False).astype(bool)
    return FilterResult(name, stats, frozenset(flag.index[flag]))


def slow(annotations: pd.DataFrame, *, max_mean_seconds: float = 300.0) -> FilterResult:
    """(1) Slow annotators: mean WorkTimeInSeconds > ``max_mean_seconds``.

    Paper footnote 5: 300 s puts a worker in the 98th percentile of mean labelling time.
    """
    _require(annotations, ("worker_id", "seconds"), "slow")
    mean = annotations.groupby("worker_id")["seconds"].mean()
    return _result("slow", annotations, mean.rename("seconds_mean").to_frame(),
                   mean > max_mean_seconds)


def low_variance(annotations: pd.DataFrame, *, min_std: float = 1.0) -> FilterResult:
    """(2) Low variance: sample standard deviation (ddof 1) of all the worker's labels < ``min_std``.

    std < 1 ⇔ variance < 1 (the paper's wording); a worker with a single label has no std.
    """
    _require(annotations, ("worker_id", "label"), "low_variance")
    std = annotations.groupby("worker_id")["label"].std(ddof=1)
    return _result("low_variance", annotations, std.rename("label_std").to_frame(), std < min_std)


def high_random(annotations: pd.DataFrame, *, min_labels_each: int = 2) -> FilterResult:
    """(3) High random: mean label on random pairs ≥ mean label on non-random pairs.

    Only workers with at least ``min_labels_each`` labels on each side (the authors' "> 1") are
    judged: reliable workers rate unrelated random pairs lower than real pairs.
    """
    _require(annotations, ("worker_id", "label", "is_random"), "high_random")
    by_side = annotations.groupby(["worker_id", "is_random"])["label"]
    mean = by_side.mean().unstack().reindex(columns=[False, True])
    size = by_side.size().unstack().reindex(columns=[False, True]).fillna(0)
    stats = pd.DataFrame({"label_mean_random": mean[True], "label_mean_non_random": mean[False]})
    judged = (size[True] >= min_labels_each) & (size[False] >= min_labels_each)
    flag = judged & (stats["label_mean_random"] >= stats["label_mean_non_random"])
    return _result("high_random", annotations, stats, flag)


def reduce_labels(labels: np.ndarray, midpoint: float = 3.0) -> np.ndarray:
    """Reduced labelling of §5.1 (4): below ``midpoint`` → −1, at it → 0, above → +1 (on 1–5:
    1–2 → −1, 3 → 0, 4–5 → +1)."""
    return np.sign(np.asarray(labels, dtype=np.float64) - midpoint).astype(np.int64)


def disagreeable(annotations: pd.DataFrame, *, max_share: float = 0.5, min_cases: int = 1,
                 denominator: str = "cases", midpoint: float = 3.0) -> FilterResult:
    """(4) Disagreeable: on reduced labels, the worker contradicts a unanimous decision of the
    other annotators of a pair in more than ``max_share`` of such cases.

    A case is an annotation whose pair has at least two other annotations that all carry the same
    reduced label (with 3 annotators: the two others agree); it is a disagreement when the
    worker's reduced label differs. Workers with fewer than ``min_cases`` cases are not judged.
    ``denominator="labels"`` divides by all the worker's labels instead (the authors' code, which
    also required more than 4 labels: ``min_cases=5``); that variant flags almost nobody.
    ``midpoint``: the scale's middle, for :func:`reduce_labels` (3 on 1–5).
    """
    _require(annotations, ("pair_id", "worker_id", "label"), "disagreeable")
    if denominator not in ("cases", "labels"):
        raise ValueError(f"disagreeable: denominator must be 'cases' or 'labels', got {denominator!r}")
    pair_index, _ = pd.factorize(annotations["pair_id"])
    own = reduce_labels(annotations["label"].to_numpy(), midpoint) + 1  # 0, 1, 2
    counts = np.zeros((pair_index.max() + 1 if len(pair_index) else 0, 3), dtype=np.int64)
    np.add.at(counts, (pair_index, own), 1)
    others = counts[pair_index]
    others[np.arange(len(own)), own] -= 1
    n_others = others.sum(axis=1)
    case = (n_others >= 2) & (others.max(axis=1) == n_others)
    disagree = case & (others[np.arange(len(own)), own] == 0)
    per = pd.DataFrame({"worker_id": annotations["worker_id"].to_numpy(), "case": case,
                        "disagree": disagree, "label": 1}).groupby("worker_id")[
        ["case", "disagree", "label"]].sum()
    stats = pd.DataFrame({"n_unanimous_cases": per["case"], "n_disagreements": per["disagree"]})
    base = per["case"] if denominator == "cases" else per["label"]
    share = per["disagree"] / base.where(base > 0)
    return _result("disagreeable", annotations, stats, (base >= min_cases) & (share > max_share))
