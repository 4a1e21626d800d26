"""Every metric folder is a Space folder whose card YAML, docstring examples and math doctests hold."""

import doctest
import importlib

import pytest

from project import REPO

NAMES = ["annotator_agreement", "bws_scores", "lexical_overlap", "mse_lower_bound", "split_half_reliability"]
CARD_SECTIONS = ["## Metric Description", "## How to Use", "### Inputs", "### Output Values", "### Examples",
                 "## Limitations and Bias", "## Citation", "## Further References"]


@pytest.mark.parametrize("name", NAMES)
def test_metric_folder_is_a_space_and_its_examples_run(name, tmp_path, monkeypatch):
    folder = REPO / "metrics" / name
    assert {p.name for p in folder.iterdir()} - {"__pycache__"} == {"README.md", "app.py", "requirements.txt",
                                                                    f"{name}.py"}
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\n")
    for line in ("sdk: gradio", "sdk_version: 6.31.0", "app_file: app.py", "- evaluate", "description:"):
        assert line in card
    missing = [s for s in CARD_SECTIONS if s not in card]
    assert not missing, f"{name}/README.md lacks {missing}"
    for how in ("pip install -r requirements.txt && python app.py", f'evaluate.load(module_path("{name}"))',
                f'evaluate.load("<namespace>/{name}")'):
        assert how in card, f"{name}/README.md does not say {how}"
    assert 'evaluate.load("metrics/' not in card
    # the build adds the wheel and the gradio pin; the folder's own file lists only other packages
    packages = [line for line in (folder / "requirements.txt").read_text().splitlines()
                if line.strip() and not line.startswith("#")]
    assert packages == []
    monkeypatch.chdir(tmp_path)  # the examples load the module from the installed package, not "metrics/<name>"
    import evaluate

    from semrel.metrics import module_path

    module = evaluate.load(module_path(name))
    assert 'evaluate.load("metrics/' not in module.inputs_description
    examples = doctest.DocTestParser().get_doctest(module.inputs_description, {}, name, None, 0)
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


@pytest.mark.slow  # a Python process per module
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
