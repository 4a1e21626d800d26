"""Upstream files: where they live, their checksum, their licence; fetching with a mirror.

A :class:`Source` is fetched through the ``datasets`` download manager (so downloads are
cached) unless a mirror is configured, in which case the file must be at
``<mirror>/<dataset_id>/<file_name>`` (the layout of ``../shared/upstream``). Either way the
sha256 is verified; a mismatch or an absent file raises :class:`SourceError` naming the file,
the expected and actual hash and every place looked at (an absent or undownloadable file:
:class:`SourceNotFound`, a subclass).

Test fixtures: a folder named in ``$SEMREL_FIXTURE_MIRROR`` holds small files of the upstream
formats in the mirror layout, each dataset folder with a ``SHA256SUMS`` of its own (``sha256sum``
format, paths relative to the dataset folder). A file found in such a folder is checked against
that list instead of the upstream digest; every other folder, and every download, is checked
against the upstream digest as always. Only the test suite sets the variable.

Checking costs little on repeated use: a file's digest is remembered for its
:func:`file_signature` (path, device, inode, size, mtime and ctime in ns), so a file not changed
since it was hashed is not read again in this process, and a cached build records the signatures
it verified (:func:`recording`, :func:`remember`) so that a later process re-checks them by ``stat``
alone. A file changed in the last two seconds has no signature (an edit within the timestamps'
granularity could keep it) and is hashed every time.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from pathlib import Path

from semrel.metrics.errors import ParameterError

from .errors import SourceError, SourceNotFound

MIRROR_ENV = "SEMREL_MIRROR"
# the shared mirror of a development checkout (<checkout>/../shared/upstream), relative to the
# working directory; used when neither an argument nor $SEMREL_MIRROR names one
CHECKOUT_MIRROR = Path("..") / "shared" / "upstream"
FIXTURE_ENV = "SEMREL_FIXTURE_MIRROR"
FIXTURE_SUMS = "SHA256SUMS"
SETTLED_NS = 2_000_000_000  # a file changed more recently than this has no file_signature
_DIGESTS: dict[tuple, str] = {}  # file_signature -> sha256 of the bytes it had
_RECORDS: ContextVar[list[dict] | None] = ContextVar("semrel_fetched", default=None)


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


def check_mirror(mirror: str | os.PathLike | None, parameter: str = "mirror") -> None:
    """Each ``os.pathsep``-separated part of ``mirror`` a directory, else a ParameterError on
    ``parameter`` naming the part."""
    for part in str(mirror or "").split(os.pathsep):
        if part and not Path(part).expanduser().is_dir():
            kind = "is a file, not a directory" if Path(part).expanduser().is_file() else "no such directory"
            raise ParameterError(parameter, part, f"{kind} (expected <mirror>/<dataset-id>/<file>)")


def fixture_dirs() -> list[Path]:
    """The folders of test fixtures named in ``$SEMREL_FIXTURE_MIRROR`` (``os.pathsep``-separated)."""
    return [Path(d).expanduser().resolve() for d in os.environ.get(FIXTURE_ENV, "").split(os.pathsep) if d]


def fixture_sums(folder: Path, dataset_id: str) -> dict[str, str]:
    """``{path relative to the dataset folder: sha256}`` of ``<folder>/<dataset_id>/SHA256SUMS``."""
    path = folder / dataset_id / FIXTURE_SUMS
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    return {name.lstrip("*"): digest for digest, name in (line.split(maxsplit=1) for line in lines if line.strip())}


def fixture_key(mirror=None) -> dict[str, str]:
    """Cache-key material of the fixture folders among the mirror directories (their
    ``SHA256SUMS`` files), so a build from fixtures never shares a cache entry with the real data."""
    fixtures = set(fixture_dirs())
    key = {}
    for folder in (d for d in mirror_dirs(mirror) if d in fixtures):
        digest = hashlib.sha256()
        for sums in sorted(folder.glob(f"*/{FIXTURE_SUMS}")):
            digest.update(sums.parent.name.encode() + b"\0" + sums.read_bytes())
        key[f"fixture mirror {folder}"] = digest.hexdigest()
    return key


def sha256_of(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_signature(path: str | os.PathLike) -> tuple | None:
    """``(resolved path, device, inode, size, mtime_ns, ctime_ns)`` of a file, or None when it
    changed less than :data:`SETTLED_NS` ago. Any write changes mtime and ctime (ctime cannot be set
    back), so the same signature means the same bytes."""
    stat = os.stat(path)
    if time.time_ns() - max(stat.st_mtime_ns, stat.st_ctime_ns) < SETTLED_NS:
        return None
    return (str(Path(path).resolve()), stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns,
            stat.st_ctime_ns)


def checked_sha256(path: str | os.PathLike) -> str:
    """:func:`sha256_of` ``path``, remembered for its :func:`file_signature`: a file hashed before
    (or recorded by a cached build, :func:`remember`) and unchanged since is not read again."""
    signature = file_signature(path)
    if signature is not None and signature in _DIGESTS:
        return _DIGESTS[signature]
    digest = sha256_of(path)
    if signature is not None and file_signature(path) == signature:  # unchanged while read
        _DIGESTS[signature] = digest
    return digest


@contextmanager
def recording() -> Iterator[list[dict]]:
    """Collect every file :func:`fetch` returns inside the block, once each:
    ``{"source": <Source fields>, "signature": file_signature or None, "sha256": digest}``."""
    records: list[dict] = []
    token = _RECORDS.set(records)
    try:
        yield records
    finally:
        _RECORDS.reset(token)


def remember(records: list[dict]) -> None:
    """Take the digests of :func:`recording`'s ``records`` (a cached build's files) as known."""
    for record in records:
        if record["signature"] is not None:
            _DIGESTS.setdefault(tuple(record["signature"]), record["sha256"])


def _checked(source: Source, path: str, digest: str) -> str:
    """``path``, the checked file of ``source``, recorded where :func:`recording` is on."""
    records = _RECORDS.get()
    if records is not None and all(r["source"] != asdict(source) for r in records):
        records.append({"source": asdict(source), "signature": file_signature(path), "sha256": digest})
    return path


def fetch(source: Source, dl_manager=None, mirror=None) -> str:
    """Return a verified local path of ``source``.

    With a mirror, only the mirror directories are looked at (machines without internet);
    otherwise the URL is downloaded through ``dl_manager`` (a ``datasets`` DownloadManager).
    """
    dirs = mirror_dirs(mirror)
    if dirs:
        looked = [d / source.dataset_id / source.file_name for d in dirs]
        found = next(((d, p) for d, p in zip(dirs, looked, strict=True) if p.is_file()), None)
        if found is None:
            raise SourceNotFound(
                f"{source.file_name} of {source.dataset_id!r} not found; looked at: "
                + ", ".join(map(str, looked))
                + f". Download it from {source.url} (sha256 {source.sha256}) into one of them."
            )
        folder, path = found[0], str(found[1])
        if folder in fixture_dirs():
            return _checked_fixture(source, folder)
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
    actual = checked_sha256(path)
    if actual != source.sha256:
        raise SourceError(
            f"{source.file_name} of {source.dataset_id!r}: sha256 mismatch at {path}: "
            f"expected {source.sha256}, got {actual} (looked at: {', '.join(map(str, looked))})"
        )
    return _checked(source, path, actual)


def _checked_fixture(source: Source, folder: Path) -> str:
    """The file of ``source`` in the fixture folder ``folder``, checked against its dataset
    folder's ``SHA256SUMS``."""
    path = folder / source.dataset_id / source.file_name
    sums = folder / source.dataset_id / FIXTURE_SUMS
    expected = fixture_sums(folder, source.dataset_id).get(source.file_name)
    actual = checked_sha256(path)
    if expected is None:
        raise SourceError(f"{source.file_name} of {source.dataset_id!r}: test fixture at {path} "
                          f"is not listed in {sums} (${FIXTURE_ENV} names {folder})")
    if actual != expected:
        raise SourceError(f"{source.file_name} of {source.dataset_id!r}: sha256 mismatch at "
                          f"{path}: expected {expected} (test fixture, {sums}), got {actual}")
    return _checked(source, str(path), actual)
