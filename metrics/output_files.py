"""Output files of the metric commands, written whole: beside the target, then renamed in.

A failure (full disk, no permission, kill) leaves the previous file, or none, never a truncated
one, and is one ``ValueError`` naming the argument, the path and the cause (the ``semrel``
command answers it in one line with exit status 2).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


@contextlib.contextmanager
def written_whole(path, argument: str, *, newline: str | None = None):
    """A text handle on a temporary file beside ``path`` (missing parent folders are made); on
    leaving the block the file is synced and renamed to ``path``, or, after an error, removed.

    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "new" / "out.csv"
    >>> with written_whole(out, "--csv") as f:
    ...     _ = f.write("a,b\\n")
    >>> out.read_text()
    'a,b\\n'
    """
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{argument} {path}: is a folder; give the name of the file to write")
    staged = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, staged = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
        os.chmod(staged, 0o666 & ~_umask())  # as open() would make it, not mkstemp's owner-only 0600
        with open(handle, "w", encoding="utf-8", newline=newline) as file:
            yield file
            file.flush()
            os.fsync(file.fileno())
        os.replace(staged, path)
    except OSError as exc:
        if staged is not None:
            with contextlib.suppress(OSError):
                os.unlink(staged)
        cause = ("a folder on its path is a file" if isinstance(exc, (FileExistsError, NotADirectoryError))
                 else exc.strerror or str(exc))
        raise ValueError(f"{argument} {path}: cannot be written ({cause}); "
                         f"{'the previous file is unchanged' if path.is_file() else 'nothing was written'}") from None
    except BaseException:
        if staged is not None:
            with contextlib.suppress(OSError):
                os.unlink(staged)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
