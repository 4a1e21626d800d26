"""metrics/mse_lower_bound: the §6 formula, the normal variant, predictions, bad input, evaluate.load."""

from __future__ import annotations

import evaluate
import numpy as np
import pytest

from project import REPO
from semrel.metrics.lower_bound import mse_lower_bound


@pytest.fixture(scope="module")
def free_annotations(mirror) -> np.ndarray:
    lines = (mirror / "czech-news-sts" / "free-test.tsv").read_text(encoding="utf-8").splitlines()
    return np.array([[int(a) for a in line.split("\t")[3].split(",")] for line in lines], float)


def test_formula_by_hand():
    # s² = 2/3 and 1/3, n = 4: t model (s²/n)·3/1, normal s²/n
    t = mse_lower_bound([[1, 2, 2, 3], [0, 0, 1, 1]])
    assert t.bound == pytest.approx((2 / 3 / 4 * 3 + 1 / 3 / 4 * 3) / 2)
    assert t.rmse_bound == pytest.approx(np.sqrt(t.bound))
    assert (t.n_items, t.n_skipped, t.model, t.mse, t.excess) == (2, 0, "t", None, None)
    normal = mse_lower_bound([[1, 2, 2, 3], [0, 0, 1, 1]], model="normal")
    assert normal.bound == pytest.approx((2 / 3 / 4 + 1 / 3 / 4) / 2)


def test_ragged_items_use_their_own_n():
    ragged = [[0, 6, 3, 3, 3], [1, 1, 2, 2, 2, 2, 3, 3]]
    expected = np.mean([np.var(a, ddof=1) / len(a) * (len(a) - 1) / (len(a) - 3) for a in ragged])
    assert mse_lower_bound(ragged).bound == pytest.approx(expected)


def test_real_free_test_bound(free_annotations):
    annotations = free_annotations
    assert annotations.shape == (1200, 9)
    s2 = annotations.var(axis=1, ddof=1)
    t = mse_lower_bound(annotations.tolist())
    assert t.bound == pytest.approx(np.mean(s2 / 9 * 8 / 6), rel=1e-12)
    assert round(t.bound, 4) == 0.1582 and t.n_items == 1200
    assert round(mse_lower_bound(annotations.tolist(), model="normal").bound, 4) == 0.1186


def test_predictions_mse_and_excess():
    annotations = [[1, 2, 2, 3], [0, 0, 1, 1], [5, 5, 6, 6, 6]]
    result = mse_lower_bound(annotations, [2.0, 1.5, 5.0])
    means = np.array([2.0, 0.5, 5.6])
    assert result.mse == pytest.approx(np.mean((np.array([2.0, 1.5, 5.0]) - means) ** 2))
    assert result.excess == pytest.approx(result.mse - result.bound)


def test_oracle_mse_approaches_bound_on_simulated_annotations():
    # true means mu, 9 noisy annotations each: an oracle predicting mu pays ~Var(mean)
    rng = np.random.default_rng(7)
    mu = rng.uniform(0, 6, 4000)
    annotations = mu[:, None] + rng.normal(0, 1.2, (4000, 9))
    normal = mse_lower_bound(annotations.tolist(), mu, model="normal")
    assert normal.bound == pytest.approx(1.2 ** 2 / 9, rel=0.05)
    assert normal.mse == pytest.approx(normal.bound, rel=0.06)


def test_too_few_annotations_raise_or_are_skipped():
    data = [[1, 2, 2, 3], [1, 2, 3], [4]]
    with pytest.raises(ValueError, match=r"item 1 has 3 annotations; the t model needs >= 4"):
        mse_lower_bound(data)
    skipped = mse_lower_bound(data, [2.0, 99.0, 99.0], on_invalid="omit")
    assert (skipped.n_items, skipped.n_skipped) == (1, 2) and skipped.mse == 0.0
    with pytest.raises(ValueError, match="item 2 has 1 annotations; the normal model needs >= 2"):
        mse_lower_bound(data, model="normal")
    with pytest.raises(ValueError, match="no item has >= 4"):
        mse_lower_bound([[1, 2]], on_invalid="omit")


@pytest.mark.parametrize("kwargs, message", [
    ({"annotations": [[1, 2, 3, 4], [1, float("nan"), 2, 3]]}, "item 1 hold a non-finite value"),
    ({"annotations": [[1, 2, 3, 4]], "predictions": [1.0, 2.0]}, "2 predictions for 1 items"),
    ({"annotations": [[1, 2, 3, 4]], "predictions": [float("inf")]}, "prediction 0 is not finite"),
    ({"annotations": [[1, 2, 3, 4]], "model": "gauss"}, "model must be"),
    ({"annotations": [[1, 2, 3, 4]], "on_invalid": "drop"}, "on_invalid must be"),
])
def test_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        mse_lower_bound(**kwargs)


def test_evaluate_load_offline():
    metric = evaluate.load(str(REPO / "metrics" / "mse_lower_bound"))
    out = metric.compute(annotations=[[1, 2, 2, 3], [0, 0, 1, 1]], predictions=[2.0, 0.5])
    assert out == pytest.approx({"mse_lower_bound": 0.375, "rmse_lower_bound": np.sqrt(0.375),
                                 "n_items": 2, "n_skipped": 0, "model": "t", "mse": 0.0,
                                 "excess_mse": -0.375})
    out = metric.compute(annotations=[[1, 2, 2, 3], [0, 0, 1, 1], [3]], predictions=[None] * 3,
                         model="normal", on_invalid="omit")
    assert out["mse_lower_bound"] == pytest.approx(0.125) and out["n_skipped"] == 1
    assert "mse" not in out
    for batch, predictions in (([[1, 2, 2, 3]], [2.0]), ([[0, 0, 1, 1]], [0.5])):
        metric.add_batch(annotations=batch, predictions=predictions)
    assert metric.compute()["mse"] == 0.0
    assert "predictions" in metric.info.features  # declared, so a Space form shows it


def test_predictions_are_optional_through_evaluate_load():
    """Documented optional, so leaving predictions out gives the bound alone (evaluate itself has
    no optional inputs: its own add_batch fails with "object of type 'NoneType' has no len()")."""
    metric = evaluate.load(str(REPO / "metrics" / "mse_lower_bound"))
    annotations = [[1, 2, 2, 3], [0, 0, 1, 1], [3, 3, 4, 5, 5]]
    alone = metric.compute(annotations=annotations, model="normal")
    assert alone == {"mse_lower_bound": pytest.approx(mse_lower_bound(annotations, model="normal").bound),
                     "rmse_lower_bound": pytest.approx(mse_lower_bound(annotations, model="normal").rmse_bound),
                     "n_items": 3, "n_skipped": 0, "model": "normal"}
    with_predictions = metric.compute(annotations=annotations, predictions=[2.0, 0.5, 4.0], model="normal")
    assert with_predictions["mse"] == pytest.approx(mse_lower_bound(annotations, [2.0, 0.5, 4.0]).mse)
    metric.add_batch(annotations=annotations[:2])  # batches without predictions
    metric.add(annotations=annotations[2])
    assert metric.compute(model="normal") == alone
    with pytest.raises(ValueError, match="mse_lower_bound: annotations left out or None"):
        metric.compute(predictions=[1.0])
    with pytest.raises(ValueError, match="prediction 1 is None: give a prediction for every item, or none"):
        metric.compute(annotations=annotations, predictions=[1.0, None, 2.0])
