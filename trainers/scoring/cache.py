"""What a model computed for a text unit (a sentence's embedding, a pair's cross-encoder score),
kept on disk so that no model encodes the same unit twice: :class:`UnitCache`.

One SQLite database per model (``<folder>/<model key>.sqlite``; the key is the model's content
hash with the settings that change its output, :attr:`~.base.Scorer.key`), a table of
``(unit key, token count, value, checksum)``: the unit key is the sha256 of the unit's texts
(:func:`unit_key`), the token count the unit's length before truncation (so a cached unit still
says whether it was cut), the value the float32 vector. Each batch is written in one
transaction: a run killed at any point leaves every batch it finished, and SQLite's journal
rolls an unfinished one back on the next open, so the file is never half-written. Several
processes may read and write one database (SQLite locks it; WAL mode).

The folder is ``$SEMREL_CACHE/scores``, else ``~/.cache/semrel/scores`` (beside the packaged
models' ``~/.cache/semrel/models``); a folder in which no file can be created is a
ParameterError before any work (:func:`checked_folder`). Its ``hashes.sqlite`` remembers each
model folder's content hash against its files' signatures (:func:`remembered_hash`), so an
unchanged model is not read whole again to find its key.

A cache never lies and never stops a run: every row carries the CRC-32 of its fields, checked
when it is read, and a file that SQLite finds damaged (not a database, malformed) or that holds
a row failing its check is deleted, with one warning naming it, and made anew: what it held is
computed again. A file in another layout (its ``user_version`` not :data:`FORMAT`) has its
rows dropped on open.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import zlib
from pathlib import Path

import numpy as np

from semrel.metrics.errors import ParameterError

log = logging.getLogger(__name__)

# a rowid table on 16 KiB pages: a 384-1024-dim float32 vector fits a page (a WITHOUT ROWID table
# spills rows over ~1/4 page into overflow pages: measured 4x slower to write, 10x to read, 3x the size)
PAGE_SIZE = 16384
FORMAT = 1  # PRAGMA user_version of this layout (rows with a checksum)
SCHEMA = ("CREATE TABLE IF NOT EXISTS units (key BLOB PRIMARY KEY, tokens INTEGER NOT NULL, "
          "value BLOB NOT NULL, checksum INTEGER NOT NULL)")
ABOUT = ("CREATE TABLE IF NOT EXISTS about (name TEXT PRIMARY KEY, value TEXT NOT NULL, "
         "checksum INTEGER NOT NULL)")
HASHES = ("CREATE TABLE IF NOT EXISTS hashes (path TEXT PRIMARY KEY, signature TEXT NOT NULL, "
          "hash TEXT NOT NULL, checksum INTEGER NOT NULL)")
HASHES_FILE = "hashes.sqlite"
CHUNK = 500  # keys per SELECT (SQLite's bound-parameter limit is 32766 in recent builds, 999 in old)
DAMAGE_CODES = (11, 26)  # SQLITE_CORRUPT, SQLITE_NOTADB: the file is damaged


def default_cache_dir() -> Path:
    """``$SEMREL_CACHE/scores``, else ``~/.cache/semrel/scores``."""
    from semrel.metrics.kept_figures import cache_root

    return cache_root() / "scores"


def checked_folder(folder=None, parameter: str = "cache_dir") -> Path:
    """``folder`` (None: :func:`default_cache_dir`) as the score cache: a folder, or one that can be
    made, in which files can be created (:func:`~trainers.run_folder.check_output_folder`); a
    ParameterError on ``parameter`` otherwise."""
    from ..run_folder import check_output_folder

    if folder is not None:
        return check_output_folder(folder, parameter)
    try:
        return check_output_folder(default_cache_dir(), parameter)
    except ParameterError as exc:
        raise ParameterError(parameter, exc.value, f"{exc.rule}; it is the default ($SEMREL_CACHE/scores, "
                             "else ~/.cache/semrel/scores)") from None


def checked_caches(cache_dir=None, score_cache=True) -> Path | None:
    """``cache_dir`` (the datasets cache) and ``score_cache`` (:func:`checked_folder` of a folder or,
    True, the default; False: none) as folders to write into; the score cache's folder, or None."""
    from ..run_folder import check_output_folder

    if cache_dir is not None:
        check_output_folder(cache_dir, "cache_dir")
    return None if score_cache is False else checked_folder(None if score_cache is True else score_cache,
                                                            "score_cache")


def unit_key(parts: tuple[str, ...]) -> bytes:
    """sha256 of a unit's texts (one sentence; a sentence and its condition; a pair), as the
    JSON list of its parts, so no two different units share a key."""
    return hashlib.sha256(json.dumps(list(parts), ensure_ascii=False).encode("utf-8")).digest()


class DamagedCache(sqlite3.DatabaseError):
    """A row of a cache file fails its checksum."""


def _checksum(*fields) -> int:
    """CRC-32 of a row's fields (bytes as they are, others as their text), each after its length."""
    crc = 0
    for field in fields:
        data = bytes(field) if isinstance(field, (bytes, memoryview)) else str(field).encode()
        crc = zlib.crc32(data, zlib.crc32(len(data).to_bytes(8, "little"), crc))
    return crc


def _checked(row: tuple) -> tuple:
    """``row`` without its checksum (the last field); a DamagedCache where it does not match."""
    if _checksum(*row[:-1]) != row[-1]:
        raise DamagedCache("a row fails its checksum")
    return row[:-1]


def _damaged(exc: sqlite3.DatabaseError) -> bool:
    """Whether ``exc`` says the file is damaged (rather than locked, read-only or on a full disk)."""
    if isinstance(exc, DamagedCache):
        return True
    code = getattr(exc, "sqlite_errorcode", None)  # Python >= 3.11
    if code is not None:
        return code & 0xFF in DAMAGE_CODES
    return "malformed" in str(exc) or "not a database" in str(exc)


def _opened(path: Path, tables: tuple[str, ...]) -> sqlite3.Connection:
    """``path`` connected (WAL; made where missing) with ``tables`` in the :data:`FORMAT` layout;
    the tables of another layout are dropped first."""
    db = sqlite3.connect(path, timeout=60, isolation_level=None)
    try:
        db.execute(f"PRAGMA page_size={PAGE_SIZE}")  # takes effect on a new file only
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        with db:
            db.execute("BEGIN IMMEDIATE")
            if db.execute("PRAGMA user_version").fetchone()[0] != FORMAT:
                for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
                    db.execute(f'DROP TABLE "{name}"')
                db.execute(f"PRAGMA user_version={FORMAT}")
            for table in tables:
                db.execute(table)
    except BaseException:
        db.close()
        raise
    return db


class _CacheFile:
    """One SQLite file of the cache with its ``tables``; where it turns out damaged
    (:func:`_damaged`), on open or in :meth:`run`, it is deleted, one warning naming it, and made
    anew. Damage is found as the file is read: SQLite reports a damaged page it reads, the row
    checksums a changed value (``PRAGMA quick_check`` on open would read the whole file, measured
    0.18 s for a 166 MB cache, and miss a changed value)."""

    def __init__(self, path: Path, tables: tuple[str, ...]):
        self.path, self.tables = path, tables
        try:
            self.db = _opened(path, tables)
        except sqlite3.DatabaseError as exc:
            if not _damaged(exc):
                raise
            self._renew(exc)

    def run(self, work, fallback):
        """``work(db)``; where the file turns out damaged, ``fallback(db)`` on the new one."""
        try:
            return work(self.db)
        except sqlite3.DatabaseError as exc:
            if not _damaged(exc):
                raise
            self.db.close()
            self._renew(exc)
        return fallback(self.db)

    def _renew(self, exc: sqlite3.DatabaseError) -> None:
        log.warning("%s: a damaged score cache file (%s): deleted and made anew; what it held is "
                    "computed again", self.path, exc)
        for suffix in ("", "-wal", "-shm"):
            self.path.with_name(self.path.name + suffix).unlink(missing_ok=True)
        self.db = _opened(self.path, self.tables)

    def close(self) -> None:
        self.db.close()


class UnitCache:
    """The stored units of one model (``model_key``) in ``folder``; ``about`` (the model's spec
    and settings, JSON) is written beside them for whoever opens the file."""

    def __init__(self, folder: str | os.PathLike, model_key: str, about: dict | None = None):
        folder = checked_folder(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / f"{model_key}.sqlite"
        self._file = _CacheFile(self.path, (SCHEMA, ABOUT))

        def write(db):
            self._write_about(db, about or {}, "INSERT OR IGNORE")

        self._file.run(write, write)

    @staticmethod
    def _write_about(db: sqlite3.Connection, about: dict, insert: str) -> None:
        with db:
            db.execute("BEGIN")
            for name, value in about.items():
                text = json.dumps(value)
                db.execute(f"{insert} INTO about VALUES (?, ?, ?)", (name, text, _checksum(name, text)))

    def get(self, keys: list[bytes]) -> dict[bytes, tuple[int, np.ndarray]]:
        """The stored ``(tokens, value)`` of each of ``keys`` that is there."""
        return self._file.run(lambda db: self._read(db, keys), lambda db: {})

    @staticmethod
    def _read(db: sqlite3.Connection, keys: list[bytes]) -> dict[bytes, tuple[int, np.ndarray]]:
        found = {}
        for start in range(0, len(keys), CHUNK):
            chunk = keys[start:start + CHUNK]
            marks = ",".join("?" * len(chunk))
            for row in db.execute(f"SELECT key, tokens, value, checksum FROM units WHERE key IN ({marks})",
                                  chunk):
                key, tokens, value = _checked(row)
                found[bytes(key)] = (int(tokens), np.frombuffer(value, dtype=np.float32))
        return found

    def put(self, rows: list[tuple[bytes, int, np.ndarray]]) -> None:
        """Store ``(key, tokens, value)`` rows in one transaction (all or none)."""
        values = [(k, int(t), np.asarray(v, dtype=np.float32).tobytes()) for k, t, v in rows]

        def write(db):
            with db:
                db.execute("BEGIN")
                db.executemany("INSERT OR REPLACE INTO units VALUES (?, ?, ?, ?)",
                               [(*row, _checksum(*row)) for row in values])

        self._file.run(write, write)

    def get_about(self, name: str):
        """The JSON value stored under ``name`` (None where there is none)."""
        def read(db):
            row = db.execute("SELECT name, value, checksum FROM about WHERE name = ?", (name,)).fetchone()
            return None if row is None else json.loads(_checked(row)[1])

        return self._file.run(read, lambda db: None)

    def set_about(self, name: str, value) -> None:
        def write(db):
            self._write_about(db, {name: value}, "INSERT OR REPLACE")

        self._file.run(write, write)

    def __len__(self) -> int:
        return self._file.run(lambda db: db.execute("SELECT COUNT(*) FROM units").fetchone()[0],
                              lambda db: 0)

    def close(self) -> None:
        self._file.close()


def _signature(model: Path) -> str | None:
    """sha256 of every file's relative path and
    :func:`~semrel.dataset_scripts.sources.file_signature` (path, device, inode, size, mtime and
    ctime: ctime cannot be set back, so a file rewritten with its size and mtime restored signs
    anew); None where a file changed too recently to sign."""
    from semrel.dataset_scripts.sources import file_signature

    signs = []
    for file in sorted(p for p in model.rglob("*") if p.is_file()):
        sign = file_signature(file)
        if sign is None:
            return None
        signs.append([file.relative_to(model).as_posix(), *sign])
    return hashlib.sha256(json.dumps(signs).encode()).hexdigest()


def remembered_hash(folder: str | os.PathLike, model: Path, compute) -> str:
    """``compute(model)`` (a content hash), remembered in ``folder/hashes.sqlite`` against the
    model's signature (:func:`_signature`): a model whose files did not change is not hashed
    again; one with a file changed in the last seconds, or while it was hashed, is hashed and
    not remembered."""
    folder, model = checked_folder(folder), Path(model)
    folder.mkdir(parents=True, exist_ok=True)
    where, signature = str(model.resolve()), _signature(model)
    cache = _CacheFile(folder / HASHES_FILE, (HASHES,))
    try:
        def known(db):
            row = db.execute("SELECT path, signature, hash, checksum FROM hashes WHERE path = ?",
                             (where,)).fetchone()
            return None if row is None or _checked(row)[1] != signature else row[2]

        digest = None if signature is None else cache.run(known, lambda db: None)
        if digest is not None:
            return digest
        digest = compute(model)
        if signature is not None and _signature(model) == signature:
            def remember(db):
                row = (where, signature, digest)
                db.execute("INSERT OR REPLACE INTO hashes VALUES (?, ?, ?, ?)", (*row, _checksum(*row)))

            cache.run(remember, remember)
        return digest
    finally:
        cache.close()
