"""Metric folders -> self-sufficient Spaces: the four files and a semrel wheel, the checks, and every
built Space installed into a fresh virtualenv from its requirements.txt alone, its app.py started
on 127.0.0.1 and answering like evaluate.load (slow)."""

from __future__ import annotations

import json
import shutil
import socket
import sys
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, nullcontext
from pathlib import Path

import evaluate
import pytest

from fresh_env import fresh_venv, install, run
from semrel.metrics import module_path
from semrel.publishing import space_server, spaces
from semrel.publishing.space_server import SpaceServer, answers_like_evaluate, verify_space
from semrel.publishing.spaces import (
    METRICS_ROOT,
    SpaceError,
    build_space,
    check_space,
    metric_names,
    package_wheel,
    space_example,
)

NAMES = [
    "annotator_agreement", "bws_scores", "correlation_comparison", "correlation_with_humans", "lexical_overlap",
    "mse_lower_bound", "split_half_reliability",
]
WHEEL = "semrel-0.1.0-py3-none-any.whl"

# One bad input per Space: (inputs, words the page's error must contain)
BAD_INPUT = {
    "annotator_agreement": ({"items": ["a", "a", "b"], "annotators": ["x", "y"], "ratings": [1, 2, 3]},
                            "inputs of different lengths"),
    "bws_scores": ({"tuples": [["a", "b", "c", "d"]], "best": ["a"], "worst": ["a"]},
                   "row 1: best and worst are the same item"),
    "correlation_comparison": ({"predictions1": [1, 2, 3], "predictions2": [1, 2], "references": [1, 2, 3]},
                               "inputs of different lengths"),
    "correlation_with_humans": ({"predictions": [1, 2, 3, 4], "references": [1, 2, "x", 4]},
                                r"references\[2\] is 'x'"),
    "lexical_overlap": ({"sentence1": ["a b", "c"], "sentence2": ["a", "c d"], "references": ["high", 0.1]},
                        r"references\[0\] is 'high'"),
    "mse_lower_bound": ({"predictions": [1.0]}, "annotations: missing input"),
    "split_half_reliability": ({"tuples": [["a", "b", "c", "d"]], "best": ["e"], "worst": ["a"]},
                               "best is not an item of the tuple"),
}


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """All five Spaces built into one folder (one wheel for them all)."""
    out = tmp_path_factory.mktemp("hub")
    for name in NAMES:
        build_space(name, out)
    return out


def test_metric_names():
    assert metric_names() == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_a_metric_folder_holds_no_python_but_its_module_and_app(name):
    assert sorted(p.name for p in (METRICS_ROOT / name).glob("*.py")) == sorted([f"{name}.py", "app.py"])


def test_a_space_holds_its_four_files_and_a_current_wheel(hub):
    for name in NAMES:
        folder = hub / "spaces" / name
        assert sorted(p.name for p in folder.iterdir()) == sorted(
            [f"{name}.py", "README.md", "app.py", "requirements.txt", WHEEL]), name
        assert (folder / "requirements.txt").read_text().splitlines() == [f"./{WHEEL}", "gradio==6.31.0"]
        assert check_space(folder) == []
        for file in (f"{name}.py", "app.py", "README.md"):
            assert (folder / file).read_bytes() == (METRICS_ROOT / name / file).read_bytes()
    [built] = (hub / ".wheels").iterdir()  # one wheel for the five Spaces
    with zipfile.ZipFile(hub / "spaces" / "bws_scores" / WHEEL) as wheel:
        for source in (METRICS_ROOT / "space_app.py", METRICS_ROOT / "bws" / "counting.py",
                       METRICS_ROOT / "mse_lower_bound" / "mse_lower_bound.py"):
            inside = "semrel/metrics/" + source.relative_to(METRICS_ROOT).as_posix()
            assert wheel.read(inside) == source.read_bytes(), inside  # built from the source as it is
    assert package_wheel(hub) == built / WHEEL  # the source did not change: the same wheel


@pytest.mark.slow  # builds two wheels with pip
def test_the_wheel_is_rebuilt_when_the_source_changes(tmp_path):
    source = tmp_path / "src"
    for path in spaces._wheel_sources(spaces.SOURCE_ROOT):
        target = source / path.relative_to(spaces.SOURCE_ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    first = package_wheel(tmp_path / "out", source)
    assert package_wheel(tmp_path / "out", source) == first
    space_app = source / "metrics" / "space_app.py"
    space_app.write_text(space_app.read_text() + "\nCHANGED = True\n")
    second = package_wheel(tmp_path / "out", source)
    assert second.parent != first.parent and not first.parent.exists()  # the old state's wheel is gone
    with zipfile.ZipFile(second) as wheel:
        assert wheel.read("semrel/metrics/space_app.py").endswith(b"CHANGED = True\n")


def _edit(file: str, old: str, new: str):
    def edit(folder: Path):
        path = folder / file
        assert old in path.read_text(), (file, old)
        path.write_text(path.read_text().replace(old, new))
    return edit


@pytest.mark.parametrize("edit, message", [
    (lambda f: (f / "app.py").unlink(), "app.py is missing"),
    (lambda f: (f / WHEEL).unlink(), f"requirements.txt:1: names ./{WHEEL}, which is not a file in the Space"),
    (_edit("requirements.txt", "gradio==6.31.0", "gradio"),
     "must pin gradio==6.31.0 (the card's sdk_version), not gradio"),
    (_edit("requirements.txt", f"./{WHEEL}\n", ""), "requirements.txt: lacks semrel (imported"),
    (_edit("app.py", "from pathlib import Path\n", "from pathlib import Path\nimport sklearn\n"),
     "requirements.txt: lacks sklearn (imported, and no listed wheel requires it)"),
    (_edit("app.py", "from pathlib import Path\n", "import json, os\nfrom pathlib import Path\n"),
     "app.py:3: one import per line"),
    (_edit("app.py", 'with_name("split_half_reliability.py")', 'with_name("other.py")'),
     "app.py: must launch its own module"),
    (_edit("README.md", "sdk_version: 6.31.0\n", ""), "README.md: Space YAML needs sdk_version"),
    (_edit("README.md", "- evaluate\n", ""), "README.md: tags must include ['evaluate']"),
])
def test_check_space_names_what_a_space_lacks(hub, tmp_path, edit, message):
    folder = tmp_path / "split_half_reliability"
    shutil.copytree(hub / "spaces" / "split_half_reliability", folder)
    edit(folder)
    assert any(message in p for p in check_space(folder)), check_space(folder)


@pytest.mark.parametrize("file, text, message", [
    ("helper.py", "X = 1\n", "holds helper.py; a metric folder holds only lexical_overlap.py, README.md, app.py, "
                             "requirements.txt (shared code goes in semrel.metrics)"),
    ("requirements.txt", "scipy>=1.11\ngradio==5.0\n", "requirements.txt:2: 'gradio==5.0': the build adds"),
])
def test_build_refuses_what_a_space_would_not_carry(tmp_path, file, text, message):
    root = tmp_path / "metrics"
    shutil.copytree(METRICS_ROOT / "lexical_overlap", root / "lexical_overlap")
    (root / "lexical_overlap" / file).write_text(text)
    with pytest.raises(SpaceError, match=message.replace("(", r"\(").replace(")", r"\)")):
        build_space("lexical_overlap", tmp_path / "out", metrics_root=root)


def test_a_folders_own_requirements_follow_the_wheel_and_gradio(tmp_path):
    root = tmp_path / "metrics"
    shutil.copytree(METRICS_ROOT / "lexical_overlap", root / "lexical_overlap")
    (root / "lexical_overlap" / "requirements.txt").write_text("# extra\nscipy>=1.11\n")
    folder = build_space("lexical_overlap", tmp_path / "out", metrics_root=root).folder
    assert (folder / "requirements.txt").read_text().splitlines() == [f"./{WHEEL}", "gradio==6.31.0", "scipy>=1.11"]


# --- slow: every Space installed into a fresh venv from its requirements.txt, and started ---------

@pytest.fixture(scope="module")
def fresh(hub, tmp_path_factory):
    """name -> a running SpaceServer of the built Space, started with the python of a fresh venv
    holding only what ``pip install -r requirements.txt`` (uv, cwd = the Space folder) put there;
    Spaces whose requirements.txt and the files it names are the same bytes share one venv. The
    seconds each install took are printed (``pytest -s``)."""
    pytest.importorskip("gradio_client")
    venvs, seconds, made = {}, {}, {}
    for name in NAMES:
        folder, start = hub / "spaces" / name, time.monotonic()
        lines = (folder / "requirements.txt").read_text().splitlines()
        key = tuple((line, (folder / line).read_bytes() if line.startswith("./") else b"") for line in lines)
        if key not in made:
            made[key] = fresh_venv(tmp_path_factory.mktemp("venv") / name)
            install(made[key], "-r", "requirements.txt", cwd=folder)
            seconds[name] = time.monotonic() - start
        python = made[key]
        where = run(python, "-c", "import importlib.metadata as m, semrel; print(semrel.__file__, m.version('gradio'))",
                    cwd=folder)
        assert where.returncode == 0, where.stderr
        file, gradio_version = where.stdout.split()
        assert Path(file).is_relative_to(python.parent.parent), file  # the wheel's semrel, not the checkout
        assert gradio_version == "6.31.0"
        venvs[name] = python
    def started(name: str) -> SpaceServer:
        server = SpaceServer(hub / "spaces" / name, timeout=240, python=venvs[name]).__enter__()
        stack.callback(server.__exit__)
        return server

    # uv installs no .pyc: the first app of each venv starts alone and writes the .pyc of all an
    # app imports (gradio's thousands of modules), which the others, started together, then read
    first = list({python: name for name, python in reversed(venvs.items())}.values())
    start = time.monotonic()
    with ExitStack() as stack, ThreadPoolExecutor(len(NAMES)) as pool:
        with pytest.MonkeyPatch.context() as patch:
            patch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
            running = {name: started(name) for name in first}
        rest = [name for name in NAMES if name not in running]
        running |= dict(zip(rest, pool.map(started, rest), strict=True))
        print(f"\nfresh venv + install (s): {json.dumps({n: round(s, 1) for n, s in seconds.items()})} "
              f"({len(made)} venv(s) for {len(NAMES)} Spaces); "
              f"{len(NAMES)} apps started in {time.monotonic() - start:.1f} s", file=sys.stderr)
        yield {name: running[name] for name in NAMES}


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_a_space_from_a_fresh_venv_answers_like_evaluate_load(fresh, name):
    server = fresh[name]
    assert answers_like_evaluate(server) == []
    assert "ModuleNotFoundError" not in server.output() and "Traceback" not in server.output()


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_the_api_inputs_are_named_after_the_features(fresh, name):
    examples = space_example(fresh[name].folder)
    for config in examples:
        module = evaluate.load(module_path(name), None if config == "default" else config)
        features = module.features[0] if isinstance(module.features, list) else module.features
        assert fresh[name].parameters(config) == [*features, "options"]


@pytest.mark.slow
def test_the_ratings_config_of_split_half_reliability_is_reachable(fresh):
    from gradio_client.exceptions import AppError

    server = fresh["split_half_reliability"]
    items, ratings = ["x", "x", "y", "y", "z", "z", "w", "w"], [1, 2, 3, 4, 5, 5, 2, 2]
    expected = evaluate.load(module_path("split_half_reliability"), "ratings").compute(
        items=items, ratings=ratings, trials=50, seed=1)
    assert server.compute({"items": items, "ratings": ratings}, {"trials": 50, "seed": 1}, "ratings") == expected
    with pytest.raises(AppError, match="ratings: missing input"):
        server.compute({"items": items}, {}, "ratings")


@pytest.mark.slow
def test_a_space_leaves_out_an_empty_optional_input(fresh):
    annotations = [[1, 2, 2, 3], [0, 0, 1, 1]]
    answer = fresh["mse_lower_bound"].compute({"annotations": annotations})
    assert answer == evaluate.load(module_path("mse_lower_bound")).compute(annotations=annotations)
    assert "mse" not in answer


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_a_space_shows_the_metrics_error_for_bad_input(fresh, name):
    from gradio_client.exceptions import AppError

    inputs, words = BAD_INPUT[name]
    with pytest.raises(AppError, match=words):
        fresh[name].compute(inputs, {})
    assert answers_like_evaluate(fresh[name]) == []  # and the server still answers


# --- slow: the dev environment's fast path (semrel verify) --------------------------------------

@pytest.mark.slow
def test_verify_space_compares_with_evaluate_and_says_when_gradio_is_missing(hub, fresh, tmp_path, monkeypatch):
    pytest.importorskip("gradio")
    folder = tmp_path / "lexical_overlap"
    shutil.copytree(hub / "spaces" / "lexical_overlap", folder)
    assert verify_space(folder) == ("the Space's app answered the example of each config (default) "
                                    "as evaluate.load(...).compute does")
    # the same Space's app, already running from its fresh venv, stands in for a second start
    monkeypatch.setattr(space_server, "SpaceServer", lambda *args, **kwargs: nullcontext(fresh["lexical_overlap"]))
    load = evaluate.load  # here, the module now answers differently from the Space

    class Changed:
        def __init__(self, module):
            self.module = module

        def compute(self, **kwargs):
            return {**self.module.compute(**kwargs), "spearman": -1.0}

    monkeypatch.setattr(evaluate, "load", lambda *args, **kwargs: Changed(load(*args, **kwargs)))
    with pytest.raises(SpaceError, match="default: the Space answered .* but evaluate.load.*'spearman': -1.0"):
        verify_space(folder)
    monkeypatch.setitem(sys.modules, "gradio", None)
    with pytest.raises(SpaceError, match="gradio is not installed"):
        verify_space(folder)


@pytest.mark.slow
def test_a_space_whose_port_another_program_took_starts_on_a_new_one(hub, monkeypatch):
    pytest.importorskip("gradio")
    folder = hub / "spaces" / "lexical_overlap"
    with socket.socket() as taken:  # listens, so a bare connect would take it for the app
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        first, free_port = [taken.getsockname()[1]], space_server._free_port
        monkeypatch.setattr(space_server, "_free_port", lambda: first.pop() if first else free_port())
        with SpaceServer(folder, timeout=120) as server:
            assert server.port != taken.getsockname()[1] and str(server.port) in server.url
            assert answers_like_evaluate(server) == []
