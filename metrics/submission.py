"""The official evaluation of SemEval-2024 Task 1 (SemRel, Ousidhoum et al., 2024): Spearman's rho
between predicted and gold relatedness, per language, after aligning the predictions to the gold
pairs by ``PairID``.

A submission is one CSV per language with the header ``PairID,Pred_Score`` (the task's scorer
looks for ``pred_<lang>.csv``); every gold pair id must appear exactly once. A file that cannot
be read or is not UTF-8 CSV, a missing, extra or repeated id, a bad header, a score that is not a
finite number: a
:class:`~semrel.metrics.errors.DataValidationError` naming the file, the row (1-based, header
excluded) and the id; nothing is dropped. The task ranks each language on its own (no overall
score), so :func:`evaluate` returns one Spearman per language.

    rho = r(rank(pred[id]), rank(gold[id]))   over the gold ids, ties sharing the mean rank
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .correlation import correlate
from .errors import DataValidationError
from .input_files import csv_error, read_text
from .output_files import written_whole
from .text_numbers import NUMBER_RULE, ascii_number

PREDICTIONS_HEADER = ("PairID", "Pred_Score")
SUBMISSION_NAME = re.compile(r"^pred_([A-Za-z]+)\.csv$")  # the task's scorer reads pred_<lang>.csv


@dataclass(frozen=True)
class IdScores:
    """Scores keyed by pair id, in file order; ``file`` names where they came from in errors."""

    file: str
    ids: tuple[str, ...]
    scores: np.ndarray

    def __post_init__(self):
        """Every id non-empty and once, every score a finite number (rows counted from 1)."""
        ids = tuple(str(i) for i in self.ids)
        scores = np.asarray(self.scores, dtype=np.float64)
        if scores.shape != (len(ids),):
            raise ValueError(f"{self.file}: {len(ids)} ids but scores of shape {scores.shape}")
        seen: dict[str, int] = {}
        for row, (pair_id, value) in enumerate(zip(ids, scores.tolist(), strict=True), start=1):
            if not pair_id.strip():
                raise DataValidationError(self.file, row, "empty PairID")
            if pair_id in seen:
                raise DataValidationError(self.file, row, f"repeated PairID (first at row {seen[pair_id]})",
                                          pair_id)
            seen[pair_id] = row
            if not math.isfinite(value):
                raise DataValidationError(self.file, row, "score must be a finite number", f"{pair_id}: {value}")
        object.__setattr__(self, "file", str(self.file))
        object.__setattr__(self, "ids", ids)
        object.__setattr__(self, "scores", scores)


@dataclass(frozen=True)
class LanguageScore:
    """Spearman's rho of one language's predictions (the task's measure) over ``n`` pairs."""

    spearman: float
    n: int


def submission_language(path) -> str | None:
    """The language a submission file is named for (``pred_amh.csv`` -> ``amh``), else None.

    >>> submission_language("out/pred_amh.csv"), submission_language("amh.csv")
    ('amh', None)
    """
    match = SUBMISSION_NAME.match(Path(path).name)
    return match[1] if match else None


def _rows(path: Path) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """(header, data rows with their 1-based numbers) of a UTF-8 CSV; a missing, unreadable,
    empty or malformed file is an error naming it (:mod:`.input_files`)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    reader = csv.reader(io.StringIO(read_text(path), newline=""))
    try:
        header = next(reader, None)
        rows = list(enumerate(reader, start=1))
    except csv.Error as err:
        raise csv_error(path, err, reader) from None
    if header is None:
        raise DataValidationError(path, None, "empty file (no header)")
    return header, rows


def _number(file, row: int, pair_id: str, cell: str, what: str) -> float:
    value = ascii_number(cell)
    if value is None and cell.strip().lower() in ("nan", "inf", "-inf", "+inf", "infinity", "-infinity"):
        value = float(cell)  # a finite number is due: said below
    if value is None:
        raise DataValidationError(file, row, f"{what} is not a number ({NUMBER_RULE})", f"{pair_id}: {cell!r}")
    if not math.isfinite(value):
        raise DataValidationError(file, row, f"{what} must be a finite number", f"{pair_id}: {cell!r}")
    return value


def read_predictions(path) -> IdScores:
    """A submission file: header ``PairID,Pred_Score`` (names compared case-insensitively, as the
    task's scorer does), then one row per pair: its id and a finite score; each id once."""
    header, rows = _rows(path)
    if [h.strip().lower() for h in header] != [h.lower() for h in PREDICTIONS_HEADER]:
        raise DataValidationError(path, None, f"header must be {','.join(PREDICTIONS_HEADER)}",
                                  f"got {','.join(header)}")
    ids, scores = [], []
    for row, cells in rows:
        if len(cells) != 2:
            raise DataValidationError(path, row, "a row has 2 fields (PairID,Pred_Score)",
                                      f"got {len(cells)}: {cells!r}")
        pair_id = cells[0].strip()
        ids.append(pair_id)
        scores.append(_number(path, row, pair_id, cells[1], "Pred_Score"))
    if not ids:
        raise DataValidationError(path, None, "no predictions (a header only)")
    return IdScores(path, ids, scores)


def read_gold(path) -> IdScores:
    """Gold scores of one language and split: a CSV with ``PairID`` and ``Score`` columns in any
    order (names case-insensitive, as the task's files have ``score``, ``Score`` and Punjabi's
    ``Text,Score,PairID``); other columns (``Text``) are ignored. A row without a score (labels
    not published) is an error."""
    header, rows = _rows(path)
    names = [h.strip().lower() for h in header]
    missing = [c for c in ("pairid", "score") if names.count(c) != 1]
    if missing:
        raise DataValidationError(path, None, "header needs one PairID and one Score column",
                                  f"got {','.join(header)}")
    at_id, at_score = names.index("pairid"), names.index("score")
    ids, scores = [], []
    for row, cells in rows:
        if len(cells) != len(header):
            raise DataValidationError(path, row, f"a row has {len(header)} fields like the header",
                                      f"got {len(cells)}")
        pair_id = cells[at_id].strip()
        if not cells[at_score].strip():
            raise DataValidationError(path, row, "no gold Score (labels not published?)", pair_id)
        ids.append(pair_id)
        scores.append(_number(path, row, pair_id, cells[at_score], "Score"))
    if not ids:
        raise DataValidationError(path, None, "no gold pairs (a header only)")
    return IdScores(path, ids, scores)


def align(predictions: IdScores, gold: IdScores) -> np.ndarray:
    """The predictions in the gold's order: every gold id predicted once, no other id."""
    at = {pair_id: row for row, pair_id in enumerate(predictions.ids)}
    gold_ids = set(gold.ids)
    for row, pair_id in enumerate(predictions.ids, start=1):
        if pair_id not in gold_ids:
            raise DataValidationError(predictions.file, row, f"PairID not in the gold ({gold.file})", pair_id)
    for row, pair_id in enumerate(gold.ids, start=1):
        if pair_id not in at:
            raise DataValidationError(gold.file, row, f"PairID has no prediction in {predictions.file}", pair_id)
    return predictions.scores[[at[pair_id] for pair_id in gold.ids]]


def evaluate(predictions: IdScores, gold: IdScores, language: str | Sequence[str]) -> dict[str, LanguageScore]:
    """Spearman per language of the aligned predictions; ``language``: one name for all gold rows
    or one per gold row (an all-languages split), each language scored on its own rows."""
    aligned = align(predictions, gold)
    labels = np.full(len(gold.ids), language, dtype=object) if isinstance(language, str) \
        else np.asarray(language, dtype=object)
    if labels.shape != (len(gold.ids),):
        raise ValueError(f"{gold.file}: {len(labels)} languages for {len(gold.ids)} gold pairs")
    out = {}
    for name in sorted(set(labels.tolist())):
        rows = labels == name
        pred, ref = aligned[rows], gold.scores[rows]
        if np.ptp(pred) == 0:
            raise DataValidationError(predictions.file, None, f"all {name} predictions are equal: "
                                      "Spearman is undefined", f"{pred[0]:g} for {rows.sum()} pairs")
        if np.ptp(ref) == 0:
            raise DataValidationError(gold.file, None, f"all {name} gold scores are equal: Spearman is undefined")
        out[name] = LanguageScore(correlate(pred, ref).spearman, int(rows.sum()))
    return out


def format_predictions(ids: Sequence[str], scores: Sequence[float]) -> str:
    """A submission file's text: ``PairID,Pred_Score``, then one row per id (every digit of each
    score kept); ids checked as :class:`IdScores` checks them."""
    checked = IdScores("predictions", ids, scores)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(PREDICTIONS_HEADER)
    writer.writerows(zip(checked.ids, (repr(float(s)) for s in checked.scores), strict=True))
    return out.getvalue()


def write_predictions(path, ids: Sequence[str], scores: Sequence[float]) -> Path:
    """A submission file ``PairID,Pred_Score`` that :func:`read_predictions` reads back."""
    try:
        text = format_predictions(ids, scores)
    except DataValidationError as exc:
        raise DataValidationError(path, exc.row, exc.rule, exc.detail) from None
    path = Path(path)
    with written_whole(path, "predictions file", newline="") as file:  # no truncated file, ever
        file.write(text)
    return path
