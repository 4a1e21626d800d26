"""Upstream files: where they live, their checksum, their licence; fetching with a mirror.

A :class:`Source` is fetched through the ``datasets`` download manager (so downloads are
cached) unless a mirror is configured, in which case the file must be at
``<mirror>/<dataset_id>/<file_name>`` (the layout of ``../shared/upstream``). Either way the
sha256 is verified; a mismatch or an absent file raises :class:`SourceError` naming the file,
the expected and actual hash and every place looked at (an absent or undownloadable file:
:class:`SourceNotFound`, a subclass).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from .errors import SourceError, SourceNotFound

MIRROR_ENV = "SEMREL_MIRROR"
# the shared mirror of a development checkout (<checkout>/../shared/upstream), relative to the
# working directory; used when neither an argument nor $SEMREL_MIRROR names one
CHECKOUT_MIRROR = Path("..") / "shared" / "upstream"


@dataclass(frozen=True)
class Source:
    """One upstream file and the terms under which it may be used."""

    dataset_id: str
    file_name: str
    url: str
    sha256: str
    licence: str
    licence_url: str
    redistributable: bool


def mirror_dirs(mirror: str | os.PathLike | list | None = None) -> list[Path]:
    """Mirror directories: the argument, else ``$SEMREL_MIRROR`` (``os.pathsep``-separated), else
    ``../shared/upstream`` where that directory exists; none (download) otherwise. Every command
    and API that reads upstream files finds its mirror here."""
    if mirror is None:
        mirror = os.environ.get(MIRROR_ENV) or None
    if mirror is None:
        return [CHECKOUT_MIRROR.resolve()] if CHECKOUT_MIRROR.is_dir() else []
    if isinstance(mirror, (str, os.PathLike)):
        mirror = [p for p in str(mirror).split(os.pathsep) if p]
    return [Path(m).expanduser().resolve() for m in mirror]


def sha256_of(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch(source: Source, dl_manager=None, mirror=None) -> str:
    """Return a verified local path of ``source``.

    With a mirror, only the mirror directories are looked at (machines without internet);
    otherwise the URL is downloaded through ``dl_manager`` (a ``datasets`` DownloadManager).
    """
    dirs = mirror_dirs(mirror)
    if dirs:
        looked = [d / source.dataset_id / source.file_name for d in dirs]
        found = next((p for p in looked if p.is_file()), None)
        if found is None:
            raise SourceNotFound(
                f"{source.file_name} of {source.dataset_id!r} not found; looked at: "
                + ", ".join(map(str, looked))
                + f". Download it from {source.url} (sha256 {source.sha256}) into one of them."
            )
        path = str(found)
    else:
        looked = [source.url]
        if dl_manager is None:
            from datasets import DownloadManager

            dl_manager = DownloadManager(dataset_name=source.dataset_id)
        try:
            path = dl_manager.download(source.url)
        except Exception as exc:  # network errors come in many types
            raise SourceNotFound(
                f"{source.file_name} of {source.dataset_id!r} could not be downloaded from "
                f"{source.url} ({exc}); set {MIRROR_ENV} or --mirror to a directory holding "
                f"{source.dataset_id}/{source.file_name}"
            ) from exc
    actual = sha256_of(path)
    if actual != source.sha256:
        raise SourceError(
            f"{source.file_name} of {source.dataset_id!r}: sha256 mismatch at {path}: "
            f"expected {source.sha256}, got {actual} (looked at: {', '.join(map(str, looked))})"
        )
    return path
