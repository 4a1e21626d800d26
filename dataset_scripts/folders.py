"""Output folders replaced whole (a dataset build, an ensemble): written beside their place and
swapped into it, so that the place holds the complete old folder or the complete new one at every
moment, whatever fails."""

from __future__ import annotations

import ctypes
import errno
import logging
import os
import shutil
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
    back).
    """
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.new-", dir=folder.parent))
    try:
        yield staging
        old = None
        if folder.exists():
            old = _swap(staging, folder)
        else:
            os.rename(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if old is not None:
        try:
            shutil.rmtree(old)
        except OSError as exc:
            log.warning("%s is replaced, but its old contents could not be deleted from %s: %s",
                        folder, old, exc)


def _swap(new: Path, folder: Path) -> Path:
    """Put ``new`` in the place of the existing ``folder``; the path that now holds the old one."""
    if _exchange(new, folder):
        return new
    aside = Path(tempfile.mkdtemp(prefix=f".{folder.name}.old-", dir=folder.parent))
    try:
        os.rename(folder, aside / folder.name)
    except BaseException:
        aside.rmdir()
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
        raise
    return aside


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


def remove_leftovers(parent: Path) -> None:
    """Delete what killed :func:`replaced_whole` calls left in ``parent`` (``.<name>.new-*``,
    ``.<name>.old-*``), except an old folder whose place is empty: that one is put back. Call it
    only while no other process replaces folders in ``parent`` (e.g. under a lock)."""
    for aside in Path(parent).glob(".*.old-*"):
        for old in aside.iterdir():
            if not (Path(parent) / old.name).exists():
                os.rename(old, Path(parent) / old.name)
        shutil.rmtree(aside)
    for staging in Path(parent).glob(".*.new-*"):
        shutil.rmtree(staging, ignore_errors=True)
