"""The guards of a push: nothing that leaves this machine may hold an Amazon Mechanical Turk WorkerId,
a path of this machine, or (a model) the gold labels of a dataset that may not be redistributed.

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

Local paths (:func:`scan_local_paths`): every text file, a JSON file through each of its keys and
string values (so ``\\/tmp\\/x`` escapes do not hide one), is searched for an absolute path into a
top-level folder of this machine (``/tmp/...``, ``/home/...``, ``/work/...``: the folders ``/``
holds here, and the usual ones elsewhere) or a Windows drive path. Binary files (Parquet rows, PNG,
weights, wheels) are the data or the model itself and are not searched for paths.

Gold labels (:func:`scan_gold_labels`): a JSON object with a ``labels``/``references``/``gold``
key holding numbers, in any file of a model repo whose run was evaluated on data that may not be
redistributed (its predictions may go; the references stay).
"""

from __future__ import annotations

import json
import os
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


# Top-level folders a local path starts with: those of this machine and the usual ones elsewhere
USUAL_ROOTS = ("home", "tmp", "root", "Users", "work", "workspace", "mnt", "media", "private",
               "var", "opt", "srv", "data", "scratch", "content", "usr", "Volumes")
GOLD_KEYS = ("labels", "references", "gold")


def _roots() -> list[str]:
    try:
        here = [e.name for e in os.scandir("/") if e.is_dir(follow_symlinks=False)]
    except OSError:
        here = []
    return sorted({*USUAL_ROOTS, *here})


def local_path_regex() -> re.Pattern:
    """An absolute path into a top-level folder (``/tmp/x``, ``/home/me``), not inside a URL or
    a longer word (``https://h.co/data/x``, ``and/or``), or a Windows drive path (``C:\\x``)."""
    roots = "|".join(re.escape(r) for r in _roots())
    return re.compile(rf"(?<![\w.~:/\\-])/(?:{roots})(?![\w.+-])[^\s\"'`<>)\]]*|\b[A-Za-z]:\\[^\s\"'`<>]+")


def _json_strings(value, where: str = "") -> Iterator[tuple[str, str]]:
    """(JSON path, string) of every key and string value inside ``value``."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield f"{where}.{key}" if where else str(key), str(key)
            yield from _json_strings(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _json_strings(item, f"{where}[{i}]")
    elif isinstance(value, str):
        yield where, value


def _text(path: Path) -> str | None:
    """The text of a UTF-8 file without NUL bytes (None: binary, or Parquet)."""
    data = Path(path).read_bytes()
    if data[:4] == b"PAR1" or b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _json(text: str):
    try:
        return json.loads(text)
    except ValueError:
        return None


def _safetensors_metadata(path: Path) -> dict | None:
    """The ``__metadata__`` of a safetensors file (text inside the binary: it may name paths)."""
    with open(path, "rb") as handle:
        head = handle.read(8)
        size = int.from_bytes(head, "little") if len(head) == 8 else 0
        if not 2 <= size <= 100_000_000:
            return None
        header = handle.read(size)
    parsed = _json(header.decode("utf-8", "replace")) if header[:1] == b"{" else None
    return parsed.get("__metadata__") if isinstance(parsed, dict) else None


def scan_local_paths(folder: Path, files: Iterable[str]) -> list[str]:
    """``"<file>: names a path of this machine (<path>)"`` for every text or JSON file under
    ``folder`` that holds an absolute local path (JSON: also the key that holds it), and for the
    metadata of every ``.safetensors`` file (the weights themselves are numbers)."""
    regex, found = local_path_regex(), []
    for rel in files:
        text = _text(Path(folder) / rel)
        if text is None:
            metadata = _safetensors_metadata(Path(folder) / rel) if rel.endswith(".safetensors") else None
            hits = [(where, hit[0]) for where, s in _json_strings(metadata or {}) if (hit := regex.search(s))]
            found += [f"{rel}: its metadata names a path of this machine ({hits[0][1]!r} at {hits[0][0]})"
                      ] if hits else []
            continue
        data = _json(text) if rel.endswith(".json") or text.lstrip()[:1] in "{[" else None
        if data is not None:
            hits = [(where, hit[0]) for where, s in _json_strings(data) if (hit := regex.search(s))]
            found += [f"{rel}: names a path of this machine ({hits[0][1]!r} at {hits[0][0] or 'top'}"
                      f"{f', and {len(hits) - 1} more' if len(hits) > 1 else ''})"] if hits else []
        elif hit := regex.search(text):
            line = text.count("\n", 0, hit.start()) + 1
            found.append(f"{rel}:{line}: names a path of this machine ({hit[0]!r})")
    return found


def _gold(value, where: str = "", record: bool = False) -> Iterator[tuple[str, int]]:
    """(JSON path, count) of each ``GOLD_KEYS`` key holding numbers inside ``value``: a list of
    numbers anywhere, or one number in a record (an object inside a list). A lone number under such
    a key elsewhere is a name, not a label (a tokenizer's vocabulary maps the word "gold" to its id)."""
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{where}.{key}" if where else str(key)
            numbers = item if isinstance(item, list) else [item] if record else []
            if key.lower() in GOLD_KEYS and numbers and all(
                    isinstance(v, int | float) and not isinstance(v, bool) for v in numbers):
                yield here, len(numbers)
            else:
                yield from _gold(item, here)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _gold(item, f"{where}[{i}]", record=True)


def scan_gold_labels(folder: Path, files: Iterable[str], data: str) -> list[str]:
    """``"<file>: holds gold labels ..."`` for every JSON file under ``folder`` with a
    ``labels``/``references``/``gold`` key holding numbers (a run evaluated on ``data``)."""
    found = []
    for rel in files:
        text = _text(Path(folder) / rel)
        parsed = _json(text) if text is not None else None
        for where, n in _gold(parsed) if parsed is not None else ():
            found.append(f"{rel}: holds {n} gold label(s) of {data} (key {where!r}); a model repo "
                         "carries predictions only, the references stay here")
    return found
