"""replaced_whole: under a failure at every step the folder is the complete old one or the complete
new one, never missing; failures are injected into each step (writing, moving the old folder
aside, the final rename, the clean-up) on both the atomic exchange and the two-rename path."""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

import pytest

from semrel.dataset_scripts import folders
from semrel.dataset_scripts.folders import remove_leftovers, replaced_whole

OLD = {"a.txt": "old a", "sub/b.txt": "old b"}
NEW = {"a.txt": "new a", "c.txt": "new c"}


def write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)


def contents(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): p.read_text() for p in folder.rglob("*") if p.is_file()}


@pytest.fixture
def target(tmp_path) -> Path:
    folder = tmp_path / "out" / "ds"
    folder.mkdir(parents=True)
    write(folder, OLD)
    return folder


@pytest.fixture(params=["exchange", "two renames"])
def path(request, monkeypatch):
    """Run each test on the atomic exchange and on the fallback without one."""
    if request.param == "two renames":
        monkeypatch.setattr(folders, "_exchange", lambda a, b: False)
    else:
        assert folders._renameat2() is not None, "this system has renameat2: the exchange path must run"
    return request.param


def fail_on_call(monkeypatch, owner, name: str, n: int):
    """Make the ``n``-th call (1-based) of ``owner.name`` raise OSError; the others go through."""
    real, calls = getattr(owner, name), []

    def fake(*args, **kwargs):
        calls.append(args)
        if len(calls) == n:
            raise OSError(f"injected: {name} call {n}")
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, fake)
    return calls


def siblings(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.parent.iterdir())


def test_success_replaces_the_folder_and_leaves_nothing_beside_it(target, path):
    with replaced_whole(target) as staging:
        assert staging.parent == target.parent and staging.name.startswith(".ds.new-")
        write(staging, NEW)
    assert contents(target) == NEW and siblings(target) == ["ds"]


def test_a_new_folder_appears_whole(tmp_path, path):
    with replaced_whole(tmp_path / "made" / "ds") as staging:
        write(staging, NEW)
    assert contents(tmp_path / "made" / "ds") == NEW and siblings(tmp_path / "made" / "ds") == ["ds"]


def test_failure_while_writing_keeps_the_old_folder(target, path):
    with pytest.raises(RuntimeError, match="half-way"):
        with replaced_whole(target) as staging:
            write(staging, {"a.txt": "partial"})
            raise RuntimeError("half-way")
    assert contents(target) == OLD and siblings(target) == ["ds"]


def test_failure_moving_the_old_folder_aside_keeps_it(target, monkeypatch):
    """Two-rename path: the first rename (old folder aside) fails."""
    monkeypatch.setattr(folders, "_exchange", lambda a, b: False)
    fail_on_call(monkeypatch, os, "rename", 1)
    with pytest.raises(OSError, match="injected: rename call 1"):
        with replaced_whole(target) as staging:
            write(staging, NEW)
    assert contents(target) == OLD and siblings(target) == ["ds"]


def test_failure_of_the_exchange_keeps_the_old_folder(target, monkeypatch):
    def broken(a, b):
        raise OSError("injected: exchange")

    monkeypatch.setattr(folders, "_exchange", broken)
    with pytest.raises(OSError, match="injected: exchange"):
        with replaced_whole(target) as staging:
            write(staging, NEW)
    assert contents(target) == OLD and siblings(target) == ["ds"]


def test_failure_of_the_final_rename_puts_the_old_folder_back(target, monkeypatch):
    """Two-rename path: the old folder is aside when the new one fails to move in."""
    monkeypatch.setattr(folders, "_exchange", lambda a, b: False)
    calls = fail_on_call(monkeypatch, os, "rename", 2)
    with pytest.raises(OSError, match="injected: rename call 2"):
        with replaced_whole(target) as staging:
            write(staging, NEW)
    assert len(calls) == 3  # aside, in (fails), back
    assert contents(target) == OLD and siblings(target) == ["ds"]


def test_failure_of_the_final_rename_of_a_new_folder_leaves_no_staging(tmp_path, path, monkeypatch):
    fail_on_call(monkeypatch, os, "rename", 1)
    with pytest.raises(OSError, match="injected"):
        with replaced_whole(tmp_path / "ds") as staging:
            write(staging, NEW)
    assert list(tmp_path.iterdir()) == []


def test_the_exchange_is_one_step(target, monkeypatch):
    """With renameat2 the old folder is never moved aside: no os.rename at all."""
    calls = fail_on_call(monkeypatch, os, "rename", 1)
    with replaced_whole(target) as staging:
        write(staging, NEW)
    assert calls == [] and contents(target) == NEW


def test_failure_of_the_cleanup_keeps_the_new_folder_and_says_so(target, path, monkeypatch, caplog):
    real = shutil.rmtree

    def rmtree(p, *args, **kwargs):
        if not kwargs.get("ignore_errors"):
            raise OSError("injected: rmtree")
        return real(p, *args, **kwargs)

    monkeypatch.setattr(shutil, "rmtree", rmtree)
    with caplog.at_level(logging.WARNING, logger=folders.__name__):
        with replaced_whole(target) as staging:
            write(staging, NEW)
    assert contents(target) == NEW
    leftover = [n for n in siblings(target) if n != "ds"]
    assert len(leftover) == 1 and leftover[0] in caplog.text and "injected: rmtree" in caplog.text
    monkeypatch.setattr(shutil, "rmtree", real)
    remove_leftovers(target.parent)
    assert contents(target) == NEW and siblings(target) == ["ds"]


def test_undo_failure_names_the_old_folder_and_remove_leftovers_puts_it_back(target, monkeypatch):
    """Two-rename path, the final rename and the undo both fail (or the process was killed between
    the two renames): the error names where the old folder is, and the next build's clean-up
    (remove_leftovers, under the build lock) moves it back into its place."""
    monkeypatch.setattr(folders, "_exchange", lambda a, b: False)
    real, calls = os.rename, []

    def rename(a, b):
        calls.append((a, b))
        if len(calls) >= 2:
            raise OSError("injected")
        return real(a, b)

    monkeypatch.setattr(os, "rename", rename)
    with pytest.raises(OSError, match=r"nor put back .*the old folder is .*\.ds\.old-.*/ds$"):
        with replaced_whole(target) as staging:
            write(staging, NEW)
    monkeypatch.setattr(os, "rename", real)
    assert not target.exists()
    remove_leftovers(target.parent)
    assert contents(target) == OLD and siblings(target) == ["ds"]
