"""Pearson's r and Spearman's rho of two score lists: the one correlation helper of the metrics.

Spearman's rho is Pearson's r of average ranks (ties share the mean rank), as scipy.stats.spearmanr.
The metric math, the submission scorer and the trainers' scores all call :func:`correlate`.
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


def correlate(x, y) -> CorrelationResult:
    """r = cov(x, y) / (sd(x) sd(y)) and rho = r(rank(x), rank(y)) of equal-length finite arrays."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"correlate: need two 1-d arrays of one length, got shapes {x.shape} and {y.shape}")
    if x.size < 2:
        raise ValueError(f"correlate: need >= 2 pairs, got {x.size}")
    return CorrelationResult(float(stats.pearsonr(x, y).statistic), float(stats.spearmanr(x, y).statistic),
                             int(x.size))
