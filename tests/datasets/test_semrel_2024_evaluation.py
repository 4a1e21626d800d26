"""``semrel evaluate`` and the gold of a semrel-2024 split: the official SemEval-2024 Task 1
evaluation run as a user runs it, on the real mirrored files."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from project import REPO
from semrel.cli import main
from semrel.metrics.errors import DataValidationError
from semrel.metrics.overlap import dice
from semrel.metrics.submission import read_gold, write_predictions

AMH_TEST = "semrel-2024/Track A/amh/amh_test_with_labels.csv"


@pytest.fixture(scope="module")
def amh(upstream, cache_dir):
    import semrel.dataset_scripts

    return semrel.dataset_scripts.load("semrel-2024", "amh", mirror=upstream, cache_dir=cache_dir)


@pytest.fixture
def submission(amh, tmp_path):
    """Dice predictions for amh test, rows reversed, named as the task's scorer wants them."""
    test = amh["test"]
    predicted = dice(test["sentence1"], test["sentence2"])
    path = write_predictions(tmp_path / "pred_amh.csv", test["pair_id"][::-1], predicted[::-1])
    return path, stats.spearmanr(predicted, np.asarray(test["score"])).statistic


def test_split_gold_and_gold_file_agree(submission, mirror, cache_dir, capsys):
    path, expected = submission
    assert main(["evaluate", str(path), "--split", "test", "--mirror", str(mirror), "--cache-dir",
                 str(cache_dir), "--json"]) == 0
    (from_split,) = json.loads(capsys.readouterr().out)
    assert from_split == {"predictions": str(path), "gold": "semrel-2024/amh/test", "language": "amh",
                          "pairs": 171, "spearman": pytest.approx(expected, abs=1e-12)}
    assert main(["evaluate", str(path), "--gold", str(mirror / AMH_TEST)]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["predictions", "gold", "language", "pairs", "spearman"]
    assert table[1].split()[-3:] == ["amh", "171", f"{expected:.4f}"]


def test_unpublished_labels_are_an_error_naming_the_split(mirror, cache_dir):
    from semrel.dataset_scripts.semrel_2024.evaluation import gold

    with pytest.raises(DataValidationError, match=r"semrel-2024/esp/test: row 1: no gold score.*\(ESP-test-0000\)"):
        gold("esp", "test", mirror=mirror, cache_dir=cache_dir)
    reference, languages = gold("esp", "dev", mirror=mirror, cache_dir=cache_dir)  # dev is validation
    assert len(reference.ids) == 140 and set(languages) == {"esp"}


@pytest.mark.parametrize("args, words", [
    (["--gold", "G", "--gold", "G"], "--gold: 2 files for 1 predictions files"),
    (["--split", "test", "--language", "amh", "--language", "hau"], "--language: 2 given for 1"),
    (["--gold", "G", "--mirror", "M"], "--mirror and --cache-dir are for --split"),
    (["--gold", "G", "--language", "amh", "--json"], "G: no such file"),
], ids=["gold count", "language count", "mirror with gold", "missing gold"])
def test_usage_mistakes_exit_2_in_one_line(args, words, submission, tmp_path, capsys):
    path, _ = submission
    args = [str(tmp_path / a) if a in ("G", "M") else a for a in args]
    assert main(["evaluate", str(path), *args]) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1, err


def test_unnamed_file_needs_a_language(tmp_path, capsys):
    path = write_predictions(tmp_path / "mine.csv", ["a"], [0.5])
    assert main(["evaluate", str(path), "--split", "test"]) == 2
    assert "mine.csv: name it pred_<lang>.csv or give --language" in capsys.readouterr().err


def semrel(*args, cwd):
    return subprocess.run([sys.executable, "-m", "semrel", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "SEMREL_MIRROR": str(REPO.parent / "x")})


def test_a_typo_in_a_flag_exits_2_in_one_line(tmp_path):
    typo = semrel("evaluate", "pred_amh.csv", "--split", "test", "--langauge", "amh", cwd=tmp_path)
    assert typo.returncode == 2 and typo.stdout == ""
    assert typo.stderr.strip() == "semrel: error: unrecognized arguments: --langauge amh (see semrel --help)"


@pytest.mark.slow  # two subprocesses
def test_command_as_a_user_runs_it(submission, mirror, tmp_path):
    path, expected = submission
    bad = tmp_path / "pred_bad.csv"
    bad.write_text(path.read_text(encoding="utf-8") + "Pair_ID_amh_test_1,0.5\n", encoding="utf-8")
    done = semrel("evaluate", path, bad, "--gold", mirror / AMH_TEST, "--gold", mirror / AMH_TEST, cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr.strip() == (f"semrel evaluate: error: {bad}: row 172: repeated PairID (first at row "
                                   "171) (Pair_ID_amh_test_1)")
    done = semrel("evaluate", path, "--gold", mirror / AMH_TEST, "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)[0]["spearman"] == pytest.approx(expected, abs=1e-12)
    assert len(read_gold(mirror / AMH_TEST).ids) == 171


def test_results_page_shows_the_baselines_of_results_json():
    """benchmarks/RESULTS.md's SemRel-2024 baseline table is the one results.json holds, as the
    benchmark renders it; LaBSE and best are the task's figures on test (Track A languages)."""
    from benchmarks.bench_semrel_2024_baselines import BEST, LABSE, RESULTS_KEY, markdown

    stored = json.loads((REPO / "benchmarks" / "results.json").read_text(encoding="utf-8"))[RESULTS_KEY]
    text = (REPO / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8")
    section = text.split("\n## SemRel-2024 baselines", 1)[1].split("\n## ", 1)[0]
    assert markdown(stored["table"]) in section and f"`{stored['command']}`" in section
    for language, by_split in stored["table"].items():
        assert by_split.get("test", {}).get("labse") == LABSE.get(language if "test" in by_split else None)
        assert by_split.get("test", {}).get("best") == BEST.get(language if "test" in by_split else None)
