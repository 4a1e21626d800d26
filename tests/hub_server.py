"""A local Hugging Face Hub for the tests: a stdlib HTTP server on 127.0.0.1 that records every commit.

It answers the endpoints the real ``huggingface_hub`` client calls to create repos, upload (regular
files inline, LFS files through the batch API + PUT) and commit, and the ones ``datasets`` and
``snapshot_download`` call to read a repo back (repo info at a revision with its siblings and sha,
tree, paths-info, ``HEAD``/``GET`` resolve with ``X-Repo-Commit``, ``ETag``, ``Content-Length``
and, for LFS files, ``X-Linked-Etag``/``X-Linked-Size``), so the tests can drive the real clients:

    with LocalHub() as hub:
        env = {**os.environ, **hub.client_env(token="hf_dummy")}   # set BEFORE importing the client
        subprocess.run([...], env=env)
        hub.files("dataset", "ns/str-2021")    # {path: bytes} at the head of main
        hub.commits                            # every commit, in order, with what it sent
        sha = hub.put_folder("model", "ns/tiny", folder)   # a repo placed by the test

``hub.fail("POST", r"/commit/", status=500)`` makes the next matching request fail (a server error
mid-push); ``hub.gate("model", "ns/x")`` makes its files answer like a gated repo's to a user who
has not accepted its terms (401/403 with ``X-Error-Code: GatedRepo``); ``hub.slow(r"ns/x", 3)``
makes matching requests wait 3 s before answering (a Hub that times out). Revisions are
``main``, a tag (``hub.tag``) or a commit oid. Files are stored as LFS when the client should
upload them so (binary extensions, > 10 MB, or a NUL byte in the first 512 bytes), like the Hub.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

TYPES = {"models": "model", "datasets": "dataset", "spaces": "space"}
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


class LocalHub:
    """The server and its recorded state (see module docstring)."""

    def __init__(self):
        self.repos: dict[tuple[str, str], Repo] = {}
        self.lfs: dict[str, bytes] = {}
        self.commits: list[Commit] = []
        self.requests: list[tuple[str, str, str | None]] = []  # method, path, Authorization
        self._failures: list[list] = []  # [method, regex, status, remaining]
        self._delays: list[tuple[re.Pattern, float]] = []  # (path regex, seconds)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> LocalHub:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def client_env(self, token: str | None) -> dict[str, str]:
        """Environment for a client process: this endpoint, online, no Xet, the given token."""
        env = {"HF_ENDPOINT": self.endpoint, "HF_HUB_OFFLINE": "0", "HF_DATASETS_OFFLINE": "0",
               "HF_HUB_DISABLE_XET": "1", "HF_HUB_DISABLE_TELEMETRY": "1",
               "HF_HUB_DISABLE_PROGRESS_BARS": "1", "HF_HUB_ETAG_TIMEOUT": "5"}
        if token is not None:
            env["HF_TOKEN"] = token
        return env

    def fail(self, method: str, path_regex: str, status: int = 500, times: int = 1) -> None:
        """Answer the next ``times`` requests matching ``method`` and ``path_regex`` with ``status``."""
        self._failures.append([method, re.compile(path_regex), status, times])

    def gate(self, repo_type: str, repo_id: str) -> None:
        """Answer the files of this repo as a gated repo does to a user without access."""
        self.repos[(repo_type, repo_id)].gated = True

    def slow(self, path_regex: str, seconds: float) -> None:
        """Wait ``seconds`` before answering every request whose path matches ``path_regex``."""
        self._delays.append((re.compile(path_regex), seconds))

    def delay(self, path: str) -> float:
        return max((s for regex, s in self._delays if regex.search(path)), default=0.0)

    def tag(self, repo_type: str, repo_id: str, name: str, oid: str) -> None:
        self.repos[(repo_type, repo_id)].tags[name] = oid

    def put(self, repo_type: str, repo_id: str, files: dict[str, bytes],
            message: str = "Upload files") -> str:
        """Commit ``files`` (path -> bytes) to ``main`` of the repo (created when new), each
        stored as the Hub stores it (:func:`stored_as_lfs`); the commit oid."""
        if (repo_type, repo_id) not in self.repos:
            namespace, name = repo_id.split("/")
            self.create_repo({"type": repo_type, "organization": namespace, "name": name})
        lines = [{"key": "header", "value": {"summary": message}}]
        for path, data in sorted(files.items()):
            if stored_as_lfs(path, len(data), data):
                oid = hashlib.sha256(data).hexdigest()
                self.lfs[oid] = data
                lines.append({"key": "lfsFile", "value": {"path": path, "oid": oid}})
            else:
                lines.append({"key": "file", "value": {"path": path, "encoding": "base64",
                                                       "content": base64.b64encode(data).decode()}})
        status, reply = self.commit(self.repos[(repo_type, repo_id)], "main", lines)
        if status != 200:
            raise ValueError(f"the local hub refused the commit: {reply}")
        return reply["commitOid"]

    def put_folder(self, repo_type: str, repo_id: str, folder, message: str = "Upload folder") -> str:
        """:meth:`put` of every file under ``folder`` (relative POSIX paths)."""
        folder = Path(folder)
        return self.put(repo_type, repo_id, {p.relative_to(folder).as_posix(): p.read_bytes()
                                             for p in sorted(folder.rglob("*")) if p.is_file()},
                        message)

    def files(self, repo_type: str, repo_id: str) -> dict[str, bytes]:
        return {path: s.data for path, s in self.repos[(repo_type, repo_id)].head.items()}

    def commits_to(self, repo_type: str, repo_id: str) -> list[Commit]:
        return [c for c in self.commits if (c.repo_type, c.repo_id) == (repo_type, repo_id)]

    def sent_bytes(self) -> list[tuple[str, str, bytes]]:
        """(repo, path, content) of every file any commit added, regular or LFS."""
        out = []
        for commit in self.commits:
            for op in commit.operations:
                if op["key"] in ("file", "lfsFile"):
                    path = op["value"]["path"]
                    out.append((f"{commit.repo_type}s/{commit.repo_id}", path,
                                commit.files[path].data))
        return out

    # -- request handling (called from the handler threads) ------------------------------------

    def injected_failure(self, method: str, path: str) -> int | None:
        with self._lock:
            for failure in self._failures:
                if failure[0] == method and failure[1].search(path) and failure[3] > 0:
                    failure[3] -= 1
                    return failure[2]
        return None

    def create_repo(self, body: dict) -> tuple[int, dict]:
        repo_type = body.get("type") or "model"
        repo_id = f"{body['organization']}/{body['name']}" if body.get("organization") else body["name"]
        url = f"{self.endpoint}/{URL_PREFIX[repo_type]}{repo_id}"
        with self._lock:
            if (repo_type, repo_id) in self.repos:
                return 409, {"error": "You already created this repo", "url": url}
            if repo_type == "space" and not body.get("sdk"):
                return 400, {"error": "sdk is required for a Space"}
            self.repos[(repo_type, repo_id)] = Repo(repo_type, repo_id,
                                                   body.get("visibility") == "private", body.get("sdk"))
        return 200, {"url": url, "name": repo_id}

    def preupload(self, repo: Repo, body: dict) -> dict:
        files = []
        for f in body["files"]:
            lfs = stored_as_lfs(f["path"], f["size"], base64.b64decode(f["sample"]))
            entry = {"path": f["path"], "uploadMode": "lfs" if lfs else "regular", "shouldIgnore": False}
            if f["path"] in repo.head:
                entry["oid"] = repo.head[f["path"]].oid
            files.append(entry)
        return {"files": files, "commitOid": repo.sha}

    def lfs_batch(self, body: dict) -> dict:
        objects = []
        for obj in body["objects"]:
            entry = {"oid": obj["oid"], "size": obj["size"]}
            if obj["oid"] not in self.lfs:
                entry["actions"] = {"upload": {"href": f"{self.endpoint}/lfs-upload/{obj['oid']}"}}
            objects.append(entry)
        return {"transfer": "basic", "objects": objects}

    def lfs_put(self, oid: str, data: bytes) -> tuple[int, dict]:
        if hashlib.sha256(data).hexdigest() != oid:
            return 400, {"error": f"content does not match LFS oid {oid}"}
        with self._lock:
            self.lfs[oid] = data
        return 200, {}

    def commit(self, repo: Repo, revision: str, lines: list[dict]) -> tuple[int, dict]:
        if revision != "main":
            return 400, {"error": "the local hub only commits to main"}
        header, operations = lines[0], lines[1:]
        if header.get("key") != "header":
            return 400, {"error": "first NDJSON line must be the header"}
        with self._lock:
            files = dict(repo.head)
            for op in operations:
                value = op["value"]
                if op["key"] == "file":
                    files[value["path"]] = Stored(base64.b64decode(value["content"]), lfs=False)
                elif op["key"] == "lfsFile":
                    if value["oid"] not in self.lfs:
                        return 422, {"error": f"LFS object {value['oid']} was never uploaded"}
                    files[value["path"]] = Stored(self.lfs[value["oid"]], lfs=True)
                elif op["key"] == "deletedFile":
                    if files.pop(value["path"], None) is None:
                        return 404, {"error": f"A file with this name doesn't exist: {value['path']}"}
                elif op["key"] == "deletedFolder":
                    prefix = value["path"].rstrip("/") + "/"
                    files = {p: s for p, s in files.items() if not p.startswith(prefix)}
                else:
                    return 400, {"error": f"unknown operation {op['key']!r}"}
            state = json.dumps([repo.sha, header["value"]["summary"],
                                sorted((p, s.oid) for p, s in files.items())])
            commit = Commit(repo.repo_type, repo.repo_id, hashlib.sha1(state.encode()).hexdigest(),
                            header["value"]["summary"], operations, files)
            repo.history.append(commit)
            self.commits.append(commit)
        prefix = URL_PREFIX[repo.repo_type]
        return 200, {"commitUrl": f"{self.endpoint}/{prefix}{repo.repo_id}/commit/{commit.oid}",
                     "commitOid": commit.oid, "pullRequestUrl": None}

    def info(self, repo: Repo, sha: str, files: dict[str, Stored]) -> dict:
        info = {"id": repo.repo_id, "sha": sha, "private": repo.private, "disabled": False,
                "gated": "auto" if repo.gated else False, "siblings": [{"rfilename": p} for p in sorted(files)],
                "lastModified": "2026-01-01T00:00:00.000Z", "tags": []}
        if repo.sdk:
            info["sdk"] = repo.sdk
        return info


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


def _handler(hub: LocalHub):
    repo_api = re.compile(r"^/api/(models|datasets|spaces)/([^/]+/[^/]+)(?:/(.*))?$")
    lfs_batch = re.compile(r"^/(?:(datasets|spaces)/)?([^/]+/[^/]+)\.git/info/lfs/objects/batch$")
    resolve = re.compile(r"^/(?:(datasets|spaces)/)?([^/]+/[^/]+)/resolve/([^/]+)/(.+)$")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # quiet
            pass

        def _reply(self, status: int, body=None, headers: dict | None = None, raw: bytes | None = None):
            data = raw if raw is not None else json.dumps(body if body is not None else {}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/octet-stream" if raw is not None
                             else "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            if status >= 400 and isinstance(body, dict):
                self.send_header("X-Error-Message", str(body.get("error", "")))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        def _not_found(self, what: str, code: str = "RepoNotFound"):
            self._reply(404, {"error": f"{what} not found"}, {"X-Error-Code": code})

        def _body(self) -> bytes:
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def _json(self, raw: bytes):
            return json.loads(raw or b"{}")

        def _dispatch(self):
            url = urlparse(self.path)
            path, query = unquote(url.path), parse_qs(url.query)
            hub.requests.append((self.command, path, self.headers.get("Authorization")))
            raw = self._body() if self.command in ("POST", "PUT") else b""
            time.sleep(hub.delay(path))
            status = hub.injected_failure(self.command, path)
            if status is not None:
                return self._reply(status, {"error": f"injected server error {status}"})
            if self.command == "POST" and path == "/api/repos/create":
                return self._reply(*hub.create_repo(self._json(raw)))
            if self.command == "POST" and path == "/api/validate-yaml":
                content = self._json(raw).get("content", "")
                if content.startswith("---") and content.count("\n---") < 1:
                    return self._reply(400, {"errors": [{"message": "unterminated YAML header"}]})
                return self._reply(200, {"errors": [], "warnings": []})
            if self.command == "PUT" and path.startswith("/lfs-upload/"):
                return self._reply(*hub.lfs_put(path.rsplit("/", 1)[1], raw))
            if m := lfs_batch.match(path):
                return self._reply(200, hub.lfs_batch(self._json(raw)))
            if m := repo_api.match(path):
                return self._repo_api(TYPES[m[1]], m[2], m[3] or "", raw, query)
            if m := resolve.match(path):
                return self._resolve(TYPES.get(m[1] or "models", "model"), m[2], m[3], m[4])
            self._reply(404, {"error": f"no such endpoint: {self.command} {path}"})

        def _repo_api(self, repo_type: str, repo_id: str, rest: str, raw: bytes, query: dict):
            repo = hub.repos.get((repo_type, repo_id))
            if repo is None:
                return self._not_found(f"{repo_type} repository {repo_id}")
            action, _, tail = rest.partition("/")
            revision, _, sub = tail.partition("/")
            if self.command == "GET" and action in ("", "revision"):
                found = repo.at(revision or "main")
                if found is None:
                    return self._not_found(f"revision {revision}", "RevisionNotFound")
                return self._reply(200, hub.info(repo, *found))
            if self.command == "POST" and action == "preupload":
                return self._reply(200, hub.preupload(repo, self._json(raw)))
            if self.command == "POST" and action == "commit":
                lines = [json.loads(line) for line in raw.splitlines() if line.strip()]
                return self._reply(*hub.commit(repo, revision, lines))
            found = repo.at(revision or "main")
            if found is None:
                return self._not_found(f"revision {revision}", "RevisionNotFound")
            if self.command == "GET" and action == "tree":
                entries = tree_entries(found[1], sub, query.get("recursive", ["false"])[0] == "true")
                if entries is None:
                    return self._not_found(f"path {sub}", "EntryNotFound")
                return self._reply(200, entries)
            if self.command == "POST" and action == "paths-info":
                body = (self._json(raw) if raw.startswith(b"{")
                        else {k: v for k, v in parse_qs(raw.decode()).items()})
                entries = []
                for p in body.get("paths", []):
                    if p in found[1]:
                        entries.append(found[1][p].entry(p))
                    elif tree_entries(found[1], p, False):
                        entries.append({"type": "directory", "path": p, "size": 0,
                                        "oid": hashlib.sha1(p.encode()).hexdigest()})
                return self._reply(200, entries)
            self._reply(404, {"error": f"no such endpoint: {self.command} {self.path}"})

        def _resolve(self, repo_type: str, repo_id: str, revision: str, path: str):
            repo = hub.repos.get((repo_type, repo_id))
            found = repo.at(revision) if repo else None
            if found is None:
                return self._not_found(f"{repo_type} repository {repo_id}@{revision}")
            sha, files = found
            if path not in files:
                return self._not_found(f"file {path}", "EntryNotFound")
            if repo.gated:  # 401 to an anonymous user, 403 to one who has not accepted the terms
                return self._reply(403 if self.headers.get("Authorization") else 401,
                                   {"error": f"Access to model {repo_id} is restricted. You must "
                                             "have access to it and be authenticated to access it."},
                                   {"X-Error-Code": "GatedRepo"})
            stored = files[path]
            headers = {"X-Repo-Commit": sha, "ETag": f'"{stored.entry(path)["oid"]}"'}
            if stored.lfs:
                headers |= {"X-Linked-Etag": f'"{stored.oid}"', "X-Linked-Size": str(len(stored.data))}
            self._reply(200, headers=headers, raw=stored.data)

        def _answer(self):
            try:
                self._dispatch()
            except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting
                self.close_connection = True

        do_GET = do_POST = do_PUT = do_HEAD = _answer

    return Handler
