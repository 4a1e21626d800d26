"""Arrow columns (evaluate's ``format="arrow"``) as numpy arrays, without a Python object per cell.

String ids are dictionary-encoded once in Arrow: integer codes whose order is the ids' sorted
order (UTF-8 byte order = code-point order = Python's ``sorted``), plus the distinct ids. The math
then works on codes exactly as on the ids. The evaluate modules import it as
``semrel.metrics.arrow_columns`` (a Space installs the semrel wheel).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa


def chunks(column) -> list[pa.Array]:
    """The Arrow arrays of a column (ChunkedArray or Array)."""
    return list(column.chunks) if isinstance(column, pa.ChunkedArray) else [column]


def sorted_codes(*columns) -> tuple[list[np.ndarray], np.ndarray] | None:
    """One shared coding of string ``columns``: (codes of each column, the sorted distinct ids).

    None when a value is null or blank: callers then take their Python path, whose checks name
    the row. Memory: one int32 per value and one Python string per distinct id.
    """
    parts = [chunk for column in columns for chunk in chunks(column)]
    if any(chunk.null_count for chunk in parts):
        return None
    if not parts or not sum(map(len, parts)):
        return [np.zeros(0, dtype=np.int32) for _ in columns], np.zeros(0, dtype=object)
    encoded = pa.chunked_array(parts).dictionary_encode()
    # pyarrow gives every chunk the one shared dictionary; anything else (another buffer, or the
    # same buffer seen at another length) is unified first
    if len({(chunk.dictionary.buffers()[1].address, len(chunk.dictionary)) for chunk in encoded.chunks}) > 1:
        encoded = pa.chunked_array([encoded.combine_chunks()])
    labels = encoded.chunks[0].dictionary.to_pylist()
    if any(not label.strip() for label in labels):
        return None
    order = np.argsort(np.array(labels, dtype=object), kind="stable")
    rank = np.empty(len(order), dtype=np.int32 if len(order) < 2**31 else np.int64)
    rank[order] = np.arange(len(order))
    codes = np.concatenate([rank[chunk.indices.to_numpy()] for chunk in encoded.chunks])
    del encoded
    release_arrow_cache()
    ends = np.cumsum([len(column) for column in columns])
    return np.split(codes, ends[:-1]), np.array(labels, dtype=object)[order]


def release_arrow_cache() -> None:
    """Return the memory Arrow's pool keeps after frees (evaluate's writer leaves hundreds of MiB
    there at 5M rows) to the system, so the numpy work that follows can use it."""
    pa.default_memory_pool().release_unused()

def numbers(column) -> np.ndarray | None:
    """A numeric column as a numpy array (no copy for one chunk); None when a value is null."""
    parts = chunks(column)
    if any(chunk.null_count for chunk in parts):
        return None
    return pa.chunked_array(parts, type=parts[0].type if parts else pa.float64()).to_numpy()
