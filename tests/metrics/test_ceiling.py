"""The human ceiling's math (semrel.metrics.ceiling) on simulated panels whose answer is known:
normal ratings (R = 1 / (1 + σ²·mean(1/k))), Gumbel BWS annotators against an infinite panel on the
same tuples, perfect panels (1.0); the bootstrap against a brute-force resample; bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr

from semrel.metrics.bws.counting import encode_annotations
from semrel.metrics.ceiling import (
    _bootstrap,
    bws_ceiling,
    ceiling_of,
    fraction_of_ceiling,
    ratings_ceiling,
    single_annotator,
    spearman_brown,
)
from semrel.metrics.errors import DataValidationError


def normal_panel(counts, noise: float, seed: int):
    """Items with true score T ~ N(0, 1) and counts[i] ratings T + N(0, noise²) on a grid of 0.1 (as
    ratings come; its rounding adds a variance of 0.1²/12); (truth, ratings)."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=len(counts))
    return truth, [np.round(t + noise * rng.normal(size=k), 1) for t, k in zip(truth, counts, strict=True)]


def test_spearman_brown_is_the_prophecy():
    assert spearman_brown(0.84) == pytest.approx(2 * 0.84 / 1.84)
    assert spearman_brown(0.5, 3) == pytest.approx(0.75)  # 3 x a panel of reliability 0.5
    assert spearman_brown(0.6, 1) == pytest.approx(0.6)
    assert spearman_brown(1.0, 2.5) == 1.0
    for r, factor in ((1.2, 2), (0.5, 0), (0.5, -1), (0.5, math.inf), ("0.5", 2)):
        with pytest.raises(ValueError):
            spearman_brown(r, factor)


def test_ceiling_of_a_published_split_half():
    reliability, value = ceiling_of(0.84)
    assert (round(reliability, 4), round(value, 4)) == (0.913, 0.9555)
    with pytest.raises(ValueError, match="halves do not agree"):
        ceiling_of(-0.2)


def test_fraction_of_ceiling():
    assert fraction_of_ceiling(0.8, 0.9) == pytest.approx(0.8 / 0.9)
    assert fraction_of_ceiling(0.95, 0.9) > 1  # above the ceiling is said, not clipped
    for score, ceiling in ((0.5, 0.0), (0.5, 1.2), (math.nan, 0.9), (0.5, None), (True, 0.9)):
        with pytest.raises(ValueError):
            fraction_of_ceiling(score, ceiling)


@pytest.mark.parametrize("k", [2, 3, 4, 9])
def test_ratings_ceiling_is_root_reliability(k):
    """Pearson ceiling ≈ √R with R = 1 / (1 + σ²/k), even and odd panels (halves 1 + 2 for k = 3)."""
    truth, ratings = normal_panel([k] * 2000, 1.0, seed=k)
    result = ratings_ceiling(ratings, trials=100, n_resamples=400)
    expected = math.sqrt(1 / (1 + 1 / k))
    assert result.pearson.value == pytest.approx(expected, abs=0.01)
    low, high = result.pearson.interval.low, result.pearson.interval.high
    assert low < expected < high and high - low < 0.04
    gold = np.array([r.mean() for r in ratings])
    assert result.spearman.value == pytest.approx(spearmanr(truth, gold).statistic, abs=0.01)
    assert result.pearson.factor == pytest.approx((1 / (k // 2) + 1 / -(-k // 2)) / 2 * k)
    assert (result.n_items, result.n_split, result.n_judgements) == (2000, 2000, 2000 * k)


def test_ratings_ceiling_counts_single_rated_items_in_the_gold():
    """A panel of 1 to 3 ratings per item (crowd-sts after a filter): R = 1 / (1 + σ²·mean(1/k))."""
    counts = np.random.default_rng(5).choice([1, 2, 3], size=2000, p=[0.4, 0.4, 0.2])
    truth, ratings = normal_panel(counts, 1.0, seed=6)
    result = ratings_ceiling(ratings, trials=100, n_resamples=400)
    expected = math.sqrt(1 / (1 + np.mean(1 / counts)))
    oracle = pearsonr(truth, [r.mean() for r in ratings]).statistic
    assert result.pearson.interval.low < min(expected, oracle) and max(expected, oracle) < result.pearson.interval.high
    assert result.n_split == (counts >= 2).sum() and result.n_items == 2000
    # the same splits without the single-rated items: a ceiling those items do not have
    without = ratings_ceiling([r for r in ratings if r.size >= 2], trials=100, n_resamples=100)
    assert without.pearson.split_half == result.pearson.split_half
    assert without.pearson.value > result.pearson.value + 0.05


def test_perfect_panel_has_ceiling_one():
    ratings = [np.full(3, v) for v in np.random.default_rng(0).integers(1, 6, 200)]
    result = ratings_ceiling(ratings, trials=20, n_resamples=100)
    for c in (result.spearman, result.pearson):
        assert c.value == 1.0 and c.reliability == 1.0 and c.split_half == pytest.approx(1.0)
        assert (c.interval.low, c.interval.high) == pytest.approx((1.0, 1.0))


def gumbel_bws(truth, design, annotators: int, noise: float, rng):
    """Each tuple of ``design`` annotated ``annotators`` times: best/worst = arg max/min of T + noise·Gumbel."""
    tuples = np.repeat(design, annotators, axis=0)
    seen = truth[tuples] + noise * rng.gumbel(size=tuples.shape)
    rows = np.arange(len(tuples))
    return tuples, tuples[rows, seen.argmax(axis=1)], tuples[rows, seen.argmin(axis=1)]


def counting(n_items, tuples, best, worst):
    appearances = np.bincount(tuples.ravel(), minlength=n_items)
    return (np.bincount(best, minlength=n_items) - np.bincount(worst, minlength=n_items)) / appearances


@pytest.mark.parametrize(("annotators", "noise"), [(2, 1.0), (3, 1.0), (4, 2.0)])
def test_bws_ceiling_matches_an_infinite_panel_on_the_same_tuples(annotators, noise):
    rng = np.random.default_rng(annotators)
    n = 800
    truth = rng.normal(size=n)
    design = np.argsort(rng.random((2 * n, n)), axis=1)[:, :4]  # 2N random 4-tuples
    tuples, best, worst = gumbel_bws(truth, design, annotators, noise, rng)
    gold = counting(n, tuples, best, worst)
    infinite = counting(n, *gumbel_bws(truth, design, 300, noise, rng))
    result = bws_ceiling(encode_annotations(tuples, best, worst), trials=200)
    for c, oracle in ((result.spearman, spearmanr(infinite, gold).statistic),
                      (result.pearson, pearsonr(infinite, gold).statistic)):
        assert c.value == pytest.approx(oracle, abs=0.015)
        assert c.interval.low - 0.005 < oracle < c.interval.high + 0.005
        assert c.factor == pytest.approx(2, abs=0.06)
    assert result.n_judgements == len(tuples)


def test_bws_ceiling_of_perfect_annotators_is_one_and_items_restrict_the_correlation():
    rng = np.random.default_rng(0)
    n = 60
    truth = rng.permutation(n).astype(float)
    design = np.argsort(rng.random((2 * n, n)), axis=1)[:, :4]
    tuples, best, worst = gumbel_bws(truth, design, 2, 0.0, rng)
    ann = encode_annotations(tuples, best, worst)
    assert bws_ceiling(ann, trials=10, n_resamples=100).spearman.value == 1.0
    some = bws_ceiling(ann, np.arange(0, n, 2), trials=10, n_resamples=100)
    assert some.n_items == n // 2 and some.pearson.value == 1.0
    for items in ([0, 0, 1], [0, 1], [0, 1, n]):
        with pytest.raises(ValueError):
            bws_ceiling(ann, items, trials=10)


def test_bootstrap_equals_brute_force_resamples():
    """Weighted sums over item counts give each resample's Spearman and Pearson exactly."""
    rng = np.random.default_rng(3)
    a = rng.integers(0, 7, (3, 50)) / 2.0
    b = a + rng.integers(0, 3, (3, 50))
    valid = rng.random((3, 50)) > 0.15
    fast = _bootstrap(a, b, valid, 6, np.random.default_rng(9))
    picks = np.random.default_rng(9).integers(0, 50, size=(6, 50))
    for q, pick in enumerate(picks):
        rows = [(a[t, pick][valid[t, pick]], b[t, pick][valid[t, pick]]) for t in range(3)]
        assert fast["spearman"][q] == pytest.approx(np.mean([spearmanr(x, y).statistic for x, y in rows]), abs=1e-12)
        assert fast["pearson"][q] == pytest.approx(np.mean([pearsonr(x, y).statistic for x, y in rows]), abs=1e-12)


def test_same_seed_same_bits():
    _, ratings = normal_panel([3] * 100, 1.0, seed=1)
    first, again = (ratings_ceiling(ratings, trials=30, n_resamples=200, seed=4) for _ in range(2))
    assert first == again
    assert ratings_ceiling(ratings, trials=30, n_resamples=200, seed=5) != first


def test_single_annotator_leaves_single_judgements_out():
    truth, ratings = normal_panel([1, 2, 3] * 100, 1.0, seed=2)
    estimates, used = single_annotator(ratings, n_resamples=200)
    assert used == 200
    values = np.concatenate([r for r in ratings if r.size >= 2])
    others = np.concatenate([(r.sum() - r) / (r.size - 1) for r in ratings if r.size >= 2])
    assert estimates["pearson"].value == pytest.approx(pearsonr(values, others).statistic)
    assert estimates["spearman"].value == pytest.approx(spearmanr(values, others).statistic)
    with pytest.raises(DataValidationError, match="needs >= 8 items with >= 2 judgements"):
        single_annotator([[1, 2]] * 7 + [[3]] * 5)


@pytest.mark.parametrize(("ratings", "message"), [
    ([[1, 2], [], [3, 4], [2, 2]], r"annotations\[1\] is empty"),
    ([[1, 2], [3, float("nan")], [3, 4], [2, 5]], r"annotations\[1\] holds a non-finite value"),
    ([[1, 2], [3], [4, 5]], "needs >= 3 items with >= 2 ratings"),
    ([[1, 2], ["a", 3], [4, 5]], r"annotations\[1\]: not a list of numbers"),
])
def test_bad_ratings_are_refused(ratings, message):
    with pytest.raises(ValueError, match=message):
        ratings_ceiling(ratings, trials=5)


def test_halves_that_disagree_have_no_ceiling():
    rng = np.random.default_rng(0)
    with pytest.raises(DataValidationError, match="the halves do not agree: no ceiling"):
        ratings_ceiling([rng.integers(1, 6, 2) for _ in range(400)], trials=50, n_resamples=100, seed=1)


def test_constant_gold_is_refused():
    with pytest.raises(DataValidationError, match="split-half spearman correlation undefined"):
        ratings_ceiling([[3, 3]] * 20, trials=5, n_resamples=100)
