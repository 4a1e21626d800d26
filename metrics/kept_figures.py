"""Figures kept on disk, keyed by what they are computed from: a costly figure (a human ceiling, a
bootstrap interval) is computed once and read back exactly until its inputs or its code change.

A figure is one JSON file, ``<folder>/<key>.json``, the key (:func:`figure_key`) the sha256 of

- the name of the computing function and its arguments (the digests of the data it reads, never
  where the data was read from),
- the digest of the source of ``semrel.dataset_scripts`` and ``semrel.metrics``
  (:func:`code_digest`: any change to the code that computes a figure gives a new key), and
- the versions of numpy, scipy and pandas,

so a changed input, a changed semrel or another library computes it again, and an unchanged one
reads it back exactly (JSON floats round-trip). The file holds the sha256 of its figures: one that
does not parse or fails the check is computed again and rewritten, with one warning
(:func:`read_figure`). A file is written beside its name and moved into place whole; where it cannot
be written, the figure stands, with one warning, never a failed run (:func:`write_figure`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import warnings
from importlib import import_module
from importlib.metadata import version
from pathlib import Path

CODE = ("semrel.dataset_scripts", "semrel.metrics")  # the packages that compute the kept figures
LIBRARIES = ("numpy", "scipy", "pandas")


def cache_root() -> Path:
    """semrel's cache folder: ``$SEMREL_CACHE``, else ``~/.cache/semrel``."""
    root = os.environ.get("SEMREL_CACHE")
    return Path(root).expanduser() if root else Path("~/.cache/semrel").expanduser()


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """sha256 over the relative path and bytes of every ``.py`` file of the :data:`CODE` packages."""
    digest = hashlib.sha256()
    for name in CODE:
        root = Path(import_module(name).__file__).parent
        for path in sorted(root.rglob("*.py")):
            digest.update(f"{name}/{path.relative_to(root).as_posix()}\0".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def figure_key(name: str, arguments: dict) -> str:
    """The file name (without ``.json``) a result of the function ``name`` (module and qualified
    name) on ``arguments`` (JSON-ready, or written by ``str``) is kept under."""
    described = [name, arguments, code_digest(), {library: version(library) for library in LIBRARIES}]
    return hashlib.sha256(json.dumps(described, sort_keys=True, default=str).encode()).hexdigest()


def _checksum(fields) -> str:
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def read_figure(path: Path, decode):
    """``decode(fields)`` of the figure kept at ``path``; None where there is none, or where it is
    damaged (one warning: it does not parse, fails its sha256, or ``decode`` refuses it)."""
    if not path.is_file():
        return None
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
        if _checksum(stored["figure"]) != stored["sha256"]:
            raise ValueError("its figures fail their sha256")
        return decode(stored["figure"])
    except (ValueError, KeyError, TypeError) as exc:
        warnings.warn(f"{path}: a damaged kept figure ({exc}); computed again", stacklevel=2)
        return None


def write_figure(path: Path, fields) -> None:
    """``fields`` (JSON-ready) kept at ``path``, written beside it and moved into place whole; a
    warning where that cannot be done."""
    part = path.with_name(f"{path.name}.{os.getpid()}.part")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        part.write_text(json.dumps({"figure": fields, "sha256": _checksum(fields)}, indent=1), encoding="utf-8")
        os.replace(part, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            part.unlink(missing_ok=True)
        warnings.warn(f"{path.parent}: the figure cannot be kept ({exc.strerror or exc}); it is computed again "
                      "on the next run", stacklevel=2)


def kept(folder: Path, name: str, arguments: dict, compute, *, encode, decode):
    """The figure of the function ``name`` on ``arguments`` read from ``folder``, else
    ``compute()`` kept there (``encode``: the figure as JSON-ready fields; ``decode``: back)."""
    path = folder / f"{figure_key(name, arguments)}.json"
    figure = read_figure(path, decode)
    if figure is None:
        figure = compute()
        write_figure(path, encode(figure))
    return figure
