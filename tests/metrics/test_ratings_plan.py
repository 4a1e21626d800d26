"""``semrel ratings plan`` and its math: simulated panels whose reliability is known, the formulas
checked against their definitions, and every bad input answered in one exact line."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats
from test_cli import semrel

from semrel.cli import main
from semrel.metrics.agreement import krippendorff_alpha_interval
from semrel.metrics.errors import ParameterError
from semrel.metrics.rating_plan.annotators import annotator_report
from semrel.metrics.rating_plan.plan import plan_ratings
from semrel.metrics.rating_plan.projection import Projection, _check_reachable, fit_lines, needed, project
from semrel.metrics.rating_plan.reliability import Ranged, alpha_from, alpha_moments, item_means, spearman_brown
from semrel.metrics.rating_plan.table import make_table, panel, parse_scale


def simulated(n_items=400, raters=4, lam=1.0, seed=0):
    """Latent truth N(0, 1) + noise of variance ``lam``: the mean of K raters has R_K = K / (K + lam)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n_items)[:, None] + rng.normal(scale=np.sqrt(lam), size=(n_items, raters))
    names = np.array([f"a{j}" for j in range(raters)])
    return make_table(np.repeat(np.arange(n_items), raters), np.tile(names, n_items), x.ravel(), scale=(-20, 20))


@pytest.mark.parametrize("lam, raters, k", [(1.0, 4, 8), (2.0, 4, 12), (0.5, 6, 3)])
def test_reliability_now_and_projected_cover_the_truth(lam, raters, k):
    values, counts = panel(simulated(raters=raters, lam=lam))
    p = project(values, counts, raters=k, n_resamples=300, seed=1)
    truth_now, truth_k = raters / (raters + lam), k / (k + lam)
    assert p.now.low <= truth_now <= p.now.high, p.now
    for projection in (p.spearman_brown, p.resampled):
        assert projection.reliability.low <= truth_k <= projection.reliability.high, projection
    assert p.trusted == ("resampled" if k <= raters else "spearman-brown")
    measured = {int(kk): t for kk, t in zip(p.trace_raters, p.trace, strict=True)}
    assert measured[1].low <= 1 / (1 + lam) <= measured[1].high


@pytest.mark.parametrize("k", [1, 2, 8, 40])
def test_the_spearman_brown_projection_is_the_prophecy_formula(k):
    values, counts = panel(simulated(raters=4))  # 4 raters split 2 + 2: lengthening K / 2
    p = project(values, counts, raters=k, n_resamples=50)
    assert p.spearman_brown.reliability.value == pytest.approx(spearman_brown(p.split_half, k / 2), abs=1e-12)
    assert p.now.value == pytest.approx(2 * p.split_half / (1 + p.split_half), abs=1e-12)


@pytest.mark.parametrize("r, n, expected", [(0.84, 2, 0.913043), (0.5, 3, 0.75), (0.6, 0.5, 0.428571), (0.0, 4, 0.0)])
def test_spearman_brown_formula(r, n, expected):
    assert spearman_brown(r, n) == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("b0, b1", [(1.0, 2.0), (1.25, 0.5), (1.0, 0.1)])
def test_the_resampled_line_is_recovered_and_the_raters_needed_follow(b0, b1):
    k = np.arange(1, 7)
    got0, got1 = fit_lines(k, (1 / (b0 + b1 / k))[None, :])
    assert (got0[0], got1[0]) == pytest.approx((b0, b1))
    target = 0.99 / b0 * 0.95
    assert needed(b0, b1, target) == np.ceil(b1 / (1 / target - b0))
    assert needed(b0, b1, 1 / b0) == np.inf  # at the asymptote: out of reach


def test_an_asymptote_above_one_is_held_at_one():
    k = np.arange(1, 5)
    b0, b1 = fit_lines(k, (1 / (0.8 + 1 / k))[None, :])  # free fit: b0 = 0.8
    assert b0[0] == 1.0 and b1[0] > 0


def test_alpha_bootstrap_sums_give_krippendorff_alpha():
    t = simulated(n_items=60, raters=3)
    values, counts = panel(t)
    values[::7, 2] = np.nan  # ragged panel
    counts = (~np.isnan(values)).sum(axis=1)
    item, column = np.nonzero(~np.isnan(values))
    assert alpha_from(alpha_moments(values, counts).sum(axis=0)) == pytest.approx(
        krippendorff_alpha_interval(item, values[item, column]), abs=1e-12)


def test_item_means_carry_t_intervals():
    values = np.array([[1.0, 2.0, 4.0], [3.0, 3.5, np.nan], [5.0, np.nan, np.nan]])
    m = item_means(values, np.array([3, 2, 1]))
    for i, row in enumerate(values[:2]):
        row = row[~np.isnan(row)]
        low, high = stats.t.interval(0.95, row.size - 1, loc=row.mean(), scale=stats.sem(row))
        assert (m.low[i], m.high[i]) == pytest.approx((low, high))
    assert np.isnan(m.low[2]) and m.mean[2] == 5.0


def test_annotator_checks_find_the_random_and_the_flat_annotator_and_the_retest():
    rng = np.random.default_rng(3)
    truth = rng.integers(1, 6, 80).astype(float)
    rows = [(i, a, float(np.clip(truth[i] + rng.integers(-1, 2), 1, 5))) for i in range(80) for a in ("g1", "g2")]
    rows += [(i, "rand", float(rng.integers(1, 6))) for i in range(80)]
    rows += [(i, "flat", 3.0) for i in range(0, 80, 2)]
    rows += [(0, "g1", truth[0]), (1, "g1", truth[1])]  # re-tests
    items, annotators, scores = zip(*rows, strict=True)
    report = annotator_report(make_table(items, annotators, scores, scale=(1, 5)))
    flags = report.table["flags"].to_dict()
    assert "random_like" in flags["rand"] and "low_variance" in flags["flat"]
    assert "random_like" not in flags["g1"] and "low_variance" not in flags["g1"]
    assert report.table.loc["g1", "retests"] == 2 and report.retest.n_ratings == 2
    # leave-one-out r of g2: its ratings against the mean of the other raters of the same items
    f = np.array(annotators) == "g2"
    others = [np.mean([s for it, a, s in rows[:-2] if it == i and a != "g2"]) for i in np.array(items)[f]]
    assert report.table.loc["g2", "loo_r"] == pytest.approx(np.corrcoef(np.array(scores)[f], others)[0, 1])


def test_the_plan_s_json_names_the_projection_at_k(tmp_path):
    p = plan_ratings(simulated(n_items=100), raters=6, target=0.9, n_resamples=100, trials=50, next_ratings=50)
    d = json.loads(json.dumps(p.as_dict()))
    assert d["projected"]["raters"] == 6 and d["projected"]["trusted"] == "spearman-brown"
    assert d["projected"]["reliability"] == d["projected"]["spearman_brown"]["reliability"]
    assert sum(row["more"] for row in d["next_batch"]) == 50


def _table_file(tmp_path, rows, header="item,annotator,score"):
    path = tmp_path / "ratings.csv"
    path.write_text(header + "\n" + "".join(",".join(map(str, r)) + "\n" for r in rows), encoding="utf-8")
    return path


_rng = np.random.default_rng(5)
_truth = _rng.integers(1, 6, 30)
GOOD = [(f"i{i}", f"a{a}", int(np.clip(_truth[i] + _rng.integers(-1, 2), 1, 5))) for i in range(30) for a in range(3)]
MIXED = GOOD + [(f"i{i}", "b9", min(100, 4 * i)) for i in range(30)]  # rows 91-120: 0, 4, 8, ..., 100
SCORE = "item,annotator,score"
BAD = [  # (id, header, rows, extra flags, the one line after "semrel ratings plan: error: ")
    ("one annotator", SCORE, [(f"i{i}", "solo", i % 5 + 1) for i in range(10)], [],
     "{f}: one annotator ('solo' gave every rating; reliability needs >= 2 annotators)"),
    ("every item rated once", SCORE, [(f"i{i}", f"a{i % 3}", i % 5 + 1) for i in range(10)], [],
     "{f}: every item is rated once (10 items; reliability needs items rated by >= 2 annotators)"),
    ("mixed scales, detected", SCORE, MIXED, [],
     "{f}: ratings on mixed scales (annotator 'a0' rates 1-5, annotator 'b9' up to 100; declare the scale "
     "with --scale LO-HI or rescale one group)"),
    ("mixed scales, declared", SCORE, MIXED, ["--scale", "1-5"],
     "{f}: row 91: score outside the declared scale 1-5 (0; 29 such rating(s))"),
    ("target above what the rater budget reaches", SCORE, GOOD, ["--target", "0.99", "--max-raters", "3"],
     "{f}: --target 0.99: above what any budget reaches with at most 3 raters per item (--max-raters): the "
     "spearman-brown projection reaches 0.900 there (asymptote 1.000) and needs 33\n"),
    ("no score column", "item,annotator,rating", GOOD, [],
     "{f}: missing columns (need item, annotator, score; missing ['score'])"),
    ("a score in other digits", SCORE, [("i0", "a0", "\u0663")] + GOOD, [],
     "{f}: row 1: score is not a number in ASCII digits ('\u0663')"),
]


@pytest.mark.parametrize("header, rows, extra, words", [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_input_is_one_exact_line(tmp_path, capsys, header, rows, extra, words):
    path = _table_file(tmp_path, rows, header)
    code = main(["ratings", "plan", str(path), "--resamples", "50", "--trials", "10", *extra])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith("semrel ratings plan: error: " + words.format(f=path)), err


FLAGS = [  # (flags, the argparse line)
    (["--target", "1"], "argument --target: must be a number in (0, 1), not '1'"),
    (["--target", "0"], "argument --target: must be a number in (0, 1), not '0'"),
    (["--target", "-0.5"], "argument --target: must be a number in (0, 1), not '-0.5'"),
    (["--target", "1.5"], "argument --target: must be a number in (0, 1), not '1.5'"),
    (["--scale", "5-1"], "argument --scale: must be LO-HI with LO < HI (e.g. 1-5, 0-100), not '5-1'"),
    (["--raters", "0"], "argument --raters: must be an integer >= 1, not '0'"),
]


@pytest.mark.parametrize("flags, words", FLAGS, ids=[" ".join(f) for f, _ in FLAGS])
def test_flags_outside_their_rule_are_one_line(tmp_path, capsys, flags, words):
    with pytest.raises(SystemExit) as done:
        main(["ratings", "plan", str(_table_file(tmp_path, GOOD)), *flags])
    err = capsys.readouterr().err
    assert done.value.code == 2 and err == f"semrel ratings plan: error: {words} (see semrel ratings plan --help)\n"


def test_a_target_at_or_above_the_asymptote_is_refused_naming_it():
    level = Ranged(0.85, 0.8, 0.9, 0.95)
    flat = Projection("resampled", level, level, Ranged(np.inf, 40.0, np.inf, 0.95), (1 / 0.85, 0.5))
    with pytest.raises(ParameterError) as refused:
        _check_reachable(flat, 0.9, None)
    assert str(refused.value) == ("target=0.9: above what any budget reaches: the resampled projection levels off "
                                  "at 0.850 (its asymptote)")


def test_the_api_words_the_target_rule_in_its_own_names():
    values, counts = panel(simulated(n_items=50))
    with pytest.raises(ParameterError, match=r"^target=1\.2: must be in \(0, 1\)$"):
        project(values, counts, raters=4, target=1.2)
    assert parse_scale("0..100") == (0.0, 100.0)


@pytest.mark.slow  # a subprocess per case
@pytest.mark.parametrize("args, words", [
    (["--targt", "0.9"], "semrel: error: unrecognized arguments: --targt 0.9 (see semrel --help)\n"),
    (["--target"], "semrel ratings plan: error: argument --target: expected one argument "
                   "(see semrel ratings plan --help)\n"),
    (["--json", "--seed", "-1"], "semrel ratings plan: error: argument --seed: must be an integer >= 0, not '-1' "
                                 "(see semrel ratings plan --help)\n"),
])
def test_a_typo_is_one_line_from_the_real_command(tmp_path, args, words):
    done = semrel("ratings", "plan", _table_file(tmp_path, GOOD), *args)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", words)


@pytest.mark.slow  # a subprocess
def test_the_real_command_writes_json_and_pictures(tmp_path):
    path = tmp_path / "sim.csv"
    t = simulated(n_items=60, raters=3)
    path.write_text("item,annotator,score\n" + "".join(
        f"{t.items[i]},{t.annotators[a]},{x}\n" for i, a, x in zip(t.item, t.annotator, t.score, strict=True)))
    done = semrel("ratings", "plan", path, "--raters", "9", "--json", "--output", tmp_path / "out",
                  "--resamples", "50", "--trials", "20", "--next", "30")
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert plan["projected"]["raters"] == 9 and 0 < plan["projected"]["reliability"]["value"] < 1
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "item_means.png", "next_batch.csv", "plan.json", "reliability.png"]
