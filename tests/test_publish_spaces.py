"""Metric folders -> standalone Space folders: vendoring sibling imports, checks, loading without semrel."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from publishing.spaces import SpaceError, build_space, check_space, metric_names

# Loads each Space's module the way its app.py does, from inside the Space, with this project's
# packages made unimportable (as on the Hub, where semrel is not installed).
STANDALONE = textwrap.dedent("""
    import importlib.abc, json, os, sys
    class NotInstalled(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("metrics", "dataset_scripts", "trainers", "scripts"):
                raise ImportError(f"{name} is not installed in a Space")
    sys.meta_path.insert(0, NotInstalled())
    import evaluate
    results = {}
    for folder in sys.argv[1:]:
        os.chdir(folder)
        name = os.path.basename(folder)
        try:
            module = evaluate.load(f"{name}.py")
            results[folder] = module.compute(**json.loads(open("example.json").read())) \\
                if os.path.exists("example.json") else type(module).__name__
        except Exception as exc:
            results[folder] = f"{type(exc).__name__}: {exc}"
    print(json.dumps(results))
""")

SPACE_YAML = """---
title: {name}
emoji: 📏
colorFrom: blue
colorTo: green
sdk: gradio
sdk_version: 5.0.0
app_file: app.py
pinned: false
tags:
- evaluate
- metric
description: test metric {name}
---
# {name}
"""

ALPHA = '''"""evaluate module: twice the sum (test fixture)."""

import datasets
import evaluate

from .core import scaled_sum


class Alpha(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(description="twice the sum", citation="", inputs_description="",
                                   features=datasets.Features({"predictions": datasets.Value("float64")}))

    def _compute(self, predictions):
        return {"total": scaled_sum(predictions)}
'''


def write_metric(root: Path, name: str, files: dict[str, str]) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "README.md").write_text(SPACE_YAML.format(name=name), encoding="utf-8")
    (folder / "app.py").write_text("import evaluate\nfrom evaluate.utils import launch_gradio_widget\n\n"
                                   f'module = evaluate.load("{name}.py")\nlaunch_gradio_widget(module)\n')
    (folder / "requirements.txt").write_text("evaluate>=0.4.6\n")
    (folder / "__init__.py").write_text("")
    for file_name, text in files.items():
        (folder / file_name).write_text(text, encoding="utf-8")
    return folder


HELPERS = """from .consts import FACTOR


def double(x):
    if x < 0:
        from dataset_scripts.errors import DataValidationError  # imported here: light module
        raise DataValidationError("input", 1, "negative")
    return FACTOR * x
"""


def fixture_metrics(root: Path) -> Path:
    """alpha imports beta through the package (as split_half_reliability imports bws_scores);
    beta imports dataset_scripts.errors inside a function (as bws_scores.counting does)."""
    write_metric(root, "alpha", {"alpha.py": ALPHA, "core.py": (
        "from metrics.beta.helpers import double\n\n\ndef scaled_sum(values):\n"
        "    return double(sum(values))\n"),
        "requirements.txt": "evaluate>=0.4.6\n# beta comes from the installed package\nsemrel\n"})
    write_metric(root, "beta", {"beta.py": ALPHA.replace("Alpha", "Beta"),
                                "core.py": "def scaled_sum(values):\n    return sum(values)\n",
                                "helpers.py": HELPERS, "consts.py": "FACTOR = 2\n"})
    (root.parent / "dataset_scripts").mkdir(exist_ok=True)
    shutil.copy(Path(__file__).resolve().parents[1] / "dataset_scripts" / "errors.py",
                root.parent / "dataset_scripts" / "errors.py")
    return root


@pytest.fixture
def metrics_root(tmp_path) -> Path:
    return fixture_metrics(tmp_path / "metrics")


@pytest.fixture(scope="module")
def standalone(tmp_path_factory):
    """Build the fixture and every real metric Space, copy alpha as is, load all without semrel
    in one interpreter (importing evaluate is the slow part)."""
    tmp = tmp_path_factory.mktemp("spaces")
    root = fixture_metrics(tmp / "metrics")
    alpha = build_space("alpha", tmp / "out", metrics_root=root)
    raw = tmp / "raw" / "alpha"
    shutil.copytree(root / "alpha", raw)
    real = [build_space(name, tmp / "out").folder for name in metric_names()]
    for folder in (alpha.folder, raw):
        (folder / "example.json").write_text('{"predictions": [1, 2, 3]}')
    negative = tmp / "negative" / "alpha"  # reaches the vendored DataValidationError
    shutil.copytree(alpha.folder, negative)
    (negative / "example.json").write_text('{"predictions": [-1, -2]}')
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_MODULES_CACHE": str(tmp / "modules"),
           "HF_HOME": str(tmp / "hf")}
    folders = [alpha.folder, raw, negative, *real]
    result = subprocess.run([sys.executable, "-c", STANDALONE, *map(str, folders)],
                            env=env, capture_output=True, text=True, timeout=300, cwd=tmp)
    assert result.returncode == 0, result.stderr
    return alpha, raw, real, json.loads(result.stdout.splitlines()[-1])


def test_sibling_imports_are_vendored_and_the_space_runs_without_semrel(standalone):
    space, _, _, results = standalone
    assert space.vendored == ("beta/consts.py", "beta/helpers.py", "dataset_scripts/errors.py")
    assert space.added_requirements == ("datasets>=5.0",)
    assert space.removed_requirements == ("semrel",)
    folder = space.folder
    assert (folder / "requirements.txt").read_text() == "evaluate>=0.4.6\ndatasets>=5.0\n"
    assert sorted(p.name for p in folder.iterdir()) == [
        "README.md", "alpha.py", "app.py", "consts.py", "core.py", "errors.py", "example.json",
        "helpers.py", "requirements.txt"]
    assert (folder / "core.py").read_text().startswith("from .helpers import double\n")
    assert "        from .errors import DataValidationError\n" in (folder / "helpers.py").read_text()
    assert ("# vendored for the Space: evaluate.load copies only the modules imported here\n"
            "from .consts import FACTOR\nfrom .errors import DataValidationError\n"
            "from .helpers import double\n") in (folder / "alpha.py").read_text()
    assert check_space(folder) == []
    assert results[str(folder)] == {"total": 12.0}
    assert results[str(folder.parents[2] / "negative" / "alpha")] == \
        "DataValidationError: input: row 1: negative"


def test_unvendored_copy_fails_standalone(standalone):
    """The blocker works: the folder copied as is fails the way it would on the Hub."""
    _, raw, _, results = standalone
    assert results[str(raw)].startswith("ImportError: metrics")
    assert any("core.py:1: imports metrics.beta.helpers, which a Space lacks" in p
               for p in check_space(raw))


def test_every_real_metric_space_loads_without_semrel(standalone):
    _, _, real, results = standalone
    assert [f.name for f in real] == metric_names()
    for folder in real:
        assert not results[str(folder)].startswith("ImportError"), results[str(folder)]


@pytest.mark.parametrize("line, message", [
    ("import metrics.beta.helpers\n", "core.py:1: import a project module as one line "
                                      "`from metrics.beta.helpers import <names>`"),
    ("from dataset_scripts import load\n", "core.py:1: `dataset_scripts` is not a module file"),
    ("from metrics.beta.missing import x\n", "missing.py does not exist"),
])
def test_unsupported_imports_are_clear_errors(metrics_root, tmp_path, line, message):
    (metrics_root / "alpha" / "core.py").write_text(line)
    with pytest.raises(SpaceError, match=message):
        build_space("alpha", tmp_path / "out", metrics_root=metrics_root)


def test_check_space_names_what_a_space_lacks(metrics_root, tmp_path):
    folder = build_space("beta", tmp_path / "out", metrics_root=metrics_root).folder
    assert check_space(folder) == []
    (folder / "app.py").write_text("from pathlib import Path\nimport evaluate\n"
                                   'module = evaluate.load(str(Path(__file__).with_name("beta.py")))\n')
    assert check_space(folder) == []  # the other accepted form
    (folder / "app.py").write_text('import evaluate\nmodule = evaluate.load("beta")\n')
    readme = (folder / "README.md").read_text().replace("sdk: gradio", "sdk: static")
    (folder / "README.md").write_text(readme.replace("- metric\n", ""))
    (folder / "helpers.py").write_text("import numpy, scipy\nimport sklearn\nfrom .consts import F  # x\n")
    problems = check_space(folder)
    assert "README.md: Space YAML needs sdk: gradio" in problems
    assert "README.md: tags must include ['evaluate', 'metric']" in problems
    assert any(p.startswith('app.py: must load the module from the Space itself with '
                            '`evaluate.load("beta.py")`') for p in problems)
    assert "helpers.py:1: one import per line (evaluate's scanner)" in problems
    assert "requirements.txt: lacks scikit-learn (imported as `sklearn`)" in problems
    assert ("helpers.py:3: no comment after a relative import (evaluate's scanner reads it as a "
            "'# From: URL')") in problems
    with pytest.raises(SpaceError, match="no metric module nope.py"):
        build_space("nope", tmp_path / "out", metrics_root=metrics_root)
