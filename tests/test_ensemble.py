"""Ensembles (issue 15): rank-average and stacking maths, stacks fit on out-of-fold predictions
only, ensemble folders that predict, and members that cannot be combined."""

from __future__ import annotations

import json
import re

import datasets
import numpy as np
import pytest
from scipy import stats

from trainers.cli import main
from trainers.ensemble import (Ensemble, RunPredictions, cv_ensemble, fit_stack, load_run,
                               rank_average)
from trainer_fixtures import tiny_encoder, toy_pairs
from trainers.training import FitOptions, PairData, fit, predict


def test_rank_average_is_the_weighted_mean_of_scaled_ranks():
    p = np.array([[0.1, 5.0], [0.4, 1.0], [0.4, 3.0], [0.9, 2.0]])
    ranks_a = np.array([0, 1.5, 1.5, 3]) / 3  # ties share the average rank
    ranks_b = np.array([3, 0, 2, 1]) / 3
    assert np.allclose(rank_average(p), (ranks_a + ranks_b) / 2)
    assert np.allclose(rank_average(p, [3, 1]), (3 * ranks_a + ranks_b) / 4)
    with pytest.raises(ValueError, match="weights must be 2 finite non-negative"):
        rank_average(p, [1, -1])
    with pytest.raises(ValueError, match="non-finite score at row 1"):
        rank_average(np.array([[0.1], [np.nan]]))


def test_stack_recovers_non_negative_weights_and_the_intercept():
    rng = np.random.default_rng(0)
    a, b, noise = rng.random(500), rng.random(500), rng.random(500)
    y = 0.2 + 0.7 * a + 0.3 * b
    stack = fit_stack(np.column_stack([a, b, -y + 0.01 * noise]), y)
    assert stack.weights[0] == pytest.approx(0.7, abs=1e-6)
    assert stack.weights[1] == pytest.approx(0.3, abs=1e-6)
    assert stack.weights[2] == 0.0 and stack.intercept == pytest.approx(0.2, abs=1e-6)
    assert stack.n_rows == 500


def runs_for(fold_rows, members=("m1", "m2"), seed=0):
    """Synthetic CV: per fold, each member's noisy view of the labels."""
    rng = np.random.default_rng(seed)
    out = {m: {} for m in members}
    for f, ids in enumerate(fold_rows):
        labels = rng.random(len(ids))
        for k, m in enumerate(members):
            out[m][f"cv-fold-{f}"] = RunPredictions(
                f"{m}/cv-fold-{f}", f"toy/cv-fold-{f}", "test", (0.0, 1.0), "bi", False, ids,
                labels + rng.normal(0, 0.1 * (k + 1), len(ids)), labels)
    return out


def test_cv_stack_for_a_fold_is_fit_on_the_other_folds_only():
    folds = [[f"r{f}-{i}" for i in range(40)] for f in range(3)]
    runs = runs_for(folds)
    result = cv_ensemble(runs)
    others = [f"cv-fold-{f}" for f in (1, 2)]
    expected = fit_stack(np.vstack([np.column_stack([runs[m][f].predictions for m in runs])
                                    for f in others]),
                         np.concatenate([runs["m1"][f].labels for f in others]))
    assert result.stack_weights["cv-fold-0"] == expected
    # fold 0's own labels and predictions never reach its weights
    changed = {m: dict(r) for m, r in runs.items()}
    for m in changed:
        old = changed[m]["cv-fold-0"]
        changed[m]["cv-fold-0"] = RunPredictions(**{**vars(old), "labels": old.labels[::-1],
                                                    "predictions": old.predictions * -3})
    assert cv_ensemble(changed).stack_weights["cv-fold-0"] == expected
    scores = result.folds["cv-fold-1"]
    matrix = np.column_stack([runs[m]["cv-fold-1"].predictions for m in runs])
    labels = runs["m1"]["cv-fold-1"].labels
    assert scores["rank"] == pytest.approx(stats.spearmanr(rank_average(matrix), labels).statistic)
    assert set(result.mean()) == {"m1", "m2", "rank", "stack"}


def test_members_that_cannot_be_combined_are_named():
    folds = [[f"r{f}-{i}" for i in range(10)] for f in range(2)]
    runs = runs_for(folds)
    wrong = runs["m2"]["cv-fold-1"]
    runs["m2"]["cv-fold-1"] = RunPredictions(**{**vars(wrong), "score_range": (0.0, 5.0)})
    with pytest.raises(ValueError, match=r"member m2/cv-fold-1: its score range differs"):
        cv_ensemble(runs)
    runs = runs_for(folds)
    runs["m2"]["cv-fold-1"] = runs["m2"]["cv-fold-0"]
    with pytest.raises(ValueError, match=r"member m2/cv-fold-0: its data \(dataset/config\)"):
        cv_ensemble(runs)
    with pytest.raises(ValueError, match="is in the test split of both"):
        cv_ensemble(runs_for([folds[0], folds[0]]))
    runs = runs_for(folds)
    del runs["m2"]["cv-fold-1"]
    with pytest.raises(ValueError, match="member 'm2' has folds"):
        cv_ensemble(runs)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny bi- and cross-encoder fit on a toy set with a test split, and the data."""
    root = tmp_path_factory.mktemp("ensemble")
    encoder = tiny_encoder(root / "tiny")
    pairs = toy_pairs((0.0, 5.0)).train_test_split(test_size=0.25, seed=0)
    data = PairData(datasets.DatasetDict(train=pairs["train"], test=pairs["test"]), (0.0, 5.0),
                    "toy/fold")
    for kind in ("bi", "cross"):
        fit(data, encoder, root / kind, FitOptions(encoder=kind, epochs=2, batch_size=8,
                                                   learning_rate=1e-3))
    return root, data, encoder


def test_an_ensemble_folder_predicts_the_rank_average_of_its_members(trained, tmp_path):
    root, data, _ = trained
    ensemble = Ensemble.build([root / "bi", root / "cross"], "rank", weights=[0.7, 0.3])
    ensemble.save(tmp_path / "ens")
    card = (tmp_path / "ens" / "README.md").read_text()
    assert str((root / "bi").resolve()) in card and "| 0.7000 |" in card and "rank" in card
    members = np.column_stack([predict(root / k, data) for k in ("bi", "cross")])
    expected = rank_average(members, [0.7, 0.3]) * 5.0
    assert np.allclose(predict(tmp_path / "ens", data), expected)
    assert load_run(root / "bi").ids == list(range(len(data.splits["test"])))


def test_ensembles_refuse_mixed_members(trained, tmp_path):
    root, data, encoder = trained
    other = PairData(data.splits, (0.0, 1.0), "toy/other")
    rescaled = datasets.DatasetDict({k: v.map(lambda r: {"score": r["score"] / 5})
                                     for k, v in data.splits.items()})
    fit(PairData(rescaled, (0.0, 1.0), "toy/other"), encoder, tmp_path / "unit",
        FitOptions(max_steps=1))
    with pytest.raises(ValueError, match=r"unit: its score range \(0.0, 1.0\) differs"):
        Ensemble.build([root / "bi", tmp_path / "unit"])
    with pytest.raises(ValueError, match="needs one CV folder per member"):
        Ensemble.build([root / "bi", root / "cross"], "stack")
    with pytest.raises(FileNotFoundError, match="not a model folder written by"):
        Ensemble.build([root / "bi", tmp_path])
    assert other.score_range == (0.0, 1.0)


def test_a_final_model_trains_on_all_data_without_evaluation(trained, tmp_path, capsys):
    _, data, encoder = trained
    everything = PairData(datasets.DatasetDict(train=data.splits["train"]), (0.0, 5.0), "toy")
    result = fit(everything, encoder, tmp_path / "final", FitOptions(max_steps=2))
    assert result.eval_split is None and result.spearman is None
    metrics = json.loads((tmp_path / "final" / "metrics.json").read_text())
    assert metrics["spearman"] is None and metrics["train_pairs"] == len(data.splits["train"])
    assert not (tmp_path / "final" / "eval_predictions.json").exists()
    assert "Not evaluated: trained on all" in (tmp_path / "final" / "README.md").read_text()


def test_cli_cv_members_report_ensembles_and_build_a_stack(trained, mirror, cache_dir, tmp_path,
                                                           capsys):
    _, _, encoder = trained
    members = [f"bi@{encoder},max_steps=2", f"cross@{encoder},max_steps=2"]
    assert main(["cv", "--dataset", "str-2021", "--mirror", str(mirror), "--cache-dir",
                 str(cache_dir), "--model", str(encoder), "--batch-size", "32",
                 "--output", str(tmp_path / "cv"), "--member", members[0],
                 "--member", members[1]]) == 0
    printed = capsys.readouterr().out
    for fold in range(5):
        assert re.search(rf"^cv-fold-{fold}(\s+-?\d\.\d{{4}}){{4}}$", printed, flags=re.M)
    assert re.search(r"^mean(\s+-?\d\.\d{4}){4}$", printed, flags=re.M)
    cv_dirs = sorted((tmp_path / "cv").iterdir())
    assert len(cv_dirs) == 2 and cv_dirs[0].name.startswith("bi-")
    assert cv_dirs[1].name.startswith("cross-") and "max_steps=2" in cv_dirs[1].name
    finals = [d / "cv-fold-0" for d in cv_dirs]
    assert main(["ensemble", "--method", "stack", "--output", str(tmp_path / "ens"),
                 "--member", str(finals[0]), "--member", str(finals[1]),
                 "--cv-dir", str(cv_dirs[0]), "--cv-dir", str(cv_dirs[1])]) == 0
    saved = json.loads((tmp_path / "ens" / "semrel_ensemble.json").read_text())
    assert saved["method"] == "stack" and saved["stack"]["n_rows"] == 5500
    with pytest.raises(ValueError, match="is a bi-encoder but its CV"):
        Ensemble.build(finals, "stack", cv_dirs=cv_dirs[::-1])
