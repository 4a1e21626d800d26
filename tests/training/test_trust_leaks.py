"""Names, never paths, and cards that say one thing (issue 48, §1 card, §3): `semrel benchmark`
names each model in benchmark.json, benchmark.md and the `--card` section by a name (packaged
name, Hub id@commit, a relative folder as given, else the folder's name), with no path of this
machine in any of them; a `--train-splits` run's card names the same splits in every line that
names them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from project import REPO
from semrel.dataset_scripts.pairs import load_pairs
from semrel.publishing.guard import local_path_regex
from semrel.trainers.benchmark.names import hide, public_names
from semrel.trainers.benchmark.report import CARD_HEADING
from semrel.trainers.fitting import fit
from trainer_fixtures import model_kinds, saved_runs, small_args

# ---- the names a benchmark gives its models -------------------------------------------------

NAMES = [  # (case, spec ({tmp}: the test's folder), the folder it is in, the name files show)
    ("packaged", "minilm", None, "minilm"),
    ("Hub model at a branch", "ns/tiny-st@main", "hub/models--ns--tiny-st/snapshots/0123abcd", "ns/tiny-st@0123abcd"),
    ("Hub model at a commit", "ns/tiny-st@0123abcd", "hub/models--ns--tiny-st/snapshots/0123abcd",
     "ns/tiny-st@0123abcd"),
    ("absolute folder", "{tmp}/models/plain-bert", "models/plain-bert", "plain-bert"),
    ("relative folder", "runs/str-bi-card", "runs/str-bi-card", "runs/str-bi-card"),
    ("two folders of one name, first", "{tmp}/a/twin", "a/twin", "a/twin"),
    ("two folders of one name, second", "{tmp}/b/twin", "b/twin", "b/twin"),
]


def test_each_model_gets_its_name_and_reasons_lose_their_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    models = []
    for _, spec, folder, _ in NAMES:
        if folder and not folder.startswith("hub/"):
            (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        models.append((spec.replace("{tmp}", str(tmp_path)), tmp_path / folder if folder else Path("/venv/minilm")))
    names, hidden = public_names(models)
    assert [names[spec] for spec, _ in models] == [name for *_, name in NAMES]
    reason = f"trained on {tmp_path}/models/plain-bert/x, cached in {Path.home()}/.cache and /venv/minilm"
    assert hide(reason, hidden) == "trained on plain-bert/x, cached in ~/.cache and minilm"


@pytest.fixture(scope="module")
def benchmarked(tmp_path_factory, fixture_mirror):
    """`semrel benchmark` (a subprocess, HOME in the test's folder) over semrel-2024/eng of the
    fixture mirror with every way of naming a model, `--output` and `--card` of the relative run."""
    root = tmp_path_factory.mktemp("leaks")
    kinds = model_kinds(root / "kinds")
    work, home = root / "work", root / "home"
    saved_runs(work / "runs")
    shutil.copytree(kinds["transformer"], home / "models" / "plain-bert")
    for parent in ("a", "b"):
        shutil.copytree(kinds["bi-encoder"], root / parent / "twin")
    specs = {"minilm": "minilm", str(kinds["bi-encoder"]): "bi-encoder", "~/models/plain-bert": "plain-bert",
             "runs/run": "runs/run", str(root / "a" / "twin"): "a/twin", str(root / "b" / "twin"): "b/twin"}
    argv = [sys.executable, "-m", "semrel", "benchmark", *(a for s in specs for a in ("--model", s)),
            "--only", "semrel-2024/eng/validation", "--mirror", str(fixture_mirror), "--cache-dir", str(root / "hf"),
            "--score-cache", str(root / "scores"), "--resamples", "200", "--output", str(root / "out"),
            "--card", "runs/run"]
    env = {**os.environ, "HOME": str(home)}
    done = subprocess.run(argv, capture_output=True, text=True, cwd=work, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    texts = {name: (root / "out" / name).read_text() for name in ("benchmark.json", "benchmark.md")}
    texts["README.md"] = (work / "runs" / "run" / "README.md").read_text()
    return root, specs, texts


@pytest.mark.slow  # a subprocess scoring six models
@pytest.mark.parametrize("file", ["benchmark.json", "benchmark.md", "README.md"])
def test_no_file_of_a_benchmark_names_a_path_of_this_machine(benchmarked, file):
    root, _, texts = benchmarked
    text = texts[file]
    for path in (root, Path.home(), Path(sys.prefix), REPO):
        assert str(path) not in text, (file, path)
    assert not local_path_regex().search(text), (file, local_path_regex().search(text))


@pytest.mark.slow  # a subprocess scoring six models
def test_the_files_name_each_model_by_its_name(benchmarked):
    _, specs, texts = benchmarked
    record = json.loads(texts["benchmark.json"])
    assert [m["spec"] for m in record["models"]] == list(specs.values())
    assert "path" not in record["models"][0]
    assert {c["model"] for c in record["cells"]} == set(specs.values())
    assert {(c["model1"], c["model2"]) for c in record["comparisons"]} == {
        (a, b) for i, a in enumerate(specs.values()) for b in list(specs.values())[i + 1:]}
    for name in specs.values():
        assert f"## `{name}` (" in texts["benchmark.md"]
    card = texts["README.md"]
    assert card.count(CARD_HEADING + "\n") == 1
    assert "semrel-2024/eng/validation: minilm − runs/run " in card
    assert "semrel-2024/eng/validation: plain-bert − runs/run " in card
    assert "semrel-2024/eng/validation: runs/run − a/twin " in card


# ---- a --train-splits run's card: every line names the same splits ---------------------------

SPLITS = [  # (train_splits, data folder, the "Trained with" line, the data line, the metrics' first line)
    ("train", "labelled", "on the `train` split", "train pairs: 64, the split(s) `train`; evaluation split: "
     "`validation`", "On the `validation` split, scores and labels on the [0, 1] label scale:"),
    ("train+validation", "labelled", "on the splits `train+validation`", "train pairs: 88, the split(s) "
     "`train+validation`; evaluation split: `test`", "On the `test` split, scores and labels on the [0, 1] label "
     "scale:"),
    ("train+validation", "held-back", "on the splits `train+validation`", "train pairs: 88, the split(s) "
     "`train+validation`; evaluation split: none", "Not evaluated: trained on 88 pairs, the splits "
     "`train+validation` of `{data}`, and no split it did not train on has gold scores. A figure on the splits "
     "it learnt from would measure nothing; the run that chose this recipe's settings on a held-out split gives "
     "its expected quality."),
    ("train+validation+test", "labelled", "on the splits `train+validation+test`", "train pairs: 120, the "
     "split(s) `train+validation+test`; evaluation split: none", "Not evaluated: trained on 120 pairs, the "
     "splits `train+validation+test` of `{data}`, and no split it did not train on has gold scores. A figure on "
     "the splits it learnt from would measure nothing; the run that chose this recipe's settings on a held-out "
     "split gives its expected quality."),
]


@pytest.mark.slow  # trains 2 steps
@pytest.mark.parametrize("splits, folder, trained, data_line, metrics", SPLITS,
                         ids=[f"{s} {f}" for s, f, *_ in SPLITS])
def test_every_line_of_the_card_names_the_splits_it_trained_on(encoder, folders, tmp_path, splits, folder,
                                                               trained, data_line, metrics):
    data = load_pairs(str(folders / folder), score_range=(0, 1))
    fit(data, encoder, small_args(tmp_path / "run", train_splits=splits))
    lines = (tmp_path / "run" / "README.md").read_text().splitlines()
    assert [line for line in lines if line.startswith("Trained with")] == [
        f"Trained with `semrel` (semrel) {trained}, objective `mse`."]
    assert [line for line in lines if line.startswith("- train pairs:")] == [f"- {data_line}"]
    assert lines[lines.index("## Metrics") + 2] == metrics.format(data=data.name)
