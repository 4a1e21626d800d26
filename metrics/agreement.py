"""Annotator agreement over a long table of ratings (item, annotator, rating).

Every (item, annotator) pair's first rating is its rating; later repeats of the pair are
re-tests and feed only the intra-annotator agreement. Items need >= 2 annotators; an item or
annotator that is None, NaN or a blank string is an error naming the row (two blank annotators
would be one annotator's re-test).

- **inter** (Sido et al. 2021, Table 1): each rating against its item's mean, pooled over the
  dataset (not averaged per item): Pearson, Spearman, RMSE, MSE. ``inter_loo`` compares each
  rating with the mean of the item's *other* ratings, (Σ − x)/(m − 1), which the rating itself
  does not inflate.
- **intra**: each repeat against the same annotator's first rating of the item (the paper re-asks
  5 pairs per annotator after some time).
- **Krippendorff's alpha, interval metric** (Krippendorff 2011, "Computing Krippendorff's
  Alpha-Reliability"): α = 1 − D_o/D_e with δ²(c, k) = (c − k)². Over the pairable values
  (items with m_u ≥ 2, n = Σ m_u) and SS_u = Σ_{i∈u}(x_i − x̄_u)², SS = Σ_i (x_i − x̄)²:
  Σ_{i≠j∈u}(x_i − x_j)² = 2·m_u·SS_u, hence D_o = (2/n)·Σ_u m_u·SS_u/(m_u − 1) and
  D_e = 2·SS/(n − 1), so α = 1 − (n − 1)·Σ_u [m_u·SS_u/(m_u − 1)] / (n·SS).
  Memory and time are linear in the ratings (no values × values coincidence matrix).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .correlation import correlate, unit_exponent, unit_scaled
from .errors import check_on_invalid
from .text_numbers import float_array


@dataclass(frozen=True)
class AgreementResult:
    pearson: float
    spearman: float
    rmse: float
    mse: float
    n_ratings: int  # ratings compared


@dataclass(frozen=True)
class AnnotatorAgreementResult:
    inter: AgreementResult  # each rating vs its item's mean, pooled
    inter_loo: AgreementResult  # each rating vs the mean of the item's other ratings
    intra: AgreementResult | None  # repeats vs the first rating; None without repeated ratings
    alpha: float  # Krippendorff's alpha, interval metric
    n_items: int  # items used
    n_items_skipped: int  # items with < 2 annotators (on_invalid="omit")
    n_annotators: int
    n_ratings: int  # first ratings of (item, annotator) pairs in the items used
    n_repeats: int  # repeated (item, annotator) ratings


def compare(ratings: np.ndarray, reference: np.ndarray) -> AgreementResult:
    """Pearson, Spearman, RMSE and MSE of ``ratings`` against ``reference`` (pooled)."""
    ratings, reference = np.asarray(ratings, dtype=float), np.asarray(reference, dtype=float)
    if ratings.size < 2:
        raise ValueError(f"agreement needs >= 2 ratings, got {ratings.size}")
    e = max(unit_exponent(ratings), unit_exponent(reference))  # exact scaling: no overflow near 1e308
    with np.errstate(over="ignore"):
        mse = float(np.ldexp(np.mean((np.ldexp(ratings, -e) - np.ldexp(reference, -e)) ** 2), 2 * e))
    if np.isinf(mse):
        raise ValueError("the MSE of the ratings is beyond the float64 range: rescale the ratings")
    c = correlate(ratings, reference)
    return AgreementResult(pearson=c.pearson, spearman=c.spearman, rmse=float(np.sqrt(mse)), mse=mse,
                           n_ratings=int(ratings.size))


def _codes(values: Sequence, name: str, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Codes 0..L-1 of the labels in sorted order (pandas.factorize: linear, no object sort per row)."""
    if len(values) != size:
        raise ValueError(f"{name} has {len(values)} values; expected {size}, one per rating")
    if isinstance(values, pd.Categorical):  # already coded (evaluate's Arrow columns)
        codes, labels = values.codes.astype(np.int64), values.categories
    else:
        # a list goes in as an object array of references: np.asarray would copy every string
        column = values if isinstance(values, np.ndarray) else pd.Series(values, dtype=object)
        codes, labels = pd.factorize(column, sort=True)
    empty = codes < 0  # None, NaN
    blank = [code for code, label in enumerate(labels) if isinstance(label, str) and not label.strip()]
    if blank:
        empty |= np.isin(codes, blank)
    if empty.any():
        row = int(np.argmax(empty))
        raise ValueError(f"{name}[{row}] is empty ({values[row]!r}); every rating needs an item and an annotator")
    return np.asarray(labels), codes


def _first_ratings(items, annotators, ratings):
    """Codes, ratings, the mask of first ratings, and each rating's first-rating row of its pair.

    Pairs are found by sorting the (item, annotator) keys, so memory stays linear in the ratings
    (never a table of items x annotators)."""
    x = float_array(ratings, "ratings")
    if x.ndim != 1:
        raise ValueError(f"ratings must be one-dimensional, got shape {x.shape}")
    if not np.isfinite(x).all():
        row = int(np.argmin(np.isfinite(x)))
        raise ValueError(f"rating {row} is not finite ({x[row]})")
    item_labels, item = _codes(items, "items", x.size)
    annotator_labels, annotator = _codes(annotators, "annotators", x.size)
    key = item * len(annotator_labels) + annotator
    _, first_row, pair = np.unique(key, return_index=True, return_inverse=True)  # first occurrences
    first_of = first_row[pair]
    first = first_of == np.arange(x.size)
    return item_labels, item, annotator_labels, annotator, x, first, first_of


def intra_annotator_agreement(items: Sequence, annotators: Sequence, ratings: Sequence[float]) -> AgreementResult:
    """Each repeated (item, annotator) rating against that pair's first rating."""
    *_, x, first, first_of = _first_ratings(items, annotators, ratings)
    repeats = ~first
    if repeats.sum() < 2:
        raise ValueError(f"intra-annotator agreement needs >= 2 repeated (item, annotator) "
                         f"ratings, got {int(repeats.sum())}")
    return compare(x[repeats], x[first_of[repeats]])


def _item_sums(item: np.ndarray, x: np.ndarray, n_items: int) -> tuple[np.ndarray, np.ndarray]:
    return np.bincount(item, minlength=n_items), np.bincount(item, x, minlength=n_items)


def inter_annotator_agreement(item: np.ndarray, x: np.ndarray, leave_one_out: bool = False) -> AgreementResult:
    """Ratings ``x`` (one per item and annotator) against their item's (leave-one-out) mean."""
    e = unit_exponent(x)  # sums in units of 2**e (exact): no overflow near 1e308
    m, total = _item_sums(item, np.ldexp(x, -e), int(item.max()) + 1)
    if (m[item] < 2).any():
        raise ValueError("every item needs >= 2 ratings")
    scaled = (total[item] - np.ldexp(x, -e)) / (m[item] - 1) if leave_one_out else total[item] / m[item]
    return compare(x, np.ldexp(scaled, e))


def krippendorff_alpha_interval(item: np.ndarray, x: np.ndarray) -> float:
    """Krippendorff's alpha with the interval metric over pairable values (module docstring)."""
    x = unit_scaled(x)  # alpha is a ratio: the same for x times a power of two, without overflow
    m, total = _item_sums(item, x, int(item.max()) + 1)
    pairable = m[item] >= 2
    item, x = item[pairable], x[pairable]
    n = x.size
    if n < 2:
        raise ValueError("Krippendorff's alpha needs an item with >= 2 ratings")
    ss_item = np.bincount(item, (x - total[item] / m[item]) ** 2, minlength=m.size)
    ss_total = float(np.sum((x - x.mean()) ** 2))
    if ss_total == 0:
        raise ValueError("Krippendorff's alpha is undefined: all ratings are equal")
    used = m >= 2
    within = float(np.sum(m[used] * ss_item[used] / (m[used] - 1)))
    return 1.0 - (n - 1) * within / (n * ss_total)


def annotator_agreement(items: Sequence, annotators: Sequence, ratings: Sequence[float], *,
                        on_invalid: str = "raise") -> AnnotatorAgreementResult:
    """Inter (pooled, and leave-one-out), intra and Krippendorff's alpha of a long rating table.

    ``on_invalid="omit"`` drops items rated by fewer than 2 annotators (counted in
    ``n_items_skipped``) instead of raising; it also turns a single repeated rating (too few for
    intra agreement) into ``intra=None``.
    """
    check_on_invalid(on_invalid)
    item_labels, item, annotator_labels, annotator, x, first, _ = _first_ratings(items, annotators, ratings)
    m = np.bincount(item[first], minlength=len(item_labels))
    short = m < 2
    if short.any() and on_invalid == "raise":
        label = item_labels[int(np.argmax(short))]
        label = label.item() if isinstance(label, np.generic) else label
        raise ValueError(f"item {label!r} has {m[short][0]} annotator(s); agreement needs >= 2 "
                         "(on_invalid='omit' drops and counts such items)")
    keep = first & ~short[item]
    if not keep.any():
        raise ValueError("no item has >= 2 annotators")
    kept_items, item_kept = np.unique(item[keep], return_inverse=True)
    alpha = krippendorff_alpha_interval(item_kept, x[keep])  # first: raises on constant ratings
    n_repeats = int((~first).sum())
    intra = None
    if n_repeats >= 2 or (n_repeats == 1 and on_invalid == "raise"):
        intra = intra_annotator_agreement(item, annotator, x)
    return AnnotatorAgreementResult(
        inter=inter_annotator_agreement(item_kept, x[keep]),
        inter_loo=inter_annotator_agreement(item_kept, x[keep], leave_one_out=True),
        intra=intra,
        alpha=alpha,
        n_items=len(kept_items), n_items_skipped=int(short.sum()),
        n_annotators=len(np.unique(annotator[keep])), n_ratings=int(keep.sum()),
        n_repeats=n_repeats,
    )
