"""The HTTP side of the local Hub (tests/hub_server.py): the request handler class that routes
each request of the real clients to the hub's state (repo API, LFS batch and upload, resolve)."""

from __future__ import annotations

import hashlib
import json
import re
import time
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, unquote, urlparse

from hub_repos import tree_entries

TYPES = {"models": "model", "datasets": "dataset", "spaces": "space"}


def request_handler(hub):
    """The handler class of :class:`hub_server.LocalHub` ``hub``'s server."""
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
