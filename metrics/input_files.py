"""Users' input files read whole, every failure a :class:`~semrel.metrics.errors.DataValidationError`
naming the file and its cause (the ``semrel`` command answers it in one line, exit status 2).

One rule for the BWS readers, ``semrel bws design``'s items and the SemEval-2024 submission and gold
files: a link is followed; a missing file, a folder or a file this process may not read is "file
cannot be read" with the system's words; bytes that are not UTF-8 name the row; a CSV the csv
module cannot parse (an unclosed quote, a field over its 131,072-character limit) names the row.
"""

from __future__ import annotations

import csv
from pathlib import Path

from .errors import DataValidationError

UNREADABLE = "file cannot be read"
NOT_UTF8 = "file is not UTF-8 text"
MALFORMED = "malformed CSV (truncated file or unclosed quote?)"
FIELD_LIMIT = f"a field is longer than {csv.field_size_limit():,} characters (an unclosed quote?)"


def read_text(path, *, header: bool = True) -> str:
    """The text of the UTF-8 file ``path`` (a byte order mark dropped). Rows in errors count from 1,
    after the header line when ``header``.

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> read_text(folder)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    semrel.metrics.errors.DataValidationError: /...: file cannot be read (Is a directory)
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise DataValidationError(str(path), None, UNREADABLE, err.strerror or str(err)) from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + (0 if header else 1)
        raise DataValidationError(str(path), line or None, NOT_UTF8,
                                  f"byte {raw[err.start:err.start + 1]!r} at offset {err.start}") from None


def csv_error(path, err: csv.Error, reader) -> DataValidationError:
    """``err`` of a ``csv.reader`` over a file with a header line, as the error naming file and row."""
    if "field limit" in str(err):
        return DataValidationError(str(path), reader.line_num - 1 or None, FIELD_LIMIT)
    return DataValidationError(str(path), reader.line_num - 1 or None, MALFORMED, str(err))
