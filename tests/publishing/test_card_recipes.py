"""The "build it yourself" recipe of every dataset card (publishing.cards.build_recipe).

Slow: for each dataset whose upstream files are in the mirror, the recipe's lines run as written
(bash, ``set -e``) in a fresh virtualenv that has pip (shared as :class:`Venvs` says), in a copy
of the source folder, as a user would after reading the card: it installs semrel with pip, builds
the dataset, writes a card that holds the same recipe and every plot it links, loads a config,
and never installs torch.
Fast: what every recipe says, and the one-line error of a build without matplotlib.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fresh_env import fresh_venv, install
from project import REPO
from semrel import cli
from semrel.dataset_scripts import REGISTRY
from semrel.publishing import cards
from semrel.publishing.cards import build_recipe

IN_MIRROR = ["str-2021", "czech-news-sts", "semrel-2024", "c-sts", "crowd-sts"]  # fewest extras first


def commands(recipe: str) -> list[str]:
    return [line.split("   #")[0] for line in recipe.splitlines() if not line.startswith("#")]


def extras(install_line: str) -> frozenset[str]:
    """The extras of a recipe's first line, ``pip install '.[a,b]'``."""
    return frozenset(re.fullmatch(r"pip install '\.\[(.+)\]'", install_line)[1].split(","))


@pytest.mark.parametrize("dataset_id", sorted(REGISTRY))
def test_every_recipe_installs_what_its_build_needs_and_runs_as_written(dataset_id):
    spec = REGISTRY[dataset_id]
    recipe = build_recipe(dataset_id)
    lines = commands(recipe)
    wanted = extras(lines[0])
    assert "report" in wanted and ("crowd" in wanted) == (dataset_id == "crowd-sts")
    assert "train" not in wanted and "torch" not in recipe
    assert lines[1].startswith(f"semrel build --only {dataset_id} --no-report")
    assert not any("[" in line for line in lines[1:]), "optional parts belong in comments"
    assert ("--data-dir" in lines[1]) == (set(spec.user_data_configs) == set(spec.configs))
    assert recipe.startswith(cards.source_line())


def test_the_source_line_reads_the_package_metadata(monkeypatch):
    assert cards.NO_ADDRESS in cards.source_line()

    class Meta:
        def get_all(self, key):
            return ["Homepage, https://example.org/h", "Source, https://example.org/s"]

    monkeypatch.setattr(cards, "metadata", lambda name: Meta())
    assert "semrel's source is at https://example.org/s:" in cards.source_line()


def test_a_build_without_matplotlib_is_one_line_naming_the_extra(monkeypatch, tmp_path, capsys):
    """Refused before any row is read; not a traceback, not a card with plots missing."""
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    (tmp_path / "mirror").mkdir()
    assert cli.main(["build", "--only", "str-2021", "--no-report", "--out", str(tmp_path / "out"),
                     "--mirror", str(tmp_path / "mirror")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "need matplotlib" in err[0] and "pip install '.[report]'" in err[0], err
    assert not (tmp_path / "out" / "hub" / "datasets" / "str-2021").exists()


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    """A copy of the source folder: the files git tracks or would track (no build/, no .venv/)."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO,
                            capture_output=True, check=True).stdout.decode().split("\0")
    dest = tmp_path_factory.mktemp("recipe") / "semrel"
    for name in listed:
        if name and (REPO / name).is_file():  # a tracked file deleted in the working tree is not
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, dest / name)
    return dest


class Venvs:
    """A venv for a recipe's install line: one the recipes before it used, where their lines
    installed no extra that this line does not, else a new one from ``make()`` (a recipe still runs
    its own install line in it). So no recipe runs where something its own line does not install
    is present, and the recipes of the same extras, then one of more extras, share one venv."""

    def __init__(self, make):
        self.make, self.made = make, []  # made: [every extra installed in it, its python]

    def __call__(self, install_line: str) -> Path:
        wanted = extras(install_line)
        for entry in self.made:
            if entry[0] <= wanted:
                entry[0] = wanted
                return entry[1]
        self.made.append([wanted, self.make()])
        return self.made[-1][1]


@pytest.mark.parametrize("lines, shared", [
    (["[report]", "[report]", "[crowd,report]"], [0, 0, 0]),
    (["[report]", "[crowd,report]", "[report]", "[crowd,report]"], [0, 0, 1, 0]),
    (["[crowd,report]", "[report]", "[report]"], [0, 1, 1]),
    (["[a,b]", "[b,c]", "[a,b,c]"], [0, 1, 0]),
])
def test_a_venv_is_shared_only_with_recipes_that_install_no_more(lines, shared):
    made = iter(range(10))
    venvs = Venvs(lambda: next(made))
    assert [venvs(f"pip install '.{line}'") for line in lines] == shared


@pytest.fixture(scope="module")
def venvs(tmp_path_factory) -> Venvs:
    def make() -> Path:
        python = fresh_venv(tmp_path_factory.mktemp("venv") / "venv")
        install(python, "pip")  # the user's pip, which the recipe calls by name
        return python

    return Venvs(make)


@pytest.mark.slow
@pytest.mark.parametrize("dataset_id", IN_MIRROR)
def test_the_cards_recipe_builds_the_dataset_in_a_fresh_venv(dataset_id, source, mirror, venvs,
                                                              tmp_path):
    folder = tmp_path / "semrel"
    shutil.copytree(source, folder)
    recipe = build_recipe(dataset_id)
    python = venvs(commands(recipe)[0])
    path = [python.parent, *(p for p in os.environ["PATH"].split(os.pathsep)
                             if Path(p) != Path(sys.executable).parent)]  # not this project's venv
    # pip byte-compiles none of what it installs (half of an install's time); Python writes the
    # .pyc of what it imports, as in a user's shell
    env = {**{k: v for k, v in os.environ.items()
              if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE")},
           "PATH": os.pathsep.join(map(str, path)), "VIRTUAL_ENV": str(python.parent.parent),
           "HF_HOME": str(tmp_path / "hf"), "SEMREL_MIRROR": str(mirror),
           "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_COMPILE": "0"}
    done = subprocess.run(["bash", "-e", "-c", recipe], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=1800)
    assert done.returncode == 0, f"{recipe}\n---\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert "DatasetDict" in done.stdout  # the load line printed the config
    card = (folder / "build" / "hub" / "datasets" / dataset_id / "README.md").read_text()
    assert f"```bash\n{recipe}\n```" in card
    linked = re.findall(r"\]\((images/[^)]+\.png)\)", card)
    assert linked and all((folder / "build" / "hub" / "datasets" / dataset_id / p).is_file()
                          for p in linked)
    torch = subprocess.run([str(python), "-c", "import importlib.util as u; print(u.find_spec('torch'))"],
                           capture_output=True, text=True, env=env)
    assert torch.stdout.strip() == "None", torch
