"""Counting scores of Best-Worst Scaling: formula, reference equality, bad input, evaluate adapter."""


import numpy as np
import pytest

from project import REPO
from semrel.metrics.bws.counting import RULES, bws_counting_scores, encode_annotations
from semrel.metrics.errors import DataValidationError


def reference_counting(tuples, best, worst):
    """get-scores-from-BWS-annotations-counting.pl as described: one dict update per cell."""
    seen, n_best, n_worst = {}, {}, {}
    for row, b, w in zip(tuples, best, worst, strict=True):
        for item in row:
            seen[item] = seen.get(item, 0) + 1
        n_best[b] = n_best.get(b, 0) + 1
        n_worst[w] = n_worst.get(w, 0) + 1
    return {i: (n_best.get(i, 0) - n_worst.get(i, 0)) / n for i, n in seen.items()}


def simulated(n_items=200, n_tuples=400, per_tuple=3, seed=0):
    rng = np.random.default_rng(seed)
    tuples = np.array([rng.choice(n_items, 4, replace=False) for _ in range(n_tuples)]).repeat(per_tuple, axis=0)
    noisy = rng.normal(size=n_items)[tuples] + rng.normal(size=tuples.shape)
    rows = np.arange(len(tuples))
    return tuples, tuples[rows, noisy.argmax(1)], tuples[rows, noisy.argmin(1)], noisy


def test_hand_computed_example():
    # a: best once, worst once, seen twice -> 0; b: best once of 2 -> 0.5; d: worst once of 1 -> -1
    r = bws_counting_scores([["a", "b", "c", "d"], ["a", "b", "c", "e"]], ["a", "b"], ["d", "a"])
    assert r.items.tolist() == ["a", "b", "c", "d", "e"]
    assert r.appearances.tolist() == [2, 2, 2, 1, 1]
    assert r.n_best.tolist() == [1, 1, 0, 0, 0] and r.n_worst.tolist() == [1, 0, 0, 1, 0]
    assert r.score.tolist() == [0.0, 0.5, 0.0, -1.0, 0.0]
    assert r.score_01.tolist() == [0.5, 0.75, 0.5, 0.0, 0.5]
    assert (r.n_annotations, r.n_skipped) == (2, 0)


def test_three_item_tuples_and_fractions():
    r = bws_counting_scores([[1, 2, 3], [3, 2, 1], [1, 2, 3]], [1, 1, 2], [3, 3, 1])
    assert r.score.tolist() == [(2 - 1) / 3, (1 - 0) / 3, (0 - 2) / 3]


def test_positions_equal_item_ids():
    tuples, best, worst, noisy = simulated()
    by_position = bws_counting_scores(tuples, noisy.argmax(1) + 1, noisy.argmin(1) + 1, choice="position")
    by_item = bws_counting_scores(tuples, best, worst)
    assert np.array_equal(by_position.score, by_item.score)


def test_identical_to_reference_procedure():
    tuples, best, worst, _ = simulated()
    ours = bws_counting_scores(tuples.astype(str), best.astype(str), worst.astype(str))
    reference = reference_counting(tuples.astype(str).tolist(), best.astype(str), worst.astype(str))
    assert sorted(reference) == ours.items.tolist()
    assert [reference[i] for i in ours.items] == ours.score.tolist()  # exact, not approximate


def test_item_order_is_sorted_and_independent_of_row_order():
    tuples, best, worst, _ = simulated(seed=3)
    order = np.random.default_rng(0).permutation(len(tuples))
    a, b = bws_counting_scores(tuples, best, worst), bws_counting_scores(tuples[order], best[order], worst[order])
    assert np.array_equal(a.items, np.sort(a.items)) and np.array_equal(a.items, b.items)
    assert np.array_equal(a.score, b.score)


GOOD = ["a", "b", "c", "d"]
BAD_INPUTS = [  # (tuples, best, worst, choice, rule of row 2)
    ([GOOD, ["a", "b", "c"]], ["a", "a"], ["b", "b"], "item", "tuple size differs from the other rows"),
    ([GOOD, ["a", "b", None, "d"]], ["a", "a"], ["b", "b"], "item", "empty cell"),
    ([GOOD, ["a", "b", float("nan"), "d"]], ["a", "a"], ["b", "b"], "item", "empty cell"),
    ([GOOD, ["a", "b", " ", "d"]], ["a", "a"], ["b", "b"], "item", "empty cell"),
    ([GOOD, GOOD], ["a", ""], ["b", "b"], "item", "empty cell"),
    ([GOOD, GOOD], ["a", "a"], ["b", None], "item", "empty cell"),
    ([GOOD, ["a", "b", "a", "d"]], ["a", "a"], ["b", "b"], "item", "item repeated within the tuple"),
    ([GOOD, GOOD], ["a", "z"], ["b", "b"], "item", "best is not an item of the tuple"),
    ([GOOD, ["a", "b", "c", "e"]], ["a", "a"], ["b", "d"], "item", "worst is not an item of the tuple"),
    ([GOOD, GOOD], ["a", "c"], ["b", "c"], "item", "best and worst are the same item"),
    ([GOOD, GOOD], [1, 5], [2, 2], "position", "best is not an item of the tuple"),
    ([GOOD, GOOD], [1, 1.5], [2, 2], "position", "best is not an item of the tuple"),
    ([GOOD, GOOD], [1, 1], [2, 0], "position", "worst is not an item of the tuple"),
    ([GOOD, GOOD], [1, 3], [2, 3], "position", "best and worst are the same item"),
]


@pytest.mark.parametrize("tuples, best, worst, choice, rule", BAD_INPUTS)
def test_bad_input_names_row_and_rule(tuples, best, worst, choice, rule):
    with pytest.raises(DataValidationError) as err:
        bws_counting_scores(tuples, best, worst, choice=choice)
    assert (err.value.row, err.value.rule) == (2, rule)
    assert f"row 2: {rule}" in str(err.value)


@pytest.mark.parametrize("tuples, best, worst, choice, rule", BAD_INPUTS)
def test_bad_input_skip_counts(tuples, best, worst, choice, rule):
    ann = encode_annotations(tuples, best, worst, choice=choice, on_invalid="omit")
    assert ann.skipped == {rule: 1} and ann.skipped_rows.tolist() == [2]
    r = bws_counting_scores(tuples, best, worst, choice=choice, on_invalid="omit")
    assert (r.n_annotations, r.n_skipped) == (1, 1)
    assert r.items.tolist() == GOOD and r.score.tolist() == [1.0, -1.0, 0.0, 0.0]


def test_error_counts_the_other_bad_rows_and_the_first_comes_first():
    tuples = [GOOD, ["a", "a", "b", "c"], GOOD, GOOD]
    with pytest.raises(DataValidationError, match=r"row 2: item repeated.*2 more invalid row\(s\), e.g. \[3, 4\]"):
        bws_counting_scores(tuples, ["a", "a", "a", "b"], ["b", "b", "a", "b"])
    ann = encode_annotations(tuples, ["a", "a", "a", "b"], ["b", "b", "a", "b"], on_invalid="omit")
    assert ann.skipped == {RULES[2]: 1, RULES[5]: 2} and ann.n_skipped == 3


def test_hint_for_positions_given_as_items():
    with pytest.raises(DataValidationError, match="choice='position'"):
        bws_counting_scores([GOOD], [1], [4])


def test_bad_arguments():
    with pytest.raises(ValueError, match="choice"):
        bws_counting_scores([GOOD], ["a"], ["b"], choice="id")
    with pytest.raises(ValueError, match="on_invalid"):
        bws_counting_scores([GOOD], ["a"], ["b"], on_invalid="ignore")
    with pytest.raises(ValueError, match="one value per tuple"):
        bws_counting_scores([GOOD, GOOD], ["a"], ["b"])
    with pytest.raises(ValueError, match="at least 2 items"):
        bws_counting_scores([["a"]], ["a"], ["a"])


def test_evaluate_module(monkeypatch):
    monkeypatch.chdir(REPO)
    import evaluate

    bws = evaluate.load("metrics/bws_scores")
    tuples, best, worst, _ = simulated(n_items=30, n_tuples=40)
    r = bws.compute(tuples=tuples.astype(str).tolist(), best=best.astype(str).tolist(),
                    worst=worst.astype(str).tolist())
    direct = bws_counting_scores(tuples.astype(str), best.astype(str), worst.astype(str))
    assert r["items"] == direct.items.tolist() and r["score"] == direct.score.tolist()
    as_ints = bws.compute(tuples=tuples.tolist(), best=best.tolist(), worst=worst.tolist())
    assert as_ints["score"] == bws_counting_scores(tuples, best, worst).score.tolist()
    with pytest.raises(DataValidationError, match="row 1: best and worst are the same item"):
        bws.compute(tuples=[GOOD], best=[2], worst=[2], choice="position")
