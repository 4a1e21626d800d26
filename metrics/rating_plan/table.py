"""A long table of ratings (one row per rating: item, annotator, score), read and checked.

Every (item, annotator) pair's first rating is its rating; a later row of the same pair is a
re-test (the Czech News STS intra-annotator design) and feeds only the re-test consistency. The
scale is the declared ``scale`` (every score inside it), or else read from the ratings, which
refuses ratings that look like two scales (:func:`check_scale`).
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import DataValidationError
from ..input_files import csv_error, read_text
from ..text_numbers import ascii_number

REQUIRED = ("item", "annotator", "score")
OPTIONAL = ("seconds", "is_random")
TRUE, FALSE = ("1", "true", "yes"), ("0", "false", "no")
MIXED_RATIO = 5.0  # one annotator's top above 5x another's (from the lowest rating): two scales
SCALE = re.compile(r"\s*(-?\d+(?:\.\d+)?)\s*(?:-|\.\.|:)\s*(-?\d+(?:\.\d+)?)\s*")


@dataclass(frozen=True)
class RatingTable:
    """Codes and values of a long rating table; ``first``: the pair's first rating (not a re-test)."""

    source: str
    items: np.ndarray  # item labels, code order
    annotators: np.ndarray  # annotator labels, code order
    item: np.ndarray  # (rows,) item code
    annotator: np.ndarray  # (rows,) annotator code
    score: np.ndarray  # (rows,) float64
    first: np.ndarray  # (rows,) bool
    scale: tuple[float, float]  # declared, or the range of the ratings
    seconds: np.ndarray | None = None  # (rows,) time per rating, where the file has it
    is_random: np.ndarray | None = None  # (rows,) a control pair of random sentences


def parse_scale(text: str) -> tuple[float, float]:
    """``"1-5"`` (or ``1..5``, ``0:100``) as (low, high), low < high; else ValueError."""
    match = SCALE.fullmatch(text)
    if not match or float(match[1]) >= float(match[2]):
        raise ValueError(f"must be LO-HI with LO < HI (e.g. 1-5, 0-100), not {text!r}")
    return float(match[1]), float(match[2])


def read_ratings(path, *, scale: tuple[float, float] | None = None) -> RatingTable:
    """The ratings of a CSV file with columns item, annotator, score (optional seconds, is_random)."""
    text = read_text(path)
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        rows = list(reader)
    except csv.Error as err:
        raise csv_error(path, err, reader) from None
    if not rows:
        raise DataValidationError(str(path), None, "empty file", "need a header item,annotator,score")
    header, body = [h.strip() for h in rows[0]], rows[1:]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise DataValidationError(str(path), None, "missing columns",
                                  f"need item, annotator, score; missing {missing}")
    at = {name: header.index(name) for name in (*REQUIRED, *OPTIONAL) if name in header}
    for row, cells in enumerate(body, 1):
        if len(cells) != len(header):
            raise DataValidationError(str(path), row, "wrong number of fields",
                                      f"{len(cells)}, header has {len(header)}")
    columns = {name: [cells[i].strip() for cells in body] for name, i in at.items()}
    numbers = {name: _numbers(path, name, columns[name]) for name in ("score", "seconds") if name in columns}
    for name in ("item", "annotator"):
        blank = [row for row, v in enumerate(columns[name], 1) if not v]
        if blank:
            raise DataValidationError(str(path), blank[0], f"empty {name}",
                                      "every rating needs an item and an annotator")
    is_random = None
    if "is_random" in columns:
        flags = pd.Series(columns["is_random"]).str.lower()
        bad = ~flags.isin(TRUE + FALSE)
        if bad.any():
            row = int(np.argmax(bad.to_numpy()))
            raise DataValidationError(str(path), row + 1, "is_random is not true/false or 1/0",
                                      repr(columns["is_random"][row]))
        is_random = flags.isin(TRUE).to_numpy()
    return make_table(columns["item"], columns["annotator"], numbers["score"], source=str(path), scale=scale,
                      seconds=numbers.get("seconds"), is_random=is_random)


def _numbers(path, name: str, cells: list[str]) -> np.ndarray:
    values = [ascii_number(c) for c in cells]
    for row, (v, c) in enumerate(zip(values, cells, strict=True), 1):
        if v is None:
            raise DataValidationError(str(path), row, f"{name} is not a number in ASCII digits", repr(c))
    return np.asarray(values, dtype=np.float64)


def make_table(items, annotators, scores, *, source: str = "<ratings>", scale: tuple[float, float] | None = None,
               seconds=None, is_random=None) -> RatingTable:
    """A checked :class:`RatingTable` of parallel sequences (:func:`check_table`)."""
    scores = np.asarray(scores, dtype=np.float64)
    if not np.isfinite(scores).all():
        row = int(np.argmin(np.isfinite(scores)))
        raise DataValidationError(source, row + 1, "score is not a finite number", repr(scores[row]))
    item, item_labels = pd.factorize(pd.Series(items, dtype=object).astype(str), sort=True)
    annotator, annotator_labels = pd.factorize(pd.Series(annotators, dtype=object).astype(str), sort=True)
    if not len(item) == len(annotator) == scores.size:
        raise ValueError(f"items, annotators and scores need one value per rating, got "
                         f"{len(item)}, {len(annotator)}, {scores.size}")
    key = item.astype(np.int64) * len(annotator_labels) + annotator
    first = np.zeros(scores.size, dtype=bool)
    first[np.unique(key, return_index=True)[1]] = True
    table = RatingTable(source, np.asarray(item_labels), np.asarray(annotator_labels), item.astype(np.int64),
                        annotator.astype(np.int64), scores, first, scale or (float(scores.min()), float(scores.max())),
                        None if seconds is None else np.asarray(seconds, dtype=np.float64),
                        None if is_random is None else np.asarray(is_random, dtype=bool))
    check_table(table, scale)
    return table


def check_table(table: RatingTable, scale: tuple[float, float] | None) -> None:
    """One line for what no plan can start from: no rows, one annotator, every item rated once,
    scores outside the declared scale, or ratings on mixed scales."""
    if table.score.size == 0:
        raise DataValidationError(table.source, None, "no ratings", "the file has a header and no rows")
    if len(table.annotators) < 2:
        raise DataValidationError(table.source, None, "one annotator",
                                  f"{table.annotators[0]!r} gave every rating; reliability needs >= 2 annotators")
    raters = np.bincount(table.item[table.first], minlength=len(table.items))
    if raters.max() < 2:
        raise DataValidationError(table.source, None, "every item is rated once",
                                  f"{len(table.items)} items; reliability needs items rated by >= 2 annotators")
    if scale is not None:
        outside = (table.score < scale[0]) | (table.score > scale[1])
        if outside.any():
            row = int(np.argmax(outside))
            raise DataValidationError(table.source, row + 1, f"score outside the declared scale {_scale(scale)}",
                                      f"{table.score[row]:g}; {int(outside.sum())} such rating(s)")
    else:
        check_scale(table)


def check_scale(table: RatingTable) -> None:
    """Refuse ratings that look like two scales: among annotators using >= 3 distinct values, one
    whose highest rating is more than :data:`MIXED_RATIO` times another's (both counted from the
    lowest rating of the file), e.g. 1–5 beside 0–100. ``--scale`` declares the scale instead."""
    low = float(table.score.min())
    frame = pd.DataFrame({"a": table.annotator, "x": table.score})
    per = frame.groupby("a")["x"].agg(["min", "max", "nunique"])
    used = per[per["nunique"] >= 3]
    if len(used) < 2:
        return
    top, bottom = used["max"].idxmax(), used["max"].idxmin()
    if used.loc[top, "max"] - low > MIXED_RATIO * (used.loc[bottom, "max"] - low):
        raise DataValidationError(
            table.source, None, "ratings on mixed scales",
            f"annotator {table.annotators[bottom]!r} rates {used.loc[bottom, 'min']:g}-{used.loc[bottom, 'max']:g}, "
            f"annotator {table.annotators[top]!r} up to {used.loc[top, 'max']:g}; declare the scale with --scale LO-HI "
            "or rescale one group")


def _scale(scale: tuple[float, float]) -> str:
    return f"{scale[0]:g}-{scale[1]:g}"


def panel(table: RatingTable) -> tuple[np.ndarray, np.ndarray]:
    """(items, max raters) first ratings, NaN-padded, and the raters of each item."""
    item, score = table.item[table.first], table.score[table.first]
    order = np.argsort(item, kind="stable")
    item, score = item[order], score[order]
    counts = np.bincount(item, minlength=len(table.items))
    column = np.arange(item.size) - np.repeat(np.cumsum(counts) - counts, counts)
    values = np.full((len(table.items), int(counts.max())), np.nan)
    values[item, column] = score
    return values, counts
