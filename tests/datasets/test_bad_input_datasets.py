"""Bad user input to the dataset builders: one table of inputs -> the error class and
words, or the correct result; the cache cases with real files edited between loads.

c-sts reads user CSVs or the encrypted release, czech-news-sts user TSVs; crowd-sts reads only
checksummed upstream files, so its reader is tried directly.
"""

from __future__ import annotations

import codecs
import csv
import io
import subprocess
import sys

import pytest
from test_c_sts import HEADER, PASSWORD, ROWS, encrypt_with_openssl, write_csvs

from project import FIXTURES, REPO
from semrel.dataset_scripts import builder, load
from semrel.dataset_scripts.crowd_sts.reading import read_annotation_file
from semrel.dataset_scripts.errors import DataValidationError

CZECH_TRAIN = (FIXTURES / "czech-news-sts" / "user" / "train-raw.tsv").read_bytes()
CROWD = FIXTURES / "crowd-sts" / "toy" / "Toy_human.csv"
BIG = "x" * (200 * 1024)  # over csv's default field limit of 128 KiB
ARABIC_3 = "\u0663"  # '٣': float('٣') == 3.0 in Python
DVE = DataValidationError


def _train_csv(extra: str = "", header: str = HEADER) -> bytes:
    return (header + ROWS["train"] + extra).encode("utf-8")


def _row0(column, value):
    return lambda ds: ds["train"][0][column] == value


# (id, bytes of csts_train.csv, (error class, regex) or a check of the loaded DatasetDict)
CSTS_CASES = [
    ("latin-1 file", _train_csv("Café.,Tea.,The drink,2\n").decode().encode("latin-1"),
     (DVE, r"csts_train\.csv: not UTF-8 text: save the file as UTF-8 \(line 6")),
    ("utf-16 file", _train_csv().decode().encode("utf-16"),
     (DVE, r"csts_train\.csv: not UTF-8 text.*UTF-16 byte-order mark")),
    ("cell over 128 KiB", _train_csv(f"{BIG},A cat.,The animal,2\n"),
     (DVE, r"csts_train\.csv: row 5: a cell longer than 131072 characters")),
    ("BOM at file start", codecs.BOM_UTF8 + _train_csv(),
     _row0("sentence1", "A man rides a red bike.")),
    ("arabic-indic digit label", _train_csv(f"A dog.,A cat.,The animal,{ARABIC_3}\n"),
     (DVE, r"csts_train\.csv: row 5: label must be a number \(ASCII digits")),
    ("nan label", _train_csv("A dog.,A cat.,The animal,nan\n"),
     (DVE, r"row 5: label must be a number")),
    ("inf label", _train_csv("A dog.,A cat.,The animal,inf\n"), (DVE, r"row 5: label must be a number")),
    ("underscore label", _train_csv("A dog.,A cat.,The animal,1_0\n"),
     (DVE, r"row 5: label must be a number")),
    ("label with text", _train_csv("A dog.,A cat.,The animal,4 stars\n"),
     (DVE, r"row 5: label must be a number")),
    ("extra field", _train_csv("A dog.,A cat.,The animal,2,oops\n"),
     (DVE, r"row 5: wrong field count: the header has 4 fields \(row has 5\)")),
    ("missing field", _train_csv("A dog.,A cat.,2\n"),
     (DVE, r"row 5: wrong field count: the header has 4 fields \(row has 3\)")),
    ("empty file", b"", (DVE, r"csts_train\.csv: empty file")),
    ("header only", HEADER.encode(), (DVE, r"csts_train\.csv: no data rows")),
    ("column twice", _train_csv(header="sentence1,sentence2,condition,label,label\n"),
     (DVE, r"a column name appears twice in the header \('label'\)")),
    ("unterminated quote", _train_csv('"A dog.,A cat.,The animal,2\n'),
     (DVE, r"csts_train\.csv: row 5: not valid CSV")),
]


@pytest.mark.parametrize("data, expected", [c[1:] for c in CSTS_CASES],
                         ids=[c[0] for c in CSTS_CASES])
def test_csts_csv_input(tmp_path, data, expected):
    folder = write_csvs(tmp_path / "plain")
    (folder / "csts_train.csv").write_bytes(data)
    if isinstance(expected, tuple):
        with pytest.raises(expected[0], match=expected[1]):
            load("c-sts", data_dir=folder, cache_dir=tmp_path / "cache")
    else:
        assert expected(load("c-sts", data_dir=folder, cache_dir=tmp_path / "cache"))


def test_csts_duplicate_tar_member_is_an_error(tmp_path):
    plain = write_csvs(tmp_path / "plain")
    enc = encrypt_with_openssl(plain, tmp_path / "enc", extra_members=[
        ("./csts_train.csv", _train_csv("A dog.,A cat.,The animal,2\n"))])
    with pytest.raises(DVE, match=r"csts\.tar\.enc: the archive holds csts_train\.csv twice"):
        load("c-sts", data_dir=enc, password=PASSWORD, cache_dir=tmp_path / "cache")


# (id, bytes of train-raw.tsv, expected) for czech-news-sts
CZECH_CASES = [
    ("BOM at file start", codecs.BOM_UTF8 + CZECH_TRAIN,
     _row0("sentence1", "Vláda dnes schválila návrh rozpočtu na příští rok.")),
    ("arabic-indic digit score", CZECH_TRAIN + f"A.\tB.\t{ARABIC_3}\n".encode(),
     (DVE, r"train-raw\.tsv: row 7: R1 score must be an integer \(ASCII digits\)")),
    ("windows-1250 row", CZECH_TRAIN + "Kočka.\tPes.\t3\n".encode("cp1250"),
     (DVE, r"train-raw\.tsv: row 7: not valid UTF-8")),
    ("extra field", CZECH_TRAIN + b"A.\tB.\t3\tx\n", (DVE, r"row 7: wrong field count")),
    ("cell over 128 KiB", CZECH_TRAIN + f"{BIG}\tB.\t3\n".encode(),
     lambda ds: ds["train"][6]["sentence1"] == BIG),  # no quoting, no field limit: read as is
    ("empty file", b"", (DVE, r"train-raw\.tsv: empty file")),
]


@pytest.mark.parametrize("data, expected", [c[1:] for c in CZECH_CASES],
                         ids=[c[0] for c in CZECH_CASES])
def test_czech_user_file_input(tmp_path, upstream, data, expected):
    (tmp_path / "train-raw.tsv").write_bytes(data)
    kwargs = dict(mirror=upstream, data_dir=tmp_path, cache_dir=tmp_path / "cache")
    if isinstance(expected, tuple):
        with pytest.raises(expected[0], match=expected[1]):
            load("czech-news-sts", "train-raw", **kwargs)
    else:
        assert expected(load("czech-news-sts", "train-raw", **kwargs))


def test_czech_mean_in_other_digits_and_nothing_valid_under_omit(tmp_path, upstream):
    from semrel.dataset_scripts.czech_news_sts.formats import read_dep

    path = tmp_path / "dep-test.tsv"
    path.write_text(f"<sent>A.</sent>\tB.\t{ARABIC_3}\t3,3\t3\n", encoding="utf-8")
    with pytest.raises(DVE, match=r"row 1: mean score must be a number \(ASCII digits"):
        read_dep(path)
    (tmp_path / "train-raw.tsv").write_text("A.\tB.\t9\nA.\tB.\tx\n", encoding="utf-8")
    with pytest.raises(DVE, match=r"train-raw\.tsv: no valid rows \(2 invalid rows omitted\)"):
        load("czech-news-sts", "train-raw", mirror=upstream, data_dir=tmp_path,
             cache_dir=tmp_path / "cache", on_invalid="omit")


def test_czech_sig_without_a_significant_pair_is_an_error(tmp_path, upstream):
    s1, s2, mean, annotations, r1 = ((upstream / "czech-news-sts" / "free-test.tsv").read_bytes()
                                     .split(b"\r\n")[0].decode("utf-8").split("\t"))
    (tmp_path / "dep-test.tsv").write_text(  # the free annotations again: no shift at all
        f"<sent>{s1}</sent>\t{s2}\t{mean}\t{annotations}\t{r1}\n", encoding="utf-8")
    with pytest.raises(DVE, match=r"dep-test\.tsv: sig: no pair's context-free and "
                                  r"context-dependent means differ at the 0\.95 level"):
        load("czech-news-sts", "sig", mirror=upstream, data_dir=tmp_path,
             cache_dir=tmp_path / "cache")


def test_tilde_in_data_dir_is_expanded(tmp_path, upstream, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "czech").mkdir()
    (tmp_path / "czech" / "train-raw.tsv").write_bytes(CZECH_TRAIN)
    train = load("czech-news-sts", "train-raw", mirror=upstream, data_dir="~/czech",
                 cache_dir=tmp_path / "cache")["train"]
    assert train.num_rows == 6
    with pytest.raises(FileNotFoundError, match=f"put it at {tmp_path}/elsewhere/train-n1.tsv"):
        load("czech-news-sts", "train-n1", data_dir="~/elsewhere", cache_dir=tmp_path / "cache")
    write_csvs(tmp_path / "csts")
    assert load("c-sts", data_dir="~/csts", cache_dir=tmp_path / "cache")["train"].num_rows == 4


def _crowd_rows():
    with open(CROWD, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def _crowd_file(rows=None, *, prefix=b"") -> bytes:
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerows(rows if rows is not None else _crowd_rows())
    return prefix + out.getvalue().encode("utf-8")


def _crowd_set(row, column, value):
    rows = _crowd_rows()
    rows[row][rows[0].index(column)] = value
    return rows


CROWD_CASES = [
    ("latin-1 cell", _crowd_file(_crowd_set(2, "Input.text1", "Café crème")).replace(
        "Café".encode(), "Café".encode("latin-1")),
     (DVE, r"Toy_human\.csv: not UTF-8 text: save the file as UTF-8 \(line 3")),
    ("BOM at file start", _crowd_file([r[1:] for r in _crowd_rows()], prefix=codecs.BOM_UTF8),
     lambda df: len(df) == 8 and df["pair_id"].iat[0] == "TOYHITA"),
    ("arabic-indic digit seconds", _crowd_file(_crowd_set(2, "WorkTimeInSeconds", ARABIC_3)),
     (DVE, r"row 2: WorkTimeInSeconds must be a non-negative integer")),
    ("arabic-indic digit label", _crowd_file(_crowd_set(2, "Answer.semantic-similarity.label",
                                                        ARABIC_3)),
     (DVE, r"row 2: unparseable label")),
    ("extra field", _crowd_file(_crowd_rows() + [_crowd_rows()[1] + ["extra"]]),
     (DVE, r"row 9: wrong field count")),
    ("short row", _crowd_file(_crowd_rows() + [_crowd_rows()[1][:-2]]),
     (DVE, r"row 9: wrong field count")),
    ("cell over 128 KiB", _crowd_file(_crowd_set(2, "Input.text1", BIG)),
     (DVE, r"row 2: a cell longer than 131072 characters")),
    ("header only", _crowd_file(_crowd_rows()[:1]), (DVE, r"Toy_human\.csv: no data rows")),
    ("empty file", b"", (DVE, r"Toy_human\.csv: empty file")),
]


@pytest.mark.parametrize("data, expected", [c[1:] for c in CROWD_CASES],
                         ids=[c[0] for c in CROWD_CASES])
def test_crowd_reader_input(tmp_path, data, expected):
    path = tmp_path / "Toy_human.csv"
    path.write_bytes(data)
    if isinstance(expected, tuple):
        with pytest.raises(expected[0], match=expected[1]):
            read_annotation_file(path)
    else:
        assert expected(read_annotation_file(path))


# --- the cache is keyed on the user's files and the password's effect ---------------------------

def test_csts_csv_edited_emptied_and_fixed_between_loads(tmp_path):
    folder, cache = write_csvs(tmp_path / "plain"), tmp_path / "cache"
    train = folder / "csts_train.csv"
    assert load("c-sts", data_dir=folder, cache_dir=cache)["train"][0]["score"] == 1.0
    train.write_text(HEADER + ROWS["train"].replace("bike,1.0", "bike,2.0"), encoding="utf-8")
    assert load("c-sts", data_dir=folder, cache_dir=cache)["train"][0]["score"] == 2.0  # edited
    train.write_text(HEADER, encoding="utf-8")
    with pytest.raises(DVE, match=r"csts_train\.csv: no data rows"):  # header only
        load("c-sts", data_dir=folder, cache_dir=cache)
    train.write_bytes(b"")
    with pytest.raises(DVE, match=r"csts_train\.csv: empty file"):
        load("c-sts", data_dir=folder, cache_dir=cache)
    train.write_text(HEADER + ROWS["train"], encoding="utf-8")  # fixed: read again
    assert load("c-sts", data_dir=folder, cache_dir=cache)["train"][0]["score"] == 1.0


def test_csts_wrong_or_missing_password_is_always_an_error(tmp_path, monkeypatch):
    monkeypatch.delenv("CSTS_PASSWORD", raising=False)
    enc, cache = encrypt_with_openssl(write_csvs(tmp_path / "plain"), tmp_path / "enc"), tmp_path / "c"
    assert load("c-sts", data_dir=enc, password=PASSWORD, cache_dir=cache)["train"].num_rows == 4
    for _ in range(2):
        with pytest.raises(DVE, match=r"csts\.tar\.enc: wrong password"):
            load("c-sts", data_dir=enc, password="wrong", cache_dir=cache)
        with pytest.raises(DVE, match=r"csts\.tar\.enc: a password is needed"):
            load("c-sts", data_dir=enc, cache_dir=cache)
    assert load("c-sts", data_dir=enc, password=PASSWORD, cache_dir=cache)["train"].num_rows == 4
    secret = PASSWORD.encode()
    assert not any(secret in p.read_bytes() or PASSWORD in str(p) for p in cache.rglob("*")
                   if p.is_file())  # the cache key holds a fingerprint, never the password


def test_csts_archive_reencrypted_with_edited_rows_is_read_again(tmp_path):
    plain, cache = write_csvs(tmp_path / "plain"), tmp_path / "cache"
    enc = encrypt_with_openssl(plain, tmp_path / "enc")
    assert load("c-sts", data_dir=enc, password=PASSWORD, cache_dir=cache)["train"].num_rows == 4
    (plain / "csts_train.csv").write_bytes(_train_csv("A dog.,A cat.,The animal,2\n"))
    encrypt_with_openssl(plain, tmp_path / "enc")
    assert load("c-sts", data_dir=enc, password=PASSWORD, cache_dir=cache)["train"].num_rows == 5


def test_czech_file_edited_emptied_and_fixed_between_loads(tmp_path, upstream):
    path, cache = tmp_path / "train-raw.tsv", tmp_path / "cache"

    def rows():
        return load("czech-news-sts", "train-raw", mirror=upstream, data_dir=tmp_path,
                    cache_dir=cache)["train"].num_rows

    path.write_bytes(CZECH_TRAIN)
    assert rows() == 6
    path.write_bytes(CZECH_TRAIN + b"A.\tB.\t3\n")
    assert rows() == 7
    path.write_bytes(b"")
    with pytest.raises(DVE, match=r"train-raw\.tsv: empty file"):
        rows()
    path.write_bytes(CZECH_TRAIN)
    assert rows() == 6


def test_omitted_counts_are_warned_on_cached_loads(tmp_path, upstream):
    (tmp_path / "train-raw.tsv").write_bytes(CZECH_TRAIN + b"A.\tB.\t9\n")
    for _ in range(2):  # built, then from the cache
        with pytest.warns(UserWarning, match=r"train-raw\.tsv: omitted 1 invalid rows"):
            load("czech-news-sts", "train-raw", mirror=upstream, data_dir=tmp_path,
                 cache_dir=tmp_path / "cache", on_invalid="omit")


def test_file_changed_during_the_build_is_refused(tmp_path):
    folder = write_csvs(tmp_path / "plain")
    b = builder("c-sts", data_dir=folder, cache_dir=tmp_path / "cache")  # fingerprints the files
    (folder / "csts_test.csv").write_text(HEADER + ROWS["test"] * 2, encoding="utf-8")
    with pytest.raises(DVE, match=r"csts_test\.csv: the file changed while the dataset was being"):
        b.download_and_prepare()


def test_crowd_sentiment_model_folder_is_part_of_the_cache_key(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}", encoding="utf-8")

    def cache_dir():
        return builder("crowd-sts", "annotators", sentiment_model=str(model),
                       cache_dir=tmp_path / "cache").cache_dir

    first = cache_dir()
    assert cache_dir() == first
    (model / "config.json").write_text('{"edited": true}', encoding="utf-8")
    assert cache_dir() != first


# --- concurrent builds into one cache ----------------------------------------------------------

@pytest.mark.slow  # two interpreters building a config
def test_two_processes_build_one_config_into_one_cache(tmp_path, mirror):
    code = ("import sys; from semrel.dataset_scripts import load; "
            "print(load('str-2021', 'cv-fold-1', mirror=sys.argv[1], cache_dir=sys.argv[2])"
            "['test'].num_rows)")
    env_root = str(REPO)
    procs = [subprocess.Popen([sys.executable, "-c", code, str(mirror), str(tmp_path / "cache")],
                              cwd=env_root, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-2000:] for _, err in outs]
    assert [out.split()[-1] for out, _ in outs] == ["1100", "1100"]
