"""Reliability of item means from random rater splits, Krippendorff's α, and item-mean intervals.

**Split-half, Spearman–Brown corrected** (as :mod:`semrel.metrics.ceiling`): per trial each item's
raters are shuffled and split in two halves, the halves' means are correlated over the items
(Pearson r), and with the lengthening factor n = h_half / h_gold (h = the mean over items of
1/raters) the reliability of the item means is R = n·r / (1 + (n − 1)·r) (Spearman 1910; Brown
1910). :func:`split_reliability` does this for the whole panel or for a subsample of k raters per
item (``k``), which is how the resampled trace of :mod:`.projection` is drawn. The interval is a
percentile bootstrap over items (Efron & Tibshirani 1993): a resample is a vector of item counts
w, and its r comes from weighted sums Σw·(1, x, y, x², y², xy) over ``BOOT_TRIALS`` fixed splits,
one matrix product for every resample and trial (no copy of resampled items).

**Krippendorff's α** (interval metric; :func:`semrel.metrics.agreement.krippendorff_alpha_interval`)
is bootstrapped over items the same way: α = 1 − (n − 1)·Σ_u w_u·m_u·SS_u/(m_u − 1) / (n·SS) with
n = Σ w_u·m_u and SS = Σ w_u·Σx² − (Σ w_u·Σx)²/n.

**Item means**: x̄ ± t_(m−1, 1−α/2)·s/√m per item (s: the ddof-1 standard deviation of its m
ratings); an item rated once has no interval (NaN).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..agreement import krippendorff_alpha_interval
from ..errors import DataValidationError
from ..split_half.trialwise import masked_pearson

TRIALS = 200  # random splits behind a point estimate
BOOT_TRIALS = 10  # splits each bootstrap resample is scored on
CHUNK_CELLS = 1 << 22  # trials x items x raters per vectorised chunk
BATCH_CELLS = 1 << 22  # resamples x items per bootstrap batch


@dataclass(frozen=True)
class Ranged:
    """A figure with its percentile interval (``low``, ``high``) at ``confidence``."""

    value: float
    low: float
    high: float
    confidence: float


@dataclass(frozen=True)
class Split:
    """Split-half correlations of one panel size: ``r`` (trials,), ``factor`` = h_half / h_target,
    the items used, and the (items, 6 x BOOT_TRIALS) weighted-sum moments of the first trials."""

    r: np.ndarray
    factor: float
    n_items: int
    moments: np.ndarray


@dataclass(frozen=True)
class ItemMeans:
    """Each item's mean, raters and t-interval (NaN where rated once)."""

    mean: np.ndarray
    raters: np.ndarray
    low: np.ndarray
    high: np.ndarray


def spearman_brown(r, factor):
    """n·r / (1 + (n − 1)·r), elementwise: the reliability of ``factor`` times the raters of ``r``."""
    return factor * np.asarray(r) / (1.0 + (factor - 1.0) * np.asarray(r))


def split_reliability(values: np.ndarray, counts: np.ndarray, k: int | None, rng: np.random.Generator,
                      trials: int = TRIALS) -> Split:
    """Split-half r of item means over ``trials`` random splits: ``values`` (items, raters) NaN-padded,
    ``counts`` raters per item. ``k=None``: every item's raters split floor/ceil, factor to the whole
    panel; ``k``: a random subsample of max(k, 2) raters of each item with that many, split
    floor/ceil, factor to k raters (k = 1: the correlation of two single raters)."""
    size = None if k is None else max(k, 2)
    used = counts >= (2 if size is None else size)
    if used.sum() < 3:
        raise DataValidationError("<ratings>", None, "too few items for a split",
                                  f"{int(used.sum())} items have >= {size or 2} raters; need >= 3")
    x, m = values[used], counts[used]
    if size is None:
        a = m // 2
        factor = float(np.mean((1.0 / a + 1.0 / (m - a)) / 2) / np.mean(1.0 / counts[counts > 0]))
        width = x.shape[1]
    else:
        a = np.full(m.shape, size // 2)
        factor = (1.0 / (size // 2) + 1.0 / (size - size // 2)) / 2 * k
        width = size
    column = np.arange(x.shape[1])
    in_a = column[None, :] < a[:, None]
    end = m if size is None else np.full(m.shape, size)
    in_b = (column[None, :] >= a[:, None]) & (column[None, :] < end[:, None])
    r, kept = [], []
    chunk = max(1, CHUNK_CELLS // x.size)
    filled = np.where(np.isnan(x), 0.0, x)
    for start in range(0, trials, chunk):
        t = min(chunk, trials - start)
        keys = rng.random((t, *x.shape))
        keys[:, np.isnan(x)] = np.inf  # missing raters sort last
        order = np.argsort(keys, axis=2)[:, :, :width]
        drawn = np.take_along_axis(np.broadcast_to(filled, (t, *x.shape)), order, axis=2)
        half_a = (drawn * in_a[None, :, :width]).sum(axis=2) / a
        half_b = (drawn * in_b[None, :, :width]).sum(axis=2) / in_b[:, :width].sum(axis=1)
        r.append(masked_pearson(half_a, half_b, np.ones_like(half_a, dtype=bool)))
        if sum(len(k_[0]) for k_ in kept) < BOOT_TRIALS:
            kept.append((half_a, half_b))
    a_, b_ = (np.concatenate(part)[:BOOT_TRIALS] for part in zip(*kept, strict=True))
    moments = np.zeros((values.shape[0], 6 * len(a_)))
    xa, xb = a_ - a_.mean(axis=1, keepdims=True), b_ - b_.mean(axis=1, keepdims=True)
    moments[used] = np.concatenate([np.ones_like(xa), xa, xb, xa * xa, xb * xb, xa * xb]).T
    return Split(np.concatenate(r), factor, int(used.sum()), moments)


def resample_weights(n_items: int, n_resamples: int, rng: np.random.Generator):
    """Batches of (resamples, items) bootstrap counts (multinomial over items)."""
    per_batch = max(1, BATCH_CELLS // max(n_items, 1))
    for start in range(0, n_resamples, per_batch):
        q = min(per_batch, n_resamples - start)
        picks = rng.integers(0, n_items, size=(q, n_items)) + (np.arange(q) * n_items)[:, None]
        yield np.bincount(picks.ravel(), minlength=q * n_items).reshape(q, n_items).astype(np.float64)


def weighted_r(sums: np.ndarray) -> np.ndarray:
    """Mean over trials of Pearson r from weighted sums (..., 6, trials) of 1, x, y, x², y², xy."""
    n, sx, sy, sxx, syy, sxy = np.moveaxis(sums, -2, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (n * sxy - sx * sy) / np.sqrt((n * sxx - sx * sx) * (n * syy - sy * sy))
    return np.nanmean(r, axis=-1)


def alpha_moments(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(items, 4) per-item sums of α: pairable m, m·SS/(m − 1), Σx, Σx² (zeros below 2 raters)."""
    used = counts >= 2
    filled = np.where(np.isnan(values), 0.0, values)
    s1, s2 = filled.sum(axis=1), (filled * filled).sum(axis=1)
    m = np.where(used, counts, 0).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        within = np.where(used, m * (s2 - s1 * s1 / np.maximum(m, 1)) / (m - 1), 0.0)
    return np.column_stack([m, within, np.where(used, s1, 0.0), np.where(used, s2, 0.0)])


def alpha_from(sums: np.ndarray) -> np.ndarray:
    """Krippendorff's α (interval) of weighted sums (..., 4) from :func:`alpha_moments`."""
    n, within, s1, s2 = np.moveaxis(sums, -1, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return 1.0 - (n - 1) * within / (n * (s2 - s1 * s1 / n))


def krippendorff_alpha(item: np.ndarray, score: np.ndarray) -> float:
    """The point value of α over first ratings (``item`` codes, ``score``), as semrel.metrics.agreement."""
    return krippendorff_alpha_interval(item, score)


def item_means(values: np.ndarray, counts: np.ndarray, confidence: float = 0.95) -> ItemMeans:
    """Each item's mean with its t-interval (module docstring), vectorised over items."""
    filled = np.where(np.isnan(values), 0.0, values)
    m = counts.astype(np.float64)
    mean = filled.sum(axis=1) / m
    with np.errstate(invalid="ignore", divide="ignore"):
        s = np.sqrt(np.where(np.isnan(values), 0.0, (values - mean[:, None]) ** 2).sum(axis=1) / (m - 1))
        half = stats.t.ppf(0.5 + confidence / 2, np.where(m > 1, m - 1, np.nan)) * s / np.sqrt(m)
    return ItemMeans(mean, counts, mean - half, mean + half)


def ranged(point: float, samples: np.ndarray, confidence: float) -> Ranged:
    """``point`` with the percentile interval of the ``samples`` (infinite ones count: a bound may be inf)."""
    samples = samples[~np.isnan(samples)]
    level = (1 - confidence) / 2
    low, high = (np.quantile(samples, [level, 1 - level], method="inverted_cdf") if samples.size
                 else (np.nan, np.nan))
    return Ranged(float(point), float(low), float(high), confidence)
