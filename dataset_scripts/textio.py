"""Reading text and CSV input strictly: UTF-8 only, one BOM at the start dropped, CSV rows with
exactly the header's field count, numbers in ASCII decimal notation only.

Every problem is a :class:`~dataset_scripts.errors.DataValidationError` naming file, row and rule
(never a bare ``UnicodeDecodeError`` or ``_csv.Error``).
"""

from __future__ import annotations

import codecs
import csv
import io
from collections.abc import Iterator, Sequence

from semrel.metrics.text_numbers import NUMBER, NUMBER_RULE, ascii_number  # noqa: F401 (one rule, re-exported)

from .errors import DataValidationError


def decode_utf8(name: str, data: bytes) -> str:
    """``data`` as UTF-8 text without a leading byte-order mark; other encodings are an error."""
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        hint = (" (a UTF-16 byte-order mark: save it as UTF-8)"
                if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) else "")
        line = data.count(b"\n", 0, exc.start) + 1
        raise DataValidationError(name, None, "not UTF-8 text: save the file as UTF-8",
                                  f"line {line}, byte {exc.start}: {exc.reason}{hint}") from None


def csv_rows(name: str, data: bytes, columns: Sequence[str]) -> Iterator[tuple[int, dict]]:
    """(1-based data row, {column: cell}) of a UTF-8 CSV file with a header.

    Rules: the header holds ``columns`` (others may follow) and no name twice; every row has
    exactly as many fields as the header; cells fit csv's field limit; at least one data row.
    """
    reader = csv.DictReader(io.StringIO(decode_utf8(name, data), newline=""), strict=True)
    row_no = 0
    try:
        header = reader.fieldnames
        if not header:
            raise DataValidationError(name, None, "empty file: a header and data rows are needed")
        missing = [c for c in columns if c not in header]
        if missing:
            raise DataValidationError(name, None, "missing column(s) " + ", ".join(missing),
                                      f"header is {header}")
        twice = sorted({c for c in header if header.count(c) > 1})
        if twice:
            raise DataValidationError(name, None, "a column name appears twice in the header",
                                      ", ".join(map(repr, twice)))
        for row_no, row in enumerate(reader, start=1):
            if None in row or None in row.values():
                n = len(header) + len(row.get(None, ())) - sum(v is None for v in row.values())
                raise DataValidationError(name, row_no, f"wrong field count: the header has "
                                          f"{len(header)} fields", f"row has {n}")
            yield row_no, row
    except csv.Error as exc:
        limit = csv.field_size_limit()
        rule = (f"a cell longer than {limit} characters (csv.field_size_limit)"
                if "field limit" in str(exc) else "not valid CSV")
        raise DataValidationError(name, row_no + 1, rule, f"line {reader.line_num}: {exc}") from None
    if row_no == 0:
        raise DataValidationError(name, None, "no data rows (the file holds only a header)")
