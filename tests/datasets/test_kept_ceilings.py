"""Figures kept on disk (semrel.metrics.kept_figures), through the human ceilings
(semrel.dataset_scripts.kept_ceilings): read back exactly without computing, computed again when a
file's digest, the code or a library version changes, never served from a damaged file, and never
a failed run where nothing can be written."""

from __future__ import annotations

import json
import warnings

import pytest

from semrel.dataset_scripts import kept_ceilings
from semrel.dataset_scripts.ceilings import HumanCeiling, human_ceiling
from semrel.dataset_scripts.czech_news_sts import ceiling as czech_ceiling
from semrel.metrics import kept_figures

CALLS = []


@kept_ceilings.kept_ceiling
def toy(name: str, mirror, *digests: str) -> HumanCeiling:
    CALLS.append((name, mirror, digests))
    return HumanCeiling(0.9 + len(CALLS) / 1000, (0.8, 0.95), single_annotator=1 / 3, method="toy", note=name,
                        n_items=len(digests))


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty ``$SEMREL_CACHE`` and nothing kept in memory."""
    monkeypatch.setenv("SEMREL_CACHE", str(tmp_path))
    CALLS.clear()
    for function in (toy, czech_ceiling._free):
        function.cache_clear()
    yield tmp_path / "ceilings"
    for function in (toy, czech_ceiling._free):
        function.cache_clear()


def kept_files(folder):
    return sorted(folder.glob("*.json"))


def test_a_real_ceiling_is_read_back_exactly_without_computing_it(cache, fixture_mirror, monkeypatch):
    first = human_ceiling("czech-news-sts", "free", "test", mirror=fixture_mirror)
    assert first.available and len(kept_files(cache)) == 1
    czech_ceiling._free.cache_clear()  # as a new process

    def refuse(*args, **kwargs):
        raise AssertionError("computed again")

    monkeypatch.setattr(czech_ceiling, "ratings_ceiling", refuse)
    assert human_ceiling("czech-news-sts", "free", "test", mirror=fixture_mirror) == first


def test_the_key_is_the_content_not_where_it_was_read(cache):
    assert toy("a", "/mirror/one", "1:aa") == toy("a", "/mirror/one", "1:aa")  # in memory
    toy.cache_clear()
    assert toy("a", "/mirror/two", "1:aa").value == 0.901  # read back: another mirror, the same files
    assert toy("a", None, "1:ab").value == 0.902  # another file content
    assert toy("b", None, "1:aa").value == 0.903  # another argument
    assert len(CALLS) == 3 and len(kept_files(cache)) == 3


def test_another_code_or_library_version_computes_again(cache, monkeypatch):
    toy("a", None, "1:aa")
    toy.cache_clear()
    monkeypatch.setattr(kept_figures, "code_digest", lambda: "another semrel")
    toy("a", None, "1:aa")
    toy.cache_clear()
    monkeypatch.setattr(kept_figures, "version", lambda name: "0.0" if name == "scipy" else "1.0")
    toy("a", None, "1:aa")
    assert len(CALLS) == 3 and len(kept_files(cache)) == 3


def test_the_code_digest_covers_every_source_file_of_the_packages():
    digest = kept_figures.code_digest()
    assert len(digest) == 64 and digest == kept_figures.code_digest()
    assert kept_figures.CODE == ("semrel.dataset_scripts", "semrel.metrics")


@pytest.mark.parametrize("damage", ["not json", "changed figure"])
def test_a_damaged_file_is_computed_again_and_rewritten(cache, damage):
    kept = toy("a", None, "1:aa")
    (path,) = kept_files(cache)
    if damage == "not json":
        path.write_text("{\"figure\": ", encoding="utf-8")
    else:
        stored = json.loads(path.read_text(encoding="utf-8"))
        stored["figure"]["value"] = 0.99
        path.write_text(json.dumps(stored), encoding="utf-8")
    toy.cache_clear()
    with pytest.warns(UserWarning, match=r"a damaged kept figure .*; computed again"):
        again = toy("a", None, "1:aa")
    assert again.value == 0.902 and again != kept and len(CALLS) == 2
    toy.cache_clear()
    assert toy("a", None, "1:aa") == again  # the rewritten file is whole


def test_a_folder_that_cannot_be_written_leaves_the_ceiling_computed(tmp_path, monkeypatch):
    blocker = tmp_path / "a file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("SEMREL_CACHE", str(blocker))
    toy.cache_clear()
    with pytest.warns(UserWarning, match=r"the figure cannot be kept .*computed again on the next run"):
        value = toy("c", None, "1:aa")
    assert value.note == "c" and not list(tmp_path.rglob("*.part"))
    toy.cache_clear()


def test_tuples_and_none_round_trip(cache):
    kept = toy("a", None, "1:aa", "2:bb")
    toy.cache_clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = toy("a", None, "1:aa", "2:bb")
    assert again == kept and again.interval == (0.8, 0.95) and again.pearson is None and again.n_items == 2
