"""Readers of the Czech News STS text release (paper 004 §8), with validation.

Every file is UTF-8 (a leading byte-order mark is dropped), tab-separated, without header and
without any quoting (Czech direct speech holds ``"``), with LF or CRLF line ends:

- test (``free-test.tsv``, ``dep-test.tsv``): sentence1, sentence2, mean score, the individual
  annotations (comma-separated ints 0–6), the round-1 (R1) score of the pair;
- train (``train-raw.tsv``, ``train-n2.tsv``, ``train-n1.tsv``): sentence1, sentence2, R1 score;
- context-dependent test: each sentence field is the key sentence in its context, the key sentence
  marked ``<sent>…</sent>``.

Bad rows raise :class:`~dataset_scripts.errors.DataValidationError` (file, 1-based row, rule);
with ``on_invalid="omit"`` they are dropped and counted per rule instead. Numbers are ASCII digits
only (``٣`` is refused, not read as 3). A file without a (valid) row is an error. The R1 score of a test
pair is metadata, not the label: an out-of-range R1 value (the real free test has one −4) is kept
as written and flagged, never clipped.
"""

from __future__ import annotations

import codecs
import re
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

from semrel.metrics.errors import check_on_invalid

from ..errors import DataValidationError
from ..textio import NUMBER_RULE, ascii_number

SCALE = (0, 6)
MEAN_TOLERANCE = 0.005  # a stated mean may be rounded to 2 decimals, no coarser
TEST_FIELDS = ("sentence1", "sentence2", "mean score", "annotations", "R1 score")
TRAIN_FIELDS = ("sentence1", "sentence2", "R1 score")
_INT = re.compile(r"-?[0-9]+")
_KEY = re.compile(r"<sent>(.*?)</sent>", re.DOTALL)


def _lines(path: str | Path, data: bytes | None = None) -> Iterator[tuple[int, str]]:
    """(1-based row, line without its LF/CRLF end) of ``data`` (default: the file's bytes); a
    final empty line is no row.

    Bytes are split on LF only (a lone CR inside a field stays text), then decoded as UTF-8.
    """
    data = Path(path).read_bytes() if data is None else data
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for row, raw in enumerate(lines, start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataValidationError(path, row, "not valid UTF-8", str(exc)) from None
        yield row, line[:-1] if line.endswith("\r") else line


def _fields(path, row: int, line: str, names: tuple[str, ...]) -> list[str]:
    fields = line.split("\t")
    if len(fields) != len(names):
        raise DataValidationError(path, row, f"wrong field count: expected {len(names)} "
                                  f"tab-separated fields ({', '.join(names)})",
                                  f"got {len(fields)}")
    for name, value in zip(names[:2], fields[:2], strict=True):
        if not value.strip():
            raise DataValidationError(path, row, f"empty {name}")
    return fields


def _int(path, row: int, raw: str, what: str) -> int:
    if not _INT.fullmatch(raw.strip()):
        raise DataValidationError(path, row, f"{what} must be an integer (ASCII digits)",
                                  repr(raw))
    return int(raw)


def _in_scale(path, row: int, value: int, what: str) -> int:
    if not SCALE[0] <= value <= SCALE[1]:
        raise DataValidationError(path, row, f"{what} out of range {SCALE[0]}–{SCALE[1]}",
                                  str(value))
    return value


def _read(path, parse_row: Callable[[str, int, str], dict], on_invalid: str,
          data: bytes | None) -> tuple[list[dict], Counter]:
    check_on_invalid(on_invalid)
    rows, omitted = [], Counter()
    for row, line in _lines(path, data):
        try:
            rows.append(parse_row(str(path), row, line))
        except DataValidationError as exc:
            if on_invalid == "raise":
                raise
            omitted[exc.rule] += 1
    if not rows:
        raise DataValidationError(path, None, "no valid rows" if omitted else "empty file",
                                  f"{sum(omitted.values())} invalid rows omitted" if omitted else "")
    return rows, omitted


def parse_test_row(path: str, row: int, line: str, n_annotations: int | None = None) -> dict:
    """One test row -> dict(row, sentence1, sentence2, score, annotations, r1_score_raw).

    ``score`` is the mean of the annotations, which must agree with the stated mean within
    ``MEAN_TOLERANCE``; ``n_annotations`` (if given) is the exact count required.
    """
    s1, s2, mean, annotations, r1 = _fields(path, row, line, TEST_FIELDS)
    values = [_in_scale(path, row, _int(path, row, a, "annotation"), "annotation")
              for a in annotations.split(",")]
    if n_annotations is not None and len(values) != n_annotations:
        raise DataValidationError(path, row, f"expected exactly {n_annotations} annotations",
                                  f"got {len(values)}: {annotations!r}")
    stated = ascii_number(mean)
    if stated is None:
        raise DataValidationError(path, row, f"mean score must be a number ({NUMBER_RULE})",
                                  repr(mean))
    score = sum(values) / len(values)
    if not abs(stated - score) <= MEAN_TOLERANCE:
        raise DataValidationError(path, row, "mean disagrees with its annotations",
                                  f"stated {mean}, mean of {annotations} is {score:.6f}")
    return {"row": row, "sentence1": s1, "sentence2": s2, "score": score,
            "annotations": values, "r1_score_raw": _int(path, row, r1, "R1 score")}


def parse_train_row(path: str, row: int, line: str) -> dict:
    """One train row -> dict(row, sentence1, sentence2, score); the R1 score is the label (0–6)."""
    s1, s2, r1 = _fields(path, row, line, TRAIN_FIELDS)
    score = _in_scale(path, row, _int(path, row, r1, "R1 score"), "R1 score")
    return {"row": row, "sentence1": s1, "sentence2": s2, "score": float(score)}


def key_sentence(path: str, row: int, text: str, side: str) -> str:
    """The ``<sent>…</sent>`` sentence of a context field (the whole field if it has no mark)."""
    opens, closes = text.count("<sent>"), text.count("</sent>")
    if opens == closes == 0:
        return text
    keys = _KEY.findall(text)
    if opens != 1 or closes != 1 or len(keys) != 1 or not keys[0].strip():
        raise DataValidationError(path, row, "the key sentence must be marked by exactly one "
                                  "non-empty <sent>…</sent>",
                                  f"{side}: {opens} <sent>, {closes} </sent>")
    return keys[0]


def parse_dep_row(path: str, row: int, line: str) -> dict:
    """A context-dependent test row: a test row whose sentences are contexts with a marked key."""
    pair = parse_test_row(path, row, line)
    if "<sent>" not in pair["sentence1"] + pair["sentence2"]:
        raise DataValidationError(path, row, "no <sent>…</sent> key sentence in a "
                                  "context-dependent row")
    pair["context1"], pair["context2"] = pair["sentence1"], pair["sentence2"]
    pair["sentence1"] = key_sentence(path, row, pair["context1"], "sentence1")
    pair["sentence2"] = key_sentence(path, row, pair["context2"], "sentence2")
    return pair


def read_test(path, *, n_annotations: int | None = None, on_invalid: str = "raise",
              data: bytes | None = None):
    """Rows of a context-free test file and the count of omitted rows per rule (``data``: the
    file's bytes if already read)."""
    return _read(path, lambda p, r, line: parse_test_row(p, r, line, n_annotations), on_invalid,
                 data)


def read_dep(path, *, on_invalid: str = "raise", data: bytes | None = None):
    """Rows of a context-dependent test file and the count of omitted rows per rule."""
    return _read(path, parse_dep_row, on_invalid, data)


def read_train(path, *, on_invalid: str = "raise", data: bytes | None = None):
    """Rows of a train file (raw, N2 or N1) and the count of omitted rows per rule."""
    return _read(path, parse_train_row, on_invalid, data)
