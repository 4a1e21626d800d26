"""Ensemble maths: the rank average (ties, weights, ranks against reference scores), the stack's
non-negative least squares, and a CV ensemble whose stack and rank references for a fold come from
the other folds only; members that cannot be combined are named."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from semrel.trainers.combination import cv_ensemble, fit_stack, quantile_ranks, rank_average
from semrel.trainers.run_folder import RunPredictions


def test_rank_average_is_the_weighted_mean_of_scaled_ranks():
    p = np.array([[0.1, 5.0], [0.4, 1.0], [0.4, 3.0], [0.9, 2.0]])
    ranks_a = np.array([0, 1.5, 1.5, 3]) / 3  # ties share the average rank
    ranks_b = np.array([3, 0, 2, 1]) / 3
    assert np.allclose(rank_average(p), (ranks_a + ranks_b) / 2)
    assert np.allclose(rank_average(p, [3, 1]), (3 * ranks_a + ranks_b) / 4)
    with pytest.raises(ValueError, match=r"weights=\[1, -1\]: must be 2 finite non-negative"):
        rank_average(p, [1, -1])
    with pytest.raises(ValueError, match="non-finite score at row 1"):
        rank_average(np.array([[0.1], [np.nan]]))


def test_ranks_against_a_reference_are_mid_rank_quantiles():
    reference = [0.5, 0.2, 0.1, 0.2]  # sorted: 0.1 0.2 0.2 0.5
    assert np.allclose(quantile_ranks([0.05, 0.2, 0.3, 0.9, 0.1], reference),
                       [0.0, 4 / 8, 6 / 8, 1.0, 1 / 8])  # a tie counts half
    p = np.array([[0.3, 2.0]])  # one row: ranked against the references, not among the rows
    ref_b = [1.0, 3.0]
    assert rank_average(p, [3, 1], reference=[reference, ref_b]) == pytest.approx(
        (3 * 0.75 + 0.5) / 4)
    rows = np.array([[0.3, 2.0], [0.05, 9.0], [0.2, 1.0]])
    one_by_one = [rank_average(r[None], reference=[reference, ref_b]) for r in rows]
    assert np.allclose(rank_average(rows, reference=[reference, ref_b]), np.ravel(one_by_one))
    with pytest.raises(ValueError, match="2 members but 1 reference score sets"):
        rank_average(p, reference=[reference])
    with pytest.raises(ValueError, match="reference scores must be >= 1 finite numbers"):
        rank_average(p, reference=[reference, [np.inf]])
    with pytest.raises(ValueError, match=r"n >= 2 rows"):
        rank_average(p)  # without a reference one row has no rank


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
    others = np.vstack([np.column_stack([runs[m][f].predictions for m in runs])
                        for f in ("cv-fold-0", "cv-fold-2")])
    expected_rank = rank_average(matrix, reference=others.T)  # ranked against the other folds
    assert scores["rank"] == pytest.approx(stats.spearmanr(expected_rank, labels).statistic)
    assert not np.allclose(expected_rank, rank_average(matrix))
    assert set(result.mean()) == {"m1", "m2", "rank", "stack"}
    ids, scored = result.predictions["cv-fold-1"]  # the scores its figures are of, by row id
    assert ids == folds[1] and set(scored) == {"rank", "stack"}
    np.testing.assert_array_equal(scored["rank"], expected_rank)
    assert stats.spearmanr(scored["stack"], labels).statistic == pytest.approx(scores["stack"])


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
