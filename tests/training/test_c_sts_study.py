"""benchmarks/bench_c_sts.py, the C-STS study on the open re-annotation: a smoke run with a tiny
model on the real re-annotated files (c-sts/reannotated-dev: train 10,206 rows, dev 1,136,
validation 2,620, validation_invalid 214), as a user runs it (a subprocess from another
directory); and benchmarks/results/c-sts.md's table is the one results.json holds."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from project import REPO, not_a_count, refused_before_running
from semrel.publishing.prediction_files import check_entries
from trainer_fixtures import tiny_encoder

SCRIPT = REPO / "benchmarks" / "bench_c_sts.py"
QUAD = "bi@minilm,epochs=1,objective=quad+mse,on_invalid=omit"
CANDIDATES = ["zeroshot@minilm", "zeroshot-prefix@minilm", "zeroshot-pair@minilm", QUAD,
              "cross@minilm,epochs=1"]


@pytest.mark.slow
def test_the_study_fits_on_carved_train_chooses_on_dev_and_scores_validation_only(mirror, tmp_path):
    model = tiny_encoder(tmp_path / "tiny-bert")
    out, record = tmp_path / "study", tmp_path / "results.json"
    env = {**os.environ, "SEMREL_MIRROR": str(mirror), "HF_HOME": str(tmp_path / "hf")}
    argv = [sys.executable, str(SCRIPT), *(a for c in CANDIDATES for a in ("--only", c)),
            "--model", f"minilm={model}", "--max-steps", "2", "--precision", "fp32",
            "--out", str(out), "--record", str(record)]
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    commands = [line for line in done.stdout.splitlines() if line.startswith("$ semrel")]
    assert [c.split()[2] for c in commands] == ["fit", "fit", "ensemble", "predict", "ensemble", "predict"]
    for fit in commands[:2]:
        assert "--dataset c-sts --config reannotated-dev" in fit
        assert "--eval-dataset c-sts --eval-config reannotated-dev --eval-split dev" in fit
        assert "--max-steps 2 --eval-steps 1" in fit
    assert "--encoder bi --epochs 1 --objective quad+mse --on-invalid omit" in commands[0]
    assert "--encoder cross --epochs 1" in commands[1]
    assert "--method rank" in commands[2] and "--method ridge" in commands[4]
    assert all("--split validation --model" in c for c in commands[3::2])
    assert "validation_invalid" not in done.stdout  # never scored, never named

    entry = json.loads(record.read_text())["c_sts_study"]
    rows = {r["candidate"]: r for r in entry["rows"]}
    assert list(rows)[:5] == [*CANDIDATES[:3], QUAD, "cross@minilm,epochs=1"]
    assert [r["kind"] for r in entry["rows"]] == ["zero-shot"] * 3 + ["bi", "cross", "ensemble", "ensemble"]
    assert rows[QUAD]["omitted_tied_pairs"] == 925  # the 1,027 tied train pairs less dev's 102
    for row in entry["rows"]:
        for figure in ("validation_spearman", "validation_pearson"):
            low, high = row[f"{figure}_ci"]
            assert -1 <= low <= row[figure] <= high <= 1, row
    for trained in (QUAD, "cross@minilm,epochs=1"):
        assert len(rows[trained]["dev_by_epoch"]) == 2 and rows[trained]["kept_epoch"] > 0  # every step
    assert [a["spearman"] for a in entry["anchors"]] == [0.475, 0.432, 0.436, 0.396, 0.717, 0.759, 0.739]
    stored = json.loads((out / "results.json").read_text())
    assert {r["validation"]["n"] for r in stored.values()} == {2620}  # the labelled validation rows
    for r in stored.values():
        if r["kind"] in ("bi", "cross"):
            predictions = json.loads((out / "runs" / r["folder"].rsplit("/", 1)[1] /
                                      "eval_predictions.json").read_text())
            assert predictions["split"] == "validation" and len(predictions["predictions"]) == 2620
            dev = json.loads((out / "runs" / r["folder"].rsplit("/", 1)[1] /
                              "selection_predictions.json").read_text())
            assert (dev["data"], dev["split"], len(dev["labels"])) == ("c-sts/reannotated-dev", "dev", 1136)
        if r["kind"] == "ensemble":
            scored = json.loads((out / "ensembles" / r["folder"].rsplit("/", 1)[1] / "validation.json").read_text())
            assert len(scored) == 2620

    # run again: everything is kept, nothing trained, built or scored again; --publish copies the ensemble's file
    published = tmp_path / "benchmarks"
    again = subprocess.run([*argv, "--publish", str(published)], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=1800)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "$ semrel" not in again.stdout and again.stdout.count("kept: ") == 7
    assert json.loads(record.read_text())["c_sts_study"]["rows"] == entry["rows"]
    ensembles = [r for r in stored.values() if r["kind"] == "ensemble"]  # rank, then ridge (sorted keys)
    best = max(ensembles, key=lambda r: -2 if r["dev"] is None else r["dev"])  # a tie keeps the rank average
    [(name, published_entry)] = json.loads((published / "results.json").read_text())["prediction_files"].items()
    assert name == f"predictions/c-sts/{best['method']}-bi-minilm+cross-minilm/validation.json"
    assert (published / name).read_bytes() == (tmp_path / best["folder"] / "validation.json").read_bytes()
    rho = best["validation"]["spearman"]
    assert published_entry["figure"] == {"spearman": None if rho is None else round(rho, 4)}
    assert check_entries(published / "results.json", mirror=mirror) == 1  # 2,620 keys "0" ... "2619"


@pytest.mark.parametrize("args, words", [
    (["--model", "minilm"], "argument --model: must be NAME=DIR (e.g. minilm=tiny-bert), not 'minilm'"),
    not_a_count("--max-steps", "0"),
    (["--model", "=tiny-bert"], "argument --model: must be NAME=DIR (e.g. minilm=tiny-bert), not '=tiny-bert'"),
    (["--only", "zeroshot-prefx@minilm"], "argument --only: 'zeroshot-prefx@minilm' is not one of "
                                          "zeroshot@MODEL, zeroshot-prefix@MODEL, zeroshot-pair@MODEL"),
    (["--publish", "d", "--no-ensembles"], "--publish: drop --no-ensembles (an ensemble's file is published)"),
])
def test_a_mistake_is_one_line_before_anything_runs(args, words, tmp_path):
    refused_before_running(SCRIPT, args, words, tmp_path, "--out")


def test_results_page_shows_the_study_of_results_json():
    """benchmarks/results/c-sts.md's C-STS table is the one results.json's entry renders."""
    from benchmarks.c_sts_study.tables import KEY, markdown

    stored = json.loads((REPO / "benchmarks" / "results.json").read_text(encoding="utf-8"))[KEY]
    page = (REPO / "benchmarks" / "results" / "c-sts.md").read_text(encoding="utf-8")
    assert markdown(stored) in page
