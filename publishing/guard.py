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
holds here, and the usual ones elsewhere), also behind a scheme (``dir:/work/x``), any ``file:``
URL (``file:///work/x``) or a Windows drive path. Binary files (Parquet rows, PNG, weights,
wheels) are the data or the model itself and are not searched for paths.

Gold labels of data that may not be redistributed, in a model repo:

- by key (:func:`scan_gold_labels`): a JSON key of :data:`GOLD_KEYS` holding numbers (also
  written as strings, also in nested lists), named by the ``data``/``split`` of the record that
  holds it, else by the run's data;
- by value (:func:`scan_recorded`): what the run folder itself records of such data
  (:class:`Recorded`: its predictions files' labels and sentences) found in any text file, under
  any key or none -- :data:`RUN_OF_LABELS` gold labels in their recorded order among the file's
  numbers, or a recorded sentence.
"""

from __future__ import annotations

import functools
import json
import os
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

ID_PATTERN = r"(?:^|[^A-Z0-9])A[A-Z0-9]{11,20}(?:[^A-Z0-9]|$)"


def raw_worker_ids(mirror=None) -> frozenset[str]:
    """The WorkerIds of the crowd-sts upstream files (annotation batches and the authors' list),
    read with the dataset's own parser; raises the fetch error when a file cannot be had. Files
    of the same sha256 (which ``fetch`` checked) are parsed once per process."""
    from semrel.dataset_scripts.crowd_sts.builder import AUTHORS_LIST, SOURCES
    from semrel.dataset_scripts.sources import checked_sha256, fetch

    batches = tuple((path := fetch(source, mirror=mirror), source.file_name, checked_sha256(path))
                    for source in SOURCES)
    authors = fetch(AUTHORS_LIST, mirror=mirror)
    return _worker_ids(batches, (authors, checked_sha256(authors)))


@functools.lru_cache(maxsize=4)
def _worker_ids(batches: tuple[tuple[str, str, str], ...], authors: tuple[str, str]) -> frozenset[str]:
    """:func:`raw_worker_ids` of the (path, file name, sha256) of each batch and the authors' list."""
    from semrel.dataset_scripts.crowd_sts.reading import read_annotation_file

    ids = set()
    for path, file_name, _ in batches:
        ids.update(read_annotation_file(path, file_name)["worker_id"])
    listed = Path(authors[0]).read_text(encoding="utf-8")
    ids.update(line.strip() for line in listed.splitlines() if line.strip())
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


def unreadable_parquet(exc: BaseException) -> str:
    """Why a Parquet file cannot be read (pyarrow's first line), in the words of a push refusal."""
    why = (str(exc).strip().splitlines() or [""])[0]
    return (f"is no readable Parquet file ({type(exc).__name__}: {why}): damaged after the build? "
            "build it again (`semrel verify` compares a build with its upstream files)")


def scan_file(path: Path, regex: str) -> list[str]:
    """What in one file looks like a raw WorkerId (any text file, or a Parquet file: one that
    pyarrow cannot read is named so)."""
    path = Path(path)
    data = path.read_bytes()
    if data[:4] == b"PAR1" or path.suffix == ".parquet":
        try:
            return scan_parquet(path, regex)
        except (OSError, ValueError) as exc:  # ArrowInvalid; a damaged footer: UnicodeDecodeError
            return [unreadable_parquet(exc)]
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
GOLD_KEYS = ("labels", "label", "references", "gold", "gold_labels", "gold_scores", "scores", "y_true")


def _roots() -> list[str]:
    try:
        here = [e.name for e in os.scandir("/") if e.is_dir(follow_symlinks=False)]
    except OSError:
        here = []
    return sorted({*USUAL_ROOTS, *here})


def local_path_regex() -> re.Pattern:
    """An absolute path into a top-level folder (``/tmp/x``, ``/home/me``), not inside a URL or
    a longer word (``https://h.co/data/x``, ``and/or``), also behind a scheme (``dir:/work/x``);
    any ``file:`` URL (``file:///work/x``); or a Windows drive path (``C:\\x``)."""
    roots = "|".join(re.escape(r) for r in _roots())
    rest = r"(?![\w.+-])[^\s\"'`<>)\]]*"
    return re.compile(rf"\bfile:/[^\s\"'`<>)\]]*|\b[A-Za-z][\w+.-]*:/(?:{roots}){rest}"
                      rf"|(?<![\w.~:/\\-])/(?:{roots}){rest}|\b[A-Za-z]:\\[^\s\"'`<>]+")


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


NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
RUN_OF_LABELS = 8  # this many gold labels in a row, at least 3 of them different, are a leak
BETWEEN = 2  # other numbers allowed between two labels of a run (a table's id and prediction)
SENTENCE = (12, 3)  # a recorded text of >= 12 characters and >= 3 words is searched for


def _is_number(value) -> bool:
    """A JSON number, or a string that is one (``"0.25"``)."""
    if isinstance(value, str):
        return NUMBER.fullmatch(value.strip()) is not None
    return isinstance(value, int | float) and not isinstance(value, bool)


def _numbers(item) -> list | None:
    """The numbers of a (nested) list, or None where it holds anything else."""
    flat = []
    for value in item:
        inner = _numbers(value) if isinstance(value, list) else [value] if _is_number(value) else None
        if inner is None:
            return None
        flat += inner
    return flat


def _record_name(record: dict, default: str | None) -> str | None:
    """What a JSON record says it holds (``data``, ``/split`` where it says), else ``default``."""
    data, split = record.get("data"), record.get("split")
    if not (isinstance(data, str) and data):
        return default
    return f"{data}/{split}" if isinstance(split, str) and split else data


def _gold(value, where: str = "", record: bool = False, data: str | None = None
          ) -> Iterator[tuple[str, int, str | None]]:
    """(JSON path, count, the data the enclosing record names) of each ``GOLD_KEYS`` key holding
    numbers inside ``value``: a (nested) list of numbers anywhere, or one number in a record (an
    object inside a list). A lone number under such a key elsewhere is a name, not a label (a
    tokenizer's vocabulary maps the word "gold" to its id)."""
    if isinstance(value, dict):
        data = _record_name(value, data)
        for key, item in value.items():
            here = f"{where}.{key}" if where else str(key)
            numbers = _numbers(item) if isinstance(item, list) else [item] if record and _is_number(item) else None
            if str(key).lower() in GOLD_KEYS and numbers:
                yield here, len(numbers), data
            else:
                yield from _gold(item, here, data=data)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _gold(item, f"{where}[{i}]", record=True, data=data)


def scan_gold_labels(folder: Path, files: Iterable[str], data: str | None,
                     may_go: Callable[[str], bool] = lambda name: False) -> list[str]:
    """``"<file>: holds gold labels ..."`` for every JSON file under ``folder`` with a
    :data:`GOLD_KEYS` key holding numbers: of the data its record names (unless ``may_go`` of
    that name), else of ``data`` (the run's; None: data whose labels may go)."""
    found = []
    for rel in files:
        text = _text(Path(folder) / rel)
        parsed = _json(text) if text is not None else None
        for where, n, recorded in _gold(parsed) if parsed is not None else ():
            name = data if not recorded else None if may_go(recorded) else recorded
            if name:
                found.append(f"{rel}: holds {n} gold label(s) of {name} (key {where!r}); the labels "
                             "of data that may not be redistributed stay here")
    return found


@dataclass(frozen=True)
class Recorded:
    """What a run folder records of data that may not be redistributed (its predictions files):
    ``name`` (``<data>/<split>``), the gold ``labels`` in row order, the ``sentences``."""

    name: str
    labels: tuple[float, ...] = ()
    sentences: frozenset[str] = frozenset()


def written_numbers(text: str) -> list[tuple[float, float]]:
    """(value, tolerance) of every number written in ``text``, in order: a number matches what
    rounds to it at the digits it shows (at least two decimals: ``1`` is 1.00, not 0.7)."""
    found = []
    for token in NUMBER.findall(text):
        mantissa, _, exponent = token.lower().partition("e")
        decimals = len(mantissa.partition(".")[2]) - int(exponent or 0)
        value = float(token)
        if value == value and abs(value) != float("inf"):
            found.append((value, 0.5 * 10.0 ** -max(decimals, 2) + 1e-12))
    return found


def run_of_labels(numbers: list[tuple[float, float]], labels: tuple[float, ...]) -> int:
    """The longest run of ``labels`` (in their order, >= :data:`RUN_OF_LABELS` long with at least
    3 different values) that ``numbers`` hold one after the other, up to :data:`BETWEEN` other
    numbers apart (a table's id or prediction column); 0 when there is none."""
    k = min(RUN_OF_LABELS, len(labels))
    if k < 3 or len(set(labels)) < 3:
        return 0
    order = sorted(range(len(labels)), key=labels.__getitem__)
    values = [labels[j] for j in order]

    def matches(i: int, j: int) -> bool:
        return abs(labels[j] - numbers[i][0]) <= numbers[i][1]

    best = 0
    for i, (value, tolerance) in enumerate(numbers):
        for j in order[bisect_left(values, value - tolerance):bisect_right(values, value + tolerance)]:
            at, n = i, 1
            while j + n < len(labels) and (step := next((d for d in range(1, BETWEEN + 2) if at + d < len(numbers)
                                                         and matches(at + d, j + n)), None)):
                at, n = at + step, n + 1
            if n >= k and n > best and len(set(labels[j:j + n])) >= 3:
                best = n
    return best


def scan_recorded(folder: Path, files: Iterable[str], recorded: Iterable[Recorded]) -> list[str]:
    """``"<file>: ..."`` for every text file under ``folder`` that holds what ``recorded`` lists:
    a run of its gold labels (:func:`run_of_labels`, any key or none, numbers also as strings)
    or one of its sentences (:data:`SENTENCE`; JSON: in any string)."""
    recorded, found = list(recorded), []
    for rel in files:
        text = _text(Path(folder) / rel)
        if text is None:
            continue
        parsed = _json(text) if rel.endswith(".json") else None
        strings = "\n".join(s for _, s in _json_strings(parsed)) if parsed is not None else text
        numbers = written_numbers(text)
        for r in recorded:
            if n := run_of_labels(numbers, r.labels):
                found.append(f"{rel}: holds {n} gold labels of {r.name} in their recorded order; "
                             "the labels of data that may not be redistributed stay here")
            quoted = sorted(s for s in r.sentences if len(s) >= SENTENCE[0]
                            and len(s.split()) >= SENTENCE[1] and s in strings)
            if quoted:
                found.append(f"{rel}: quotes {len(quoted)} sentence(s) of {r.name} (e.g. "
                             f"{quoted[0][:30]!r}…); the texts of data that may not be "
                             "redistributed stay here")
    return found
