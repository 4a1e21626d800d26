"""The five annotator-reliability heuristics of Solomon et al. (2021), paper 002 §5.1.

Each filter is a function over the tidy long annotation table (one row per annotation: columns
``pair_id``, ``worker_id``, ``label`` 1–5, and per filter ``seconds``, ``is_random``,
``sentence1``/``sentence2``) with its thresholds as keyword arguments (defaults: the values of the
authors' code). It returns a :class:`FilterResult`: the per-worker statistic it reads (one row per
worker of the table) and the set of flagged workers. Workers for whom a statistic is undefined
(too few labels) are never flagged. Filters 1–4 are scale-free math in
:mod:`semrel.metrics.annotator_filters` (re-exported here); the sentiment filter, which scores
texts, lives here.

    results = run_filters(annotations)       # annotations: load("crowd-sts", "annotations")
    kept = drop_workers(annotations, flagged_by(results, ["low_variance", "high_random"]))
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from semrel.metrics.annotator_filters import (  # noqa: F401  (the scale-free filters live in metrics)
    FilterResult,
    _require,
    _result,
    disagreeable,
    high_random,
    low_variance,
    reduce_labels,
    slow,
)

from .measures import SentimentScorer, bleu1, score_sentiment


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
