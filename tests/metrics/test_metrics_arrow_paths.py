"""The evaluate paths code Arrow columns instead of Python lists (memory at 5M rows):
same numbers as the plain functions on real files, same errors in the user's own ids."""


import evaluate
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from project import REPO
from semrel.metrics.agreement import annotator_agreement
from semrel.metrics.arrow_columns import sorted_codes
from semrel.metrics.bws.arrow_input import annotations_from_arrow
from semrel.metrics.bws.counting import bws_counting_scores, encode_annotations
from semrel.metrics.bws.readers import read_semeval_2024
from semrel.metrics.errors import DataValidationError
from semrel.metrics.split_half.split_half import split_half_bws, split_half_ratings, tuple_groups

METRICS = REPO / "metrics"


@pytest.fixture(scope="module")
def semeval_lists(mirror):
    """The real SemEval-2024 Arabic BWS annotations as a user has them: lists of item ids."""
    ann = read_semeval_2024(mirror / "semrel-2024" / "BWS_annotations" / "arq_bws.csv", on_invalid="omit")
    ids = np.asarray(ann.items, dtype=object)
    return ids[ann.tuples].tolist(), ids[ann.best].tolist(), ids[ann.worst].tolist()


def test_sorted_codes_follow_python_sort_across_chunks():
    column = pa.chunked_array([pa.array(["é", "b", "Z"]), pa.array(["a", "b", "ä", "10", "9"])])
    (codes,), labels = sorted_codes(column)
    assert labels.tolist() == sorted(set(column.to_pylist()))
    assert labels[codes].tolist() == column.to_pylist()
    (left, right), labels = sorted_codes(pa.array(["x", "y"]), pa.array(["y", "w"]))  # one coding for both
    assert labels[left].tolist() == ["x", "y"] and labels[right].tolist() == ["y", "w"]
    assert sorted_codes(pa.array(["a", None])) is None and sorted_codes(pa.array(["a", " "])) is None


def test_bws_scores_through_evaluate_equal_the_function_on_real_annotations(semeval_lists):
    tuples, best, worst = semeval_lists
    out = evaluate.load(str(METRICS / "bws_scores")).compute(tuples=tuples, best=best, worst=worst)
    direct = bws_counting_scores(tuples, best, worst)
    assert out["items"] == direct.items.tolist() and len(out["items"]) == 3991
    assert out["score"] == direct.score.tolist() and out["appearances"] == direct.appearances.tolist()


def test_split_half_through_evaluate_equals_the_function_on_real_files(semeval_lists, mirror):
    tuples, best, worst = semeval_lists
    out = evaluate.load(str(METRICS / "split_half_reliability")).compute(
        tuples=tuples, best=best, worst=worst, trials=30, seed=3)
    direct = split_half_bws(tuples, best, worst, trials=30, seed=3)
    assert (out["spearman"], out["pearson"], out["n_items"]) == (direct.spearman, direct.pearson, direct.n_items)
    rows = (mirror / "czech-news-sts" / "free-test.tsv").read_text(encoding="utf-8").splitlines()
    items = [f"{i}:{row.split(chr(9))[0]}" for i, row in enumerate(rows) for _ in range(9)]
    ratings = [float(v) for row in rows for v in row.split("\t")[3].split(",")]
    out = evaluate.load(str(METRICS / "split_half_reliability"), "ratings").compute(
        items=items, ratings=ratings, trials=40, seed=1)
    direct = split_half_ratings(items, ratings, trials=40, seed=1)
    assert (out["spearman"], out["pearson"], out["n_items"]) == (direct.spearman, direct.pearson, 1200)


def test_annotator_agreement_through_evaluate_equals_the_function_on_crowd_sts(upstream):
    frame = pd.read_csv(upstream / "crowd-sts" / "Paralex_human.csv", dtype=str, keep_default_na=False)
    items, workers = frame["HITId"].tolist(), frame["WorkerId"].tolist()
    ratings = frame["Answer.semantic-similarity.label"].str[0].astype(float).tolist()
    out = evaluate.load(str(METRICS / "annotator_agreement")).compute(items=items, annotators=workers, ratings=ratings)
    direct = annotator_agreement(items, workers, ratings)
    assert out["krippendorff_alpha"] == direct.alpha and out["inter_loo_spearman"] == direct.inter_loo.spearman
    assert (out["n_items"], out["n_annotators"]) == (direct.n_items, direct.n_annotators)


GOOD = ["a", "b", "c", "d"]


@pytest.mark.parametrize("tuples, best, worst, choice, words", [
    ([GOOD, ["a", "b", "c", "a"]], ["a", "a"], ["b", "b"], "item",
     "row 2: item repeated within the tuple (tuple=['a', 'b', 'c', 'a']"),
    ([GOOD, GOOD], ["a", "z"], ["b", "b"], "item",
     "row 2: best is not an item of the tuple (tuple=['a', 'b', 'c', 'd'], best='z'"),
    ([GOOD, ["a", "", "c", "d"]], ["a", "a"], ["b", "c"], "item", "row 2: empty cell"),
    ([GOOD, ["a", None, "c", "d"]], ["a", "a"], ["b", "c"], "item", "row 2: empty cell"),
    ([GOOD, ["a", "b", "c"], GOOD], ["a", "a", "a"], ["b", "b", "b"], "item", "row 2: tuple size differs"),
    ([GOOD, GOOD], [1, 3], [2, 3], "position", "row 2: best and worst are the same item"),
    ([GOOD, GOOD], [1, 5], [2, 3], "position", "row 2: best is not an item of the tuple"),
    ([[1, 2, 3, 4], [1, 2, 3, 9]], [1, 9], [2, 9], "item", "row 2: best and worst are the same item"),
])
def test_errors_through_evaluate_name_the_row_in_the_users_ids(tuples, best, worst, choice, words,
                                                              erroring_module):
    bws = erroring_module("bws_scores")
    omitted = bws.compute(tuples=tuples, best=best, worst=worst, choice=choice, on_invalid="omit")
    with pytest.raises(DataValidationError) as raised:
        bws.compute(tuples=tuples, best=best, worst=worst, choice=choice)
    assert words in str(raised.value)
    direct = bws_counting_scores(tuples, best, worst, choice=choice, on_invalid="omit")
    assert omitted["n_skipped"] == direct.n_skipped == 1 and omitted["items"] == direct.items.tolist()


@pytest.mark.parametrize("choice", ["item", "position"])
def test_arrow_annotations_equal_encoded_lists(choice):
    rng = np.random.default_rng(4)
    cells = rng.choice([f"id{i}" for i in range(50)], size=(300, 4), replace=True)
    keep = np.array([len(set(row)) == 4 for row in cells])
    cells = cells[keep]
    best, worst = (cells[:, 0], cells[:, 1]) if choice == "item" else (np.full(len(cells), 1), np.full(len(cells), 2))
    columns = [pa.chunked_array([pa.array(part.tolist()) for part in np.array_split(column, 3)])
               for column in (cells, best, worst)]
    coded = annotations_from_arrow(*columns, choice=choice)
    plain = encode_annotations(cells.tolist(), best.tolist(), worst.tolist(), choice=choice)
    for field in ("items", "tuples", "best", "worst", "rows"):
        assert np.array_equal(getattr(coded, field), getattr(plain, field)), field


def test_tuple_groups_equal_unique_rows():
    tuples = np.random.default_rng(2).integers(0, 30, size=(500, 4))
    expected = np.unique(np.sort(tuples, axis=1), axis=0, return_inverse=True)[1].ravel()
    assert np.array_equal(tuple_groups(tuples, 30), expected)


def test_intra_agreement_memory_is_linear_in_the_ratings():
    """400k ratings over 200k items x 400k annotators: a dense items x annotators table would
    need 640 GB; the intra pairs are found by sorting."""
    n = 400_000
    items = np.arange(n) // 2
    annotators = np.arange(n)
    annotators[1::1000] = annotators[0::1000]  # every 500th item: the same annotator twice (repeats)
    ratings = np.random.default_rng(0).integers(0, 6, n).astype(float)
    result = annotator_agreement(items, annotators, ratings, on_invalid="omit")
    assert result.n_repeats == 400 and result.intra is not None and result.intra.n_ratings == 400
