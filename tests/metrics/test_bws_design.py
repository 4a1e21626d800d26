"""Tuple design: size, no repeats, balanced items, even pair co-occurrence, seeding."""

import numpy as np
import pytest

from semrel.metrics.bws.design import generate_tuples, pair_count_std


@pytest.mark.parametrize("n_items, k, factor", [(5, 4, 2.0), (13, 4, 1.5), (50, 4, 2.0), (101, 5, 2.0), (7, 2, 3.0)])
def test_design_properties(n_items, k, factor):
    design = generate_tuples(n_items, k=k, factor=factor, n_designs=30, seed=1)
    tuples = design.tuples
    assert tuples.shape == (int(np.floor(factor * n_items + 0.5)), k)  # round half up, as the Perl script
    assert all(len(set(row)) == k for row in tuples.tolist())  # no tuple repeats an item
    counts = np.bincount(tuples.ravel(), minlength=n_items)
    assert counts.max() - counts.min() <= 1  # items appear about equally often
    assert design.pair_count_std == design.candidate_stds.min() == pair_count_std(tuples, n_items)


def test_pair_count_std_hand_computed():
    assert pair_count_std(np.array([[0, 1, 2, 3]]), 4) == 0.0  # all 6 pairs once
    # 5 items: 6 pairs once, 4 pairs never: mean 0.6, variance (6 * 0.16 + 4 * 0.36) / 9
    assert pair_count_std(np.array([[3, 1, 0, 2]]), 5) == pytest.approx(np.sqrt(2.4 / 9))


def test_best_of_many_designs_spreads_pairs_more_evenly():
    n_items = 60
    design = generate_tuples(n_items, n_designs=100, seed=0)
    assert design.pair_count_std < np.median(design.candidate_stds)
    rng = np.random.default_rng(0)  # independent random 4-subsets: pairs and items far less even
    naive = np.array([rng.choice(n_items, 4, replace=False) for _ in range(len(design.tuples))])
    assert design.pair_count_std < pair_count_std(naive, n_items)
    assert np.ptp(np.bincount(naive.ravel(), minlength=n_items)) > 1


def test_seeded_and_item_ids():
    items = [f"pair-{i}" for i in range(20)]
    a = generate_tuples(items, n_designs=10, seed=7)
    assert np.array_equal(a.tuples, generate_tuples(items, n_designs=10, seed=7).tuples)
    assert not np.array_equal(a.tuples, generate_tuples(items, n_designs=10, seed=8).tuples)
    assert set(a.tuples.ravel()) == set(items)


def test_bad_arguments():
    with pytest.raises(ValueError, match="distinct.*'x'"):
        generate_tuples(["x", "y", "x", "z", "w"])
    with pytest.raises(ValueError, match="k <= number of items"):
        generate_tuples(3, k=4)
    with pytest.raises(ValueError, match="factor > 0"):
        generate_tuples(10, factor=0)
