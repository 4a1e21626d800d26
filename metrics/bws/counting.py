"""Best-Worst Scaling scores by counting (Orme 2009; Kiritchenko & Mohammad 2016, 2017).

For every item i over all annotations whose tuple contains i::

    score(i)    = (#best(i) - #worst(i)) / #appearances(i)      in [-1, 1]
    score_01(i) = (score(i) + 1) / 2                             in [0, 1]   (as STR-2021 publishes it,
                                                                  Abdalla et al. 2023, section 3.2.2)

This is the procedure of the NRC script ``get-scores-from-BWS-annotations-counting.pl``, with
stricter input checks: a best/worst choice outside the tuple, best == worst, an item repeated in
its tuple, tuples of mixed sizes and empty cells are errors naming the row (the Perl script stops on
the first, warns on the second and counts the third twice). ``on_invalid="omit"`` drops such rows
and reports how many, by rule.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from ..errors import DataValidationError, check_on_invalid
from ..text_numbers import ascii_number

Choice = Literal["item", "position"]
OnInvalid = Literal["raise", "omit"]  # semrel.metrics.errors.ON_INVALID

# Rules in the order they are checked; a row is reported under the first rule it breaks.
RULES = (
    "tuple size differs from the other rows",
    "empty cell",
    "item repeated within the tuple",
    "best is not an item of the tuple",
    "worst is not an item of the tuple",
    "best and worst are the same item",
)


@dataclass(frozen=True)
class Annotations:
    """Validated BWS annotations, items coded 0..n_items-1 in sorted id order."""

    items: np.ndarray  # (n_items,) item ids, sorted
    tuples: np.ndarray  # (n, k) int item codes
    best: np.ndarray  # (n,) int item codes
    worst: np.ndarray  # (n,) int item codes
    rows: np.ndarray  # (n,) row label of each kept annotation (1-based input row or file row)
    skipped: dict  # rule -> number of rows dropped with on_invalid="omit"
    skipped_rows: np.ndarray  # row labels of the dropped rows
    repaired: dict = field(default_factory=dict)  # what a reader tolerated -> number of cells

    @property
    def n_skipped(self) -> int:
        return int(len(self.skipped_rows))


@dataclass(frozen=True)
class BWSScoresResult:
    """Counting scores per item (item order = sorted item ids)."""

    items: np.ndarray
    appearances: np.ndarray
    n_best: np.ndarray
    n_worst: np.ndarray
    score: np.ndarray  # (n_best - n_worst) / appearances, in [-1, 1]
    score_01: np.ndarray  # (score + 1) / 2, in [0, 1]
    n_annotations: int
    n_skipped: int


def counting_score(n_best, n_worst, appearances):
    """(#best - #worst) / #appearances, elementwise over arrays of any shape."""
    return (np.asarray(n_best, dtype=np.float64) - n_worst) / appearances


def tally(annotations: Annotations) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(#appearances, #best, #worst) per item code."""
    n = len(annotations.items)
    return (
        np.bincount(annotations.tuples.ravel(), minlength=n),
        np.bincount(annotations.best, minlength=n),
        np.bincount(annotations.worst, minlength=n),
    )


def bws_counting_scores(tuples, best=None, worst=None, *, choice: Choice = "item",
                        on_invalid: OnInvalid = "raise") -> BWSScoresResult:
    """Counting scores of BWS annotations (one annotation per row).

    Args:
        tuples: (n, k) item ids of each annotated tuple, k >= 2 (usually 4); or an
            ``Annotations`` object (from a reader) alone.
        best, worst: (n,) the chosen items: item ids (``choice="item"``) or 1-based positions in
            the row's tuple (``choice="position"``).
        on_invalid: ``"raise"`` a DataValidationError naming the first bad row and its rule, or
            ``"omit"`` bad rows (counts in ``n_skipped``).

    >>> r = bws_counting_scores([["a", "b", "c", "d"], ["a", "b", "c", "e"]], ["a", "b"], ["d", "a"])
    >>> r.items.tolist(), r.score.tolist()
    (['a', 'b', 'c', 'd', 'e'], [0.0, 0.5, 0.0, -1.0, 0.0])
    """
    ann = as_annotations(tuples, best, worst, choice=choice, on_invalid=on_invalid)
    appearances, n_best, n_worst = tally(ann)
    score = counting_score(n_best, n_worst, appearances)
    return BWSScoresResult(items=ann.items, appearances=appearances, n_best=n_best, n_worst=n_worst,
                     score=score, score_01=(score + 1.0) / 2.0, n_annotations=len(ann.best),
                     n_skipped=ann.n_skipped)


def as_annotations(tuples, best=None, worst=None, *, choice: Choice = "item",
                   on_invalid: OnInvalid = "raise") -> Annotations:
    """``tuples`` itself if it is already ``Annotations``, else the encoded arrays."""
    if isinstance(tuples, Annotations):
        if best is not None or worst is not None:
            raise ValueError("pass best/worst only with raw tuples, not with an Annotations object")
        return tuples
    return encode_annotations(tuples, best, worst, choice=choice, on_invalid=on_invalid)


def encode_annotations(tuples, best, worst, *, choice: Choice = "item",
                       on_invalid: OnInvalid = "raise", rows=None,
                       source: str = "<annotations>") -> Annotations:
    """Validate annotations and code items as integers (vectorised; no loop per annotation).

    ``rows`` labels the input rows in error messages (default: 1-based position); readers pass the
    file's data-row numbers and ``source`` its path.
    """
    if choice not in ("item", "position"):
        raise ValueError(f"choice must be 'item' or 'position', not {choice!r}")
    check_on_invalid(on_invalid)
    if len(tuples) == 0:
        raise DataValidationError(source, None, "no annotations", "tuples, best and worst are empty")
    matrix, size_ok = _tuple_matrix(tuples)
    n, k = matrix.shape
    best, worst = np.asarray(best), np.asarray(worst)
    if best.shape != (n,) or worst.shape != (n,):
        raise ValueError(f"best and worst need one value per tuple ({n}), got {best.shape} and {worst.shape}")
    rows = np.arange(1, n + 1) if rows is None else np.asarray(rows)

    if choice == "item":
        codes, ids, ((best_code, best_empty), (worst_code, worst_empty)) = _factorize(matrix, best, worst)
    else:
        codes, ids, _ = _factorize(matrix)
        best_code, worst_code = _from_positions(best, codes), _from_positions(worst, codes)
        best_empty, worst_empty = is_empty(best), is_empty(worst)
    broken = [  # one mask per rule, in the order of RULES
        ~size_ok,
        _row_any(codes < 0) | best_empty | worst_empty,
        _has_repeats(codes),
        ~_row_any(codes == best_code[:, None]),
        ~_row_any(codes == worst_code[:, None]),
        best_code == worst_code,
    ]
    rule = np.full(n, -1)
    for r, bad in enumerate(broken):
        rule[(rule < 0) & bad] = r
    bad = rule >= 0
    if bad.any() and on_invalid == "raise":
        _raise_first(source, rows, rule, tuples, best, worst, choice, k)
    if bad.all():  # on_invalid="omit" and nothing left: no scores, say why
        counts = ", ".join(f"{c} {RULES[r]}" for r, c in zip(*np.unique(rule, return_counts=True), strict=True))
        raise DataValidationError(source, None, "every row is invalid, none left to score", f"{n} rows: {counts}")
    keep = ~bad
    kept = codes[keep] if bad.any() else codes  # no copies of the (n, k) codes when every row is valid
    used = np.zeros(len(ids), dtype=bool)  # items of skipped rows only are dropped from the output
    used[kept.ravel()] = True
    if used.all():
        tuples, best_code, worst_code = kept, best_code[keep], worst_code[keep]
    else:
        remap = np.cumsum(used) - 1
        tuples, best_code, worst_code = remap[kept], remap[best_code[keep]], remap[worst_code[keep]]
    return Annotations(
        items=ids[used], tuples=tuples, best=best_code, worst=worst_code, rows=rows[keep],
        skipped={RULES[r]: int(c) for r, c in zip(*np.unique(rule[bad], return_counts=True), strict=True)},
        skipped_rows=rows[bad])


def _tuple_matrix(tuples) -> tuple[np.ndarray, np.ndarray]:
    """(n, k) array of tuples and a mask of the rows that have the most common size k."""
    if isinstance(tuples, np.ndarray) and tuples.ndim == 2:
        matrix = tuples
    else:
        matrix = np.asarray(tuples, dtype=object)  # ragged rows give a 1-d array of sequences
    if matrix.ndim == 2:
        size_ok = np.ones(len(matrix), dtype=bool)
    else:
        sizes = np.fromiter(map(len, matrix), dtype=np.int64, count=len(matrix))
        values, counts = np.unique(sizes, return_counts=True)
        common = np.isin(sizes, values[counts == counts.max()])
        k = sizes[np.argmax(common)]  # the most common size; ties go to the earliest row's size
        size_ok = sizes == k
        rows = np.full((len(sizes), k), None, dtype=object)
        rows[size_ok] = np.array([list(t) for t in matrix[size_ok]], dtype=object)
        matrix = rows
    if matrix.shape[1] < 2:
        raise ValueError(f"tuples need at least 2 items, got k={matrix.shape[1]}")
    return matrix, size_ok


@contextlib.contextmanager
def no_gc():
    """Pause the cyclic garbage collector while millions of acyclic objects (strings, lists) are
    made: its full passes over them would make reading and coding superlinear in the input size."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def factorize(values) -> tuple[np.ndarray, list]:
    """(code of each value, the distinct values): linear in the number of values, no sort, no
    pandas. Dense integer ids go through a lookup table (distinct values sorted); anything else
    through one C-speed dict pass (distinct values in first-seen order)."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "iu" and values.size:
        flat = values.ravel()
        low, span = flat.min(), int(flat.max()) - int(flat.min()) + 1
        if span <= 4 * flat.size:  # dense integer ids: a lookup table, no hashing
            present = np.zeros(span, dtype=bool)
            present[flat - low if low else flat] = True
            distinct = np.flatnonzero(present) + low
            if low == 0 and present.all():  # already codes 0..L-1 (e.g. coded in Arrow): no copy
                return flat, distinct.tolist()
            code = np.cumsum(present) - 1
            return code[flat - low], distinct.tolist()
    with no_gc():
        flat = values.ravel().tolist() if isinstance(values, np.ndarray) else values
        index = {}  # value -> position of its first occurrence, in one C-speed pass
        first = np.fromiter(map(index.setdefault, flat, itertools.count()), dtype=np.int64, count=len(flat))
    dense = np.empty(len(flat), dtype=np.int64)
    dense[np.fromiter(index.values(), dtype=np.int64, count=len(index))] = np.arange(len(index))
    return dense[first], list(index)


def _factorize(matrix: np.ndarray, *extra: np.ndarray):
    """Codes of the tuple cells in sorted id order, the ids, and for each ``extra`` column (best,
    worst as item ids) its codes and empty mask, all from one pass; -1 marks empty cells and extra
    values that are no item of any tuple."""
    n_cells = matrix.size
    if all(a.dtype.kind in "iu" for a in (matrix, *extra)):
        values = np.concatenate([matrix.ravel(), *extra]) if extra else matrix
    else:
        with no_gc():
            values = list(itertools.chain(matrix.ravel().tolist(), *(a.tolist() for a in extra)))
    codes, distinct = factorize(values)
    blank = _blank(distinct)
    keep = np.zeros(len(distinct), dtype=bool)
    keep[codes[:n_cells]] = True
    keep &= ~blank
    kept = [v for v, k in zip(distinct, keep.tolist(), strict=True) if k]
    try:
        order = sorted(range(len(kept)), key=kept.__getitem__)
    except TypeError as err:
        raise TypeError(f"item ids must be mutually comparable (one type): {err}") from None
    rank = np.empty(len(kept), dtype=np.int64)
    rank[order] = np.arange(len(kept))
    new_code = np.full(len(distinct), -1, dtype=np.int64)
    new_code[keep] = rank
    ids = np.empty(len(kept), dtype=matrix.dtype if matrix.dtype.kind in "iuU" else object)
    ids[:] = [kept[i] for i in order]
    identity = len(kept) == len(distinct) and np.array_equal(new_code, np.arange(len(distinct)))
    mapped = codes if identity else new_code[codes]  # dense sorted integer ids are their own codes
    starts = itertools.accumulate([n_cells] + [len(a) for a in extra])  # one more than extra: the end
    columns = [(mapped[start:start + len(a)], blank[codes[start:start + len(a)]])
               for start, a in zip(starts, extra, strict=False)]
    return mapped[:n_cells].reshape(matrix.shape), ids, columns


def _blank(distinct: list) -> np.ndarray:
    """None, NaN, or a blank string, per distinct value."""
    return np.array([v is None or (isinstance(v, float) and v != v) or (isinstance(v, str) and not v.strip())
                     for v in distinct], dtype=bool)


def _row_any(mask: np.ndarray) -> np.ndarray:
    """mask.any(axis=1), faster for few columns."""
    return np.logical_or.reduce([mask[:, j] for j in range(mask.shape[1])])


def _has_repeats(codes: np.ndarray) -> np.ndarray:
    """Rows in which some (non-empty) item code occurs twice."""
    k = codes.shape[1]
    pairs = [(codes[:, i] == codes[:, j]) & (codes[:, i] >= 0) for i in range(k) for j in range(i + 1, k)]
    return np.logical_or.reduce(pairs)


def is_empty(values) -> np.ndarray:
    """None/NaN or a blank string, elementwise (one check per distinct value)."""
    values = np.asarray(values)
    if values.dtype.kind in "iub":
        return np.zeros(values.shape, dtype=bool)
    if values.dtype.kind == "f":
        return np.isnan(values)
    codes, distinct = factorize(values)
    return _blank(distinct)[codes].reshape(values.shape)


def _from_positions(positions: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Item codes at 1-based positions; -2 where a position is not an integer in 1..k."""
    if positions.dtype.kind in "iuf":
        pos = positions
    else:  # strings from a file: convert each distinct value once; not a number -> NaN
        codes_, distinct = factorize(positions)
        pos = np.array([_number(v) for v in distinct], dtype=np.float64)[codes_] if distinct else np.empty(0)
    n, k = codes.shape
    ok = (pos >= 1) & (pos <= k) & (pos == np.round(pos) if pos.dtype.kind == "f" else True)
    index = np.where(ok, pos, 1).astype(np.int64) - 1
    return np.where(ok, codes.ravel()[np.arange(n) * k + index], -2)


def _number(value) -> float:
    """A position written as text (a file's cell): ASCII digits only (``ascii_number``), else NaN."""
    if isinstance(value, str):
        number = ascii_number(value)
        return float("nan") if number is None else number
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def _raise_first(source, rows, rule, tuples, best, worst, choice, k):
    bad = np.flatnonzero(rule >= 0)
    i = bad[0]
    detail = (f"tuple={np.asarray(tuples[i]).tolist()!r}, best={best[i:i + 1].tolist()[0]!r}, "
              f"worst={worst[i:i + 1].tolist()[0]!r}")
    if rule[i] == 0:
        detail += f"; most rows have {k} items"
    if rule[i] in (3, 4):
        detail += (f"; positions are integers 1..{k} in ASCII digits" if choice == "position"
                   else "; pass choice='position' if best/worst are 1-based positions")
    if len(bad) > 1:
        detail += (f"; {len(bad) - 1} more invalid row(s), e.g. {rows[bad[1:6]].tolist()};"
                   " on_invalid='omit' drops them and counts them")
    raise DataValidationError(source, rows[i].item(), RULES[rule[i]], detail)
