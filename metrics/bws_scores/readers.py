"""Readers for Best-Worst Scaling annotation files, one annotation per row.

- NRC layout (Kiritchenko & Mohammad's scripts): a header with ``Item1..Itemk``, ``BestItem``,
  ``WorstItem`` (other columns ignored); best/worst are item texts.
- SemEval-2024 Task 1 layout (``BWS_annotations/*.csv``): k item columns then best, worst, header
  names vary; every item cell is a Python list literal of two sentences, best/worst are 1-based
  positions. The item id is the whitespace-normalised pair ``"sentence1\\nsentence2"``. Text after
  the closing ``]`` (a stray ``.``, ``$``, ``,`` ...) is ignored and counted in ``repaired``.

Rows are numbered from 1, header excluded. A row that cannot be read, or that breaks a rule of
:func:`counting.encode_annotations`, raises ``DataValidationError(file, row, rule)``;
``on_invalid="omit"`` drops it and counts it in ``skipped``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from .counting import Annotations
from .counting import OnInvalid
from .counting import encode_annotations
from .errors import DataValidationError

UNREADABLE = "cell is not a list literal of two sentences"
JUNK = "text after the closing ] ignored"


def read_nrc(path, *, item_columns=None, best_column: str = "BestItem",
             worst_column: str = "WorstItem", on_invalid: OnInvalid = "raise") -> Annotations:
    """Annotations from an NRC-layout CSV (``Item1..Itemk,BestItem,WorstItem``)."""
    table = _read_table(path)
    if item_columns is None:
        item_columns = sorted((c for c in table.columns if re.fullmatch(r"Item\d+", c)),
                              key=lambda c: int(c[4:]))
    missing = [c for c in [*item_columns, best_column, worst_column] if c not in table.columns]
    if missing or len(item_columns) < 2:
        raise DataValidationError(str(path), None, "missing columns",
                                  f"need Item1..Itemk, {best_column}, {worst_column}; missing {missing}")
    return encode_annotations(table[item_columns].to_numpy(dtype=object), table[best_column].to_numpy(),
                              table[worst_column].to_numpy(), choice="item", on_invalid=on_invalid,
                              rows=np.arange(1, len(table) + 1), source=str(path))


def read_semeval_2024(path, *, on_invalid: OnInvalid = "raise") -> Annotations:
    """Annotations from a SemEval-2024 ``BWS_annotations`` CSV (list-literal items, positions)."""
    table = _read_table(path)
    if table.shape[1] < 4:
        raise DataValidationError(str(path), None, "missing columns",
                                  f"need k >= 2 item columns, then best and worst; got {list(table.columns)}")
    cells = table.iloc[:, :-2].to_numpy(dtype=object)
    codes, distinct = pd.factorize(cells.ravel())  # parse each distinct cell once
    parsed = [_parse_pair(cell) for cell in distinct]
    keys = np.array([key for key, _ in parsed], dtype=object)[codes].reshape(cells.shape)
    junk = np.array([had_junk for _, had_junk in parsed])[codes].reshape(cells.shape)
    rows = np.arange(1, len(table) + 1)
    unreadable = pd.isna(keys).any(axis=1)
    if unreadable.any() and on_invalid == "raise":
        i, j = np.argwhere(pd.isna(keys))[0]
        more = rows[unreadable][1:]
        raise DataValidationError(str(path), int(rows[i]), UNREADABLE,
                                  f"column {table.columns[j]!r}: {cells[i, j][:80]!r}" + (
                                      f"; also rows {more[:10].tolist()}{' ...' if len(more) > 10 else ''};"
                                      " on_invalid='omit' drops and counts them" if len(more) else ""))
    ok = ~unreadable
    ann = encode_annotations(keys[ok], table.iloc[:, -2].to_numpy()[ok], table.iloc[:, -1].to_numpy()[ok],
                             choice="position", on_invalid=on_invalid, rows=rows[ok], source=str(path))
    skipped = dict(ann.skipped, **({UNREADABLE: int(unreadable.sum())} if unreadable.any() else {}))
    return replace(ann, skipped=skipped, skipped_rows=np.sort(np.concatenate([ann.skipped_rows, rows[unreadable]])),
                   repaired={JUNK: int(junk[ok].sum())} if junk[ok].any() else {})


def _read_table(path) -> pd.DataFrame:
    """The CSV as strings; an unreadable, empty or truncated file is a DataValidationError."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise DataValidationError(str(path), None, "file cannot be read", err.strerror or str(err)) from None
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n")  # header = line 0, so this is the data row
        raise DataValidationError(str(path), line or None, "file is not UTF-8 text",
                                  f"byte {raw[err.start:err.start + 1]!r} at offset {err.start}") from None
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8")
    except pd.errors.EmptyDataError:
        raise DataValidationError(str(path), None, "file is empty (no header, no rows)") from None
    except pd.errors.ParserError as err:
        row = re.search(r"(?:row|line) (\d+)", str(err))
        raise DataValidationError(str(path), int(row.group(1)) - 1 if row else None,
                                  "malformed CSV (truncated file or unclosed quote?)", str(err).strip()) from None
    if table.empty:
        raise DataValidationError(str(path), None, "file has a header but no data rows")
    short = table.isna().any(axis=1).to_numpy()  # fewer fields than the header: a cut-off row
    if short.any():
        raise DataValidationError(str(path), int(np.argmax(short)) + 1, "row has fewer fields than the header",
                                  "truncated file?")
    return table


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
    return "\n".join(" ".join(s.split()) for s in pair), end < len(text)
