"""The c-sts open re-annotation (dataset.zip of LivNLP/CSTS-reannotation) from the mirror: its
rows, labels and invalid split, the zip's spellings, line ends and members, checksums, and the
export that stock load_dataset reads; it needs no password and no user files."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import warnings
import zipfile
from collections import Counter

import pytest

from project import fixture_copy, needs_mirror
from semrel.dataset_scripts import load
from semrel.dataset_scripts.errors import DataValidationError, SourceError

TRAIN_HEADER = "sentence1,sentence2,condition,label\n"
TRAIN_ROWS = ("A dog runs.,A cat sleeps.,number of animals,1.0\n"
              "A dog runs.,A cat sleeps.,type of animal,4.0\n")
VALIDATION_ROWS = ("Snow falls.,Rain falls.,type of weather,4\r\n"
                   "Snow falls.,Rain falls.,the city,-1\r\n"
                   "Two men swim.,A man dives.,the activity,5\r\n"
                   "Two men swim.,A man dives.,number of people,1\r\n")


VALIDATION = TRAIN_HEADER.replace("\n", "\r\n") + VALIDATION_ROWS


def reannotation_zip(train=TRAIN_HEADER + TRAIN_ROWS, validation=VALIDATION, *, macosx=True,
                     extra=()) -> bytes:
    """A dataset.zip laid out as the release: ``dataset/`` with the two CSVs (validation CRLF),
    their macOS resource forks under ``__MACOSX/``, and ``extra`` (name, bytes) members."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive, warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # zipfile's "Duplicate name" for a member held twice
        archive.writestr("dataset/", b"")
        for name, text in (("csts_train_reannotated.csv", train),
                           ("csts_validation_reannotated.csv", validation)):
            archive.writestr(f"dataset/{name}", text.encode("utf-8"))
            if macosx:
                archive.writestr(f"__MACOSX/dataset/._{name}", b"\x00\x05\x16\x07Mac OS X        ")
        for name, data in extra:
            archive.writestr(name, data)
    return buffer.getvalue()


def load_zip(tmp_path, monkeypatch, config="reannotated", **zip_args):
    """``config`` built from a fixture mirror whose dataset.zip is :func:`reannotation_zip`."""
    mirror = fixture_copy(tmp_path / "mirror", "c-sts", monkeypatch,
                          {"dataset.zip": reannotation_zip(**zip_args)})
    return load("c-sts", config, mirror=mirror, cache_dir=tmp_path / "cache")


def test_reannotated_fixture_rows_labels_and_invalid_split(fixture_mirror, cache_dir):
    ds = load("c-sts", "reannotated", mirror=fixture_mirror, cache_dir=cache_dir)
    assert {s: len(d) for s, d in ds.items()} == {"train": 12, "validation": 6, "validation_invalid": 2}
    assert ds["train"].features == ds["validation"].features and ds["train"].features["score"].dtype == "float32"
    assert ds["train"]["score"][:4] == [1.0, 5.0, 3.0, 3.0]  # written 1.0, 5.0, ...
    assert ds["validation"]["score"] == [2.0, 3.0, 1.0, 5.0, 2.0, 1.0]  # written 2, 3, ... (CRLF)
    assert ds["validation"]["condition"][:2] == ["the dish", "the furniture"]  # no \r kept
    assert ds["validation_invalid"].to_list() == [
        {"sentence1": "A skier jumps off a ramp in the mountains.",
         "sentence2": "A snowboarder rides down a steep slope.", "condition": "the sport", "score": None},
        {"sentence1": "A skier jumps off a ramp in the mountains.",
         "sentence2": "A snowboarder rides down a steep slope.", "condition": "the setting", "score": None}]
    assert not any("\r" in text for split in ds.values() for column in ("sentence1", "sentence2", "condition")
                   for text in split[column])
    assert "zhang-etal-2025-annotating" in ds["train"].info.citation and "CC-BY-4.0" in ds["train"].info.license


def test_minus_one_on_one_condition_moves_the_pair_not_the_partner_row(tmp_path, monkeypatch):
    rows = load_zip(tmp_path, monkeypatch)
    assert rows["validation"]["score"] == [4.0, 5.0, 1.0]  # the -1 row's partner stays scored
    assert rows["validation_invalid"]["condition"] == ["the city"]
    pairs = load_zip(tmp_path / "pairs", monkeypatch, "reannotated-pairs")
    assert pairs["validation"].to_list() == [
        {"sentence1": "Two men swim.", "sentence2": "A man dives.", "condition1": "the activity",
         "score1": 5.0, "condition2": "number of people", "score2": 1.0}]
    assert pairs["validation_invalid"].to_list() == [
        {"sentence1": "Snow falls.", "sentence2": "Rain falls.", "condition1": "type of weather",
         "score1": 4.0, "condition2": "the city", "score2": None}]
    assert pairs["train"]["score1"] == [1.0] and pairs["train"]["score2"] == [4.0]


def test_integer_and_decimal_spellings_and_line_ends_read_alike(tmp_path, monkeypatch):
    train = TRAIN_HEADER + TRAIN_ROWS.replace("1.0", "1").replace("4.0", "4.00")
    validation = TRAIN_HEADER + VALIDATION_ROWS.replace("\r\n", "\n").replace(",4\n", ",4.0\n")
    changed = load_zip(tmp_path / "a", monkeypatch, train=train, validation=validation)
    released = load_zip(tmp_path / "b", monkeypatch)
    for split in released:
        assert changed[split].to_list() == released[split].to_list()


def test_macosx_forks_are_ignored_and_other_members_refused(tmp_path, monkeypatch):
    with_forks = load_zip(tmp_path / "a", monkeypatch)
    without = load_zip(tmp_path / "b", monkeypatch, macosx=False)
    assert {s: d.to_list() for s, d in with_forks.items()} == {s: d.to_list() for s, d in without.items()}
    with pytest.raises(DataValidationError, match=r"dataset\.zip: an unexpected member .*'dataset/README\.txt'"):
        load_zip(tmp_path / "c", monkeypatch, extra=[("dataset/README.txt", b"hello")])
    with pytest.raises(DataValidationError, match=r"dataset\.zip: the archive holds "
                                                  r"dataset/csts_train_reannotated\.csv twice"):
        load_zip(tmp_path / "d", monkeypatch, extra=[("dataset/csts_train_reannotated.csv", b"x")])


@pytest.mark.parametrize("where,row,rule", [
    ("train", "A bird sings.,A bird flies.,the action,-1\n", r"row 3: label must be in \[1, 5\] \('-1'\)"),
    ("validation", "A bird sings.,A bird flies.,the action,-2\r\n",
     r"row 5: label must be in \[1, 5\] or -1 \(invalid: the condition cannot be judged"),
    ("validation", "A bird sings.,A bird flies.,the action,5.5\r\n", r"row 5: label must be in \[1, 5\]"),
    ("train", "A bird sings.,A bird flies.,the action,four\n", r"row 3: label must be a number"),
])
def test_bad_labels_name_member_row_and_rule(tmp_path, monkeypatch, where, row, rule):
    files = {"train": TRAIN_HEADER + TRAIN_ROWS, "validation": VALIDATION}
    files[where] += row
    member = f"dataset/csts_{where}_reannotated.csv"
    with pytest.raises(DataValidationError, match=rf"dataset\.zip:{member}: {rule}"):
        load_zip(tmp_path, monkeypatch, **files)


def test_zip_without_a_member_or_not_a_zip_is_a_clear_error(tmp_path, monkeypatch):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("dataset/csts_train_reannotated.csv", TRAIN_HEADER + TRAIN_ROWS)
    mirror = fixture_copy(tmp_path / "a", "c-sts", monkeypatch, {"dataset.zip": buffer.getvalue()})
    with pytest.raises(DataValidationError, match=r"dataset\.zip: the archive lacks "
                                                  r"dataset/csts_validation_reannotated\.csv"):
        load("c-sts", "reannotated", mirror=mirror, cache_dir=tmp_path / "cache")
    mirror = fixture_copy(tmp_path / "b", "c-sts", monkeypatch, {"dataset.zip": b"PK not a zip"})
    with pytest.raises(DataValidationError, match=r"dataset\.zip: not a readable zip archive"):
        load("c-sts", "reannotated", mirror=mirror, cache_dir=tmp_path / "cache")


def test_a_changed_byte_is_a_checksum_error_with_a_warm_cache(upstream, tmp_path, monkeypatch):
    """Against the upstream sha256 (a mirror that is no fixture) and against a fixture's list."""
    data = bytearray((upstream / "c-sts" / "dataset.zip").read_bytes())
    data[len(data) // 2] ^= 0x01
    (tmp_path / "plain" / "c-sts").mkdir(parents=True)
    (tmp_path / "plain" / "c-sts" / "dataset.zip").write_bytes(bytes(data))
    with pytest.raises(SourceError, match=r"dataset\.zip of 'c-sts': sha256 mismatch .* expected "
                                          r"43656b1a2681cc12a80a421997dba2a52eec5b224312547580aac811be6c35cf"):
        load("c-sts", "reannotated", mirror=tmp_path / "plain", cache_dir=tmp_path / "cache")
    mirror = fixture_copy(tmp_path / "fixture", "c-sts", monkeypatch)
    assert len(load("c-sts", "reannotated", mirror=mirror, cache_dir=tmp_path / "cache")["train"]) == 12
    zipped = mirror / "c-sts" / "dataset.zip"
    data = bytearray(zipped.read_bytes())
    data[-1] ^= 0x01
    zipped.write_bytes(bytes(data))
    with pytest.raises(SourceError, match=r"sha256 mismatch .*\(test fixture"):
        load("c-sts", "reannotated", mirror=mirror, cache_dir=tmp_path / "cache")  # cached, checked again


def test_reannotated_configs_need_no_password_or_user_files(fixture_mirror, tmp_path, monkeypatch):
    monkeypatch.delenv("CSTS_PASSWORD", raising=False)
    assert len(load("c-sts", "reannotated-pairs", mirror=fixture_mirror,
                    cache_dir=tmp_path / "cache")["train"]) == 6
    with pytest.raises(FileNotFoundError, match="needs user-supplied data"):
        load("c-sts", "reannotated-original", mirror=fixture_mirror, cache_dir=tmp_path / "cache")


@needs_mirror
def test_real_reannotation_rows_labels_and_pairs(mirror, cache_dir):
    rows = load("c-sts", "reannotated", mirror=mirror, cache_dir=cache_dir)
    assert {s: len(d) for s, d in rows.items()} == {"train": 11342, "validation": 2620, "validation_invalid": 214}
    assert Counter(rows["train"]["score"]) == {1.0: 1115, 2.0: 1902, 3.0: 3790, 4.0: 2416, 5.0: 2119}
    assert Counter(rows["validation"]["score"]) == {1.0: 633, 2.0: 233, 3.0: 392, 4.0: 296, 5.0: 1066}
    assert set(rows["validation_invalid"]["score"]) == {None}
    pairs = load("c-sts", "reannotated-pairs", mirror=mirror, cache_dir=cache_dir)
    assert {s: len(d) for s, d in pairs.items()} == {"train": 5671, "validation": 1211, "validation_invalid": 206}
    train = pairs["train"]
    assert sum(a == b for a, b in zip(train["score1"], train["score2"], strict=True)) == 1027
    assert sum(a == b for a, b in zip(train["condition1"], train["condition2"], strict=True)) == 53
    invalid = pairs["validation_invalid"]
    sides = Counter((a is None) + (b is None) for a, b in zip(invalid["score1"], invalid["score2"], strict=True))
    assert sides == {1: 198, 2: 8}  # a -1 on one condition does not imply one on the other


@needs_mirror
def test_real_zip_spellings_line_ends_and_forks(mirror):
    with zipfile.ZipFile(mirror / "c-sts" / "dataset.zip") as archive:
        names = archive.namelist()
        train = archive.read("dataset/csts_train_reannotated.csv")
        validation = archive.read("dataset/csts_validation_reannotated.csv")
    assert sorted(n for n in names if n.startswith("__MACOSX/")) == [
        "__MACOSX/dataset/._csts_train_reannotated.csv", "__MACOSX/dataset/._csts_validation_reannotated.csv"]
    assert b"\r" not in train and validation.count(b"\r\n") == validation.count(b"\n") == 2834  # no final line end
    labels = Counter(line.rsplit(b",", 1)[1] for line in validation.splitlines()[1:])
    assert labels[b"-1"] == 214 and set(labels) == {b"-1", b"1", b"2", b"3", b"4", b"5"}
    assert {line.rsplit(b",", 1)[1] for line in train.splitlines()[1:] if line.endswith(b".0")} == \
        {b"1.0", b"2.0", b"3.0", b"4.0", b"5.0"}


@pytest.mark.slow
def test_export_of_the_reannotation_loads_with_stock_datasets(fixture_mirror, tmp_path):
    import datasets

    from semrel.publishing.export import build_dataset, verify_folder

    result = build_dataset("c-sts", tmp_path / "hub", mirror=fixture_mirror, cache_dir=tmp_path / "cache")
    assert set(result.rows) == {"reannotated", "reannotated-pairs", "reannotated-dev"} and result.local == []
    assert result.skipped == dict.fromkeys(["default", "pairs", "reannotated-original"],
                                           "needs user-supplied files (--data-dir)")
    for config in result.rows:
        stock = datasets.load_dataset(str(result.folder), config, cache_dir=str(tmp_path / "stock"))
        ours = load("c-sts", config, mirror=fixture_mirror, cache_dir=tmp_path / "cache")
        assert list(stock) == ["train", *(["dev"] if config == "reannotated-dev" else []), "validation",
                               "validation_invalid"]
        assert {s: d.to_list() for s, d in stock.items()} == {s: d.to_list() for s, d in ours.items()}
        assert stock["train"].features == ours["train"].features
    assert verify_folder(result.folder, "c-sts", mirror=fixture_mirror, cache_dir=tmp_path / "verify") == []


@pytest.mark.slow
@needs_mirror
def test_semrel_build_and_verify_the_real_reannotation_without_a_password(mirror, cache_dir, tmp_path):
    import datasets

    env = {k: v for k, v in os.environ.items() if k != "CSTS_PASSWORD"}
    semrel = [sys.executable, "-m", "semrel"]
    build = subprocess.run([*semrel, "build", "--only", "c-sts", "--no-report", "--mirror", str(mirror),
                            "--out", str(tmp_path), "--cache-dir", str(cache_dir)],
                           capture_output=True, text=True, env=env, check=False)
    assert build.returncode == 0, build.stderr
    for line in ("c-sts            reannotated                  validation_invalid     214",
                 "c-sts            reannotated-pairs            train                5,671",
                 "c-sts            default                      skipped: needs user-supplied files (--data-dir)",
                 "c-sts            reannotated-original         skipped: needs user-supplied files (--data-dir)",
                 "c-sts            reannotated-dev              dev                  1,136",
                 f"-> c-sts: 3 config(s) in {tmp_path}/hub/datasets/c-sts"):
        assert line in build.stdout.splitlines(), build.stdout
    folder = tmp_path / "hub" / "datasets" / "c-sts"
    stock = datasets.load_dataset(str(folder), "reannotated", cache_dir=str(tmp_path / "stock"))
    assert stock.num_rows == {"train": 11342, "validation": 2620, "validation_invalid": 214}
    assert sorted(Counter(stock["validation"]["score"]).items())[0] == (1.0, 633)
    verify = subprocess.run([*semrel, "verify", "--only", "c-sts", "--mirror", str(mirror), "--out",
                             str(tmp_path), "--cache-dir", str(tmp_path / "verify-cache")],
                            capture_output=True, text=True, env=env, check=False)
    assert verify.returncode == 0 and "c-sts: verified against the upstream files" in verify.stdout, verify.stderr
