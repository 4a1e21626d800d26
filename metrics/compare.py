"""Two systems scored on the same items against the same references: is one correlation higher?

- **Williams' test** (Williams 1959, "Regression Analysis"; as recommended by Steiger 1980,
  Psychological Bulletin 87:245, eq. 7) for two dependent Pearson correlations sharing the
  references: with r₁ = r(predictions1, references), r₂ = r(predictions2, references),
  r₁₂ = r(predictions1, predictions2) and |R| = 1 − r₁² − r₂² − r₁₂² + 2·r₁·r₂·r₁₂,

      t = (r₁ − r₂) · √( (n − 1)(1 + r₁₂) / ( 2·|R|·(n − 1)/(n − 3) + r̄²·(1 − r₁₂)³ ) ),  r̄ = (r₁ + r₂)/2,

  Student's t with n − 3 degrees of freedom (two-sided p). Used for STS/MT metric comparison by
  Graham & Baldwin (2014), "Testing for Significance of Increased Correlation with Human Judgment".
- **Interval of the Pearson difference** (Zou 2007, Psychological Methods 12:399, eq. 13-15),
  from each correlation's Fisher-z interval (l₁, u₁), (l₂, u₂) and the correlation of the two
  estimates c = ((r₁₂ − r₁r₂/2)(1 − r₁² − r₂² − r₁₂²) + r₁₂³) / ((1 − r₁²)(1 − r₂²)):
  L = r₁ − r₂ − √((r₁ − l₁)² + (u₂ − r₂)² − 2c(r₁ − l₁)(u₂ − r₂)),
  U = r₁ − r₂ + √((u₁ − r₁)² + (r₂ − l₂)² − 2c(u₁ − r₁)(r₂ − l₂)).
- **Spearman difference, paired bootstrap**: ``scipy.stats.bootstrap`` resamples items (the
  triple of predictions1, predictions2, reference stays together) and recomputes ρ₁ − ρ₂ with the
  O(n) rank statistic of :mod:`.correlation_intervals`; the interval is the percentile interval
  by default, and the two-sided p-value is its inversion, the smallest α at which the (1 − α)
  percentile interval excludes 0 (Efron & Tibshirani 1993, ch. 15-16: the achieved significance
  level read off the bootstrap distribution): p = min(1, 2·(1 + min(#{Δ* ≤ 0}, #{Δ* ≥ 0})) / (1 + B)).
  So p < 0.05 where the 95 % interval excludes 0, up to the resampling's granularity; a BCa
  interval (``method="BCa"``) corrects bias and skew, which the p-value then does not follow.

Both systems must be scored on the same items in the same order: ``ids1``/``ids2`` (the item ids
each system was scored on) are checked position by position when given.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from .correlation import correlate
from .correlation_intervals import (
    MIN_BOOTSTRAP_ITEMS,
    Estimate,
    Interval,
    check_labels,
    check_options,
    check_scores,
    dense_ids,
    fisher_z_interval,
    rank_correlation,
    resampled_ranks,
    run_bootstrap,
)
from .errors import check_on_invalid

NAMES = ("predictions1", "predictions2", "references")


@dataclass(frozen=True)
class WilliamsResult:
    t: float
    df: int  # n − 3
    p_value: float  # two-sided


def williams_test(r1: float, r2: float, r12: float, n: int) -> WilliamsResult:
    """Williams' t for H0: r1 = r2, where r1, r2 share a variable and r12 correlates the other two.

    >>> w = williams_test(0.3, 0.4, 0.5, 100)  # depcor's example (Silver et al. 2006): t = -1.0767
    >>> round(w.t, 4), w.df, round(w.p_value, 4)
    (-1.0767, 97, 0.2843)
    """
    if n <= 3:
        raise ValueError(f"Williams' test needs n > 3 items (df = n − 3), got {n}")
    for name, r in (("r1", r1), ("r2", r2), ("r12", r12)):
        if not -1 <= r <= 1:
            raise ValueError(f"{name} = {r} is not a correlation in [-1, 1]")
    det = 1 - r1 ** 2 - r2 ** 2 - r12 ** 2 + 2 * r1 * r2 * r12
    denominator = 2 * det * (n - 1) / (n - 3) + ((r1 + r2) / 2) ** 2 * (1 - r12) ** 3
    if r1 == r2:
        t = 0.0
    elif denominator <= 0:
        raise ValueError(f"Williams' test is undefined for r1={r1}, r2={r2}, r12={r12} (singular correlation matrix)")
    else:
        t = (r1 - r2) * math.sqrt((n - 1) * (1 + r12) / denominator)
    return WilliamsResult(t, n - 3, float(2 * stats.t.sf(abs(t), n - 3)))


def zou_interval(r1: float, r2: float, r12: float, n: int, confidence: float = 0.95) -> Interval:
    """Zou's (2007) interval for r1 − r2, two correlations sharing a variable (r12: the other two).

    >>> i = zou_interval(0.396, 0.179, 0.088, 66)  # Zou's (2007) worked example: (-0.093, 0.517)
    >>> round(i.low, 3), round(i.high, 3)
    (-0.093, 0.517)
    """
    if r12 >= 1 - 1e-12:  # the two shared-variable correlations are of one variable: no difference at all
        return Interval(r1 - r2, r1 - r2, confidence, "zou-2007")
    (l1, u1), (l2, u2) = ((i.low, i.high) for i in (fisher_z_interval(r, n, confidence) for r in (r1, r2)))
    scale = (1 - r1 ** 2) * (1 - r2 ** 2)  # 0 where |r| = 1: that interval is a point, c is not needed
    c = ((r12 - r1 * r2 / 2) * (1 - r1 ** 2 - r2 ** 2 - r12 ** 2) + r12 ** 3) / scale if scale > 0 else 0.0
    low = r1 - r2 - math.sqrt(max(0.0, (r1 - l1) ** 2 + (u2 - r2) ** 2 - 2 * c * (r1 - l1) * (u2 - r2)))
    high = r1 - r2 + math.sqrt(max(0.0, (u1 - r1) ** 2 + (r2 - l2) ** 2 - 2 * c * (u1 - r1) * (r2 - l2)))
    return Interval(low, high, confidence, "zou-2007")


@dataclass(frozen=True)
class CorrelationComparison:
    n: int
    n_omitted: int  # items left out for a non-finite value (on_invalid="omit")
    pearson1: Estimate  # each with its Fisher-z interval
    pearson2: Estimate
    pearson_between: float  # r(predictions1, predictions2)
    williams: WilliamsResult  # H0: pearson1 = pearson2
    spearman1: float
    spearman2: float
    spearman_difference: Estimate  # rho1 − rho2 with its paired-bootstrap interval
    spearman_p_value: float  # two-sided: the inversion of the percentile interval
    pearson_difference_ci: Interval | None = None  # Zou (2007)

    def as_dict(self) -> dict:
        d = self.spearman_difference
        return {"pearson1": self.pearson1.value, "pearson2": self.pearson2.value,
                "pearson_difference": self.pearson1.value - self.pearson2.value,
                "pearson_difference_ci": [self.pearson_difference_ci.low, self.pearson_difference_ci.high],
                "pearson_between": self.pearson_between, "williams_t": self.williams.t,
                "williams_df": self.williams.df, "williams_p_value": self.williams.p_value,
                "spearman1": self.spearman1, "spearman2": self.spearman2, "spearman_difference": d.value,
                "spearman_difference_ci": [d.interval.low, d.interval.high],
                "spearman_difference_ci_method": d.interval.method, "spearman_p_value": self.spearman_p_value,
                "confidence": d.interval.confidence, "n": self.n, "n_omitted": self.n_omitted}


def check_same_items(ids1: Sequence | None, ids2: Sequence | None, n: int) -> None:
    """Both systems scored on the same items in the same order (ids1[i] == ids2[i]); lengths match n."""
    if ids1 is None and ids2 is None:
        return
    if ids1 is None or ids2 is None:
        raise ValueError("ids1 and ids2 go together: give the item ids of both systems or of neither")
    for name, ids in (("ids1", ids1), ("ids2", ids2)):
        if isinstance(ids, (str, bytes, dict)) or not hasattr(ids, "__len__"):
            raise ValueError(f"{name} must be a list with an item id per item, got {type(ids).__name__}")
    ids1, ids2 = list(ids1), list(ids2)
    for name, ids in (("ids1", ids1), ("ids2", ids2)):
        if len(ids) != n:
            raise ValueError(f"unequal lengths: {name} has {len(ids)}, predictions1 has {n}; one id per item")
        check_labels(name, ids, "an item id")
    if set(ids1) != set(ids2):
        only = sorted(map(str, set(ids1) ^ set(ids2)))
        raise ValueError(f"the two systems were scored on different items ({len(only)} ids in only one of ids1, ids2, "
                         f"e.g. {only[0]!r}); compare them on the same items")
    for i, (a, b) in enumerate(zip(ids1, ids2, strict=True)):
        if a != b:
            raise ValueError(f"ids1[{i}] = {a!r} but ids2[{i}] = {b!r}: the same items in a different order; "
                             "align predictions2 to predictions1's order")


def spearman_difference_statistic(distinct: tuple[int, int, int]):
    """rho(p1, ref) − rho(p2, ref) of resampled dense ids (..., m), vectorised for scipy.stats.bootstrap."""
    def statistic(i1, i2, iref, axis=-1):
        shape, m = i1.shape[:-1], i1.shape[-1]
        r1, r2, rref = (resampled_ranks(a.reshape(-1, m), g) for a, g in zip((i1, i2, iref), distinct, strict=True))
        return (rank_correlation(r1, rref) - rank_correlation(r2, rref)).reshape(shape)
    return statistic


def smallest_bootstrap_p(n_resamples: int) -> float:
    """The two-sided bootstrap p of :func:`compare_correlations` when no resample falls beyond
    zero: ``2 / (B + 1)`` (Davison & Hinkley 1997, the +1 that keeps a p-value from being 0)."""
    return 2 / (1 + n_resamples)


def compare_correlations(predictions1: Sequence[float], predictions2: Sequence[float], references: Sequence[float],
                         *, ids1: Sequence | None = None, ids2: Sequence | None = None, confidence: float = 0.95,
                         n_resamples: int = 1000, method: str = "percentile", seed: int | None = 0,
                         on_invalid: str = "raise") -> CorrelationComparison:
    """Williams' test of the Pearson difference and a paired bootstrap of the Spearman difference.

    >>> ref = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    >>> c = compare_correlations([1, 2, 3, 4, 5, 6, 7, 8, 10, 9], [2, 1, 4, 3, 6, 5, 8, 7, 10, 9], ref)
    >>> round(c.spearman1 - c.spearman2, 4), round(c.williams.t, 3), c.williams.df
    (0.0485, 2.63, 7)
    """
    check_on_invalid(on_invalid)
    check_options(confidence=confidence, n_resamples=n_resamples, seed=seed)
    arrays = _same_length(predictions1, predictions2, references)
    if on_invalid == "raise":
        check_scores(dict(zip(NAMES, arrays, strict=True)), min_items=0, constant=False)  # non-finite: an error
    check_same_items(ids1, ids2, arrays[0].size)
    keep = np.all([np.isfinite(a) for a in arrays], axis=0)
    p1, p2, ref = check_scores(dict(zip(NAMES, (a[keep] for a in arrays), strict=True)), min_items=MIN_BOOTSTRAP_ITEMS)
    n = p1.size
    c1, c2, c12 = correlate(p1, ref), correlate(p2, ref), correlate(p1, p2)
    pearson1 = Estimate(c1.pearson, fisher_z_interval(c1.pearson, n, confidence), n)
    pearson2 = Estimate(c2.pearson, fisher_z_interval(c2.pearson, n, confidence), n)
    williams = williams_test(c1.pearson, c2.pearson, c12.pearson, n)
    ids, distinct = zip(*(dense_ids(a) for a in (p1, p2, ref)), strict=True)
    interval, distribution = run_bootstrap(ids, spearman_difference_statistic(distinct), n_resamples=n_resamples,
                                           confidence=confidence, method=method, seed=seed,
                                           what="the Spearman difference")
    delta = c1.spearman - c2.spearman
    beyond = min(int((distribution <= 0).sum()), int((distribution >= 0).sum()))
    p_value = min(1.0, (1 + beyond) * smallest_bootstrap_p(n_resamples))
    return CorrelationComparison(n, int((~keep).sum()), pearson1, pearson2, c12.pearson, williams, c1.spearman,
                                 c2.spearman, Estimate(delta, interval, n), p_value,
                                 zou_interval(c1.pearson, c2.pearson, c12.pearson, n, confidence))


def _same_length(*values) -> list[np.ndarray]:
    """The three inputs as flat float arrays of one length (non-finite values kept for on_invalid="omit")."""
    arrays = []
    for name, v in zip(NAMES, values, strict=True):
        try:
            arrays.append(np.asarray(v, dtype=np.float64))
        except (TypeError, ValueError) as err:
            raise ValueError(f"{name}: not a list of numbers ({err})") from None
        if arrays[-1].ndim != 1:
            raise ValueError(f"{name}: a flat list of numbers, one per item, got shape {arrays[-1].shape}")
    if len({a.size for a in arrays}) > 1:
        sizes = ", ".join(f"{k} has {a.size}" for k, a in zip(NAMES, arrays, strict=True))
        raise ValueError(f"unequal lengths: {sizes}; every input needs one value per item")
    return arrays
