"""The errors of the whole project and the one ``on_invalid`` rule: a bad input row
(:class:`DataValidationError`), a parameter outside its rule (:class:`ParameterError`), and
:func:`check_on_invalid` for the raise-or-omit policy every reader and metric takes.

Ground floor: it imports nothing but the standard library (a test keeps it so), so every part,
the ``semrel`` command's fast start included, can import it at no cost.
"""

from __future__ import annotations

ON_INVALID = ("raise", "omit")  # scipy's nan_policy words: stop at the first bad input, or drop and count it


def check_on_invalid(on_invalid) -> str:
    """``on_invalid`` if it is one of :data:`ON_INVALID`, else a ``ValueError`` naming the argument.

    >>> check_on_invalid("skip")
    Traceback (most recent call last):
    ...
    ValueError: on_invalid must be 'raise' or 'omit', got 'skip'
    """
    if on_invalid not in ON_INVALID:
        raise ValueError(f"on_invalid must be {' or '.join(map(repr, ON_INVALID))}, got {on_invalid!r}")
    return on_invalid


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
