"""metrics/mse_lower_bound and metrics/annotator_agreement are Hub Space folders."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", ["mse_lower_bound", "annotator_agreement"])
def test_metric_folder_is_a_space(name):
    folder = REPO / "metrics" / name
    assert {"README.md", "app.py", "requirements.txt", f"{name}.py"} <= {p.name for p in folder.iterdir()}
    card = (folder / "README.md").read_text(encoding="utf-8")
    for line in ("sdk: gradio", "app_file: app.py", "pinned: false", "- evaluate", "- metric"):
        assert line in card
    assert "launch_gradio_widget(module)" in (folder / "app.py").read_text()
    for module in folder.glob("*.py"):  # evaluate's import scanner needs one import per line
        assert not any(line.startswith("import ") and "," in line
                       for line in module.read_text().splitlines())
