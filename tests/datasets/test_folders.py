"""replaced_whole: under a failure at every step the folder is the complete old one or the complete
new one, never missing; failures are injected into each step (writing, moving the old folder
aside, the final rename, the clean-up) on both the atomic exchange and the two-rename path, and a
process is killed (SIGKILL) at each step. remove_leftovers clears what a killed process left and
nothing else: a user's files beside the folder, whatever their names, are data."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
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
    leftover = [n for n in siblings(target) if n != "ds" and not n.endswith(folders.MARK)]
    assert len(leftover) == 1 and leftover[0] in caplog.text and "injected: rmtree" in caplog.text
    assert leftover[0] + folders.MARK in siblings(target)  # marked: the next clean-up may remove it
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


# --- what remove_leftovers may remove: only the folders replaced_whole made --------------------

USER_ENTRIES = {  # a user's files beside the folder, named as replaced_whole names its own
    ".mydata.old-2023": {"mine.txt": "a user's data", "ds/a.txt": "not an old ds"},
    ".venv.new-1": {"bin/python": "a user's environment"},
    ".notes.old-1": "a user's notes (a file)",
    ".ds.new-abc.semrel-leftover": "not a marker: no signature",  # a user file named as a marker
}


def place_user_entries(parent: Path) -> dict:
    for name, content in USER_ENTRIES.items():
        if isinstance(content, dict):
            write(parent / name, content)
        else:
            (parent / name).write_text(content)
    return entries(parent)


def entries(parent: Path) -> dict:
    """Every entry of ``parent`` but ``ds`` (and markers of this test's own leftovers): its contents."""
    return {p.name: contents(p) if p.is_dir() else p.read_text() for p in parent.iterdir() if p.name != "ds"}


def test_user_files_named_like_leftovers_are_left_alone(target):
    """A user's ``.mydata.old-2023/`` is not emptied into the folder, ``.venv.new-1/`` is not deleted,
    a file ``.notes.old-1`` is no NotADirectoryError: none was made by replaced_whole."""
    parent = target.parent
    before = place_user_entries(parent)
    orphan = parent / f".ds.new-gone{folders.MARK}"  # a marker whose folder is gone (killed before mkdir)
    orphan.write_text(f"{folders.SIGNATURE}\nsomehost 1\n")
    remove_leftovers(parent)
    assert entries(parent) == before and contents(target) == OLD
    assert not (parent / "mine.txt").exists() and not orphan.exists()


def test_a_build_lock_leaves_user_files_in_every_folder_it_clears(tmp_path):
    """``semrel build --out DIR`` clears leftovers under its lock in DIR, DIR/hub/datasets and
    DIR/hub/spaces: a user's entries there stay as they were."""
    from semrel.publishing.export import build_lock

    parents = [tmp_path / "hub" / "datasets", tmp_path / "hub" / "spaces", tmp_path]
    for parent in parents:
        parent.mkdir(parents=True, exist_ok=True)
    before = {parent: place_user_entries(parent) for parent in parents}
    with build_lock(tmp_path, say=lambda line: None):
        pass
    for parent in parents:
        assert {k: v for k, v in entries(parent).items() if k != ".build.lock"} == before[parent]


KILLED = """
import os, shutil, signal, sys
from pathlib import Path
from semrel.dataset_scripts import folders

step, target = sys.argv[1], Path(sys.argv[2])
die = lambda *args, **kwargs: os.kill(os.getpid(), signal.SIGKILL)
if step in ("between the two renames", "after the two renames"):
    folders._exchange = lambda a, b: False
real, renames = os.rename, []
def rename(a, b):
    renames.append(a)
    if step == "between the two renames" and len(renames) == 2:
        die()
    return real(a, b)
os.rename = rename
if step.startswith("after"):
    shutil.rmtree = die  # the old folder is not deleted
with folders.replaced_whole(target) as staging:
    (staging / "a.txt").write_text("new a")
    if step == "while writing":
        die()
    (staging / "c.txt").write_text("new c")
"""
KILLS = [  # (where the process is killed, the folder after the next clean-up)
    ("while writing", OLD),
    ("between the two renames", OLD),  # the old folder is aside and put back
    ("after the exchange", NEW),
    ("after the two renames", NEW),
]


@pytest.mark.parametrize("step, after", KILLS, ids=[k[0] for k in KILLS])
def test_what_a_killed_process_left_is_cleared_and_user_files_stay(target, step, after):
    parent = target.parent
    before = place_user_entries(parent)
    done = subprocess.run([sys.executable, "-c", KILLED, step, str(target)], capture_output=True, text=True)
    assert done.returncode == -signal.SIGKILL, done.stderr
    left = sorted(set(p.name for p in parent.iterdir()) - set(before) - {"ds"})
    assert left and all(n.endswith(folders.MARK) or n + folders.MARK in left for n in left)  # each marked
    if step == "between the two renames":
        assert not target.exists()
    remove_leftovers(parent)
    assert contents(target) == after and entries(parent) == before


def marked(parent: Path, name: str, owner: str) -> Path:
    """A folder ``name`` in ``parent`` with the marker replaced_whole writes, naming ``owner``."""
    (parent / name).mkdir()
    Path(f"{parent / name}{folders.MARK}").write_text(f"{folders.SIGNATURE}\n{owner}\n")
    return parent / name


@pytest.mark.parametrize("step, after", KILLS, ids=[k[0] for k in KILLS])
def test_the_next_replacement_clears_what_a_killed_one_left_of_its_folder_only(target, step, after):
    """Without a lock, replaced_whole clears before it starts what killed calls for the same folder
    left on this host; another folder's leftovers, a running maker's, one made on another host
    (whose end cannot be seen) and a user's entries stay."""
    parent = target.parent
    place_user_entries(parent)
    maker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        others = [marked(parent, ".other.new-x", f"{socket.gethostname()} 999999999"),
                  marked(parent, ".ds.new-running", f"{socket.gethostname()} {maker.pid}"),
                  marked(parent, ".ds.new-far", "another-host 1")]
        before = entries(parent)
        done = subprocess.run([sys.executable, "-c", KILLED, step, str(target)], capture_output=True,
                              text=True)
        assert done.returncode == -signal.SIGKILL, done.stderr
        assert entries(parent) != before
        with replaced_whole(target) as staging:
            assert contents(target) == after  # an old folder moved aside is back in its place
            write(staging, {"d.txt": "newest"})
        assert contents(target) == {"d.txt": "newest"} and entries(parent) == before
        assert all(folder.is_dir() for folder in others)
    finally:
        maker.kill()
        maker.wait()


def test_a_leftover_of_a_running_process_is_left_to_it(target):
    """A marked folder whose maker still runs on this host is its work in progress, not a leftover."""
    maker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        staging = target.parent / ".ds.new-running"
        staging.mkdir()
        Path(f"{staging}{folders.MARK}").write_text(f"{folders.SIGNATURE}\n{socket.gethostname()} {maker.pid}\n")
        remove_leftovers(target.parent)
        assert staging.is_dir() and Path(f"{staging}{folders.MARK}").is_file()
    finally:
        maker.kill()
        maker.wait()
    remove_leftovers(target.parent)
    assert siblings(target) == ["ds"]
