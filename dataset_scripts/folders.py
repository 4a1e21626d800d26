"""Output folders replaced whole (a dataset build, an ensemble): written beside their place and
swapped into it, so that the place holds the complete old folder or the complete new one at every
moment, whatever fails. Each folder made beside the place has a marker file beside it while it
exists, and only marked folders are ever cleared away: whatever else is there is the user's.
A folder built elsewhere becomes a cache entry with :func:`moved_into_place`."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import logging
import os
import re
import shutil
import socket
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

log = logging.getLogger(__name__)

AT_FDCWD, RENAME_EXCHANGE = -100, 2  # <fcntl.h>, <linux/fs.h>


@contextmanager
def replaced_whole(folder: Path) -> Iterator[Path]:
    """Yield an empty staging folder ``.<name>.new-*`` beside ``folder``; when the block ends
    without error, swap it into ``folder``'s place and delete the old folder.

    ``folder`` is never missing and never half-written: an error in the block or in the swap
    deletes the staging folder and leaves ``folder`` as it was; after the swap it is the new
    folder, and an old folder that cannot be deleted is left beside it with a warning. The swap
    is one atomic exchange (Linux ``renameat2(RENAME_EXCHANGE)``); where the system or file
    system has none, two renames whose first is undone if the second fails (a process killed
    between them leaves the old folder in ``.<name>.old-*``: :func:`remove_leftovers` puts it
    back). Every folder made beside ``folder`` has its marker (:func:`_marked_folder`) until it
    is gone, so that :func:`remove_leftovers` removes only what this function made; before it
    starts, it clears what killed calls for the same ``folder`` left (``remove_leftovers(parent,
    name)``: those of ended processes on this host).
    """
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    remove_leftovers(folder.parent, folder.name)
    staging = _marked_folder(folder, "new")
    try:
        yield staging
        old = None
        if folder.exists():
            old = _swap(staging, folder)
        else:
            os.rename(staging, folder)
            _unmark(staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        _unmark(staging)
        raise
    if old is not None:
        try:
            shutil.rmtree(old)
        except OSError as exc:
            log.warning("%s is replaced, but its old contents could not be deleted from %s: %s",
                        folder, old, exc)
        else:
            _unmark(old)


def _swap(new: Path, folder: Path) -> Path:
    """Put ``new`` in the place of the existing ``folder``; the path that now holds the old one."""
    if _exchange(new, folder):
        return new  # its marker stays: it now holds the old folder
    aside = _marked_folder(folder, "old")
    try:
        os.rename(folder, aside / folder.name)
    except BaseException:
        aside.rmdir()
        _unmark(aside)
        raise
    try:
        os.rename(new, folder)
    except BaseException as exc:
        try:
            os.rename(aside / folder.name, folder)
        except OSError as undo:
            raise OSError(f"{folder} could not be replaced ({exc}) nor put back ({undo}): the old "
                          f"folder is {aside / folder.name}") from exc
        aside.rmdir()
        _unmark(aside)
        raise
    _unmark(new)
    return aside


MARK = ".semrel-leftover"  # the marker of a folder replaced_whole made: <folder> + MARK, beside it
SIGNATURE = "made by semrel's replaced_whole; remove_leftovers deletes it once its process is gone"
LEFTOVER = re.compile(r"\..+\.(new|old)-[^/]+")  # the names replaced_whole gives its folders


def _marked_folder(folder: Path, kind: str) -> Path:
    """A new empty folder ``.<name>.<kind>-*`` beside ``folder``, its marker written first: a file
    ``<that folder>`` + :data:`MARK` holding :data:`SIGNATURE`, the host and this process's id."""
    handle, mark = tempfile.mkstemp(prefix=f".{folder.name}.{kind}-", suffix=MARK, dir=folder.parent)
    with open(handle, "w", encoding="utf-8") as file:
        file.write(f"{SIGNATURE}\n{socket.gethostname()} {os.getpid()}\n")
    made = Path(mark[: -len(MARK)])
    try:
        made.mkdir()
    except BaseException:
        os.unlink(mark)
        raise
    return made


def _unmark(made: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(f"{made}{MARK}")


def _leftover(mark: Path, *, ended: bool = False) -> Path | None:
    """The folder ``mark`` names when it is the marker of a folder replaced_whole made in a process
    that has ended (or in this one; ``ended``: only in a process on this host that has ended),
    else None: user files, however they are named, are none."""
    made = mark.with_name(mark.name[: -len(MARK)])
    if mark.is_symlink() or not mark.is_file() or not LEFTOVER.fullmatch(made.name):
        return None
    try:
        with open(mark, encoding="utf-8") as file:
            signature, owner = file.read(4096).split("\n")[:2]
        host, pid = owner.split(" ")
        pid = int(pid)
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if signature != SIGNATURE:
        return None
    if ended and (host != socket.gethostname() or pid == os.getpid()):
        return None  # its maker cannot be seen to have ended
    if host == socket.gethostname() and pid != os.getpid() and _running(pid):
        return None  # another process is replacing that folder now
    return made


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a process of another user
        return True
    return True


@cache
def _renameat2():
    return getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)


def _exchange(a: Path, b: Path) -> bool:
    """Swap the paths ``a`` and ``b`` in one step; False (nothing changed) where the C library or
    the file system offers no exchange."""
    renameat2 = _renameat2()
    if renameat2 is None:
        return False
    if renameat2(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(a), None, str(b))


def remove_leftovers(parent: Path, name: str | None = None) -> None:
    """Delete what killed :func:`replaced_whole` calls left in ``parent``: the folders it made,
    recognised by their markers (a user's ``.mydata.old-2023/`` or ``.notes.new-1`` is data and
    stays), except that an old folder whose place is empty is put back. Call it only while no
    other process replaces folders in ``parent`` (e.g. under a lock); a folder whose maker still
    runs on this host is left to it. With ``name``, only the leftovers of the folder ``parent /
    name`` whose maker ran on this host and has ended: safe without a lock."""
    parent = Path(parent)
    own = None if name is None else re.compile(rf"\.{re.escape(name)}\.(new|old)-[^/]+")
    for mark in sorted(parent.glob(f".*{MARK}")):
        made = _leftover(mark, ended=own is not None)
        if made is None or (own is not None and not own.fullmatch(made.name)):
            continue
        if made.is_dir() and not made.is_symlink():
            if LEFTOVER.fullmatch(made.name)[1] == "old":  # the old folder aside: put back where missing
                for old in made.iterdir():
                    if not (parent / old.name).exists():
                        os.rename(old, parent / old.name)
            shutil.rmtree(made)
        mark.unlink()


def moved_into_place(built: Path, target: Path) -> Path:
    """Rename the finished folder ``built`` to ``target`` (a cache entry); where another process
    put its own there first, that one is kept (it is as good) and ``built`` is left to its
    caller to delete."""
    try:
        built.rename(target)
    except OSError:
        if not target.is_dir():
            raise
    return target
