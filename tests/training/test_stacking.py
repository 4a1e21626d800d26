"""The learned stack (trainers.stacking): fit only on out-of-fold or dev predictions, refuses the
rows it was fit on and members trained on different data, saved in an ensemble folder that loads
as before; on a toy where one member is noisier, it beats the members' mean."""

from __future__ import annotations

import json

import numpy as np
import pytest

from semrel.cli import main
from semrel.metrics.errors import ParameterError
from semrel.trainers.combination import rank_average, spearman
from semrel.trainers.ensemble import Ensemble
from semrel.trainers.run_folder import ENSEMBLE
from semrel.trainers.stacking import LearnedStack, fit_learned_stack
from trainer_fixtures import fake_member, tiny_encoder, toy_pairs


def toy_members(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Gold scores in [0, 1] and three members: close, noisy, and monotone but bent (y²)."""
    rng = np.random.default_rng(seed)
    y = rng.uniform(0, 1, n)
    members = np.column_stack([y + rng.normal(0, 0.08, n), y + rng.normal(0, 0.4, n),
                               y ** 2 + rng.normal(0, 0.1, n)])
    return members, y


def rows(name: str, split: str, n: int, start: int = 0) -> list[dict]:
    return [{"data": name, "split": split, "ids": [f"{split}-{i}" for i in range(start, start + n)]}]


@pytest.mark.parametrize("learner", ["ridge", "gbm"])
def test_the_stack_beats_the_members_mean_on_rows_it_never_saw(learner):
    fit_x, fit_y = toy_members(300, seed=0)
    x, y = toy_members(300, seed=1)
    stack = fit_learned_stack(fit_x, fit_y, learner=learner, fit_on=rows("toy", "dev", 300))
    stacked, mean = spearman(stack.predict(x), y), spearman(x.mean(axis=1), y)
    assert stacked >= mean + 0.02, (stacked, mean)
    assert stacked >= spearman(rank_average(x), y)
    again = LearnedStack.from_json(json.loads(json.dumps(stack.to_json())))
    np.testing.assert_allclose(again.predict(x), stack.predict(x), rtol=1e-6)


def test_the_stack_refuses_the_rows_it_was_fit_on():
    x, y = toy_members(40, seed=0)
    stack = fit_learned_stack(x, y, fit_on=rows("semrel-2024/eng", "validation", 40))
    with pytest.raises(ParameterError, match=r"split='validation': the learned stack was fit on "
                                             r"semrel-2024/eng/validation and it is "
                                             r"semrel-2024/eng/validation: scoring a stack"):
        stack.check_scored("semrel-2024/eng", "validation", [])
    with pytest.raises(ParameterError, match=r"and 1 of its pairs \(e.g. validation-7\)"):
        stack.check_scored("other/data", "test", ["x-1", "validation-7"])
    stack.check_scored("semrel-2024/eng", "test", [f"test-{i}" for i in range(40)])
    with pytest.raises(ValueError, match="fit_on names 39 rows, the scores hold 40"):
        fit_learned_stack(x, y, fit_on=rows("toy", "dev", 39))
    with pytest.raises(ParameterError, match="learner='xgb': must be one of"):
        fit_learned_stack(x, y, learner="xgb", fit_on=rows("toy", "dev", 40))


@pytest.fixture(scope="module")
def weights(tmp_path_factory):
    return tiny_encoder(tmp_path_factory.mktemp("tiny-bert"))


def dev_predictions(scores, labels, data="dev-data", split="validation") -> dict:
    return {"data": data, "split": split, "score_range": [0.0, 1.0], "encoder": "bi",
            "conditional": False, "ids": [f"d{i}" for i in range(len(labels))],
            "predictions": [float(s) for s in scores], "labels": [float(y) for y in labels]}


def test_members_trained_on_different_data_are_refused(tmp_path, weights):
    x, y = toy_members(30, seed=0)
    a = fake_member(tmp_path / "a", weights, "str-2021/default", dev_predictions(x[:, 0], y))
    b = fake_member(tmp_path / "b", weights, "semrel-2024/eng", dev_predictions(x[:, 1], y))
    with pytest.raises(ValueError, match=r"member .*b was trained on semrel-2024/eng, .*a on "
                                         r"str-2021/default: a learned stack combines members "
                                         r"trained on the same data"):
        Ensemble.build([a, b], "ridge")
    c = fake_member(tmp_path / "c", weights, "str-2021/default", dev_predictions(x[:, 1], y, split="test"))
    with pytest.raises(ValueError, match="its evaluated split differs"):  # other rows predicted
        Ensemble.build([a, c], "ridge")
    d = fake_member(tmp_path / "d", weights, "str-2021/default", None)
    with pytest.raises(ParameterError, match=r"cv_dirs=None: must be given: ensemble member "
                                             r".*d has no selection_predictions.json"):
        Ensemble.build([a, d], "ridge")


def test_a_saved_stack_loads_and_keeps_its_fit_rows(tmp_path, weights):
    x, y = toy_members(60, seed=0)
    members = [fake_member(tmp_path / n, weights, "str-2021/default", dev_predictions(x[:, i], y))
               for i, n in enumerate("ab")]
    path = Ensemble.build(members, "ridge").save(tmp_path / "ensemble")
    raw = json.loads((path / ENSEMBLE).read_text())
    assert raw["method"] == "ridge" and raw["learned"]["fit_on"][0]["split"] == "validation"
    loaded = Ensemble.load(path)
    assert loaded.learned.n_rows == 60 and len(loaded.members) == 2
    with pytest.raises(ParameterError, match="the learned stack was fit on dev-data/validation"):
        loaded.check_scored("dev-data", "validation", [])
    assert "learned stack (ridge)" in (path / "README.md").read_text()


def fake_cv(folder, weights, x, y, fold_data=("d/cv-fold-0", "d/cv-fold-1")):
    """A member's CV folder: per fold a run trained on that fold's data, with its test-split
    (out-of-fold) predictions of half the rows."""
    half = len(y) // 2
    for f, data in enumerate(fold_data):
        part = slice(f * half, (f + 1) * half)
        run = fake_member(folder / f"cv-fold-{f}", weights, data, None)
        (run / "eval_predictions.json").write_text(json.dumps({
            **dev_predictions(x[part], y[part], data=f"d/cv-fold-{f}", split="test"),
            "ids": [f"p{i}" for i in range(f * half, (f + 1) * half)]}))
    return folder


def test_a_stack_on_out_of_fold_predictions(tmp_path, weights):
    x, y = toy_members(80, seed=0)
    members = [fake_member(tmp_path / n, weights, "d/default", None) for n in "ab"]
    cvs = [fake_cv(tmp_path / f"cv-{n}", weights, x[:, i], y) for i, n in enumerate("ab")]
    stack = Ensemble.build(members, "ridge", cv_dirs=cvs).learned
    assert [p["data"] for p in stack.fit_on] == ["d/cv-fold-0", "d/cv-fold-1"]
    assert stack.n_rows == 80
    with pytest.raises(ParameterError, match=r"fit on d/cv-fold-0/test and 1 of its pairs"):
        stack.check_scored("d/default", "train", ["p3"])
    other = fake_cv(tmp_path / "cv-c", weights, x[:, 1], y, fold_data=("d/cv-fold-0", "e/cv-fold-1"))
    with pytest.raises(ValueError, match=r"cv-c/cv-fold-1 was trained on e/cv-fold-1, "
                                         r".*cv-a/cv-fold-1 on d/cv-fold-1"):
        Ensemble.build(members, "ridge", cv_dirs=[cvs[0], other])


@pytest.mark.slow
def test_a_stack_of_trained_members_through_the_commands(tmp_path, capsys):
    """Two tiny members choose on a dev split and write their dev predictions; the ridge stack
    (with Dice) is fit on those, scores the training data's test split, refuses the dev split."""
    import datasets

    encoder = tiny_encoder(tmp_path / "tiny-bert")
    toy = toy_pairs().shuffle(seed=0)
    datasets.DatasetDict({"train": toy.select(range(64)), "test": toy.select(range(64, 96))}
                         ).save_to_disk(tmp_path / "train")
    datasets.DatasetDict({"dev": toy.select(range(96, 120))}).save_to_disk(tmp_path / "dev")
    data = ["--dataset", str(tmp_path / "train"), "--score-range", "0", "1"]
    for name, kind in (("bi", "bi"), ("cross", "cross")):
        assert main(["fit", *data, "--model", str(encoder), "--encoder", kind, "--output",
                     str(tmp_path / name), "--epochs", "2", "--batch-size", "8",
                     "--learning-rate", "3e-3", "--eval-dataset", str(tmp_path / "dev"),
                     "--eval-score-range", "0", "1"]) == 0
    assert main(["ensemble", "--method", "ridge", "--features", "dice", "--member",
                 str(tmp_path / "bi"), "--member", str(tmp_path / "cross"), "--output",
                 str(tmp_path / "ens")]) == 0
    assert main(["predict", *data, "--split", "test", "--model", str(tmp_path / "ens"),
                 "--output", str(tmp_path / "test.json")]) == 0
    scores = json.loads((tmp_path / "test.json").read_text())
    assert len(scores) == 32
    capsys.readouterr()
    assert main(["predict", "--dataset", str(tmp_path / "dev"), "--score-range", "0", "1",
                 "--split", "dev", "--model", str(tmp_path / "ens"), "--output",
                 str(tmp_path / "dev.json")]) == 2
    err = capsys.readouterr().err
    assert "the learned stack was fit on" in err and "scoring a stack on its own fit rows" in err
    assert not (tmp_path / "dev.json").exists()


def toy_ridge_feature(calls: list):
    """A stand-in for stacking.char_ridge_feature: the ridge fit on a toy split named by the data
    (``toy/<k>``: the toy pairs whose row number mod 3 is not k), the names it was asked for in
    ``calls``."""
    from semrel.trainers.lexical import CharNgramRidge
    from semrel.trainers.stacking import CharRidgeFeature

    pairs = toy_pairs()

    def fit(data: str, split: str = "train"):
        calls.append(data)
        k = int(data.rsplit("/", 1)[1]) if data.rsplit("/", 1)[1].isdigit() else -1
        rows = pairs.select([i for i in range(len(pairs)) if i % 3 != k])
        model = CharNgramRidge.fit(rows["sentence1"], rows["sentence2"], rows["score"])
        return CharRidgeFeature(model, data, split, len(rows))

    return fit


def toy_dev(x, y, **where) -> dict:
    """dev_predictions of toy pairs, with the pairs' texts (as fit writes a dev split's)."""
    pairs = toy_pairs().select(range(len(y)))
    return {**dev_predictions(x, y, **where), "sentence1": list(pairs["sentence1"]),
            "sentence2": list(pairs["sentence2"])}


@pytest.fixture
def ridge_calls(monkeypatch) -> list[str]:
    """The data each char-ridge feature is fit on, in order (stacking's fit made the toy one's)."""
    import semrel.trainers.stacking as stacking

    calls = []
    monkeypatch.setattr(stacking, "char_ridge_feature", toy_ridge_feature(calls))
    return calls


def toy_rows(n: int):
    """(the first ``n`` toy pairs, their scores, two members' toy predictions of them)."""
    pairs = toy_pairs().select(range(n))
    return pairs, np.asarray(pairs["score"], dtype=np.float64), toy_members(n, seed=0)[0]


def test_the_char_ridge_feature_is_fit_on_the_members_training_pairs_and_saved(tmp_path, weights,
                                                                               ridge_calls):
    calls = ridge_calls
    pairs, y, x = toy_rows(60)
    members = [fake_member(tmp_path / n, weights, "toy/0", toy_dev(x[:, i], y))
               for i, n in enumerate("ab")]
    path = Ensemble.build(members, "ridge", features=("dice", "char-ridge")).save(tmp_path / "ens")
    assert calls == ["toy/0"]  # the members' training data, once
    raw = json.loads((path / ENSEMBLE).read_text())["learned"]
    assert raw["features"] == ["dice", "char-ridge"] and len(raw["state"]["coef"]) == 4
    assert {k: raw["char_ridge"][k] for k in ("data", "split", "pairs")} == {
        "data": "toy/0", "split": "train", "pairs": 80}
    stack = Ensemble.load(path).learned
    ridge = toy_ridge_feature([])("toy/0").model
    from semrel.metrics.overlap import dice

    new = toy_pairs().select(range(60, 90))
    scores = toy_members(30, seed=2)[0][:, :2]
    expected = stack.state["intercept"] + np.column_stack([
        scores, dice(new["sentence1"], new["sentence2"]),
        ridge.predict(new["sentence1"], new["sentence2"])]) @ np.asarray(stack.state["coef"])
    np.testing.assert_allclose(stack.predict(scores, new["sentence1"], new["sentence2"]), expected)
    with pytest.raises(ValueError, match="feature 'dice' needs the pairs' sentences"):
        stack.predict(scores)


def test_on_a_cv_each_fold_s_rows_get_the_ridge_of_that_fold_s_training_pairs(tmp_path, weights,
                                                                             ridge_calls):
    import semrel.trainers.stacking as stacking

    calls = ridge_calls
    pairs, y, x = toy_rows(80)
    members = [fake_member(tmp_path / n, weights, "toy/all", None) for n in "ab"]
    cvs = []
    for i, n in enumerate("ab"):
        cv = fake_cv(tmp_path / f"cv-{n}", weights, x[:, i], y, fold_data=("toy/1", "toy/2"))
        for f in (0, 1):
            record = json.loads((cv / f"cv-fold-{f}" / "eval_predictions.json").read_text())
            part = pairs.select(range(f * 40, (f + 1) * 40))
            record.update(sentence1=list(part["sentence1"]), sentence2=list(part["sentence2"]))
            (cv / f"cv-fold-{f}" / "eval_predictions.json").write_text(json.dumps(record))
        cvs.append(cv)
    rows = stacking.stack_inputs(members, cv_dirs=cvs, features=("char-ridge",))
    assert calls == ["toy/all", "toy/1", "toy/2"]  # the final ridge, then one per fold
    for f, data in enumerate(("toy/1", "toy/2")):
        part = pairs.select(range(f * 40, (f + 1) * 40))
        fold_ridge = toy_ridge_feature([])(data).model
        np.testing.assert_allclose(rows.char_ridge.column[f * 40:(f + 1) * 40],
                                   fold_ridge.predict(part["sentence1"], part["sentence2"]))
    assert rows.char_ridge.data == "toy/all"


def test_cross_fitted_predictions_never_see_their_own_label():
    from semrel.trainers.stacking import StackInputs, cross_fitted

    x, y = toy_members(100, seed=0)
    dev = StackInputs(x, y, None, None, rows("toy", "dev", 100))
    predicted = cross_fitted(dev, "ridge", folds=5, seed=0)
    assert spearman(predicted, y) > 0.8
    shifted = y.copy()
    shifted[7] += 50.0  # a wild label moves every stack fit on it, not the prediction of its row
    moved = cross_fitted(StackInputs(x, shifted, None, None, dev.fit_on), "ridge", folds=5, seed=0)
    assert moved[7] == pytest.approx(predicted[7], abs=1e-9)
    assert np.sum(np.abs(moved - predicted) > 1e-6) >= 60  # the four folds fit on row 7
    with pytest.raises(ParameterError, match="folds=1: must be an integer from 2 to the 100 rows"):
        cross_fitted(dev, "ridge", folds=1)
