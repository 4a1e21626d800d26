"""semrel-2024 bad input: each rule of the release files' reader, on a copy of a real file with one
row broken, and the builder stopping on a bad row."""

import csv
import hashlib
import io
import os

import pytest

from semrel.dataset_scripts import load
from semrel.dataset_scripts.errors import DataValidationError
from semrel.dataset_scripts.semrel_2024 import FILES, ReleaseFile
from semrel.dataset_scripts.semrel_2024 import files as semrel_files
from semrel.dataset_scripts.semrel_2024.files import read_file


def _rows(mirror, key):
    with open(mirror / "semrel-2024" / FILES[key].path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def _bytes(rows) -> bytes:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue().encode()


def _set(row, col, value):
    return lambda rows: rows[row].__setitem__(col, value)


@pytest.mark.parametrize("key, mutate, rule, row", [
    (("eng", "dev"), lambda r: r[0].__setitem__(0, "ID"), "unknown header layout", None),
    (("eng", "dev"), lambda r: r[0].append("Extra"), "unknown header layout", None),
    (("eng", "dev"), _set(5, 0, "ESP-dev-0004"), "PairID of another language or split", 5),
    (("eng", "dev"), _set(5, 0, "ENG-train-0004"), "PairID of another language or split", 5),
    (("amh", "test"), _set(7, 0, "Pair_ID_amh_dev_7"), "PairID of another language or split", 7),
    (("eng", "dev"), _set(5, 0, "ENG-dev-0000"), "repeated PairID", 5),
    (("eng", "dev"), lambda r: r[5].__setitem__(1, r[5][1].replace("\n", " ")), "exactly one newline", 5),
    (("eng", "dev"), lambda r: r[5].__setitem__(1, r[5][1] + "\nthird"), "exactly one newline", 5),
    (("afr", "test"), lambda r: r[3].__setitem__(1, r[3][1].replace("\t", "\n")), "exactly one tab", 3),
    (("eng", "dev"), lambda r: r[5].__setitem__(1, "  \nsecond"), "empty sentence", 5),
    (("eng", "dev"), _set(5, 2, "1.2"), r"score must be in \[0, 1\]", 5),
    (("eng", "dev"), _set(5, 2, "-0.01"), r"score must be in \[0, 1\]", 5),
    (("afr", "dev"), _set(5, 2, "nan"), "score must be a number", 5),
    (("pan", "test"), _set(5, 1, ""), "score must be a number", 5),
])
def test_bad_rows_name_file_row_and_rule(upstream, key, mutate, rule, row):
    rows = _rows(upstream, key)
    mutate(rows)
    name = f"bad/{FILES[key].path}"
    with pytest.raises(DataValidationError, match=rule) as err:
        read_file(name, _bytes(rows), language=key[0], split=key[1])
    assert err.value.row == row and name in str(err.value)


def test_builder_stops_on_a_bad_row(tmp_path, upstream, monkeypatch):
    rows = _rows(upstream, ("pan", "dev"))
    rows[9][0] = rows[9][0].replace("\n", " ")  # pan: Text,Score,PairID
    path = tmp_path / "m" / "semrel-2024" / FILES[("pan", "dev")].path
    path.parent.mkdir(parents=True)
    path.write_bytes(_bytes(rows))
    monkeypatch.setitem(semrel_files.FILES, ("pan", "dev"), ReleaseFile(
        FILES[("pan", "dev")].path, hashlib.sha256(path.read_bytes()).hexdigest()))
    with pytest.raises(DataValidationError, match="row 9: Text must hold two sentences"):
        load("semrel-2024", "pan", mirror=f"{tmp_path / 'm'}{os.pathsep}{upstream}",
             cache_dir=tmp_path / "cache")
