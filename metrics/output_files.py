"""Output files of every part, written whole, and the one test of whether a place can be written.

* :func:`written_whole` / :func:`write_whole`: write beside the target, then rename it in
  (``os.replace``). A failure (full disk, no permission, kill) leaves the previous file, or none,
  never a truncated one, and is one exception naming the argument, the path and the cause (by
  default a ``ValueError``, which the ``semrel`` command answers in one line with exit status 2;
  a caller may word it as its own error).
* :func:`unwritable`: why no file can be created in a folder, made where it is missing (its
  nearest existing ancestor is a file, or creating a file there fails), tried before a command
  starts its work.

Standard library only: every part imports it.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def _not_written(argument: str, path: Path, exc: OSError, kept: bool) -> ValueError:
    """The default failure: ``<argument> <path>: cannot be written (<cause>); ...``."""
    if isinstance(exc, IsADirectoryError):
        return ValueError(f"{argument} {path}: is a folder; give the name of the file to write")
    cause = ("a folder on its path is a file" if isinstance(exc, (FileExistsError, NotADirectoryError))
             else exc.strerror or str(exc))
    return ValueError(f"{argument} {path}: cannot be written ({cause}); "
                      f"{'the previous file is unchanged' if kept else 'nothing was written'}")


@contextlib.contextmanager
def written_whole(path, argument: str, *, newline: str | None = None, error=None):
    """A text handle on a temporary file beside ``path`` (missing parent folders are made); on
    leaving the block the file is synced and renamed to ``path``, or, after an error, removed.

    ``error(exc, kept)`` makes the exception raised when ``path`` cannot be written (``exc``: the
    ``OSError``, an ``IsADirectoryError`` where ``path`` is a folder; ``kept``: whether a previous
    file is still there); by default a ``ValueError`` naming ``argument`` and ``path``.

    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "new" / "out.csv"
    >>> with written_whole(out, "--csv") as f:
    ...     _ = f.write("a,b\\n")
    >>> out.read_text()
    'a,b\\n'
    """
    path = Path(path)
    error = error or (lambda exc, kept: _not_written(argument, path, exc, kept))
    if path.is_dir():
        raise error(IsADirectoryError(21, "Is a directory", str(path)), True)
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
        raise error(exc, path.is_file()) from None
    except BaseException:
        if staged is not None:
            with contextlib.suppress(OSError):
                os.unlink(staged)
        raise


def write_whole(path, text: str, argument: str, *, error=None) -> Path:
    """``text`` written to ``path`` by :func:`written_whole`; returns the path."""
    with written_whole(path, argument, error=error) as file:
        file.write(text)
    return Path(path)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def unwritable(folder) -> tuple[Path, str | None] | None:
    """Why no file can be created in ``folder`` (made first where it is missing): None when its
    nearest existing ancestor, itself included, is a folder in which a file can be created (tried:
    one is created and removed), else ``(that ancestor, reason)``, ``reason`` None where the
    ancestor is a file, else the system's words.

    >>> import tempfile, pathlib
    >>> unwritable(pathlib.Path(tempfile.mkdtemp()) / "new") is None
    True
    """
    where = Path(folder)
    while not where.exists() and where != where.parent:
        where = where.parent
    if not where.is_dir():
        return where, None
    try:
        handle, probe = tempfile.mkstemp(prefix=".semrel-probe-", dir=where)
    except OSError as exc:
        return where, exc.strerror or str(exc)
    os.close(handle)
    os.unlink(probe)
    return None
