"""The raw-WorkerId guard: nothing that leaves this machine may hold an Amazon Mechanical Turk WorkerId.

Two nets, both applied to every string of every file of an artefact:

- the **real ids**: every WorkerId the crowd-sts parser sees in the upstream files (and the
  authors' worker list), matched anywhere, also inside longer words (``worker_A1B2...``);
- the **id pattern**: ``A`` + 11–20 upper-case letters or digits not inside a longer run of such
  characters. No digit is required (some real ids have none), and no ``\\b`` either (``_`` is a word
  character, so ``\\b`` misses ``worker_A1B2...``).

Every file is read: a file that decodes as UTF-8 is scanned as text whatever its suffix
(``.log``, ``.html``, none); a Parquet file is scanned through every string value (also inside
lists, structs and maps) and every column and field name. Other binary files (PNG, weights) hold
no text to scan. The patterns are RE2-compatible so pyarrow scans Parquet columns in C++.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

ID_PATTERN = r"(?:^|[^A-Z0-9])A[A-Z0-9]{11,20}(?:[^A-Z0-9]|$)"


def raw_worker_ids(mirror=None) -> frozenset[str]:
    """The WorkerIds of the crowd-sts upstream files (annotation batches and the authors' list),
    read with the dataset's own parser; raises the fetch error when a file cannot be had."""
    from semrel.dataset_scripts.crowd_sts.builder import AUTHORS_LIST, SOURCES
    from semrel.dataset_scripts.crowd_sts.reading import read_annotation_file
    from semrel.dataset_scripts.sources import fetch

    ids = set()
    for source in SOURCES:
        ids.update(read_annotation_file(fetch(source, mirror=mirror), source.file_name)["worker_id"])
    authors = Path(fetch(AUTHORS_LIST, mirror=mirror)).read_text(encoding="utf-8")
    ids.update(line.strip() for line in authors.splitlines() if line.strip())
    return frozenset(ids)


def id_regex(known: Iterable[str] = ()) -> str:
    """One regex (Python and RE2) matching the id pattern or any of the ``known`` ids."""
    return "|".join([ID_PATTERN, *(re.escape(i) for i in sorted(known) if i)])


def _strings(array: pa.Array) -> Iterator[pa.Array]:
    """Every string array inside ``array`` (list, struct, map and dictionary values unpacked)."""
    kind = array.type
    if pa.types.is_dictionary(kind):
        yield from _strings(array.dictionary)
    elif pa.types.is_string(kind) or pa.types.is_large_string(kind):
        yield array
    elif pa.types.is_map(kind):
        yield from _strings(array.keys)
        yield from _strings(array.items)
    elif pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        yield from _strings(array.flatten())
    elif pa.types.is_struct(kind):
        for i in range(kind.num_fields):
            yield from _strings(array.field(i))
    # numbers, booleans, binary: no text


def _field_names(schema_or_type) -> Iterator[str]:
    fields = list(schema_or_type) if isinstance(schema_or_type, pa.Schema) else []
    if isinstance(schema_or_type, pa.DataType):
        t = schema_or_type
        if pa.types.is_struct(t):
            fields = [t.field(i) for i in range(t.num_fields)]
        elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
            fields = [t.value_field]
        elif pa.types.is_map(t):
            fields = [t.key_field, t.item_field]
    for f in fields:
        yield f.name
        yield from _field_names(f.type)


def _short(hit: str) -> str:
    return re.sub(r"[^A-Z0-9]", "", hit)[:4] + "…"


def scan_parquet(path: Path, regex: str) -> list[str]:
    """Column/field names and string values of a Parquet file that match ``regex``."""
    table = pq.read_table(path)
    found = [f"a column/field name looks like a raw MTurk WorkerId ({_short(re.search(regex, name)[0])})"
             for name in _field_names(table.schema) if re.search(regex, name)]
    for name in table.column_names:
        for chunk in table[name].chunks:
            for strings in _strings(chunk):
                hits = pc.filter(strings, pc.match_substring_regex(strings, regex))
                if len(hits):
                    found.append(f"column {name!r} holds {len(hits)} value(s) with what looks like "
                                 f"a raw MTurk WorkerId ({_short(re.search(regex, hits[0].as_py())[0])})"
                                 ": pseudonymise them")
    return found


def scan_file(path: Path, regex: str) -> list[str]:
    """What in one file looks like a raw WorkerId (any text file, or a Parquet file)."""
    path = Path(path)
    data = path.read_bytes()
    if data[:4] == b"PAR1":
        return scan_parquet(path, regex)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return []  # binary (PNG, weights): no text
    hit = re.search(regex, text)
    return [f"contains what looks like a raw MTurk WorkerId ({_short(hit[0])})"] if hit else []


def scan_files(folder: Path, files: Iterable[str], known: Iterable[str] = ()) -> list[str]:
    """``"<file>: <problem>"`` for every file under ``folder`` holding a raw WorkerId."""
    regex = id_regex(known)
    return [f"{rel}: {problem}" for rel in files for problem in scan_file(Path(folder) / rel, regex)]
