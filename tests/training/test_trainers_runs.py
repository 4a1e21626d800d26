"""The CLI answers mistakes in one line (exit 2) worded in its flags, arguments outside their rule
are refused, and runs never mix: an output folder holding another run is refused unless
--overwrite, --resume picks only complete checkpoints of the same run, pairs/s counts only this
process's steps."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings

import datasets
import pytest
import safetensors.torch
import torch

from project import REPO
from semrel.cli import build_parser, main
from semrel.dataset_scripts.pairs import load_pairs
from semrel.metrics.errors import ParameterError
from semrel.trainers.arguments import PairTrainingArguments
from semrel.trainers.fitting import fit
from semrel.trainers.prediction import predict
from semrel.trainers.run_folder import last_complete_checkpoint
from trainer_fixtures import small_args, toy_conditional_pairs, toy_pairs
from trainer_fixtures import toy_folder as save_toy_folder

ENV = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1",
       "TOKENIZERS_PARALLELISM": "false"}


@pytest.fixture(scope="module")
def toy_folder(tmp_path_factory):
    return save_toy_folder(tmp_path_factory.mktemp("toy-data"), 64, 32)


@pytest.fixture(scope="module")
def held_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("held")
    (folder / "checkpoints").mkdir()
    (folder / "checkpoints" / "semrel_run.json").write_text("{}")
    return folder


MISTAKES = [  # (arguments after `fit`, words the one-line answer must hold)
    (["--dataset", "str2021"], ["--dataset str2021", "str-2021", "c-sts", "namespace/name"]),
    (["--dataset", "str-2021", "--config", "cv-fold-9"], ["--config cv-fold-9", "cv-fold-0"]),
    (["--model", "minilmx"], ["--model minilmx", "no such model folder, and neither a packaged"]),
    (["--data-dir", "/nonexistent/csts"], ["--data-dir /nonexistent/csts", "no such folder"]),
    (["--output", "HELD"], ["already holds a run", "set --overwrite", "or --resume"]),
    (["--encodr", "bi"], ["unrecognized arguments: --encodr"]),
    (["--encoder", "crosss"], ["--encoder crosss: must be one of", "cross", "tri"]),
    (["--objective", "quadd"], ["--objective quadd: must be one of", "quad+mse"]),
    (["--epochs", "0"], ["--epochs 0: must be a number > 0"]),
    (["--epochs", "-1"], ["--epochs -1: must be a number > 0"]),
    (["--max-steps", "0"], ["--max-steps 0: must be -1 (train for --epochs)"]),
    (["--batch-size", "0"], ["--batch-size 0: must be an integer >= 1"]),
    (["--num-workers", "-2"], ["--num-workers -2: must be an integer >= 0"]),
    (["--score-range", "0", "inf"], ["argument --score-range: must be a number in ASCII digits, not 'inf'"]),
    (["--score-range", "1", "nan"], ["argument --score-range: must be a number in ASCII digits, not 'nan'"]),
    (["--score-range", "1", "0"], ["--score-range 1 0", "lo < hi"]),
    (["--dataset", "str-2021", "--config", "cv-fold-0", "--score-range", "0", "5"],
     ["--score-range 0 5: differs from the score range [0.0, 1.0] that str-2021 declares"]),
    (["--max-length", "0"], ["--max-length 0: must be an integer >= 1"]),
    (["--save-steps", "-1"], ["--save-steps -1: must be a step count >= 1"]),
    (["--resume", "last", "--overwrite"], ["--overwrite: excludes --resume"]),
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
def test_cli_answers_a_mistake_in_one_line_of_flags(encoder, toy_folder, held_run, tmp_path,
                                                    capsys, change, words):
    base = {"--dataset": [str(toy_folder)], "--score-range": ["0", "1"],
            "--model": [str(encoder)], "--output": [str(tmp_path / "out")], "--max-steps": ["1"]}
    change = [str(held_run) if c == "HELD" else c for c in change]
    try:
        status = main(fit_argv(base, change))
    except SystemExit as exit:  # argparse's own mistakes
        status = exit.code
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert status == 2, err[-2000:]
    assert len(lines) == 1, err
    for word in words:
        assert word in err, (word, err)
    for python_name in ("num_train_epochs", "per_device_train_batch_size", "output_dir",
                        "resume_from_checkpoint", "dataloader_num_workers", "=", "'"):
        assert python_name not in err.split(": error: ")[1].split(":")[0], err
    assert not (tmp_path / "out" / "model.safetensors").exists()


@pytest.mark.slow
def test_the_command_answers_in_one_line_and_exit_2(encoder, toy_folder, tmp_path):
    done = subprocess.run([sys.executable, "-m", "semrel", "fit", "--dataset", str(toy_folder),
                           "--score-range", "0", "1", "--model", str(encoder), "--output",
                           str(tmp_path / "out"), "--epochs", "0"], env=ENV, cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert done.stderr == "semrel fit: error: --epochs 0: must be a number > 0 (e.g. 2.5)\n"


@pytest.mark.slow
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


@pytest.mark.slow
def test_import_trainers_leaves_the_matplotlib_backend_alone():
    code = ("import matplotlib; matplotlib.use('svg'); import semrel.trainers, semrel.trainers.card, "
            "semrel.trainers.fitting; import sys; print(matplotlib.get_backend())")
    done = subprocess.run([sys.executable, "-c", code], env=ENV, cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("svg")


def test_epochs_take_a_float():
    args = build_parser().parse_args(["fit", "--dataset", "d", "--model", "m", "--output", "o",
                                      "--epochs", "2.5"])
    assert args.epochs == 2.5
    assert PairTrainingArguments(num_train_epochs=args.epochs).num_train_epochs == 2.5


@pytest.mark.slow
def test_a_run_records_the_seconds_of_each_epoch(encoder, toy_folder, tmp_path):
    data = load_pairs(str(toy_folder), score_range=(0, 1))
    result = fit(data, encoder, small_args(tmp_path / "run", num_train_epochs=3, max_steps=-1))
    assert len(result.epoch_seconds) == 3 and min(result.epoch_seconds) > 0
    assert sum(result.epoch_seconds) <= result.train_seconds * 1.01 + 0.01  # inside train()
    stored = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert stored["epoch_seconds"] == result.epoch_seconds
    assert stored["options"]["epochs"] == 3.0 and stored["options"]["batch_size"] == 8


@pytest.mark.slow
def test_runs_never_mix_in_one_folder(encoder, toy_folder, tmp_path):
    data = load_pairs(str(toy_folder), score_range=(0, 1))
    out = tmp_path / "run"
    fit(data, encoder, small_args(out, encoder="bi"))
    assert (out / "modules.json").is_file()
    for kind in ("cross", "bi"):  # bi then cross; and the same bi run again
        with pytest.raises(ParameterError, match="output_dir=.*already holds a run: set "
                                                 "overwrite to replace it"):
            fit(data, encoder, small_args(out, encoder=kind))
    fit(data, encoder, small_args(out, encoder="cross"), overwrite=True)
    left = {p.name for p in out.iterdir()}
    assert not left & {"modules.json", "1_Pooling", "sentence_bert_config.json"}, left
    assert json.loads((out / "semrel_encoder.json").read_text())["kind"] == "cross"
    fit(data, encoder, small_args(out, encoder="bi"), overwrite=True)  # cross then bi
    config = json.loads((out / "config.json").read_text())
    assert "sentence_transformers" not in config and config["architectures"] == ["BertModel"]
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="holds no run"):  # never cleared, even with overwrite
        fit(data, encoder, small_args(tmp_path / "other"), overwrite=True)
    assert (tmp_path / "other" / "notes.txt").is_file()


@pytest.mark.slow
def test_resume_picks_only_complete_checkpoints_of_the_same_run(encoder, toy_folder, tmp_path):
    data = load_pairs(str(toy_folder), score_range=(0, 1))
    out = tmp_path / "run"
    saving = {"save_strategy": "steps", "save_steps": 2}
    args = small_args(out, max_steps=4, **saving)
    first = fit(data, encoder, args)
    checkpoints = out / "checkpoints"
    assert sorted(p.name for p in checkpoints.glob("checkpoint-*")) == \
        ["checkpoint-2", "checkpoint-4"]
    for other in ({"learning_rate": 1e-3}, {"gradient_accumulation_steps": 2}):
        with pytest.raises(ParameterError, match="holds another run"):  # another run's
            fit(data, encoder, small_args(out, max_steps=4, **saving, **other),
                resume_from_checkpoint=True)
    (checkpoints / "checkpoint-4" / "trainer_state.json").unlink()  # killed while written
    (checkpoints / "checkpoint-6").mkdir()  # an empty one
    assert last_complete_checkpoint(checkpoints).name == "checkpoint-2"
    run_file = checkpoints / "semrel_run.json"
    saved = json.loads(run_file.read_text())
    # as the version before PairTrainingArguments wrote it: FitOptions' fields, and before
    # `precision`, `train_splits` and `selection_overlap` existed, without those
    older = {"encoder": "bi", "objective": "mse", "pooling": "mean", "combine": "hadamard",
             "max_length": 256, "epochs": 4.0, "batch_size": 8, "learning_rate": 3e-3,
             "warmup": 0.0, "weight_decay": 0.01, "seed": 42, "max_steps": 4, "margin": 1.0,
             "on_invalid": "raise", "group_by_length": True, "compile": "none",
             "pad_to_multiple_of": 0, "num_workers": 0}
    assert saved["options"] == older | {"precision": "auto", "train_splits": "train",
                                        "selection_overlap": "refuse"}
    run_file.write_text(json.dumps(saved | {"options": older}))
    resumed = fit(data, encoder, small_args(out, max_steps=4, **saving),
                  resume_from_checkpoint="last")
    assert resumed.mse == pytest.approx(first.mse, abs=1e-6)
    # pairs/s over the 2 steps trained here (16 pairs), not the run's 4 (32 pairs)
    assert resumed.pairs_per_second * resumed.train_seconds == pytest.approx(16, rel=1e-6)
    with pytest.raises(ParameterError, match="resume_from_checkpoint='last': no complete"):
        last_complete_checkpoint(tmp_path)


@pytest.mark.slow
def test_runs_refuse_data_and_models_outside_their_rules(encoder, toy_folder, tmp_path):
    data = load_pairs(str(toy_folder), score_range=(0, 1))
    no_train = tmp_path / "no-train"
    datasets.DatasetDict({"test": toy_pairs()}).save_to_disk(no_train)
    with pytest.raises(ValueError, match="no train split to fit on"):
        fit(load_pairs(str(no_train), score_range=(0, 1)), encoder, small_args(tmp_path / "o"))
    with pytest.raises(FileNotFoundError, match="model_path=.*: no such model folder"):
        fit(data, tmp_path / "missing", small_args(tmp_path / "o"))
    with pytest.raises(FileNotFoundError, match="model_path=.*: no such model folder"):
        predict(tmp_path / "missing", data)
    plain = fit(data, encoder, small_args(tmp_path / "plain"))
    conditional = tmp_path / "conditional"
    datasets.DatasetDict({"test": toy_conditional_pairs()}).save_to_disk(conditional)
    with pytest.raises(ParameterError, match="is an unconditional semrel model, which cannot score .* "
                                             "conditions"):
        predict(plain.output_dir, load_pairs(str(conditional), score_range=(1, 5)))
    with pytest.raises(ParameterError, match="split='dev': must be a split of"):
        predict(plain.output_dir, data, "dev")


@pytest.mark.parametrize("bad,words", [
    ({"num_train_epochs": 0}, "num_train_epochs=0: must be a number > 0"),
    ({"max_length": 0}, "max_length=0: must be an integer >= 1"),
    ({"on_invalid": "skip"}, "on_invalid='skip': must be one of"),
    ({"per_device_train_batch_size": 0}, "per_device_train_batch_size=0: must be an integer"),
    ({"precision": "half"}, "precision='half': must be one of"),
    ({"encoder": "crosss"}, r"encoder='crosss': must be one of \('cross', 'bi', 'tri'\)"),
    ({"objective": "quadd"}, "objective='quadd': must be one of"),
    ({"max_steps": 0}, r"max_steps=0: must be -1 \(train for num_train_epochs\)"),
    ({"warmup_steps": -0.1}, "warmup_steps=-0.1: must be a fraction"),
    ({"num_train_epochs": "4"}, "num_train_epochs='4': must be a number"),
    ({"train_sampling_strategy": "sequential"}, "train_sampling_strategy='sequential'"),
])
def test_arguments_outside_their_rules_name_the_parameter(bad, words):
    with pytest.raises(ParameterError, match=words) as error:
        PairTrainingArguments(**bad)
    assert error.value.parameter == next(iter(bad)) and "--" not in str(error.value)


@pytest.mark.parametrize("terminal", [True, False])
def test_a_terminal_gets_a_progress_bar_else_a_log_line_per_epoch(encoder, tmp_path, monkeypatch,
                                                                 terminal):
    from transformers.trainer_callback import PrinterCallback

    from semrel.trainers.models import build_model
    from semrel.trainers.trainer import EpochLogCallback, LossProgressCallback, PairTrainer

    monkeypatch.setattr(sys.stderr, "isatty", lambda: terminal)
    args = PairTrainingArguments(str(tmp_path))
    assert args.disable_tqdm is not terminal and args.logging_strategy == "epoch"
    trainer = PairTrainer(build_model("bi", encoder), args)
    kinds = {type(c) for c in trainer.callback_handler.callbacks}
    assert (LossProgressCallback in kinds) is terminal
    assert (EpochLogCallback in kinds) is not terminal and PrinterCallback not in kinds
    args = PairTrainingArguments(str(tmp_path), disable_tqdm=terminal)  # the caller's choice
    assert args.disable_tqdm is terminal


@pytest.mark.slow
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
        result = fit(data, encoder, small_args(tmp_path / precision, precision=precision))
    finally:
        hook.remove()
    assert seen == {dtype}  # every training-time Linear of the transformer ran in this dtype
    used = "bf16" if dtype == torch.bfloat16 else "fp32"  # no GPU here, so never /tf32
    assert result.precision == used
    assert json.loads((tmp_path / precision / "metrics.json").read_text())["precision"] == used
    assert f"(precision: {used})" in (tmp_path / precision / "README.md").read_text()
    weights = safetensors.torch.load_file(tmp_path / precision / "model.safetensors")
    assert {w.dtype for w in weights.values()} == {torch.float32}


@pytest.mark.parametrize("native", [True, False])
def test_bf16_on_a_cpu_without_native_bf16_warns(monkeypatch, native):
    from semrel.trainers import arguments

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(arguments, "cpu_has_native_bf16", lambda: native)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert arguments.device_kwargs("bf16") == {"use_cpu": True, "bf16": True}
        assert arguments.device_kwargs("auto") == {"use_cpu": True, "bf16": False}
    assert [str(w.message).split(":")[0] for w in caught] == (
        [] if native else ["--precision bf16 on a CPU without native bf16 (AVX512-BF16 or AMX)"])


GPUS = {"H100": (True, (9, 0)), "Tesla T4": (False, (7, 5))}  # name: (bf16, capability)
PRECISION_KWARGS = [  # (GPU or None, precision, TrainingArguments kwargs or an error's words)
    (None, "auto", {"use_cpu": True, "bf16": False}),
    (None, "fp32", {"use_cpu": True, "bf16": False}),
    (None, "bf16", {"use_cpu": True, "bf16": True}),
    ("H100", "auto", {"bf16": True, "tf32": True}),
    ("H100", "bf16", {"bf16": True, "tf32": True}),
    ("H100", "fp32", {"tf32": False}),
    ("Tesla T4", "auto", {"fp16": True}),
    ("Tesla T4", "fp32", {"tf32": False}),
    ("Tesla T4", "bf16", "precision='bf16': Tesla T4 has no bf16"),
    (None, "fp16", "precision='fp16': must be one of"),
]


@pytest.mark.parametrize("gpu,precision,expected", PRECISION_KWARGS,
                         ids=[f"{g}-{p}" for g, p, _ in PRECISION_KWARGS])
def test_precision_picks_autocast_and_tf32_per_device(monkeypatch, gpu, precision, expected):
    from semrel.trainers.arguments import device_kwargs

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


def test_an_undefined_figure_is_written_as_null_not_as_nan(encoder, tmp_path):
    """Gold scores that are all equal make Spearman and Pearson undefined: fit still finishes and
    metrics.json is JSON (null), not Python's NaN, which JSON readers refuse."""
    toy = toy_pairs().shuffle(seed=0)
    flat = toy.select(range(40, 56)).map(lambda row: {"score": 0.5})
    data = datasets.DatasetDict({"train": toy.select(range(40)), "test": flat})
    data.save_to_disk(tmp_path / "flat")
    result = fit(load_pairs(str(tmp_path / "flat"), score_range=(0, 1)), encoder,
                 small_args(tmp_path / "run"))
    assert result.spearman != result.spearman  # NaN in Python
    text = (tmp_path / "run" / "metrics.json").read_text()
    assert "NaN" not in text
    written = json.loads(text)
    assert written["spearman"] is None and written["pearson"] is None
    assert written["mse"] == pytest.approx(result.mse)


@pytest.mark.slow  # trains
def test_a_model_trained_by_pair_trainer_is_saved_with_its_card(encoder, tmp_path):
    """The card comes from the trainer's callback, as in sentence-transformers: a Python user of
    PairTrainer who trains and saves gets it (``fit`` completes it with the evaluation)."""
    from huggingface_hub import ModelCard

    from semrel.trainers.data import prepare_pairs
    from semrel.trainers.models import build_model
    from semrel.trainers.trainer import PairTrainer

    model = build_model("bi", encoder)
    rows = prepare_pairs(toy_pairs().select(range(32)), (0.0, 1.0), where="toy")
    trainer = PairTrainer(model, small_args(tmp_path / "checkpoints"), train_name="toy/train",
                          train_dataset=rows)
    trainer.train()
    model.save_pretrained(tmp_path / "model")
    card = ModelCard.load(tmp_path / "model" / "README.md")
    assert card.data.library_name == "sentence-transformers" and "bi-encoder" in card.data.tags
    assert "# bi-encoder fine-tuned on toy/train" in card.text
    assert "Not evaluated: saved from a `PairTrainer`" in card.text and "| batch_size | 8 |" in card.text
    assert "- train pairs: 32" in card.text
    build_model("bi", encoder).save_pretrained(tmp_path / "untrained")
    assert not (tmp_path / "untrained" / "README.md").exists()  # not trained: no card
