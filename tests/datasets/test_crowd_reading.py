"""crowd-sts parsing on small fixtures: grouping by HITId, pseudonyms, text repair, bad input."""

import csv
import hashlib
import hmac

import pytest

from project import FIXTURES as ALL_FIXTURES
from semrel.dataset_scripts.crowd_sts.reading import (
    DEFAULT_KEY,
    KEY_ENV,
    file_source,
    pseudonymise,
    read_annotation_file,
    read_annotations,
    read_worker_list,
)
from semrel.dataset_scripts.errors import DataValidationError

FIXTURES = ALL_FIXTURES / "crowd-sts" / "toy"
RAW_IDS = {"AFAKEWORKER1", "AFAKEWORKER2", "AFAKEWORKER3"}


def _paths(directory=FIXTURES):
    return {p.name: p for p in sorted(directory.glob("*.csv"))}


def _rows(name="Toy_human.csv"):
    with open(FIXTURES / name, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def _write(tmp_path, rows, name="Toy_human.csv"):
    path = tmp_path / name
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f, lineterminator="\r\n").writerows(rows)
    return path


def test_groups_by_hit_not_row_position():
    df = read_annotations(_paths())
    assert len(df) == 11 and df["pair_id"].nunique() == 4
    sizes = df.groupby("pair_id").size().to_dict()
    assert sizes == {"TOYHITA": 3, "TOYHITB": 2, "TOYHITC": 3, "TOYHITR": 3}  # rows interleaved
    a = df[df["pair_id"] == "TOYHITA"].sort_values("seconds")
    assert a["label"].tolist() == [4, 5, 1] and a["seconds"].tolist() == [8, 12, 350]
    assert str(df["label"].dtype) == "int8"


def test_source_and_random_flag_from_file_name():
    assert file_source("Yelp_Random_human.csv") == ("Yelp", True)
    assert file_source("GYAFC_formal_random_human.csv") == ("GYAFC_formal", True)
    assert file_source("Paralex_human.csv") == ("Paralex", False)
    df = read_annotations(_paths())
    assert set(df.loc[df["pair_id"] == "TOYHITR", "is_random"]) == {True}
    assert set(df.loc[df["pair_id"] != "TOYHITR", "is_random"]) == {False}
    assert set(df["source"]) == {"Toy"}


def test_worker_ids_are_keyed_pseudonyms_and_raw_ids_vanish():
    df = read_annotations(_paths())
    expected = "w" + hmac.new(DEFAULT_KEY.encode(), b"AFAKEWORKER1", hashlib.sha256).hexdigest()[:12]
    assert expected in set(df["worker_id"]) and df["worker_id"].nunique() == 3
    text = df.to_csv()
    assert not any(raw in text for raw in RAW_IDS)
    other = read_annotations(_paths(), key="a private key")
    assert not set(other["worker_id"]) & set(df["worker_id"])


def test_key_comes_from_environment(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "from the environment")
    assert pseudonymise(["AFAKEWORKER1"]) == pseudonymise(["AFAKEWORKER1"], "from the environment")
    assert pseudonymise(["AFAKEWORKER1"]) != pseudonymise(["AFAKEWORKER1"], DEFAULT_KEY)


def test_mojibake_repaired_and_raw_text_kept():
    df = read_annotations(_paths())
    c = df[df["pair_id"] == "TOYHITC"].iloc[0]
    assert c["sentence1_raw"] == "вЂ”therefore , hear the word ."
    assert c["sentence1"] == "—therefore , hear the word ."
    a = df[df["pair_id"] == "TOYHITA"].iloc[0]
    assert a["sentence1"] == a["sentence1_raw"] == "The cat sat on the mat ."


def test_worker_list_is_pseudonymised(tmp_path):
    path = tmp_path / "list.txt"
    path.write_text("AFAKEWORKER1\nAFAKEWORKER9\n")
    assert read_worker_list(path) == frozenset(pseudonymise(["AFAKEWORKER1", "AFAKEWORKER9"]))
    path.write_text("AFAKEWORKER1\n\nAFAKEWORKER9\n")
    with pytest.raises(DataValidationError, match="row 2: empty line"):
        read_worker_list(path)


# ---- bad input: each rule on a copy of the fixture with one cell broken ----

def _broken(tmp_path, row, column, value):
    rows = _rows()
    rows[row][rows[0].index(column)] = value
    return _write(tmp_path, rows)


def test_missing_column(tmp_path):
    rows = [[c for i, c in enumerate(r) if i != 9] for r in _rows()]  # drop WorkerId
    with pytest.raises(DataValidationError, match="missing column.*WorkerId") as err:
        read_annotation_file(_write(tmp_path, rows))
    assert err.value.row is None and err.value.file.endswith("Toy_human.csv")


@pytest.mark.parametrize("value", ["6", "", "Highly Similar", "5 Highly Similar", "3.0"])
def test_unparseable_label(tmp_path, value):
    path = _broken(tmp_path, 4, "Answer.semantic-similarity.label", value)
    with pytest.raises(DataValidationError, match="row 4: unparseable label") as err:
        read_annotation_file(path)
    assert err.value.file == str(path) and "TOYHITB" in str(err.value)


def test_missing_worker_id(tmp_path):
    with pytest.raises(DataValidationError, match="row 3: missing WorkerId"):
        read_annotation_file(_broken(tmp_path, 3, "WorkerId", " "))


def test_hit_texts_differ_between_assignments(tmp_path):
    path = _broken(tmp_path, 5, "Input.text2", "A dog was sitting on the mat .")
    with pytest.raises(DataValidationError,
                       match=r"row 5: HIT texts differ between assignments \(Input.text2\)") as err:
        read_annotation_file(path)
    assert "TOYHITA" in str(err.value) and "at row 1" in str(err.value)


def test_bad_seconds_and_empty_text(tmp_path):
    with pytest.raises(DataValidationError, match="row 2: WorkTimeInSeconds"):
        read_annotation_file(_broken(tmp_path, 2, "WorkTimeInSeconds", "12.5"))
    rows = _rows()
    for r in rows[1:]:
        if r[1] == "TOYHITB":
            r[rows[0].index("Input.text1")] = ""
    with pytest.raises(DataValidationError, match="row 2: empty Input.text1"):
        read_annotation_file(_write(tmp_path, rows))


def test_worker_twice_on_a_hit(tmp_path):
    with pytest.raises(DataValidationError, match="row 3: a worker labelled the same HIT twice"):
        read_annotation_file(_broken(tmp_path, 3, "WorkerId", "AFAKEWORKER1"))


def test_hit_in_two_files(tmp_path):
    _write(tmp_path, _rows())
    rows = _rows("Toy_Random_human.csv")
    for r in rows[1:]:
        r[1] = "TOYHITA"
        r[rows[0].index("Input.text1")], r[rows[0].index("Input.text2")] = (
            "The cat sat on the mat .", "A cat was sitting on the mat .")
    _write(tmp_path, rows, "Toy_Random_human.csv")
    with pytest.raises(DataValidationError, match="row 1: HIT appears in two files"):
        read_annotations(_paths(tmp_path))
