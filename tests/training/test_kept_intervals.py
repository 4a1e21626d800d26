"""``semrel benchmark`` keeps each cell's bootstrap interval in the score cache's ``intervals/``
(trainers.benchmark.cells.kept_spearman): a warm run reads the cold run's figures back exactly
without resampling; other scores, gold or resamples compute anew; no score cache keeps nothing."""

from __future__ import annotations

import numpy as np
import pytest

from semrel.dataset_scripts.benchmark_sets import BenchmarkSet
from semrel.trainers.benchmark import cells, run_benchmark
from semrel.trainers.benchmark.run import LoadedSet
from semrel.trainers.scoring import load_scorer
from trainer_fixtures import toy_pairs


def refuse(*args, **kwargs):
    raise AssertionError("resampled again")


def test_kept_intervals_are_read_back_exactly_and_keyed_by_the_data(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    values, gold = rng.random(40), rng.random(40)
    first = cells.kept_spearman(values, gold, 200, tmp_path)
    assert len(list((tmp_path / "intervals").glob("*.json"))) == 1
    with monkeypatch.context() as patch:
        patch.setattr(cells, "spearman_interval", refuse)
        assert cells.kept_spearman(values.copy(), gold.copy(), 200, tmp_path) == first
    other_gold, other_values = gold.copy(), values.copy()
    other_gold[0] += 1e-9
    other_values[[0, 1]] = other_values[[1, 0]]
    with monkeypatch.context() as patch:
        patch.setattr(cells, "spearman_interval", refuse)
        for args in ((values, other_gold, 200), (other_values, gold, 200), (values, gold, 300)):
            with pytest.raises(AssertionError, match="resampled again"):  # another key: computed
                cells.kept_spearman(*args, tmp_path)
    assert cells.kept_spearman(other_values, gold, 200, tmp_path).value != first.value
    assert len(list((tmp_path / "intervals").glob("*.json"))) == 2
    assert cells.kept_spearman(values, gold, 200, None) == first  # no score cache: computed, not kept


def test_a_warm_benchmark_gives_the_cold_cells_without_resampling(kinds, tmp_path, monkeypatch):
    rows = toy_pairs()
    sets = [LoadedSet(BenchmarkSet("str-2021", name, "test", (0.0, 1.0), ("en",)), rows.select(span))
            for name, span in (("a", range(60)), ("b", range(60, 120)))]

    def run():
        scorer = load_scorer(str(kinds["bi-encoder"]), cache_dir=tmp_path / "scores")
        try:
            return run_benchmark([scorer], sets, n_resamples=200, log=lambda line: None)
        finally:
            scorer.close()

    cold = run()
    assert len(list((tmp_path / "scores" / "intervals").glob("*.json"))) == 2
    monkeypatch.setattr(cells, "spearman_interval", refuse)
    warm = run()
    figures = [(c.spearman, c.spearman_ci, c.pearson, c.pearson_ci) for c in cold.cells]
    assert [(c.spearman, c.spearman_ci, c.pearson, c.pearson_ci) for c in warm.cells] == figures
    assert all(c.status == "scored" for c in warm.cells)
    with pytest.raises(AssertionError, match="resampled again"):
        cells.kept_spearman(np.arange(10.0), np.arange(10.0)[::-1], 200, tmp_path)
