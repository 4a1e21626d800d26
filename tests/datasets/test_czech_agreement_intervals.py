"""Czech News STS agreement figures with their intervals: the bootstrap over pairs keeps
the point estimates of agreement_of and says the paper's Table 1 values are outside both intervals."""

from __future__ import annotations

import pytest

from semrel.dataset_scripts import load
from semrel.dataset_scripts.czech_news_sts.paper import PAPER_INTER, agreement_intervals, agreement_of


def test_intervals_on_the_free_test_keep_the_point_estimates(mirror, cache_dir):
    annotations = [list(a) for a in load("czech-news-sts", "free", mirror=mirror, cache_dir=cache_dir)["test"]
                   ["annotations"]]
    agreement = agreement_of(annotations)
    intervals = agreement_intervals(annotations)  # as the script: 1,000 resamples, seed 0
    for stat in ("pearson", "spearman"):
        pooled, loo = intervals["pooled"][stat], intervals["loo"][stat]
        assert pooled.value == pytest.approx(getattr(agreement.inter, stat), abs=1e-12)
        assert loo.value == pytest.approx(getattr(agreement.inter_loo, stat), abs=1e-12)
        assert pooled.interval.low < pooled.value < pooled.interval.high and pooled.n == 10_800
        assert loo.interval.high < PAPER_INTER[stat] < pooled.interval.low  # the paper's measure lies between
        assert pooled.interval.high - pooled.interval.low < 0.05


def test_too_few_pairs_for_an_interval_say_so():
    with pytest.raises(ValueError, match="2 items; the average annotator's bootstrap interval needs >= 8"):
        agreement_intervals([[4, 4, 5, 4], [0, 1, 1, 2]])
