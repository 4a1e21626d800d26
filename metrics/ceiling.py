"""The human ceiling: what a perfect system can expect against gold scores that are a finite
aggregate of noisy judgements, and the average single annotator scored like a model.

**Definition** (classical test theory: Spearman 1904, 1910; Brown 1910; Lord & Novick 1968,
*Statistical Theories of Mental Test Scores*). An item's gold score G = T + E
aggregates a finite panel's judgements (a mean of ratings, a BWS counting score): T is the true
score, the aggregate over infinitely many annotators of the same kind, and E the panel's noise,
uncorrelated with T. The gold's reliability is R = Var T / Var G, which is also corr(G, G'), the
correlation with an independent replication G' (a fresh panel, same design). A perfect system
predicts T, and correlates with the gold at

    ceiling = corr(T, G) = √R                                      (the index of reliability)

No system whose errors are independent of the panel's noise can expect more: for any predictor P,
corr(P, G) = corr(P, T)·√R ≤ √R. Hence the order of the three figures: the split-half correlation r
(what STR-2021 and SemRel-2024 publish as SHR) ≤ R (a whole panel against a whole panel) ≤ √R (the
ceiling). A model above √R fits the panel's noise, or the assumptions fail. For BWS, T is the
infinite panel's counting score *on the same tuples*: the halves share the tuples, so what an item's
tuple companions add to its score counts as true score, and a system that predicts relatedness
itself stays somewhat below √R (simulated with Gumbel annotators, tests/metrics/test_ceiling.py).

**R from raw annotations: split-half and Spearman–Brown.** Each group of judgements (a BWS tuple's
annotations, an item's ratings) is split at random into two halves, each half scores the items
(:mod:`.split_half`), and r is the mean over trials of the halves' correlation over the items both
scored. A score made of m judgements has noise variance about σ²/m (a mean of m ratings; a counting
score over m appearances), so with h = mean over items of 1/m and λ = σ²/Var T:
r = 1/(1 + λ·h_half) and R = 1/(1 + λ·h_gold), hence the Spearman–Brown prophecy

    R = n·r / (1 + (n − 1)·r),        n = h_half / h_gold                 (:func:`spearman_brown`)

For halves with exactly half the judgements, n = 2 and R = 2r/(1 + r). Odd numbers (3 ratings split
1 + 2), uneven panels, and gold items with a single judgement that no split can use (crowd-sts after
a filter) enter through h. Pearson: exact under the model above. Spearman: the same with rank
correlations of the halves (the SHR convention for BWS, Kiritchenko & Mohammad 2017), an
approximation. The interval is a percentile bootstrap over items (Efron & Tibshirani 1993): items
resampled, r recomputed on ``interval_trials`` fixed splits, mapped through the same formula (a
resample whose R is <= 0 counts as ceiling 0).

**The average single annotator** (Sido et al. 2021 §5, Table 1, who compare each annotation with
its stack's mean *including* itself; here leave-one-out): every judgement against the mean of the
item's *other* judgements, all pooled into one Pearson and one Spearman (each judgement counts once,
so an annotator weighs by the items they judged), with a bootstrap over items
(:func:`.human_correlation.average_annotator`). One BWS annotation ranks four items once and gives
no item a score of its own: for BWS it is not defined.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .correlation_intervals import MIN_BOOTSTRAP_ITEMS, Estimate, Interval, check_options
from .errors import DataValidationError
from .human_correlation import average_annotator
from .split_half.split_half import HalfChunk, half_scores_bws, half_scores_ratings
from .split_half.trialwise import masked_pearson

STATISTICS = ("spearman", "pearson")
TRIALS = 1000  # splits behind the point estimate (STR-2021 §4: 1,000)
INTERVAL_TRIALS = 10  # splits each bootstrap resample is scored on
BATCH_CELLS = 1 << 21  # resamples x items per vectorised bootstrap batch
SOURCE = "<annotations>"


@dataclass(frozen=True)
class Ceiling:
    """One statistic's ceiling: ``value`` = √``reliability``; ``reliability`` = Spearman–Brown of
    ``split_half`` with lengthening ``factor``; ``interval`` (None: not bootstrapped)."""

    statistic: str  # "spearman" or "pearson"
    value: float
    reliability: float
    split_half: float  # mean over trials of the halves' correlation
    factor: float  # n = h_half / h_gold
    interval: Interval | None = None


@dataclass(frozen=True)
class CeilingResult:
    """The ceiling of a set of items under both statistics, and what it was computed from."""

    spearman: Ceiling
    pearson: Ceiling
    n_items: int  # gold items the ceiling is for
    n_split: int  # of them, items a split can score in both halves
    n_judgements: int  # judgements behind the gold (BWS: annotations touching the items)
    trials: int


def spearman_brown(r: float, factor: float = 2.0) -> float:
    """The Spearman–Brown prophecy n·r / (1 + (n − 1)·r): the reliability of a panel ``factor``
    times as large as the one whose reliability (or split-half correlation) is ``r``
    (Spearman 1910; Brown 1910).

    >>> round(spearman_brown(0.84), 4)  # STR-2021's split-half 0.84, for the whole panel
    0.913
    """
    if not (isinstance(r, (int, float, np.floating)) and -1.0 <= r <= 1.0):
        raise ValueError(f"r must be a correlation in [-1, 1], got {r!r}")
    if not (isinstance(factor, (int, float, np.floating)) and factor > 0 and math.isfinite(factor)):
        raise ValueError(f"factor must be a finite number > 0, got {factor!r}")
    return float(factor * r / (1.0 + (factor - 1.0) * r))


def ceiling_of(split_half: float, factor: float = 2.0) -> tuple[float, float]:
    """(reliability R, ceiling √R) of gold whose split-half correlation is ``split_half``.

    >>> [round(x, 4) for x in ceiling_of(0.84)]
    [0.913, 0.9555]
    """
    reliability = spearman_brown(split_half, factor)
    if reliability <= 0:
        raise ValueError(f"split-half correlation {split_half:.4f} gives reliability {reliability:.4f} <= 0: the "
                         "halves do not agree, so the gold has no ceiling to speak of")
    return reliability, math.sqrt(reliability)


def fraction_of_ceiling(score: float, ceiling: float) -> float:
    """``score / ceiling``: a model's correlation as a share of what a perfect system can expect
    against the same gold (1.0: at the ceiling; above 1: the model fits the panel's noise, or the
    ceiling's assumptions fail on these data).

    >>> round(fraction_of_ceiling(0.83, 0.9555), 3)
    0.869
    """
    for name, value in (("score", score), ("ceiling", ceiling)):
        if not isinstance(value, (int, float, np.floating)) or isinstance(value, bool) or not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
    if not 0 < ceiling <= 1:
        raise ValueError(f"ceiling must be in (0, 1], got {ceiling!r}")
    return float(score / ceiling)


def ratings_ceiling(annotations: Sequence[Sequence[float]], *, trials: int = TRIALS, seed: int = 0,
                    interval_trials: int = INTERVAL_TRIALS, n_resamples: int = 1000,
                    confidence: float = 0.95) -> CeilingResult:
    """The ceiling of gold = the mean of each item's ratings (``annotations``: one list of ratings
    per item; an item with a single rating counts in h_gold, a split cannot use it).

    >>> rng = np.random.default_rng(0)
    >>> truth = rng.normal(size=400)
    >>> panel = truth[:, None] + rng.normal(size=(400, 4))  # R = 1 / (1 + 1/4) = 0.8
    >>> round(ratings_ceiling(list(panel), trials=200).pearson.reliability, 2)
    0.8
    """
    counts, values = _ragged(annotations)
    splittable = counts >= 2
    if splittable.sum() < 3:
        raise DataValidationError(SOURCE, None, "a ceiling needs >= 3 items with >= 2 ratings",
                                  f"{int(splittable.sum())} of {counts.size} items have >= 2")
    item_of = np.repeat(np.arange(counts.size), counts)
    keep = splittable[item_of]
    code = np.cumsum(splittable)[item_of[keep]] - 1
    chunks = half_scores_ratings(code, values[keep], trials=trials, seed=seed)
    return _from_halves(chunks, h_gold=float(np.mean(1.0 / counts)), n_items=counts.size,
                        n_split=int(splittable.sum()), n_judgements=int(counts.sum()), trials=trials, seed=seed,
                        interval_trials=interval_trials, n_resamples=n_resamples, confidence=confidence)


def bws_ceiling(annotations, items: Sequence[int] | None = None, *, trials: int = TRIALS, seed: int = 0,
                interval_trials: int = INTERVAL_TRIALS, n_resamples: int = 1000,
                confidence: float = 0.95) -> CeilingResult:
    """The ceiling of gold = the BWS counting score of each item in ``items`` (indices into
    ``annotations.items``, an :class:`~semrel.metrics.bws.counting.Annotations`; default all):
    every tuple's annotations are split, the correlation is taken over ``items`` only, and
    m = an item's appearances."""
    n_all = len(annotations.items)
    items = np.arange(n_all) if items is None else np.asarray(items, dtype=np.int64)
    if items.ndim != 1 or items.size < 3 or (items < 0).any() or (items >= n_all).any():
        raise ValueError(f"items must be >= 3 indices into the {n_all} items of the annotations")
    if np.unique(items).size != items.size:
        raise ValueError("items holds an item twice")
    appearances = np.bincount(annotations.tuples.ravel(), minlength=n_all)[items]
    touching = np.isin(annotations.tuples, items).any(axis=1)
    chunks = half_scores_bws(annotations, trials=trials, seed=seed, items=items)
    return _from_halves(chunks, h_gold=float(np.mean(1.0 / appearances)), n_items=items.size,
                        n_split=items.size, n_judgements=int(touching.sum()), trials=trials, seed=seed,
                        interval_trials=interval_trials, n_resamples=n_resamples, confidence=confidence)


def single_annotator(annotations: Sequence[Sequence[float]], *, confidence: float = 0.95, n_resamples: int = 1000,
                     seed: int = 0) -> tuple[dict[str, Estimate], int]:
    """The average single annotator (module docstring) over the items with >= 2 judgements, and
    how many items that is (an item judged once has no other judgement to compare with)."""
    arrays = [np.asarray(a, dtype=np.float64) for a in annotations]
    used = [a for a in arrays if a.size >= 2]
    if len(used) < MIN_BOOTSTRAP_ITEMS:
        raise DataValidationError(SOURCE, None, f"the single annotator needs >= {MIN_BOOTSTRAP_ITEMS} items with >= 2 "
                                  "judgements", f"{len(used)} of {len(arrays)} items have >= 2")
    return average_annotator(used, confidence, n_resamples=n_resamples, seed=seed), len(used)


def _ragged(annotations: Sequence[Sequence[float]]) -> tuple[np.ndarray, np.ndarray]:
    """(judgements per item, flat values); an item without judgements or a non-finite value raises."""
    arrays = []
    for i, a in enumerate(annotations):
        try:
            arrays.append(np.asarray(a, dtype=np.float64).ravel())
        except (TypeError, ValueError) as err:
            raise ValueError(f"annotations[{i}]: not a list of numbers ({err})") from None
    counts = np.fromiter((a.size for a in arrays), np.int64, len(arrays))
    if (counts == 0).any():
        raise ValueError(f"annotations[{int(np.argmin(counts))}] is empty: every gold item needs a judgement")
    values = np.concatenate(arrays) if arrays else np.zeros(0)
    if not np.isfinite(values).all():
        item = int(np.searchsorted(np.cumsum(counts), int(np.argmin(np.isfinite(values))), side="right"))
        raise ValueError(f"annotations[{item}] holds a non-finite value")
    return counts, values


def _from_halves(chunks: Iterable[HalfChunk], *, h_gold: float, n_items: int, n_split: int, n_judgements: int,
                 trials: int, seed: int, interval_trials: int, n_resamples: int, confidence: float) -> CeilingResult:
    """Point estimates over every trial; the bootstrap over the first ``interval_trials`` trials."""
    check_options(confidence=confidence, n_resamples=n_resamples, seed=seed)
    if isinstance(interval_trials, bool) or not isinstance(interval_trials, (int, np.integer)) or interval_trials < 1:
        raise ValueError(f"interval_trials must be an integer >= 1, got {interval_trials!r}")
    per_trial = {name: [] for name in STATISTICS}
    h_half, kept = [], []
    for c in chunks:
        per_trial["spearman"].append(masked_pearson(c.ranks_a, c.ranks_b, c.valid))
        per_trial["pearson"].append(masked_pearson(c.score_a, c.score_b, c.valid))
        inverse = np.where(c.valid, (1.0 / c.den_a + 1.0 / c.den_b) / 2.0, 0.0)
        h_half.append(inverse.sum(axis=1) / np.maximum(c.valid.sum(axis=1), 1))
        if sum(len(k[0]) for k in kept) < interval_trials:
            kept.append((c.score_a, c.score_b, c.valid))
    factor = float(np.mean(np.concatenate(h_half))) / h_gold
    a, b, valid = (np.concatenate(part)[:interval_trials] for part in zip(*kept, strict=True))
    bootstrap = _bootstrap(a, b, valid, n_resamples, np.random.default_rng(seed))
    level = (1 - confidence) / 2
    result = {}
    for name in STATISTICS:
        r = _mean_defined(np.concatenate(per_trial[name]), name)
        if spearman_brown(r, factor) <= 0:
            raise DataValidationError(SOURCE, None, "the halves do not agree: no ceiling",
                                      f"split-half {name} correlation {r:.4f} over {n_split} items")
        reliability, value = ceiling_of(r, factor)
        with np.errstate(invalid="ignore"):
            boot = np.sqrt(np.clip(_spearman_brown(bootstrap[name], factor), 0.0, None))
        low, high = np.quantile(boot, [level, 1 - level])
        result[name] = Ceiling(name, value, reliability, r, factor,
                               Interval(float(low), float(high), confidence, "bootstrap-percentile-items"))
    return CeilingResult(result["spearman"], result["pearson"], n_items, n_split, n_judgements, trials)


def _spearman_brown(r: np.ndarray, factor: float) -> np.ndarray:
    """:func:`spearman_brown` of an array of correlations."""
    return factor * r / (1.0 + (factor - 1.0) * r)


def _mean_defined(r: np.ndarray, name: str) -> float:
    undefined = np.isnan(r)
    if undefined.all():
        raise DataValidationError(SOURCE, None, f"split-half {name} correlation is undefined in every trial",
                                  "fewer than 2 items scored in both halves, or constant scores")
    if undefined.any():
        warnings.warn(f"split-half {name} correlation undefined in {int(undefined.sum())} of {r.size} trials; "
                      "mean over the others", RuntimeWarning, stacklevel=4)
    return float(r[~undefined].mean())


def _bootstrap(a: np.ndarray, b: np.ndarray, valid: np.ndarray, n_resamples: int,
               rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Mean split-half correlation of each item resample over the kept trials (rows of ``a``, ``b``).

    A resample is a vector of item counts w (multinomial), and its correlations come from weighted
    sums, never from copies of the resampled items: Pearson from Σw, Σwx, Σwy, Σwx², Σwy², Σwxy over
    the trial's valid items (one matrix product for all trials); Spearman from the counts of each
    distinct value (average rank of value u = Σ_{v<u} c_v + (c_u + 1)/2) and of each pair of values
    the two halves give an item, which is Pearson of the average ranks over the resampled items.
    """
    trials, n = a.shape
    v = valid.astype(np.float64)
    centred = [np.where(valid, x - np.nanmean(np.where(valid, x, np.nan), axis=1, keepdims=True), 0.0) for x in (a, b)]
    x, y = centred
    moments = np.concatenate([v, x, y, x * x, y * y, x * y]).T  # (n, 6 trials)
    blocks, layout = [], []
    for t in range(trials):
        rows = np.flatnonzero(valid[t])
        ua, ida = np.unique(a[t, rows], return_inverse=True)
        ub, idb = np.unique(b[t, rows], return_inverse=True)
        pair, idp = np.unique(ida * ub.size + idb, return_inverse=True)
        for ids, width in ((ida, ua.size), (idb, ub.size), (idp, pair.size)):
            blocks.append(sp.csr_matrix((np.ones(rows.size), (ids, rows)), shape=(width, n)))
        layout.append((ua.size, ub.size, pair // ub.size, pair % ub.size))
    value_counts = sp.vstack(blocks, format="csr")  # (values and value pairs of every trial, n)
    out = {name: np.empty(n_resamples) for name in STATISTICS}
    per_batch = max(1, BATCH_CELLS // n)
    for start in range(0, n_resamples, per_batch):
        q = min(per_batch, n_resamples - start)
        picks = rng.integers(0, n, size=(q, n)) + (np.arange(q) * n)[:, None]
        w = np.bincount(picks.ravel(), minlength=q * n).reshape(q, n).astype(np.float64)
        m = (w @ moments).reshape(q, 6, trials)
        with np.errstate(invalid="ignore", divide="ignore"):
            out["pearson"][start:start + q] = _mean_over_trials(_weighted_r(*m.transpose(1, 0, 2)))
        counts = np.asarray((value_counts @ w.T).T)  # (q, values and pairs)
        rho, at = np.empty((q, trials)), 0
        for t, (da, db, pu, pv) in enumerate(layout):
            ca, cb, cab = np.split(counts[:, at:at + da + db + pu.size], [da, da + db], axis=1)
            at += da + db + pu.size
            ra, rb = np.cumsum(ca, axis=1) - (ca - 1) / 2, np.cumsum(cb, axis=1) - (cb - 1) / 2
            with np.errstate(invalid="ignore", divide="ignore"):
                rho[:, t] = _weighted_r(ca.sum(axis=1), (ca * ra).sum(axis=1), (cb * rb).sum(axis=1),
                                        (ca * ra * ra).sum(axis=1), (cb * rb * rb).sum(axis=1),
                                        (cab * ra[:, pu] * rb[:, pv]).sum(axis=1))
        out["spearman"][start:start + q] = _mean_over_trials(rho)
    for name, values in out.items():
        if np.isnan(values).any():
            raise DataValidationError(SOURCE, None, f"split-half {name} correlation undefined in a bootstrap resample",
                                      "too few items or distinct scores for an interval")
    return out


def _weighted_r(n, sx, sy, sxx, syy, sxy):
    """Pearson r from the weighted sums of x, y, x², y², xy over total weight n."""
    return (n * sxy - sx * sy) / np.sqrt((n * sxx - sx * sx) * (n * syy - sy * sy))


def _mean_over_trials(r: np.ndarray) -> np.ndarray:
    """Mean of each row over its defined trials (NaN only where none is)."""
    defined = ~np.isnan(r)
    with np.errstate(invalid="ignore"):
        return np.where(defined, r, 0.0).sum(axis=1) / defined.sum(axis=1)
