"""The raw SemRel-2024 Best-Worst Scaling tuples (arb, arq) re-scored and mapped to the release.

Scores: counting, ((#best − #worst) / #appearances + 1) / 2 (Kiritchenko & Mohammad 2016;
:mod:`semrel.metrics.bws.counting`), from ``BWS_annotations/<lang>_bws.csv`` read with
:func:`semrel.metrics.bws.readers.read_semeval_2024` (rows whose item cell is no list literal
skipped and counted). Reliability: split-half with Spearman–Brown (Kiritchenko & Mohammad 2017;
:func:`semrel.metrics.split_half.split_half.split_half_bws`).

Mapping (measured): an item (a 2-sentence list) maps to the published pair of the same language
(any of its train/dev/test files, :data:`.files.FILES`) whose two sentences, in order, are equal
to the item's **with all whitespace removed** (:func:`pair_key`). The raw files write many
sentences with words split or joined differently from the release ("ما ترونه" / "ماترونه"), so
one published pair often has 2–3 spelling variants among the items; the variants of a pair are
pooled (their best, worst and appearance counts summed) before scoring, and :data:`POOLED` SHR
uses the same pooled identity. The reader's own identity (whitespace-normalised, words kept
apart) gives far fewer matches; :class:`Rescored` reports both.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from scipy.stats import spearmanr

from semrel.metrics.bws.counting import Annotations, bws_counting_scores, encode_annotations
from semrel.metrics.bws.readers import read_semeval_2024
from semrel.metrics.split_half.split_half import SplitHalfResult, split_half_bws

from ..sources import fetch
from .files import BWS, FILES, read_split

ROUNDING = 0.005  # published scores have 2 decimals
TRIALS, SEED = 1000, 0
READER, POOLED = "reader", "pooled"  # item identities: the reader's key, or the pooled pair key


def pair_key(sentence1: str, sentence2: str) -> str:
    """The identity a raw item and a published pair share: both sentences, whitespace removed."""
    return "".join(sentence1.split()) + "\n" + "".join(sentence2.split())


def loose_key(sentence1: str, sentence2: str) -> str:
    """:func:`pair_key` also without punctuation and tatweel (only to explain unmatched pairs)."""
    return "\n".join(re.sub(r"[\W_\u0640]+", "", s) for s in (sentence1, sentence2))


def _reader_key(sentence1: str, sentence2: str) -> str:
    return " ".join(sentence1.split()) + "\n" + " ".join(sentence2.split())


@dataclass(frozen=True)
class Rescored:
    """The re-scoring of one language's raw file against its published pairs."""

    language: str
    n_annotations: int  # rows kept by the reader
    skipped: dict  # rule -> rows the reader dropped
    n_items: int  # distinct items (reader's identity)
    n_published: int  # published pairs of the language (all splits)
    n_exact: int  # published pairs matched by the reader's identity (words kept apart)
    items_mapped: int  # items that map to a published pair (pooled identity)
    pair_ids: np.ndarray  # matched published pairs (pooled identity)
    splits: np.ndarray
    published: np.ndarray
    rescored: np.ndarray  # counting score in [0, 1] over the pooled variants
    appearances: np.ndarray
    variants: np.ndarray  # items pooled into each pair
    unmatched: list  # pair ids of published pairs no item maps to
    unmatched_loose: int  # of those, how many an item matches when punctuation is ignored too

    @property
    def diff(self) -> np.ndarray:
        return self.rescored - self.published

    @property
    def within_rounding(self) -> int:
        return int((np.abs(self.diff) <= ROUNDING + 1e-9).sum())

    @property
    def spearman(self) -> float:
        return float(spearmanr(self.rescored, self.published)[0])

    @property
    def fit(self) -> tuple[float, float]:
        """Least squares published ≈ a · counting + b (counting in [−1, 1]); (0.5, 0.5) is (s+1)/2."""
        a, b = np.polyfit(2 * self.rescored - 1, self.published, 1)
        return float(a), float(b)

    def largest(self, n: int = 5) -> list[dict]:
        """The ``n`` largest differences, with the net best−worst change each implies
        (Δ · 2 · appearances: one annotation moved from neutral to best is +1)."""
        order = np.argsort(-np.abs(self.diff), kind="stable")[:n]
        return [{"pair_id": self.pair_ids[i], "split": self.splits[i],
                 "published": float(self.published[i]), "rescored": float(self.rescored[i]),
                 "appearances": int(self.appearances[i]), "variants": int(self.variants[i]),
                 "net_change": float(-self.diff[i] * 2 * self.appearances[i])} for i in order]


def _published(language: str, mirror) -> list[tuple[str, dict]]:
    return [(split, row) for (lang, split) in FILES if lang == language
            for row in read_split(lang, split, mirror=mirror).rows]


def annotations(language: str, mirror=None) -> Annotations:
    """The raw annotations of ``language`` (sha256-checked file, unreadable rows omitted)."""
    return read_semeval_2024(fetch(BWS[language].source, mirror=mirror), on_invalid="omit")


def rescore(language: str, mirror=None) -> Rescored:
    """Counting scores of ``language``'s raw tuples, mapped and compared pair by pair."""
    ann = annotations(language, mirror)
    scores = bws_counting_scores(ann)
    published = _published(language, mirror)
    by_key = {pair_key(row["sentence1"], row["sentence2"]): (split, row) for split, row in published}
    reader_keys = {_reader_key(row["sentence1"], row["sentence2"]) for _, row in published}
    groups: dict[str, list[int]] = defaultdict(list)
    for i, item in enumerate(scores.items):
        key = pair_key(*item.split("\n"))
        if key in by_key:
            groups[key].append(i)
    keys = list(groups)
    n_best = np.array([scores.n_best[groups[k]].sum() for k in keys], dtype=float)
    n_worst = np.array([scores.n_worst[groups[k]].sum() for k in keys], dtype=float)
    appearances = np.array([scores.appearances[groups[k]].sum() for k in keys], dtype=int)
    matched = {by_key[k][1]["pair_id"] for k in keys}
    unmatched = [row for _, row in published if row["pair_id"] not in matched]
    loose_items = {loose_key(*item.split("\n")) for item in scores.items}
    return Rescored(
        language=language, n_annotations=len(ann.best), skipped=dict(ann.skipped),
        n_items=len(scores.items), n_published=len(published),
        n_exact=sum(item in reader_keys for item in scores.items),
        items_mapped=sum(len(g) for g in groups.values()),
        pair_ids=np.array([by_key[k][1]["pair_id"] for k in keys], dtype=object),
        splits=np.array([by_key[k][0] for k in keys], dtype=object),
        published=np.array([by_key[k][1]["score"] for k in keys], dtype=float),
        rescored=((n_best - n_worst) / appearances + 1) / 2, appearances=appearances,
        variants=np.array([len(groups[k]) for k in keys], dtype=int),
        unmatched=[row["pair_id"] for row in unmatched],
        unmatched_loose=sum(loose_key(row["sentence1"], row["sentence2"]) in loose_items
                            for row in unmatched))


def pooled(ann: Annotations) -> Annotations:
    """``ann`` with every item re-identified by :func:`pair_key` (spelling variants pooled);
    a tuple that then holds one pair twice is dropped and counted in ``skipped``."""
    keys = np.array([pair_key(*item.split("\n")) for item in ann.items], dtype=object)
    return encode_annotations(keys[ann.tuples], keys[ann.best], keys[ann.worst], choice="item",
                              on_invalid="omit", rows=ann.rows, source="pooled")


def reliability(language: str, identity: str = POOLED, *, trials: int = TRIALS, seed: int = SEED,
                mirror=None) -> SplitHalfResult:
    """Split-half reliability of ``language``'s raw annotations, Spearman–Brown corrected;
    items identified as the reader does (:data:`READER`) or pooled (:data:`POOLED`)."""
    ann = annotations(language, mirror)
    if identity == POOLED:
        ann = pooled(ann)
    elif identity != READER:
        raise ValueError(f"identity must be {READER!r} or {POOLED!r}, not {identity!r}")
    return split_half_bws(ann, trials=trials, seed=seed, spearman_brown=True)
