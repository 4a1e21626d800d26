"""The five annotator-reliability heuristics of Solomon et al. (2021), paper 002 §5.1.

Each filter is a function over the tidy long annotation table (one row per annotation: columns
``pair_id``, ``worker_id``, ``label`` 1–5, and per filter ``seconds``, ``is_random``,
``sentence1``/``sentence2``) with its thresholds as keyword arguments (defaults: the values of the
authors' code). It returns a :class:`FilterResult`: the per-worker statistic it reads (one row per
worker of the table) and the set of flagged workers. Workers for whom a statistic is undefined
(too few labels) are never flagged.

    results = run_filters(annotations)       # annotations: load("crowd-sts", "annotations")
    kept = drop_workers(annotations, flagged_by(results, ["low_variance", "high_random"]))
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .measures import SentimentScorer, bleu1, score_sentiment


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


def reduce_labels(labels: np.ndarray) -> np.ndarray:
    """Reduced labelling of §5.1 (4): 1–2 → −1, 3 → 0, 4–5 → +1."""
    return np.sign(np.asarray(labels, dtype=np.int64) - 3)


def disagreeable(annotations: pd.DataFrame, *, max_share: float = 0.5, min_cases: int = 1,
                 denominator: str = "cases") -> FilterResult:
    """(4) Disagreeable: on reduced labels, the worker contradicts a unanimous decision of the
    other annotators of a pair in more than ``max_share`` of such cases.

    A case is an annotation whose pair has at least two other annotations that all carry the same
    reduced label (with 3 annotators: the two others agree); it is a disagreement when the
    worker's reduced label differs. Workers with fewer than ``min_cases`` cases are not judged.
    ``denominator="labels"`` divides by all the worker's labels instead (the authors' code, which
    also required more than 4 labels: ``min_cases=5``); that variant flags almost nobody.
    """
    _require(annotations, ("pair_id", "worker_id", "label"), "disagreeable")
    if denominator not in ("cases", "labels"):
        raise ValueError(f"disagreeable: denominator must be 'cases' or 'labels', got {denominator!r}")
    pair_index, _ = pd.factorize(annotations["pair_id"])
    own = reduce_labels(annotations["label"].to_numpy()) + 1  # 0, 1, 2
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


def sentiment_pairs(annotations: pd.DataFrame, *, scorer: SentimentScorer | None = None,
                    min_bleu1: float = 0.8, min_sentiment_gap: float = 1.9) -> pd.DataFrame:
    """Pairs with BLEU-1 > ``min_bleu1`` whose sentiment scores (in [−1, 1]) differ by
    ≥ ``min_sentiment_gap``: near-identical wording, opposite sentiment.

    Only the texts of pairs passing the BLEU-1 bar are scored. Columns: ``pair_id``, ``bleu1``,
    ``sentiment1``, ``sentiment2``, ``gap`` (all candidate pairs; ``selected`` marks the rule).
    """
    _require(annotations, ("pair_id", "sentence1", "sentence2"), "sentiment_pairs")
    pairs = annotations.drop_duplicates("pair_id")[["pair_id", "sentence1", "sentence2"]]
    b1 = bleu1(pairs["sentence1"].tolist(), pairs["sentence2"].tolist())
    cand = pairs[b1 > min_bleu1].assign(bleu1=b1[b1 > min_bleu1])
    texts = sorted(set(cand["sentence1"]) | set(cand["sentence2"]))
    score = dict(zip(texts, score_sentiment(texts, scorer), strict=True))
    cand = cand.assign(sentiment1=cand["sentence1"].map(score).astype(float),
                       sentiment2=cand["sentence2"].map(score).astype(float))
    cand["gap"] = (cand["sentiment1"] - cand["sentiment2"]).abs()
    cand["selected"] = cand["gap"] >= min_sentiment_gap
    return cand.drop(columns=["sentence1", "sentence2"]).reset_index(drop=True)


def sentiment_disaligned(annotations: pd.DataFrame, *, scorer: SentimentScorer | None = None,
                         min_bleu1: float = 0.8, min_sentiment_gap: float = 1.9,
                         max_variance: float = 1.0) -> FilterResult:
    """(5) Sentimentally dis-aligned: label variance (ddof 1) > ``max_variance`` on the pairs of
    :func:`sentiment_pairs` (paper footnote 7). Workers with < 2 such labels are not judged.

    ``scorer`` maps texts to [−1, 1]; default VADER compound (offline), or
    ``measures.pipeline_sentiment(transformers.pipeline("sentiment-analysis", model=...))``.
    """
    _require(annotations, ("pair_id", "worker_id", "label"), "sentiment_disaligned")
    chosen = sentiment_pairs(annotations, scorer=scorer, min_bleu1=min_bleu1,
                             min_sentiment_gap=min_sentiment_gap)
    chosen = chosen.loc[chosen["selected"], "pair_id"]
    there = annotations[annotations["pair_id"].isin(chosen)].groupby("worker_id")["label"]
    stats = pd.DataFrame({"n_sentiment_pairs": there.size(), "sentiment_label_var": there.var(ddof=1)})
    workers = annotations["worker_id"].unique()
    stats = stats.reindex(workers).fillna({"n_sentiment_pairs": 0})
    stats["n_sentiment_pairs"] = stats["n_sentiment_pairs"].astype(np.int64)
    return _result("sentiment", annotations, stats, stats["sentiment_label_var"] > max_variance)


FILTERS = {"slow": slow, "low_variance": low_variance, "high_random": high_random,
           "disagreeable": disagreeable, "sentiment": sentiment_disaligned}
PAPER_NUMBER = {"slow": 1, "low_variance": 2, "high_random": 3, "disagreeable": 4, "sentiment": 5}


def run_filters(annotations: pd.DataFrame, names: Sequence[str] = tuple(FILTERS),
                options: Mapping[str, Mapping] | None = None) -> dict[str, FilterResult]:
    """Run the named filters; ``options[name]`` holds keyword arguments (thresholds, scorer)."""
    unknown = sorted(set(names) - set(FILTERS))
    if unknown:
        raise KeyError(f"unknown filter(s) {unknown}; known: {list(FILTERS)}")
    options = options or {}
    return {name: FILTERS[name](annotations, **options.get(name, {})) for name in names}


def flagged_by(results: Mapping[str, FilterResult], names: Iterable[str]) -> frozenset[str]:
    """Workers flagged by any of the named filters (the union, as in the paper's combinations)."""
    return frozenset().union(*(results[n].flagged for n in names))


def drop_workers(annotations: pd.DataFrame, workers: Iterable[str]) -> pd.DataFrame:
    """The annotations of everybody except ``workers``."""
    return annotations[~annotations["worker_id"].isin(frozenset(workers))]
