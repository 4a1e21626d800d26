"""Per-pair significance of the context shift (paper 004 §5.1): free vs dep annotations.

For each pair, a two-sided Student t-test (pooled variance) of equal means between its
context-free annotations x (n₁) and context-dependent annotations y (n₂):

    s_p² = ((n₁−1)s_x² + (n₂−1)s_y²) / (n₁+n₂−2),   t = (x̄ − ȳ) / (s_p √(1/n₁ + 1/n₂)),
    p = 2·P(T_{n₁+n₂−2} > |t|)

(``scipy.stats.ttest_ind`` per pair, vectorised over ragged lists). Convention where s_p = 0:
equal means give t = 0, p = 1 (identical constant samples: no evidence of a shift); different
means give t = ±inf, p = 0. A pair belongs to ``test-sig`` when p < 1 − level (level 0.95).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

LEVEL = 0.95


@dataclass(frozen=True)
class ShiftTest:
    statistic: np.ndarray  # t per pair
    pvalue: np.ndarray  # two-sided p per pair
    df: np.ndarray  # n₁ + n₂ − 2 per pair


def _moments(ragged: Sequence[Sequence[float]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = np.fromiter((len(r) for r in ragged), dtype=np.int64, count=len(ragged))
    if (n < 2).any():
        raise ValueError(f"each pair needs >= 2 annotations per side; pair {int(np.argmax(n < 2))} "
                         f"has {int(n[n < 2][0])}")
    values = np.concatenate([np.asarray(r, dtype=float) for r in ragged])
    item = np.repeat(np.arange(len(n)), n)
    mean = np.bincount(item, values, minlength=len(n)) / n
    ss = np.bincount(item, (values - mean[item]) ** 2, minlength=len(n))
    return n, mean, ss


def context_shift_ttest(free: Sequence[Sequence[float]], dep: Sequence[Sequence[float]]) -> ShiftTest:
    """Two-sided pooled-variance t-test per pair (see module docstring)."""
    if len(free) != len(dep):
        raise ValueError(f"free and dep differ in length: {len(free)} vs {len(dep)}")
    n1, m1, ss1 = _moments(free)
    n2, m2, ss2 = _moments(dep)
    df = n1 + n2 - 2
    se = np.sqrt((ss1 + ss2) / df * (1.0 / n1 + 1.0 / n2))
    diff = m1 - m2
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > 0, diff / se, np.where(diff == 0, 0.0, np.copysign(np.inf, diff)))
    from scipy import stats

    return ShiftTest(statistic=t, pvalue=2 * stats.t.sf(np.abs(t), df), df=df)


def significant(test: ShiftTest, level: float = LEVEL) -> np.ndarray:
    """Mask of pairs whose means differ at ``level`` (p < 1 − level)."""
    return test.pvalue < 1.0 - level
