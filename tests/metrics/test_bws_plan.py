"""``semrel.metrics.bws.plan``, ``intervals``, ``annotators`` and ``semrel bws plan``: the math on simulated
annotations where the truth is known (latent scores, MaxDiff annotators with Gumbel noise, some
answering at random), Spearman–Brown against its formula, and every bad input as one line."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from test_cli import semrel

from semrel.metrics.bws.annotators import annotator_checks
from semrel.metrics.bws.counting import encode_annotations
from semrel.metrics.bws.design import generate_tuples
from semrel.metrics.bws.intervals import bootstrap_intervals, likelihood_intervals
from semrel.metrics.bws.plan import (
    Curve,
    bws_plan,
    check_target,
    fit_curve,
    needed_curve,
    needed_sb,
    project_sb,
    shr_now,
    spearman_brown,
)
from semrel.metrics.errors import DataValidationError


def maxdiff(latent, tuples, rng, random_share=0.0):
    """(best, worst) positions 1..k of MaxDiff choices: best = argmax(u + Gumbel), worst = argmax(-u + Gumbel)
    among the others; a ``random_share`` of the annotations chooses at random."""
    u = latent[tuples]
    best = np.argmax(u + rng.gumbel(size=u.shape), axis=1)
    other = -u + rng.gumbel(size=u.shape)
    other[np.arange(len(u)), best] = -np.inf
    worst = np.argmax(other, axis=1)
    rand = rng.random(len(u)) < random_share
    perm = np.argsort(rng.random(u.shape), axis=1)
    best[rand], worst[rand] = perm[rand, 0], perm[rand, 1]
    return best + 1, worst + 1


def expected_counting(latent, n_draws=4000, k=4, seed=1):
    """Per item: E[best - worst] in a tuple with k - 1 random partners (the quantity the bootstrap over
    tuples estimates), exact per tuple under the MaxDiff model, averaged over random partner sets."""
    rng = np.random.default_rng(seed)
    n = len(latent)
    truth = np.empty(n)
    for i in range(n):
        partners = np.argsort(rng.random((n_draws, n - 1)), axis=1)[:, :k - 1]
        partners += partners >= i  # skip i itself
        u = latent[np.column_stack([np.full(n_draws, i), partners])]
        p = np.exp(u) / np.exp(u).sum(axis=1, keepdims=True)  # P(best)
        q = np.exp(-u)
        p_worst_i = sum(p[:, b] * q[:, 0] / (q.sum(axis=1) - q[:, b]) for b in range(1, k))
        truth[i] = np.mean(p[:, 0] - p_worst_i)
    return truth


def simulated(n_items=120, factor=4, per_tuple=2, seed=0, random_share=0.0):
    rng = np.random.default_rng(seed)
    latent = rng.normal(scale=1.5, size=n_items)
    tuples = generate_tuples(n_items, k=4, factor=factor, n_designs=1, seed=seed).tuples.repeat(per_tuple, axis=0)
    best, worst = maxdiff(latent, tuples, rng, random_share)
    return latent, encode_annotations(tuples, best, worst, choice="position")


@pytest.mark.parametrize("r, factor, expected", [
    (0.6, 2.0, 0.75), (0.5, 3.0, 0.75), (0.84, 0.5, 0.42 / 0.58), (0.0, 5.0, 0.0), (0.3, 1.0, 0.3),
])
def test_spearman_brown_is_its_formula(r, factor, expected):
    assert spearman_brown(r, factor) == pytest.approx(expected, abs=1e-12)
    assert spearman_brown(r, factor) == pytest.approx(factor * r / (1 + (factor - 1) * r))


@pytest.mark.parametrize("r, target", [(0.4, 0.8), (0.7, 0.75), (0.9, 0.95), (0.2, 0.5)])
def test_annotations_needed_invert_the_projections(r, target):
    m = needed_sb(r, 1000, target)
    assert spearman_brown(r, m / 1000) == pytest.approx(target)
    curve = Curve(annotations=np.array([100, 1000]), shr=np.zeros((1, 2)), intercept=np.array([-2.0]),
                  slope=np.array([0.4]))
    assert curve.at(needed_curve(-2.0, 0.4, target)) == pytest.approx(target)


@pytest.mark.parametrize("a, b", [(-3.0, 0.5), (-6.0, 1.0), (-1.0, 0.2)])
def test_fit_curve_recovers_the_logit_line(a, b):
    m = np.array([250, 375, 500, 625, 750, 875, 1000])
    shr = 1 / (1 + np.exp(-(a + b * np.log(m))))
    assert fit_curve(m, shr) == pytest.approx((a, b))


def test_fit_curve_without_two_points_is_flat():
    assert fit_curve(np.array([10, 20]), np.array([np.nan, 0.5]))[1] == 0.0
    assert needed_curve(0.0, 0.0, 0.9) == np.inf


def test_spearman_brown_projection_steps_the_split_half_correlation():
    latent, ann = simulated()
    now = shr_now(ann, trials=100)
    p = project_sb(now, per_tuple=6.0, target=0.9)
    assert now.per_tuple == 2.0
    assert p.shr == pytest.approx(spearman_brown(now.shr, 3.0))
    assert (p.low, p.high) == pytest.approx((spearman_brown(now.low, 3.0), spearman_brown(now.high, 3.0)))
    assert p.reliability == pytest.approx(2 * p.shr / (1 + p.shr))
    assert spearman_brown(now.shr, p.needed / now.annotations) == pytest.approx(0.9)
    assert p.needed_low <= p.needed <= p.needed_high


def test_bootstrap_interval_covers_the_expected_score_at_about_its_nominal_rate():
    latent, ann = simulated(n_items=120, factor=6, per_tuple=1)
    truth = expected_counting(latent)[ann.items]
    result = bootstrap_intervals(ann, resamples=1000, seed=0)
    cover = np.mean((result.low <= truth) & (truth <= result.high))
    assert 0.88 <= cover <= 0.99, cover
    assert result.method == "bootstrap over tuples (percentile, 1000 replicates)"
    again = bootstrap_intervals(ann, resamples=1000, seed=0)
    assert np.array_equal(again.low, result.low) and np.array_equal(again.high, result.high)  # seeded


def test_bootstrap_in_item_blocks_equals_one_block(monkeypatch):
    from semrel.metrics.bws import intervals

    latent, ann = simulated()
    whole = bootstrap_intervals(ann, resamples=200, seed=3)
    monkeypatch.setattr(intervals, "CHUNK_CELLS", 200 * 7)  # 7 items per block, the same replicates
    monkeypatch.setattr(intervals, "DRAW_CELLS", 500)
    blocks = bootstrap_intervals(ann, resamples=200, seed=3)
    assert np.array_equal(whole.low, blocks.low) and np.array_equal(whole.high, blocks.high)


def test_likelihood_interval_exact_and_approximate_agree(monkeypatch):
    from semrel.metrics.bws import intervals

    latent, ann = simulated()
    exact, theta, se = likelihood_intervals(ann)
    monkeypatch.setattr(intervals, "EXACT_MAX_ITEMS", 0)
    approx, _, se_approx = likelihood_intervals(ann)
    assert "exact inverse" in exact.method and "Neumann" in approx.method
    assert np.all(se_approx <= se) and np.all(se_approx > 0.93 * se)  # the cut series errs low, by a few %
    assert np.all((exact.low < exact.score) & (exact.score < exact.high))
    assert np.corrcoef(exact.score, latent[ann.items])[0, 1] > 0.9


def test_an_always_best_item_keeps_a_finite_likelihood_interval():
    t = [["a", "b", "c", "d"], ["a", "b", "c", "e"], ["a", "c", "d", "e"], ["b", "c", "d", "e"]] * 2
    ann = encode_annotations(t, ["a", "a", "a", "b"] * 2, ["d", "e", "d", "e"] * 2)
    lik, theta, se = likelihood_intervals(ann)
    boot = bootstrap_intervals(ann, resamples=200)
    assert np.isfinite(theta).all() and np.isfinite(se).all()
    assert boot.score[0] == 1.0 and boot.low[0] == boot.high[0] == 1.0  # counting: at the bound
    assert -1 < lik.low[0] < lik.score[0] < lik.high[0] < 1


def test_annotator_checks_flag_the_random_and_the_fast():
    rng = np.random.default_rng(4)
    latent = rng.normal(scale=1.5, size=100)
    tuples = generate_tuples(100, k=4, factor=6, n_designs=1, seed=4).tuples.repeat(3, axis=0)
    who = np.tile(np.array(["good1", "good2", "rand"]), len(tuples) // 3)
    best, worst = maxdiff(latent, tuples, rng)
    rand = who == "rand"
    perm = np.argsort(rng.random(tuples.shape), axis=1)
    best[rand], worst[rand] = perm[rand, 0] + 1, perm[rand, 1] + 1
    ann = encode_annotations(tuples, best, worst, choice="position")
    seconds = np.where(who == "good2", 2.0, 20.0) + rng.random(len(who))
    checks = annotator_checks(ann, who, seconds)
    assert checks.annotators.tolist() == ["good1", "good2", "rand"]
    assert checks.random_like.tolist() == [False, False, True]
    assert checks.fast.tolist() == [False, True, False] and not checks.slow.any()
    assert checks.agreement[0] > 0.7 and abs(checks.agreement[2] - 0.5) < 0.05
    assert np.all(checks.low < checks.agreement) and np.all(checks.agreement < checks.high)


def test_one_annotator_is_one_line():
    latent, ann = simulated()
    with pytest.raises(DataValidationError, match=re.escape(
            "<annotations>: annotator checks need at least 2 annotators (every annotation is by 'w1'; "
            "agreement with the others has no others)")):
        annotator_checks(ann, np.full(len(ann.best), "w1"))
    plan = bws_plan(ann, annotators=np.full(len(ann.best), "w1"), trials=20, resamples=50, repeats=2,
                    curve_trials=10)
    assert plan.annotators is None and plan.notes == ("<annotations>: annotator checks need at least 2 annotators "
                                                      "(every annotation is by 'w1'; agreement with the others "
                                                      "has no others)",)


@pytest.mark.parametrize("target", [0.0, 1.0, 1.5, -0.1])
def test_target_outside_zero_one(target):
    with pytest.raises(ValueError, match=re.escape(f"target must be in (0, 1) (a split-half reliability), "
                                                   f"got {target!r}")):
        check_target(target)


def test_every_item_annotated_once():
    ann = encode_annotations([["a", "b", "c", "d"], ["e", "f", "g", "h"]], ["a", "e"], ["d", "h"])
    with pytest.raises(DataValidationError, match=re.escape(
            "f.csv: every item is in one annotation only (2 annotation(s) of 8 items; split-half reliability "
            "needs items annotated at least twice, in two halves)")):
        shr_now(ann, source="f.csv")


# --- the command, as a user runs it (a subprocess per case) ---

FAST = ["--trials", "20", "--resamples", "50", "--repeats", "3"]
HEADER = "annotator,seconds,Item1,Item2,Item3,Item4,BestItem,WorstItem\n"


def nrc_file(path, ann, annotators=None, seconds=None):
    """``ann`` as an NRC-layout file with annotator and seconds columns."""
    items = ann.items.astype(str)
    n = len(ann.best)
    annotators = ["w1"] * n if annotators is None else annotators
    seconds = [10] * n if seconds is None else seconds
    rows = [",".join([str(a), str(s), *items[t], items[b], items[w]])
            for a, s, t, b, w in zip(annotators, seconds, ann.tuples, ann.best, ann.worst, strict=True)]
    path.write_text(HEADER + "\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def collection(tmp_path_factory):
    """A simulated collection of 3 annotators (one random), 2 annotations per tuple."""
    latent, ann = simulated(n_items=60, factor=4, per_tuple=2, seed=5)
    who = np.tile(["alice", "bob", "carol"], len(ann.best) // 3 + 1)[:len(ann.best)]
    return ann, nrc_file(tmp_path_factory.mktemp("plan") / "ann.csv", ann, who, np.full(len(who), 12))


def one_line(done):
    return done.stderr.strip().splitlines()


@pytest.mark.slow
def test_plan_json_names_the_projected_reliability_at_k(collection, tmp_path):
    ann, path = collection
    done = semrel("bws", "plan", path, "--per-tuple", "6", "--target", "0.9", "--json", "--output", tmp_path / "out",
                  *FAST)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)["files"][0]
    assert doc["per_tuple_now"] == 2.0 and doc["per_tuple"] == 6.0
    sb = doc["projected"]["spearman_brown"]
    assert sb["shr"] == pytest.approx(spearman_brown(doc["shr"]["spearman"], 3.0))
    assert sb["reliability"] == pytest.approx(2 * sb["shr"] / (1 + sb["shr"]))
    assert set(doc["projected"]["resampling"]) >= {"shr", "interval", "annotations_needed", "reachable"}
    assert [a["annotator"] for a in doc["annotators"]] == ["alice", "bob", "carol"]
    assert len(doc["least_certain"]) == 10 and doc["trust"].startswith("the projections")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["ann-items.csv", "ann-items.png",
                                                                     "ann-reliability.png"]
    assert (tmp_path / "out" / "ann-items.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "out" / "ann-items.csv").read_text().splitlines()[0] == (
        "item,score,low,high,drawn,bradley_terry,bt_low,bt_high")


@pytest.mark.slow
@pytest.mark.parametrize("args, message", [
    (["--target", "1.5"], "argument --target: must be a number in (0, 1) (a split-half reliability), not '1.5'"),
    (["--target", "0"], "argument --target: must be a number in (0, 1) (a split-half reliability), not '0'"),
    (["--target", "1"], "argument --target: must be a number in (0, 1) (a split-half reliability), not '1'"),
    (["--target", "-0.2"], "argument --target: must be a number in (0, 1) (a split-half reliability), not '-0.2'"),
    (["--per-tuple", "0"], "argument --per-tuple: must be a number > 0, not '0'"),
])
def test_bad_flags_are_one_line(collection, args, message):
    done = semrel("bws", "plan", collection[1], *args)
    assert done.returncode == 2
    assert one_line(done) == [f"semrel bws plan: error: {message} (see semrel bws plan --help)"]


@pytest.mark.slow
def test_a_typo_in_a_flag_is_one_line(collection):
    done = semrel("bws", "plan", collection[1], "--targt", "0.8")
    assert done.returncode == 2
    assert one_line(done) == ["semrel: error: unrecognized arguments: --targt 0.8 (see semrel --help)"]


def bad_file(tmp_path, case):
    if case == "repeated item":
        text = "Item1,Item2,Item3,Item4,BestItem,WorstItem\na,b,c,d,a,d\na,b,b,e,a,e\n"
    else:  # every item annotated once
        text = "Item1,Item2,Item3,Item4,BestItem,WorstItem\na,b,c,d,a,d\ne,f,g,h,e,h\n"
    path = tmp_path / "bad.csv"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.slow
@pytest.mark.parametrize("case, message", [
    ("repeated item", "row 2: item repeated within the tuple (tuple=['a', 'b', 'b', 'e'], best='a', worst='e')"),
    ("every item once", "every item is in one annotation only (2 annotation(s) of 8 items; split-half "
                        "reliability needs items annotated at least twice, in two halves)"),
])
def test_bad_files_are_one_line(tmp_path, case, message):
    path = bad_file(tmp_path, case)
    done = semrel("bws", "plan", path, *FAST)
    assert done.returncode == 2 and done.stdout == ""
    assert one_line(done) == [f"semrel bws plan: error: {path}: {message}"]


@pytest.mark.slow
def test_one_annotator_always_best_and_a_target_out_of_reach_are_notes(tmp_path):
    rng = np.random.default_rng(6)
    latent = rng.normal(scale=0.3, size=40)
    latent[0] = 50.0  # item 0 always best; the others close together, none always worst
    tuples = generate_tuples(40, k=4, factor=4, n_designs=1, seed=6).tuples.repeat(2, axis=0)
    best, worst = maxdiff(latent, tuples, rng)
    ann = encode_annotations(tuples, best, worst, choice="position")
    path = nrc_file(tmp_path / "one.csv", ann)
    done = semrel("bws", "plan", path, "--target", "0.999", *FAST)
    assert done.returncode == 0, done.stderr
    lines = one_line(done)
    assert len(lines) == 3, lines
    assert re.fullmatch(rf"{re.escape(str(path))}: 1 item\(s\) always chosen best, e\.g\. '0': counting score 1 with "
                        r"a zero-width bootstrap interval; Bradley–Terry's prior keeps its strength finite: score "
                        r"0\.\d{3} \[0\.\d{3}, 0\.\d{3}\]", lines[0]), lines[0]
    assert re.fullmatch(rf"{re.escape(str(path))}: target 0\.999 is above what any budget up to 100x the annotations "
                        r"so far reaches: there SHR would be 0\.\d{3} \[0\.\d{3}, 0\.\d{3}\] by resampling, 0\.\d{3} "
                        r"by Spearman–Brown", lines[1]), lines[1]
    assert lines[2] == (f"{path}: annotator checks need at least 2 annotators (every annotation is by 'w1'; "
                        "agreement with the others has no others)")
    assert "target 0.999 by Spearman–Brown: out of reach within 100x the annotations so far" in done.stdout


@pytest.mark.slow
@pytest.mark.parametrize("case, args, message", [
    ("no such column", ["--annotator-column", "worker"],
     "{path}: --annotator-column worker: no such column (header is ['annotator', 'seconds', 'Item1', 'Item2', "
     "'Item3', 'Item4', 'BestItem', 'WorstItem'])"),
    ("seconds not a number", [], "{path}: row 2: seconds is not a number >= 0 ('abc')"),
    ("seconds negative", [], "{path}: row 2: seconds is not a number >= 0 ('-3')"),
])
def test_bad_annotator_and_time_columns_are_one_line(tmp_path, case, args, message):
    latent, ann = simulated(n_items=20, factor=2, per_tuple=2, seed=7)
    seconds = ["5"] * len(ann.best)
    seconds[1] = {"seconds not a number": "abc", "seconds negative": "-3"}.get(case, "5")
    path = nrc_file(tmp_path / "cols.csv", ann, ["a", "b"] * (len(ann.best) // 2), seconds)
    done = semrel("bws", "plan", path, *args, *FAST)
    assert done.returncode == 2 and done.stdout == ""
    assert one_line(done) == [f"semrel bws plan: error: {message.format(path=path)}"]


@pytest.mark.slow
@pytest.mark.parametrize("output, message", [
    ("ann.csv", "--output {folder}/ann.csv: is a file, not a folder"),
    ("out", "--output {folder}/out: two FILEs are named 'ann'.*: their pictures would replace each other; "
            "plan them one at a time"),
])
def test_bad_output_folders_are_one_line(collection, tmp_path, output, message):
    other = tmp_path / "ann.csv"
    other.write_bytes(collection[1].read_bytes())
    done = semrel("bws", "plan", collection[1], other, "--output", tmp_path / output, *FAST)
    assert done.returncode == 2 and done.stdout == ""
    assert one_line(done) == [f"semrel bws plan: error: {message.format(folder=tmp_path)}"]
