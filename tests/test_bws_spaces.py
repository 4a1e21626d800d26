"""metrics/bws_scores and metrics/split_half_reliability are Hub Space folders that load offline."""

import doctest
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", ["bws_scores", "split_half_reliability"])
def test_metric_folder_is_a_space_and_its_card_example_runs(name, monkeypatch):
    folder = REPO / "metrics" / name
    assert {"README.md", "app.py", "requirements.txt", f"{name}.py"} <= {p.name for p in folder.iterdir()}
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\n")
    for line in ("sdk: gradio", "app_file: app.py", "pinned: false", "- evaluate", "- metric", "description:"):
        assert line in card
    assert "launch_gradio_widget(module)" in (folder / "app.py").read_text()
    assert "semrel" in (folder / "requirements.txt").read_text().split()  # DataValidationError, cross-folder math
    for module in folder.glob("*.py"):  # evaluate's import scanner needs one import per line
        assert not any(line.startswith("import ") and "," in line for line in module.read_text().splitlines())

    monkeypatch.chdir(REPO)  # the examples load "metrics/<name>"
    import evaluate

    module = evaluate.load(f"metrics/{name}")
    examples = doctest.DocTestParser().get_doctest(module.inputs_description, {}, name, None, 0)
    assert len(examples.examples) >= 3
    assert doctest.DocTestRunner().run(examples).failed == 0


@pytest.mark.parametrize("module", ["metrics.bws_scores.counting", "metrics.bws_scores.design",
                                    "metrics.split_half_reliability.split_half"])
def test_docstring_examples(module):
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted >= 2 and result.failed == 0
