"""Split-half reliability: against a slow reference, split properties, noise, seeds, ratings, real data."""


from itertools import pairwise

import numpy as np
import pandas as pd
import pytest
from scipy.stats import pearsonr, spearmanr

import semrel.metrics.split_half.split_half as shr
from project import REPO
from semrel.metrics.bws.counting import bws_counting_scores
from semrel.metrics.bws.readers import read_semeval_2024
from semrel.metrics.errors import DataValidationError
from semrel.metrics.split_half.halves import layout, random_halves
from semrel.metrics.split_half.split_half import split_half_bws, split_half_ratings


def simulate_bws(n_items=60, n_tuples=120, per_tuple=4, noise=1.0, seed=0, repeats=None):
    """Annotators pick best/worst of latent score + N(0, noise^2); tuple rows in random item order."""
    rng = np.random.default_rng(seed)
    tuples = np.array([rng.choice(n_items, 4, replace=False) for _ in range(n_tuples)])
    tuples = tuples.repeat(per_tuple if repeats is None else repeats, axis=0)
    tuples = rng.permuted(tuples, axis=1)
    noisy = rng.normal(size=n_items)[tuples] + rng.normal(scale=noise, size=tuples.shape)
    rows = np.arange(len(tuples))
    return tuples, tuples[rows, noisy.argmax(1)], tuples[rows, noisy.argmin(1)]


def recorded_halves(monkeypatch):
    """Record half-A membership per trial, in input element order."""
    seen = []

    def recording(lay, *args, **kwargs):
        member, extra = random_halves(lay, *args, **kwargs)
        in_order = np.empty(member.shape, dtype=bool)
        in_order[lay.element_order] = member > 0
        seen.append(in_order)
        return member, extra

    monkeypatch.setattr(shr, "random_halves", recording)
    return lambda: np.concatenate(seen, axis=1)


@pytest.mark.parametrize("missing", ["omit", "zero"])
def test_bws_equals_slow_reference_per_trial(monkeypatch, missing):
    # 1 to 19 annotations per tuple: items missing from a half, odd groups, and groups > 16 (key ranking)
    repeats = np.random.default_rng(5).integers(1, 20, size=25)
    tuples, best, worst = simulate_bws(n_items=40, n_tuples=25, repeats=repeats, seed=5)
    halves = recorded_halves(monkeypatch)
    result = split_half_bws(tuples, best, worst, trials=12, seed=3, missing=missing)
    in_a = halves()
    assert in_a.shape == (len(tuples), 12)
    for t in range(12):
        a = bws_counting_scores(tuples[in_a[:, t]], best[in_a[:, t]], worst[in_a[:, t]])
        b = bws_counting_scores(tuples[~in_a[:, t]], best[~in_a[:, t]], worst[~in_a[:, t]])
        score_a, score_b = dict(zip(a.items, a.score, strict=True)), dict(zip(b.items, b.score, strict=True))
        common = [i for i in a.items if i in score_b] if missing == "omit" else list(a.items)
        x, y = [score_a[i] for i in common], [score_b.get(i, 0.0) for i in common]
        assert result.n_items_both[t] == len(common)
        assert result.spearman_trials[t] == pytest.approx(spearmanr(x, y)[0], abs=1e-12)
        assert result.pearson_trials[t] == pytest.approx(pearsonr(x, y)[0], abs=1e-12)
    assert missing == "zero" or result.n_items_both.min() < result.n_items  # some items were dropped
    assert result.spearman == pytest.approx(result.spearman_trials.mean())
    assert result.spearman_std == pytest.approx(result.spearman_trials.std())


def test_halves_split_every_group_evenly_and_uniformly():
    sizes = np.array([1, 2, 3, 4, 5, 17, 18])
    group = np.repeat(np.arange(len(sizes)), sizes)
    lay = layout(group)
    member, extra = random_halves(lay, 4000, np.random.default_rng(0))
    in_a = np.empty(member.shape, dtype=bool)
    in_a[lay.element_order] = member > 0
    per_group = np.add.reduceat(in_a, np.r_[0, np.cumsum(sizes)[:-1]], axis=0)
    for g, n in enumerate(sizes):
        assert set(np.unique(per_group[g])) == ({n // 2, n - n // 2})  # floor or ceil, both seen if odd
        if n % 2:
            assert abs((per_group[g] == n - n // 2).mean() - 0.5) < 0.04  # the odd one: a fair coin
            assert np.array_equal(extra[list(lay.odd_groups).index(g)], per_group[g] - n // 2)
    four = in_a[group == 3]  # all 6 two-of-four subsets about equally often
    _, counts = np.unique(four.T, axis=0, return_counts=True)
    assert len(counts) == 6 and np.all(np.abs(counts / 4000 - 1 / 6) < 0.03)


def test_more_noise_lower_reliability():
    shr_by_noise = []
    for noise in (0.0, 0.3, 1.0, 3.0):
        r = split_half_bws(*simulate_bws(n_items=200, n_tuples=400, noise=noise, seed=1), trials=60, seed=0)
        shr_by_noise.append(r.spearman)
    assert shr_by_noise[0] == 1.0  # noiseless annotators: both halves give identical scores
    assert all(a > b for a, b in pairwise(shr_by_noise))
    assert shr_by_noise[-1] < 0.8


def test_same_seed_same_bits():
    data = simulate_bws(seed=2, repeats=np.r_[[1, 2, 3] * 40])
    a, b = (split_half_bws(*data, trials=30, seed=11) for _ in range(2))
    assert np.array_equal(a.spearman_trials, b.spearman_trials) and np.array_equal(a.pearson_trials, b.pearson_trials)
    assert np.array_equal(a.n_items_both, b.n_items_both)
    assert not np.array_equal(a.spearman_trials, split_half_bws(*data, trials=30, seed=12).spearman_trials)


def test_spearman_brown_option():
    r = split_half_bws(*simulate_bws(seed=4), trials=20, seed=0, spearman_brown=True)
    assert r.corrected_spearman == pytest.approx(np.mean(2 * r.spearman_trials / (1 + r.spearman_trials)))
    assert r.corrected_pearson == pytest.approx(np.mean(2 * r.pearson_trials / (1 + r.pearson_trials)))
    assert r.corrected_spearman > r.spearman
    assert split_half_bws(*simulate_bws(seed=4), trials=2, seed=0).corrected_spearman is None


def test_bws_arguments_and_bad_input():
    data = simulate_bws(seed=6)
    with pytest.raises(ValueError, match="missing"):
        split_half_bws(*data, missing="ignore")
    with pytest.raises(ValueError, match="trials"):
        split_half_bws(*data, trials=0)
    tuples, best, worst = data
    worst = worst.copy()
    worst[7] = best[7]
    with pytest.raises(DataValidationError, match="row 8: best and worst are the same item"):
        split_half_bws(tuples, best, worst, trials=2)
    assert split_half_bws(tuples, best, worst, trials=2, on_invalid="omit").n_skipped == 1
    with pytest.raises(ValueError, match="every row is invalid, none left to score"):
        split_half_bws(tuples[:1], best[:1], best[:1], on_invalid="omit")


def test_semeval_files(mirror):
    folder = mirror / "semrel-2024" / "BWS_annotations"
    for name, n_items in (("arq_bws.csv", 3991), ("arb_bws.csv", 1800)):
        ann = read_semeval_2024(folder / name, on_invalid="omit")
        drop = split_half_bws(ann, trials=50, seed=0)
        zero = split_half_bws(ann, trials=50, seed=0, missing="zero")
        assert drop.n_items == zero.n_items == n_items
        # tuples annotated once put items in one half only: dropped, or 0 in the reference's second half
        assert drop.n_items_both.max() < n_items and zero.n_items_both.min() > drop.n_items_both.max()
        assert 0.3 < drop.spearman < 0.7 and drop.spearman_std < 0.03


def test_ratings_equal_slow_reference_per_trial(monkeypatch):
    rng = np.random.default_rng(0)
    sizes = rng.integers(2, 10, size=40)
    items = np.repeat(np.arange(40), sizes)
    ratings = np.clip(np.round(rng.normal(3, 1.5, size=40)[items] + rng.normal(size=len(items))), 0, 6)
    halves = recorded_halves(monkeypatch)
    result = split_half_ratings(items, ratings, trials=9, seed=1)
    in_a = halves()
    for t in range(9):
        frame = pd.DataFrame({"item": items, "rating": ratings, "a": in_a[:, t]})
        means = frame.groupby(["item", "a"])["rating"].mean().unstack()
        assert result.spearman_trials[t] == pytest.approx(spearmanr(means[True], means[False])[0], abs=1e-12)
        assert result.pearson_trials[t] == pytest.approx(pearsonr(means[True], means[False])[0], abs=1e-12)


def test_ratings_czech_news_free_test(mirror):
    rows = (mirror / "czech-news-sts" / "free-test.tsv").read_text(encoding="utf-8").splitlines()
    ratings = np.array([[int(v) for v in row.split("\t")[3].split(",")] for row in rows])
    assert ratings.shape == (1200, 9)
    items = np.repeat([row.split("\t")[0] + "\t" + row.split("\t")[1] + str(i) for i, row in enumerate(rows)], 9)
    r = split_half_ratings(items, ratings.ravel(), trials=200, seed=0, spearman_brown=True)
    assert r.n_items == 1200 and r.n_items_both.min() == 1200
    assert 0.85 < r.spearman < 0.95 and r.corrected_spearman > r.spearman
    shifted = split_half_ratings(items, ratings.ravel() + 0.5, trials=200, seed=0)  # sort-based ranks
    assert np.array_equal(shifted.spearman_trials, r.spearman_trials)
    assert np.allclose(shifted.pearson_trials, r.pearson_trials)


def test_ratings_crowd_sts_two_or_three_per_pair(mirror):
    frame = pd.read_csv(mirror / "crowd-sts" / "Paralex_human.csv", dtype=str, keep_default_na=False)
    labels = frame["Answer.semantic-similarity.label"].str[0].astype(int)
    r = split_half_ratings(frame["HITId"], labels, frame["WorkerId"], trials=200, seed=0)
    assert r.n_items == r.n_items_both.min() == frame["HITId"].nunique() == 764  # 15 HITs have 2 ratings
    assert 0.1 < r.spearman < 0.5  # Paralex: noisy labels


def test_ratings_bad_input():
    items, ratings = ["x", "x", "y", "y", "z", "z"], [1.0, 2, 3, 4, 5, 5]
    cases = [  # (items, ratings, annotators, row, rule)
        (items, [1.0, 2, np.nan, 4, 5, 5], None, 3, "rating is not a finite number"),
        (items, [1.0, "", 3, 4, 5, 5], None, 2, "rating is not a finite number"),  # not x's lone row 1
        (items, ratings, ["a", None, "a", "b", "c", "d"], 2, "empty annotator"),
        (["x", "x", None, "y", "z", "z"], ratings, None, 3, "empty item"),
        (items + ["z"], ratings + [4.0], ["a", "b", "a", "b", "c", "c", "d"], 6, "annotator rated the item twice"),
        (items + ["w"], ratings + [2.0], None, 7, "item has fewer than 2 ratings"),
    ]
    for bad_items, bad_ratings, annotators, row, rule in cases:
        with pytest.raises(DataValidationError) as err:
            split_half_ratings(bad_items, bad_ratings, annotators, trials=2)
        assert (err.value.row, err.value.rule) == (row, rule)
        skipped = split_half_ratings(bad_items, bad_ratings, annotators, trials=2, on_invalid="omit")
        assert skipped.n_skipped >= 1
    lone = split_half_ratings(items + ["w"], ratings + [2.0], trials=2, on_invalid="omit")
    assert (lone.n_skipped, lone.n_items) == (1, 3)


def test_evaluate_module_both_configs(monkeypatch):
    monkeypatch.chdir(REPO)
    import evaluate

    tuples, best, worst = simulate_bws(seed=8)
    module = evaluate.load("metrics/split_half_reliability")
    out = module.compute(tuples=tuples.tolist(), best=best.tolist(), worst=worst.tolist(), trials=20, seed=0)
    assert out["spearman"] == split_half_bws(tuples, best, worst, trials=20, seed=0).spearman
    ratings = evaluate.load("metrics/split_half_reliability", "ratings")
    out = ratings.compute(items=["a", "a", "b", "b", "c", "c"], ratings=[1, 2, 3, 3, 5, 6], trials=5, seed=0)
    assert out["n_items"] == 3 and out["spearman"] == 1.0


def test_half_scores_are_the_splits_split_half_correlates():
    """The public half scores give split_half_bws's and split_half_ratings's trials (same seed), and
    ``items`` keeps those items' columns in the order given."""
    from semrel.metrics.bws.counting import as_annotations
    from semrel.metrics.split_half.trialwise import masked_pearson

    tuples, best, worst = simulate_bws(seed=2)
    ann = as_annotations(tuples, best, worst)
    whole = split_half_bws(ann, trials=40, seed=3)
    chunks = list(shr.half_scores_bws(ann, trials=40, seed=3))
    rho = np.concatenate([masked_pearson(c.ranks_a, c.ranks_b, c.valid) for c in chunks])
    assert np.array_equal(rho, whole.spearman_trials)
    some = [5, 1, 30]
    picked = next(iter(shr.half_scores_bws(ann, trials=40, seed=3, items=some)))
    for name in ("score_a", "score_b", "valid", "den_a"):
        assert np.array_equal(getattr(picked, name), getattr(chunks[0], name)[:, some])
    items = np.repeat(np.arange(30), 3)
    ratings = np.random.default_rng(0).integers(1, 6, 90)
    r = np.concatenate([masked_pearson(c.score_a, c.score_b, c.valid)
                        for c in shr.half_scores_ratings(items, ratings, trials=20, seed=1)])
    assert np.array_equal(r, split_half_ratings(items, ratings, trials=20, seed=1).pearson_trials)
    with pytest.raises(DataValidationError, match="every item needs >= 2 finite ratings"):
        list(shr.half_scores_ratings([0, 0, 1], [1, 2, 3], trials=2))
