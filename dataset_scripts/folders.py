"""Output folders replaced whole: written beside their place and renamed into it, so a failed
write leaves the earlier folder as it was (a dataset build, an ensemble)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def replaced_whole(folder: Path) -> Iterator[Path]:
    """Yield an empty staging folder ``.<name>.new-*`` beside ``folder``. When the block ends
    without error the staging folder takes ``folder``'s place (renames; the old folder, moved to
    ``.<name>.old-*``, is deleted last); on any error it is deleted and ``folder`` is untouched."""
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.new-", dir=folder.parent))
    try:
        yield staging
        old = None
        if folder.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{folder.name}.old-", dir=folder.parent))
            os.rename(folder, old / folder.name)
        os.rename(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old)
