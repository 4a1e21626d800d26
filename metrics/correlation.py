"""Pearson's r and Spearman's rho of two score lists: the one correlation helper of the metrics.

Spearman's rho is Pearson's r of average ranks (ties share the mean rank), as scipy.stats.spearmanr.
The metric math, the submission scorer and the trainers' scores all call :func:`correlate`.
Pearson's r does not change when a list is multiplied by a power of two (:func:`unit_scaled`, an
exact scaling), which keeps its sums of squares finite for values near 1e308.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class CorrelationResult:
    pearson: float
    spearman: float
    n: int


def unit_scaled(values) -> np.ndarray:
    """``values`` (float64) times the power of two that brings max|values| into [0.5, 1): exact, and
    the same correlations, ranks and ratios, without overflow in their sums of squares.

    >>> unit_scaled([1e308, -4e307, 0.0]).tolist()
    [0.5562684646268004, -0.22250738585072014, 0.0]
    """
    values = np.asarray(values, dtype=np.float64)
    return np.ldexp(values, -unit_exponent(values))


def unit_exponent(values) -> int:
    """e with 2**(e-1) <= max|values| < 2**e over the finite values (0 for none or all zero)."""
    values = np.asarray(values, dtype=np.float64)
    return int(np.frexp(np.max(np.abs(values[np.isfinite(values)]), initial=0.0))[1])


def correlate(x, y) -> CorrelationResult:
    """r = cov(x, y) / (sd(x) sd(y)) and rho = r(rank(x), rank(y)) of equal-length finite arrays."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"correlate: need two 1-d arrays of one length, got shapes {x.shape} and {y.shape}")
    if x.size < 2:
        raise ValueError(f"correlate: need >= 2 pairs, got {x.size}")
    x, y = unit_scaled(x), unit_scaled(y)
    return CorrelationResult(float(stats.pearsonr(x, y).statistic), float(stats.spearmanr(x, y).statistic),
                             int(x.size))
