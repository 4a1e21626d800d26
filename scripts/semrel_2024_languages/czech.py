"""Czech News STS's free test scored by the Track C members trained on config ``all`` (no Czech
data), on its 0-6 scale."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from semrel.metrics.output_files import write_whole

from .members import Study
from .tracks import load, track_c_members
from .units import CZECH_SCALE, SHARED, czech_unit


def czech(out: Path) -> dict:
    """The ``all`` Track C members and their rank average on Czech News STS's free test."""
    from semrel.dataset_scripts.czech_news_sts.paper import PAPER_FINE_TUNED, PAPER_INTER
    from semrel.metrics.lower_bound import mse_lower_bound
    from semrel.metrics.submission import write_predictions
    from semrel.trainers.ensemble import Ensemble
    from semrel.trainers.models import PairEncoder
    from semrel.trainers.trainer import similarity_scores

    rows = load("free", "czech-news-sts").splits["test"]
    gold = np.asarray(rows["score"], dtype=np.float64)
    folder = out / "track-c" / f"train-{SHARED}"
    scores = {}
    for name in ("bi", "cross", "rank"):
        model = (Ensemble.load(folder / name) if name == "rank"
                 else PairEncoder.from_pretrained(folder / name))
        print(f"czech-news-sts/free/test: {name} ({folder / name})", flush=True)
        predicted = CZECH_SCALE * np.asarray(model.predict(rows["sentence1"], rows["sentence2"]))
        write_predictions(out / "czech" / "predictions" / f"{name}.test.csv", rows["pair_id"], predicted)
        result = similarity_scores(predicted, gold)
        scores[name] = {k: round(float(getattr(result, k)), 4) for k in ("pearson", "spearman", "mse")}
    return {"pairs": len(gold), "scale": f"prediction = {CZECH_SCALE:g} × score in [0, 1]",
            "scores": scores, "final": "rank",
            "paper": {"average_annotator_pearson": PAPER_INTER["pearson"],
                      "fine_tuned": PAPER_FINE_TUNED},
            "mse_lower_bound": round(mse_lower_bound(list(rows["annotations"])).bound, 4)}


def czech_result(study: Study, out: Path) -> dict:
    """:func:`czech`, once: kept in ``OUT/czech/result.json`` like a finished unit's (with its test file)."""
    result_path = out / "czech" / "result.json"
    if result_path.is_file() and (out / "czech" / "predictions" / "rank.test.csv").is_file():
        print(f"kept: {result_path.parent} is finished", flush=True)
        return json.loads(result_path.read_text())
    track_c_members(study, czech_unit(out))
    result = czech(out)
    write_whole(result_path, json.dumps(result, indent=1), "output")
    return result
