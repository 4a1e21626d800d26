"""Errors raised on bad upstream or user-supplied data (DataValidationError lives in metrics.errors)."""

from __future__ import annotations

from semrel.metrics.errors import DataValidationError

__all__ = ["DataValidationError", "SourceError", "SourceNotFound"]


class SourceError(FileNotFoundError):
    """An upstream file could not be found or failed its checksum."""


class SourceNotFound(SourceError):
    """An upstream file is in no mirror directory, or could not be downloaded (never raised for
    a checksum mismatch: a file that is there but wrong is a plain :class:`SourceError`)."""
