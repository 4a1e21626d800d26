"""benchmarks/results.json is written one key at a time (publishing.results): a study rewriting its
figures changes its own lines only, and the report's fine-tuned cells keep their shape."""

from __future__ import annotations

import json
import shutil

import pytest

from semrel.publishing.results import RESULTS, store, store_fine_tuned, update


@pytest.fixture
def results(tmp_path):
    path = tmp_path / "results.json"
    shutil.copy(RESULTS, path)
    return path


def test_storing_a_key_again_leaves_the_file_byte_for_byte(results):
    """The keys written by store (indent 2) come back identical; the others are not touched."""
    before = results.read_text(encoding="utf-8")
    for key in ("fine_tuned", "semrel_2024_baselines"):
        store(key, json.loads(before)[key], results)
    assert results.read_text(encoding="utf-8") == before


def test_a_key_in_the_middle_changes_only_its_own_lines(results):
    before = json.loads(results.read_text(encoding="utf-8"))
    keys = list(before)
    middle = keys[len(keys) // 2]
    lines = results.read_text(encoding="utf-8").splitlines()
    store(middle, {"replaced": [1, 2]}, results)
    after = json.loads(results.read_text(encoding="utf-8"))
    assert list(after) == keys and after[middle] == {"replaced": [1, 2]}
    assert all(after[k] == before[k] for k in keys if k != middle)
    new = results.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f'  "{middle}"'))
    assert new[:start] == lines[:start]  # everything above it as written


def test_update_replaces_the_fields_it_is_given_and_keeps_the_others(results, tmp_path):
    before = json.loads(results.read_text(encoding="utf-8"))
    update("pairs", {"speed": {"seconds": 1.0}, "new": True}, results)
    after = json.loads(results.read_text(encoding="utf-8"))
    assert after["pairs"] == {**before["pairs"], "speed": {"seconds": 1.0}, "new": True}
    assert {k: v for k, v in after.items() if k != "pairs"} == {k: v for k, v in before.items() if k != "pairs"}
    update("fresh", {"a": 1}, tmp_path / "none.json")
    assert json.loads((tmp_path / "none.json").read_text(encoding="utf-8")) == {"fresh": {"a": 1}}


def test_a_new_key_is_appended_and_an_empty_object_takes_one(results, tmp_path):
    store("new_study", {"a": 1}, results)
    loaded = json.loads(results.read_text(encoding="utf-8"))
    assert list(loaded)[-1] == "new_study" and loaded["new_study"] == {"a": 1}
    empty = tmp_path / "empty.json"
    empty.write_text("{}\n")
    store("k", [1], empty)
    assert json.loads(empty.read_text()) == {"k": [1]}
    missing = tmp_path / "new" / "results.json"
    missing.parent.mkdir()
    store("k", [1], missing)
    assert json.loads(missing.read_text()) == {"k": [1]}
    empty.write_text("[1, 2]\n")
    with pytest.raises(ValueError, match="must hold one JSON object"):
        store("k", 1, empty)


def test_a_fine_tuned_cell_needs_every_field_and_keeps_the_others(results):
    cells = json.loads(results.read_text(encoding="utf-8"))["fine_tuned"]
    entry = {"spearman": 0.5, "model": "m", "protocol": "p", "machine": "2-core CPU", "command": "c"}
    store_fine_tuned("czech-news-sts", entry, results)
    after = json.loads(results.read_text(encoding="utf-8"))["fine_tuned"]
    assert after == {**cells, "czech-news-sts": entry}
    with pytest.raises(ValueError, match="a fine-tuned figure needs command, machine"):
        store_fine_tuned("c-sts", {"spearman": 0.5, "model": "m", "protocol": "p"}, results)
