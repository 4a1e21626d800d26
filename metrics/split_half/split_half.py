"""Split-half reliability (SHR) of Best-Worst Scaling annotations and of rating-scale annotations.

Per trial, the annotations of each group (BWS: every distinct tuple, identity = its set of items;
ratings: every item) are shuffled and split into two halves of floor(n/2) and ceil(n/2), the odd
one going to a random half. Each half scores every item (BWS: counting, (#best - #worst) /
#appearances; ratings: mean rating), and the two halves' scores are correlated over the items
scored in both: Spearman's rho (average ranks for ties) and Pearson's r. Reported: mean and
standard deviation (ddof 0, as the NRC script) over ``trials``, optionally the Spearman-Brown
corrected 2r / (1 + r) (mean over trials), and how many items each trial could correlate.

References: Kiritchenko & Mohammad (2016, 2017), script ``SHR-BWS.pl``; STR-2021 (Abdalla et al.
2023, section 4, 1,000 trials, SHR 0.84); Cronbach (1951); Spearman (1910), Brown (1910).

An item that lands in only one half of a trial (its tuples were all annotated once, say) cannot
be compared: ``missing="omit"`` (default) leaves it out of that trial and reports the count in
``n_items_both``; ``missing="zero"`` reproduces SHR-BWS.pl, which correlates the items scored in
the first half and silently gives an unscored item 0 in the second.

All trials are computed together in chunks: random subsets come from a table of all half-splits
of a group size, half counts are sparse matrix products, ranks of the integer fractions net/app
come from one bincount per chunk. No Python loop runs per annotation or per trial. The half scores
of every trial, over any subset of the items, come from :func:`half_scores_bws` and
:func:`half_scores_ratings` (the human ceiling, :mod:`semrel.metrics.ceiling`, is built on them).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..bws.counting import Choice, OnInvalid, as_annotations, is_empty, tally
from ..bws.scoring import DEFAULT_ALPHA, DEFAULT_PASSES, check_method
from ..errors import DataValidationError, check_on_invalid
from .halves import layout, random_halves
from .trialwise import fraction_codes, masked_pearson, ranks_by_sorting, ranks_from_codes

Missing = Literal["omit", "zero"]
DEFAULT_SEED = 0  # fixed: the same call gives the same answer; pass seed=None for fresh entropy
SOURCE = "<annotations>"
CHUNK_CELLS = 1 << 20  # (elements or items + codes) x trials per chunk: memory O(#annotations)


@dataclass(frozen=True)
class SplitHalfResult:
    """Split-half reliability over ``trials`` random splits."""

    spearman: float  # mean over trials
    spearman_std: float  # standard deviation over trials (ddof 0)
    pearson: float
    pearson_std: float
    corrected_spearman: float | None  # mean of 2 rho / (1 + rho) when spearman_brown=True
    corrected_pearson: float | None  # mean of 2 r / (1 + r) when spearman_brown=True
    n_items: int  # items with at least one annotation
    n_items_both: np.ndarray  # (trials,) items scored in both halves (correlated) per trial
    spearman_trials: np.ndarray  # (trials,)
    pearson_trials: np.ndarray  # (trials,)
    n_skipped: int  # input rows dropped with on_invalid="omit"


def split_half_bws(tuples, best=None, worst=None, *, trials: int = 1000, seed=DEFAULT_SEED,
                   missing: Missing = "omit", spearman_brown: bool = False, choice: Choice = "item",
                   on_invalid: OnInvalid = "raise", method: str = "counting", alpha: float = DEFAULT_ALPHA,
                   passes: int = DEFAULT_PASSES) -> SplitHalfResult:
    """SHR of BWS annotations: ``tuples`` (n, k), ``best`` and ``worst`` (n,) as for bws_scores,
    or an ``Annotations`` object (from ``encode_annotations`` or a reader) alone. ``method``
    scores each half (:mod:`semrel.metrics.bws.scoring`; not counting: :mod:`.methods`, and
    ``missing="omit"`` only).

    >>> t = [["a", "b", "c", "d"]] * 4 + [["a", "b", "c", "e"]] * 4
    >>> r = split_half_bws(t, ["a"] * 8, ["d", "c", "d", "d", "e", "e", "c", "e"], trials=10, seed=0)
    >>> r.n_items, round(r.spearman, 3)
    (5, 0.855)
    """
    if missing not in ("omit", "zero"):
        raise ValueError(f"missing must be 'omit' or 'zero', not {missing!r}")
    check_options(trials, seed, spearman_brown)
    check_method(method)
    if method != "counting" and missing != "omit":
        raise ValueError(f"missing={missing!r} is SHR-BWS.pl's counting rule; method={method!r} takes 'omit'")
    ann = as_annotations(tuples, best, worst, choice=choice, on_invalid=on_invalid)
    n_items = len(ann.items)
    group = tuple_groups(ann.tuples, n_items)
    if method != "counting":
        from .methods import split_half_method

        if trials < 1:
            raise ValueError(f"trials must be >= 1, got {trials}")
        rho, r, both = split_half_method(ann, group, method, trials=trials, seed=seed, alpha=alpha, passes=passes)
        return _summary(rho, r, both, trials, n_items, spearman_brown, ann.n_skipped)
    return _split_half(*_bws_parts(ann, group), trials, seed, missing, spearman_brown, integer=True,
                       n_skipped=ann.n_skipped)


def _bws_parts(ann, group: np.ndarray):
    """(numerators, members, group, totals) of :func:`_half_chunks` for BWS counting."""
    n_items, k, n = len(ann.items), ann.tuples.shape[1], len(ann.best)
    first = np.unique(group, return_index=True)[1]  # one annotation per tuple gives its items
    # net (items, annotations): +1 at the best item, -1 at the worst; two entries per column, built
    # as CSC directly (rows ascending within each column)
    sign = np.where(ann.best < ann.worst, 1.0, -1.0)
    net = sp.csc_matrix((np.column_stack([sign, -sign]).ravel(),
                         np.column_stack([np.minimum(ann.best, ann.worst), np.maximum(ann.best, ann.worst)]).ravel(),
                         np.arange(0, 2 * n + 1, 2)), shape=(n_items, n))
    members = sp.csr_matrix((np.ones(len(first) * k), (ann.tuples[first].ravel(), np.repeat(np.arange(len(first)), k))),
                            shape=(n_items, len(first)))
    appearances, n_best, n_worst = tally(ann)
    return net, members, group, (n_best - n_worst, appearances)


def half_scores_bws(ann, *, trials: int, seed=DEFAULT_SEED, items=None):
    """The per-trial half scores behind :func:`split_half_bws` (counting, ``missing="omit"``), as
    :class:`HalfChunk` s of up to a chunk of trials each; ``items``: the indices of the items of
    ``ann`` (an ``Annotations``) to keep, in that order (default: all)."""
    check_options(trials, seed, False)
    return _half_chunks(*_bws_parts(ann, tuple_groups(ann.tuples, len(ann.items))), trials, seed, "omit",
                        integer=True, items=items)


def check_options(trials, seed, spearman_brown) -> None:
    """trials an int >= 1, seed None or an int >= 0 (numpy's seeds), spearman_brown a bool."""
    if isinstance(trials, bool) or not isinstance(trials, (int, np.integer)) or trials < 1:
        raise ValueError(f"trials must be an integer >= 1, not {trials!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise ValueError(f"seed must be an integer >= 0 or None (fresh randomness), not {seed!r}")
    if not isinstance(spearman_brown, (bool, np.bool_)):
        raise ValueError(f"spearman_brown must be True or False, not {spearman_brown!r}")


def tuple_groups(tuples: np.ndarray, n_items: int) -> np.ndarray:
    """Group id of each row's item set, in sorted order of the sorted rows (as ``np.unique(axis=0)``).

    Column by column: the rank of the row prefix so far times ``n_items`` plus the next item keeps
    the lexicographic order in one int64 key, so each step is a 1-d unique (linear memory).
    """
    rows = np.sort(tuples, axis=1)
    group = np.zeros(len(rows), dtype=np.int64)  # < len(rows), so group * n_items + item fits int64
    for column in rows.T:
        group = np.unique(group * n_items + column, return_inverse=True)[1].ravel()
    return group


def split_half_ratings(items, ratings, annotators=None, *, trials: int = 1000, seed=DEFAULT_SEED,
                       spearman_brown: bool = False, on_invalid: OnInvalid = "raise") -> SplitHalfResult:
    """SHR of rating-scale annotations in long format: one row per (item, [annotator], rating).

    Each item's ratings are split into halves, each half gives the item its mean rating, and the
    half means are correlated over the items. Rows with an empty item or a non-finite rating,
    an annotator rating one item twice, and items with fewer than 2 ratings raise an error naming
    the row (or item); ``on_invalid="omit"`` drops them and counts the rows in ``n_skipped``.

    >>> r = split_half_ratings([1, 1, 2, 2, 3, 3], [1, 2, 3, 4, 5, 5], trials=5, seed=0)
    >>> round(r.pearson, 3), r.n_items
    (0.946, 3)
    """
    check_on_invalid(on_invalid)
    check_options(trials, seed, spearman_brown)
    lengths = {"items": len(items), "ratings": len(ratings)}
    if annotators is not None:
        lengths["annotators"] = len(annotators)
    if len(set(lengths.values())) > 1:
        raise ValueError("split_half_ratings: items, ratings (and annotators) need one value per row, got "
                         + ", ".join(f"{len_} {name}" for name, len_ in lengths.items()))
    if not len(items):
        raise DataValidationError("<ratings>", None, "no ratings", "items and ratings are empty")
    ratings = np.asarray(ratings, dtype=object) if not isinstance(ratings, np.ndarray) else ratings
    items = np.asarray(items, dtype=object) if not isinstance(items, np.ndarray) else items
    values = (ratings.astype(np.float64) if ratings.dtype.kind in "iuf"  # float64: exact integers below 2**53
              else pd.to_numeric(pd.Series(ratings), errors="coerce").to_numpy(dtype=np.float64))  # non-numbers: NaN
    keep = _valid_ratings(items, ratings, values, annotators, on_invalid)
    item_code, distinct = pd.factorize(items[keep], sort=True)
    *parts, integer = _ratings_parts(item_code, values[keep], len(distinct))
    return _split_half(*parts, trials, seed, "omit", spearman_brown, integer=integer, n_skipped=int((~keep).sum()))


def _ratings_parts(item_code: np.ndarray, values: np.ndarray, n_items: int):
    """(numerators, members, group, totals, integer) of :func:`_half_chunks` for rating means."""
    scale = grid_scale(values)  # ratings on a grid (0.5, 0.25, 0.1 steps): integers, same correlations
    values = np.round(values * scale) if scale else values
    sums = sp.csr_matrix((values, (item_code, np.arange(len(values)))), shape=(n_items, len(values)))
    totals = (np.bincount(item_code, weights=values, minlength=n_items), np.bincount(item_code, minlength=n_items))
    return sums, sp.identity(n_items, format="csr"), item_code, totals, scale is not None


def half_scores_ratings(item_code, values, *, trials: int, seed=DEFAULT_SEED, items=None):
    """The per-trial half means behind :func:`split_half_ratings`, as :class:`HalfChunk` s:
    ``item_code`` (ratings,) the item 0..I-1 of each rating (every item rated >= 2 times),
    ``values`` the finite ratings; ``items``: the item indices to keep, in that order (default: all).
    Scores on a grid of steps (0.5, 0.1, ...) come multiplied by the grid's scale (same correlations)."""
    check_options(trials, seed, False)
    item_code, values = np.asarray(item_code, dtype=np.int64), np.asarray(values, dtype=np.float64)
    n_items = int(item_code.max()) + 1 if item_code.size else 0
    counts = np.bincount(item_code, minlength=n_items)
    if (counts < 2).any() or not np.isfinite(values).all():
        raise DataValidationError(SOURCE, None, "every item needs >= 2 finite ratings",
                                  f"item {int(np.argmax(counts < 2))} has {counts.min()}" if (counts < 2).any()
                                  else "a rating is not finite")
    *parts, integer = _ratings_parts(item_code, values, n_items)
    return _half_chunks(*parts, trials, seed, "omit", integer=integer, items=items)


GRID_SCALES = (1, 2, 4, 5, 10, 20, 25, 50, 100, 1000)


def grid_scale(values: np.ndarray) -> int | None:
    """The smallest s in GRID_SCALES making every s * value an integer (to 1e-9), else None.

    Correlations do not change when every rating is multiplied by s > 0, and integer ratings take
    the exact, sort-free ranking of fractions; truly continuous ratings keep the sorting path.
    """
    for scale in GRID_SCALES:
        scaled = values * scale
        if np.all(np.abs(scaled - np.round(scaled)) <= 1e-9 * np.maximum(1.0, np.abs(scaled))):
            return scale
    return None


def _valid_ratings(items, ratings, values, annotators, on_invalid: OnInvalid) -> np.ndarray:
    """Mask of usable rows; raises DataValidationError for the first bad row unless skipping."""
    rules = {"empty item": is_empty(items), "rating is not a finite number": ~np.isfinite(values)}
    if annotators is not None:
        annotators = np.asarray(annotators, dtype=object)
        rules["empty annotator"] = is_empty(annotators)
        rules["annotator rated the item twice"] = pd.DataFrame({"i": items, "a": annotators}).duplicated().to_numpy()
    row_bad = np.logical_or.reduce(list(rules.values()))
    kept = pd.Series(items[~row_bad])
    rules["item has fewer than 2 ratings"] = np.zeros(len(items), dtype=bool)
    lonely = kept.map(kept.value_counts()).to_numpy() < 2
    rules["item has fewer than 2 ratings"][np.flatnonzero(~row_bad)[lonely]] = True
    bad = row_bad | rules["item has fewer than 2 ratings"]
    if bad.any() and on_invalid == "raise":
        i = int(np.flatnonzero(row_bad if row_bad.any() else bad)[0])  # a bad row before its consequences
        rule = next(name for name, mask in rules.items() if mask[i])
        raise DataValidationError("<ratings>", i + 1, rule,
                                  f"item={items[i]!r}, rating={ratings[i]!r}; {int(bad.sum())} bad row(s);"
                                  " on_invalid='omit' drops and counts them")
    return ~bad


@dataclass(frozen=True)
class HalfChunk:
    """Half scores of a chunk of trials, each array (trials in the chunk, items): ``score_a``,
    ``score_b`` (BWS: net / appearances; ratings: mean), ``ranks_a``, ``ranks_b`` (average ranks
    among the trial's valid items), ``valid`` (scored in both halves), ``den_a``, ``den_b``
    (appearances or ratings behind each half score)."""

    score_a: np.ndarray
    score_b: np.ndarray
    ranks_a: np.ndarray
    ranks_b: np.ndarray
    valid: np.ndarray
    den_a: np.ndarray
    den_b: np.ndarray


def _split_half(numerators, members, group, totals, trials, seed, missing, spearman_brown, *,
                integer, n_skipped) -> SplitHalfResult:
    """Correlations of the half scores of every trial (:func:`_half_chunks`), summarised."""
    rho, r, both = [], [], []
    for c in _half_chunks(numerators, members, group, totals, trials, seed, missing, integer=integer):
        rho.append(masked_pearson(c.ranks_a, c.ranks_b, c.valid))
        r.append(masked_pearson(c.score_a, c.score_b, c.valid))
        both.append(c.valid.sum(axis=1))
    return _summary(np.concatenate(rho), np.concatenate(r), np.concatenate(both), trials, len(totals[0]),
                    spearman_brown, n_skipped)


def _half_chunks(numerators, members, group, totals, trials, seed, missing, *, integer, items=None):
    """The trial loop shared by both modes, vectorised over chunks of trials: yields a
    :class:`HalfChunk` per chunk (over ``items``, row indices of the item matrices, if given).

    numerators: (items, elements) sparse, half numerator = numerators @ membership; members:
    (items, groups) sparse, half denominator = members @ (elements of each group in the half);
    group: (elements,) group id; totals: (numerator, denominator) per item over all elements.
    """
    if trials < 1:
        raise ValueError(f"trials must be >= 1, got {trials}")
    if len(group) == 0:
        raise DataValidationError(SOURCE, None, "no annotations to split", "empty input, or every row omitted")
    rng = np.random.default_rng(seed)
    lay = layout(group)
    sizes = np.bincount(group)
    if items is not None:
        items = np.asarray(items, dtype=np.int64)
        numerators, members = numerators.tocsr()[items], members.tocsr()[items]
        totals = tuple(np.asarray(t)[items] for t in totals)
    # float32 sums of integers are exact while every half sum stays below 2**24; else float64
    integer = integer and float(abs(numerators).sum(axis=1).max()) < 1 << 24
    dtype = np.float32 if integer else np.float64
    numerators = numerators[:, lay.element_order].astype(dtype).tocsr()
    odd_members = members[:, lay.odd_groups].astype(dtype).tocsr()
    den_floor = (members @ (sizes // 2))[None, :]  # denominator if every odd group gave A the smaller part
    num_total, den_total = (np.asarray(t, dtype=np.float64)[None, :] for t in totals)
    ranker, n_codes = _fraction_ranker(numerators, sizes, int(den_total.max())) if integer else (None, 0)
    # per chunk: (elements, chunk) memberships, (chunk, items) scores, (chunk, codes) rank counts
    chunk = max(1, min(trials, CHUNK_CELLS // max(len(group), num_total.shape[1] + n_codes)))
    for start in range(0, trials, chunk):
        member, extra = random_halves(lay, min(chunk, trials - start), rng, dtype)
        num_a = np.asarray((numerators @ member).T, dtype=np.float64, order="C")  # (trials, items)
        den_a = den_floor + (odd_members @ extra).T if extra.size else den_floor  # (1, items) if all even
        num_b, den_b = num_total - num_a, den_total - den_a
        valid = den_a > 0
        if missing == "omit":
            valid = valid & (den_b > 0)
        else:  # SHR-BWS.pl: an item unscored in the second half scores 0 there
            num_b, den_b = np.where(den_b > 0, num_b, 0.0), np.where(den_b > 0, den_b, 1.0)
        valid = np.broadcast_to(valid, num_a.shape)
        den_a, den_b = np.broadcast_to(den_a, num_a.shape), np.broadcast_to(den_b, num_a.shape)
        if not valid.all():
            den_a, den_b = np.where(valid, den_a, 1.0), np.where(valid, den_b, 1.0)
        score_a, score_b = num_a / den_a, num_b / den_b  # BWS: the counting score net / appearances
        if ranker is not None:
            ranks_a, ranks_b = ranker(num_a, den_a, valid), ranker(num_b, den_b, valid)
        else:
            ranks_a, ranks_b = ranks_by_sorting(score_a, valid), ranks_by_sorting(score_b, valid)
        yield HalfChunk(score_a, score_b, ranks_a, ranks_b, valid, den_a, den_b)


def _summary(rho, r, both, trials, n_items, spearman_brown, n_skipped) -> SplitHalfResult:
    """Mean and std over the trials whose correlations are defined (a warning names how many are not)."""
    undefined = np.isnan(rho) | np.isnan(r)
    if undefined.all():
        raise DataValidationError(SOURCE, None, "split-half correlation is undefined in every trial",
                                  f"{n_items} item(s); a correlation needs >= 2 items scored in both "
                                  "halves whose scores are not all equal (constant ratings?)")
    if undefined.any():
        warnings.warn(f"split-half correlation undefined in {int(undefined.sum())} of {trials} trials (fewer "
                      "than 2 items scored in both halves, or constant scores); mean and std over the others",
                      RuntimeWarning, stacklevel=4)
        rho, r = rho[~undefined], r[~undefined]
    corrected = (lambda x: float(np.mean(2 * x / (1 + x)))) if spearman_brown else (lambda x: None)
    return SplitHalfResult(
        spearman=float(rho.mean()), spearman_std=float(rho.std()), pearson=float(r.mean()),
        pearson_std=float(r.std()), corrected_spearman=corrected(rho), corrected_pearson=corrected(r),
        n_items=n_items, n_items_both=both, spearman_trials=rho, pearson_trials=r,
        n_skipped=n_skipped)


def _fraction_ranker(numerators, sizes, den_max):
    """(ranks of integer fractions num/den by table lookup, number of codes); (None, 0) if too big."""
    num_lo = int(min(0, -den_max, numerators.min() * sizes.max()))
    num_hi = int(max(den_max, numerators.max() * sizes.max()))
    width = num_hi - num_lo + 1
    if width * (den_max + 1) > 1 << 24:
        return None, 0
    table, n_codes = fraction_codes(num_lo, num_hi, den_max)
    table = table.ravel()

    def ranker(num, den, valid):
        index = (den * width + (num - num_lo)).astype(np.int64)  # exact: small integers in float64
        return ranks_from_codes(table[index], valid, n_codes)

    return ranker, n_codes
