"""One rule for numbers: text from a file is a number only in ASCII decimal notation
(the BWS readers, the dataset builders: ``semrel.metrics.text_numbers.ascii_number``), and the
functions take numbers as numbers: a str where a rating, reference, annotation or prediction belongs
(``"3"``, ``"١"``, a word) is a ValueError naming the input and index, never cast by ``float()``."""

from __future__ import annotations

import re

import pytest

from semrel.dataset_scripts.textio import ascii_number as builders_ascii_number
from semrel.metrics.agreement import annotator_agreement
from semrel.metrics.lower_bound import mse_lower_bound
from semrel.metrics.overlap import dice_correlation
from semrel.metrics.text_numbers import ascii_number

ARABIC_1 = "\u0661"  # float("١") == 1.0
S1, S2 = ["a b", "c", "d e"], ["a", "c d", "e"]
ITEMS, ANNOTATORS = ["a", "a", "b", "b"], ["x", "y", "x", "y"]

CALLS = [  # (id, call, words of the ValueError)
    ("rating in Arabic-Indic digits", lambda: annotator_agreement(ITEMS, ANNOTATORS, [1, ARABIC_1, 3, 4]),
     f"ratings[1] is '{ARABIC_1}' (str); ratings are numbers (int or float), not text"),
    ("rating as digits text", lambda: annotator_agreement(ITEMS, ANNOTATORS, ["1", 2, 3, 4]),
     "ratings[0] is '1' (str); ratings are numbers"),
    ("rating a word", lambda: annotator_agreement(ITEMS, ANNOTATORS, [1, "high", 3, 4]),
     "ratings[1] is 'high' (str)"),
    ("rating a bool", lambda: annotator_agreement(ITEMS, ANNOTATORS, [1, True, 3, 4]),
     "ratings[1] is True (bool); ratings are numbers"),
    ("reference in Arabic-Indic digits", lambda: dice_correlation(S1, S2, [0.1, ARABIC_1, 0.3]),
     f"references[1] is '{ARABIC_1}' (str); references are numbers"),
    ("reference a word", lambda: dice_correlation(S1, S2, [0.1, 0.2, "x"]), "references[2] is 'x' (str)"),
    ("annotation in Arabic-Indic digits", lambda: mse_lower_bound([[1, 2, 2, 3], [1, 2, ARABIC_1, 3]]),
     f"annotations of item 1 hold '{ARABIC_1}' (str); annotations are numbers"),
    ("prediction as text", lambda: mse_lower_bound([[1, 2, 2, 3]], ["2.0"]),
     "predictions[0] is '2.0' (str); predictions are numbers"),
]


@pytest.mark.parametrize("call, words", [c[1:] for c in CALLS], ids=[c[0] for c in CALLS])
def test_text_is_no_number(call, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        call()


def test_numbers_still_are():
    assert annotator_agreement(ITEMS, ANNOTATORS, [1, 2.0, 3, 4]).n_ratings == 4
    assert mse_lower_bound([[1, 2, 2, 3], [0, 0, 1, 1]], [2, 0.5]).mse == 0.0


@pytest.mark.parametrize("text, value", [("4", 4.0), (" -4.5 ", -4.5), ("1e2", 100.0), (".5", 0.5),
                                         (ARABIC_1, None), ("1_000", None), ("nan", None), ("inf", None),
                                         ("", None), (None, None), ("4 stars", None)])
def test_ascii_numbers_one_rule_for_readers_and_builders(text, value):
    assert ascii_number(text) == value
    assert builders_ascii_number is ascii_number


@pytest.mark.parametrize("cell", [ARABIC_1, "1_0", "0,5"])
def test_submission_scores_are_ascii_numbers(tmp_path, cell):
    from semrel.metrics.errors import DataValidationError
    from semrel.metrics.submission import read_predictions

    path = tmp_path / "pred_x.csv"
    path.write_text(f'PairID,Pred_Score\na,0.5\nb,"{cell}"\n', encoding="utf-8")
    words = f"pred_x.csv: row 2: Pred_Score is not a number (ASCII digits, e.g. 4 or 4.5) (b: '{cell}')"
    with pytest.raises(DataValidationError, match=re.escape(words)):
        read_predictions(path)


def test_a_submission_is_written_whole(tmp_path, monkeypatch):
    import errno
    import os

    from semrel.metrics.submission import write_predictions

    path = write_predictions(tmp_path / "pred_x.csv", ["a"], [0.5])
    before = path.read_bytes()

    def full(*args):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("os.fsync", full)
    with pytest.raises(ValueError, match="predictions file .*pred_x.csv: cannot be written .No space left on device.; "
                                         "the previous file is unchanged"):
        write_predictions(path, ["a", "b"], [0.5, 0.25])
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["pred_x.csv"]
