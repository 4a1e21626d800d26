"""scripts/train_semrel_2024_languages.py, the per-language SemRel-2024 study written out as semrel
commands: a smoke run with a tiny model on the real files of one small language (kin: Track A and
Track C) and Czech News STS, as a user runs it (a subprocess from another directory)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from project import REPO, not_a_count, refused_before_running
from semrel.publishing.prediction_files import check_entries
from trainer_fixtures import tiny_encoder

SCRIPT = REPO / "scripts" / "train_semrel_2024_languages.py"


def commands(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith("$ semrel")]


def study_env(mirror, tmp_path) -> dict:
    return {**os.environ, "SEMREL_MIRROR": str(mirror), "HF_HOME": str(tmp_path / "hf")}


def smoke_run(mirror, tmp_path, out, *options):
    """The script on kin with a tiny model for 2 steps per member, as a user runs it (a subprocess
    from another directory): a function that runs it again, and this first run, which succeeded."""
    model = tiny_encoder(tmp_path / "tiny-bert")
    env = study_env(mirror, tmp_path)
    argv = [sys.executable, str(SCRIPT), "--model", f"e5-small={model}", "--max-steps", "2",
            "--precision", "fp32", "--language", "kin", *options, "--output", str(out)]

    def run(*more):
        return subprocess.run([*argv, *more], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=3600)

    done = run()
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return run, done


@pytest.mark.slow
def test_one_language_and_one_target_train_choose_on_dev_and_score_test_officially(mirror, tmp_path):
    from scripts.semrel_2024_languages.tables import RESULTS_KEY, store

    out = tmp_path / "study"
    run, done = smoke_run(mirror, tmp_path, out, "--czech")
    ran = commands(done.stdout)
    fits = [c for c in ran if c.split()[2] == "fit"]
    assert [f.split("--config ")[1].split()[0] for f in fits] == ["kin"] * 4 + ["cross-lingual-kin"] * 2 + ["all"] * 2
    for fit, (encoder, rate) in zip(fits[:4], [("bi", "2e-5"), ("bi", "5e-5"), ("cross", "2e-5"),
                                               ("cross", "5e-5")], strict=True):
        assert f"--encoder {encoder} --epochs 4 --learning-rate {rate}" in fit
        assert "--eval-dataset semrel-2024 --eval-config kin --eval-split validation" in fit
        assert fit.endswith("--selection-overlap omit --max-steps 2 --eval-steps 1")  # kin dev holds train pairs
    assert all("--eval-dataset" not in f and "--epochs 2" in f for f in fits[4:])  # Track C chooses nothing
    ensembles = [c for c in ran if c.split()[2] == "ensemble"]
    assert "--method rank" in ensembles[0] and "--method ridge --features dice char-ridge" in ensembles[1]
    tests = [c for c in ran if c.split()[2] == "predict" and "--split test" in c and "track-a/kin" in c]
    assert len(tests) == 3  # the two members and the ensemble chosen on dev: the other never sees test
    scored = [c for c in ran if c.split()[2] == "evaluate" and "--split test" in c]
    assert "--language kin" in scored[0] and "--language cross-lingual-kin" in scored[1]

    study = json.loads((out / "study.json").read_text())
    kin = study["track_a"]["kin"]
    assert kin["pairs"] == {"train": 778, "validation": 102, "test": 222}
    assert set(kin["grid"]) == {"bi-lr2e-5", "bi-lr5e-5", "cross-lr2e-5", "cross-lr5e-5"}
    assert all(g["train_seconds"] > 0 and g["wall_seconds"] > 0 for g in kin["grid"].values())
    assert [g["dev_omitted"] for g in kin["grid"].values()] == [48] * 4  # of kin's 102 dev pairs, in train
    assert all(json.loads((out / "track-a" / "kin" / n / "metrics.json").read_text())["selection"]["pairs"] == 54
               for n in kin["grid"])
    assert kin["chosen"]["bi"].startswith("bi-") and kin["chosen"]["cross"].startswith("cross-")
    assert kin["final"] == max(kin["candidates_dev"], key=kin["candidates_dev"].get)
    assert set(kin["test"]) == {"bi", "cross", "char-ridge", "dice", kin["final"]}
    assert kin["official"] == {"labse": 0.72, "best": 0.817}
    # the lexical members are the baseline table's (benchmarks/results.json), through the same evaluation
    baselines = json.loads((REPO / "benchmarks" / "results.json").read_text())["semrel_2024_baselines"]
    assert kin["test"]["char-ridge"] == baselines["table"]["kin"]["test"]["char-ridge"]
    assert kin["test"]["dice"] == baselines["table"]["kin"]["test"]["dice"]
    assert kin["dev"]["char-ridge"] == baselines["table"]["kin"]["validation"]["char-ridge"]
    # the test figure is what the official evaluation command says of the final model's file
    final = out / "track-a" / "kin" / "predictions" / f"{kin['final']}.test.csv"
    evaluated = subprocess.run([sys.executable, "-m", "semrel", "evaluate", str(final), "--language", "kin",
                                "--split", "test", "--json"], cwd=tmp_path, env=study_env(mirror, tmp_path),
                               capture_output=True, text=True, timeout=600)
    assert evaluated.returncode == 0, evaluated.stderr
    [row] = json.loads(evaluated.stdout)
    assert row["pairs"] == 222 and round(row["spearman"], 4) == kin["test"][kin["final"]]

    target = study["track_c"]["kin"]
    assert target["trained_on"] == "cross-lingual-kin" and target["final"] == "rank"
    assert set(target["test"]) == {"bi", "cross", "dice", "rank"} and target["official"] == {"labse_cross": 0.57}
    czech = study["czech"]
    assert czech["pairs"] == 1200 and czech["mse_lower_bound"] == 0.1582
    assert set(czech["scores"]) == {"bi", "cross", "rank"}
    assert all(set(s) == {"pearson", "spearman", "mse"} for s in czech["scores"].values())
    tables = (out / "tables.md").read_text()
    assert tables.count("| kin |") == 3 and "| MSE lower bound" in tables
    assert "| kin | 778 | 102 (48 in train: omitted when choosing) | " in tables

    # run again: every finished language and member is kept, nothing trains; --publish copies the test files
    published = tmp_path / "benchmarks"
    again = run("--publish", str(published))
    assert again.returncode == 0, again.stderr[-3000:]
    assert "$ semrel fit" not in again.stdout
    assert again.stdout.count(" is finished") == 3  # kin in Track A and in Track C, and Czech
    assert json.loads((out / "study.json").read_text())["track_a"] == study["track_a"]
    copies = {"predictions/semrel-2024/e5-small-per-language/pred_kin.csv": final,
              "predictions/czech-news-sts/e5-small-semrel-2024-track-a/free-test.csv":
                  out / "czech" / "predictions" / "rank.test.csv"}
    assert all((published / copy).read_bytes() == made.read_bytes() for copy, made in copies.items())
    entries = json.loads((published / "results.json").read_text())["prediction_files"]
    assert [e["figure"] for e in entries.values()] == [{"spearman": kin["test"][kin["final"]]}, czech["scores"]["rank"]]
    assert list(entries) == list(copies)
    assert check_entries(published / "results.json", mirror=mirror) == 2  # sha256, rows, ids of their splits

    # stored: the study under its key; the report's semrel-2024 cell waits for every language
    results = tmp_path / "results.json"
    shutil.copy(REPO / "benchmarks" / "results.json", results)
    before = json.loads(results.read_text())
    store(study, "2-core CPU", results)
    after = json.loads(results.read_text())
    assert after[RESULTS_KEY]["track_a"] == study["track_a"] and after[RESULTS_KEY]["machine"] == "2-core CPU"
    assert after["fine_tuned"]["semrel-2024"] == before["fine_tuned"]["semrel-2024"]
    assert after["fine_tuned"]["czech-news-sts"]["spearman"] == czech["scores"]["rank"]["spearman"]


@pytest.mark.parametrize("args, words", [
    (["--model", "minilm=tiny-bert"], "argument --model: must be NAME=DIR with NAME e5-small, not 'minilm=tiny-bert'"),
    (["--language", "xyz"], "argument --language: must be one of afr, amh, arb, arq, ary, eng, esp, hau, hin, "
                            "ind, kin, mar, pan, tel, not 'xyz'"),
    (["--track", "b"], "argument --track: invalid choice: 'b' (choose from 'a', 'c')"),
    not_a_count("--jobs", "0"),
    (["--max-steps", "2", "--write-results"], "--write-results: a smoke run (--max-steps, --model) measures "
                                              "nothing to store"),
    (["--max-steps", "2", "--publish"], "--publish: a smoke run (--max-steps, --model) goes into another folder: "
                                        "--publish DIR"),
    not_a_count("--max-steps", "٢"),
    not_a_count("--jobs", "٢"),
    (["--language", "afr", "--track", "a"], "--language afr: afr has no Track A (it is in Track C only)"),
    (["--language", "kin", "--language", "pan", "--track", "a"],
     "--language pan: pan has no Track A (it is in Track C only)"),
    (["--language", "mar", "--track", "c"], "--language mar: mar has no Track C (it is in Track A only)"),
    (["--all-languages", "--track", "c"], "--all-languages: builds on Track A (add --track a, or leave --track out)"),
])
def test_a_mistake_is_one_line_before_anything_runs(args, words, tmp_path):
    refused_before_running(SCRIPT, args, words, tmp_path, "--output")


@pytest.mark.parametrize("options, missing", [
    (["--track", "a"], "Track A/kin/kin_train.csv"),  # Track A trains on kin's own train split
    (["--track", "c"], "Track A/amh/amh_train.csv"),  # Track C on every other Track A language's
])
def test_a_missing_mirror_file_is_one_line_before_anything_runs(options, missing, tmp_path):
    """The mirror is checked before anything trains: the first file it lacks, named in one line."""
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    done = subprocess.run([sys.executable, str(SCRIPT), "--language", "kin", *options, "--output",
                           str(tmp_path / "out")], cwd=tmp_path, env=study_env(mirror, tmp_path),
                          capture_output=True, text=True, timeout=300)
    looked = mirror / "semrel-2024" / missing
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"train_semrel_2024_languages.py: error: {missing} of 'semrel-2024' not found; "
                                  f"looked at: {looked}. Download it from ") and done.stderr.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_results_page_shows_the_study_of_results_json():
    """benchmarks/results/semrel-2024-languages.md shows the study's tables as results.json holds them (once run)."""
    from scripts.semrel_2024_languages.tables import RESULTS_KEY, markdown

    stored = json.loads((REPO / "benchmarks" / "results.json").read_text(encoding="utf-8")).get(RESULTS_KEY)
    text = (REPO / "benchmarks" / "results" / "semrel-2024-languages.md").read_text(encoding="utf-8")
    section = text.split("\n## SemRel-2024 per language: e5-small fine-tuned", 1)[1].split("\n## ", 1)[0]
    if stored is None:
        assert "not run yet" in section
    else:
        assert markdown(stored) in section and f"`{stored['command']}`" in section


@pytest.mark.slow
def test_jobs_run_the_same_study_as_processes_side_by_side(mirror, tmp_path):
    out = tmp_path / "study"
    run, done = smoke_run(mirror, tmp_path, out, "--jobs", "2")
    fits = [c for c in commands(done.stdout) if c.split()[2] == "fit"]
    members = {"track-a/kin/bi-lr2e-5", "track-a/kin/bi-lr5e-5", "track-a/kin/cross-lr2e-5",
               "track-a/kin/cross-lr5e-5", "track-c/train-kin/bi", "track-c/train-kin/cross"}
    assert {f.split("--output ")[1].split()[0].removeprefix(f"{out}/") for f in fits} == members
    assert all("--eval-config kin" in f and "--selection-overlap omit" in f for f in fits[:4])  # Track A first
    assert all("--save-steps" not in f for f in fits[4:])  # Track C saves no resume checkpoints here
    for member in members:  # each process's output beside its folder
        assert (out / f"{member}.log").is_file() and (out / member / "metrics.json").is_file()
    assert (out / "track-a" / "kin" / "score.log").is_file() and (out / "track-c" / "kin" / "score.log").is_file()
    # each unit's scoring ran in its own process, and its output is printed when it ends
    assert "$ semrel predict --dataset semrel-2024 --config kin --split test" in done.stdout
    assert "ended (" in done.stdout

    study = json.loads((out / "study.json").read_text())
    kin = study["track_a"]["kin"]
    assert set(kin["grid"]) == {"bi-lr2e-5", "bi-lr5e-5", "cross-lr2e-5", "cross-lr5e-5"}
    assert all(g["wall_seconds"] > 0 for g in kin["grid"].values())  # recorded before the scoring began
    assert all(g["dev_omitted"] == 48 for g in kin["grid"].values())
    assert set(kin["test"]) == {"bi", "cross", "char-ridge", "dice", kin["final"]}
    target = study["track_c"]["kin"]
    assert all(m["wall_seconds"] > 0 for m in target["members"].values())
    assert set(target["test"]) == {"bi", "cross", "dice", "rank"}

    again = run()
    assert again.returncode == 0, again.stderr[-3000:]
    assert "$ semrel" not in again.stdout and again.stdout.count(" is finished") == 2


def test_side_by_side_runs_the_first_ready_task_and_nothing_after_a_failure(tmp_path, capsys):
    from semrel.trainers.side_by_side import Task, side_by_side

    def task(name: str, code: str, after=()) -> Task:
        return Task((sys.executable, "-c", code), tmp_path / f"{name}.log", tuple(after))

    def touch(name: str) -> str:
        return f"open({str(tmp_path / name)!r}, 'w').close()"

    ended = []
    tasks = [task("a", touch("a")), task("b", "print('broken'); raise SystemExit(3)"),
             task("c", touch("c"), after=[1]), task("d", touch("d"), after=[0])]
    with pytest.raises(SystemExit) as stopped:
        side_by_side(tasks, 2, lambda index, seconds: ended.append(index), say=print)
    message = str(stopped.value)
    assert message.startswith("failed: ") and "raise SystemExit(3)" in message and str(tmp_path / "b.log") in message
    assert str(tmp_path / "c") in message and str(tmp_path / "d") not in message  # c: what it needs failed
    assert sorted(ended) == [0, 3]
    assert (tmp_path / "a").exists() and (tmp_path / "d").exists() and not (tmp_path / "c").exists()
    printed = capsys.readouterr().out
    assert "broken" in printed and "not run, a command it needs failed" in printed
    assert (tmp_path / "b.log").read_text() == "broken\n"
