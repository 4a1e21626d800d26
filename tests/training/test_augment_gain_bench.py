"""benchmarks/bench_augment_gain.py: a smoke run with a tiny model on the real SemRel-2024 eng
splits, as a user runs it (a subprocess from another directory), then a rerun that keeps every
step."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from project import REPO
from trainer_fixtures import tiny_encoder

SCRIPT = REPO / "benchmarks" / "bench_augment_gain.py"


@pytest.mark.slow
def test_plain_and_augmented_members_are_compared_on_eng_dev(mirror, tmp_path):
    model = tiny_encoder(tmp_path / "tiny-bert")
    out, record = tmp_path / "gain", tmp_path / "results.json"
    env = {**os.environ, "SEMREL_MIRROR": str(mirror), "HF_HOME": str(tmp_path / "hf")}
    argv = [sys.executable, str(SCRIPT), "--model", str(model), "--embed-model", str(model),
            "--neighbours", "1", "--max-steps", "2", "--precision", "fp32", "--output", str(out),
            "--record", str(record)]
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    commands = [line for line in done.stdout.splitlines() if line.startswith("$ semrel")]
    assert [c.split()[2] for c in commands] == ["fit", "augment", "fit", "predict", "predict"]
    assert "--dataset semrel-2024 --config eng" in commands[0] and "--eval-dataset" not in commands[0]
    assert f"--neighbours 1 --embed-model {model} --teacher {out / 'plain'}" in commands[1]
    assert f"--dataset {out / 'augmented-data'}" in commands[2]
    assert commands[0].split("--model")[1] == commands[2].split("--model")[1].replace(
        str(out / "augmented"), str(out / "plain"))  # the same member but for its data

    entry = json.loads(record.read_text())["semrel_2024_augment_gain"]
    assert entry["train_rows"]["original"] == 5500 and entry["train_rows"]["neighbours"] > 0
    assert entry["n"] == 250 and entry["teacher"] == "the plain member"
    low, high = entry["difference_ci"]
    assert low <= entry["difference"] <= high
    dev = entry["dev_spearman"]
    assert entry["difference"] == pytest.approx(dev["augmented"] - dev["plain"], abs=2e-4)

    again = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert not [line for line in again.stdout.splitlines() if line.startswith("$ semrel")]
    assert json.loads(record.read_text())["semrel_2024_augment_gain"]["difference"] == entry["difference"]
