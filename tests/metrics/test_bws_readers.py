"""BWS annotation files: the NRC layout (fixtures) and the real SemEval-2024 files (mirror)."""

import csv

import numpy as np
import pytest

from semrel.metrics.bws.counting import bws_counting_scores
from semrel.metrics.bws.readers import JUNK, UNREADABLE, read_nrc, read_semeval_2024
from semrel.metrics.errors import DataValidationError


@pytest.fixture
def semeval(mirror):
    return mirror / "semrel-2024" / "BWS_annotations"


NRC = """Item1,Item2,Item3,Item4,BestItem,WorstItem,WorkerId
happy,sad,calm,angry,happy,sad,w1
happy,sad,calm,angry,calm,angry,w2
joy,sad,fear,calm,joy,fear,w1
"""


def test_nrc_layout(tmp_path):
    path = tmp_path / "annotations.csv"
    path.write_text(NRC)
    r = bws_counting_scores(read_nrc(path))
    assert r.items.tolist() == ["angry", "calm", "fear", "happy", "joy", "sad"]
    assert r.score.tolist() == [-1 / 2, 1 / 3, -1.0, 1 / 2, 1.0, -1 / 3]


def test_nrc_bad_row_names_file_and_row(tmp_path):
    path = tmp_path / "annotations.csv"
    path.write_text(NRC + "joy,sad,fear,calm,happy,fear,w3\njoy,sad,fear,,joy,sad,w3\n")
    with pytest.raises(DataValidationError) as err:
        read_nrc(path)
    assert (err.value.file, err.value.row, err.value.rule) == (str(path), 4, "best is not an item of the tuple")
    ann = read_nrc(path, on_invalid="omit")
    assert ann.skipped == {"best is not an item of the tuple": 1, "empty cell": 1}
    assert ann.skipped_rows.tolist() == [4, 5] and len(ann.best) == 3


def test_semeval_layout_other_header_quotes_and_junk(tmp_path):
    path = tmp_path / "bws.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([
            ["pair_1", "pair_2", "pair_3", "pair_4", "Most_Related", "Least_Related"],
            ["[\"It's  one\", 'a, b']$", "['c', 'd']", "['e', 'f']", "['g', 'h'].", 1, 4],
            ["[\"It's one\", 'a, b']", "['c', 'd']", "['e', 'f']", "['g', 'h']", 2, 1],
        ])
    ann = read_semeval_2024(path)
    assert ann.items.tolist() == ["It's one\na, b", "c\nd", "e\nf", "g\nh"]  # whitespace normalised
    assert ann.repaired == {JUNK: 2} and ann.n_skipped == 0
    assert bws_counting_scores(ann).score.tolist() == [0.0, 0.5, 0.0, -0.5]


def test_semeval_layout_needs_item_columns(tmp_path):
    path = tmp_path / "bws.csv"
    path.write_text("pair_1,Most_Related,Least_Related\n\"['a', 'b']\",1,1\n")
    with pytest.raises(DataValidationError, match="missing columns"):
        read_semeval_2024(path)


def test_nrc_custom_and_missing_columns(tmp_path):
    path = tmp_path / "annotations.csv"
    path.write_text(NRC.replace("BestItem", "Most").replace("WorstItem", "Least"))
    with pytest.raises(DataValidationError, match="missing columns"):
        read_nrc(path)
    ann = read_nrc(path, item_columns=["Item1", "Item2", "Item3", "Item4"], best_column="Most", worst_column="Least")
    assert len(ann.best) == 3


def test_semeval_unreadable_rows_are_errors_naming_them(semeval):
    with pytest.raises(DataValidationError) as err:
        read_semeval_2024(semeval / "arq_bws.csv")
    assert (err.value.row, err.value.rule) == (2032, UNREADABLE)
    assert "'SentPair3'" in str(err.value) and "also rows [5231]" in str(err.value)  # a repeated header line
    with pytest.raises(DataValidationError) as err:
        read_semeval_2024(semeval / "arb_bws.csv")
    assert (err.value.row, err.value.rule) == (426, UNREADABLE) and "'Item1'" in str(err.value)


def test_semeval_skip_counts_the_three_unreadable_rows(semeval):
    arq = read_semeval_2024(semeval / "arq_bws.csv", on_invalid="omit")
    arb = read_semeval_2024(semeval / "arb_bws.csv", on_invalid="omit")
    assert arq.skipped == {UNREADABLE: 2} and arq.skipped_rows.tolist() == [2032, 5231]
    assert arb.skipped == {UNREADABLE: 1} and arb.skipped_rows.tolist() == [426]
    assert (len(arq.best), len(arb.best)) == (7360 - 2, 2711 - 1)
    assert arq.repaired == {JUNK: 16} and arb.repaired == {JUNK: 36}  # stray '.', '$', '+' after ']'


def test_semeval_items_are_normalised_sentence_pairs(semeval):
    ann = read_semeval_2024(semeval / "arb_bws.csv", on_invalid="omit")
    assert all(item.count("\n") == 1 and "  " not in item and item == item.strip() for item in ann.items)
    assert len(ann.items) == len(set(ann.items)) == 1800
    first = ann.items[ann.tuples[0]].tolist()  # row 1, as written in the file
    assert first[0] == "بعض الناس ينجرفون\nآخرون كسالى ويرتكبون اخطاء"
    assert ann.items[ann.best[0]] == first[0] and ann.items[ann.worst[0]] == first[1]  # Best=1, Worst=2


def test_semeval_scores_equal_reference_counting(semeval):
    ann = read_semeval_2024(semeval / "arq_bws.csv", on_invalid="omit")
    r = bws_counting_scores(ann)
    seen, net = {}, {}
    for row, b, w in zip(ann.items[ann.tuples].tolist(), ann.items[ann.best], ann.items[ann.worst], strict=True):
        for item in row:
            seen[item] = seen.get(item, 0) + 1
        net[b], net[w] = net.get(b, 0) + 1, net.get(w, 0) - 1
    assert r.score.tolist() == [net.get(i, 0) / seen[i] for i in r.items]
    assert r.appearances.sum() == 4 * 7358 and np.all((r.score_01 >= 0) & (r.score_01 <= 1))
