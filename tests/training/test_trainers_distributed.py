"""Several processes without code changes (torchrun, gloo on CPU) and resuming a killed run."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from transformers import TrainerCallback

from semrel.dataset_scripts.pairs import load_pairs
from semrel.trainers.fitting import fit
from trainer_fixtures import small_args, tiny_encoder
from trainer_fixtures import toy_folder as save_toy_folder

pytestmark = pytest.mark.slow  # trains, starts processes


@pytest.fixture(scope="module")
def toy_folder(tmp_path_factory):
    return save_toy_folder(tmp_path_factory.mktemp("toy-data"), 80, 40)


def run_cli(launcher: list[str], args: list[str]) -> None:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run([*launcher, "-m", "semrel", *args], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def test_two_processes_give_the_metrics_of_one(toy_folder, tmp_path):
    encoder = tiny_encoder(tmp_path / "enc")
    common = ["fit", "--dataset", str(toy_folder), "--score-range", "0", "1", "--encoder", "bi",
              "--model", str(encoder), "--max-steps", "6", "--learning-rate", "3e-3",
              "--warmup", "0"]
    run_cli([sys.executable], [*common, "--output", str(tmp_path / "one"), "--batch-size", "8"])
    run_cli([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node",
             "2"], [*common, "--output", str(tmp_path / "two"), "--batch-size", "4"])
    one = json.loads((tmp_path / "one" / "metrics.json").read_text())
    two = json.loads((tmp_path / "two" / "metrics.json").read_text())
    assert one["train_pairs"] == two["train_pairs"] == 80
    for key in ("pearson", "spearman", "mse"):
        assert two[key] == pytest.approx(one[key], abs=1e-5), key
    untrained = fit(load_pairs(str(toy_folder), score_range=(0, 1)), encoder,
                    small_args(tmp_path / "zero", max_steps=1, learning_rate=1e-12))
    assert abs(untrained.mse - one["mse"]) > 1e-3  # the 6 steps did change the model


class KillAt(TrainerCallback):
    """Dies like a killed process after ``step`` optimizer steps."""

    def __init__(self, step: int):
        self.step = step

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step == self.step:
            raise KeyboardInterrupt(f"killed at step {self.step}")


def test_killed_run_resumes_to_the_same_metrics(toy_folder, tmp_path):
    path = tiny_encoder(tmp_path / "enc", dropout=0.1)  # dropout: the RNG state must resume too
    data = load_pairs(str(toy_folder), score_range=(0, 1))
    # a cross-encoder: its new head's weights and the encoder's must both come back
    options = {"encoder": "cross", "max_steps": 8}
    saving = {"save_strategy": "steps", "save_steps": 3}
    straight = fit(data, path, small_args(tmp_path / "straight", **options))
    with pytest.raises(KeyboardInterrupt):
        fit(data, path, small_args(tmp_path / "resumed", **options, **saving),
            callbacks=[KillAt(5)])
    assert sorted(p.name for p in (tmp_path / "resumed" / "checkpoints").glob("checkpoint-*")) \
        == ["checkpoint-3"]
    resumed = fit(data, path, small_args(tmp_path / "resumed", **options, **saving),
                  resume_from_checkpoint=True)
    for key in ("pearson", "spearman", "mse"):
        assert getattr(resumed, key) == pytest.approx(getattr(straight, key), abs=1e-6), key
