"""rank_average's ties: rows of equal rank sums stay tied, bit for bit, on every machine."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from semrel.trainers.combination import rank_average


@pytest.mark.parametrize("members", [2, 3, 5])
@pytest.mark.parametrize("weights", ["equal", "doubled"])
def test_rows_whose_rank_sums_tie_are_exactly_tied(members, weights):
    """Rows of equal rank sums get one average, bit for bit, which scaled ranks summed in
    floating point do not give (some ties broken, differently on other machines)."""
    p = np.random.default_rng(members).normal(size=(1000, members))
    averaged = rank_average(p, None if weights == "equal" else [2] * members)
    sums = stats.rankdata(p, axis=0).sum(axis=1)
    assert len(np.unique(sums)) < 1000  # the draw has ties to keep
    for total in np.unique(sums):
        assert np.unique(averaged[sums == total]).size == 1
