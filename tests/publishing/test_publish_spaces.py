"""Metric folders -> standalone Spaces: links replaced by their files, the checks, and every built
Space's app.py started on 127.0.0.1 with this project unimportable, answering like evaluate.load."""

from __future__ import annotations

import json
import shutil
import socket
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

import evaluate
import pytest

from semrel.publishing import spaces
from semrel.publishing.spaces import (METRICS_ROOT, SpaceError, SpaceServer, build_space, check_space, link_target,
                               metric_names, space_example, verify_space)

pytest.importorskip("gradio")
pytest.importorskip("gradio_client")
NAMES = ["annotator_agreement", "bws_scores", "lexical_overlap", "mse_lower_bound", "split_half_reliability"]

# One bad input per Space: (inputs, words the page's error must contain)
BAD_INPUT = {
    "annotator_agreement": ({"items": ["a", "a", "b"], "annotators": ["x", "y"], "ratings": [1, 2, 3]},
                            "Mismatch in the number of"),
    "bws_scores": ({"tuples": [["a", "b", "c", "d"]], "best": ["a"], "worst": ["a"]},
                   "row 1: best and worst are the same item"),
    "lexical_overlap": ({"sentence1": ["a b", "c"], "sentence2": ["a", "c d"], "references": ["high", 0.1]},
                        "could not convert string to float: 'high'"),
    "mse_lower_bound": ({"predictions": [1.0]}, "annotations: missing input"),
    "split_half_reliability": ({"tuples": [["a", "b", "c", "d"]], "best": ["e"], "worst": ["a"]},
                               "best is not an item of the tuple"),
}


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """All five built Spaces, started once and together (gradio's start-up dominates)."""
    out = tmp_path_factory.mktemp("hub")
    folders = {name: build_space(name, out).folder for name in NAMES}
    with ExitStack() as stack, ThreadPoolExecutor(len(NAMES)) as pool:
        started = pool.map(lambda f: SpaceServer(f, timeout=120).__enter__(), folders.values())
        running = dict(zip(NAMES, started))
        for server in running.values():
            stack.callback(server.__exit__)
        yield running


def test_metric_names_and_links():
    assert metric_names() == NAMES
    assert link_target(METRICS_ROOT / "split_half_reliability" / "counting.py") == METRICS_ROOT / "bws_scores" / "counting.py"
    assert link_target(METRICS_ROOT / "bws_scores" / "errors.py") == METRICS_ROOT / "errors.py"
    assert link_target(METRICS_ROOT / "bws_scores" / "counting.py") is None  # a module, not a link


def test_build_replaces_links_by_their_files_and_imports_nothing_of_this_project(tmp_path):
    build = build_space("split_half_reliability", tmp_path)
    assert sorted(build.linked) == ["arrow_columns.py <- arrow_columns.py", "arrow_input.py <- bws_scores/arrow_input.py",
                                    "citations.py <- bws_scores/citations.py", "counting.py <- bws_scores/counting.py",
                                    "errors.py <- errors.py", "space_app.py <- space_app.py"]
    for path in build.folder.glob("*.py"):
        assert "metrics." not in path.read_text() and "dataset_scripts" not in path.read_text(), path
    assert (build.folder / "errors.py").read_text() == (METRICS_ROOT / "errors.py").read_text()
    assert check_space(build.folder) == []


@pytest.mark.parametrize("edit, message", [
    (lambda f: (f / "app.py").unlink(), "app.py is missing"),
    (lambda f: (f / "counting.py").write_text("from semrel.dataset_scripts.errors import DataValidationError\n"),
     "counting.py:1: imports dataset_scripts.errors, which a Space lacks"),
    (lambda f: (f / "requirements.txt").write_text("evaluate\n"), "requirements.txt: lacks scipy"),
    (lambda f: (f / "split_half_reliability.py").write_text(
        (f / "split_half_reliability.py").read_text().replace("from .halves import layout\n", "")),
     "imports .halves, which split_half_reliability.py does not import"),
])
def test_check_space_names_what_a_space_lacks(tmp_path, edit, message):
    folder = build_space("split_half_reliability", tmp_path).folder
    edit(folder)
    assert any(message in p for p in check_space(folder)), check_space(folder)


def test_a_link_to_a_missing_module_is_a_clear_error(tmp_path):
    root = tmp_path / "metrics"
    shutil.copytree(METRICS_ROOT / "bws_scores", root / "bws_scores")
    shutil.copy(METRICS_ROOT / "arrow_columns.py", root / "arrow_columns.py")
    (root / "bws_scores" / "errors.py").write_text("from semrel.metrics.nowhere import DataValidationError\n")
    with pytest.raises(SpaceError, match="links to metrics.nowhere, which is not a module file"):
        build_space("bws_scores", tmp_path / "out", metrics_root=root)


@pytest.mark.parametrize("name", NAMES)
def test_space_answers_like_evaluate_load(servers, name):
    server = servers[name]
    example, options = space_example(server.folder)
    expected = evaluate.load(str(METRICS_ROOT / name)).compute(**example, **options)
    assert server.compute(example, options) == json.loads(json.dumps(expected))
    assert "ModuleNotFoundError" not in server.output()


@pytest.mark.parametrize("name", NAMES)
def test_space_shows_the_metrics_error_for_bad_input(servers, name):
    from gradio_client.exceptions import AppError

    inputs, words = BAD_INPUT[name]
    server = servers[name]
    names = list(space_example(server.folder)[0])
    with pytest.raises(AppError, match=words):
        server.compute(inputs, {}, names=names)
    example, options = space_example(server.folder)  # and the server still answers
    assert server.compute(example, options)


def test_verify_space_compares_with_evaluate_and_says_when_gradio_is_missing(tmp_path, monkeypatch):
    folder = build_space("lexical_overlap", tmp_path).folder
    assert "answered its example as evaluate.load(...).compute does" in verify_space(folder)
    (folder / "app.py").write_text((folder / "app.py").read_text().replace('"references": [0.6, 0.1, 1.0]',
                                                                           '"references": [0.6, 0.1, 0.9]'))
    import sys

    monkeypatch.setitem(sys.modules, "gradio", None)
    with pytest.raises(SpaceError, match="gradio is not installed"):
        verify_space(folder)


def test_a_space_whose_port_another_program_took_starts_on_a_new_one(tmp_path, monkeypatch):
    folder = build_space("lexical_overlap", tmp_path).folder
    example, options = space_example(folder)
    expected = evaluate.load(str(METRICS_ROOT / "lexical_overlap")).compute(**example, **options)
    with socket.socket() as taken:  # listens, so a bare connect would take it for the app
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        first, free_port = [taken.getsockname()[1]], spaces._free_port
        monkeypatch.setattr(spaces, "_free_port", lambda: first.pop() if first else free_port())
        with SpaceServer(folder, timeout=120) as server:
            assert server.port != taken.getsockname()[1] and str(server.port) in server.url
            assert server.compute(example, options) == json.loads(json.dumps(expected))
