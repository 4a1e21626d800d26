"""A pairs file: the CSV ``pair_id, sentence1, sentence2[, score, source, ...]`` that ``semrel pairs``
writes, read for tuple design and for the way back from annotations to a dataset.

Rules, each broken one a :class:`~semrel.metrics.errors.DataValidationError` naming the row (1-based,
header excluded): the three columns present; a pair id and both sentences non-empty; no pair id
twice; no pair twice, in either order (whitespace-normalised, as BWS item ids are); no pair of two
identical sentences. Other columns are kept as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import DataValidationError
from .readers import normalised, read_table

REQUIRED = ("pair_id", "sentence1", "sentence2")


@dataclass(frozen=True)
class PairsFile:
    """The rows of a pairs file: ``columns`` (header order) and ``rows`` (dicts), ``ids`` in file order."""

    path: Path
    columns: list[str]
    rows: list[dict[str, str]]

    @property
    def ids(self) -> list[str]:
        return [row["pair_id"] for row in self.rows]

    def by_id(self) -> dict[str, dict[str, str]]:
        return {row["pair_id"]: row for row in self.rows}


def read_pairs(path) -> PairsFile:
    """The pairs of ``path``, checked by the rules of the module docstring.

    >>> import tempfile, os
    >>> f = os.path.join(tempfile.mkdtemp(), "pairs.csv")
    >>> _ = open(f, "w").write("pair_id,sentence1,sentence2\\np1,a cat,a dog\\np2,a dog,a cat\\n")
    >>> read_pairs(f)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    semrel.metrics.errors.DataValidationError: ...pairs.csv: row 2: the same pair twice, in swapped order (...)
    """
    path = Path(path)
    columns, table = read_table(path)
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        raise DataValidationError(str(path), None, "missing columns",
                                  f"a pairs file needs {', '.join(REQUIRED)}; missing {', '.join(missing)}; "
                                  f"header is {columns}")
    twice = sorted({c for c in columns if columns.count(c) > 1})
    if twice:
        raise DataValidationError(str(path), None, "a column name appears twice in the header",
                                  ", ".join(map(repr, twice)))
    rows = [dict(zip(columns, values, strict=True)) for values in table.tolist()]
    seen_ids: dict[str, int] = {}
    seen_pairs: dict[tuple[str, str], tuple[int, str]] = {}
    for number, row in enumerate(rows, 1):
        for column in REQUIRED:
            if not row[column].strip():
                raise DataValidationError(str(path), number, f"empty {column}")
        pair_id = row["pair_id"]
        if pair_id in seen_ids:
            raise DataValidationError(str(path), number, "a pair id appears twice",
                                      f"{pair_id!r}, first in row {seen_ids[pair_id]}")
        seen_ids[pair_id] = number
        first, second = normalised(row["sentence1"]), normalised(row["sentence2"])
        if first == second:
            raise DataValidationError(str(path), number, "sentence1 and sentence2 are the same text",
                                      f"pair {pair_id!r}")
        if (first, second) in seen_pairs:
            at, other = seen_pairs[(first, second)]
            raise DataValidationError(str(path), number, "the same pair twice",
                                      f"pair {pair_id!r} is row {at}'s {other!r}")
        if (second, first) in seen_pairs:
            at, other = seen_pairs[(second, first)]
            raise DataValidationError(str(path), number, "the same pair twice, in swapped order",
                                      f"pair {pair_id!r} is row {at}'s {other!r} with sentence1 and "
                                      "sentence2 swapped")
        seen_pairs[(first, second)] = (number, pair_id)
    return PairsFile(path, columns, rows)


def read_tuples(path, pairs: PairsFile) -> dict[str, list[str]]:
    """``tuple_id -> pair ids`` of a tuples file (``tuple_id, Item1..Itemk``, as ``semrel bws design
    --pairs`` writes it); every item a pair id of ``pairs``, no tuple id twice, no pair twice in a tuple."""
    from .readers import ITEM_COLUMN

    path = Path(path)
    columns, table = read_table(path)
    items = sorted((c for c in columns if ITEM_COLUMN.fullmatch(c)), key=lambda c: int(c[4:]))
    if "tuple_id" not in columns or len(items) < 2:
        raise DataValidationError(str(path), None, "missing columns",
                                  f"a tuples file needs tuple_id, Item1..Itemk (k >= 2); header is {columns}")
    known = set(pairs.ids)
    at = [columns.index(c) for c in items]
    out: dict[str, list[str]] = {}
    for number, values in enumerate(table.tolist(), 1):
        tuple_id, members = values[columns.index("tuple_id")], [values[i] for i in at]
        if tuple_id in out:
            raise DataValidationError(str(path), number, "a tuple id appears twice", repr(tuple_id))
        unknown = [m for m in members if m not in known]
        if unknown:
            raise DataValidationError(str(path), number, "an item is no pair id of the pairs file",
                                      f"{unknown[0]!r} not in {pairs.path}")
        if len(set(members)) < len(members):
            raise DataValidationError(str(path), number, "a tuple holds a pair twice", f"tuple {tuple_id!r}")
        out[tuple_id] = members
    return out
