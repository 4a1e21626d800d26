"""Table-driven: bad inputs -> the error class and its words, or the
correct result (metrics: BWS files and inputs, split-half reliability, agreement, lexical overlap)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from semrel.metrics.agreement import annotator_agreement
from semrel.metrics.bws.counting import bws_counting_scores
from semrel.metrics.bws.readers import read_nrc, read_semeval_2024
from semrel.metrics.errors import DataValidationError
from semrel.metrics.overlap import dice_correlation
from semrel.metrics.split_half.split_half import split_half_bws, split_half_ratings

NRC = "Item1,Item2,Item3,Item4,BestItem,WorstItem\na,b,c,d,a,d\na,b,c,e,b,a\n"
SEMEVAL = 'SentPair1,SentPair2,SentPair3,SentPair4,Best,Worst\n' + \
          '"[\'a b\', \'c d\']","[\'e f\', \'g h\']","[\'i j\', \'k l\']","[\'m n\', \'o p\']",1,4\n'

FILES = [  # (name, bytes) -> words of the DataValidationError
    ("empty", b"", "empty.csv: file is empty (no header, no rows)"),
    ("header only", NRC.splitlines()[0].encode() + b"\n", "file has a header but no data rows"),
    ("latin-1", NRC.replace("a,b,c,e", "\xe9,b,c,e").encode("latin-1"), "row 2: file is not UTF-8 text"),
    ("truncated row", NRC.encode()[:-6], "row 2: row has fewer fields than the header"),
    ("truncated quote", SEMEVAL.encode()[:60], "malformed CSV (truncated file or unclosed quote?)"),
    ("extra field", (NRC + "a,b,c,d,a,d,x\n").encode(), "row 3: row has more fields than the header"),
]


@pytest.mark.parametrize("reader", [read_nrc, read_semeval_2024])
@pytest.mark.parametrize("name, content, words", FILES, ids=[f[0] for f in FILES])
def test_broken_bws_files(tmp_path, reader, name, content, words):
    path = tmp_path / "empty.csv" if name == "empty" else tmp_path / "file.csv"
    path.write_bytes(content)
    with pytest.raises(DataValidationError, match=re.escape(words)) as info:
        reader(path)
    assert str(path) in str(info.value)


def test_missing_file_names_it(tmp_path):
    with pytest.raises(DataValidationError, match="nowhere.csv: file cannot be read"):
        read_nrc(tmp_path / "nowhere.csv")


def test_bom_and_crlf_are_read(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbf" + NRC.replace("\n", "\r\n").encode())
    assert read_nrc(path).items.tolist() == ["a", "b", "c", "d", "e"]


CALLS = [  # (call, error class, words)
    (lambda: bws_counting_scores([], [], []), DataValidationError, "no annotations"),
    (lambda: split_half_bws([], [], []), DataValidationError, "no annotations"),
    (lambda: split_half_ratings([], []), DataValidationError, "no ratings"),
    (lambda: split_half_ratings(["a", "a", "b"], [1, 2]), ValueError, "3 items, 2 ratings"),
    (lambda: split_half_ratings(["a", "a"], [1, 2], annotators=["x"]), ValueError, "1 annotators"),
    (lambda: split_half_ratings(["a", "a", "b", "b"], [3, 3, 3, 3], trials=5), DataValidationError,
     "undefined in every trial"),
    (lambda: split_half_ratings(["a", "a", "a"], [1, 2, 3], trials=5), DataValidationError,
     "1 item\\(s\\)"),
    (lambda: split_half_ratings(["a", "a"], [1, 2], on_invalid="skip"), ValueError, "'raise' or 'omit'"),
    (lambda: annotator_agreement(["a", None, "b", "b"], ["x", "y", "x", "y"], [1, 2, 3, 4]), ValueError,
     r"items\[1\] is empty \(None\)"),
    (lambda: annotator_agreement(["a", "a"], ["x", None], [1, 2]), ValueError, r"annotators\[1\] is empty"),
    (lambda: dice_correlation(["a b", "c", "d e"], ["a", "c d", "e"], [0.1, float("nan"), 0.3]), ValueError,
     r"references\[1\] is nan"),
    (lambda: dice_correlation(["a b", "c", "d e"], ["a", "c d", "e"], [0.1, 0.2, float("inf")]), ValueError,
     r"references\[2\] is inf"),
]


@pytest.mark.parametrize("call, error, words", CALLS)
def test_bad_calls(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_shr_ratings_keep_float64_precision_above_2_to_the_24():
    rng = np.random.default_rng(0)
    items = np.repeat(np.arange(200), 4)
    ratings = rng.integers(0, 5, size=items.size) + items // 40  # integer ratings, real signal
    small = split_half_ratings(items, ratings, trials=50)
    large = split_half_ratings(items, ratings + 2**25, trials=50)  # a shift leaves correlations alone
    assert large.pearson == pytest.approx(small.pearson, abs=1e-9)
    assert large.spearman == pytest.approx(small.spearman, abs=1e-9)


def test_shr_float_ratings_equal_scaled_integer_ratings():
    rng = np.random.default_rng(1)
    items = np.repeat(np.arange(100), 4)
    ratings = rng.integers(0, 5, size=items.size) + items // 25
    ints = split_half_ratings(items, ratings, trials=30)
    floats = split_half_ratings(items, ratings / 4.0, trials=30)
    assert floats.pearson == pytest.approx(ints.pearson, abs=1e-9)
    assert floats.spearman == pytest.approx(ints.spearman, abs=1e-9)


def test_shr_some_undefined_trials_warn_with_the_count():
    # two items rated 1 and 2: a trial whose half A gives both the same rating is undefined
    with pytest.warns(RuntimeWarning, match=r"undefined in \d+ of 40 trials"):
        r = split_half_ratings(["a", "a", "b", "b"], [1, 2, 1, 2], trials=40)
    assert np.isfinite(r.spearman)


def test_default_seed_is_fixed_and_none_only_when_asked():
    t = [["a", "b", "c", "d"]] * 4 + [["a", "b", "c", "e"]] * 4
    b, w = ["a"] * 8, ["d", "c", "d", "d", "e", "e", "c", "e"]
    assert split_half_bws(t, b, w, trials=20).spearman == split_half_bws(t, b, w, trials=20).spearman
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        draws = {split_half_bws(t, b, w, trials=3, seed=None).spearman for _ in range(8)}
    assert len(draws) > 1


@pytest.mark.parametrize("items, annotators, words", [
    (["a", "a", "b"], ["x", "y", "x"], "item 'b' has 1 annotator"),
    (["a", None, "b", "b"], ["x", "y", "x", "y"], r"items\[1\] is empty"),
    ([1, 1, 2], [1, 2, 1], "item 2 has 1 annotator"),
])
def test_annotator_agreement_errors_through_evaluate(items, annotators, words, erroring_module):
    module = erroring_module("annotator_agreement")
    with pytest.raises(ValueError, match=words):
        module.compute(items=items, annotators=annotators, ratings=list(range(len(items))))
