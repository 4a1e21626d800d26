"""Predict with a saved model or ensemble, and write the submission file of the predictions."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from semrel.dataset_scripts.pairs import PairData
from semrel.metrics.errors import ParameterError
from semrel.metrics.submission import format_predictions

from .data import prepare_pairs, unscale
from .ensemble import Ensemble
from .models import PairEncoder
from .run_folder import ENSEMBLE, check_run_folder, recorded_score_range, write_text
from .stacking import ID_COLUMNS


def predict(model_path, data: PairData, split: str = "test", *,
            batch_size: int = 64) -> np.ndarray:
    """Predictions for every row of ``split`` on the dataset's native scale, in row order.
    The model folder is checked whole first (:func:`~trainers.run_folder.check_run_folder`). An
    unconditional model on conditional data is an error (it would ignore the conditions); so is
    data on another score range than the one the run recorded (its predictions would be put on
    a scale it never learnt)."""
    check_run_folder(model_path, "model_path")
    if split not in data.splits:
        raise ParameterError("split", split, f"must be a split of {data.name}: "
                             f"{', '.join(data.splits)}")
    if (Path(model_path) / ENSEMBLE).is_file():
        model = Ensemble.load(model_path)
        scored = data.splits[split]  # a learned stack refuses the rows it was fit on
        model.check_scored(data.name, split, [i for c in ID_COLUMNS if c in scored.column_names
                                              for i in scored[c]])
    else:
        model = PairEncoder.from_pretrained(model_path)
    rows = prepare_pairs(data.splits[split], data.score_range, where=f"{data.name}/{split}",
                         labelled=False)
    if "condition" in rows.column_names and not model.conditional:
        what = f"{model.kind}-encoder" if isinstance(model, PairEncoder) else "ensemble"
        raise ParameterError("model_path", str(model_path), f"is an unconditional {what}, which "
                             f"cannot score {data.name}, whose pairs have conditions (it would "
                             "ignore them)")
    recorded = recorded_score_range(model_path)
    if recorded is not None and tuple(data.score_range) != recorded[0]:
        raise ParameterError("model_path", str(model_path), f"was trained on scores in "
                             f"{list(recorded[0])} (its {recorded[1]}), but {data.name} is on "
                             f"{list(data.score_range)}: its predictions cannot be put on that "
                             "scale; predict data on the run's score range")
    condition = rows["condition"] if model.conditional else None
    scores = model.predict(rows["sentence1"], rows["sentence2"], condition, batch_size=batch_size)
    return unscale(scores, data.score_range)


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
