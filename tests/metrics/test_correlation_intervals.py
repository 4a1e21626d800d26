"""Correlation intervals, correlation with humans and the comparison of two systems, against closed
forms, scipy, simulated coverage and a worked example from the literature."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from semrel.metrics.compare import compare_correlations, williams_test, zou_interval
from semrel.metrics.correlation_intervals import (
    BCA_MAX_N,
    cv_mean_interval,
    dense_ids,
    kendall_interval,
    pearson_interval,
    resampled_ranks,
    spearman_interval,
)
from semrel.metrics.human_correlation import correlation_with_humans

Z975 = 1.959963984540054  # the 97.5 % normal quantile


def bivariate(n, rho, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    return x, rho * x + math.sqrt(1 - rho ** 2) * rng.normal(size=n)


def test_pearson_interval_is_fishers_closed_form_and_scipys():
    x, y = bivariate(40, 0.6, 0)
    e = pearson_interval(x, y)
    r = float(np.corrcoef(x, y)[0, 1])
    half = Z975 / math.sqrt(40 - 3)
    assert e.value == pytest.approx(r, abs=1e-12)
    assert (e.interval.low, e.interval.high) == pytest.approx((math.tanh(math.atanh(r) - half),
                                                               math.tanh(math.atanh(r) + half)), abs=1e-12)
    scipy_ci = stats.pearsonr(x, y).confidence_interval(0.9)
    e90 = pearson_interval(x, y, confidence=0.9)
    assert (e90.interval.low, e90.interval.high) == pytest.approx((scipy_ci.low, scipy_ci.high), abs=1e-12)
    assert e.interval.method == "fisher-z" and e.n == 40


def test_kendall_interval_is_fiellers_closed_form():
    x, y = bivariate(30, 0.5, 1)
    e = kendall_interval(x, y)
    tau = stats.kendalltau(x, y).statistic
    half = Z975 * math.sqrt(0.437 / (30 - 4))
    assert (e.interval.low, e.interval.high) == pytest.approx((math.tanh(math.atanh(tau) - half),
                                                               math.tanh(math.atanh(tau) + half)), abs=1e-12)


def test_perfect_correlation_has_a_point_interval():
    e = pearson_interval(range(6), range(6))
    assert (e.value, e.interval.low, e.interval.high) == pytest.approx((1.0, 1.0, 1.0), abs=1e-12)


def test_resampled_ranks_are_centred_doubled_average_ranks_with_ties():
    values = np.random.default_rng(2).integers(0, 6, size=(5, 40))
    ids, distinct = dense_ids(values[0])
    rows = np.random.default_rng(3).integers(0, 40, size=(4, 40))
    expected = np.array([2 * stats.rankdata(values[0][r]) - 41 for r in rows])  # 2·rank − (m + 1)
    assert np.array_equal(resampled_ranks(ids[rows], distinct), expected)


def _spearman_loop(a, b, axis=-1):
    if a.ndim == 1:
        return stats.spearmanr(a, b).statistic
    return np.array([stats.spearmanr(u, v).statistic for u, v in zip(a, b, strict=True)])


@pytest.mark.parametrize("method", ["BCa", "percentile"])
def test_spearman_interval_equals_scipy_bootstrap_of_spearmanr(method):
    """The O(n) rank statistic gives the same interval as scipy's bootstrap of scipy.stats.spearmanr."""
    x, y = bivariate(60, 0.4, 4)
    x = np.round(x, 1)  # ties
    e = spearman_interval(x, y, n_resamples=300, method=method, seed=7)
    ref = stats.bootstrap((x, y), _spearman_loop, paired=True, vectorized=True, n_resamples=300, method=method,
                          rng=np.random.default_rng(7))
    assert e.value == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert (e.interval.low, e.interval.high) == pytest.approx(tuple(ref.confidence_interval), abs=1e-12)
    assert spearman_interval(x, y, n_resamples=300, method=method, seed=7) == e  # seeded: same bits


def test_bca_switches_to_percentile_above_the_limit():
    x, y = bivariate(BCA_MAX_N + 1, 0.3, 5)
    assert spearman_interval(x, y, n_resamples=100).interval.method == "bootstrap-percentile"
    assert spearman_interval(x[:200], y[:200], n_resamples=100).interval.method == "bootstrap-bca"


def test_coverage_near_nominal_on_bivariate_normal_data():
    """200 samples of n = 50 from a bivariate normal with rho = 0.5: each 95 % interval covers the
    true coefficient (Spearman's population value (6/pi)·asin(rho/2)) in about 95 % of the samples
    (binomial sd 1.5 points)."""
    rho = 0.5
    true_spearman = 6 / math.pi * math.asin(rho / 2)
    pearson_hits = spearman_hits = 0
    for seed in range(200):
        x, y = bivariate(50, rho, 100 + seed)
        p = pearson_interval(x, y).interval
        s = spearman_interval(x, y, n_resamples=200, method="percentile", seed=seed).interval
        pearson_hits += p.low <= rho <= p.high
        spearman_hits += s.low <= true_spearman <= s.high
    assert 0.91 <= pearson_hits / 200 <= 0.985
    assert 0.89 <= spearman_hits / 200 <= 0.985


def test_williams_against_depcor_worked_example():
    """Silver, Hittner & May (2006), "A FORTRAN 77 program for comparing dependent correlations" (depcor),
    Applied Psychological Measurement 30:152, as asserted in R's cocor test suite
    (cocor.dep.groups.overlap(.3, .4, .5, 100, test="williams1959")): t = -1.0767, p = 0.2843."""
    w = williams_test(0.3, 0.4, 0.5, 100)
    assert round(w.t, 4) == -1.0767 and w.df == 97 and round(w.p_value, 4) == 0.2843
    # by the formula: |R| = 1 - .09 - .16 - .25 + 2(.3)(.4)(.5) = .62; t = -.1·sqrt(99·1.5/(2·.62·99/97 + .35²·.5³))
    assert w.t == pytest.approx(-0.1 * math.sqrt(99 * 1.5 / (2 * 0.62 * 99 / 97 + 0.35 ** 2 * 0.5 ** 3)), abs=1e-12)
    assert williams_test(0.4, 0.3, 0.5, 100).t == pytest.approx(-w.t)


def test_compare_uses_the_data_correlations_and_scipys_bootstrap():
    rng = np.random.default_rng(8)
    ref = rng.normal(size=80)
    p1 = ref + rng.normal(scale=0.6, size=80)
    p2 = ref + rng.normal(scale=1.0, size=80)
    c = compare_correlations(p1, p2, ref, n_resamples=300, seed=1)
    r = np.corrcoef([p1, p2, ref])
    w = williams_test(r[0, 2], r[1, 2], r[0, 1], 80)
    assert (c.williams.t, c.williams.p_value) == pytest.approx((w.t, w.p_value), abs=1e-12)
    assert c.pearson_between == pytest.approx(r[0, 1])

    def diff(a, b, g, axis=-1):
        return _spearman_loop(a, g) - _spearman_loop(b, g)

    ref_boot = stats.bootstrap((p1, p2, ref), diff, paired=True, vectorized=True, n_resamples=300,
                               method="percentile", rng=np.random.default_rng(1))
    d = c.spearman_difference
    assert d.value == pytest.approx(stats.spearmanr(p1, ref).statistic - stats.spearmanr(p2, ref).statistic)
    assert (d.interval.low, d.interval.high) == pytest.approx(tuple(ref_boot.confidence_interval), abs=1e-12)
    assert d.interval.low > 0 and c.spearman_p_value < 0.01 and c.williams.p_value < 0.01
    below = (ref_boot.bootstrap_distribution <= 0).sum()  # the p-value inverts the percentile interval
    assert c.spearman_p_value == min(1.0, 2 * (1 + min(below, (ref_boot.bootstrap_distribution >= 0).sum())) / 301)


def test_equal_systems_are_not_different():
    x, y = bivariate(30, 0.5, 9)
    c = compare_correlations(x, x, y, n_resamples=200)
    assert c.williams.t == 0 and c.williams.p_value == 1.0
    assert c.spearman_difference.value == 0 and c.spearman_p_value == 1.0


def test_aggregations_say_which_humans():
    preds = [0.1, 0.4, 0.2, 0.8, 0.5, 0.9, 0.3, 0.7, 0.6]
    annotations = [[0, 1, 1], [2, 2, 4], [1, 0, 0], [4, 5, 5], [3, 2, 3], [5, 5, 4], [1, 2, 2], [4, 3, 4], [3, 4, 2]]
    mean = correlation_with_humans(preds, annotations, aggregation="mean", n_resamples=100)
    median = correlation_with_humans(preds, annotations, aggregation="median", n_resamples=100)
    assert mean.overall.pearson.value == pytest.approx(np.corrcoef(preds, [np.mean(a) for a in annotations])[0, 1])
    assert median.overall.pearson.value == pytest.approx(np.corrcoef(preds, [np.median(a) for a in annotations])[0, 1])
    assert (mean.aggregation, median.aggregation, mean.n_annotations) == ("mean", "median", 27)
    avg = correlation_with_humans(preds, annotations, aggregation="average_annotator", n_resamples=100)
    assert avg.overall == mean.overall  # the model against the item means
    values = np.concatenate(annotations)
    others = np.concatenate([(np.sum(a) - np.array(a)) / 2 for a in annotations])
    assert avg.average_annotator["pearson"].value == pytest.approx(np.corrcoef(values, others)[0, 1])
    assert avg.average_annotator["spearman"].value == pytest.approx(stats.spearmanr(values, others).statistic)
    out = avg.as_dict()
    assert out["aggregation"] == "average_annotator" and "pearson_ci" in out["average_annotator"]
    assert correlation_with_humans(preds, [np.mean(a) for a in annotations], n_resamples=100).aggregation == "as given"


def test_groups_give_per_group_intervals():
    x, y = bivariate(40, 0.6, 10)
    groups = ["a"] * 20 + ["b"] * 12 + ["c"] * 8
    r = correlation_with_humans(x, y, groups=groups, n_resamples=100)
    assert list(r.groups) == ["a", "b", "c"]
    assert r.groups["b"].pearson.value == pytest.approx(np.corrcoef(x[20:32], y[20:32])[0, 1])
    assert r.groups["c"].n == 8 and r.overall.n == 40
    omitted = correlation_with_humans(x[:36], y[:36], groups=groups[:36], n_resamples=100, on_invalid="omit")
    assert list(omitted.groups) == ["a", "b"] and omitted.omitted_groups == {"c": 4}
    assert omitted.as_dict()["omitted_groups"] == {"c": 4}


def test_omit_counts_the_items_left_out():
    x, y = bivariate(20, 0.6, 11)
    y[[3, 7]] = [np.nan, np.inf]
    r = correlation_with_humans(x, y, on_invalid="omit", n_resamples=100)
    keep = np.isfinite(y)
    assert (r.n_items, r.n_omitted) == (18, 2)
    assert r.overall.pearson.value == pytest.approx(np.corrcoef(x[keep], y[keep])[0, 1])
    c = compare_correlations(x, x[::-1].copy(), y, on_invalid="omit", n_resamples=100)
    assert (c.n, c.n_omitted) == (18, 2)


def test_cv_mean_interval_is_the_corrected_resampled_t():
    """Nadeau & Bengio (2003): variance of the mean (1/k + 1/(k − 1))·s² for k-fold CV, t with k − 1 df."""
    scores = [0.8282, 0.8101, 0.8390, 0.8177, 0.8263]
    i = cv_mean_interval(scores)
    half = stats.t.ppf(0.975, 4) * np.std(scores, ddof=1) * math.sqrt(1 / 5 + 1 / 4)
    assert (i.low, i.high) == pytest.approx((np.mean(scores) - half, np.mean(scores) + half), abs=1e-12)
    plain = cv_mean_interval(scores, test_to_train=0.0)  # the uncorrected t-interval: narrower
    assert plain.high - plain.low == pytest.approx(2 * stats.t.ppf(0.975, 4) * np.std(scores, ddof=1) / math.sqrt(5))
    with pytest.raises(ValueError, match="1 items; an interval for the mean over folds needs >= 2"):
        cv_mean_interval([0.8])


def test_zou_interval_against_the_worked_example():
    """Zou (2007), "Toward using confidence intervals to compare correlations", Psychological Methods
    12:399, example of overlapping correlations (r12 = .396, r13 = .179, r23 = .088, n = 66): 95 % CI
    (-.093, .517), as asserted in R's cocor test suite (cocor.dep.groups.overlap(..., test="zou2007"))."""
    i = zou_interval(0.396, 0.179, 0.088, 66)
    assert (round(i.low, 3), round(i.high, 3)) == (-0.093, 0.517)
    x, y = bivariate(60, 0.5, 12)
    c = compare_correlations(x + np.random.default_rng(0).normal(size=60), x, y, n_resamples=100)
    r = np.corrcoef([x + np.random.default_rng(0).normal(size=60), x, y])
    expected = zou_interval(r[0, 2], r[1, 2], r[0, 1], 60)
    assert c.as_dict()["pearson_difference_ci"] == pytest.approx([expected.low, expected.high], abs=1e-12)
