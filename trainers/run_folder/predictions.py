"""A run's predictions (``eval_predictions.json``, ``selection_predictions.json``) and the CV
folders that hold one run per fold: one writer, one reader, the checks before combining them.

Both files hold one record: ``data`` (``dataset/config``), ``split``, ``score_range``,
``encoder``, ``conditional``, ``ids`` (the rows' ``pair_id``, else their row numbers),
``predictions`` and ``labels`` (label scale [0, 1], row order), ``sources`` (the rows' ``source``
or null) and, in dev predictions, ``sentence1``/``sentence2`` (for a stack's lexical features).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .files import PREDICTIONS, SELECTION, read_checked, read_tolerant, write_json
from .schema import PREDICTIONS_SCHEMA

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class RunPredictions:
    """One trained run's scores on its evaluated split (label scale [0, 1]) and their context."""

    path: str
    data: str
    split: str
    score_range: tuple[float, float]
    encoder: str
    conditional: bool
    ids: list
    predictions: np.ndarray
    labels: np.ndarray
    sources: list | None = None
    sentence1: list[str] | None = None  # dev predictions record the pairs' texts
    sentence2: list[str] | None = None


def write_predictions(folder, name: str, data, split: str, predictions, labels, *, encoder: str,
                      conditional: bool, sentences: bool = False,
                      parameter: str = "output_dir") -> Path:
    """The record of ``predictions`` of the rows of ``data.splits[split]`` (``data``: a
    :class:`~semrel.dataset_scripts.pairs.PairData`) as ``folder/name``; ``sentences``: with the
    pairs' texts."""
    rows = data.splits[split]
    ids = list(rows["pair_id"]) if "pair_id" in rows.column_names else list(range(len(rows)))
    record = {"data": data.name, "split": split, "score_range": list(data.score_range),
              "encoder": encoder, "conditional": conditional, "ids": ids,
              "predictions": [float(p) for p in predictions], "labels": [float(y) for y in labels],
              "sources": list(rows["source"]) if "source" in rows.column_names else None}
    if sentences:
        record.update(sentence1=list(rows["sentence1"]), sentence2=list(rows["sentence2"]))
    return write_json(Path(folder) / name, record, parameter)


def read_predictions(folder, name: str = PREDICTIONS, parameter: str = "path", value=None,
                     shown: str | None = None) -> dict:
    """The record of the predictions file ``name`` of a run ``folder``, checked against its
    schema (errors name the file as ``shown``, default ``name``)."""
    return read_checked(Path(folder) / name, PREDICTIONS_SCHEMA, parameter,
                        str(folder) if value is None else value, shown or name)


def recorded_predictions(folder) -> list[dict]:
    """The record of every predictions file below ``folder`` (``eval_predictions.json``, then
    ``selection_predictions.json``; an ensemble's members' too), as far as each is a JSON object
    (:func:`~.files.read_tolerant`; an empty record for a damaged one): unchecked, for the
    publishing guards, which look at the data it names, its labels and its texts."""
    return [read_tolerant(file) or {} for name in (PREDICTIONS, SELECTION)
            for file in sorted(Path(folder).rglob(name))]


def load_run(path: str | os.PathLike, name: str = PREDICTIONS) -> RunPredictions:
    """The ``eval_predictions.json`` (or ``name``: ``selection_predictions.json``, the dev
    predictions) of a run folder; ``FileNotFoundError`` naming the folder, a ParameterError on
    ``path`` naming the key of a file that breaks its schema."""
    import numpy as np

    file = Path(path) / name
    if not file.is_file():
        raise FileNotFoundError(f"{path}: no {name} (not a run folder written by "
                                "`semrel fit`/`cv`)")
    raw = read_predictions(path, name)
    return RunPredictions(path=str(path), data=raw["data"], split=raw["split"],
                          score_range=tuple(raw["score_range"]), encoder=raw["encoder"],
                          conditional=raw["conditional"], ids=raw["ids"],
                          predictions=np.asarray(raw["predictions"], dtype=np.float64),
                          labels=np.asarray(raw["labels"], dtype=np.float64),
                          sources=raw.get("sources"), sentence1=raw.get("sentence1"),
                          sentence2=raw.get("sentence2"))


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_same_rows(runs: list[RunPredictions]) -> None:
    """Members of one ensemble must each hold one prediction and one label per id, have scored
    the same rows of the same data, split and score range, and agree on conditioning;
    ``ValueError`` naming the first run that differs."""
    import numpy as np

    for run in runs:
        if not len(run.predictions) == len(run.labels) == len(run.ids):
            raise ValueError(f"ensemble member {run.path}: its predictions hold "
                             f"{len(run.predictions)} scores and {len(run.labels)} labels for "
                             f"{len(run.ids)} ids; each id needs one of each (the file is "
                             "incomplete or damaged)")
    first = runs[0]
    for run in runs[1:]:
        for what, a, b in (("data (dataset/config)", first.data, run.data),
                           ("evaluated split", first.split, run.split),
                           ("score range", first.score_range, run.score_range),
                           ("conditioning", first.conditional, run.conditional),
                           ("rows (pair ids, in order)", first.ids, run.ids)):
            if a != b:
                raise ValueError(f"ensemble member {run.path}: its {what} differs from "
                                 f"{first.path}'s ({_short(b)} vs {_short(a)}); members must be "
                                 "trained and evaluated on the same fold and score range")
        if not np.array_equal(first.labels, run.labels):
            raise ValueError(f"ensemble member {run.path}: its gold labels differ from "
                             f"{first.path}'s on the same rows")


def cv_folds(directory) -> list[Path]:
    """The fold runs of a CV folder: its sub-folders holding ``eval_predictions.json``, by name."""
    return sorted(p for p in Path(directory).iterdir() if (p / PREDICTIONS).is_file())


def same_folds(members: dict[str, dict[str, RunPredictions]]) -> tuple[list, list]:
    """(member names, fold names) after checking that every member ran the same folds and, per
    fold, scored the same rows (:func:`check_same_rows`)."""
    names = list(members)
    folds = list(members[names[0]])
    for name in names:
        if list(members[name]) != folds:
            raise ValueError(f"ensemble member {name!r} has folds {list(members[name])}, "
                             f"expected {folds}")
    for fold in folds:
        check_same_rows([members[n][fold] for n in names])
    return names, folds


def read_cvs(cv_dirs) -> tuple[dict[str, dict[str, RunPredictions]], list, list]:
    """The out-of-fold predictions of each CV folder in ``cv_dirs`` (one per member): ``members
    [directory][fold]``, with the member names and the folds they share (:func:`same_folds`);
    a folder without fold runs is a ``FileNotFoundError``."""
    members = {}
    for directory in cv_dirs:
        folds = cv_folds(directory)
        if not folds:
            raise FileNotFoundError(f"{directory}: no fold runs with {PREDICTIONS}")
        members[str(directory)] = {p.name: load_run(p) for p in folds}
    names, folds = same_folds(members)
    return members, names, folds
