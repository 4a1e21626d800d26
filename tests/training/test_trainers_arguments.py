"""Training arguments are transformers' own (a TrainingArguments subclass): each option is declared
once, in the stdlib table both the arguments class and the CLI's flags come from, errors name the
Python parameter and the CLI words them in its flags, every DataLoader argument reaches the
DataLoader, runs record what was set, and no class is named like a sentence-transformers or
transformers class it is not."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import logging
import pkgutil
from unittest import mock

import datasets
import numpy as np
import pytest
import sentence_transformers
import torch
import transformers
from torch.utils.data import DataLoader
from transformers import HfArgumentParser, TrainingArguments

import semrel.trainers
from project import REPO
from semrel.cli import build_parser
from semrel.metrics.errors import MissingPathError, ParameterError
from semrel.trainers.arguments import PairTrainingArguments, recorded_options, stored_options
from semrel.trainers.cli_flags import in_flags, training_arguments
from semrel.trainers.cross_validation import parse_member
from semrel.trainers.data import prepare_pairs
from semrel.trainers.ensemble import METHODS
from semrel.trainers.models import build_model
from semrel.trainers.options import OPTIONS, RULES
from semrel.trainers.samplers import BatchOrderSampler, GroupBatchSampler
from semrel.trainers.trainer import EpochLogCallback, PairTrainer
from trainer_fixtures import tiny_encoder, toy_conditional_pairs, toy_pairs


@pytest.fixture(scope="module")
def encoder_path(tmp_path_factory):
    return tiny_encoder(tmp_path_factory.mktemp("tiny-bert"))


def field_default(cls, name):
    f = {f.name: f for f in dataclasses.fields(cls)}[name]
    return f.default_factory() if f.default is dataclasses.MISSING else f.default


def command_flags(command: str) -> dict:
    """The flag that names each Python parameter in the errors of ``semrel COMMAND``."""
    required = {"fit": ["--dataset", "d", "--model", "m", "--output", "o"],
                "ensemble": ["--member", "m", "--output", "o"]}
    return build_parser().parse_args([command, *required[command]]).flags


def command_actions(command: str) -> dict:
    parser = build_parser()._subparsers._group_actions[0].choices[command]
    return {s: a for a in parser._actions for s in a.option_strings}


def test_each_option_is_declared_once_and_both_doors_take_it_from_there():
    body = next(n for n in ast.walk(ast.parse((REPO / "trainers" / "arguments.py").read_text()))
                if isinstance(n, ast.ClassDef) and n.name == "PairTrainingArguments").body
    written = {n.target.id for n in body if isinstance(n, ast.AnnAssign)}
    assert not written & {o.argument for o in OPTIONS}, "an option's field written out again"
    fields = {f.name: f for f in dataclasses.fields(PairTrainingArguments)}
    semrel_fields = set(fields) - {f.name for f in dataclasses.fields(TrainingArguments)}
    assert semrel_fields <= {o.argument for o in OPTIONS}, "a semrel field without a flag"
    actions = command_actions("fit")
    for option in OPTIONS:
        assert option.to_argument(option.default) == \
            field_default(PairTrainingArguments, option.argument), option
        assert fields[option.argument].metadata["help"] == option.argument_help, option
        assert option.to_record(option.to_argument(option.default)) == option.default
        assert (actions[option.flag].default, actions[option.flag].help) == \
            (option.default, option.help), option
        assert option.rule is None or RULES[option.argument] == option.rule, option
    assert {o.argument for o in OPTIONS if o.rule is None} == {"encoder", "objective"}
    defaults = {o.name: o.default for o in OPTIONS}
    assert recorded_options(PairTrainingArguments()) == defaults
    args = build_parser().parse_args(["fit", "--dataset", "d", "--model", "m", "--output", "o"])
    assert recorded_options(PairTrainingArguments(**training_arguments(args, "o"))) == defaults
    assert command_actions("ensemble")["--method"].choices == METHODS  # the ensemble's methods, declared once


def test_hf_argument_parser_reads_the_arguments_class():
    made, = HfArgumentParser(PairTrainingArguments).parse_args_into_dataclasses(
        ["--output_dir", "o", "--learning_rate", "3e-5", "--encoder", "cross", "--max_length", "64",
         "--train_sampling_strategy", "random"])
    assert (made.learning_rate, made.encoder, made.max_length, made.train_sampling_strategy) == \
        (3e-5, "cross", 64, "random")


def test_flags_become_the_arguments_they_name():
    args = build_parser().parse_args([
        "fit", "--dataset", "d", "--model", "m", "--output", "o", "--epochs", "2.5",
        "--batch-size", "4", "--warmup", "0", "--no-group-by-length", "--num-workers", "2",
        "--save-steps", "7"])
    made = PairTrainingArguments(**training_arguments(args, "o"))
    assert (made.num_train_epochs, made.per_device_train_batch_size, made.warmup_steps) == \
        (2.5, 4, 0.0)
    assert made.train_sampling_strategy == "random" and made.dataloader_num_workers == 2
    assert made.dataloader_persistent_workers  # workers are kept across epochs
    assert (made.save_strategy, made.save_steps, made.save_total_limit) == ("steps", 7, 1)  # the latest kept
    name, model, values = parse_member("cross@minilm,learning_rate=3e-5,group_by_length=false,"
                                       "num_workers=1")
    assert (model, values) == ("minilm", {"encoder": "cross", "learning_rate": 3e-5,
                                          "train_sampling_strategy": "random",
                                          "dataloader_num_workers": 1})
    assert name == "cross-minilm_learning_rate=3e-5_group_by_length=false_num_workers=1"
    for bad, words in (("bi", "must be ENCODER@MODEL"), ("bi@m,lr=1", "'lr=1' is not option"),
                       ("bi@m,max_steps=two", "max_steps='two' is not a int")):
        with pytest.raises(ParameterError, match=words):
            parse_member(bad)


WORDINGS = [  # (error, its Python wording, its CLI wording)
    (ParameterError("num_train_epochs", 0.0, "must be a number > 0"),
     "num_train_epochs=0.0: must be a number > 0", "--epochs 0: must be a number > 0"),
    (ParameterError("max_steps", 0, "must be -1 (train for {num_train_epochs}) or >= 1"),
     "max_steps=0: must be -1 (train for num_train_epochs) or >= 1",
     "--max-steps 0: must be -1 (train for --epochs) or >= 1"),
    (ParameterError("score_range", (0.0, float("inf")), "must be finite"),
     "score_range=(0.0, inf): must be finite", "--score-range 0 inf: must be finite"),
    (ParameterError("overwrite", True, "excludes {resume_from_checkpoint}"),
     "overwrite=True: excludes resume_from_checkpoint", "--overwrite: excludes --resume"),
    (ParameterError("score_range", None, "must be given"), "score_range=None: must be given",
     "--score-range: must be given"),
    (MissingPathError("model_path", "/x", "no such model folder"),
     "model_path='/x': no such model folder", "--model /x: no such model folder"),
    (ParameterError("gradient_accumulation_steps", 0, "must be >= 1"),  # no flag: its own name
     "gradient_accumulation_steps=0: must be >= 1", "gradient_accumulation_steps 0: must be >= 1"),
    (ParameterError("rule", "x", "with {braces} and {} unknown"), "rule='x': with {braces} and "
     "{} unknown", "rule x: with {braces} and {} unknown"),
]


@pytest.mark.parametrize("error,python,command", WORDINGS, ids=[w[1][:30] for w in WORDINGS])
def test_one_error_two_wordings(error, python, command):
    assert str(error) == python
    assert in_flags(error, command_flags("fit")) == command
    assert isinstance(error, ValueError)
    assert isinstance(error, FileNotFoundError) is isinstance(error, MissingPathError)


def test_ensemble_errors_are_worded_in_the_ensemble_flags():
    error = ParameterError("cv_dirs", ["a"], "must be one per member")
    assert in_flags(error, command_flags("ensemble")) == "--cv-dir a: must be one per member"
    assert in_flags(ParameterError("path", "e", "not empty"), command_flags("ensemble")) == \
        "--output e: not empty"


def test_precision_sets_only_what_the_caller_left_and_refuses_contradictions():
    assert PairTrainingArguments().bf16 is False  # no GPU here: float32
    assert PairTrainingArguments(precision="bf16").bf16 is True
    assert PairTrainingArguments(bf16=True).bf16 is True  # auto yields to the caller's choice
    with pytest.raises(ParameterError, match=r"precision='fp32': contradicts bf16=True .* leave "
                                             r"bf16 at its default"):
        PairTrainingArguments(precision="fp32", bf16=True)


# what each TrainingArguments dataloader_* argument becomes on the DataLoader: (value set,
# attribute read back); a new dataloader_* argument of transformers fails the test below until
# it is checked here
DATALOADER = {
    "dataloader_num_workers": (2, lambda d: d.num_workers),
    "dataloader_persistent_workers": (True, lambda d: d.persistent_workers),
    # transformers itself turns pinning off on CPU (use_cpu, which `precision` sets without CUDA)
    "dataloader_pin_memory": (True, lambda d: d.pin_memory == torch.cuda.is_available()),
    "dataloader_prefetch_factor": (3, lambda d: d.prefetch_factor),
    "dataloader_multiprocessing_context": ("spawn",
                                           lambda d: d.multiprocessing_context.get_start_method()),
    "dataloader_in_order": (False, lambda d: d.in_order),
    "dataloader_drop_last": (True, lambda d: d.batch_sampler.drop_last),
}


@pytest.mark.parametrize("objective,strategy", [("mse", "group_by_length"), ("mse", "random"),
                                                ("quad", "random")])
def test_every_dataloader_argument_reaches_the_dataloader(encoder_path, tmp_path, objective,
                                                          strategy):
    assert {f.name for f in dataclasses.fields(TrainingArguments)
            if f.name.startswith("dataloader_")} == set(DATALOADER)
    conditional = objective == "quad"
    args = PairTrainingArguments(str(tmp_path), objective=objective,
                                 train_sampling_strategy=strategy, per_device_train_batch_size=6,
                                 **{name: value for name, (value, _) in DATALOADER.items()})
    data = prepare_pairs(toy_conditional_pairs() if conditional else toy_pairs(),
                         (1.0, 5.0) if conditional else (0.0, 1.0), where="toy")
    trainer = PairTrainer(build_model("bi", encoder_path, conditional=conditional), args,
                          train_dataset=data)
    loader = trainer.get_train_dataloader()
    for name, (value, read) in DATALOADER.items():
        assert read(loader) == value, name
    ours = isinstance(loader.batch_sampler.sampler, BatchOrderSampler)
    assert ours is (strategy == "group_by_length" or objective == "quad")
    assert len(loader) == len(data) // 6  # drop_last: the partial batch is dropped


# transformers' Trainer takes a sampler only through these private methods (its public
# get_*_dataloader take none): (hook PairTrainer overrides, its parameters, a public caller)
SAMPLER_HOOKS = [("_get_train_sampler", ["self", "train_dataset"], "get_train_dataloader"),
                 ("_get_eval_sampler", ["self", "eval_dataset"], "get_eval_dataloader"),
                 ("_get_eval_sampler", ["self", "eval_dataset"], "get_test_dataloader")]


@pytest.mark.parametrize("hook, parameters, caller", SAMPLER_HOOKS,
                         ids=[caller for *_, caller in SAMPLER_HOOKS])
def test_the_private_sampler_hooks_are_transformers_own(encoder_path, tmp_path, hook, parameters, caller):
    """A transformers upgrade that renames a hook, changes its parameters or stops calling it
    fails here by name, not as batches that are quietly the Trainer's own."""
    where = f"transformers {transformers.__version__} changed Trainer.{hook}, which PairTrainer overrides"
    assert list(inspect.signature(getattr(transformers.Trainer, hook, None) or (lambda: None)
                                  ).parameters) == parameters, where
    data = prepare_pairs(toy_pairs(), (0.0, 1.0), where="toy")
    trainer = PairTrainer(build_model("bi", encoder_path), PairTrainingArguments(str(tmp_path)),
                          train_dataset=data, eval_dataset=data)
    with mock.patch.object(PairTrainer, hook, autospec=True,
                           side_effect=getattr(PairTrainer, hook)) as spy:
        getattr(trainer, caller)(*[data] * (caller == "get_test_dataloader"))
    assert spy.call_count == 1, f"{where}: Trainer.{caller} no longer calls it"


def test_the_dataloader_cuts_the_row_order_into_the_group_batches():
    groups = np.arange(46).reshape(-1, 2)
    lengths = np.random.default_rng(0).integers(1, 40, size=len(groups))
    for drop_last in (False, True):
        batches = GroupBatchSampler(groups, 6, seed=3, lengths=lengths, drop_last=drop_last)
        loader = DataLoader(list(range(46)), sampler=BatchOrderSampler(batches), batch_size=6,
                            drop_last=drop_last)
        for epoch in (0, 1):
            loader.sampler.set_epoch(epoch)
            assert [b.tolist() for b in loader] == list(batches), (drop_last, epoch)
            assert len(loader.sampler) == sum(len(b) for b in batches)
    assert list(batches) != list(GroupBatchSampler(groups, 6, seed=3, lengths=lengths,
                                                   drop_last=True))  # epoch 1 differs from 0


def test_prediction_keeps_the_row_order_under_length_grouping(encoder_path, tmp_path):
    model = build_model("bi", encoder_path)
    data = prepare_pairs(toy_pairs(), (0.0, 1.0), where="toy")
    trainer = PairTrainer(model, PairTrainingArguments(str(tmp_path),
                                                       per_device_eval_batch_size=7),
                          train_dataset=data)
    predicted = trainer.predict(data).predictions.reshape(-1)
    np.testing.assert_allclose(predicted, model.predict(data["sentence1"], data["sentence2"]),
                               atol=1e-6)


def test_a_run_records_its_options_and_what_else_was_set():
    args = PairTrainingArguments("out", num_train_epochs=2, gradient_accumulation_steps=2,
                                 lr_scheduler_type="cosine", logging_steps=5, save_steps=3,
                                 dataloader_num_workers=1, dataloader_persistent_workers=True)
    record = recorded_options(args)
    assert record["epochs"] == 2 and record["num_workers"] == 1
    assert record["gradient_accumulation_steps"] == 2 and record["lr_scheduler_type"] == "cosine"
    assert not {"output_dir", "logging_steps", "save_steps", "num_train_epochs",
                "dataloader_persistent_workers", "disable_tqdm"} & set(record)
    # a record written before PairTrainingArguments (FitOptions' fields, no `precision` yet)
    older = {"encoder": "bi", "objective": "mse", "pooling": "mean", "combine": "hadamard",
             "max_length": 256, "epochs": 4.0, "batch_size": 16, "learning_rate": 2e-5,
             "warmup": 0.1, "weight_decay": 0.01, "seed": 42, "max_steps": -1, "margin": 1.0,
             "on_invalid": "raise", "group_by_length": True, "compile": "none",
             "pad_to_multiple_of": 0, "num_workers": 0}
    assert stored_options(older) == recorded_options(PairTrainingArguments("elsewhere"))
    assert stored_options(older) != recorded_options(
        PairTrainingArguments(gradient_accumulation_steps=2))


def test_epoch_lines_go_through_logging(caplog):
    state = transformers.TrainerState(epoch=1.0)
    state.is_local_process_zero = True
    with caplog.at_level(logging.INFO, logger="semrel"):
        EpochLogCallback().on_log(None, state, None, logs={"loss": 0.12345, "epoch": 1.0})
    assert [(r.name, r.getMessage()) for r in caplog.records] == \
        [("semrel.trainers.trainer", "epoch 1.00: loss 0.1235")]


def test_library_modules_do_not_print():
    for path in (REPO / "trainers").glob("*.py"):
        if path.name.startswith("cli"):  # the commands' result tables
            continue
        calls = [n for n in ast.walk(ast.parse(path.read_text()))
                 if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "print"]
        assert not calls, f"{path.name}:{calls[0].lineno} prints"


def test_library_modules_import_no_cli_module():
    for path in (REPO / "trainers").glob("*.py"):
        if path.name.startswith("cli"):  # the commands themselves
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                parts = {p for a in node.names for p in a.name.split(".")}
            elif isinstance(node, ast.ImportFrom):
                parts = set((node.module or "").split(".")) | {a.name for a in node.names}
            else:
                continue
            assert not parts & {"cli", "cli_flags"}, f"{path.name}:{node.lineno} imports a CLI module"


def library_classes(package) -> set[str]:
    names = set(dir(package))
    for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if module.name.rsplit(".", 1)[-1] in ("losses", "cross_encoder", "sentence_transformer",
                                              "models", "evaluation", "base"):
            try:
                imported = importlib.import_module(module.name)
            except ImportError:
                continue
            names |= {n for n in dir(imported) if isinstance(getattr(imported, n), type)}
    return names


def test_no_class_is_named_like_a_sentence_transformers_or_transformers_class():
    theirs = library_classes(sentence_transformers) | set(dir(transformers)) | set(dir(torch.nn))
    ours = {}
    for path in (REPO / "trainers").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                ours[node.name] = path.name
    assert "CrossEncoder" in theirs and "MSELoss" in theirs  # the check can see a clash
    clashes = {name: where for name, where in ours.items() if name in theirs}
    assert not clashes
    assert {"CrossPairEncoder", "PairTrainingArguments"} <= set(semrel.trainers.__all__)


def test_a_datasetdict_passes_straight_in():
    from semrel.dataset_scripts.pairs import load_pairs

    splits = datasets.DatasetDict(train=toy_pairs((0.0, 5.0)))
    data = load_pairs(splits, score_range=(0, 5))
    assert data.splits is splits and data.score_range == (0.0, 5.0)
    with pytest.raises(ParameterError, match="score_range=None: must be given for a DatasetDict"):
        load_pairs(splits)
    with pytest.raises(ParameterError, match="mirror='m': is for registry datasets only"):
        load_pairs(splits, score_range=(0, 5), mirror="m")
