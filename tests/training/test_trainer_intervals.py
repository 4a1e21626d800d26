"""Intervals beside the trainers' point estimates: a run's Spearman/Pearson intervals in
metrics.json, the card and fit's output; the interval for the mean over CV folds."""

from __future__ import annotations

import json

import numpy as np
import pytest

from semrel.dataset_scripts.pairs import load_pairs
from semrel.metrics.correlation_intervals import cv_mean_interval, pearson_interval, spearman_interval
from semrel.trainers.fitting import FitResult, fit
from semrel.trainers.summaries import eval_intervals, mean_interval, mean_scores
from trainer_fixtures import small_args, tiny_encoder
from trainer_fixtures import toy_folder as save_toy_folder


def test_eval_intervals_are_the_metrics_intervals():
    rng = np.random.default_rng(0)
    labels = rng.random(40)
    predictions = labels + rng.normal(0, 0.3, 40)
    out = eval_intervals(predictions, labels)
    rho, r = spearman_interval(predictions, labels), pearson_interval(predictions, labels)
    assert out == {"spearman_ci": [rho.interval.low, rho.interval.high],
                   "pearson_ci": [r.interval.low, r.interval.high]}
    assert out["spearman_ci"][0] < rho.value < out["spearman_ci"][1]
    assert eval_intervals(predictions[:5], labels[:5]) == {"spearman_ci": None, "pearson_ci": None}  # < 8 rows


def test_mean_interval_over_folds_keeps_the_mean():
    folds = {f"cv-fold-{i}": FitResult("o", "test", 0.5, rho, 0.1) for i, rho in enumerate([0.81, 0.83, 0.8, 0.84])}
    overall, _ = mean_scores(folds)
    low, high = mean_interval(folds)
    expected = cv_mean_interval([0.81, 0.83, 0.8, 0.84])
    assert (low, high) == (expected.low, expected.high) and low < overall < high
    assert overall == pytest.approx(0.82)  # the point estimate is the plain mean, as before
    assert mean_interval({"cv-fold-0": folds["cv-fold-0"]}) is None


@pytest.mark.slow
def test_a_run_records_its_intervals_in_metrics_and_card(tmp_path):
    data = load_pairs(str(save_toy_folder(tmp_path / "toy", 64, 32)), score_range=(0, 1))
    result = fit(data, tiny_encoder(tmp_path / "tiny-bert"), small_args(tmp_path / "run"))
    stored = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert stored["spearman_ci"] == result.spearman_ci and result.spearman_ci[0] <= result.spearman
    assert result.spearman <= result.spearman_ci[1]
    card = (tmp_path / "run" / "README.md").read_text()
    low, high = result.spearman_ci
    assert f"| Spearman rho (paired bootstrap, seed 0), 95 % CI | [{low:.4f}, {high:.4f}] |" in card
