"""What `pip install` gives a user: one top-level import name, `semrel`, usable from anywhere.

Each test installs the repository into a fresh virtualenv (tests/fresh_env.py) and runs it from a
directory outside the repository, as a user would.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fresh_env import fresh_venv, install, run
from project import REPO
from semrel.metrics.bws.counting import bws_counting_scores

pytestmark = pytest.mark.slow
PARTS = ("dataset_scripts", "metrics", "trainers", "publishing", "upload", "scripts", "tests")
USE = """
import json, sys
import evaluate
import semrel
from semrel.metrics import module_path, names
from semrel.dataset_scripts.registry import REGISTRY
bws = evaluate.load(module_path("bws_scores"))
r = bws.compute(tuples=[["a", "b", "c", "d"], ["a", "b", "c", "e"]], best=["a", "b"], worst=["d", "a"])
print(json.dumps({"file": semrel.__file__, "metrics": names(), "datasets": sorted(REGISTRY),
                  "score": r["score"], "top": sorted({m.split(".")[0] for m in sys.modules} & set(sys.argv[1:]))}))
"""


def top_level_names(python: Path) -> set[str]:
    """Top-level names the semrel distribution put into site-packages (its RECORD), dist-info aside."""
    code = ("import importlib.metadata as m; d = m.distribution('semrel'); "
            "print('\\n'.join(sorted({str(f).split('/')[0] for f in d.files})))")
    done = run(python, "-c", code, cwd=python.parent)
    assert done.returncode == 0, done.stderr
    return {n for n in done.stdout.split() if not n.endswith(".dist-info") and n not in ("..", "__pycache__")}


@pytest.mark.parametrize("editable", [False, True], ids=["regular", "editable"])
def test_an_install_exposes_semrel_alone_and_works_from_anywhere(editable, tmp_path):
    python = fresh_venv(tmp_path / "venv")
    install(python, *(["-e", str(REPO)] if editable else [str(REPO)]))
    names = top_level_names(python)
    site = next((tmp_path / "venv" / "lib").glob("python*/site-packages"))
    assert not {p for p in PARTS if (site / p).exists() or (site / f"{p}.py").exists()}
    if editable:  # a .pth and the finder that maps semrel.<part> onto the checkout's folders
        assert {n for n in names if not n.startswith("__editable__")} == set(), names
    else:
        assert names == {"semrel"}, names
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = run(python, "-c", USE, *PARTS, cwd=elsewhere, env={"HF_MODULES_CACHE": str(tmp_path / "modules")})
    assert done.returncode == 0, done.stderr[-3000:]
    used = json.loads(done.stdout.splitlines()[-1])
    assert Path(used["file"]).is_relative_to(REPO if editable else site)
    assert used["metrics"] == ["annotator_agreement", "bws_scores", "correlation_comparison",
                               "correlation_with_humans", "lexical_overlap", "mse_lower_bound",
                               "split_half_reliability"]
    assert used["datasets"] == ["c-sts", "crowd-sts", "czech-news-sts", "semrel-2024", "str-2021"]
    expected = bws_counting_scores([["a", "b", "c", "d"], ["a", "b", "c", "e"]], ["a", "b"], ["d", "a"])
    assert used["score"] == expected.score.tolist() and used["top"] == []
    cli = run(python.parent / "semrel", "--help", cwd=elsewhere)
    assert cli.returncode == 0 and "bws" in cli.stdout, cli.stderr
