"""BWS scoring beyond counting (semrel.metrics.bws.scoring): Bradley–Terry and Hollis' Value.

Known truths: choix's penalised fit, Hollis' update written as a plain loop, simulated annotators
with a latent value, an item that is always best; and counting's errors for bad input."""

from __future__ import annotations

import csv
import importlib.util
import json

import evaluate
import numpy as np
import pytest
from scipy.stats import spearmanr

from project import REPO
from semrel.cli import main
from semrel.metrics import module_path
from semrel.metrics.bws import cli as bws_cli
from semrel.metrics.bws.counting import bws_counting_scores, encode_annotations
from semrel.metrics.bws.design import generate_tuples
from semrel.metrics.bws.readers import read_semeval_2024
from semrel.metrics.bws.scoring import (
    DEFAULT_ALPHA,
    METHODS,
    VALUE_RATE,
    bws_scores,
    implied_pairs,
    value_scores,
)
from semrel.metrics.errors import DataValidationError
from semrel.metrics.split_half.split_half import split_half_bws

MODELS = ("bradley_terry", "value")


def simulate(n_items, factor, noise, seed, per_tuple=1):
    """Annotators pick best/worst of latent value + N(0, noise^2), one annotation per tuple; sparse:
    factor 1 puts each item in about 4 tuples."""
    rng = np.random.default_rng(seed)
    tuples = generate_tuples(n_items, k=4, factor=factor, n_designs=1, seed=seed).tuples.repeat(per_tuple, axis=0)
    truth = rng.normal(size=n_items)
    noisy = truth[tuples] + noise * rng.normal(size=tuples.shape)
    rows = np.arange(len(tuples))
    return tuples, tuples[rows, noisy.argmax(axis=1)], tuples[rows, noisy.argmin(axis=1)], truth


def test_implied_pairs_best_beats_all_others_all_others_beat_worst():
    winners, losers = implied_pairs(np.array([[0, 1, 2, 3]]), np.array([2]), np.array([0]))
    assert sorted(zip(winners.tolist(), losers.tolist(), strict=True)) == [(1, 0), (2, 0), (2, 1), (2, 3), (3, 0)]


def test_bradley_terry_is_choix_penalised_maximum_likelihood():
    choix = pytest.importorskip("choix")
    tuples, best, worst, _ = simulate(60, 2, 1.0, seed=3)
    r = bws_scores(tuples, best, worst, method="bradley_terry")
    ann = encode_annotations(tuples, best, worst)
    winners, losers = implied_pairs(ann.tuples, ann.best, ann.worst)
    reference = choix.opt_pairwise(len(ann.items), list(zip(winners.tolist(), losers.tolist(), strict=True)),
                                   alpha=DEFAULT_ALPHA)
    np.testing.assert_allclose(r.strength, reference, atol=1e-4)
    np.testing.assert_allclose(r.score_01, 1 / (1 + np.exp(-r.strength)))
    np.testing.assert_allclose(r.score, 2 * r.score_01 - 1)
    assert abs(r.strength.sum()) < 1e-6  # the prior centres theta


def hollis_value(winners, losers, n_items, passes, seed):
    """Hollis' (2018) Value update, one pair at a time, with the permutations value_scores draws."""
    rng, value = np.random.default_rng(seed), [0.5] * n_items
    for p in range(1, passes + 1):
        rate = VALUE_RATE / p
        for k in rng.permutation(len(winners)):
            w, lo = winners[k], losers[k]
            odds_w, odds_l = value[w] / (1 - value[w]), value[lo] / (1 - value[lo])
            salience = 1 - odds_w / (odds_w + odds_l)
            value[w] += salience * rate * (1 - value[w])
            value[lo] += salience * rate * (0 - value[lo])
    return np.array(value)


def test_value_equals_hollis_update_pair_by_pair():
    tuples, best, worst, _ = simulate(80, 2, 1.0, seed=1)
    ann = encode_annotations(tuples, best, worst)
    fast = value_scores(ann.tuples, ann.best, ann.worst, len(ann.items), passes=4, seed=7)
    slow = hollis_value(*implied_pairs(ann.tuples, ann.best, ann.worst), len(ann.items), passes=4, seed=7)
    np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12)


def test_model_methods_recover_the_order_at_least_as_well_as_counting_when_sparse():
    """Sparse design (each item in about 4 tuples, one annotation each): Spearman with the latent
    values, paired by data set, averaged over seeds. Counting ties many items and ignores whom an
    item beat; the models do not (Hollis 2018)."""
    gains = {m: [] for m in MODELS}
    for seed in range(6):
        tuples, best, worst, truth = simulate(200, 1, 0.5, seed)
        counting = spearmanr(bws_scores(tuples, best, worst).score, truth).statistic
        for method in MODELS:
            rho = spearmanr(bws_scores(tuples, best, worst, method=method, seed=seed).score, truth).statistic
            gains[method].append(rho - counting)
    for method, gain in gains.items():
        assert np.mean(gain) > 0.005, (method, gain)  # measured: +0.019 (BT), +0.015 (Value) over 20 seeds


def test_always_best_item_is_finite_and_on_top():
    """Item "top" is best in every annotation it is in: its maximum-likelihood strength is +inf."""
    tuples = [["top", "b", "c", "d"], ["top", "c", "e", "f"], ["top", "b", "e", "g"], ["b", "c", "d", "e"],
              ["d", "f", "g", "b"]]
    best, worst = ["top", "top", "top", "b", "g"], ["d", "f", "g", "e", "d"]
    for method in MODELS:
        r = bws_scores(tuples, best, worst, method=method)
        assert np.isfinite(r.score).all() and np.isfinite(r.score_01).all()
        assert r.items[np.argmax(r.score)] == "top"
        assert -1 < r.score.min() and r.score.max() < 1
    assert np.isfinite(bws_scores(tuples, best, worst, method="bradley_terry", alpha=1e-3).strength).all()
    with pytest.raises(ValueError, match="alpha must be > 0"):
        bws_scores(tuples, best, worst, method="bradley_terry", alpha=0)


def test_same_seed_same_bits_other_seed_other_order():
    tuples, best, worst, _ = simulate(60, 2, 1.0, seed=2)
    one, again = (bws_scores(tuples, best, worst, method="value", seed=5, passes=10).score for _ in range(2))
    assert np.array_equal(one, again)
    assert not np.array_equal(one, bws_scores(tuples, best, worst, method="value", seed=6, passes=10).score)
    bt = [bws_scores(tuples, best, worst, method="bradley_terry").score for _ in range(2)]
    assert np.array_equal(*bt)


def test_counting_through_bws_scores_is_counting():
    tuples, best, worst, _ = simulate(60, 2, 1.0, seed=4)
    r, c = bws_scores(tuples, best, worst), bws_counting_scores(tuples, best, worst)
    assert r.method == "counting" and r.strength is None
    assert np.array_equal(r.score, c.score) and np.array_equal(r.score_01, c.score_01)


BAD = {  # (tuples, best, worst, choice): one rule each
    "best outside the tuple": ([["a", "b", "c", "d"], ["a", "b", "c", "e"]], ["a", "x"], ["d", "a"], "item"),
    "best == worst": ([["a", "b", "c", "d"], ["a", "b", "c", "e"]], ["a", "b"], ["d", "b"], "item"),
    "repeated item": ([["a", "b", "c", "d"], ["a", "a", "c", "e"]], ["a", "a"], ["d", "e"], "item"),
    "mixed sizes": ([["a", "b", "c", "d"], ["a", "b", "c"], ["a", "b", "c", "e"]], ["a", "a", "a"],
                    ["d", "c", "e"], "item"),
    "empty cell": ([["a", "b", "c", "d"], ["a", "", "c", "e"]], ["a", "a"], ["d", "e"], "item"),
    "position out of range": ([["a", "b", "c", "d"], ["a", "b", "c", "e"]], [1, 5], [4, 1], "position"),
}


@pytest.mark.parametrize("case", BAD)
@pytest.mark.parametrize("method", MODELS)
def test_bad_input_gives_counting_error(case, method):
    tuples, best, worst, choice = BAD[case]
    with pytest.raises(DataValidationError) as counting:
        bws_counting_scores(tuples, best, worst, choice=choice)
    with pytest.raises(DataValidationError) as other:
        bws_scores(tuples, best, worst, choice=choice, method=method)
    assert str(other.value) == str(counting.value)
    omitted = bws_scores(tuples, best, worst, choice=choice, method=method, on_invalid="omit")
    kept = bws_counting_scores(tuples, best, worst, choice=choice, on_invalid="omit")
    assert omitted.n_skipped == kept.n_skipped == 1 and omitted.items.tolist() == kept.items.tolist()


def test_unknown_method_names_the_methods():
    with pytest.raises(ValueError, match="method must be one of 'counting', 'bradley_terry', 'value', not 'bt'"):
        bws_scores([["a", "b", "c", "d"]], ["a"], ["d"], method="bt")
    assert bws_cli.METHODS == METHODS  # the CLI's numpy-free copy


@pytest.fixture(scope="module")
def arb(mirror):
    return read_semeval_2024(mirror / "semrel-2024" / "BWS_annotations" / "arb_bws.csv", on_invalid="omit")


def test_split_half_takes_the_method_on_the_real_file(arb):
    counting = split_half_bws(arb, trials=4, seed=0)
    assert np.array_equal(split_half_bws(arb, trials=4, seed=0, method="counting").spearman_trials,
                          counting.spearman_trials)
    for method in MODELS:
        r = split_half_bws(arb, trials=4, seed=0, method=method, passes=20)
        assert r.n_items == counting.n_items == 1800 and len(r.spearman_trials) == 4
        assert np.array_equal(r.n_items_both, counting.n_items_both)  # the same splits as counting
        assert 0.3 < r.spearman < 0.9 and 0.3 < r.pearson < 0.9
        again = split_half_bws(arb, trials=4, seed=0, method=method, passes=20)
        assert np.array_equal(r.spearman_trials, again.spearman_trials)
    with pytest.raises(ValueError, match="missing='zero' is SHR-BWS.pl's counting rule"):
        split_half_bws(arb, trials=2, method="value", missing="zero")


def test_command_line_method(mirror, capsys, tmp_path):
    path = mirror / "semrel-2024" / "BWS_annotations" / "arb_bws.csv"
    assert main(["bws", "score", str(path), "--on-invalid", "omit"]) == 0
    assert "method" not in capsys.readouterr().out.splitlines()[0].split()  # counting's table has no method column
    out = tmp_path / "bt.csv"
    assert main(["bws", "score", str(path), "--on-invalid", "omit", "--method", "bradley_terry",
                 "--csv", str(out)]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header.split()[:3] == ["file", "layout", "method"] and row.split()[2] == "bradley_terry"
    with out.open(encoding="utf-8", newline="") as file:
        table = list(csv.DictReader(file))
    assert len(table) == 1800 and list(table[0])[2:] == ["appearances", "n_best", "n_worst", "score", "score_01"]
    expected = bws_scores(read_semeval_2024(path, on_invalid="omit"), method="bradley_terry").score
    np.testing.assert_allclose([float(row["score"]) for row in table], expected)
    with pytest.raises(SystemExit) as exit_:
        main(["bws", "reliability", str(path), "--method", "elo"])
    assert exit_.value.code == 2 and "invalid choice: 'elo'" in capsys.readouterr().err


def test_results_page_shows_the_figures_of_results_json():
    """benchmarks/results/data.md's BWS-methods tables say what results.json's "bws_methods" holds."""
    spec = importlib.util.spec_from_file_location("bench_bws_methods", REPO / "benchmarks" / "bench_bws_methods.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    results = json.loads((REPO / "benchmarks" / "results.json").read_text(encoding="utf-8"))[bench.KEY]
    page = (REPO / "benchmarks" / "results" / "data.md").read_text(encoding="utf-8")
    section = page.split("## BWS scoring methods", 1)[1].split("\n## ", 1)[0]
    lines = section.splitlines()
    for row in bench.markdown_rows(results):
        assert row in lines, row


def test_evaluate_modules_take_the_method():
    tuples, best, worst, _ = simulate(40, 2, 1.0, seed=5)
    tuples, best, worst = tuples.tolist(), best.tolist(), worst.tolist()
    module = evaluate.load(module_path("bws_scores"))
    counting = module.compute(tuples=tuples, best=best, worst=worst)
    assert list(counting) == ["items", "appearances", "n_best", "n_worst", "score", "score_01", "n_annotations",
                              "n_skipped"]  # counting's output: no method key
    bt = module.compute(tuples=tuples, best=best, worst=worst, method="bradley_terry")
    expected = bws_scores(tuples, best, worst, method="bradley_terry")
    assert bt["method"] == "bradley_terry" and bt["items"] == expected.items.tolist()
    np.testing.assert_allclose(bt["strength"], expected.strength)
    np.testing.assert_allclose(bt["score"], expected.score)
    shr = evaluate.load(module_path("split_half_reliability"))
    r = shr.compute(tuples=tuples, best=best, worst=worst, trials=3, seed=0, method="value")
    direct = split_half_bws(tuples, best, worst, trials=3, seed=0, method="value")
    assert r["spearman"] == pytest.approx(direct.spearman)
