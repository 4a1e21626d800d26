"""The training options, each declared once; stdlib only, so the ``semrel`` command builds its
``--help`` and checks its flags without importing torch.

* :data:`OPTIONS`: one :class:`Option` per option a run records (run fingerprint, model card,
  ``metrics.json``): its recorded name (the ``semrel fit``/``cv`` flag ``--name``, a ``--member``
  override's key), the field of :class:`~trainers.arguments.PairTrainingArguments` it sets, its
  default, rule and help. ``PairTrainingArguments`` declares its field from it, the CLI its flag.
* :data:`RULES`: what each argument must be (every option's rule, and ``save_steps``'), checked by
  ``PairTrainingArguments`` and, before torch is imported, by the CLI; a value outside its rule
  is a :class:`~semrel.metrics.errors.ParameterError` worded in the Python API's names
  (``num_train_epochs=0: must be a number > 0``), which the CLI words in its flags
  (``--epochs 0: must be ...``).
* The choices of ``semrel cv`` and ``semrel ensemble`` (:data:`CV_FAMILIES`,
  :data:`ENSEMBLE_METHODS`, :data:`STACK_LEARNERS`, :data:`STACK_FEATURES`), read by the CLI and by
  the library modules that check them (:mod:`~trainers.cross_validation`, :mod:`~trainers.ensemble`,
  :mod:`~trainers.stacking`). The kinds of model a ``--model`` may be are the modules of
  :mod:`~trainers.kinds` (``--model-kind``: :func:`~trainers.kinds.names`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from semrel.metrics.errors import ON_INVALID, ParameterError

ENCODER_KINDS = ("cross", "bi", "tri")  # trainers.models.MODEL_CLASSES, named here without torch
COMPILE_MODES = ("none", "default", "reduce-overhead", "max-autotune")
PRECISIONS = ("auto", "bf16", "fp32")
POOLINGS = ("mean", "cls")
TRI_COMBINES = ("hadamard", "concat")
# TrainingArguments.train_sampling_strategy values a pair trainer takes (semrel's samplers)
SAMPLING_STRATEGIES = ("group_by_length", "random")
CV_FAMILIES = {"cv": "cv-fold-", "lodo": "lodo-"}  # a family of folds -> its configs' name prefix
STACK_LEARNERS = ("ridge", "gbm")  # a learned stack's second-level regressor (trainers.stacking)
ENSEMBLE_METHODS = ("rank", "stack", *STACK_LEARNERS)  # how an ensemble combines its members
# lexical features beside the members' scores: Dice, the char n-gram ridge (trainers.lexical)
STACK_FEATURES = ("dice", "char-ridge")
# a dev split (eval_data) holding pairs the run trains on: refuse it, or choose on its other pairs
SELECTION_OVERLAP = ("refuse", "omit")


Rule = tuple[Callable[[object], bool], str]  # (test of an argument value, what it must be)


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _integer(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _split_names(v) -> bool:
    """``train`` or split names joined by ``+`` (``train+validation``), each once."""
    names = v.split("+") if isinstance(v, str) else []
    return bool(names) and all(re.fullmatch(r"[\w.-]+", n) for n in names) \
        and len(set(names)) == len(names)


def _one_of(values: tuple, why: str = "") -> Rule:
    return (lambda v: v in values), f"must be one of {values}{why}"


@dataclass(frozen=True)
class Option:
    """One training option: ``name`` (its key in records, the CLI flag ``--name``), the
    ``argument`` (field of ``PairTrainingArguments``) it sets, its ``default`` as recorded (whose
    type is the option's), the ``help``, the ``rule`` the argument value must pass (default: one
    of the flag's ``choices``; none for ``encoder`` and ``objective``, checked against their
    registries); ``values`` maps recorded values to argument values where they differ."""

    name: str
    argument: str
    default: object
    help: str
    rule: Rule | None = None
    choices: tuple | None = None
    values: tuple[tuple[object, object], ...] = ()

    def __post_init__(self):
        if self.rule is None and self.choices is not None:
            object.__setattr__(self, "rule", _one_of(self.choices))

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def type(self) -> type:
        """The type of a recorded value (the flag's, a ``--member`` override's)."""
        return type(self.default)

    def to_argument(self, value):
        return dict(self.values).get(value, value) if self.values else value

    def to_record(self, value):
        return {a: r for r, a in self.values}.get(value, value) if self.values else value

    @property
    def argument_help(self) -> str:
        """The help of the ``PairTrainingArguments`` field (its values where they differ)."""
        return self.help + (": " + " | ".join(str(a) for _, a in self.values) if self.values else "")


_POSITIVE_INTEGER = (lambda v: _integer(v) and v >= 1), "must be an integer >= 1"

OPTIONS: tuple[Option, ...] = (  # kinds and losses as registered in trainers.models / .losses
    Option("encoder", "encoder", "bi", "encoder kind: cross | bi | tri"),
    Option("objective", "objective", "mse",
           "loss: mse | quad | quad+mse | cosent (quad: bi/tri-encoders, C-STS groups)"),
    Option("pooling", "pooling", "mean",
           "bi/tri-encoders: mean | cls (a cross-encoder uses its classification head)",
           choices=POOLINGS),
    Option("combine", "combine", "hadamard", "tri-encoder: hadamard | concat",
           choices=TRI_COMBINES),
    Option("max_length", "max_length", 256,
           "tokens per sequence (truncation): at least the model's special tokens, prompt and 1 token "
           "of each text, at most its positions (the default: cut to a model with fewer)",
           rule=_POSITIVE_INTEGER),
    Option("epochs", "num_train_epochs", 4.0, "training epochs (a float such as 2.5 is fine)",
           rule=((lambda v: _number(v) and v > 0), "must be a number > 0 (e.g. 2.5)")),
    Option("batch_size", "per_device_train_batch_size", 16, "pairs per device and step",
           rule=_POSITIVE_INTEGER),
    Option("learning_rate", "learning_rate", 2e-5, "peak learning rate (AdamW, linear decay)",
           rule=((lambda v: _number(v) and v > 0), "must be a number > 0")),
    Option("warmup", "warmup_steps", 0.1, "warmup: fraction of the steps (< 1) or a step count",
           rule=((lambda v: _number(v) and v >= 0),
                 "must be a fraction of the steps in [0, 1) or a step count >= 1")),
    Option("weight_decay", "weight_decay", 0.01, "AdamW weight decay",
           rule=((lambda v: _number(v) and v >= 0), "must be a number >= 0")),
    Option("train_splits", "train_splits", "train",
           "splits to train on, joined by + (train+validation: a final model once every choice "
           "is made; a split trained on is neither evaluated nor chosen on)",
           rule=(_split_names, "must be split names joined by + (e.g. train+validation), each "
                               "once")),
    Option("seed", "seed", 42, "seed of the new head weights, data order and dropout",
           rule=(_integer, "must be an integer")),
    Option("max_steps", "max_steps", -1, "stop after this many steps (-1: train for --epochs)",
           rule=((lambda v: _integer(v) and (v == -1 or v >= 1)),
                 "must be -1 (train for {num_train_epochs}) or an integer >= 1")),
    Option("margin", "margin", 1.0, "quadruplet loss margin",
           rule=(_number, "must be a finite number")),
    Option("on_invalid", "on_invalid", "raise",
           "tied condition groups: raise (error) | omit (drop and count them)", choices=ON_INVALID),
    Option("selection_overlap", "selection_overlap", "refuse",
           "a dev split (--eval-dataset) holding pairs the run trains on: refuse (error) | omit (choose "
           "on its other pairs; the omitted counted); pairs of the split the run is scored on are refused",
           choices=SELECTION_OVERLAP),
    Option("group_by_length", "train_sampling_strategy", True,
           "batch pairs of similar token length (less padding)",
           rule=_one_of(SAMPLING_STRATEGIES, " (pair batches are drawn by semrel's group sampler)"),
           values=((True, "group_by_length"), (False, "random"))),
    Option("compile", "compile", "none",
           "GPU, opt-in: torch.compile the transformer in this mode (reduce-overhead: CUDA "
           "graphs)", choices=COMPILE_MODES),
    Option("pad_to_multiple_of", "pad_to_multiple_of", 0,
           "pad batch widths up to a multiple of this (few shapes to compile; 0: no rounding)",
           rule=((lambda v: _integer(v) and v >= 0), "must be an integer >= 0 (0: none)")),
    Option("num_workers", "dataloader_num_workers", 0,
           "DataLoader worker processes that collate batches, kept across epochs (0: the main "
           "process)", rule=((lambda v: _integer(v) and v >= 0), "must be an integer >= 0")),
    Option("precision", "precision", "auto",
           "auto: bf16 autocast + TF32 on a GPU, float32 on CPU | bf16: bf16 autocast on either "
           "(fast on CPUs with AVX512-BF16/AMX) | fp32: no autocast, no TF32",
           choices=PRECISIONS),
)

RULES: dict[str, Rule] = {  # argument: rule; `{name}` in a rule names another argument
    **{o.argument: o.rule for o in OPTIONS if o.rule is not None},
    "save_steps": ((lambda v: _number(v) and v > 0),  # set by `semrel fit --save-steps`, recorded by none
                   "must be a step count >= 1 (or a fraction of the steps in (0, 1))"),
}


def check_arguments(values) -> None:
    """``ParameterError`` for the first of ``values`` (argument name -> value) that breaks its
    rule in :data:`RULES`; arguments without a rule pass."""
    for name, (test, rule) in RULES.items():
        if name in values and not test(values[name]):
            raise ParameterError(name, values[name], rule)
