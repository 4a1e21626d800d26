"""Numbers written as text (a cell of a file, a command-line value): ASCII decimal notation only.

Python's ``float()``/``int()`` also read other scripts' digits (``float("١") == 1.0``), ``"1_000"``
and the words ``nan``/``inf``; a number from a file must look like a number to every reader of
that file. One rule for the metric readers and the dataset builders (``dataset_scripts.textio``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
INTEGER = re.compile(r"[+-]?[0-9]+")
NUMBER_RULE = "ASCII digits, e.g. 4 or 4.5"
# numpy is imported inside the functions that need it: `semrel --help` reads the rule above
# (semrel.command_line) without loading numpy


def ascii_number(raw: str | None) -> float | None:
    """``float(raw)`` when ``raw`` (surrounding whitespace aside) is a decimal number written in
    ASCII (:data:`NUMBER`), else ``None``: no nan/inf words, no other scripts' digits, no ``_``.

    >>> ascii_number(" 4.5 "), ascii_number("\\u0664"), ascii_number("1_0"), ascii_number("nan")
    (4.5, None, None, None)
    """
    text = (raw or "").strip()
    return float(text) if NUMBER.fullmatch(text) else None


def float_array(values, name: str) -> np.ndarray:
    """``values`` (numbers, None for missing) as float64: a ``str`` (even ``"3"`` or ``"١"``), a
    bool or any other object is a ValueError naming ``name[i]``, never cast. Text from a file is
    parsed by its reader (:func:`ascii_number`) before it gets here.

    >>> float_array([1, 2.5, None], "ratings").tolist()
    [1.0, 2.5, nan]
    >>> float_array([1, "2"], "ratings")
    Traceback (most recent call last):
    ...
    ValueError: ratings[1] is '2' (str); ratings are numbers (int or float), not text
    """
    import numpy as np

    if isinstance(values, np.ndarray):
        if values.dtype.kind in "iuf":
            return values.astype(np.float64, copy=False)
    else:  # pyarrow infers the type in one C pass: ints, floats and None, or else (bool, str, mixed) a look
        import pyarrow as pa

        try:
            array = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError):
            array = None
        if array is not None and (pa.types.is_integer(array.type) or pa.types.is_floating(array.type)
                                  or pa.types.is_null(array.type)):
            return array.cast(pa.float64(), safe=False).to_numpy(zero_copy_only=False)
    flat = list(values.ravel() if isinstance(values, np.ndarray) else values)
    i = first_non_number(flat)
    if i is not None:
        v = flat[i]
        raise ValueError(f"{name}[{i}] is {v!r} ({type(v).__name__}); {name} are numbers (int or float)"
                         + (", not text" if isinstance(v, str) else ""))
    return np.array([np.nan if v is None else v for v in flat], dtype=np.float64).reshape(np.shape(values))


def first_non_number(values) -> int | None:
    """Index of the first value that is neither a number (int, float, numpy number; not a bool)
    nor None, or None when there is none."""
    import numpy as np

    for i, v in enumerate(values):
        if v is not None and (isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.number))):
            return i
    return None
