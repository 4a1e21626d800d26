import evaluate
import numpy as np
import pytest

from scripts.reproduce_str_dice import fold_correlations
from semrel.metrics.overlap import dice, unigrams


def test_dice_hand_computed():
    # {the, cat, sat} vs {the, cat, ran, away}: 2*2 / (3+4)
    np.testing.assert_allclose(dice(["The cat sat."], ["the cat ran away"]), [4 / 7])
    np.testing.assert_allclose(dice(["a a a"], ["a"]), [1.0])  # unique unigrams
    np.testing.assert_allclose(dice(["x"], ["y"]), [0.0])
    assert unigrams("Don't stop") == {"don", "t", "stop"}


def test_dice_bad_input():
    with pytest.raises(ValueError, match="row 1: both sentences have no word token"):
        dice(["a", "..."], ["b", "!"])
    with pytest.raises(ValueError, match="2 first sentences but 1"):
        dice(["a", "b"], ["c"])


def test_evaluate_load_offline():
    metric = evaluate.load("metrics/lexical_overlap")
    result = metric.compute(sentence1=["a cat sat", "dogs bark", "a b"],
                            sentence2=["a cat ran", "birds sing", "a b"], references=[0.6, 0.1, 1.0])
    assert result["spearman"] == pytest.approx(1.0) and result["n"] == 3


def test_reproduces_paper_dice_on_real_folds(mirror, cache_dir):
    overall, per_source = fold_correlations(mirror, cache_dir)
    assert np.mean(overall) == pytest.approx(0.57, abs=0.005)  # paper Table 5 row 1
    assert np.mean(per_source["Stance"]) == pytest.approx(0.20, abs=0.01)  # Table 6
    assert np.mean(per_source["Formality"]) == pytest.approx(0.69, abs=0.01)
