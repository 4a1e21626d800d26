import csv
import hashlib
from dataclasses import replace

import numpy as np
import pytest

from semrel.dataset_scripts import builder, code_hash, load
from semrel.dataset_scripts.errors import DataValidationError
from semrel.dataset_scripts.str_2021 import SOURCE, read_pairs
from semrel.dataset_scripts.str_2021 import builder as str_builder

SUBSETS = {"Formality_pp": 300, "Formality_r": 700, "Goodreads": 1000, "Wiki_pp": 500,
           "Wiki_r": 500, "ParaNMT_pp": 450, "ParaNMT_r": 300, "SNLI": 750, "Stance": 750,
           "STS": 250}
SOURCES = {"Formality": 1000, "Goodreads": 1000, "Wikipedia": 1000, "ParaNMT": 750, "SNLI": 750,
           "Stance": 750, "STS": 250}


@pytest.fixture(scope="module")
def full(mirror, cache_dir):
    return load("str-2021", mirror=mirror, cache_dir=cache_dir)["train"]


def test_default_config_real_file(full):
    assert len(full) == 5500
    assert full.features["score"].dtype == "float32"
    subsets = np.asarray(full["subset"])
    assert {s: int((subsets == s).sum()) for s in SUBSETS} == SUBSETS
    sources = np.asarray(full["source"])
    assert {s: int((sources == s).sum()) for s in SOURCES} == SOURCES
    score = np.asarray(full["score"], dtype=np.float64)
    assert score.min() == 0.0 and score.max() == 1.0
    np.testing.assert_allclose(score, np.round(score, 3), atol=1e-6)  # float noise removed
    np.testing.assert_allclose(np.asarray(full["bws_score"]), 2 * score - 1, atol=1e-6)
    assert all(s.strip() == s and s for s in list(full["sentence1"]) + list(full["sentence2"]))


def test_float_noise_is_rounded(full):
    row = full.filter(lambda r: r["pair_id"] == "Formality_pp_222")[0]
    assert row["sentence1"] == "It that happens, just pull the plug."
    assert row["sentence2"] == "if that ever happens, just pull the plug."
    assert row["score"] == 1.0


def test_cv_folds_partition_and_stratify(full, mirror, cache_dir):
    all_ids = set(full["pair_id"])
    seen = []
    for fold in range(5):
        d = load("str-2021", f"cv-fold-{fold}", mirror=mirror, cache_dir=cache_dir)
        train, test = set(d["train"]["pair_id"]), set(d["test"]["pair_id"])
        assert not train & test and train | test == all_ids
        assert len(test) == 1100
        subsets = np.asarray(d["test"]["subset"])
        for subset, n in SUBSETS.items():
            assert abs((subsets == subset).sum() - n / 5) <= 1, (fold, subset)
        seen += list(test)
    assert len(seen) == len(set(seen)) == 5500


def test_lodo_covers_every_source(mirror, cache_dir):
    for source, n in SOURCES.items():
        d = load("str-2021", f"lodo-{source.lower()}", mirror=mirror, cache_dir=cache_dir)
        assert set(d["test"]["source"]) == {source} and len(d["test"]) == n
        assert source not in set(d["train"]["source"]) and len(d["train"]) == 5500 - n


def test_cache_is_keyed_on_code():
    b = builder("str-2021", "cv-fold-0")
    assert b.hash == code_hash() and code_hash() in b.cache_dir


# ---- bad input: each rule, on a copy of the upstream file with one row broken ----

def _rows(upstream):
    with open(upstream / "str-2021" / SOURCE.file_name, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def _write(tmp_path, rows):
    path = tmp_path / SOURCE.file_name
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)
    return path


@pytest.mark.parametrize("mutate, rule", [
    (lambda r: r[5].__setitem__(4, r[5][4].replace("\n", " ")), "exactly one newline"),
    (lambda r: r[5].__setitem__(4, r[5][4] + "\nthird"), "exactly one newline"),
    (lambda r: r[5].__setitem__(4, "   \nsecond"), "empty sentence"),
    (lambda r: r[5].__setitem__(5, "1.2"), r"Score must be in \[0, 1\]"),
    (lambda r: r[5].__setitem__(5, "-0.001"), r"Score must be in \[0, 1\]"),
    (lambda r: r[5].__setitem__(5, "nan"), "Score must be a number"),
    (lambda r: r[5].__setitem__(5, "high"), "Score must be a number"),
    (lambda r: r[5].__setitem__(5, "0.1234"), "at most 3 decimals"),
    (lambda r: r[5].__setitem__(3, r[2][3]), "duplicate PairID"),
])
def test_bad_rows_name_row_and_rule(upstream, tmp_path, mutate, rule):
    rows = _rows(upstream)
    mutate(rows)
    with pytest.raises(DataValidationError, match=rule) as err:
        read_pairs(str(_write(tmp_path, rows)))
    assert err.value.row == 5 and "row 5" in str(err.value)


def test_missing_column(upstream, tmp_path):
    rows = [[c for j, c in enumerate(r) if j != 4] for r in _rows(upstream)]
    with pytest.raises(DataValidationError, match="missing column.*Text") as err:
        read_pairs(str(_write(tmp_path, rows)))
    assert err.value.row is None


def test_builder_stops_on_bad_row(upstream, tmp_path, monkeypatch):
    rows = _rows(upstream)
    rows[7][5] = "7"
    (tmp_path / "m" / "str-2021").mkdir(parents=True)
    path = _write(tmp_path / "m" / "str-2021", rows)
    monkeypatch.setattr(str_builder, "SOURCE",
                        replace(SOURCE, sha256=hashlib.sha256(path.read_bytes()).hexdigest()))
    with pytest.raises(DataValidationError, match="row 7: Score must be in"):
        load("str-2021", mirror=tmp_path / "m", cache_dir=tmp_path / "cache")
