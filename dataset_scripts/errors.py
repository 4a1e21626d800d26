"""Errors raised on bad upstream or user-supplied data."""

from __future__ import annotations


class DataValidationError(ValueError):
    """A row of an input file breaks a rule; the message names file, row and rule.

    ``row`` is the 1-based data row (header excluded) or ``None`` for file-level problems.
    """

    def __init__(self, file: str, row: int | None, rule: str, detail: str = ""):
        self.file, self.row, self.rule, self.detail = str(file), row, rule, detail
        where = f"{self.file}: row {row}" if row is not None else self.file
        super().__init__(f"{where}: {rule}" + (f" ({detail})" if detail else ""))


class SourceError(FileNotFoundError):
    """An upstream file could not be found or failed its checksum."""
