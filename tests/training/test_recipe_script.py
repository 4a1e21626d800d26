"""scripts/train_semrel_2024_recipe.py, the SemRel-2024 English recipe written out as semrel
commands: a smoke run with a tiny model on the real SemRel-2024 English files (train 5,500, dev
250, test 2,600 without labels), as a user runs it (a subprocess from another directory); then
benchmarks/bench_english_stacks.py on its output."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shlex
import subprocess
import sys

import numpy as np
import pytest
from scipy.stats import rankdata, spearmanr

from project import REPO, not_a_count, refused_before_running
from semrel.publishing.prediction_files import check_entries
from semrel.trainers.combination import rank_average
from trainer_fixtures import tiny_encoder

SCRIPT = REPO / "scripts" / "train_semrel_2024_recipe.py"
STACKS = REPO / "benchmarks" / "bench_english_stacks.py"
MEMBERS = ("bi-minilm", "cross-mpnet", "bi-mpnet")  # the recipe's


@pytest.mark.slow
def test_the_recipe_trains_members_on_eng_train_and_writes_a_scored_ensemble(mirror, tmp_path):
    model = tiny_encoder(tmp_path / "tiny-bert")
    out = tmp_path / "recipe"
    env = {**os.environ, "SEMREL_MIRROR": str(mirror), "HF_HOME": str(tmp_path / "hf")}
    argv = [sys.executable, str(SCRIPT), "--model", f"minilm={model}", "--model", f"mpnet={model}",
            "--max-steps", "2", "--precision", "fp32", "--output", str(out)]
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    commands = [line for line in done.stdout.splitlines() if line.startswith("$ semrel")]
    assert [c.split()[2] for c in commands] == ["fit", "fit", "fit", "ensemble", "predict", "predict"]
    assert all("--dataset semrel-2024 --config eng" in c and "--eval-split validation" in c
               for c in commands[:3])
    assert "--encoder bi --epochs 1 --learning-rate 1e-5" in commands[0]
    assert "--encoder cross --epochs 4 --learning-rate 4e-5" in commands[1]
    assert "--encoder bi --epochs 32 --learning-rate 5e-5 --batch-size 32" in commands[2]

    record = json.loads((out / "recipe.json").read_text())
    assert set(record["seconds"]) == {"bi-minilm", "cross-mpnet", "bi-mpnet", "ensemble", "predict validation",
                                      "predict test"}
    assert all(s > 0 for s in record["seconds"].values())
    scores = record["eng_dev_spearman"]
    assert set(scores) == {f"{m}/selection_predictions.json" for m in MEMBERS} | {"eng_dev.csv"}
    assert all(-1 <= s <= 1 for s in scores.values())

    # the held-out test: every one of the 2,600 English test pairs, in the task's format
    with open(out / "eng_test.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["PairID", "Pred_Score"] and len(rows) == 2601
    assert len({r[0] for r in rows[1:]}) == 2600 and all(r[0].startswith("ENG-test-") for r in rows[1:])

    # the dev figure it records is what the official evaluation command says of its file
    evaluated = subprocess.run([sys.executable, "-m", "semrel", "evaluate", str(out / "eng_dev.csv"),
                                "--language", "eng", "--split", "validation", "--json"],
                               cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert evaluated.returncode == 0, evaluated.stderr
    [row] = json.loads(evaluated.stdout)
    assert row["pairs"] == 250 and row["spearman"] == pytest.approx(scores["eng_dev.csv"], abs=1e-12)

    # the stacks study reads the members' dev predictions and the recipe's file: nothing trains
    stacks = subprocess.run([sys.executable, str(STACKS), "--recipe", str(out), "--record", str(tmp_path / "r.json")],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert stacks.returncode == 0, stacks.stdout[-3000:] + stacks.stderr[-3000:]
    assert "$ semrel" not in stacks.stdout
    entry = json.loads((tmp_path / "r.json").read_text())["semrel_2024_english_stacks"]
    assert entry["n"] == 250
    assert [m["spearman"] for m in entry["members"].values()] == pytest.approx(
        [scores[f"{m}/selection_predictions.json"] for m in MEMBERS], abs=1e-4)
    assert entry["rank average (the recipe)"]["spearman"] == pytest.approx(scores["eng_dev.csv"], abs=1e-4)
    rank = entry["rank average (the recipe)"]["spearman"]
    for name, stack in entry["stacks (cross-fitted on dev)"].items():
        low, high = stack["ci"]
        assert low <= stack["spearman"] <= high, name
        assert stack["versus_rank"]["difference"] == pytest.approx(stack["spearman"] - rank, abs=2e-4), name
    assert list(entry["stacks (cross-fitted on dev)"]) == ["ridge", "ridge + Dice", "gbm + Dice"]
    assert "rank average of these members" not in entry

    # other members (two of the three, without their weights, as a device-trained member comes
    # back): their rank average over the dev pairs, read from their dev predictions alone
    pair = ("cross-mpnet", "bi-minilm")
    for m in pair:
        (out / m / "model.safetensors").rename(out / m / "weights.away")
    members = [a for m in pair for a in ("--member", str(out / m))]
    stacks = subprocess.run([sys.executable, str(STACKS), "--recipe", str(out), *members,
                             "--record", str(tmp_path / "r.json")],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    for m in pair:
        (out / m / "weights.away").rename(out / m / "model.safetensors")
    assert stacks.returncode == 0, stacks.stdout[-3000:] + stacks.stderr[-3000:]
    assert "$ semrel" not in stacks.stdout
    mine = json.loads((tmp_path / "r.json").read_text())["semrel_2024_english_stacks"]["rank average of these members"]
    dev = [json.loads((out / m / "selection_predictions.json").read_text()) for m in pair]
    assert dev[0]["ids"] == dev[1]["ids"]
    # semrel's rank average (ranks scaled to [0, 1], then averaged: float rounding may order two rows of
    # equal rank sums, ~1e-4 of Spearman here, differently on another CPU), rounded as the bench stores it:
    # the same figure on every machine
    ranked = rank_average(np.column_stack([d["predictions"] for d in dev]))
    assert mine["spearman"] == round(spearmanr(ranked, dev[0]["labels"]).statistic, 4)
    assert mine["versus_rank"]["difference"] == pytest.approx(mine["spearman"] - rank, abs=2e-4)

    # run again: finished members are kept, not trained again; --publish copies the test file and records it
    published = tmp_path / "benchmarks"
    again = subprocess.run([*argv, "--publish", str(published), "--machine", "2-core CPU"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=1200)
    assert again.returncode == 0, again.stderr[-3000:]
    assert again.stdout.count("kept: ") == len(MEMBERS) and "$ semrel fit" not in again.stdout
    assert json.loads((out / "recipe.json").read_text())["seconds"]["bi-minilm"] is None
    copy = "predictions/semrel-2024/english-recipe-3-member/pred_eng.csv"
    assert (published / copy).read_bytes() == (out / "eng_test.csv").read_bytes()
    entry = json.loads((published / "results.json").read_text())["prediction_files"][copy]
    assert entry == {"sha256": hashlib.sha256((out / "eng_test.csv").read_bytes()).hexdigest(), "rows": 2600,
                     "dataset": "semrel-2024", "config": "eng", "split": "test",
                     "format": "PairID,Pred_Score (SemEval-2024 Task 1)",
                     "command": "python scripts/train_semrel_2024_recipe.py " + shlex.join(
                         [*argv[2:], "--publish", str(published), "--machine", "2-core CPU"]),
                     "machine": "2-core CPU", "figure": "labels held back: scored outside the project"}

    # a second cross-encoder seed, then the final members on eng train + dev, epochs as kept on dev
    final = subprocess.run([*argv, "--cross-seeds", "42", "43", "--final", "--publish", str(published)],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1200)
    assert final.returncode == 0, final.stdout[-3000:] + final.stderr[-3000:]
    fits = [line for line in final.stdout.splitlines() if line.startswith("$ semrel fit")]
    assert len(fits) == 5 and "--seed 43" in fits[0] and "cross-mpnet-seed43" in fits[0]
    record = json.loads((out / "recipe.json").read_text())
    assert list(record["members"]) == ["bi-minilm", "cross-mpnet", "cross-mpnet-seed43", "bi-mpnet"]
    assert set(record["eng_dev_spearman"]) == {f"{m}/selection_predictions.json" for m in record["members"]} | {
        "eng_dev.csv"}
    for line, (name, member) in zip(fits[1:], record["final"]["members"].items(), strict=True):
        kept = json.loads((out / name / "metrics.json").read_text())["selection"]["kept"]["epoch"]
        assert f"--epochs {kept:g}" in line and "--train-splits train+validation" in line, line
        assert "--eval-dataset" not in line and " ".join(member["flags"]) + " --precision" in line, line
        seen = json.loads((out / "final" / name / "seen_pairs.json").read_text())["parts"]
        assert [(p["role"], p["split"]) for p in seen] == [("train", "train"), ("train", "validation")]
        assert json.loads((out / "final" / name / "metrics.json").read_text())["eval_split"] is None
    columns = []
    for name in record["final"]["members"]:
        with open(out / "final" / f"eng_test-{name}.csv", newline="") as f:
            columns.append({r["PairID"]: float(r["Pred_Score"]) for r in csv.DictReader(f)})
    with open(out / "final" / "eng_test.csv", newline="") as f:
        combined = {r["PairID"]: float(r["Pred_Score"]) for r in csv.DictReader(f)}
    assert len(combined) == 2600 and set(combined) == set(columns[0])
    ids = sorted(combined)
    ranks = [(rankdata([c[i] for i in ids]) - 1) / 2599 for c in columns]
    assert [combined[i] for i in ids] == pytest.approx(list(sum(ranks) / len(columns)), abs=1e-9)
    final_copy = published / "predictions/semrel-2024/english-recipe-final-4-member/pred_eng.csv"
    assert final_copy.read_bytes() == (out / "final" / "eng_test.csv").read_bytes()
    assert check_entries(published / "results.json", mirror=mirror) == 2  # both copies: sha256, rows, ids


@pytest.mark.parametrize("args, words", [
    (["--model", "mpnet"], "argument --model: must be NAME=DIR with NAME one of minilm, mpnet, not 'mpnet'"),
    (["--model", "mpent=tiny-bert"], "argument --model: must be NAME=DIR with NAME one of minilm, mpnet, not "
                                     "'mpent=tiny-bert'"),
    not_a_count("--max-steps", "0"),
    (["--max-step", "2"], "unrecognized arguments: --max-step 2"),
    (["--cross-seeds", "42", "42"], "argument --cross-seeds: each seed once, not 42 42"),
    (["--cross-seeds", "4x"], "argument --cross-seeds: must be an integer in ASCII digits, not '4x'"),
    (["--cross-seeds", "٣"], "argument --cross-seeds: must be an integer in ASCII digits, not '٣'"),
    (["--cross-seeds", "42", "4٣"], "argument --cross-seeds: must be an integer in ASCII digits, not '4٣'"),
    not_a_count("--max-steps", "٢"),
    (["--max-steps", "2", "--publish"], "--publish: a smoke run (--max-steps, --model) goes into another folder: "
                                        "--publish DIR"),
    (["--publish", "/dev/null/benchmarks"], "--publish /dev/null/benchmarks: /dev/null cannot be written (not a "
                                            "folder)"),    (["--members", "bogus"],
     "argument --members: invalid choice: 'bogus' (choose from 'bi-minilm', 'cross-mpnet', 'bi-mpnet')"),
    (["--members"], "argument --members: expected at least one argument"),
])
def test_a_mistake_is_one_line_before_anything_runs(args, words, tmp_path):
    refused_before_running(SCRIPT, args, words, tmp_path, "--output")


@pytest.mark.parametrize("names, seeds, expected", [
    (None, [42], ["bi-minilm", "cross-mpnet", "bi-mpnet"]),
    (["bi-minilm", "cross-mpnet"], [42], ["bi-minilm", "cross-mpnet"]),
    (["cross-mpnet", "bi-minilm"], [42, 43], ["bi-minilm", "cross-mpnet", "cross-mpnet-seed43"]),
    (["bi-mpnet"], [42, 43], ["bi-mpnet"]),
])
def test_members_are_the_recipes_own_in_its_order(names, seeds, expected):
    from scripts.train_semrel_2024_recipe import members

    assert list(members(seeds, names)) == expected


def test_results_page_shows_the_stack_studies_of_results_json():
    """benchmarks/results/english-recipe.md's stack tables are the ones results.json's entries render."""
    from benchmarks.bench_english_stacks import KEY, markdown

    stored = json.loads((REPO / "benchmarks" / "results.json").read_text(encoding="utf-8"))
    page = (REPO / "benchmarks" / "results" / "english-recipe.md").read_text(encoding="utf-8")
    entries = [stored[k] for k in (KEY, "semrel_2024_english_seeds", "semrel_2024_english_bi_mpnet") if k in stored]
    assert entries, f"no {KEY} entry in results.json"
    for entry in entries:
        table = markdown(entry)
        assert table.count("\n| member `") == len(entry["members"])
        assert table in page, entry["command"]


def test_the_stacks_bench_names_the_missing_recipe_run(tmp_path):
    """Without the recipe script's record, the stacks study says which file and how to make it."""
    done = subprocess.run([sys.executable, str(STACKS), "--recipe", str(tmp_path / "none")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    record = tmp_path / "none" / "recipe.json"
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (f"{record}: not found; run scripts/train_semrel_2024_recipe.py --output "
                           f"{tmp_path / 'none'} first\n")
