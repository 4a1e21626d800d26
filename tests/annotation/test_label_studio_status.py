"""``semrel annotate status`` without a Label Studio server (none, or a stand-in holding one
project that nobody answered yet): what cannot be planned is one line, exit status 2, and nothing
is written. (Against the real server: tests/annotation/test_label_studio.py.)"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from test_label_studio import semrel, write_design

from label_studio_server import free_port
from semrel.annotation import label_studio as ls
from semrel.annotation.answers import RULES


class OneProject(BaseHTTPRequestHandler):
    """A server holding project 3, pushed from ``design`` (tuples file, pairs file) and not answered
    yet; any other request is Label Studio's 404 reply."""

    design = None

    def do_GET(self):  # noqa: N802 (http.server's name)
        status, body = 404, {"detail": "No Project matches the given query."}
        if self.path == "/api/projects/3/":
            status, body = 200, {"id": 3, "label_config": ls.label_config()}
        elif self.path.startswith("/api/tasks/?project=3&"):
            status, body = 200, {"tasks": [{"id": i, "annotations": [], **task}
                                           for i, task in enumerate(ls.tasks(*ls.read_design(*self.design)), 1)]}
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def one_project(tmp_path):
    write_design(tmp_path, 12)
    OneProject.design = (tmp_path / "tuples.csv", tmp_path / "pairs.csv")
    server = ThreadingHTTPServer(("127.0.0.1", 0), OneProject)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("case", ["unreachable", "no such project", "no answer yet", "project 0", "no server",
                                  "target 1"])
def test_label_studio_status_that_cannot_plan_a_project_is_one_line(tmp_path, one_project, case):
    url, project, more, out = f"http://127.0.0.1:{free_port()}", "3", [], ""
    said = f"Label Studio at {url}, project 3: cannot connect ([Errno 111] Connection refused)"
    if case == "no such project":
        url, project, said = one_project, "4", (f"Label Studio at {one_project}, project 4: 404 No Project matches the "
                                                "given query. (no project 4 on this server: deleted, or another "
                                                "server's id?)")
    elif case == "no answer yet":
        url, said = one_project, "project-3: no annotations yet (0 answers read, none kept; nothing to plan from)"
        out = ("project-3: 0 of 24 tasks answered; 0 answers from 0 annotators -> 0 annotations; "
               + "; ".join(f"0 {rule} ({text})" for rule, text in RULES.items()) + "\n")
    elif case == "project 0":
        project, said = "0", ("argument --project: must be an integer >= 1, not '0' (see semrel annotate status "
                              "--help)")
    elif case == "no server":
        url, said = "", ("no Label Studio server: give --url and --token (or set LABEL_STUDIO_URL and "
                         "LABEL_STUDIO_API_KEY)")
    elif case == "target 1":
        more, said = ["--target", "1"], ("argument --target: must be a number in (0, 1) (a split-half reliability), "
                                         "not '1' (see semrel annotate status --help)")
    done = semrel("annotate", "status", "--project", project, "--tuples", tmp_path / "tuples.csv", "--pairs",
                  tmp_path / "pairs.csv", "--output", tmp_path / "out", *more,
                  env={"LABEL_STUDIO_URL": url, "LABEL_STUDIO_API_KEY": "a-legacy-token" if url else ""})
    assert (done.returncode, done.stdout, done.stderr) == (2, out, f"semrel annotate status: error: {said}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pairs.csv", "tuples.csv"]  # nothing written
