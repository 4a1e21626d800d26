"""Ensemble against its members: the paired test on the pooled out-of-fold predictions."""

from __future__ import annotations

import numpy as np

from semrel.metrics.compare import compare_correlations
from semrel.trainers.combination import cv_ensemble, rank_average
from semrel.trainers.run_folder import RunPredictions


def synthetic_cv(n_folds=3, rows=60, noise=(0.1, 0.5), seed=0):
    rng = np.random.default_rng(seed)
    out = {f"m{k + 1}": {} for k in range(len(noise))}
    for f in range(n_folds):
        ids, labels = [f"r{f}-{i}" for i in range(rows)], rng.random(rows)
        for k, m in enumerate(out):
            out[m][f"cv-fold-{f}"] = RunPredictions(f"{m}/cv-fold-{f}", f"toy/cv-fold-{f}", "test", (0.0, 1.0), "bi",
                                                    False, ids, labels + rng.normal(0, noise[k], rows), labels)
    return out


def test_comparisons_test_the_pooled_out_of_fold_predictions():
    runs = synthetic_cv()
    result = cv_ensemble(runs)
    folds = list(runs["m1"])
    matrix = {f: np.column_stack([runs[m][f].predictions for m in runs]) for f in folds}
    rank = np.concatenate([rank_average(matrix[f], reference=np.vstack([matrix[o] for o in folds if o != f]).T)
                           for f in folds])
    gold = np.concatenate([runs["m1"][f].labels for f in folds])
    member2 = np.concatenate([runs["m2"][f].predictions for f in folds])
    assert result.comparisons["rank"]["m2"] == compare_correlations(rank, member2, gold).as_dict()
    assert set(result.comparisons) == {"rank", "stack"} and set(result.comparisons["stack"]) == {"m1", "m2"}
    # m2 is five times noisier: the ensemble beats it clearly on 180 rows
    versus_m2 = result.comparisons["stack"]["m2"]
    assert versus_m2["spearman_difference_ci"][0] > 0 and versus_m2["spearman_p_value"] < 0.01


def test_a_comparison_that_cannot_run_says_why():
    runs = synthetic_cv(n_folds=2, rows=3)  # 6 rows: fewer than the bootstrap needs
    result = cv_ensemble(runs)
    assert result.comparisons["rank"]["m1"] == {"error": "6 items; a correlation interval needs >= 8 items"}
