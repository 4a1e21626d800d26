"""Every metric folder is a Space folder whose card YAML, docstring examples and math doctests hold."""

import doctest
import importlib
from pathlib import Path

import pytest

from project import REPO
NAMES = ["annotator_agreement", "bws_scores", "lexical_overlap", "mse_lower_bound", "split_half_reliability"]
CARD_SECTIONS = ["## Metric Description", "## How to Use", "### Inputs", "### Output Values", "### Examples",
                 "## Limitations and Bias", "## Citation", "## Further References"]


@pytest.mark.parametrize("name", NAMES)
def test_metric_folder_is_a_space_and_its_examples_run(name, monkeypatch):
    folder = REPO / "metrics" / name
    assert {"README.md", "app.py", "requirements.txt", f"{name}.py"} <= {p.name for p in folder.iterdir()}
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\n")
    for line in ("sdk: gradio", "sdk_version: 6.31.0", "app_file: app.py", "- evaluate", "description:"):
        assert line in card
    missing = [s for s in CARD_SECTIONS if s not in card]
    assert not missing, f"{name}/README.md lacks {missing}"
    assert "semrel" not in (folder / "requirements.txt").read_text()
    monkeypatch.chdir(REPO)  # the examples load "metrics/<name>"
    import evaluate

    module = evaluate.load(f"metrics/{name}")
    examples = doctest.DocTestParser().get_doctest(module.inputs_description, {"evaluate": evaluate}, name, None, 0)
    assert examples.examples
    assert doctest.DocTestRunner().run(examples).failed == 0


@pytest.mark.parametrize("name", ["bws_scores", "split_half_reliability", "annotator_agreement"])
def test_data_only_statistics_are_measurements(name):
    import evaluate

    module = evaluate.load(str(REPO / "metrics" / name))
    assert isinstance(module, evaluate.Measurement) and module.module_type == "measurement"


@pytest.mark.parametrize("module", ["semrel.metrics.bws.counting", "semrel.metrics.bws.design",
                                    "semrel.metrics.split_half.split_half"])
def test_docstring_examples(module):
    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted >= 2 and result.failed == 0


@pytest.mark.parametrize("module", ["semrel.metrics.bws.counting", "semrel.metrics.bws.readers",
                                    "semrel.metrics.split_half.split_half",
                                    "semrel.metrics.agreement", "semrel.metrics.overlap",
                                    "semrel.metrics.lower_bound"])
def test_metric_modules_import_with_dataset_scripts_and_trainers_blocked(module):
    import subprocess
    import sys

    code = ("import importlib.abc, sys\n"
            "class B(importlib.abc.MetaPathFinder):\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] in ('dataset_scripts', 'trainers', 'publishing'):\n"
            "            raise ModuleNotFoundError(name)\n"
            f"sys.meta_path.insert(0, B())\nimport {module}\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


def test_one_validation_error_class_reexported_by_dataset_scripts():
    import semrel.dataset_scripts.errors
    import semrel.metrics.errors

    assert semrel.dataset_scripts.errors.DataValidationError is semrel.metrics.errors.DataValidationError
    import ast

    tree = ast.parse((REPO / "metrics" / "errors.py").read_text())
    imports = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert [getattr(n, "module", None) for n in imports] == ["__future__"]  # ground floor: stdlib only
