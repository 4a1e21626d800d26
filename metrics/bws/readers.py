"""Readers for Best-Worst Scaling annotation files, one annotation per row.

- NRC layout (Kiritchenko & Mohammad's scripts): a header with ``Item1..Itemk``, ``BestItem``,
  ``WorstItem`` (other columns ignored); best/worst are item texts. The item id is the
  whitespace-normalised text (:func:`normalised`: ``" i1"`` and ``"i1"`` are one item).
- SemEval-2024 Task 1 layout (``BWS_annotations/*.csv``): k item columns then best, worst, header
  names vary; every item cell is a Python list literal of two sentences, best/worst are 1-based
  positions. The item id is the pair of whitespace-normalised sentences ``"sentence1\\nsentence2"``.
  Text after the closing ``]`` (a stray ``.``, ``$``, ``,`` ...) is ignored and counted in ``repaired``.

Rows are numbered from 1, header excluded. A row that cannot be read, or that breaks a rule of
:func:`counting.encode_annotations`, raises ``DataValidationError(file, row, rule)``;
``on_invalid="omit"`` drops it and counts it in ``skipped``.
"""

from __future__ import annotations

import ast
import csv
import io
import re
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..errors import DataValidationError
from ..input_files import csv_error, read_text
from .counting import Annotations, OnInvalid, encode_annotations, factorize, no_gc

UNREADABLE = "cell is not a list literal of two sentences"
ITEM_COLUMN = re.compile(r"Item[0-9]+")  # ASCII digits: "Item١" is no item column
JUNK = "text after the closing ] ignored"


def read_nrc(path, *, item_columns=None, best_column: str = "BestItem",
             worst_column: str = "WorstItem", on_invalid: OnInvalid = "raise") -> Annotations:
    """Annotations from an NRC-layout CSV (``Item1..Itemk,BestItem,WorstItem``)."""
    columns, table = read_table(path)
    twice = sorted({c for c in columns if columns.count(c) > 1})
    if twice:
        raise DataValidationError(str(path), None, "a column name appears twice in the header",
                                  ", ".join(map(repr, twice)))
    if item_columns is None:
        item_columns = sorted((c for c in columns if ITEM_COLUMN.fullmatch(c)), key=lambda c: int(c[4:]))
    missing = [c for c in [*item_columns, best_column, worst_column] if c not in columns]
    if missing:
        raise DataValidationError(str(path), None, "missing columns",
                                  f"need Item1..Itemk, {best_column}, {worst_column}; missing {missing}; "
                                  f"header is {columns}")
    if len(item_columns) < 2:
        raise DataValidationError(str(path), None, "fewer than 2 item columns",
                                  f"a tuple needs Item1..Itemk with k >= 2; header is {columns}")
    at = {c: columns.index(c) for c in columns}
    cells = _normalised_cells(table[:, [at[c] for c in [*item_columns, best_column, worst_column]]])
    return encode_annotations(cells[:, :-2], cells[:, -2], cells[:, -1], choice="item", on_invalid=on_invalid,
                              rows=np.arange(1, len(table) + 1), source=str(path))


def normalised(text: str) -> str:
    """``text`` with each run of whitespace as one space and none at the ends: the item ids of both
    layouts.

    >>> normalised("  a\tcat  sat ")
    'a cat sat'
    """
    return " ".join(text.split())


def _normalised_cells(cells: np.ndarray) -> np.ndarray:
    """:func:`normalised` of every cell (each distinct text once)."""
    codes, distinct = factorize(cells)
    return np.array([normalised(text) for text in distinct], dtype=object)[codes].reshape(cells.shape)


def read_semeval_2024(path, *, on_invalid: OnInvalid = "raise") -> Annotations:
    """Annotations from a SemEval-2024 ``BWS_annotations`` CSV (list-literal items, positions)."""
    columns, table = read_table(path)
    if table.shape[1] < 4:
        raise DataValidationError(str(path), None, "missing columns",
                                  f"need k >= 2 item columns, then best and worst; got {columns}")
    cells = table[:, :-2]
    codes, distinct = factorize(cells)  # parse each distinct cell once
    parsed = [_parse_pair(cell) for cell in distinct]
    keys = np.array([key for key, _ in parsed], dtype=object)[codes].reshape(cells.shape)
    junk = np.array([had_junk for _, had_junk in parsed])[codes].reshape(cells.shape)
    rows = np.arange(1, len(table) + 1)
    unreadable = (keys == None).any(axis=1)  # noqa: E711 (elementwise)
    if unreadable.any() and on_invalid == "raise":
        i, j = np.argwhere(keys == None)[0]  # noqa: E711
        more = rows[unreadable][1:]
        raise DataValidationError(str(path), int(rows[i]), UNREADABLE,
                                  f"column {columns[j]!r}: {cells[i, j][:80]!r}" + (
                                      f"; also rows {more[:10].tolist()}{' ...' if len(more) > 10 else ''};"
                                      " on_invalid='omit' drops and counts them" if len(more) else ""))
    ok = ~unreadable
    if not ok.any():
        raise DataValidationError(str(path), None, "every row is invalid, none left to score",
                                  f"{len(rows)} rows: {len(rows)} {UNREADABLE}")
    ann = encode_annotations(keys[ok], table[ok, -2], table[ok, -1],
                             choice="position", on_invalid=on_invalid, rows=rows[ok], source=str(path))
    skipped = dict(ann.skipped, **({UNREADABLE: int(unreadable.sum())} if unreadable.any() else {}))
    return replace(ann, skipped=skipped, skipped_rows=np.sort(np.concatenate([ann.skipped_rows, rows[unreadable]])),
                   repaired={JUNK: int(junk[ok].sum())} if junk[ok].any() else {})


def read_table(path) -> tuple[list[str], np.ndarray]:
    """(header, (rows, columns) array of str) of a UTF-8 CSV; see :func:`_read_table`."""
    with no_gc():
        return _read_table(path)


def _read_table(path) -> tuple[list[str], np.ndarray]:
    """(header, (rows, columns) array of str) of a UTF-8 CSV; an unreadable, empty, non-UTF-8 or
    truncated file, or a row whose field count differs from the header's, is a DataValidationError."""
    path = Path(path)
    text = read_text(path)
    if '"' not in text and "\r" not in text.replace("\r\n", "\n"):  # no quoting: one split, no csv module
        return _split_table(path, text.replace("\r\n", "\n") if "\r" in text else text)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, None)
        rows = list(reader)
    except csv.Error as err:
        raise csv_error(path, err, reader) from None
    if not header:
        raise DataValidationError(str(path), None, "file is empty (no header, no rows)")
    if not rows:
        raise DataValidationError(str(path), None, "file has a header but no data rows")
    sizes = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
    _check_field_counts(path, sizes, len(header))
    table = np.empty((len(rows), len(header)), dtype=object)
    table[:] = rows
    return header, table


def _check_field_counts(path, counts: np.ndarray, n_header: int) -> None:
    """Every row has the header's number of fields, else an error naming the first row that has not."""
    if (counts != n_header).any():
        i = int(np.argmax(counts != n_header))
        more = "more" if counts[i] > n_header else "fewer"
        raise DataValidationError(str(path), i + 1, f"row has {more} fields than the header",
                                  f"{counts[i]} fields, header has {n_header}"
                                  + ("; truncated file?" if more == "fewer" else ""))


def _split_table(path, text: str) -> tuple[list[str], np.ndarray]:
    """``read_table`` for text without quotes: field counts per line from the comma positions."""
    head, _, body = text.partition("\n")
    if not head.strip() and not body:
        raise DataValidationError(str(path), None, "file is empty (no header, no rows)")
    header = head.split(",")
    body = body[:-1] if body.endswith("\n") else body
    if not body:
        raise DataValidationError(str(path), None, "file has a header but no data rows")
    chars = np.frombuffer(body.encode("utf-8"), dtype=np.uint8)
    line_ends = np.append(np.flatnonzero(chars == 10), len(chars))
    fields = np.diff(np.searchsorted(np.flatnonzero(chars == 44), line_ends), prepend=0) + 1
    _check_field_counts(path, fields, len(header))
    cells = np.empty(len(fields) * len(header), dtype=object)
    cells[:] = body.replace("\n", ",").split(",")
    return header, cells.reshape(len(fields), len(header))


def detect_layout(header: list[str]) -> str:
    """"nrc" when the header names any NRC column (``Item<k>``, ``BestItem``, ``WorstItem``), so a
    misnamed one is reported as missing by :func:`read_nrc`; else "semeval"."""
    nrc = any(ITEM_COLUMN.fullmatch(c) for c in header) or {"BestItem", "WorstItem"} & set(header)
    return "nrc" if nrc else "semeval"


def read_header(path) -> list[str]:
    """The header row of a CSV file (for telling layouts apart without reading the rows)."""
    try:
        with Path(path).open(encoding="utf-8-sig", newline="") as f:
            return next(csv.reader([f.readline()]), [])
    except (OSError, UnicodeDecodeError, csv.Error):
        return read_table(path)[0]  # raises the DataValidationError that names the problem


def _parse_pair(cell: str) -> tuple[str | None, bool]:
    """("sentence1\\nsentence2" whitespace-normalised, had trailing text) or (None, False)."""
    text = cell.strip()
    end = text.rfind("]") + 1
    try:
        pair = ast.literal_eval(text[:end]) if text.startswith("[") and end else None
    except (ValueError, SyntaxError):
        pair = None
    if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(s, str) and s.strip() for s in pair)):
        return None, False
    return "\n".join(map(normalised, pair)), end < len(text)
