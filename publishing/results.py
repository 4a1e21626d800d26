"""``benchmarks/results.json``: the measured figures of a source checkout, one top-level key per
study, and ``fine_tuned``, the best fine-tuned figure per dataset that the reliability report shows
(:func:`~publishing.report.fine_tuned_figure`; ``benchmarks/RESULTS.md`` shows the same rows).

:func:`store` replaces one key's value and leaves every other key's text as it was written (each
study formats its own figures), so a study rewriting its figures changes only its own lines.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from semrel.metrics.output_files import write_whole

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results.json"
FINE_TUNED = "fine_tuned"
_SPACE = re.compile(r"\s*")


def _spans(text: str, where: str) -> tuple[dict[str, tuple[int, int]], int]:
    """Each top-level key's value as a (start, end) span of ``text``, and where the closing brace
    of the object is."""
    decoder = json.JSONDecoder()
    at = _SPACE.match(text).end()
    if text[at:at + 1] != "{":
        raise ValueError(f"{where}: must hold one JSON object")
    at += 1
    spans = {}
    while True:
        at = _SPACE.match(text, at).end()
        if text[at:at + 1] == "}":
            return spans, at
        key, at = decoder.raw_decode(text, at)
        at = _SPACE.match(text, at).end() + 1  # past the colon
        start = _SPACE.match(text, at).end()
        _, end = decoder.raw_decode(text, start)
        spans[key] = (start, end)
        at = _SPACE.match(text, end).end()
        at += text[at:at + 1] == ","


def store(key: str, value, path: str | Path = RESULTS) -> None:
    """``value`` under the top-level ``key`` of the results file (appended when new), indented as
    the file is (two spaces), every other key's text unchanged; written whole. A file that is not
    there yet is an empty object."""
    path = Path(path)
    text = path.read_text(encoding="utf-8") if path.is_file() else "{\n}\n"
    spans, closing = _spans(text, str(path))
    body = json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n  ")
    if key in spans:
        start, end = spans[key]
        text = text[:start] + body + text[end:]
    else:
        head = text[:closing].rstrip()
        text = head + ("," if spans else "") + f"\n  {json.dumps(key)}: {body}\n" + text[closing:]
    json.loads(text)  # still one JSON object
    write_whole(path, text, "path")


def update(key: str, fields: dict, path: str | Path = RESULTS) -> None:
    """:func:`store` of the object under ``key`` with ``fields`` replaced and its other fields kept
    (a study that measures one part at a time)."""
    path = Path(path)
    earlier = json.loads(path.read_text(encoding="utf-8")).get(key, {}) if path.is_file() else {}
    store(key, {**earlier, **fields}, path)


def store_fine_tuned(dataset_id: str, entry: dict, path: str | Path = RESULTS) -> None:
    """``entry`` (``spearman``, ``model``, ``protocol``, ``machine``, ``command``) as the best
    fine-tuned figure of ``dataset_id``, the report's overview cell."""
    missing = {"spearman", "model", "protocol", "machine", "command"} - set(entry)
    if missing:
        raise ValueError(f"a fine-tuned figure needs {', '.join(sorted(missing))}")
    cells = json.loads(Path(path).read_text(encoding="utf-8")).get(FINE_TUNED, {})
    store(FINE_TUNED, {**cells, dataset_id: entry}, path)
