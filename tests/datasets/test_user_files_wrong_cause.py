"""User files of the dataset builders: each error names its own cause.

A user file that is a folder is not called "missing" ("put it at <that same path>"), nor is a
data_dir that is a file, and a duplicated context-dependent row is not "no context-free counterpart".
The sweep covers every user file of every builder that reads one (czech-news-sts, c-sts).
"""

from __future__ import annotations

import re

import pytest
from test_c_sts import write_csvs

from semrel.dataset_scripts import load
from semrel.dataset_scripts.c_sts.builder import ENCRYPTED_NAME, SPLIT_FILES
from semrel.dataset_scripts.czech_news_sts import USER_FILES
from semrel.dataset_scripts.czech_news_sts.builder import align_dep
from semrel.dataset_scripts.errors import DataValidationError

CZECH = sorted(USER_FILES.items())


@pytest.mark.parametrize("config, name", CZECH, ids=[c for c, _ in CZECH])
def test_czech_user_file_that_is_a_folder(tmp_path, upstream, config, name):
    (tmp_path / name).mkdir()
    with pytest.raises(DataValidationError, match=re.escape(f"{tmp_path / name}: is a folder, not the file {name}")):
        load("czech-news-sts", config, mirror=upstream, data_dir=tmp_path, cache_dir=tmp_path / "cache")


def test_czech_data_dir_that_is_a_file(tmp_path, upstream):
    (tmp_path / "data").write_text("not a folder\n")
    with pytest.raises(DataValidationError, match="data: data_dir is a file, not a folder"):
        load("czech-news-sts", "train-raw", mirror=upstream, data_dir=tmp_path / "data", cache_dir=tmp_path / "c")


def test_czech_duplicated_dep_row_is_named_as_a_duplicate():
    free = [{"pair_id": "test-1", "sentence1": "A.", "sentence2": "B."},
            {"pair_id": "test-2", "sentence1": "C.", "sentence2": "D."}]
    dep = [{"row": 1, "sentence1": "A.", "sentence2": "B."}, {"row": 2, "sentence1": "C.", "sentence2": "D."},
           {"row": 3, "sentence1": " A.", "sentence2": "B. "}]
    with pytest.raises(DataValidationError, match=re.escape(
            "dep-test.tsv: row 3: context-dependent pair occurs more often than in the free test (1x there): "
            "a duplicated row? (same key sentences as row(s) [1]: 'A.' / 'B.')")):
        align_dep(free, dep, "dep-test.tsv")
    with pytest.raises(DataValidationError, match="row 1: context-dependent pair has no context-free counterpart"):
        align_dep(free, [{"row": 1, "sentence1": "E.", "sentence2": "B."}], "dep-test.tsv")


CSTS = [*SPLIT_FILES.values(), ENCRYPTED_NAME]


@pytest.mark.parametrize("name", CSTS)
def test_csts_user_file_that_is_a_folder(tmp_path, name):
    folder = write_csvs(tmp_path / "plain")
    if name == ENCRYPTED_NAME:  # read only when the three CSVs are not all there
        for csv_name in SPLIT_FILES.values():
            (folder / csv_name).unlink()
    (folder / name).unlink(missing_ok=True)
    (folder / name).mkdir()
    with pytest.raises(FileNotFoundError, match=re.escape(f"c-sts: {name} in {folder} is a folder, not a file")):
        load("c-sts", data_dir=folder, cache_dir=tmp_path / "cache")


def test_csts_data_dir_that_is_a_file(tmp_path):
    (tmp_path / "data").write_text("not a folder\n")
    with pytest.raises(FileNotFoundError, match=re.escape(f"c-sts: data_dir {tmp_path / 'data'} is a file")):
        load("c-sts", data_dir=tmp_path / "data", cache_dir=tmp_path / "cache")
