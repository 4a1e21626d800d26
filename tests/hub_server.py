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
What it stores (repos, commits, files) is in tests/hub_repos.py, its request handler in tests/hub_http.py.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

from hub_http import request_handler
from hub_repos import URL_PREFIX, Commit, Repo, Stored, stored_as_lfs


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
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), request_handler(self))
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
