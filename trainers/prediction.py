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
from .kinds import get
from .run_folder import recorded_score_range, write_text
from .scoring import Scorer, load_scorer
from .stacking import ID_COLUMNS


def predict(model_path, data: PairData, split: str = "test", *, batch_size: int = 64,
            kind: str | None = None, backend: str = "torch", quantize: str | None = None) -> np.ndarray:
    """Predictions for every row of ``split`` on the dataset's native scale, in row order, by any
    model (:func:`~trainers.scoring.load_scorer`: a semrel run or ensemble, a sentence-transformers
    bi-encoder or ``CrossEncoder``, a plain transformer, a packaged name; ``kind`` overrides the
    detected kind), its folder checked whole first; see :func:`scorer_predictions`."""
    scorer = load_scorer(str(model_path), kind=kind, batch_size=batch_size, cache_dir=None,
                         parameter="model_path", backend=backend, quantize=quantize)
    try:
        return scorer_predictions(scorer, data, split)
    finally:
        scorer.close()


def check_scorer_fits(scorer: Scorer, data: PairData, conditional: bool,
                      parameter: str = "model_path") -> None:
    """Whether ``scorer`` may score ``data`` (``conditional``: its pairs have conditions): an
    unconditional model on conditional pairs would ignore the conditions, a conditional one has
    none to read; a semrel run or ensemble scores only data on the score range it recorded (its
    predictions cannot be put on a scale it never learnt). A ParameterError on ``parameter``
    otherwise."""
    if conditional and not scorer.conditional:
        raise ParameterError(parameter, scorer.spec, f"is an unconditional {scorer.kind} model, "
                             f"which cannot score {data.name}, whose pairs have conditions (it would "
                             "ignore them)")
    if scorer.conditional and not conditional:
        raise ParameterError(parameter, scorer.spec, f"is a conditional {scorer.kind} model, which "
                             f"cannot score {data.name}, whose pairs have no condition column")
    recorded = recorded_score_range(scorer.path) if get(scorer.kind).records_training else None
    if recorded is not None and tuple(data.score_range) != recorded[0]:
        raise ParameterError(parameter, scorer.spec, f"was trained on scores in "
                             f"{list(recorded[0])} (its {recorded[1]}), but {data.name} is on "
                             f"{list(data.score_range)}: its predictions cannot be put on that "
                             "scale; predict data on the run's score range")


def scorer_predictions(scorer: Scorer, data: PairData, split: str, *,
                       parameter: str = "model_path") -> np.ndarray:
    """``scorer``'s predictions for every row of ``split`` on the dataset's native scale, in row
    order: its score read on the [0, 1] label scale (a zero-shot cosine as is) and mapped onto the
    data's range, ``lo + s (hi - lo)``. Refused (a ParameterError on ``parameter``): a model that
    does not fit the data (:func:`check_scorer_fits`), and a learned stack on the rows it was fit
    on."""
    if split not in data.splits:
        raise ParameterError("split", split, f"must be a split of {data.name}: "
                             f"{', '.join(data.splits)}")
    if (ensemble := getattr(scorer, "ensemble", None)) is not None:
        scored = data.splits[split]  # a learned stack refuses the rows it was fit on
        ensemble.check_scored(data.name, split, [i for c in ID_COLUMNS if c in scored.column_names
                                                 for i in scored[c]])
    rows = prepare_pairs(data.splits[split], data.score_range, where=f"{data.name}/{split}",
                         labelled=False)
    check_scorer_fits(scorer, data, "condition" in rows.column_names, parameter)
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
