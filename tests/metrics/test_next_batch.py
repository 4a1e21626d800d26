"""The next-batch designs are valid: the budget is spent exactly, no tuple repeats an item, every
item can be reached; and the simulation compares the designs at equal budget."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.bench_next_batch import bws_run, ratings_run, weighted_tuples
from semrel.metrics.rating_plan.next_batch import shrunk_sd, uniform_assignment, widest_assignment


@pytest.mark.parametrize("counts, budget, expected", [
    ([2, 2, 2, 2], 6, [2, 2, 1, 1]),  # the remainder at random among equals: sorted below
    ([1, 3, 2], 4, [2, 1, 1]),  # fewest raters first
    ([5, 5], 0, [0, 0]),
])
def test_uniform_assignment_spends_the_budget_evenly(counts, budget, expected):
    extra = uniform_assignment(np.array(counts), budget, np.random.default_rng(0))
    assert extra.sum() == budget
    assert sorted(extra.tolist(), reverse=True) == sorted(expected, reverse=True)
    if counts == [1, 3, 2]:
        assert extra.tolist() == expected


@pytest.mark.parametrize("budget", [1, 7, 50, 333])
def test_widest_assignment_spends_exactly_the_budget_on_the_widest(budget):
    rng = np.random.default_rng(budget)
    sd, counts = rng.uniform(0.2, 2.0, 40), rng.integers(1, 5, 40)
    extra = widest_assignment(sd, counts, budget)
    assert extra.sum() == budget and (extra >= 0).all()
    given = extra > 0  # water-filling: no item left out was wider than a given item before its last rating
    before_last = sd[given] / np.sqrt(counts[given] + extra[given] - 1)
    assert (sd / np.sqrt(counts))[~given].max(initial=0) <= before_last.max() + 1e-12


def test_every_item_is_reachable_when_they_are_alike():
    extra = widest_assignment(np.ones(10), np.full(10, 3), 10)
    assert extra.tolist() == [1] * 10


def test_shrunk_sd_pools_single_ratings():
    values = np.array([[1.0, 3.0], [2.0, np.nan], [4.0, 4.0]])
    sd = shrunk_sd(values, np.array([2, 1, 2]), prior=2.0)
    pooled = (2.0 + 0.0) / 2  # within-item sums of squares over their degrees of freedom
    assert sd[1] == pytest.approx(np.sqrt(pooled))  # rated once: the pooled sd
    assert sd[0] == pytest.approx(np.sqrt((2.0 + 2 * pooled) / 3))


@pytest.mark.parametrize("weights", [np.ones(12), np.r_[np.zeros(8), np.full(4, 5.0)], np.linspace(0, 1, 30)])
def test_weighted_tuples_repeat_no_item_and_reach_every_item(weights):
    tuples = weighted_tuples(weights, 2000, 4, np.random.default_rng(0))
    assert tuples.shape == (2000, 4)
    assert (np.sort(tuples, axis=1)[:, 1:] != np.sort(tuples, axis=1)[:, :-1]).all()
    assert set(np.unique(tuples)) == set(range(weights.size))  # the floor keeps zero-weight items in


def test_weighted_tuples_refuse_too_few_items():
    with pytest.raises(ValueError, match=r"^weights must be 4 or more finite numbers >= 0, one per item$"):
        weighted_tuples(np.ones(3), 5, 4, np.random.default_rng(0))


@pytest.mark.parametrize("design", ["uniform", "widest"])
def test_the_ratings_simulation_spends_equal_budgets(design, monkeypatch):
    spent = []
    import benchmarks.bench_next_batch as bench

    real = bench.rate
    monkeypatch.setattr(bench, "rate", lambda rng, *a: spent.append(a[-1].size) or real(rng, *a))
    curve = ratings_run(0, design, "hetero", n_items=60, rounds=2, per_round=30)
    assert spent == [120, 30, 30] and len(curve) == 3 and all(0 < c < 1 for c in curve)


@pytest.mark.parametrize("design", ["uniform", "weighted"])
def test_the_bws_simulation_runs_both_designs(design):
    curve = bws_run(0, design, n_items=40, rounds=2)
    assert len(curve) == 3 and all(0 < c <= 1 for c in curve)
