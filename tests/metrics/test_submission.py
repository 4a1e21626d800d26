"""The official SemEval-2024 Task 1 evaluation (metrics.submission): real gold files, shuffled
submissions, every bad input named by file, row and id."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from scipy import stats

from semrel.metrics.errors import DataValidationError
from semrel.metrics.overlap import dice
from semrel.metrics.submission import (
    IdScores,
    evaluate,
    read_gold,
    read_predictions,
    submission_language,
    write_predictions,
)

AMH_TEST = "semrel-2024/Track A/amh/amh_test_with_labels.csv"
PAN_DEV = "semrel-2024/Track B/pan/pan_dev_with_labels.csv"  # Text,Score,PairID


def pairs(path):
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    first, second = zip(*(r["Text"].split("\n") for r in rows), strict=True)
    return [r["PairID"] for r in rows], list(first), list(second), np.array([float(r["Score"]) for r in rows])


def test_shuffled_submission_is_aligned_by_pair_id(mirror, tmp_path):
    ids, first, second, gold = pairs(mirror / AMH_TEST)
    predicted = dice(first, second)
    order = np.random.default_rng(0).permutation(len(ids))
    path = write_predictions(tmp_path / "pred_amh.csv", [ids[i] for i in order], predicted[order])
    result = evaluate(read_predictions(path), read_gold(mirror / AMH_TEST), "amh")
    assert list(result) == ["amh"] and result["amh"].n == 171
    assert result["amh"].spearman == pytest.approx(stats.spearmanr(predicted, gold).statistic, abs=1e-12)
    unaligned = stats.spearmanr(predicted[order], gold).statistic  # what row order alone would give
    assert abs(result["amh"].spearman - unaligned) > 0.1
    assert path.read_text(encoding="utf-8").splitlines()[0] == "PairID,Pred_Score"


def test_gold_reads_every_published_layout(mirror):
    pan = read_gold(mirror / PAN_DEV)  # PairID last
    assert len(pan.ids) == 242 and pan.ids[0].startswith("pan_dev") and ((0 <= pan.scores) & (pan.scores <= 1)).all()
    afr = read_gold(mirror / "semrel-2024/Track B/afr/afr_dev_with_labels.csv")  # lower-case "score"
    assert len(afr.ids) == 375


def test_one_file_of_several_languages_scores_each_on_its_own():
    gold = IdScores("gold", ["a1", "a2", "a3", "b1", "b2", "b3"], [0.1, 0.2, 0.3, 0.9, 0.5, 0.1])
    predictions = IdScores("pred", ["b3", "b2", "b1", "a3", "a2", "a1"], [1, 2, 3, 1, 2, 3])
    result = evaluate(predictions, gold, ["a", "a", "a", "b", "b", "b"])
    assert {k: (v.spearman, v.n) for k, v in result.items()} == {"a": (-1.0, 3), "b": (1.0, 3)}


@pytest.mark.parametrize("name, language", [("pred_amh.csv", "amh"), ("dir/pred_eng.csv", "eng"),
                                            ("amh.csv", None), ("pred_amh_a.csv", None)])
def test_submission_language(name, language):
    assert submission_language(name) == language


GOLD = "PairID,Text,Score\nX-1,\"a\nb\",0.1\nX-2,\"c\nd\",0.5\nX-3,\"e\nf\",0.9\n"
OK = "PairID,Pred_Score\nX-1,0.2\nX-2,0.4\nX-3,0.6\n"


@pytest.mark.parametrize("predictions, gold, words", [
    ("PairID,Pred_Score\nX-1,0.2\nX-2,0.4\n", GOLD, ["gold.csv: row 3", "has no prediction in", "(X-3)"]),
    (OK + "X-4,0.1\n", GOLD, ["pred.csv: row 4", "not in the gold", "(X-4)"]),
    ("PairID,Pred_Score\nX-1,0.2\nX-2,0.4\nX-1,0.6\nX-3,0.1\n", GOLD,
     ["pred.csv: row 3", "repeated PairID (first at row 1)", "(X-1)"]),
    ("ID,Score\nX-1,0.2\nX-2,0.4\nX-3,0.6\n", GOLD, ["pred.csv", "header must be PairID,Pred_Score", "got ID,Score"]),
    ("PairID,Pred_Score,Extra\nX-1,0.2,1\n", GOLD, ["pred.csv", "header must be PairID,Pred_Score"]),
    ("X-1,0.2\nX-2,0.4\nX-3,0.6\n", GOLD, ["pred.csv", "header must be"]),  # no header
    ("PairID,Pred_Score\nX-1,nan\nX-2,0.4\nX-3,0.6\n", GOLD, ["pred.csv: row 1", "finite number", "X-1"]),
    ("PairID,Pred_Score\nX-1,0.2\nX-2,inf\nX-3,0.6\n", GOLD, ["pred.csv: row 2", "finite number", "X-2"]),
    ("PairID,Pred_Score\nX-1,0.2\nX-2,high\nX-3,0.6\n", GOLD, ["pred.csv: row 2", "not a number", "'high'"]),
    ("PairID,Pred_Score\nX-1,0.2\nX-2,\nX-3,0.6\n", GOLD, ["pred.csv: row 2", "not a number"]),
    ("PairID,Pred_Score\nX-1,0.2\nX-2,0.4,0.5\nX-3,0.6\n", GOLD, ["pred.csv: row 2", "2 fields"]),
    ("PairID,Pred_Score\nX-1,0.2\n,0.4\nX-3,0.6\n", GOLD, ["pred.csv: row 2", "empty PairID"]),
    ("PairID,Pred_Score\n", GOLD, ["pred.csv", "no predictions"]),
    ("", GOLD, ["pred.csv", "empty file"]),
    ("PairID,Pred_Score\nX-1,0.5\nX-2,0.5\nX-3,0.5\n", GOLD, ["pred.csv", "all x predictions are equal"]),
    (OK, "PairID,Text\nX-1,\"a\nb\"\n", ["gold.csv", "one PairID and one Score column"]),
    (OK, "PairID,Text,Score\nX-1,\"a\nb\",0.1\nX-2,\"c\nd\",\nX-3,\"e\nf\",0.9\n",
     ["gold.csv: row 2", "no gold Score", "X-2"]),
    (OK, GOLD + "X-2,\"c\nd\",0.5\n", ["gold.csv: row 4", "repeated PairID (first at row 2)", "X-2"]),
], ids=["missing id", "extra id", "repeated id", "bad header", "three columns", "no header", "NaN", "inf",
        "non-numeric", "empty score", "three fields", "empty id", "header only", "empty file", "constant",
        "gold without Score", "gold score missing", "gold repeated id"])
def test_bad_input_is_named_by_file_row_and_id(predictions, gold, words, tmp_path):
    (tmp_path / "pred.csv").write_text(predictions, encoding="utf-8")
    (tmp_path / "gold.csv").write_text(gold, encoding="utf-8")
    with pytest.raises(DataValidationError) as error:
        evaluate(read_predictions(tmp_path / "pred.csv"), read_gold(tmp_path / "gold.csv"), "x")
    for word in words:
        assert word in str(error.value)


def test_missing_file_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.csv: no such file"):
        read_predictions(tmp_path / "nope.csv")


def test_written_predictions_are_checked_and_read_back(tmp_path):
    path = write_predictions(tmp_path / "out" / "pred_x.csv", ["a", "b"], [0.25, 1 / 3])
    back = read_predictions(path)
    assert back.ids == ("a", "b") and back.scores.tolist() == [0.25, 1 / 3]  # every digit kept
    with pytest.raises(DataValidationError, match="row 2: repeated PairID"):
        write_predictions(tmp_path / "bad.csv", ["a", "a"], [0.1, 0.2])
    with pytest.raises(DataValidationError, match="row 1: score must be a finite number"):
        write_predictions(tmp_path / "bad.csv", ["a", "b"], [float("nan"), 0.2])
