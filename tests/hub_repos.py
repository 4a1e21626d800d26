"""What the local Hub (tests/hub_server.py) stores: repos, their commits and files, each file
stored as the Hub stores it (regular or LFS), and the entries the tree and paths-info endpoints
list."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

URL_PREFIX = {"model": "", "dataset": "datasets/", "space": "spaces/"}
LFS_SUFFIXES = (".parquet", ".arrow", ".png", ".jpg", ".safetensors", ".bin", ".pt", ".pth",
                ".onnx", ".zip", ".gz", ".npy", ".pkl")
LFS_MIN_SIZE = 10 * 1024 * 1024
EMPTY_TREE = "0" * 40


def stored_as_lfs(path: str, size: int, sample: bytes) -> bool:
    """Whether the Hub keeps a file as LFS: a binary extension, > 10 MB, or a NUL byte early on."""
    return path.lower().endswith(LFS_SUFFIXES) or size > LFS_MIN_SIZE or b"\0" in sample[:512]


def git_oid(data: bytes) -> str:
    """The git blob id, what the Hub reports (and the client compares) for a regular file."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass(frozen=True)
class Stored:
    """One file at one commit: its content and how it is stored."""

    data: bytes
    lfs: bool

    @property
    def oid(self) -> str:  # what preupload reports: sha256 for LFS files, git sha1 otherwise
        return hashlib.sha256(self.data).hexdigest() if self.lfs else git_oid(self.data)

    def entry(self, path: str) -> dict:
        pointer = (f"version https://git-lfs.github.com/spec/v1\noid sha256:{self.oid}\n"
                   f"size {len(self.data)}\n").encode()
        entry = {"type": "file", "path": path, "size": len(self.data),
                 "oid": git_oid(pointer if self.lfs else self.data)}
        if self.lfs:
            entry["lfs"] = {"oid": self.oid, "size": len(self.data), "pointerSize": len(pointer)}
        return entry


@dataclass
class Commit:
    repo_type: str
    repo_id: str
    oid: str
    message: str
    operations: list[dict]  # the NDJSON lines after the header, as sent
    files: dict[str, Stored]  # the repo at this commit


@dataclass
class Repo:
    repo_type: str
    repo_id: str
    private: bool
    sdk: str | None
    history: list[Commit] = field(default_factory=list)
    tags: dict[str, str] = field(default_factory=dict)  # tag -> commit oid
    gated: bool = False

    @property
    def head(self) -> dict[str, Stored]:
        return self.history[-1].files if self.history else {}

    @property
    def sha(self) -> str:
        return self.history[-1].oid if self.history else EMPTY_TREE

    def at(self, revision: str) -> tuple[str, dict[str, Stored]] | None:
        if revision == "main":
            return self.sha, self.head
        revision = self.tags.get(revision, revision)
        for commit in self.history:
            if commit.oid == revision:
                return commit.oid, commit.files
        return None


def tree_entries(files: dict[str, Stored], path: str, recursive: bool) -> list[dict] | None:
    """Files and folders under ``path`` (None when ``path`` does not exist)."""
    prefix = path.strip("/") + "/" if path.strip("/") else ""
    entries, folders = [], set()
    for name in sorted(files):
        if not name.startswith(prefix):
            continue
        rest = name[len(prefix):].split("/")
        for depth in range(1, len(rest)):
            if recursive or depth == 1:
                folders.add(prefix + "/".join(rest[:depth]))
        if recursive or len(rest) == 1:
            entries.append(files[name].entry(name))
    if prefix and not entries and not folders:
        return None
    dirs = [{"type": "directory", "path": d, "size": 0,
             "oid": hashlib.sha1(d.encode()).hexdigest()} for d in sorted(folders)]
    return dirs + entries
