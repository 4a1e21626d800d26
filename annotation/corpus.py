"""A corpus file read as a stream of sentences: one sentence per line (``.txt``), or a CSV, TSV
or JSON Lines file with a text field and an optional source field.

:func:`records` yields ``(row, text, source)`` one record at a time (the file is never held
whole), each text stripped of surrounding white space. Rows count from 1: the line of a text
file, the data record (header excluded) of a CSV/TSV file, the line of a JSON Lines file. Every
fault is a :class:`~semrel.metrics.errors.DataValidationError` naming the file and row: bytes
that are not UTF-8 (with their byte offset), a missing text or source column, a JSON line that
is not an object, a text that is not a string, and an empty text, unless ``on_invalid="omit"``,
which skips rows with an empty text or source (:class:`Skipped` counts them).

Tokens and the duplicate rule are those of pair sampling (:func:`tokens`, :func:`normalised`).
"""

from __future__ import annotations

import csv
import json
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from semrel.metrics.errors import DataValidationError, ParameterError, check_on_invalid
from semrel.metrics.input_files import NOT_UTF8, UNREADABLE

FORMATS = ("lines", "csv", "tsv", "jsonl")
SUFFIXES = {".txt": "lines", ".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl"}
TOKEN = re.compile(r"\w+", re.UNICODE)  # semrel.metrics.overlap's unigrams
EMPTY = "empty text"


def tokens(text: str) -> list[str]:
    """The lower-cased word tokens (``\\w+`` runs) of ``text``, as :mod:`semrel.metrics.overlap`."""
    return TOKEN.findall(text.lower())


def normalised(text: str) -> str:
    """The text two sentences are compared by: Unicode NFC, case folded, white-space runs as one
    space. Two sentences with the same normalised text are duplicates.

    >>> normalised("  The  Cat\\tsat. ") == normalised("the cat sat.")
    True
    """
    return " ".join(unicodedata.normalize("NFC", text).casefold().split())


def corpus_format(path, format: str = "auto") -> str:
    """``format``, or (``auto``) the one the file's suffix names (:data:`SUFFIXES`)."""
    if format != "auto":
        if format not in FORMATS:
            raise ParameterError("format", format, f"must be auto or one of {', '.join(FORMATS)}")
        return format
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        raise ParameterError("format", "auto", f"cannot tell the format of {path} from its suffix "
                             f"{suffix or '(none)'!r}: name it ({', '.join(FORMATS)})")
    return SUFFIXES[suffix]


@dataclass
class Skipped:
    """Rows left out under ``on_invalid="omit"``: how many, and the first few row numbers."""

    count: int = 0
    rows: list[int] = field(default_factory=list)

    def add(self, row: int) -> None:
        self.count += 1
        if len(self.rows) < 5:
            self.rows.append(row)


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(line number, decoded line)`` of a UTF-8 file (a byte order mark dropped), read line by line."""
    offset = 0
    try:
        file = open(path, "rb")  # noqa: SIM115 (closed below; open errors worded first)
    except OSError as err:
        raise DataValidationError(str(path), None, UNREADABLE, err.strerror or str(err)) from None
    with file:
        for number, raw in enumerate(file, 1):
            try:
                text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as err:
                raise DataValidationError(str(path), number, NOT_UTF8, f"byte {raw[err.start:err.start + 1]!r} "
                                          f"at offset {offset + err.start}") from None
            offset += len(raw)
            yield number, text


def records(path, *, format: str = "auto", text_column: str = "text", source_column: str | None = None,
            on_invalid: str = "raise", skipped: Skipped | None = None) -> Iterator[tuple[int, str, str | None]]:
    """``(row, text, source)`` of each record of the corpus ``path`` (``source`` None without a
    ``source_column``); see the module's docstring for rows and faults."""
    path, on_invalid = Path(path), check_on_invalid(on_invalid)
    format = corpus_format(path, format)
    skipped = skipped if skipped is not None else Skipped()
    if format == "lines" and (text_column != "text" or source_column):
        raise ParameterError("text_column" if text_column != "text" else "source_column",
                             text_column if text_column != "text" else source_column,
                             f"{path} is read as one sentence per line: it has no columns")
    for row, text, source in _fields(path, format, text_column, source_column):
        if not isinstance(text, str):
            raise DataValidationError(str(path), row, f"{text_column!r} is not a string", repr(text)[:60])
        if source is not None and not isinstance(source, str):
            raise DataValidationError(str(path), row, f"{source_column!r} is not a string", repr(source)[:60])
        text = text.strip()
        if not text or (source_column and not source.strip()):
            rule = EMPTY if not text else f"empty source ({source_column!r})"
            if on_invalid == "raise":
                raise DataValidationError(str(path), row, rule, "on_invalid omit skips such rows and counts them")
            skipped.add(row)
            continue
        yield row, text, source.strip() if source_column else None


def _fields(path: Path, format: str, text_column: str, source_column: str | None):
    if format == "lines":
        for number, line in _lines(path):
            yield number, line.rstrip("\r\n"), None
    elif format == "jsonl":
        yield from _jsonl(path, text_column, source_column)
    else:
        yield from _table(path, "," if format == "csv" else "\t", text_column, source_column)


def _jsonl(path: Path, text_column: str, source_column: str | None):
    for number, line in _lines(path):
        if not line.strip():
            yield number, "", "" if source_column else None  # an empty row: the caller's rule
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise DataValidationError(str(path), number, "not a JSON object", err.msg) from None
        if not isinstance(record, dict):
            raise DataValidationError(str(path), number, "not a JSON object", type(record).__name__)
        for name in (text_column, source_column):
            if name and name not in record:
                raise DataValidationError(str(path), number, f"no field {name!r}",
                                          "fields: " + ", ".join(map(str, record))[:80])
        yield number, record[text_column], record[source_column] if source_column else None


def _table(path: Path, delimiter: str, text_column: str, source_column: str | None):
    from semrel.metrics.input_files import csv_error

    lines = (line for _, line in _lines(path))
    reader = csv.reader(lines, delimiter=delimiter)
    try:
        header = next(reader, None)
        if header is None:
            raise DataValidationError(str(path), None, "empty file (no header line)")
        for name in (text_column, source_column):
            if name and name not in header:
                raise DataValidationError(str(path), None, f"no column {name!r}", "columns: " + ", ".join(header))
        text_at = header.index(text_column)
        source_at = header.index(source_column) if source_column else None
        for row, cells in enumerate(reader, 1):
            if len(cells) != len(header):
                if not any(c.strip() for c in cells):
                    yield row, "", "" if source_column else None
                    continue
                raise DataValidationError(str(path), row, f"{len(cells)} fields, the header has {len(header)}")
            yield row, cells[text_at], cells[source_at] if source_at is not None else None
    except csv.Error as err:
        raise csv_error(path, err, reader) from None
