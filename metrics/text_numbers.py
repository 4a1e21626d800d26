"""Numbers written as text (a cell of a file, a command-line value): ASCII decimal notation only.

Python's ``float()``/``int()`` also read other scripts' digits (``float("١") == 1.0``), ``"1_000"``
and the words ``nan``/``inf``; a number from a file must look like a number to every reader of
that file. One rule for the metric readers and the dataset builders (``dataset_scripts.textio``).
"""

from __future__ import annotations

import re

NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
NUMBER_RULE = "ASCII digits, e.g. 4 or 4.5"


def ascii_number(raw: str | None) -> float | None:
    """``float(raw)`` when ``raw`` (surrounding whitespace aside) is a decimal number written in
    ASCII (:data:`NUMBER`), else ``None``: no nan/inf words, no other scripts' digits, no ``_``.

    >>> ascii_number(" 4.5 "), ascii_number("\\u0664"), ascii_number("1_0"), ascii_number("nan")
    (4.5, None, None, None)
    """
    text = (raw or "").strip()
    return float(text) if NUMBER.fullmatch(text) else None
