"""What a model computed for a text unit (a sentence's embedding, a pair's cross-encoder score),
kept on disk so that no model encodes the same unit twice: :class:`UnitCache`.

One SQLite database per model (``<folder>/<model key>.sqlite``; the key is the model's content
hash with the settings that change its output, :attr:`~.base.Scorer.key`), a table of
``(unit key, token count, value)``: the unit key is the sha256 of the unit's texts
(:func:`unit_key`), the token count the unit's length before truncation (so a cached unit still
says whether it was cut), the value the float32 vector. Each batch is written in one
transaction: a run killed at any point leaves every batch it finished, and SQLite's journal
rolls an unfinished one back on the next open, so the file is never half-written. Several
processes may read and write one database (SQLite locks it; WAL mode).

The folder is ``$SEMREL_CACHE/scores``, else ``~/.cache/semrel/scores`` (beside the packaged
models' ``~/.cache/semrel/models``). Its ``hashes.sqlite`` remembers each model folder's content
hash against its files' sizes and times (:func:`remembered_hash`), so an unchanged model is not
read whole again to find its key.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path

import numpy as np

# a rowid table on 16 KiB pages: a 384-1024-dim float32 vector fits a page (a WITHOUT ROWID table
# spills rows over ~1/4 page into overflow pages: measured 4x slower to write, 10x to read, 3x the size)
PAGE_SIZE = 16384
SCHEMA = ("CREATE TABLE IF NOT EXISTS units (key BLOB PRIMARY KEY, tokens INTEGER NOT NULL, "
          "value BLOB NOT NULL)")
ABOUT = "CREATE TABLE IF NOT EXISTS about (name TEXT PRIMARY KEY, value TEXT NOT NULL)"
CHUNK = 500  # keys per SELECT (SQLite's bound-parameter limit is 32766 in recent builds, 999 in old)


def default_cache_dir() -> Path:
    """``$SEMREL_CACHE/scores``, else ``~/.cache/semrel/scores``."""
    root = os.environ.get("SEMREL_CACHE")
    return (Path(root).expanduser() if root else Path("~/.cache/semrel").expanduser()) / "scores"


def unit_key(parts: tuple[str, ...]) -> bytes:
    """sha256 of a unit's texts (one sentence; a sentence and its condition; a pair), as the
    JSON list of its parts, so no two different units share a key."""
    return hashlib.sha256(json.dumps(list(parts), ensure_ascii=False).encode("utf-8")).digest()


class UnitCache:
    """The stored units of one model (``model_key``) in ``folder``; ``about`` (the model's spec
    and settings, JSON) is written beside them for whoever opens the file."""

    def __init__(self, folder: str | os.PathLike, model_key: str, about: dict | None = None):
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / f"{model_key}.sqlite"
        self._db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        self._db.execute(f"PRAGMA page_size={PAGE_SIZE}")  # takes effect on a new file only
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        with self._db:
            self._db.execute("BEGIN")
            self._db.execute(SCHEMA)
            self._db.execute(ABOUT)
            for name, value in (about or {}).items():
                self._db.execute("INSERT OR IGNORE INTO about VALUES (?, ?)", (name, json.dumps(value)))

    def get(self, keys: list[bytes]) -> dict[bytes, tuple[int, np.ndarray]]:
        """The stored ``(tokens, value)`` of each of ``keys`` that is there."""
        found = {}
        for start in range(0, len(keys), CHUNK):
            chunk = keys[start:start + CHUNK]
            marks = ",".join("?" * len(chunk))
            for key, tokens, value in self._db.execute(
                    f"SELECT key, tokens, value FROM units WHERE key IN ({marks})", chunk):
                found[bytes(key)] = (int(tokens), np.frombuffer(value, dtype=np.float32))
        return found

    def put(self, rows: list[tuple[bytes, int, np.ndarray]]) -> None:
        """Store ``(key, tokens, value)`` rows in one transaction (all or none)."""
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR REPLACE INTO units VALUES (?, ?, ?)",
                                 [(k, int(t), np.asarray(v, dtype=np.float32).tobytes())
                                  for k, t, v in rows])

    def get_about(self, name: str):
        """The JSON value stored under ``name`` (None where there is none)."""
        row = self._db.execute("SELECT value FROM about WHERE name = ?", (name,)).fetchone()
        return None if row is None else json.loads(row[0])

    def set_about(self, name: str, value) -> None:
        with self._db:
            self._db.execute("BEGIN")
            self._db.execute("INSERT OR REPLACE INTO about VALUES (?, ?)", (name, json.dumps(value)))

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM units").fetchone()[0]

    def close(self) -> None:
        self._db.close()


def remembered_hash(folder: str | os.PathLike, model: Path, compute) -> str:
    """``compute(model)`` (a content hash), remembered in ``folder/hashes.sqlite`` against the
    model's file signature (every file's relative path, size and modification time): a model
    whose files did not change is not hashed again."""
    files = sorted(p for p in Path(model).rglob("*") if p.is_file())
    stats = [[f.relative_to(model).as_posix(), f.stat().st_size, f.stat().st_mtime_ns] for f in files]
    signature = hashlib.sha256(json.dumps(stats).encode()).hexdigest()
    Path(folder).mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(Path(folder) / "hashes.sqlite", timeout=60, isolation_level=None)
    try:
        db.execute("CREATE TABLE IF NOT EXISTS hashes (path TEXT PRIMARY KEY, signature TEXT NOT NULL, "
                   "hash TEXT NOT NULL)")
        where = str(Path(model).resolve())
        row = db.execute("SELECT signature, hash FROM hashes WHERE path = ?", (where,)).fetchone()
        if row is not None and row[0] == signature:
            return row[1]
        digest = compute(model)
        db.execute("INSERT OR REPLACE INTO hashes VALUES (?, ?, ?)", (where, signature, digest))
        return digest
    finally:
        db.close()
