"""Held-out prediction files in the repository: each file behind a fine-tuned figure of
``benchmarks/RESULTS.md``, copied to ``benchmarks/predictions/<dataset>/<recipe>/<name>`` and
recorded in ``benchmarks/results.json`` under :data:`KEY` (by its path there: sha256, rows,
dataset, config, split, format, command, machine, figure), so that whoever holds the labels scores
it without training anything.

The formats are those ``semrel predict`` writes (:func:`semrel.trainers.prediction.write_submission`),
told apart by the file's suffix:

- ``.csv``: SemEval-2024 Task 1's ``PairID,Pred_Score`` (:mod:`semrel.metrics.submission`); the
  ids are the split's ``pair_id`` column (semrel-2024; czech-news-sts, whose release has no
  submission format, with its loader's ids ``test-0001`` ...; str-2021, a file per CV fold's test split);
- ``.json``: C-STS's ``{"0": score, ..., "n-1": score}``, a key per row of the split.

:func:`check` holds a file against its split as the suite's loader gives it (the mirror override
included) and never reads a label: the format, every id of the split present exactly once, no
other id, every score a finite number. Each failure is one
:class:`~semrel.metrics.errors.DataValidationError` naming the file, the row and the rule.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from semrel.metrics.errors import DataValidationError, ParameterError
from semrel.metrics.input_files import read_text
from semrel.metrics.output_files import unwritable, write_whole
from semrel.metrics.submission import IdScores, read_predictions

from .results import RESULTS, update

KEY = "prediction_files"  # the files' entries in results.json
BENCHMARKS = RESULTS.parent  # predictions/ and results.json: the default of --publish
FORMATS = {".csv": "PairID,Pred_Score (SemEval-2024 Task 1)", ".json": 'C-STS {"row": score}'}
FIELDS = ("sha256", "rows", "dataset", "config", "split", "format", "command", "machine", "figure")
HELD_BACK = "labels held back: scored outside the project"
_SLUG = re.compile(r"^[a-z0-9][a-z0-9.+-]*$")


class _Pairs(list):
    """A JSON object as its (key, value) pairs, each key as often as the file has it."""


def read_row_scores(path) -> IdScores:
    """A C-STS submission: one JSON object ``{"0": score, ...}``, each key once, each value a
    finite number (its entries are the rows errors count from 1)."""
    text = read_text(path, header=False)
    if not text.strip():
        raise DataValidationError(path, None, 'empty file (no JSON object {"0": score, ...})')
    try:
        found = json.loads(text, object_pairs_hook=_Pairs)
    except json.JSONDecodeError as err:
        raise DataValidationError(path, None, "not JSON", f"line {err.lineno} column {err.colno}: {err.msg}") from None
    if not isinstance(found, _Pairs):
        raise DataValidationError(path, None, 'must hold one JSON object {"0": score, ...}',
                                  f"got a JSON {type(found).__name__}")
    if not found:
        raise DataValidationError(path, None, "no predictions (an empty object)")
    seen: dict[str, int] = {}
    for row, (key, value) in enumerate(found, start=1):
        if key in seen:
            raise DataValidationError(path, row, f"key repeated (first at row {seen[key]})", key)
        seen[key] = row
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise DataValidationError(path, row, "score is not a number", f"{key}: {value!r}")
        if not math.isfinite(value):
            raise DataValidationError(path, row, "score must be a finite number", f"{key}: {value!r}")
    return IdScores(path, [k for k, _ in found], [v for _, v in found])


def split_ids(path, dataset: str, config: str, split: str, *, mirror=None, cache_dir=None) -> list[str]:
    """The ids the prediction file ``path`` of ``dataset``/``config``/``split`` holds, as the
    suite's loader gives the split (never its labels): ``pair_id`` (``.csv``) or the row numbers."""
    import warnings

    import semrel.dataset_scripts

    with warnings.catch_warnings():  # its labels are not read: that they are held back is no news here
        warnings.filterwarnings("ignore", r"semrel-2024: .* \(the labelled English test, ")
        splits = semrel.dataset_scripts.load(dataset, config, mirror=mirror, cache_dir=cache_dir)
    if split not in splits:
        raise ParameterError("split", split, f"must be a split of {dataset}/{config}: {', '.join(splits)}")
    rows = splits[split]
    if Path(path).suffix.lower() == ".json":
        return [str(i) for i in range(len(rows))]
    if "pair_id" not in rows.column_names:
        raise ParameterError("path", str(path), f"is a PairID,Pred_Score file, but {dataset}/{config}/{split} "
                             'has no pair_id column: its file is the JSON {"0": score, ...} by row')
    return [str(i) for i in rows["pair_id"]]


def format_of(path) -> str:
    """The format a file's suffix names (:data:`FORMATS`)."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ParameterError("path", str(path), f"must end in {' or '.join(FORMATS)} (a file of "
                             f"{' or '.join(FORMATS.values())})")
    return FORMATS[suffix]


def check(path, dataset: str, config: str, split: str, *, mirror=None, cache_dir=None) -> int:
    """The rows of the prediction file ``path`` once it holds a finite score for every id of the
    split and no other id (module docstring); else the first rule it breaks."""
    format_of(path)
    suffix = Path(path).suffix.lower()
    found = read_predictions(path) if suffix == ".csv" else read_row_scores(path)
    same_ids(found, split_ids(path, dataset, config, split, mirror=mirror, cache_dir=cache_dir),
             f"{dataset}/{config}/{split}", "PairID" if suffix == ".csv" else "key")
    return len(found.ids)


def same_ids(found: IdScores, ids: Sequence[str], where: str, what: str) -> None:
    """``found`` predicts exactly ``ids`` (the rows of ``where``), each once (``found`` holds no
    id twice)."""
    expected = {pair_id: row for row, pair_id in enumerate(ids, start=1)}
    for row, pair_id in enumerate(found.ids, start=1):
        if pair_id not in expected:
            raise DataValidationError(found.file, row, f"{what} not in {where}", pair_id)
    predicted = set(found.ids)
    missing = [pair_id for pair_id in ids if pair_id not in predicted]
    if missing:
        raise DataValidationError(found.file, None, f"every {what} of {where} must be predicted: "
                                  f"{len(missing)} missing", f"first {missing[0]}, row {expected[missing[0]]} "
                                  f"of {len(ids)}")


def sha256(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@dataclass(frozen=True)
class Prediction:
    """One held-out prediction file to publish: where it is now, the split it predicts, the
    recipe (a short slug: its folder under ``predictions/<dataset>/``), its figure where one is
    known (``{"spearman": ...}``; else a sentence such as :data:`HELD_BACK`) and its name there
    (default: the file's own)."""

    source: Path
    dataset: str
    config: str
    split: str
    recipe: str
    figure: dict | str
    name: str | None = None

    def relative(self) -> str:
        """Its path under the benchmarks folder."""
        return f"predictions/{self.dataset}/{self.recipe}/{self.name or Path(self.source).name}"


def publish(files: Sequence[Prediction], *, command: str, machine: str, into=BENCHMARKS, mirror=None,
            cache_dir=None) -> list[Path]:
    """Every file checked (:func:`check`) before any is copied; then each copied to
    ``into/predictions/<dataset>/<recipe>/<name>``, written whole (a failure leaves the previous
    file), and recorded in ``into/results.json`` under :data:`KEY` with ``command`` (what made
    it) and ``machine``; the copies' paths."""
    into, entries = Path(into), {}
    if not files:
        raise ValueError("no prediction file to publish")
    for file in files:
        if not _SLUG.match(file.recipe):
            raise ParameterError("recipe", file.recipe, "must be a short slug: a-z, 0-9, '.', '+', '-'")
        rows = check(file.source, file.dataset, file.config, file.split, mirror=mirror, cache_dir=cache_dir)
        entries[file.relative()] = {"rows": rows, "dataset": file.dataset, "config": file.config,
                                    "split": file.split, "format": format_of(file.source), "command": command,
                                    "machine": machine, "figure": file.figure}
    for file in files:
        data = Path(file.source).read_bytes()
        write_whole(into / file.relative(), data, "prediction file")
        entries[file.relative()] = {"sha256": hashlib.sha256(data).hexdigest(), **entries[file.relative()]}
    update(KEY, entries, into / RESULTS.name)
    return [into / name for name in entries]


def published(relative: str, into=BENCHMARKS) -> Path | None:
    """The file ``into/<relative>`` when ``into/results.json`` records it (``relative`` as
    :meth:`Prediction.relative` names it) and its bytes are the recorded ones; None when it is not
    recorded; ``ValueError`` naming it when it is recorded but missing or changed."""
    results = Path(into) / RESULTS.name
    entries = json.loads(results.read_text(encoding="utf-8")).get(KEY, {}) if results.is_file() else {}
    if relative not in entries:
        return None
    path = Path(into) / relative
    if not path.is_file():
        raise ValueError(f"{results}: {KEY} {relative}: no such file")
    if (digest := sha256(path)) != entries[relative]["sha256"]:
        raise ValueError(f"{results}: {KEY} {relative}: sha256 {digest}, but the entry says "
                         f"{entries[relative]['sha256']}")
    return path


def publish_or_exit(files: Sequence[Prediction], *, command: str, machine: str, into=BENCHMARKS) -> list[Path]:
    """:func:`publish` for a script's ``--publish``: a file it cannot publish (missing, breaking a rule
    of its split, unwritable) ends the script with one line naming it and the rule."""
    try:
        return publish(files, command=command, machine=machine, into=into)
    except (ValueError, OSError) as exc:  # DataValidationError, ParameterError, SourceError: one line each
        raise SystemExit(f"--publish: {str(exc).strip().splitlines()[0]}") from None


def publish_problem(into, smoke: bool) -> str | None:
    """Why a script may not publish into ``into`` (None: it may): a smoke run (a tiny model, a
    few steps) into the checkout's benchmarks folder, or a folder no file can be written in."""
    if smoke and Path(into).resolve() == BENCHMARKS:
        return "--publish: a smoke run (--max-steps, --model) goes into another folder: --publish DIR"
    blocked = unwritable(into)
    if blocked:
        return f"--publish {into}: {blocked[0]} cannot be written ({blocked[1] or 'not a folder'})"
    return None


def add_publish_flag(parser, what: str) -> None:
    """``--publish [DIR]`` on a script's parser; ``what``: the files it publishes."""
    parser.add_argument("--publish", nargs="?", const=BENCHMARKS, type=Path, metavar="DIR",
                        help=f"copy {what} into DIR/predictions/<dataset>/<recipe>/ and record them in "
                             "DIR/results.json (default DIR: the checkout's benchmarks/)")


def this_machine() -> str:
    """This machine as RESULTS.md names machines: ``1× <GPU>, N CPU cores`` where torch sees a
    GPU, else ``N-core CPU``."""
    import os

    import torch

    cores = os.cpu_count()
    if not torch.cuda.is_available():
        return f"{cores}-core CPU"
    return f"{torch.cuda.device_count()}× {torch.cuda.get_device_name(0)}, {cores} CPU cores"


def check_entries(results=RESULTS, *, mirror=None, cache_dir=None) -> int:
    """Every :data:`KEY` entry of ``results``: its file there (relative to the results file's
    folder), its sha256 and rows as recorded, its ids those of its split (:func:`check`); the
    number of entries, or the first mismatch named in one line."""
    results = Path(results)
    entries = json.loads(results.read_text(encoding="utf-8")).get(KEY, {})
    for name, entry in entries.items():
        where = f"{results}: {KEY} {name}"
        if missing := [f for f in FIELDS if f not in entry]:
            raise ValueError(f"{where}: the entry lacks {', '.join(missing)}")
        path = results.parent / name
        if not path.is_file():
            raise ValueError(f"{where}: no such file")
        if (digest := sha256(path)) != entry["sha256"]:
            raise ValueError(f"{where}: sha256 {digest}, but the entry says {entry['sha256']}")
        if entry["format"] != format_of(path):
            raise ValueError(f"{where}: a {format_of(path)} file, but the entry says {entry['format']}")
        rows = check(path, entry["dataset"], entry["config"], entry["split"], mirror=mirror, cache_dir=cache_dir)
        if rows != entry["rows"]:
            raise ValueError(f"{where}: {rows} rows, but the entry says {entry['rows']}")
    return len(entries)
