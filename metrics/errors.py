"""The validation error of the whole project (ground floor: standard library only).

A metric Space carries a copy of this file as its own ``errors.py`` (see publishing/spaces.py),
so it must stay free of imports from this project and of third-party packages.
"""

from __future__ import annotations


class DataValidationError(ValueError):
    """A row of an input file breaks a rule; the message names file, row and rule.

    ``row`` is the 1-based data row (header excluded) or ``None`` for file-level problems.
    """

    def __init__(self, file: str, row: int | None, rule: str, detail: str = ""):
        self.file, self.row, self.rule, self.detail = str(file), row, rule, detail
        where = f"{self.file}: row {row}" if row is not None else self.file
        super().__init__(f"{where}: {rule}" + (f" ({detail})" if detail else ""))
