"""Candidate pairs from a corpus, by the STR-2021 procedure (Abdalla et al. 2023, appendix A.1.3).

Sentences of ``min_tokens``–``max_tokens`` word tokens; random pairs scored by IDF-weighted Dice

    dice_idf(X, Y) = 2 · Σ_{w ∈ X ∩ Y} idf(w) / (Σ_{w ∈ X} idf(w) + Σ_{w ∈ Y} idf(w)),
    idf(w) = ln((1 + N) / (1 + df(w))) + 1

over the unique lower-cased tokens X, Y (``N``: sentences of the allowed length, ``df``: how many
hold ``w``; scikit-learn's smoothed idf, never zero), or by a model's score (``by``: the cosine of a
bi-encoder); assigned to ``buckets`` buckets between equally spaced percentiles of the candidates'
scores; then drawn exponentially more from low to high buckets (bucket ``b`` weighs
``growth ** b``: the Goodreads random pairs) or uniformly per bucket (the paraphrase pairs).

Two passes over the corpus, never all N² pairs: :func:`count_corpus` (pass 1, per shard: document
frequencies, and a 64-bit key, row and source per kept sentence; shards merge by
:func:`merge_counts`: counts add, keys concatenate in shard order), then the candidates are drawn
as distinct indices into the triangle of pairs of each source's distinct sentences, and pass 2
reads only the candidates' sentences. Memory: 24 bytes per kept sentence and the candidates.

Duplicates: sentences with the same :func:`~.corpus.normalised` text are one; the first (files in
the order given, then rows) is kept and the others counted. So no pair holds two identical
texts, and no pair (nor its swap) is drawn twice. A pair's id is a hash of its two normalised
texts in sorted order: the same pair has the same id in any run, file or order.
"""

from __future__ import annotations

import hashlib
import math
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from semrel.metrics.errors import DataValidationError, ParameterError

from .corpus import Skipped, normalised, records, tokens

COLUMNS = ("pair_id", "sentence1", "sentence2", "sampling_score", "sampled_by", "bucket", "source")
DRAWS = ("exponential", "uniform")
# bucket weight ratio of the exponential draw: the paper gives none; the closest fit
# (benchmarks/results/making-a-dataset.md)
GROWTH = 1.3
CANDIDATES_PER_PAIR = 20


@dataclass
class CorpusCounts:
    """Pass 1 over corpus shards: ``n_counted`` sentences of the allowed length (duplicates
    included) and their document frequencies ``df``; per kept sentence its ``shard`` (index into
    ``files``), ``row``, 64-bit normalised-text ``key`` and ``source`` (index into ``sources``)."""

    files: list[str]
    rows_read: int = 0
    n_counted: int = 0
    too_short: int = 0
    too_long: int = 0
    skipped: Skipped = field(default_factory=Skipped)
    df: Counter = field(default_factory=Counter)
    sources: list[str] = field(default_factory=list)
    shard: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    row: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    key: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint64))
    source: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))


def _key(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(normalised(text).encode(), digest_size=8).digest(), "little")


def count_corpus(path, *, min_tokens: int = 5, max_tokens: int = 25, source_column: str | None = None,
                 source: str | None = None, progress: bool = False, **read) -> CorpusCounts:
    """Pass 1 over one corpus file (``read``: :func:`~.corpus.records`' options); without a
    ``source_column`` every sentence's source is ``source`` (default: the file's stem)."""
    from array import array

    counts = CorpusCounts([str(path)], skipped=Skipped())
    default_source = source or Path(path).stem
    names: dict[str, int] = {}
    rows, keys, sources = array("q"), array("Q"), array("i")
    for row, text, source in _bar(records(path, source_column=source_column, skipped=counts.skipped, **read),
                                  progress, f"{Path(path).name} pass 1"):
        counts.rows_read += 1
        found = tokens(text)
        if len(found) < min_tokens or len(found) > max_tokens:
            counts.too_short += len(found) < min_tokens
            counts.too_long += len(found) > max_tokens
            continue
        counts.n_counted += 1
        counts.df.update(set(found))
        rows.append(row)
        keys.append(_key(text))
        sources.append(names.setdefault(source or default_source, len(names)))
    counts.rows_read += counts.skipped.count
    counts.sources = list(names)
    counts.row, counts.key = np.frombuffer(rows, np.int64).copy(), np.frombuffer(keys, np.uint64).copy()
    counts.source, counts.shard = np.frombuffer(sources, np.int32).copy(), np.zeros(len(rows), np.int32)
    return counts


def merge_counts(parts: list[CorpusCounts]) -> CorpusCounts:
    """Shards' pass 1 as one: counts and document frequencies add; kept sentences concatenate in
    the order of ``parts`` (shard and source indices renumbered)."""
    merged = CorpusCounts([f for p in parts for f in p.files])
    names: dict[str, int] = {}
    columns = {"shard": [], "row": [], "key": [], "source": []}
    offset = 0
    for part in parts:
        for name in ("rows_read", "n_counted", "too_short", "too_long"):
            setattr(merged, name, getattr(merged, name) + getattr(part, name))
        merged.skipped.count += part.skipped.count
        merged.skipped.rows += part.skipped.rows
        merged.df.update(part.df)
        codes = np.array([names.setdefault(s, len(names)) for s in part.sources], np.int32)
        columns["shard"].append(part.shard + offset)
        offset += len(part.files)
        columns["row"].append(part.row)
        columns["key"].append(part.key)
        columns["source"].append(codes[part.source] if len(part.source) else part.source)
    merged.sources = list(names)
    for name, arrays in columns.items():
        setattr(merged, name, np.concatenate(arrays) if arrays else getattr(merged, name))
    return merged


@dataclass
class PairSample:
    """The drawn pairs (``pairs``: a DataFrame of :data:`COLUMNS`) and what pass 1 saw
    (``counts``), with ``duplicates`` left out and per source its distinct ``sentences``,
    scored ``candidates`` and the buckets that held fewer candidates than their share (``short``)."""

    pairs: object
    counts: CorpusCounts
    duplicates: int
    sentences: dict[str, int]
    candidates: dict[str, int]
    short: dict[str, int]
    measure: str

    def summary(self) -> list[str]:
        """What was read, left out and drawn, one line each."""
        c = self.counts
        lines = [f"{c.rows_read} rows read; {c.too_short} under and {c.too_long} over the token limits; "
                 f"{self.duplicates} duplicates left out (the first of equal normalised texts kept); "
                 f"{c.skipped.count} empty rows skipped" + (f" (rows {', '.join(map(str, c.skipped.rows))}"
                                                             f"{', ...' if c.skipped.count > 5 else ''})"
                                                             if c.skipped.count else "")]
        for source in self.sentences:
            drawn = int((self.pairs["source"] == source).sum())
            lines.append(f"{source}: {drawn} pairs from {self.candidates[source]} candidates of "
                         f"{self.sentences[source]} sentences by {self.measure}"
                         + (f"; {self.short[source]} buckets held fewer than their share (all taken)"
                            if self.short[source] else ""))
        return lines


def sample_pairs(corpus, n: int, *, seed: int = 0, draw: str = "exponential", growth: float = GROWTH,
                 buckets: int = 50, candidates: int | None = None, min_tokens: int = 5, max_tokens: int = 25,
                 by=None, source_column: str | None = None, progress: bool = False, **read) -> PairSample:
    """``n`` pairs from each source of ``corpus`` (a file, or a list of files: shards of one
    corpus; without a ``source_column`` its source is the first file's stem), by the module's
    procedure. ``candidates``: random pairs scored per source (default
    ``max(20 n, 10000)``, at most all pairs); ``by``: a model argument or a loaded scorer
    (:func:`semrel.trainers.scoring.load_scorer`) scoring the candidates instead of IDF-weighted
    Dice; ``read``: :func:`~.corpus.records`' options. Same arguments, same pairs, bit for bit."""
    import pandas as pd

    _check(n=n, seed=seed, draw=draw, growth=growth, buckets=buckets, candidates=candidates,
           min_tokens=min_tokens, max_tokens=max_tokens)
    files = [str(corpus)] if isinstance(corpus, (str, Path)) else [str(f) for f in corpus]
    counts = merge_counts([count_corpus(f, min_tokens=min_tokens, max_tokens=max_tokens, progress=progress,
                                        source_column=source_column, source=Path(files[0]).stem, **read)
                           for f in files])
    _, first = np.unique(counts.key, return_index=True)
    keep = np.zeros(len(counts.key), bool)
    keep[first] = True
    order = {}  # source -> positions (into counts' arrays) of its distinct sentences, in corpus order
    for code, source in enumerate(counts.sources):
        order[source] = np.flatnonzero(keep & (counts.source == code))
    drawn = {}
    for source in sorted(order):
        positions = order[source]
        total = len(positions) * (len(positions) - 1) // 2
        if total < n:
            raise DataValidationError(", ".join(files), None, f"source {source!r} has {len(positions)} distinct "
                                      f"sentence(s) of {min_tokens}-{max_tokens} tokens: {total} pairs, "
                                      f"fewer than n={n}")
        rng = np.random.default_rng(np.random.SeedSequence([seed, zlib.crc32(source.encode())]))
        m = min(total, candidates or max(CANDIDATES_PER_PAIR * n, 10000))
        first_, second = triangle_pairs(rng.choice(total, m, replace=False), len(positions))
        swap = rng.random(m) < 0.5
        first_, second = np.where(swap, second, first_), np.where(swap, first_, second)
        drawn[source] = (rng, positions[first_], positions[second])
    needed = np.unique(np.concatenate([np.concatenate(d[1:]) for d in drawn.values()]))
    texts = _read_texts(files, counts, needed, source_column, progress, read)
    scorer = _scorer(by)
    name = getattr(scorer, "spec", by)
    measure = "IDF-weighted Dice" if scorer is None else f"the score of {name}"
    rows, short, sizes = [], {}, {}
    for source, (rng, a, b) in drawn.items():
        s1, s2 = [texts[i] for i in a], [texts[i] for i in b]
        scores = (_idf_dice(s1, s2, counts) if scorer is None
                  else np.round(np.asarray(scorer.score(s1, s2), np.float64), 12))
        bucket = assign_buckets(scores, buckets)
        weights = growth ** np.arange(buckets, dtype=np.float64) if draw == "exponential" else np.ones(buckets)
        capacity = np.bincount(bucket, minlength=buckets)
        quota = bucket_quotas(weights, capacity, n)
        short[source], sizes[source] = int(((quota == capacity) & (quota < n * weights / weights.sum())).sum()), len(a)
        for k in np.flatnonzero(quota):
            members = np.flatnonzero(bucket == k)
            for i in np.sort(rng.choice(len(members), quota[k], replace=False)):
                j = members[i]
                rows.append((pair_id(s1[j], s2[j]), s1[j], s2[j], float(scores[j]),
                             "idf_dice" if scorer is None else f"model:{name}", int(k), source))
    pairs = pd.DataFrame(rows, columns=list(COLUMNS))
    return PairSample(pairs, counts, int(len(keep) - keep.sum()), {s: len(order[s]) for s in sorted(order)},
                      sizes, short, measure)


def pair_id(sentence1: str, sentence2: str) -> str:
    """A pair's stable id: 16 hex digits of the SHA-256 of its two normalised texts, sorted
    (so a pair and its swap share it).

    >>> pair_id("A cat sat.", "A dog ran.") == pair_id("a dog  ran.", "A cat sat.")
    True
    """
    first, second = sorted((normalised(sentence1), normalised(sentence2)))
    return hashlib.sha256(f"{first}\x1f{second}".encode()).hexdigest()[:16]


def triangle_pairs(index: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs ``(i, j)``, ``i < j < n``, at positions ``index`` of their row-major list
    (``(0, 1), (0, 2), ..., (1, 2), ...``): distinct positions, distinct unordered pairs.

    >>> [tuple(map(int, p)) for p in zip(*triangle_pairs(np.arange(6), 4))]
    [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    """
    k = np.asarray(index, np.int64)
    start = lambda i: i * (2 * n - i - 1) // 2  # noqa: E731  (the position of (i, i + 1))
    b = 2 * n - 1
    i = np.floor((b - np.sqrt(np.maximum(b * b - 8 * k.astype(np.float64), 0))) / 2).astype(np.int64)
    i = np.clip(i, 0, max(n - 2, 0))
    for _ in range(3):  # float rounding: at most one step either way
        i = np.where(start(i) > k, i - 1, i)
        i = np.where(start(i + 1) <= k, i + 1, i)
    return i, k - start(i) + i + 1


def assign_buckets(scores: np.ndarray, buckets: int) -> np.ndarray:
    """The bucket (0 .. buckets-1) of each score between the equally spaced percentiles of
    ``scores``; tied scores share one bucket, so some buckets may stay empty."""
    edges = np.quantile(scores, np.linspace(0, 1, buckets + 1))
    return np.searchsorted(edges[1:-1], scores, side="right")


def bucket_quotas(weights: np.ndarray, capacity: np.ndarray, n: int) -> np.ndarray:
    """Pairs to draw per bucket: ``n`` shared in proportion to ``weights``; a bucket holding fewer
    than its share gives all it holds and the rest is shared among the others the same way;
    fractions go by largest remainder (ties to the lower bucket).

    >>> bucket_quotas(np.array([1.0, 1.0, 2.0]), np.array([10, 1, 10]), 8).tolist()  # 7 left: 2.33 and 4.67
    [2, 1, 5]
    """
    quota = np.zeros(len(weights), np.int64)
    open_ = capacity > 0
    left = n
    while True:
        total = weights[open_].sum()
        share = np.where(open_, left * weights / (total if total > 0 else 1.0), 0.0)
        full = open_ & (share >= capacity)
        if not full.any():
            break
        quota[full], left, open_ = capacity[full], left - int(capacity[full].sum()), open_ & ~full
    whole = np.floor(share).astype(np.int64)
    rest = left - int(whole.sum())
    by_remainder = np.lexsort((np.arange(len(share)), -(share - whole)))
    whole[by_remainder[:rest]] += 1
    return np.where(open_, whole, quota)


def _idf_dice(s1: list[str], s2: list[str], counts: CorpusCounts) -> np.ndarray:
    """IDF-weighted Dice per pair (math.fsum: the same bits in any token order)."""
    n = counts.n_counted
    idf: dict[str, float] = {}

    def weights(text):
        unique = set(tokens(text))
        for t in unique:
            if t not in idf:
                idf[t] = math.log((1 + n) / (1 + counts.df[t])) + 1
        return unique

    out = np.empty(len(s1))
    for i, (a, b) in enumerate(zip(s1, s2, strict=True)):
        x, y = weights(a), weights(b)
        out[i] = 2 * math.fsum(idf[t] for t in x & y) / (math.fsum(idf[t] for t in x) + math.fsum(idf[t] for t in y))
    return out


def _read_texts(files, counts: CorpusCounts, needed: np.ndarray, source_column, progress, read) -> dict[int, str]:
    """Pass 2: the texts of the kept sentences at positions ``needed``."""
    texts = {}
    for shard, path in enumerate(files):
        wanted = needed[counts.shard[needed] == shard]
        by_row = dict(zip(counts.row[wanted].tolist(), wanted.tolist(), strict=True))
        for row, text, _ in _bar(records(path, source_column=source_column, skipped=Skipped(), **read),
                                 progress, f"{Path(path).name} pass 2"):
            if row in by_row:
                texts[by_row[row]] = text
    return texts


def _scorer(by):
    if by is None or hasattr(by, "score"):
        return by
    from semrel.trainers.scoring import load_scorer

    return load_scorer(str(by), cache_dir=None, parameter="by")


def _bar(iterable, progress: bool, desc: str):
    if not progress:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, desc=desc, unit=" rows", leave=False)


def _check(**given) -> None:
    rules = {"n": (1, "must be an integer >= 1"), "seed": (0, "must be an integer >= 0"),
             "buckets": (1, "must be an integer >= 1"), "min_tokens": (1, "must be an integer >= 1"),
             "max_tokens": (given["min_tokens"], "must be an integer >= min_tokens")}
    for name, (least, rule) in rules.items():
        value = given[name]
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
            raise ParameterError(name, value, rule)
    if given["candidates"] is not None and (not isinstance(given["candidates"], int)
                                            or given["candidates"] < given["n"]):
        raise ParameterError("candidates", given["candidates"], "must be an integer >= {n}, or None")
    if given["draw"] not in DRAWS:
        raise ParameterError("draw", given["draw"], "must be 'exponential' or 'uniform'")
    if not (isinstance(given["growth"], (int, float)) and math.isfinite(given["growth"]) and given["growth"] > 0):
        raise ParameterError("growth", given["growth"], "must be a finite number > 0")
