"""metrics/annotator_agreement: inter (pooled, LOO), intra, Krippendorff's alpha, bad input, evaluate.load."""

from __future__ import annotations

import evaluate
import krippendorff
import numpy as np
import pytest
from scipy import stats

from project import REPO
from semrel.metrics.agreement import annotator_agreement, intra_annotator_agreement, krippendorff_alpha_interval

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", reliability data with
# missing values: observers A-D (rows) x units 1-12 (columns); published interval alpha = 0.849.
K2011 = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan, np.nan, np.nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, np.nan, 3],
    [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, np.nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, np.nan],
])


def _long(matrix: np.ndarray):
    annotator, item = np.nonzero(~np.isnan(matrix))
    return item, np.array([f"coder{a}" for a in annotator]), matrix[annotator, item]


def test_krippendorff_2011_worked_example():
    items, annotators, ratings = _long(K2011)
    result = annotator_agreement(items, annotators, ratings, on_invalid="omit")
    assert round(result.alpha, 3) == 0.849
    assert (result.n_items, result.n_items_skipped, result.n_ratings) == (11, 1, 40)
    # the skipped unit 12 (one value) is unpairable, so alpha is the same without skipping it
    assert krippendorff_alpha_interval(items, ratings) == pytest.approx(result.alpha, abs=1e-15)
    assert result.alpha == pytest.approx(
        krippendorff.alpha(reliability_data=K2011, level_of_measurement="interval"), abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_alpha_matches_krippendorff_package_on_discrete_data(seed):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 7, 60)
    matrix = np.clip(truth + rng.integers(-2, 3, (7, 60)), 0, 6).astype(float)
    matrix[rng.random(matrix.shape) < 0.3] = np.nan
    items, annotators, ratings = _long(matrix)
    keep = np.isin(items, np.flatnonzero((~np.isnan(matrix)).sum(axis=0) >= 2))
    ours = krippendorff_alpha_interval(items[keep], ratings[keep])
    assert ours == pytest.approx(
        krippendorff.alpha(reliability_data=matrix, level_of_measurement="interval"), abs=1e-12)


def test_inter_is_pooled_against_item_means():
    items = ["a", "a", "a", "b", "b", "c", "c", "c"]
    annotators = ["x", "y", "z", "x", "y", "x", "y", "z"]
    ratings = np.array([1, 2, 3, 5, 6, 0, 0, 3], float)
    result = annotator_agreement(items, annotators, ratings)
    means = np.array([2, 2, 2, 5.5, 5.5, 1, 1, 1])
    loo = np.array([2.5, 2, 1.5, 6, 5, 1.5, 1.5, 0])
    assert result.inter.pearson == pytest.approx(stats.pearsonr(ratings, means).statistic)
    assert result.inter.spearman == pytest.approx(stats.spearmanr(ratings, means).statistic)
    assert result.inter.mse == pytest.approx(np.mean((ratings - means) ** 2))
    assert result.inter.rmse == pytest.approx(np.sqrt(result.inter.mse))
    assert result.inter_loo.mse == pytest.approx(np.mean((ratings - loo) ** 2))
    assert result.inter_loo.pearson == pytest.approx(stats.pearsonr(ratings, loo).statistic)
    assert (result.intra, result.n_repeats, result.n_annotators) == (None, 0, 3)


def test_intra_compares_repeats_with_first_rating_and_repeats_leave_inter_alone():
    items = ["a", "a", "b", "b", "a", "b", "a"]
    annotators = ["x", "y", "x", "y", "x", "y", "x"]
    ratings = [1, 2, 5, 6, 2, 4, 0]  # x re-rates a twice (2, 0), y re-rates b once (4)
    result = annotator_agreement(items, annotators, ratings)
    repeats, firsts = np.array([2, 4, 0]), np.array([1, 6, 1])
    assert result.n_repeats == 3 and result.intra.n_ratings == 3
    assert result.intra.mse == pytest.approx(np.mean((repeats - firsts) ** 2))
    assert result.intra.pearson == pytest.approx(stats.pearsonr(repeats, firsts).statistic)
    base = annotator_agreement(items[:4], annotators[:4], ratings[:4])
    assert result.inter == base.inter and result.alpha == base.alpha


def test_real_free_test_inter_row(mirror):
    lines = (mirror / "czech-news-sts" / "free-test.tsv").read_text(encoding="utf-8").splitlines()
    matrix = np.array([[int(a) for a in line.split("\t")[3].split(",")] for line in lines], float)
    items, annotators = np.repeat(np.arange(1200), 9), np.tile(np.arange(9), 1200)
    result = annotator_agreement(items, annotators, matrix.ravel())
    assert result.n_ratings == 10800 and result.n_items == 1200
    got = [round(v, 3) for v in (result.inter.pearson, result.inter.spearman, result.inter.rmse,
                                 result.inter.mse)]
    assert got == [0.878, 0.854, 0.974, 0.949]
    assert round(result.alpha, 3) == 0.741


@pytest.mark.parametrize("args, kwargs, message", [
    ((["a", "a", "b"], ["x", "y", "x"], [1, 2, 3]), {}, "item 'b' has 1 annotator"),
    ((["a", "a", "b", "b"], ["x", "x", "x", "y"], [1, 2, 3, 4]), {}, "item 'a' has 1 annotator"),
    ((["a", "a"], ["x", "y"], [1, float("nan")]), {}, "rating 1 is not finite"),
    ((["a", "a"], ["x"], [1, 2]), {}, "annotators has 1 values"),
    ((["a", "a"], ["x", "y"], [1, 2]), {"on_invalid": "no"}, "on_invalid must be"),
    ((["a", "b"], ["x", "x"], [1, 2]), {"on_invalid": "omit"}, "no item has >= 2 annotators"),
    ((["a", "a", "b", "b"], ["x", "y", "x", "y"], [3, 3, 3, 3]), {}, "all ratings are equal"),
    ((["a", "a", "b", "b", "a"], ["x", "y", "x", "y", "x"], [1, 2, 3, 4, 1]), {},
     "needs >= 2 repeated"),
])
def test_bad_input(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        annotator_agreement(*args, **kwargs)


def test_too_few_skip_counts_items_and_single_repeat():
    result = annotator_agreement(["a", "a", "b", "b", "c", "a"], ["x", "y", "x", "y", "x", "x"],
                                 [1, 2, 3, 5, 4, 1], on_invalid="omit")
    assert (result.n_items, result.n_items_skipped, result.n_repeats, result.intra) == (2, 1, 1, None)
    with pytest.raises(ValueError, match="needs >= 2 repeated"):
        intra_annotator_agreement(["a", "a"], ["x", "x"], [1, 2])


def test_evaluate_load_offline_with_string_and_int_ids():
    metric = evaluate.load(str(REPO / "metrics" / "annotator_agreement"))
    out = metric.compute(items=["a", "a", "b", "b", "c", "c"], annotators=["x", "y"] * 3,
                         ratings=[1, 2, 4, 4, 5, 6])
    assert round(out["krippendorff_alpha"], 4) == 0.9038 and out["intra_mse"] is None
    assert out["inter_mse"] == pytest.approx(1 / 6) and out["n_ratings"] == 6
    items, annotators, ratings = _long(K2011)
    out = metric.compute(items=items.tolist(), annotators=annotators.tolist(),
                         ratings=ratings.tolist(), on_invalid="omit")
    assert round(out["krippendorff_alpha"], 3) == 0.849 and out["n_items_skipped"] == 1
    out = metric.compute(items=[1, 1, 2, 2, 1, 2], annotators=[7, 8, 7, 8, 7, 7],
                         ratings=[1, 2, 4, 5, 2, 4])
    assert (out["n_repeats"], out["intra_mse"], out["n_items"]) == (2, 0.5, 2)

