"""A real Label Studio server for the tests, run from its own virtualenv (``make setup`` makes
``.venv-label-studio``: Label Studio pins pyarrow and Django versions of its own).

    with LabelStudio(folder) as ls:        # SQLite and media in folder; 127.0.0.1, a free port
        ls.url, ls.token                    # the admin's personal access token (a JWT)
        ls.users(["a1", "a2"])              # {name: personal access token} of new annotators
        ls.legacy_token()                   # the admin's legacy token (refused: legacy tokens are off)

Users and tokens are made from the command line: ``label-studio start --username --password`` makes
the admin; the annotators and every personal access token are made by a Django script in the
server's virtualenv (what Account & Settings > Personal Access Token does). Startup answers
``/health`` after about 80 s on a loaded 2-core machine (75 s of CPU, most of it Label Studio's
database migrations); :data:`START_TIMEOUT` allows 240 s. Given a ``prepared`` folder (pytest's
cache), the first server keeps a copy of its database as it stood when it first answered
(migrated, the admin made), and a later server of the same Label Studio version starts from that
copy and skips the migrations (18 s to ``/health`` where a start from nothing took 176 s, on the
same busy machine).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import sqlite3
import subprocess
import time
from pathlib import Path

import httpx2

from project import REPO

VENV = REPO / ".venv-label-studio"
EXECUTABLE = VENV / "bin" / "label-studio"
MISSING = f"Label Studio is not installed in {VENV}: run `make servers` (or `make .venv-label-studio/.installed`)"
START_TIMEOUT = 240
ADMIN = "admin@semrel.test"
DATABASE = "label_studio.sqlite3"  # in the data folder

# Django set up as `label-studio start` sets it up (label_studio/server.py), then users and tokens.
SCRIPT = """
import json, os, sys
import label_studio.server as server
server._setup_env()
from jwt_auth.models import LSAPIToken
from organizations.models import Organization
from users.models import User
org = Organization.objects.first()
out = {}
for name in json.loads(sys.argv[1]):
    user = User.objects.filter(email=name).first()
    if user is None:
        user = User.objects.create_user(email=name, password="semrel-annotator", username=name.split("@")[0])
        org.add_user(user)
        user.active_organization = org
        user.save(update_fields=["active_organization"])
    out[name] = {"id": user.id, "token": LSAPIToken.for_user(user).get_full_jwt(), "legacy": user.auth_token.key}
print("TOKENS" + json.dumps(out))
"""


def version() -> str:
    """The version of Label Studio in :data:`VENV` (its dist-info folder's name)."""
    found = sorted(VENV.glob("lib/python*/site-packages/label_studio-*.dist-info"))
    return found[-1].name.removesuffix(".dist-info").split("-", 1)[1] if found else "unknown"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LabelStudio:
    """``label-studio start`` on 127.0.0.1 with its data (SQLite) in ``folder``; stopped on exit."""

    def __init__(self, folder: Path, prepared: Path | None = None):
        self.folder = Path(folder)
        self.prepared = None if prepared is None else Path(prepared) / DATABASE
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = self.folder / "label-studio.log"
        self.env = {**{k: v for k, v in os.environ.items() if k != "CI"},  # Label Studio reads CI as a bool
                    "LABEL_STUDIO_BASE_DATA_DIR": str(self.folder / "data"),
                    "LATEST_VERSION_CHECK": "false", "COLLECT_ANALYTICS": "false",  # no calls outside
                    "PYTHONPATH": "", "VIRTUAL_ENV": str(VENV),
                    # the server and the users script must sign with one key: left to itself, Label Studio
                    # writes a random key to data/.env, and django-environ reads one starting with "$"
                    # back as empty (a reference to another variable), so the script signs with a new one
                    "SECRET_KEY": secrets.token_hex(32)}
        self.process = None

    def __enter__(self) -> LabelStudio:
        (self.folder / "data").mkdir(parents=True, exist_ok=True)
        if self.prepared is not None and self.prepared.is_file():
            shutil.copyfile(self.prepared, self.folder / "data" / DATABASE)
        with self.log.open("w") as log:
            self.process = subprocess.Popen(
                [str(EXECUTABLE), "start", "--no-browser", "--internal-host", "127.0.0.1", "--port", str(self.port),
                 "--data-dir", str(self.folder / "data"), "--username", ADMIN, "--password", "semrel-admin"],
                env=self.env, cwd=self.folder, stdout=log, stderr=subprocess.STDOUT)
        try:
            self._wait()
            if self.prepared is not None and not self.prepared.is_file():
                self._keep_database()
            made = self._users([ADMIN])[ADMIN]
        except BaseException:
            self.stop()
            raise
        self.token, self._legacy, self.admin_id = made["token"], made["legacy"], made["id"]
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def _wait(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"label-studio exited with {self.process.returncode}: {self._tail()}")
            try:
                if httpx2.get(f"{self.url}/health", timeout=5).status_code == 200:
                    return
            except httpx2.TransportError:
                pass
            time.sleep(2)
        raise TimeoutError(f"label-studio did not answer {self.url}/health in {START_TIMEOUT} s: {self._tail()}")

    def _keep_database(self) -> None:
        """A consistent copy of the running server's database (SQLite's backup API) at
        ``prepared``, written whole."""
        partial = self.prepared.with_name(f"{DATABASE}.{os.getpid()}.partial")
        source, copy = sqlite3.connect(self.folder / "data" / DATABASE), sqlite3.connect(partial)
        try:
            source.backup(copy)
        finally:
            source.close()
            copy.close()
        partial.replace(self.prepared)

    def _tail(self) -> str:
        return " | ".join(self.log.read_text(errors="replace").splitlines()[-5:])

    def _users(self, names: list[str]) -> dict:
        done = subprocess.run([str(VENV / "bin" / "python"), "-c", SCRIPT, json.dumps(names)], env=self.env,
                              cwd=self.folder, capture_output=True, text=True, timeout=300)
        line = next((x for x in done.stdout.splitlines() if x.startswith("TOKENS")), None)
        if done.returncode or line is None:
            raise RuntimeError(f"making Label Studio users failed: {done.stderr[-2000:]}")
        return json.loads(line[len("TOKENS"):])

    def users(self, names: list[str]) -> dict[str, dict]:
        """New annotators of the organisation: ``{name: {"id", "token"}}``."""
        return self._users([f"{name}@semrel.test" for name in names])

    def legacy_token(self) -> str:
        return self._legacy


class Proxy:
    """An HTTP proxy on 127.0.0.1 in front of ``target``: adds ``cookie`` to every request (a browser
    logged in), or, with ``cut``, breaks off the response to the ``cut``-th request matching
    ``path`` half way (a pull interrupted)."""

    def __init__(self, target: str, *, cookie: str | None = None, cut: int | None = None, path: str = ""):
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        proxy = self
        self.target, self.cookie, self.cut, self.path, self.seen = target, cookie, cut, path, 0
        self.lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _forward(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
                if proxy.cookie:
                    headers["Cookie"] = "; ".join(filter(None, [headers.get("Cookie"), proxy.cookie]))
                with proxy.lock:
                    proxy.seen += self.path.startswith(proxy.path)
                    cut = proxy.cut is not None and self.path.startswith(proxy.path) and proxy.seen == proxy.cut
                reply = httpx2.request(self.command, proxy.target + self.path, headers=headers, content=body,
                                       timeout=120)
                data = reply.content
                self.send_response(reply.status_code)
                for key, value in reply.headers.multi_items():
                    if key.lower() not in ("content-length", "transfer-encoding", "content-encoding", "connection"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data[: len(data) // 2] if cut else data)
                if cut:
                    self.close_connection = True

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _forward

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Proxy:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def session_cookie(url: str, email: str = ADMIN, password: str = "semrel-admin") -> str:
    """``sessionid=...`` of a user logged in through Label Studio's login form."""
    with httpx2.Client(base_url=url, follow_redirects=False, timeout=60) as client:
        client.get("/user/login/")
        csrf = client.cookies.get("csrftoken")
        reply = client.post("/user/login/", data={"email": email, "password": password,
                                                  "csrfmiddlewaretoken": csrf},
                            headers={"Referer": f"{url}/user/login/"})
        session = client.cookies.get("sessionid")
        if reply.status_code not in (200, 302) or not session:
            raise RuntimeError(f"logging in to {url} failed: {reply.status_code}")
        return f"sessionid={session}"
