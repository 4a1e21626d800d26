"""BWS annotations from evaluate's Arrow columns, coded in Arrow instead of as Python lists.

Same result as ``encode_annotations`` of the columns' Python lists (items in sorted id order,
same rows kept and skipped); memory is one integer per cell instead of a Python object. Columns
this path cannot code exactly (a null, a blank id, rows of different sizes) and every invalid row
with ``on_invalid="raise"`` go through the Python lists, so errors name the row in the user's ids.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..arrow_columns import chunks, numbers, sorted_codes
from ..errors import DataValidationError
from .counting import Annotations, encode_annotations


def bws_features() -> list:
    """The evaluate features BWS annotations come in: ``tuples`` of string or int ids, ``best``
    and ``worst`` an id of the same type or (with string ids) an int position."""
    import datasets

    return [datasets.Features({"tuples": datasets.Sequence(datasets.Value(item)),
                               "best": datasets.Value(choice), "worst": datasets.Value(choice)})
            for item, choice in (("string", "string"), ("string", "int64"), ("int64", "int64"))]


def annotations_from_arrow(tuples, best, worst, *, choice: str = "item", on_invalid: str = "raise") -> Annotations:
    """``encode_annotations`` of Arrow columns: tuples list<string|int>, best/worst string|int."""
    coded = _coded_columns(tuples, best, worst, choice)
    if coded is None:
        return _from_lists(tuples, best, worst, choice, on_invalid)
    matrix, best_codes, worst_codes, labels = coded
    try:
        annotations = encode_annotations(matrix, best_codes, worst_codes, choice=choice, on_invalid=on_invalid)
    except DataValidationError:
        return _from_lists(tuples, best, worst, choice, on_invalid)  # the same error, in the user's ids
    if labels is None:
        return annotations
    return dataclasses.replace(annotations, items=labels[annotations.items])


def _from_lists(tuples, best, worst, choice, on_invalid) -> Annotations:
    return encode_annotations(tuples.to_pylist(), best.to_pylist(), worst.to_pylist(), choice=choice,
                              on_invalid=on_invalid)


def _coded_columns(tuples, best, worst, choice):
    """(n x k cell codes, best, worst, ids or None for integer ids), or None for the Python path."""
    lists = [chunk for chunk in chunks(tuples) if len(chunk)]
    if not lists or any(chunk.null_count for chunk in lists):
        return None
    sizes = {size.as_py() for chunk in lists for size in pc.min_max(pc.list_value_length(chunk)).values()}
    if len(sizes) != 1 or min(sizes) < 2:
        return None
    (k,) = sizes
    cells = pa.chunked_array([chunk.flatten() for chunk in lists], type=lists[0].type.value_type)  # no copy
    picks = (best, worst)
    if pa.types.is_integer(cells.type) and all(pa.types.is_integer(p.type) for p in picks):
        values, labels = [numbers(cells), *map(numbers, picks)], None
        if any(v is None for v in values):
            return None
    elif pa.types.is_string(cells.type) and choice == "item" and all(pa.types.is_string(p.type) for p in picks):
        coded = sorted_codes(cells, *picks)
        if coded is None:
            return None
        values, labels = coded
    elif choice == "position" and pa.types.is_string(cells.type) and all(pa.types.is_integer(p.type) for p in picks):
        coded = sorted_codes(cells)
        positions = [numbers(p) for p in picks]
        if coded is None or any(p is None for p in positions):
            return None
        (values,), labels = coded
        values = [values, *positions]
    else:
        return None
    return np.asarray(values[0]).reshape(-1, k), values[1], values[2], labels
