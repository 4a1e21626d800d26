"""Names, choices and rules of the training arguments; stdlib only, so the ``semrel`` command
builds its ``--help`` and checks its flags without importing torch.

* :class:`~semrel.metrics.errors.ParameterError`: a parameter outside its rule, worded in the
  Python API's names (``num_train_epochs=0: must be a number > 0``); the CLI words the same
  error in its flags (``--epochs 0: must be ...``) from the parameter it carries.
* :data:`OPTIONS`: the options a run records (run fingerprint, model card, ``metrics.json``) and
  the ``semrel fit``/``cv`` flags, each with the field of
  :class:`~trainers.arguments.PairTrainingArguments` it sets and that field's default.
* :data:`RULES`: what each argument must be, checked by ``PairTrainingArguments`` and, before
  torch is imported, by the CLI.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from semrel.metrics.errors import ParameterError

ENCODER_KINDS = ("cross", "bi", "tri")  # trainers.models.MODEL_CLASSES, named here without torch
ON_INVALID = ("raise", "omit")
COMPILE_MODES = ("none", "default", "reduce-overhead", "max-autotune")
PRECISIONS = ("auto", "bf16", "fp32")
POOLINGS = ("mean", "cls")
TRI_COMBINES = ("hadamard", "concat")
# TrainingArguments.train_sampling_strategy values a pair trainer takes (semrel's samplers)
SAMPLING_STRATEGIES = ("group_by_length", "random")


@dataclass(frozen=True)
class Option:
    """One recorded option: ``name`` (its key in records, and the CLI flag ``--name``), the
    ``argument`` (field of ``PairTrainingArguments``) it sets, its ``default`` as recorded, the
    CLI's ``help``; ``values`` maps recorded values to argument values where they differ."""

    name: str
    argument: str
    default: object
    help: str
    choices: tuple | None = None
    values: tuple[tuple[object, object], ...] = ()

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def to_argument(self, value):
        return dict(self.values).get(value, value) if self.values else value

    def to_record(self, value):
        return {a: r for r, a in self.values}.get(value, value) if self.values else value


OPTIONS: tuple[Option, ...] = (  # kinds and losses as registered in trainers.models / .losses
    Option("encoder", "encoder", "bi", "encoder kind: cross | bi | tri"),
    Option("objective", "objective", "mse",
           "loss: mse | quad | quad+mse | cosent (quad: bi/tri-encoders, C-STS groups)"),
    Option("pooling", "pooling", "mean",
           "bi/tri-encoders: mean | cls (a cross-encoder uses its classification head)", POOLINGS),
    Option("combine", "combine", "hadamard", "tri-encoder: hadamard | concat", TRI_COMBINES),
    Option("max_length", "max_length", 256, "tokens per sequence (truncation)"),
    Option("epochs", "num_train_epochs", 4.0, "training epochs (a float such as 2.5 is fine)"),
    Option("batch_size", "per_device_train_batch_size", 16, "pairs per device and step"),
    Option("learning_rate", "learning_rate", 2e-5, "peak learning rate (AdamW, linear decay)"),
    Option("warmup", "warmup_steps", 0.1, "warmup: fraction of the steps (< 1) or a step count"),
    Option("weight_decay", "weight_decay", 0.01, "AdamW weight decay"),
    Option("seed", "seed", 42, "seed of the new head weights, data order and dropout"),
    Option("max_steps", "max_steps", -1, "stop after this many steps (-1: train for --epochs)"),
    Option("margin", "margin", 1.0, "quadruplet loss margin"),
    Option("on_invalid", "on_invalid", "raise",
           "tied condition groups: raise (error) | omit (drop and count them)", ON_INVALID),
    Option("group_by_length", "train_sampling_strategy", True,
           "batch pairs of similar token length (less padding)",
           values=((True, "group_by_length"), (False, "random"))),
    Option("compile", "compile", "none",
           "GPU, opt-in: torch.compile the transformer in this mode (reduce-overhead: CUDA "
           "graphs)", COMPILE_MODES),
    Option("pad_to_multiple_of", "pad_to_multiple_of", 0,
           "pad batch widths up to a multiple of this (few shapes to compile; 0: no rounding)"),
    Option("num_workers", "dataloader_num_workers", 0,
           "DataLoader worker processes that collate batches, kept across epochs (0: the main "
           "process)"),
    Option("precision", "precision", "auto",
           "auto: bf16 autocast + TF32 on a GPU, float32 on CPU | bf16: bf16 autocast on either "
           "(fast on CPUs with AVX512-BF16/AMX) | fp32: no autocast, no TF32", PRECISIONS),
)


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _integer(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


RULES = {  # argument: (test, rule); `{name}` names another argument
    "num_train_epochs": (lambda v: _number(v) and v > 0, "must be a number > 0 (e.g. 2.5)"),
    "max_length": (lambda v: _integer(v) and v >= 1, "must be an integer >= 1"),
    "per_device_train_batch_size": (lambda v: _integer(v) and v >= 1, "must be an integer >= 1"),
    "learning_rate": (lambda v: _number(v) and v > 0, "must be a number > 0"),
    "warmup_steps": (lambda v: _number(v) and v >= 0,
                     "must be a fraction of the steps in [0, 1) or a step count >= 1"),
    "weight_decay": (lambda v: _number(v) and v >= 0, "must be a number >= 0"),
    "seed": (_integer, "must be an integer"),
    "max_steps": (lambda v: _integer(v) and (v == -1 or v >= 1),
                  "must be -1 (train for {num_train_epochs}) or an integer >= 1"),
    "margin": (_number, "must be a finite number"),
    "on_invalid": (lambda v: v in ON_INVALID, f"must be one of {ON_INVALID}"),
    "pooling": (lambda v: v in POOLINGS, f"must be one of {POOLINGS}"),
    "combine": (lambda v: v in TRI_COMBINES, f"must be one of {TRI_COMBINES}"),
    "compile": (lambda v: v in COMPILE_MODES, f"must be one of {COMPILE_MODES}"),
    "pad_to_multiple_of": (lambda v: _integer(v) and v >= 0, "must be an integer >= 0 (0: none)"),
    "dataloader_num_workers": (lambda v: _integer(v) and v >= 0, "must be an integer >= 0"),
    "precision": (lambda v: v in PRECISIONS, f"must be one of {PRECISIONS}"),
    "train_sampling_strategy": (lambda v: v in SAMPLING_STRATEGIES,
                                f"must be one of {SAMPLING_STRATEGIES} (pair batches are drawn "
                                "by semrel's group sampler)"),
    "save_steps": (lambda v: _number(v) and v > 0,
                   "must be a step count >= 1 (or a fraction of the steps in (0, 1))"),
}


def check_arguments(values) -> None:
    """``ParameterError`` for the first of ``values`` (argument name -> value) that breaks its
    rule in :data:`RULES`; arguments without a rule pass."""
    for name, (test, rule) in RULES.items():
        if name in values and not test(values[name]):
            raise ParameterError(name, values[name], rule)
