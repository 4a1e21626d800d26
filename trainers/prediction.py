"""Predict with any model (a semrel run or ensemble, or a model semrel did not train, zero-shot), and
write the submission file of the predictions."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from semrel.dataset_scripts.pairs import PairData
from semrel.metrics.errors import ParameterError
from semrel.metrics.submission import format_predictions

from .data import prepare_pairs, unscale
from .run_folder import recorded_score_range, write_text
from .scoring import load_scorer
from .stacking import ID_COLUMNS


def predict(model_path, data: PairData, split: str = "test", *, batch_size: int = 64,
            kind: str | None = None) -> np.ndarray:
    """Predictions for every row of ``split`` on the dataset's native scale, in row order, by any
    model (:func:`~trainers.scoring.load_scorer`: a semrel run or ensemble, a sentence-transformers
    bi-encoder or ``CrossEncoder``, a plain transformer, a packaged name; ``kind`` overrides the
    detected kind), its folder checked whole first. The model's score is read on the [0, 1]
    label scale (a zero-shot cosine as is) and mapped onto the data's range. An unconditional
    model on conditional data is an error (it would ignore the conditions); so is data on
    another score range than the one a semrel run recorded (its predictions would be put on a
    scale it never learnt), and a learned stack on the rows it was fit on."""
    scorer = load_scorer(str(model_path), kind=kind, batch_size=batch_size, cache_dir=None,
                         parameter="model_path")
    if split not in data.splits:
        raise ParameterError("split", split, f"must be a split of {data.name}: "
                             f"{', '.join(data.splits)}")
    if scorer.kind == "ensemble":
        scored = data.splits[split]  # a learned stack refuses the rows it was fit on
        scorer.ensemble.check_scored(data.name, split, [i for c in ID_COLUMNS if c in scored.column_names
                                                        for i in scored[c]])
    rows = prepare_pairs(data.splits[split], data.score_range, where=f"{data.name}/{split}",
                         labelled=False)
    if "condition" in rows.column_names and not scorer.conditional:
        raise ParameterError("model_path", str(model_path), f"is an unconditional {scorer.kind} model, "
                             f"which cannot score {data.name}, whose pairs have conditions (it would "
                             "ignore them)")
    recorded = recorded_score_range(scorer.path) if scorer.kind in ("semrel", "ensemble") else None
    if recorded is not None and tuple(data.score_range) != recorded[0]:
        raise ParameterError("model_path", str(model_path), f"was trained on scores in "
                             f"{list(recorded[0])} (its {recorded[1]}), but {data.name} is on "
                             f"{list(data.score_range)}: its predictions cannot be put on that "
                             "scale; predict data on the run's score range")
    condition = rows["condition"] if scorer.conditional else None
    return unscale(scorer.score(rows["sentence1"], rows["sentence2"], condition), data.score_range)


def write_submission(predictions: np.ndarray, path: str | os.PathLike, ids=None) -> Path:
    """The submission file ``path`` names by its suffix, written whole
    (:func:`~trainers.run_folder.write_text`): ``.csv``, the SemEval-2024 Task 1 file
    ``PairID,Pred_Score`` (``ids``: the split's ``pair_id``; ``semrel evaluate`` scores it);
    otherwise the C-STS JSON object ``{"0": float, ..., "n-1": float}`` by row."""
    if Path(path).suffix.lower() == ".csv":
        if ids is None:
            raise ParameterError("path", str(path), "is a .csv submission (PairID,Pred_Score), "
                                 "which needs the split's pair_id column; this split has none")
        return write_text(path, format_predictions(ids, predictions))
    return write_text(path, json.dumps({str(i): float(p) for i, p in enumerate(predictions)}))
