"""Lower bound on the MSE any model can reach against averaged gold scores (paper 004 §6).

An item with n annotations x₁…xₙ (sample mean x̄, sample variance s², ddof 1) has gold x̄; an
oracle that knows the true mean μ still scores E[(μ − x̄)²] = Var(x̄). Two estimates of it:

- ``model="t"`` (the paper's): (x̄ − μ)/(s/√n) ~ t with n−1 degrees of freedom, whose variance
  is (n−1)/(n−3); so Var(x̄ − μ) ≈ (s²/n)·(n−1)/(n−3). Needs n ≥ 4.
- ``model="normal"``: Var(x̄) = σ²/n, estimated without bias by s²/n. Needs n ≥ 2.

The bound is the mean of the per-item variance over the items; its square root is the matching
RMSE. With predictions f, ``mse`` = mean((f − x̄)²) over the same items and ``excess`` = mse − bound.
Sums and squares are taken in units of a power of two near the largest value (an exact scaling),
so values near 1e308 do not overflow; a variance or MSE beyond the float64 range is an error.
Sido et al. (2021), "Czech News Dataset for Semantic Textual Similarity", arXiv:2108.08708.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .errors import check_on_invalid
from .text_numbers import first_non_number, float_array

MIN_ANNOTATIONS = {"t": 4, "normal": 2}


@dataclass(frozen=True)
class MSELowerBoundResult:
    bound: float  # mean over items of the estimated Var(mean of the item's annotations)
    rmse_bound: float  # sqrt(bound)
    model: str  # "t" or "normal"
    n_items: int  # items used
    n_skipped: int  # items skipped for too few annotations (on_invalid="omit")
    mse: float | None = None  # mean((prediction − item mean)²) over the items used
    excess: float | None = None  # mse − bound


def _ragged(annotations: Sequence[Sequence[float]]) -> tuple[np.ndarray, np.ndarray]:
    """(flat values, per-item counts) of a ragged list; an item that is no list and non-finite
    values raise naming the item."""
    try:
        counts = np.fromiter(map(len, annotations), dtype=np.int64, count=len(annotations))
    except TypeError:
        i = next(i for i, a in enumerate(annotations) if not hasattr(a, "__len__"))
        raise ValueError(f"annotations[{i}] is {annotations[i]!r}, not a list: every item needs the list of "
                         "its annotations (numbers)") from None
    flat = list(itertools.chain.from_iterable(annotations))
    try:
        values = float_array(flat, "annotations")
    except ValueError:  # name the item, not the position in the flat list
        i = first_non_number(flat)
        item = int(np.searchsorted(np.cumsum(counts), i, side="right"))
        raise ValueError(f"annotations of item {item} hold {flat[i]!r} ({type(flat[i]).__name__}); "
                         "annotations are numbers (int or float)") from None
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        item = int(np.searchsorted(np.cumsum(counts), bad[0], side="right"))
        raise ValueError(f"annotations of item {item} hold a non-finite value ({values[bad[0]]})")
    return values, counts


def _exponents(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Per item (``counts`` consecutive values each), e with max|values| < 2**e: the item's values
    times 2**-e (an exact scaling) have sums and squares that cannot overflow."""
    peak = np.zeros(len(counts))
    filled = counts > 0
    if values.size:
        peak[filled] = np.maximum.reduceat(np.abs(values), (np.cumsum(counts) - counts)[filled])
    return np.frexp(peak)[1]


def _mean(values: np.ndarray) -> float:
    """mean(values) summed in units of 2**e near the largest value (no overflow near 1e308)."""
    e = int(np.frexp(np.max(np.abs(values), initial=0.0))[1])
    return float(np.ldexp(np.ldexp(values, -e).mean(), e))


def item_means_and_variances(annotations: Sequence[Sequence[float]], model: str = "t",
                             on_invalid: str = "raise") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-item mean, estimated Var(mean) under ``model`` and the mask of items used."""
    if not isinstance(model, str) or model not in MIN_ANNOTATIONS:
        raise ValueError(f"model must be 't' or 'normal', got {model!r}")
    check_on_invalid(on_invalid)
    values, n = _ragged(annotations)
    used = n >= MIN_ANNOTATIONS[model]
    if on_invalid == "raise" and not used.all():
        item = int(np.argmin(used))
        raise ValueError(f"item {item} has {n[item]} annotations; the {model} model needs >= "
                         f"{MIN_ANNOTATIONS[model]} (on_invalid='omit' drops and counts such items)")
    item_of = np.repeat(np.arange(len(n)), n)
    e = _exponents(values, n)
    scaled = np.ldexp(values, -e[item_of])
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.bincount(item_of, scaled, minlength=len(n)) / n
        s2 = np.bincount(item_of, (scaled - mean[item_of]) ** 2, minlength=len(n)) / (n - 1)
        variance = s2 / n * ((n - 1) / (n - 3) if model == "t" else 1.0)
    with np.errstate(over="ignore"):
        mean, variance = np.ldexp(mean, e), np.ldexp(variance, 2 * e)
    beyond = used & np.isinf(variance)
    if beyond.any():
        item = int(np.argmax(beyond))
        raise ValueError(f"the variance of item {item}'s annotations is beyond the float64 range (values up to "
                         f"{np.max(np.abs(values[item_of == item])):g}): rescale the annotations")
    return mean, np.where(used, variance, np.nan), used


def mse_lower_bound(annotations: Sequence[Sequence[float]], predictions: Sequence[float] | None = None,
                    *, model: str = "t", on_invalid: str = "raise") -> MSELowerBoundResult:
    """The MSE lower bound of averaged gold (see module docstring), and a model's excess over it.

    >>> mse_lower_bound([[1, 2, 2, 3], [0, 0, 1, 1]]).bound  # (2/3/4·3 + 1/3/4·3) / 2
    0.375
    """
    mean, variance, used = item_means_and_variances(annotations, model, on_invalid)
    if not used.any():
        raise ValueError(f"no item has >= {MIN_ANNOTATIONS[model]} annotations")
    bound = _mean(variance[used])
    mse = excess = None
    if predictions is not None and not all(p is None for p in predictions):
        if any(p is None for p in predictions):
            raise ValueError(f"prediction {[p is None for p in predictions].index(True)} is None: give a "
                             "prediction for every item, or none (the bound alone)")
        pred = float_array(predictions, "predictions")
        if pred.shape != mean.shape:
            raise ValueError(f"{pred.size} predictions for {mean.size} items")
        if not np.isfinite(pred).all():
            raise ValueError(f"prediction {int(np.argmin(np.isfinite(pred)))} is not finite")
        pairs = np.stack([pred[used], mean[used]], axis=1).ravel()  # each item's prediction and mean
        e = _exponents(pairs, np.full(int(used.sum()), 2))
        with np.errstate(over="ignore"):
            mse = _mean(np.ldexp((np.ldexp(pred[used], -e) - np.ldexp(mean[used], -e)) ** 2, 2 * e))
        if math.isinf(mse):
            raise ValueError("the MSE of the predictions is beyond the float64 range: rescale predictions and "
                             "annotations")
        excess = mse - bound
    return MSELowerBoundResult(bound=bound, rmse_bound=math.sqrt(bound), model=model,
                               n_items=int(used.sum()), n_skipped=int((~used).sum()),
                               mse=mse, excess=excess)
