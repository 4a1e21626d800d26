"""The c-sts builder: the original on user-supplied data (an openssl-encrypted fixture tarball or the
CSVs), the open re-annotation from the mirror, and the join of the two."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tarfile
import warnings
import zipfile
from collections import Counter

import pyarrow.parquet as pq
import pytest
from huggingface_hub import DatasetCard

from project import fixture_copy, needs_mirror
from semrel.dataset_scripts import REGISTRY, load
from semrel.dataset_scripts.c_sts import openssl_decrypt
from semrel.dataset_scripts.errors import DataValidationError, SourceError

PASSWORD = "correct horse battery staple"
HEADER = "sentence1,sentence2,condition,label\n"
ROWS = {
    "train": ('"A man rides a red bike.","A woman rides a blue bike.",The colour of the bike,1.0\n'
              '"A man rides a red bike.","A woman rides a blue bike.",The vehicle,5.0\n'
              '"Two dogs run, fast.",A cat sleeps.,The number of animals,2.0\n'
              '"Two dogs run, fast.",A cat sleeps.,,3.5\n'),
    "validation": ('A child sings.,A bird sings.,The action,4.5\n'
                   'A child sings.,A bird sings.,The species,1.0\n'),
    "test": ('Snow falls.,Rain falls.,The weather,-1\n'
             'Snow falls.,Rain falls.,The temperature,-1\n'),
}


def write_csvs(folder, rows=ROWS):
    folder.mkdir(parents=True, exist_ok=True)
    for split, body in rows.items():
        (folder / f"csts_{split}.csv").write_text(HEADER + body, encoding="utf-8")
    return folder


def encrypt_with_openssl(csv_dir, out_dir, password=PASSWORD, extra_members=()):
    """The authors' packaging: tar the three CSVs (plus ``extra_members``: (name, bytes)), then
    openssl aes-256-cbc -a -salt -pbkdf2.

    openssl enc has no integrity check: only damage that breaks the padding, the tar structure
    or a CSV rule can be detected. The salt is random, so the damage cases below garble every
    block (wrong password, changed salt) or the framing: detected whatever the salt."""
    assert shutil.which("openssl"), "the openssl CLI is needed for the round-trip test"
    out_dir.mkdir(parents=True, exist_ok=True)
    tar_path = out_dir / "csts.tar"
    with tarfile.open(tar_path, "w") as archive:
        for split in ROWS:
            archive.add(csv_dir / f"csts_{split}.csv", arcname=f"csts_{split}.csv")
        for name, data in extra_members:
            member = tarfile.TarInfo(name)
            member.size = len(data)
            archive.addfile(member, io.BytesIO(data))
    subprocess.run(["openssl", "aes-256-cbc", "-a", "-salt", "-pbkdf2", "-in", str(tar_path),
                    "-out", str(out_dir / "csts.tar.enc"), "-pass", f"pass:{password}"],
                   check=True)
    tar_path.unlink()
    return out_dir


def files_in(folder):
    """Every file left under ``folder`` except the datasets lock files."""
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix != ".lock")


@pytest.fixture()
def encrypted(tmp_path):
    return encrypt_with_openssl(write_csvs(tmp_path / "plain"), tmp_path / "enc")


def test_openssl_round_trip(encrypted, tmp_path):
    ds = load("c-sts", data_dir=encrypted, password=PASSWORD, cache_dir=tmp_path / "cache")
    assert {s: len(d) for s, d in ds.items()} == {"train": 4, "validation": 2, "test": 2}
    assert ds["train"].features["score"].dtype == "float32"
    assert ds["train"][3] == {"sentence1": "Two dogs run, fast.", "sentence2": "A cat sleeps.",
                              "condition": "", "score": 3.5}
    assert ds["test"]["score"] == [None, None]  # hidden labels (-1) become null
    assert ds["validation"]["condition"] == ["The action", "The species"]
    assert not list((encrypted).glob("*.csv"))  # decrypted in memory, never written out


def test_decryption_matches_openssl_byte_for_byte(encrypted, tmp_path):
    plain = subprocess.run(["openssl", "aes-256-cbc", "-a", "-d", "-salt", "-pbkdf2", "-in",
                            str(encrypted / "csts.tar.enc"), "-pass", f"pass:{PASSWORD}"],
                           check=True, capture_output=True).stdout
    ours = openssl_decrypt((encrypted / "csts.tar.enc").read_bytes(), PASSWORD)
    assert ours == plain and len(ours) % 512 == 0  # a whole tar archive


def test_password_from_the_environment(encrypted, tmp_path, monkeypatch):
    monkeypatch.setenv("CSTS_PASSWORD", PASSWORD)
    assert len(load("c-sts", data_dir=encrypted, cache_dir=tmp_path / "cache")["train"]) == 4


def test_decrypted_csvs_give_the_same_rows(encrypted, tmp_path):
    from_enc = load("c-sts", data_dir=encrypted, password=PASSWORD, cache_dir=tmp_path / "c1")
    from_csv = load("c-sts", data_dir=tmp_path / "plain", cache_dir=tmp_path / "c2")
    for split in from_enc:
        assert from_enc[split].to_list() == from_csv[split].to_list()


def test_pairs_config_holds_both_conditions(encrypted, tmp_path):
    pairs = load("c-sts", "pairs", data_dir=encrypted, password=PASSWORD,
                 cache_dir=tmp_path / "cache")
    assert pairs["train"].to_list() == [
        {"sentence1": "A man rides a red bike.", "sentence2": "A woman rides a blue bike.",
         "condition1": "The colour of the bike", "score1": 1.0,
         "condition2": "The vehicle", "score2": 5.0},
        {"sentence1": "Two dogs run, fast.", "sentence2": "A cat sleeps.",
         "condition1": "The number of animals", "score1": 2.0, "condition2": "", "score2": 3.5},
    ]
    assert pairs["test"][0]["score1"] is None


@pytest.mark.parametrize("damage", ["wrong password", "changed salt", "truncated", "not base64"])
def test_wrong_password_or_damaged_file_is_a_clear_error_and_leaves_nothing(encrypted, tmp_path,
                                                                             damage):
    enc = encrypted / "csts.tar.enc"
    text = enc.read_bytes()
    password = PASSWORD
    if damage == "wrong password":
        password = "wrong"
    elif damage == "changed salt":  # base64 chars 12-21 encode the 8 salt bytes
        enc.write_bytes(text[:14] + (b"A" if text[14:15] != b"A" else b"B") + text[15:])
    elif damage == "truncated":
        enc.write_bytes(text[: len(text) // 8])  # cuts into the first CSV member
    else:
        enc.write_bytes(b"%%% not base64 %%%\n")
    cache = tmp_path / "cache"
    with pytest.raises(DataValidationError,
                       match="csts.tar.enc: (wrong password|not |the archive lacks)"):
        load("c-sts", data_dir=encrypted, password=password, cache_dir=cache)
    assert files_in(cache) == [] and sorted(p.name for p in encrypted.iterdir()) == ["csts.tar.enc"]


def test_missing_password_and_missing_files(encrypted, tmp_path, monkeypatch):
    monkeypatch.delenv("CSTS_PASSWORD", raising=False)
    with pytest.raises(DataValidationError, match="a password is needed.*CSTS_PASSWORD"):
        load("c-sts", data_dir=encrypted, cache_dir=tmp_path / "c1")
    with pytest.raises(FileNotFoundError, match="csts.tar.enc.*csts_train.csv"):
        load("c-sts", data_dir=tmp_path / "empty", cache_dir=tmp_path / "c2")
    with pytest.raises(FileNotFoundError, match="needs user-supplied data"):
        load("c-sts", cache_dir=tmp_path / "c3")


@pytest.mark.parametrize("split,row,rule", [
    ("train", 'A dog.,A cat.,The animal,-1\n', "label must be in \\[1, 5\\] \\('-1'\\)"),
    ("validation", 'A dog.,A cat.,The animal,6\n', "label must be in \\[1, 5\\]"),
    ("test", 'A dog.,A cat.,The animal,0\n', "label must be in \\[1, 5\\] or -1"),
    ("train", 'A dog.,A cat.,The animal,high\n', "label must be a number"),
    ("train", ' ,A cat.,The animal,2\n', "empty sentence1"),
])
def test_bad_rows_name_file_row_and_rule(tmp_path, split, row, rule):
    rows = {**ROWS, split: ROWS[split] + row}
    folder = write_csvs(tmp_path / "plain", rows)
    n = ROWS[split].count("\n") + 1
    with pytest.raises(DataValidationError, match=rf"csts_{split}.csv: row {n}: {rule}"):
        load("c-sts", data_dir=folder, cache_dir=tmp_path / "cache")
    assert files_in(tmp_path / "cache") == []


def test_pairs_config_needs_each_pair_twice(tmp_path):
    rows = {**ROWS, "train": ROWS["train"] + '"Two dogs run, fast.",A cat sleeps.,Their size,1.0\n'}
    folder = write_csvs(tmp_path / "plain", rows)
    with pytest.raises(DataValidationError, match=r"row 3: a condition group .* must hold "
                                                  r"exactly 2 rows.*rows \[3, 4, 5\]"):
        load("c-sts", "pairs", data_dir=folder, cache_dir=tmp_path / "cache")


def test_c_sts_is_registered_and_never_published():
    spec = REGISTRY["c-sts"]
    assert spec.score_range == (1.0, 5.0)
    assert spec.configs == ["default", "pairs", "reannotated", "reannotated-pairs", "reannotated-dev",
                            "reannotated-original"]
    assert spec.user_data_configs == ["default", "pairs", "reannotated-original"] == spec.local_configs
    assert spec.redistributable is False  # the original's terms: card only on the Hub


@pytest.mark.slow
def test_card_and_hub_folder_build_from_user_data(encrypted, fixture_mirror, tmp_path, monkeypatch):
    from semrel.publishing.export import build_dataset

    monkeypatch.setenv("CSTS_PASSWORD", PASSWORD)  # how semrel build gets the password
    with pytest.warns(UserWarning, match="original_score is null"):  # the toy original matches nothing
        result = build_dataset("c-sts", tmp_path / "hub", mirror=fixture_mirror, data_dir=encrypted,
                               cache_dir=tmp_path / "cache")
    assert result.rows == {"default": {"train": 4, "validation": 2, "test": 2},
                           "pairs": {"train": 2, "validation": 1, "test": 1},
                           "reannotated": {"train": 12, "validation": 6, "validation_invalid": 2},
                           "reannotated-pairs": {"train": 6, "validation": 3, "validation_invalid": 1},
                           "reannotated-dev": {"train": 10, "dev": 2, "validation": 6, "validation_invalid": 2},
                           "reannotated-original": {"train": 12, "validation": 6, "validation_invalid": 2}}
    assert result.local == ["default", "pairs", "reannotated-original"] and not result.card_only
    card = (result.folder / "README.md").read_text()
    assert "not to publicly share" in card and "CC-BY-4.0" in card
    assert sorted(c["config_name"] for c in DatasetCard.load(result.folder / "README.md").data.configs) == \
        ["reannotated", "reannotated-dev", "reannotated-pairs"]
    written = sorted(p.parent.name for p in result.folder.rglob("*.parquet"))
    assert written == ["reannotated"] * 3 + ["reannotated-dev"] * 4 + ["reannotated-pairs"] * 3  # not the original
    texts = {t for p in result.folder.rglob("*.parquet") for t in pq.read_table(p)["sentence1"].to_pylist()}
    assert "A man rides a red bike." not in texts
    assert "| default | test | 2 |" in card and "| reannotated-original | train | 12 |" in card
    from semrel.publishing.hub_vocabulary import check_card
    assert check_card(result.folder / "README.md") == []  # no build-tree path, Hub vocabulary
    assert (result.folder / "images" / "score_hist_by_split.png").is_file()


# ---- the open re-annotation (dataset.zip of LivNLP/CSTS-reannotation) ----

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


def joined_fixture(data_dir, fixture_mirror, cache, **kwargs):
    with pytest.warns(UserWarning) as notes:
        ds = load("c-sts", "reannotated-original", mirror=fixture_mirror, data_dir=data_dir,
                  cache_dir=cache, **kwargs)
    return ds, sorted(str(n.message) for n in notes)


def test_join_with_the_original_gives_both_labels_and_their_agreement(fixture_mirror, tmp_path):
    from semrel.dataset_scripts.c_sts.reannotated import label_agreement

    ds, notes = joined_fixture(fixture_mirror / "c-sts" / "user", fixture_mirror, tmp_path / "cache")
    train = ds["train"]
    assert train["original_score"] == [1.0, 5.0, 2.0, None, 2.0, 4.0, 5.0, 3.0, 2.0, 4.0, None, None]
    assert train["score"][2:4] == [3.0, 3.0]  # re-annotated 3.0 where the original says 2.0
    assert train["condition"][3] == "the weather"  # rewritten (the original's is empty): no match
    assert notes == [
        "c-sts/reannotated-original/train: original_score is null on 3 row(s) without an original "
        "row of the same (sentence1, sentence2, condition) and on 0 row(s) whose key is held twice; 9 matched",
        "c-sts/reannotated-original/validation: original_score is null on 6 row(s) without an original "
        "row of the same (sentence1, sentence2, condition) and on 0 row(s) whose key is held twice; 2 matched"]
    found = label_agreement(train)
    assert (found.n, found.without_original, found.invalid) == (9, 3, 0)
    assert found.spearman.value == pytest.approx(0.97395, abs=1e-5)
    assert found.spearman.interval.method == "bootstrap-bca" and found.spearman.interval.low < found.spearman.value
    with pytest.raises(ValueError, match="2 items"):  # two matched validation rows: no interval
        label_agreement(ds["validation"])
    encrypted = encrypt_with_openssl(fixture_mirror / "c-sts" / "user", tmp_path / "enc")
    again, _ = joined_fixture(encrypted, fixture_mirror, tmp_path / "cache", password=PASSWORD)
    assert {s: d.to_list() for s, d in again.items()} == {s: d.to_list() for s, d in ds.items()}


def test_a_key_held_twice_is_ambiguous_never_guessed(tmp_path, monkeypatch):
    train = TRAIN_HEADER + TRAIN_ROWS.replace("type of animal", "number of animals")  # as 53 real pairs
    mirror = fixture_copy(tmp_path / "mirror", "c-sts", monkeypatch,
                          {"dataset.zip": reannotation_zip(train=train)})
    user = write_csvs(tmp_path / "user", {**ROWS, "train": "A dog runs.,A cat sleeps.,number of animals,2.0\n"
                                                            "A dog runs.,A cat sleeps.,the colour,3.0\n"})
    with pytest.warns(UserWarning) as notes:
        ds = load("c-sts", "reannotated-original", mirror=mirror, data_dir=user, cache_dir=tmp_path / "cache")
    assert ds["train"]["original_score"] == [None, None]
    assert str(notes[0].message).endswith("train: original_score is null on 0 row(s) without an original row "
                                          "of the same (sentence1, sentence2, condition) and on 2 row(s) whose "
                                          "key is held twice; 0 matched")


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


def pair_keys(rows):
    return list(zip(rows["sentence1"], rows["sentence2"], strict=True))


def test_dev_carve_keeps_both_conditions_of_a_pair_together(fixture_mirror, cache_dir):
    carved = load("c-sts", "reannotated-dev", mirror=fixture_mirror, cache_dir=cache_dir)
    whole = load("c-sts", "reannotated", mirror=fixture_mirror, cache_dir=cache_dir)
    assert list(carved) == ["train", "dev", "validation", "validation_invalid"]
    assert {s: len(d) for s, d in carved.items()} == {"train": 10, "dev": 2, "validation": 6,
                                                      "validation_invalid": 2}
    dev, train = pair_keys(carved["dev"]), pair_keys(carved["train"])
    assert Counter(dev) == {dev[0]: 2} and not set(dev) & set(train)  # one pair, both conditions
    rows = sorted(carved["train"].to_list() + carved["dev"].to_list(), key=str)
    assert rows == sorted(whole["train"].to_list(), key=str)  # nothing lost, nothing added
    for split in ("validation", "validation_invalid"):
        assert carved[split].to_list() == whole[split].to_list()


def test_dev_carve_is_a_function_of_the_pairs_not_their_order():
    from semrel.dataset_scripts.c_sts.reannotated import carve_dev

    rows = [{"sentence1": f"pair {i // 2}", "sentence2": "other", "condition": f"c{i}",
             "score": float(1 + (i // 2) % 5 if i % 2 else 5 - (i // 2) % 3)} for i in range(400)]
    train, dev = carve_dev("toy", rows)
    assert len(dev) == 40 and len(train) == 360  # 20 of 200 pairs, both rows each
    assert set(Counter((r["sentence1"], r["sentence2"]) for r in dev).values()) == {2}
    shuffled = rows[1::2] + rows[0::2]  # the pairs' rows far apart, in another order
    assert sorted(map(str, carve_dev("toy", shuffled)[1])) == sorted(map(str, dev))
    assert [r["_n"] for r in carve_dev("toy", [{**r, "_n": n} for n, r in enumerate(rows)])[0]] == \
        sorted(n for n, r in enumerate(rows) if r not in dev)  # row order kept


def test_dev_carve_refuses_a_pair_without_exactly_two_conditions():
    from semrel.dataset_scripts.c_sts.reannotated import carve_dev

    rows = [{"sentence1": "a", "sentence2": "b", "condition": c, "score": 1.0} for c in "xyz"]
    with pytest.raises(DataValidationError, match=r"toy: row 1: a condition group .*rows \[1, 2, 3\]"):
        carve_dev("toy", rows)


@needs_mirror
def test_real_dev_carve_sizes_labels_and_pairs(mirror, cache_dir):
    carved = load("c-sts", "reannotated-dev", mirror=mirror, cache_dir=cache_dir)
    assert {s: len(d) for s, d in carved.items()} == {"train": 10206, "dev": 1136, "validation": 2620,
                                                      "validation_invalid": 214}
    dev, train = pair_keys(carved["dev"]), pair_keys(carved["train"])
    assert set(Counter(dev).values()) == set(Counter(train).values()) == {2}
    assert len(set(dev)) == 568 and not set(dev) & set(train)
    assert Counter(carved["dev"]["score"]) == {1.0: 112, 2.0: 190, 3.0: 379, 4.0: 242, 5.0: 213}

    def tied(rows):
        scores = {}
        for key, score in zip(pair_keys(rows), rows["score"], strict=True):
            scores.setdefault(key, []).append(score)
        return sum(a == b for a, b in scores.values())

    assert (tied(carved["dev"]), tied(carved["train"])) == (102, 925)  # of the 1,027: stratified


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
def test_card_and_report_measure_the_original_against_the_reannotation(fixture_mirror, tmp_path):
    from semrel.publishing.export import build_dataset
    from semrel.publishing.report import dataset_section

    user = fixture_mirror / "c-sts" / "user"
    with pytest.warns(UserWarning, match="original_score is null"):
        result = build_dataset("c-sts", tmp_path / "hub", mirror=fixture_mirror, data_dir=user,
                               cache_dir=tmp_path / "cache")
    card = (result.folder / "README.md").read_text()
    assert "| train | 9 | 0.974 [0.785, 1.000] | 0.973 [0.875, 0.995] | 3 |" in card
    assert "| validation | – | not measured: 2 items" in card
    assert "| train | 6 | 1 | 0 | 0 | 0 |" in card  # 6 pairs, one with the same label under both conditions
    assert "| validation_invalid | 1 | 0 | 0 | 0 | 1 |" in card  # the skier pair: -1 on both
    with pytest.warns(UserWarning, match="original_score is null"):
        section = dataset_section("c-sts", result.folder, tmp_path / "images", mirror=fixture_mirror,
                                  data_dir=user, cache_dir=tmp_path / "cache")
    assert "0.974 [0.785, 1.000]" in section.html and "validation_invalid" in section.html
    assert section.summary == "6 config(s); card only (licence forbids redistribution)"


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
