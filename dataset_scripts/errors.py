"""Errors raised on bad upstream or user-supplied data (DataValidationError lives in metrics.errors)."""

from __future__ import annotations

from semrel.metrics.errors import DataValidationError

__all__ = ["DataValidationError", "SourceError"]


class SourceError(FileNotFoundError):
    """An upstream file could not be found or failed its checksum."""
