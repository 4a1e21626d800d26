"""Output files of every part, written whole, and the one test of whether a place can be written.

* :func:`written_whole` / :func:`write_whole`: write beside the target, then rename it in
  (``os.replace``). A failure (full disk, no permission, kill) leaves the previous file, or none,
  never a truncated one, and is one exception naming the argument, the path and the cause (by
  default a ``ValueError``, which the ``semrel`` command answers in one line with exit status 2;
  a caller may word it as its own error).
* :func:`check_output`: an output argument, before a command starts its work: never a symbolic
  link (an output is replaced whole, so writing would replace the link, not write through it),
  never a device, FIFO or socket, a file where a file is written and a folder where a folder is,
  and never one of the command's inputs, inside one (a new file beside a data file is fine), or
  (a folder) holding one (:func:`output_problem`, :func:`input_clash`). :func:`written_whole` refuses the same paths.
* :func:`unwritable`: why no file can be created in a folder, made where it is missing (its
  nearest existing ancestor is a file, or creating a file there fails), tried before a command
  starts its work.

Standard library only: every part imports it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from .errors import ParameterError

LINK = "is a symbolic link: an output is replaced whole, never written through a link; give another path"
SPECIAL = "is not a regular file (a device, FIFO or socket); give the path of a {} to write"
FOLDER = "is a folder; give the name of the file to write"
FILE = "is a file, not a folder"
NEVER_AN_INPUT = "an output never replaces an input; give another path"


def output_problem(path, *, folder: bool = False) -> str | None:
    """Why ``path`` cannot be an output file (``folder``: an output folder), or None: it is a
    symbolic link (dangling or not), a device, FIFO or socket, a folder where a file is written
    or a file where a folder is. Only the path itself counts: a link among its parents names
    where it is.

    >>> import os, tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> os.symlink(os.devnull, folder / "out.csv")
    >>> output_problem(folder / "out.csv")
    'is a symbolic link: an output is replaced whole, never written through a link; give another path'
    >>> output_problem(folder / "new.csv") is None
    True
    """
    path = Path(path).expanduser()
    if path.is_symlink():
        return LINK
    try:
        mode = path.stat().st_mode
    except OSError:  # missing, or a parent is a file: the writable probe says so
        return None
    if stat.S_ISDIR(mode):
        return None if folder else FOLDER
    if stat.S_ISREG(mode):
        return FILE if folder else None
    return SPECIAL.format("folder" if folder else "file")


def input_clash(path, inputs: Mapping[str, Iterable], *, folder: bool = False,
                data: Mapping[str, Iterable] | None = None, replaced: Iterable[str] | None = None) -> str | None:
    """Why the output ``path`` would replace an input, or None. ``inputs`` and ``data``: parameter
    -> the paths it names (None, "" and paths that do not exist are skipped). An output may not be
    the same file or folder as either (followed through links, hard links included) nor, when
    ``folder``, hold one; it may not lie inside a folder of ``inputs`` (read or copied whole: a
    model, an ensemble member), nor be an existing file or folder inside one of ``data`` (read in
    part: a data folder, a mirror). ``replaced``: the parts of an output folder the command
    replaces (``hub``, ``report`` of ``semrel build --out``), where it replaces only those; an
    input elsewhere in the folder is left alone. The answer names the input as ``{parameter} path``, for
    :class:`~semrel.metrics.errors.ParameterError` to word."""
    output = Path(path).expanduser()
    real = output.resolve()
    for whole, named_paths in ((True, inputs), (False, data or {})):
        for parameter, values in named_paths.items():
            for value in values or ():
                if value is None or str(value) == "" or not Path(value).expanduser().exists():
                    continue
                source = Path(value).expanduser()
                named = f"{{{parameter}}} {str(value).replace('{', '{{').replace('}', '}}')}"
                if real == source.resolve() or (output.exists() and os.path.samefile(output, source)):
                    kind = "folder" if source.is_dir() else "file"
                    return f"is the same {kind} as {named}: {NEVER_AN_INPUT}"
                if source.is_dir() and real.is_relative_to(source.resolve()) and (
                        whole or output.exists()):
                    return f"lies in {named}, which this command reads: {NEVER_AN_INPUT}"
                if folder and any(source.resolve().is_relative_to(real / part)
                                  for part in (replaced if replaced is not None else ("",))):
                    return f"holds {named}, which this command reads: {NEVER_AN_INPUT}"
    return None


def check_output(path, parameter: str, inputs: Mapping[str, Iterable] | None = None, *,
                 folder: bool = False, data: Mapping[str, Iterable] | None = None,
                 replaced: Iterable[str] | None = None) -> Path:
    """``path`` as an output file (``folder``: an output folder) of a command reading ``inputs``
    and ``data`` (:func:`input_clash`, with ``replaced``): a :class:`~semrel.metrics.errors.ParameterError` on
    ``parameter`` where :func:`output_problem` or :func:`input_clash` says it cannot be one.

    >>> import pathlib, tempfile
    >>> data = pathlib.Path(tempfile.mkdtemp()) / "data.csv"
    >>> _ = data.write_text("Item1,Item2,BestItem,WorstItem")
    >>> again = data.parent / ".." / data.parent.name / "data.csv"  # the same file, spelt otherwise
    >>> check_output(again, "csv", {"files": [data]})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    semrel.metrics.errors.ParameterError: csv='.../../.../data.csv': is the same file as files .../data.csv: ...
    """
    problem = output_problem(path, folder=folder) or input_clash(path, inputs or {}, folder=folder,
                                                                 data=data, replaced=replaced)
    if problem:
        raise ParameterError(parameter, str(path), problem)
    return Path(path).expanduser()


class NotAnOutput(OSError):
    """:func:`written_whole` refuses the path: its ``strerror`` is :func:`output_problem`'s answer."""


def _not_written(argument: str, path: Path, exc: OSError, kept: bool) -> ValueError:
    """The default failure: ``<argument> <path>: cannot be written (<cause>); ...``."""
    if isinstance(exc, IsADirectoryError):
        return ValueError(f"{argument} {path}: {FOLDER}")
    if isinstance(exc, NotAnOutput):
        return ValueError(f"{argument} {path}: {exc.strerror}")
    cause = ("a folder on its path is a file" if isinstance(exc, (FileExistsError, NotADirectoryError))
             else exc.strerror or str(exc))
    return ValueError(f"{argument} {path}: cannot be written ({cause}); "
                      f"{'the previous file is unchanged' if kept else 'nothing was written'}")


@contextlib.contextmanager
def written_whole(path, argument: str, *, newline: str | None = None, error=None, binary: bool = False):
    """A text handle (``binary``: a bytes handle) on a temporary file beside ``path`` (missing
    parent folders are made); on leaving the block the file is synced and renamed to ``path``,
    or, after an error, removed.

    ``error(exc, kept)`` makes the exception raised when ``path`` cannot be written (``exc``: the
    ``OSError``, an ``IsADirectoryError`` where ``path`` is a folder, a :class:`NotAnOutput` where
    it is a link, a device, FIFO or socket; ``kept``: whether a previous file is still there); by
    default a ``ValueError`` naming ``argument`` and ``path``.

    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "new" / "out.csv"
    >>> with written_whole(out, "--csv") as f:
    ...     _ = f.write("a,b\\n")
    >>> out.read_text()
    'a,b\\n'
    """
    path = Path(path)
    error = error or (lambda exc, kept: _not_written(argument, path, exc, kept))
    problem = output_problem(path)
    if problem == FOLDER:
        raise error(IsADirectoryError(errno.EISDIR, "Is a directory", str(path)), True)
    if problem:
        raise error(NotAnOutput(errno.EINVAL, problem, str(path)), True)
    staged = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, staged = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
        os.chmod(staged, 0o666 & ~_umask())  # as open() would make it, not mkstemp's owner-only 0600
        with (open(handle, "wb") if binary else open(handle, "w", encoding="utf-8", newline=newline)) as file:
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


def write_whole(path, text: str | bytes, argument: str, *, error=None) -> Path:
    """``text`` (or bytes) written to ``path`` by :func:`written_whole`; returns the path."""
    with written_whole(path, argument, error=error, binary=isinstance(text, bytes)) as file:
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
