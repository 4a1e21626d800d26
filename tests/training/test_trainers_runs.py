"""The CLI answers mistakes in one line (exit 2), arguments outside their rule are refused, and
runs never mix: an output folder holding another run is refused unless --overwrite, --resume
picks only complete checkpoints of the same run, pairs/s counts only this process's steps."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import datasets
import pytest
import safetensors.torch
import torch

from trainer_fixtures import tiny_encoder, toy_conditional_pairs, toy_pairs
from trainer_fixtures import toy_folder as save_toy_folder
from semrel.cli import build_parser
from semrel.trainers.options import FitOptions
from semrel.trainers.training import fit, last_complete_checkpoint, load_pairs, predict

from project import REPO
ENV = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1",
       "TOKENIZERS_PARALLELISM": "false"}


@pytest.fixture(scope="module")
def encoder(tmp_path_factory):
    return tiny_encoder(tmp_path_factory.mktemp("tiny-bert"))


@pytest.fixture(scope="module")
def toy_folder(tmp_path_factory):
    return save_toy_folder(tmp_path_factory.mktemp("toy-data"), 64, 32)


@pytest.fixture(scope="module")
def held_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("held")
    (folder / "checkpoints").mkdir()
    (folder / "checkpoints" / "semrel_run.json").write_text("{}")
    return folder


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "semrel", *args], env=ENV, cwd=REPO,
                          capture_output=True, text=True, timeout=300)


MISTAKES = [  # (arguments after `fit`, words the one-line answer must hold)
    (["--dataset", "str2021"], ["--dataset str2021", "str-2021", "c-sts"]),
    (["--dataset", "str-2021", "--config", "cv-fold-9"], ["--config cv-fold-9", "cv-fold-0"]),
    (["--model", "minilmx"], ["--model minilmx", "neither a model folder nor a packaged"]),
    (["--data-dir", "/nonexistent/csts"], ["--data-dir /nonexistent/csts", "no such folder"]),
    (["--output", "HELD"], ["already holds a run", "--overwrite"]),
    (["--encodr", "bi"], ["unrecognized arguments: --encodr"]),
    (["--encoder", "crosss"], ["--encoder crosss", "cross", "tri"]),
    (["--objective", "quadd"], ["--objective quadd", "quad+mse"]),
    (["--epochs", "0"], ["--epochs 0.0", "> 0"]),
    (["--epochs", "-1"], ["--epochs -1.0", "> 0"]),
    (["--score-range", "0", "inf"], ["--score-range 0 inf", "finite"]),
    (["--score-range", "1", "nan"], ["--score-range", "finite"]),
    (["--score-range", "1", "0"], ["--score-range 1 0", "LO < HI"]),
    (["--dataset", "str-2021", "--config", "cv-fold-0", "--score-range", "0", "5"],
     ["--score-range", "declares its own score range"]),
    (["--max-length", "0"], ["--max-length 0", ">= 1"]),
    (["--save-steps", "-1"], ["--save-steps -1", ">= 1"]),
    (["--on-invalid", "skip"], ["--on-invalid", "invalid choice"]),
    (["--precision", "fp16"], ["--precision", "invalid choice: 'fp16'"]),
]


def fit_argv(base: dict[str, list[str]], change: list[str]) -> list[str]:
    """``fit`` with the ``base`` options, each flag in ``change`` replacing or adding one (a
    registry --dataset drops the folder's --score-range unless the change gives one)."""
    options, i = dict(base), 0
    while i < len(change):
        n = 2 if change[i] == "--score-range" else 1
        options[change[i]] = change[i + 1:i + 1 + n]
        i += 1 + n
    if "--dataset" in change and "--score-range" not in change:
        del options["--score-range"]
    return ["fit"] + [x for flag, values in options.items() for x in (flag, *values)]


@pytest.mark.parametrize("change,words", MISTAKES, ids=[" ".join(c) for c, _ in MISTAKES])
def test_cli_answers_a_mistake_in_at_most_two_lines(encoder, toy_folder, held_run, tmp_path,
                                                    change, words):
    base = {"--dataset": [str(toy_folder)], "--score-range": ["0", "1"],
            "--model": [str(encoder)], "--output": [str(tmp_path / "out")], "--max-steps": ["1"]}
    change = [str(held_run) if c == "HELD" else c for c in change]
    done = cli(*fit_argv(base, change))
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr[-2000:]
    assert 1 <= len(lines) <= 2, done.stderr
    for word in words:
        assert word in done.stderr, (word, done.stderr)
    assert not (tmp_path / "out" / "model.safetensors").exists()


def test_help_shows_defaults_without_importing_torch():
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "semrel", "fit", "--help"],
                          env=ENV, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert "(default: bi)" in done.stdout and "(default: 4.0)" in done.stdout
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines()}
    assert not imported & {"torch", "transformers", "datasets", "matplotlib"}
    from semrel.trainers.losses import LOSSES
    from semrel.trainers.models import MODEL_CLASSES

    for name in [*MODEL_CLASSES, *LOSSES]:  # the help names every registered kind and loss
        assert f" {name} " in done.stdout.replace("|", " ").replace(":", " "), name


def test_import_trainers_leaves_the_matplotlib_backend_alone():
    code = ("import matplotlib; matplotlib.use('svg'); import semrel.trainers, semrel.trainers.card, "
            "semrel.trainers.training; import sys; print(matplotlib.get_backend())")
    done = subprocess.run([sys.executable, "-c", code], env=ENV, cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("svg")


def test_epochs_take_a_float():
    args = build_parser().parse_args(["fit", "--dataset", "d", "--model", "m", "--output", "o",
                                      "--epochs", "2.5"])
    assert args.epochs == 2.5 and FitOptions(epochs=args.epochs).epochs == 2.5


def small(**changes) -> FitOptions:
    return FitOptions(**{"max_steps": 2, "batch_size": 8, "learning_rate": 3e-3, "warmup": 0.0,
                         **changes})


def test_a_run_records_the_seconds_of_each_epoch(encoder, toy_folder, tmp_path):
    data = load_pairs(str(toy_folder), score_range=(0, 1))
    result = fit(data, encoder, tmp_path / "run", small(epochs=3, max_steps=-1))
    assert len(result.epoch_seconds) == 3 and min(result.epoch_seconds) > 0
    assert sum(result.epoch_seconds) <= result.train_seconds * 1.01 + 0.01  # inside train()
    stored = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert stored["epoch_seconds"] == result.epoch_seconds


def test_runs_never_mix_in_one_folder(encoder, toy_folder, tmp_path):
    data = load_pairs(str(toy_folder), score_range=(0, 1))
    out = tmp_path / "run"
    fit(data, encoder, out, small(encoder="bi"))
    assert (out / "modules.json").is_file()
    for kind in ("cross", "bi"):  # bi then cross; and the same bi run again
        with pytest.raises(ValueError, match="already holds a run; pass --overwrite"):
            fit(data, encoder, out, small(encoder=kind))
    fit(data, encoder, out, small(encoder="cross"), overwrite=True)
    left = {p.name for p in out.iterdir()}
    assert not left & {"modules.json", "1_Pooling", "sentence_bert_config.json"}, left
    assert json.loads((out / "semrel_encoder.json").read_text())["kind"] == "cross"
    fit(data, encoder, out, small(encoder="bi"), overwrite=True)  # cross then bi
    config = json.loads((out / "config.json").read_text())
    assert "sentence_transformers" not in config and config["architectures"] == ["BertModel"]
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="holds no run"):  # never cleared, even with overwrite
        fit(data, encoder, tmp_path / "other", small(), overwrite=True)
    assert (tmp_path / "other" / "notes.txt").is_file()


def test_resume_picks_only_complete_checkpoints_of_the_same_run(encoder, toy_folder, tmp_path):
    data = load_pairs(str(toy_folder), score_range=(0, 1))
    out = tmp_path / "run"
    options = small(max_steps=4)
    first = fit(data, encoder, out, options, save_steps=2)
    checkpoints = out / "checkpoints"
    assert sorted(p.name for p in checkpoints.glob("checkpoint-*")) == \
        ["checkpoint-2", "checkpoint-4"]
    with pytest.raises(ValueError, match="holds another run"):  # another run's checkpoints
        fit(data, encoder, out, small(max_steps=4, learning_rate=1e-3), save_steps=2,
            resume_from_checkpoint=True)
    (checkpoints / "checkpoint-4" / "trainer_state.json").unlink()  # killed while written
    (checkpoints / "checkpoint-6").mkdir()  # an empty one
    assert last_complete_checkpoint(checkpoints).name == "checkpoint-2"
    run_file = checkpoints / "semrel_run.json"  # written before FitOptions had `precision`
    older = json.loads(run_file.read_text())
    del older["options"]["precision"]
    run_file.write_text(json.dumps(older))
    resumed = fit(data, encoder, out, options, save_steps=2, resume_from_checkpoint=True)
    assert resumed.mse == pytest.approx(first.mse, abs=1e-6)
    # pairs/s over the 2 steps trained here (16 pairs), not the run's 4 (32 pairs)
    assert resumed.pairs_per_second * resumed.train_seconds == pytest.approx(16, rel=1e-6)
    with pytest.raises(ValueError, match="no complete checkpoint"):
        last_complete_checkpoint(tmp_path)


def test_arguments_and_data_outside_their_rules_are_refused(encoder, toy_folder, tmp_path):
    data = load_pairs(str(toy_folder), score_range=(0, 1))
    no_train = tmp_path / "no-train"
    datasets.DatasetDict({"test": toy_pairs()}).save_to_disk(no_train)
    with pytest.raises(ValueError, match="no train split to fit on"):
        fit(load_pairs(str(no_train), score_range=(0, 1)), encoder, tmp_path / "o", small())
    with pytest.raises(FileNotFoundError, match="--model .*no such model folder"):
        fit(data, tmp_path / "missing", tmp_path / "o", small())
    with pytest.raises(FileNotFoundError, match="--model .*no such model folder"):
        predict(tmp_path / "missing", data)
    plain = fit(data, encoder, tmp_path / "plain", small())
    conditional = tmp_path / "conditional"
    datasets.DatasetDict({"test": toy_conditional_pairs()}).save_to_disk(conditional)
    with pytest.raises(ValueError, match="unconditional bi-encoder cannot score .* conditions"):
        predict(plain.output_dir, load_pairs(str(conditional), score_range=(1, 5)))
    for bad, words in [({"epochs": 0}, "--epochs 0"), ({"max_length": 0}, "--max-length 0"),
                       ({"on_invalid": "skip"}, "--on-invalid 'skip'"),
                       ({"batch_size": 0}, "--batch-size 0"),
                       ({"precision": "half"}, "--precision 'half'")]:
        with pytest.raises(ValueError, match=words):
            FitOptions(**bad)


@pytest.mark.parametrize("terminal", [True, False])
def test_a_terminal_gets_a_progress_bar_else_a_line_per_epoch(encoder, tmp_path, monkeypatch,
                                                             terminal):
    from transformers.trainer_callback import PrinterCallback

    from semrel.trainers.models import build_model
    from semrel.trainers.trainer import LossProgressCallback, PairTrainer, training_arguments

    monkeypatch.setattr(sys.stderr, "isatty", lambda: terminal)
    args = training_arguments(str(tmp_path))
    assert args.disable_tqdm is not terminal and args.logging_strategy == "epoch"
    trainer = PairTrainer(build_model("bi", encoder), args)
    kinds = {type(c) for c in trainer.callback_handler.callbacks}
    assert (LossProgressCallback in kinds) is terminal
    assert (PrinterCallback in kinds) is not terminal


@pytest.mark.parametrize("precision,dtype", [("auto", torch.float32), ("fp32", torch.float32),
                                             ("bf16", torch.bfloat16)])
def test_precision_sets_the_autocast_dtype_of_training_and_master_weights_stay_float32(
        encoder, toy_folder, tmp_path, precision, dtype):
    data = load_pairs(str(toy_folder), score_range=(0, 1))
    seen = set()

    def linear_outputs(module, inputs, output):
        if isinstance(module, torch.nn.Linear) and module.training:
            seen.add(output.dtype)

    hook = torch.nn.modules.module.register_module_forward_hook(linear_outputs)
    try:
        result = fit(data, encoder, tmp_path / precision, small(precision=precision))
    finally:
        hook.remove()
    assert seen == {dtype}  # every training-time Linear of the transformer ran in this dtype
    used = "bf16" if dtype == torch.bfloat16 else "fp32"  # no GPU here, so never /tf32
    assert result.precision == used
    assert json.loads((tmp_path / precision / "metrics.json").read_text())["precision"] == used
    assert f"(precision: {used})" in (tmp_path / precision / "README.md").read_text()
    weights = safetensors.torch.load_file(tmp_path / precision / "model.safetensors")
    assert {w.dtype for w in weights.values()} == {torch.float32}


GPUS = {"H100": (True, (9, 0)), "Tesla T4": (False, (7, 5))}  # name: (bf16, capability)
PRECISION_KWARGS = [  # (GPU or None, --precision, TrainingArguments kwargs or an error's words)
    (None, "auto", {"use_cpu": True, "bf16": False}),
    (None, "fp32", {"use_cpu": True, "bf16": False}),
    (None, "bf16", {"use_cpu": True, "bf16": True}),
    ("H100", "auto", {"optim": "adamw_torch_fused", "bf16": True, "tf32": True}),
    ("H100", "bf16", {"optim": "adamw_torch_fused", "bf16": True, "tf32": True}),
    ("H100", "fp32", {"optim": "adamw_torch_fused", "tf32": False}),
    ("Tesla T4", "auto", {"optim": "adamw_torch_fused", "fp16": True}),
    ("Tesla T4", "fp32", {"optim": "adamw_torch_fused", "tf32": False}),
    ("Tesla T4", "bf16", "--precision bf16: Tesla T4 has no bf16"),
    (None, "fp16", "--precision 'fp16': must be one of"),
]


@pytest.mark.parametrize("gpu,precision,expected", PRECISION_KWARGS,
                         ids=[f"{g}-{p}" for g, p, _ in PRECISION_KWARGS])
def test_precision_picks_autocast_and_tf32_per_device(monkeypatch, gpu, precision, expected):
    from semrel.trainers.trainer import device_kwargs

    monkeypatch.setattr(torch.cuda, "is_available", lambda: gpu is not None)
    if gpu is not None:
        bf16, capability = GPUS[gpu]
        monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: bf16)
        monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a, **k: capability)
        monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a, **k: gpu)
    if isinstance(expected, str):
        with pytest.raises(ValueError, match=expected):
            device_kwargs(precision)
    else:
        assert device_kwargs(precision) == expected
