"""semrel-2024 in the trainers: Spearman per language (the SemEval-2024 Task 1 evaluation) in fit's
metrics, card and output; ``predict --output pred_<lang>.csv`` writes what ``semrel evaluate`` scores."""

from __future__ import annotations

import json
import logging

import datasets
import numpy as np
import pytest
from scipy import stats

from semrel.cli import main
from semrel.trainers.prediction import write_submission
from semrel.trainers.summaries import per_language_spearman


def split(languages, ids=None):
    rows = {"language": languages, "sentence1": ["a"] * len(languages), "sentence2": ["b"] * len(languages)}
    if ids is not None:
        rows["pair_id"] = ids
    return datasets.Dataset.from_dict(rows)


def test_per_language_spearman_scores_each_language_on_its_own_rows():
    rng = np.random.default_rng(0)
    languages = ["hau"] * 30 + ["amh"] * 20
    predictions, labels = rng.random(50), rng.random(50)
    result = per_language_spearman(split(languages, [f"p{i}" for i in range(50)]), predictions, labels)
    assert list(result) == ["amh", "hau"]
    assert result["hau"] == pytest.approx(stats.spearmanr(predictions[:30], labels[:30]).statistic, abs=1e-12)
    assert result["amh"] == pytest.approx(stats.spearmanr(predictions[30:], labels[30:]).statistic, abs=1e-12)
    assert per_language_spearman(datasets.Dataset.from_dict({"pair_id": ["a", "b"]}), predictions[:2],
                                 labels[:2]) == {}  # no language column


def test_undefined_spearman_is_a_warning_not_a_lost_run(caplog):
    with caplog.at_level(logging.WARNING, logger="semrel.trainers.summaries"):
        assert per_language_spearman(split(["amh"] * 3), np.full(3, 0.5), np.array([0.1, 0.2, 0.3])) == {}
    assert "all amh predictions are equal: Spearman is undefined" in caplog.text


def test_csv_submission_is_the_task_format(tmp_path):
    path = write_submission(np.array([0.25, 0.75]), tmp_path / "pred_amh.csv", ids=["x1", "x2"])
    assert path.read_text(encoding="utf-8") == "PairID,Pred_Score\nx1,0.25\nx2,0.75\n"
    assert json.loads(write_submission(np.array([0.5]), tmp_path / "p.json").read_text()) == {"0": 0.5}
    from semrel.metrics.errors import ParameterError

    with pytest.raises(ParameterError, match="needs the split's pair_id column"):
        write_submission(np.array([0.5]), tmp_path / "pred.csv")


@pytest.mark.slow  # trains a tiny model
def test_fit_reports_per_language_and_predict_writes_what_evaluate_scores(mirror, cache_dir, tmp_path, capsys):
    from trainer_fixtures import tiny_encoder

    encoder = tiny_encoder(tmp_path / "tiny-bert")
    data = ["--dataset", "semrel-2024", "--mirror", str(mirror), "--cache-dir", str(cache_dir)]
    out = tmp_path / "model"
    assert main(["fit", *data, "--config", "eng", "--encoder", "bi", "--model", str(encoder),
                 "--output", str(out), "--max-steps", "2", "--batch-size", "16"]) == 0
    printed = capsys.readouterr().out
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["eval_split"] == "validation" and list(metrics["per_language"]) == ["eng"]
    assert metrics["per_language"]["eng"] == pytest.approx(metrics["spearman"], abs=1e-12)  # one language
    assert f"    eng          {metrics['spearman']:.4f}" in printed
    assert "Spearman per language (validation split" in (out / "README.md").read_text()
    submission = tmp_path / "pred_eng.csv"
    assert main(["predict", *data, "--config", "eng", "--model", str(out), "--split", "validation",
                 "--output", str(submission)]) == 0
    assert submission.read_text(encoding="utf-8").startswith("PairID,Pred_Score\nENG-dev-0000,")
    capsys.readouterr()
    assert main(["evaluate", str(submission), "--split", "dev", "--mirror", str(mirror),
                 "--cache-dir", str(cache_dir), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)  # the same model, data and evaluation as fit's
    assert row["language"] == "eng" and row["pairs"] == 250
    # the tiny model's cosines lie within ~0.01 of each other, so predict's batches (sentences
    # sorted by length; fit's evaluation batches pairs, longest first) move a few ranks by float
    # rounding (<1e-6 per score)
    assert row["spearman"] == pytest.approx(metrics["spearman"], abs=5e-3)
    # fit's evaluation predicts its batches longest first and keeps each score on its own row
    evaluated = json.loads((out / "eval_predictions.json").read_text())
    predicted = [float(line.split(",")[1]) for line in submission.read_text().splitlines()[1:]]
    np.testing.assert_allclose(evaluated["predictions"], predicted, atol=1e-5)

