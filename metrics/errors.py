"""The errors of the whole project (ground floor: standard library only): a bad input row
(:class:`DataValidationError`) and a parameter outside its rule (:class:`ParameterError`).

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


class _Names(dict):
    def __init__(self, name):
        super().__init__()
        self.name = name

    def __missing__(self, key):
        return self.name(key)


class ParameterError(ValueError):
    """``parameter`` (as the Python API names it) holds ``value``, which breaks ``rule``.

    ``str()`` is the Python wording, ``parameter=value: rule``; :meth:`worded` words it for
    another door (the CLI gives its flag names and value format). ``{name}`` fields in ``rule``
    name other parameters and are worded the same way.

    >>> str(ParameterError("max_steps", 0, "must be -1 (train for {num_train_epochs}) or >= 1"))
    'max_steps=0: must be -1 (train for num_train_epochs) or >= 1'
    """

    def __init__(self, parameter: str, value, rule: str):
        self.parameter, self.value, self.rule = parameter, value, rule
        super().__init__(self.worded())

    def worded(self, name=str, show=repr, sep: str = "=") -> str:
        """``name(parameter) + sep + show(value) + ": " + rule`` (no ``sep`` when ``show``
        gives nothing), with ``name`` also applied to the parameters the rule names."""
        try:
            rule = self.rule.format_map(_Names(name))
        except (ValueError, IndexError, AttributeError):  # braces that name nothing: as written
            rule = self.rule
        shown = show(self.value)
        return f"{name(self.parameter)}{sep + shown if shown else ''}: {rule}"


class MissingPathError(ParameterError, FileNotFoundError):
    """A :class:`ParameterError` for a file or folder that does not exist."""
