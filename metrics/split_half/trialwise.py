"""Correlations for many trials at once: arrays are (trials, items), one row per trial.

Only the entries where ``valid`` is True take part in a row's correlation. Spearman's rho is
Pearson's r of average ranks (ties get the mean of the ranks they span), as scipy.stats.spearmanr.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata


def masked_pearson(x: np.ndarray, y: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Pearson r = sum(dx dy) / sqrt(sum(dx^2) sum(dy^2)) per row over its valid entries.

    A row with fewer than two valid entries or with a constant side gives NaN.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        if valid.all():  # the common case, about twice as fast
            dx, dy = x - x.mean(axis=1, keepdims=True), y - y.mean(axis=1, keepdims=True)
        else:
            n = valid.sum(axis=1, keepdims=True)
            dx = np.where(valid, x - np.where(valid, x, 0.0).sum(axis=1, keepdims=True) / n, 0.0)
            dy = np.where(valid, y - np.where(valid, y, 0.0).sum(axis=1, keepdims=True) / n, 0.0)
        sxy, sxx, syy = (np.einsum("ij,ij->i", a, b) for a, b in ((dx, dy), (dx, dx), (dy, dy)))
        return sxy / np.sqrt(sxx * syy)


def fraction_codes(num_lo: int, num_hi: int, den_max: int) -> tuple[np.ndarray, int]:
    """Table ``codes[den, num - num_lo]`` = rank of the value num/den among all such fractions.

    Equal values (1/2, 2/4) share a code, so ranking integer fractions needs no sort per trial.
    Row 0 (den = 0) is unused. Returns the table and the number of distinct values.
    """
    num = np.arange(num_lo, num_hi + 1, dtype=np.float64)
    den = np.arange(1, den_max + 1, dtype=np.float64)
    _, codes = np.unique(num[None, :] / den[:, None], return_inverse=True)
    codes = codes.reshape(den_max, -1)
    return np.vstack([np.zeros((1, codes.shape[1]), dtype=codes.dtype), codes]), int(codes.max()) + 1


def ranks_from_codes(codes: np.ndarray, valid: np.ndarray, n_codes: int) -> np.ndarray:
    """Average ranks (1-based) of value codes within each row, among its valid entries only.

    rank = #(valid values below) + (#(valid values equal) + 1) / 2, counted with one bincount;
    invalid entries get an extra top code, so they do not move the ranks of the valid ones.
    """
    trials = codes.shape[0]
    offsets = (np.arange(trials) * (n_codes + 1))[:, None]
    flat = (codes if valid.all() else np.where(valid, codes, n_codes)) + offsets
    counts = np.bincount(flat.ravel(), minlength=trials * (n_codes + 1)).reshape(trials, -1)
    rank_of_code = np.cumsum(counts, axis=1) - (counts - 1) / 2.0
    return rank_of_code.ravel()[flat]


def ranks_by_sorting(values: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Average ranks within each row among its valid entries (for values that are not fractions)."""
    return rankdata(np.where(valid, values, np.inf), axis=1, method="average")
