"""Correlations with confidence intervals: Pearson (Fisher z), Spearman (seeded paired bootstrap),
Kendall (Fieller's z).

- **Pearson, Fisher z** (Fisher 1921): z = atanh(r) is about normal with sd 1/√(n − 3), so the
  interval is tanh(atanh(r) ± z_(1−α/2)/√(n − 3)); the same as
  ``scipy.stats.pearsonr(x, y).confidence_interval()``. Closed form, O(n): any size in well under 1 s.
- **Spearman, paired bootstrap** (Efron & Tibshirani 1993, ch. 14): ``scipy.stats.bootstrap`` with
  ``paired=True, vectorized=True`` resamples the n (prediction, reference) pairs with replacement
  and recomputes rho on each resample. The statistic never sorts: each value is replaced once by
  its dense id (np.unique), and a resample's average ranks come from a per-resample count of each
  id (bincount) and its cumulative sum: rank = (#smaller) + (#equal + 1)/2, so a resample costs O(n),
  not O(n log n). **BCa** (bias-corrected and accelerated, Efron 1987) where n ≤ ``BCA_MAX_N``,
  **percentile** above: BCa's acceleration comes from a jackknife of n leave-one-out samples of
  size n − 1, O(n²) work in scipy (5,000 items: 25 M ranks, 1.1 s CPU against 0.2 s for the
  percentile interval, benchmarks/results/speed.md; 100k items: 10¹⁰ ranks, out of reach), while at such
  sizes the bootstrap distribution of rho is near symmetric and BCa and percentile agree to about
  the third decimal.
- **Kendall's tau-b, Fieller's z** (Fieller, Hartley & Pearson 1957, Biometrika 44:470):
  atanh(tau) has sd ≈ √(0.437/(n − 4)); interval tanh(atanh(tau) ± z_(1−α/2)·√(0.437/(n − 4))).

Inputs are checked (:func:`check_scores`): equal lengths, finite numbers, not constant, and enough
items (Fisher z needs n > 3, Fieller n > 4; the bootstrap ``MIN_BOOTSTRAP_ITEMS``); a resample
whose rho is undefined (all its predictions or references equal, likely with few distinct values)
is an error naming the count, never a silently dropped resample.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from .correlation import unit_scaled

MIN_ITEMS = 5  # Fisher z: n − 3 > 0; Fieller's Kendall interval: n − 4 > 0
MIN_BOOTSTRAP_ITEMS = 8  # below, resamples with all-equal values (rho undefined) are common
BCA_MAX_N = 5000  # BCa's jackknife is O(n²): above this many items the percentile interval is used
BATCH_VALUES = 4_000_000  # resampled values per vectorised batch (memory: a few 32 MB arrays)


@dataclass(frozen=True)
class Interval:
    low: float
    high: float
    confidence: float  # e.g. 0.95
    method: str  # "fisher-z", "fieller-z", "bootstrap-bca", "bootstrap-percentile"


@dataclass(frozen=True)
class Estimate:
    """A coefficient (or a difference of coefficients) with its confidence interval."""
    value: float
    interval: Interval
    n: int


def check_scores(named: dict[str, Sequence[float]], *, min_items: int = MIN_ITEMS,
                 constant: bool = True, what: str = "a correlation interval") -> list[np.ndarray]:
    """Float arrays of equal length, finite, >= ``min_items`` and (``constant=True``) not constant.

    ``named`` maps argument names to values; an error names the argument, the item and the rule.
    """
    arrays = []
    for name, values in named.items():
        try:
            array = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise ValueError(f"{name}: not a list of numbers ({err})") from None
        if array.ndim != 1:
            raise ValueError(f"{name}: a flat list of numbers, one per item, got shape {array.shape}")
        bad = np.flatnonzero(~np.isfinite(array))
        if bad.size:
            raise ValueError(f"{name}[{bad[0]}] is {array[bad[0]]}; {name} must be finite numbers "
                             f"({bad.size} non-finite)")
        arrays.append(array)
    lengths = {name: a.size for name, a in zip(named, arrays, strict=True)}
    if len(set(lengths.values())) > 1:
        raise ValueError("unequal lengths: " + ", ".join(f"{k} has {v}" for k, v in lengths.items())
                         + "; every input needs one value per item")
    n = arrays[0].size
    if n < min_items:
        raise ValueError(f"{n} items; {what} needs >= {min_items} items")
    if constant:
        for name, array in zip(named, arrays, strict=True):
            if np.all(array == array[0]):
                raise ValueError(f"{name} are constant (all {array[0]:g}): a correlation is undefined")
    return arrays


def _label_kind(label) -> str:
    """The kind of a label: bool, int, float, str (numpy's numbers and strings as Python's), or its type."""
    for kind, types in (("bool", (bool, np.bool_)), ("int", (int, np.integer)), ("float", (float, np.floating)),
                        ("str", (str,))):
        if isinstance(label, types):
            return kind
    return type(label).__name__


def check_labels(name: str, labels: list, what: str) -> None:
    """Every label hashable and of one kind (``1``, ``"1"``, ``1.0`` and ``True`` are equal as keys or
    as text: mixed, they would merge); a ValueError naming the rows otherwise. None and NaN (missing)
    are left to the caller."""
    types = set(map(type, labels))
    if len(types) == 1 and types <= {str, int, float, bool}:  # the common case, without a look at each
        return
    first = None
    for i, label in enumerate(labels):
        try:
            hash(label)
        except TypeError:
            raise ValueError(f"{name}[{i}] is {label!r} ({type(label).__name__}); {what} is a str or a number "
                             "(hashable)") from None
        if label is None or (isinstance(label, float) and math.isnan(label)):
            continue
        if first is None:
            first = i
        elif _label_kind(label) != _label_kind(labels[first]):
            raise ValueError(f"{name}[{i}] is {label!r} ({_label_kind(label)}) but {name}[{first}] is "
                             f"{labels[first]!r} ({_label_kind(labels[first])}): use one type for {name}")


def check_options(*, confidence=0.95, n_resamples=1000, seed=0) -> None:
    """confidence in (0, 1); n_resamples an int >= 100; seed None or an int >= 0 (bools refused)."""
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 < confidence < 1:
        raise ValueError(f"confidence must be a number in (0, 1), e.g. 0.95, got {confidence!r}")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 100:
        raise ValueError(f"n_resamples must be an int >= 100 (a {confidence:.0%} bootstrap interval needs them), "
                         f"got {n_resamples!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise ValueError(f"seed must be None or an int >= 0, got {seed!r}")


def fisher_z_interval(r: float, n: int, confidence: float = 0.95, sd: float = 1.0,
                      method: str = "fisher-z") -> Interval:
    """tanh(atanh(r) ± z_(1−α/2)·sd/√(n − 3)); ``sd``/``method`` serve Fieller's Kendall variant."""
    if math.isnan(r):
        raise ValueError(f"the coefficient is undefined (nan) for these {n} items: no interval")
    half = stats.norm.ppf(0.5 + confidence / 2) * sd / math.sqrt(n - 3)
    z = math.atanh(r) if abs(r) < 1 else math.copysign(math.inf, r)  # |r| = 1: the interval is [r, r]
    return Interval(math.tanh(z - half), math.tanh(z + half), confidence, method)


def pearson_interval(x, y, confidence: float = 0.95, names=("predictions", "references")) -> Estimate:
    """Pearson's r with its Fisher-z interval.

    >>> e = pearson_interval([1, 2, 3, 4, 5, 6], [1, 3, 2, 5, 4, 6])
    >>> round(e.value, 4), round(e.interval.low, 4), round(e.interval.high, 4)
    (0.8857, 0.2637, 0.9875)
    """
    check_options(confidence=confidence)
    x, y = check_scores(dict(zip(names, (x, y), strict=True)))
    r = float(stats.pearsonr(unit_scaled(x), unit_scaled(y)).statistic)
    return Estimate(r, fisher_z_interval(r, x.size, confidence), x.size)


def kendall_interval(x, y, confidence: float = 0.95, names=("predictions", "references")) -> Estimate:
    """Kendall's tau-b with Fieller's interval (sd of atanh(tau) ≈ √(0.437/(n − 4)))."""
    check_options(confidence=confidence)
    x, y = check_scores(dict(zip(names, (x, y), strict=True)))
    tau = float(stats.kendalltau(x, y).statistic)
    sd = math.sqrt(0.437 * (x.size - 3) / (x.size - 4))  # so that sd/√(n − 3) = √(0.437/(n − 4))
    return Estimate(tau, fisher_z_interval(tau, x.size, confidence, sd, "fieller-z"), x.size)


def dense_ids(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Each value's index among the sorted distinct values, and the number of distinct values."""
    unique, ids = np.unique(values, return_inverse=True)
    return ids.astype(np.intp), int(unique.size)


def resampled_ranks(ids: np.ndarray, distinct: int) -> np.ndarray:
    """Centred doubled average ranks, 2·rank − (m + 1), of each row of m dense ids, in O(m) (no sort).

    rank of id v in a row = (#ids < v) + (#ids == v + 1)/2 = cumsum(count)[v] − (count[v] − 1)/2, so
    2·rank − (m + 1) = 2·cumsum(count)[v] − count[v] − m: integers, which keep rho exact (below).
    """
    rows, m = ids.shape
    flat = (ids + (np.arange(rows, dtype=ids.dtype) * distinct)[:, None]).ravel()  # row r's ids, + r·distinct
    counts = np.bincount(flat, minlength=rows * distinct).reshape(rows, distinct)
    centred = np.cumsum(counts, axis=1)
    centred *= 2
    centred -= counts
    centred -= m
    return centred.ravel().take(flat).reshape(rows, m)  # one flat gather: faster than take_along_axis


def rank_correlation(ranks_a: np.ndarray, ranks_b: np.ndarray) -> np.ndarray:
    """Row-wise Pearson of centred ranks: Spearman's rho per row. |centred| <= m, so the sums of
    products are exact in int64 while m³ < 2⁶³ (m <= 2,000,000); beyond, float64."""
    if ranks_a.shape[-1] > 2_000_000:
        ranks_a, ranks_b = ranks_a.astype(np.float64), ranks_b.astype(np.float64)
    ab, aa, bb = (np.einsum("ij,ij->i", u, v).astype(np.float64)
                  for u, v in ((ranks_a, ranks_b), (ranks_a, ranks_a), (ranks_b, ranks_b)))
    with np.errstate(divide="ignore", invalid="ignore"):
        return ab / np.sqrt(aa * bb)


def spearman_statistic(distinct_x: int, distinct_y: int):
    """The vectorised statistic for ``scipy.stats.bootstrap``: rho of resampled dense ids (..., m)."""
    def statistic(ix, iy, axis=-1):
        shape = ix.shape[:-1]
        ix, iy = ix.reshape(-1, ix.shape[-1]), iy.reshape(-1, iy.shape[-1])
        rho = rank_correlation(resampled_ranks(ix, distinct_x), resampled_ranks(iy, distinct_y))
        return rho.reshape(shape)
    return statistic


def bootstrap_method(n: int, method: str = "auto") -> str:
    """"BCa" for n <= BCA_MAX_N, else "percentile" (see module docstring); or the method asked for."""
    if method == "auto":
        return "BCa" if n <= BCA_MAX_N else "percentile"
    if method not in ("BCa", "percentile", "basic"):
        raise ValueError(f"method must be 'auto', 'BCa', 'percentile' or 'basic', got {method!r}")
    return method


def run_bootstrap(data: tuple[np.ndarray, ...], statistic, *, n_resamples: int, confidence: float,
                  method: str, seed: int | None, what: str) -> tuple[Interval, np.ndarray]:
    """``scipy.stats.bootstrap`` (paired, vectorised, batched): the interval and the bootstrap distribution.

    A resample whose statistic is undefined is an error; a distribution of one value (nothing varies)
    is the interval [value, value] (BCa is undefined there)."""
    check_options(confidence=confidence, n_resamples=n_resamples, seed=seed)
    n = data[0].size
    method = bootstrap_method(n, method)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = stats.bootstrap(data, statistic, n_resamples=n_resamples, paired=True, vectorized=True,
                                 batch=max(1, BATCH_VALUES // n), confidence_level=confidence, method=method,
                                 rng=np.random.default_rng(seed))
    distribution = result.bootstrap_distribution
    undefined = int(np.isnan(distribution).sum())
    if undefined:
        raise ValueError(f"{what} is undefined in {undefined} of {n_resamples} bootstrap resamples (all their "
                         f"predictions or references equal); {n} items with few distinct values are too few "
                         "for a bootstrap interval")
    label = {"BCa": "bootstrap-bca", "percentile": "bootstrap-percentile", "basic": "bootstrap-basic"}[method]
    if np.all(distribution == distribution[0]):  # every resample gives one value (two identical systems)
        return Interval(float(distribution[0]), float(distribution[0]), confidence, label), distribution
    for w in caught:  # scipy's warnings, passed on unless the distribution is degenerate (handled above)
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    low, high = result.confidence_interval
    return Interval(float(low), float(high), confidence, label), distribution


def spearman_interval(x, y, confidence: float = 0.95, *, n_resamples: int = 1000, method: str = "auto",
                      seed: int | None = 0, names=("predictions", "references")) -> Estimate:
    """Spearman's rho with a seeded paired-bootstrap interval (BCa up to BCA_MAX_N items, else percentile).

    >>> e = spearman_interval(range(10), [0, 2, 1, 3, 5, 4, 6, 8, 7, 9])
    >>> round(e.value, 4), e.interval.method, e.interval.low < e.value < e.interval.high
    (0.9636, 'bootstrap-bca', True)
    """
    x, y = check_scores(dict(zip(names, (x, y), strict=True)), min_items=MIN_BOOTSTRAP_ITEMS)
    (ix, gx), (iy, gy) = dense_ids(x), dense_ids(y)
    interval, _ = run_bootstrap((ix, iy), spearman_statistic(gx, gy), n_resamples=n_resamples,
                                confidence=confidence, method=method, seed=seed, what="Spearman's rho")
    return Estimate(float(stats.spearmanr(x, y).statistic), interval, x.size)


@dataclass(frozen=True)
class CorrelationIntervals:
    pearson: Estimate
    spearman: Estimate
    kendall: Estimate
    n: int


def correlation_intervals(x, y, confidence: float = 0.95, *, n_resamples: int = 1000, method: str = "auto",
                          seed: int | None = 0, names=("predictions", "references")) -> CorrelationIntervals:
    """Pearson (Fisher z), Spearman (paired bootstrap) and Kendall (Fieller) with their intervals."""
    pearson = pearson_interval(x, y, confidence, names)
    spearman = spearman_interval(x, y, confidence, n_resamples=n_resamples, method=method, seed=seed, names=names)
    return CorrelationIntervals(pearson, spearman, kendall_interval(x, y, confidence, names), pearson.n)


def cv_mean_interval(fold_scores: Sequence[float], confidence: float = 0.95, *,
                     test_to_train: float | None = None) -> Interval:
    """Interval for the mean of k-fold CV scores: the corrected resampled t of Nadeau & Bengio
    (2003, Machine Learning 52:239; Bouckaert & Frank 2004 for k-fold): folds share training
    data, so the plain t-interval is too narrow; the variance of the mean is
    (1/k + n_test/n_train)·s² instead of s²/k, with n_test/n_train = 1/(k − 1) for k-fold CV:

        mean ± t_(1−α/2, k−1) · s · √(1/k + n_test/n_train)

    >>> i = cv_mean_interval([0.80, 0.82, 0.81, 0.83, 0.79])
    >>> round(i.low, 4), round(i.high, 4), i.method
    (0.7806, 0.8394, 'corrected-t')
    """
    scores = check_scores({"fold_scores": fold_scores}, min_items=2, constant=False,
                          what="an interval for the mean over folds")[0]
    k = scores.size
    ratio = 1 / (k - 1) if test_to_train is None else test_to_train
    half = float(stats.t.ppf(0.5 + confidence / 2, k - 1) * scores.std(ddof=1) * math.sqrt(1 / k + ratio))
    mean = float(scores.mean())
    return Interval(mean - half, mean + half, confidence, "corrected-t")
