"""The c-sts builder on the original, user-supplied data: an openssl-encrypted fixture tarball or
the CSVs. The open re-annotation from the mirror is in test_c_sts_reannotated.py, its dev carve in
test_c_sts_dev_carve.py, the join of the two in test_c_sts_joined.py."""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile

import pyarrow.parquet as pq
import pytest
from huggingface_hub import DatasetCard

from semrel.dataset_scripts import REGISTRY, load
from semrel.dataset_scripts.c_sts import openssl_decrypt
from semrel.dataset_scripts.errors import DataValidationError

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
