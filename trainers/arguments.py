"""The arguments of a training run: ``transformers.TrainingArguments`` plus semrel's own fields.

:class:`PairTrainingArguments` is a ``TrainingArguments`` subclass, as sentence-transformers'
``SentenceTransformerTrainingArguments`` is: the encoder, objective and the other semrel fields
beside every field of ``TrainingArguments``, which keeps its own names (``num_train_epochs``,
``per_device_train_batch_size``, ``warmup_steps``, ``dataloader_*`` ...), several with defaults
suited to sentence pairs. :func:`recorded_options` is what a run writes down about them.
"""

from __future__ import annotations

import sys
import warnings
from dataclasses import dataclass, field, fields

import torch
from transformers import TrainingArguments
from transformers.trainer_utils import IntervalStrategy, SaveStrategy

from semrel.metrics.errors import ParameterError

from .options import OPTIONS, RULES, check_arguments

PRECISION_FIELDS = ("bf16", "fp16", "tf32", "use_cpu")  # what `precision` sets
# arguments that change where a run writes, what it shows or how fast it feeds batches, not what
# it trains: left out of the record (and so of the run's fingerprint)
NOT_RECORDED = {"output_dir", "resume_from_checkpoint", "disable_tqdm", "report_to", "run_name",
                "project", "per_device_eval_batch_size", "prediction_loss_only",
                "batch_eval_metrics", "skip_memory_metrics", "do_train", "do_eval", "do_predict",
                "local_rank", "dataloader_pin_memory", "dataloader_persistent_workers",
                "dataloader_prefetch_factor", "dataloader_multiprocessing_context",
                "dataloader_in_order"}
NOT_RECORDED_PREFIXES = ("logging_", "log_", "save_", "eval_", "hub_", "push_to_hub", "trackio_",
                         "include_")


def _arg(default=None, help: str = "", **kwargs):
    """A dataclass field with ``help`` for ``HfArgumentParser`` (as TrainingArguments' own)."""
    if "default_factory" not in kwargs:
        kwargs["default"] = default
    return field(metadata={"help": help}, **kwargs)


def _option_fields(cls):
    """``cls`` with a field for each option of :data:`~trainers.options.OPTIONS`: its argument's
    name, type, default and help, declared there once (a field of ``TrainingArguments`` takes
    the option's default); put before ``@dataclass``, which reads the class's annotations."""
    for option in OPTIONS:
        default = option.to_argument(option.default)
        cls.__annotations__[option.argument] = type(default)
        setattr(cls, option.argument, _arg(default, option.argument_help))
    return cls


@dataclass
@_option_fields
class PairTrainingArguments(TrainingArguments):
    """``TrainingArguments`` for :class:`~trainers.trainer.PairTrainer` and
    :func:`~trainers.fitting.fit`: a field for each option of :data:`~trainers.options.OPTIONS`
    (its default, type and help declared there), every other field ``TrainingArguments``' own.

    Semrel's fields: ``encoder`` (``cross`` | ``bi`` | ``tri``, :data:`~trainers.models.
    MODEL_CLASSES`), ``objective`` (a loss of :data:`~trainers.losses.LOSSES`), ``pooling``
    (bi/tri), ``combine`` (tri), ``max_length`` (tokens per sequence), ``margin`` (quadruplet
    losses), ``on_invalid`` (``"omit"`` drops tied condition groups of quadruplet objectives and
    counts them; ``"raise"`` refuses them), ``compile`` (GPU, opt-in: ``torch.compile`` the
    transformer in that mode; ``reduce-overhead``: CUDA graphs), ``pad_to_multiple_of`` (pad
    batches to width buckets: few shapes to compile) and ``precision``: ``auto`` (bf16 autocast +
    TF32 on a GPU, fp16 where it lacks bf16; float32 on CPU), ``bf16`` (bf16 autocast on either,
    refused by a GPU without bf16; on a CPU with AVX512-BF16 or AMX about 1.7x faster for mpnet)
    or ``fp32`` (no autocast, no TF32). ``precision`` sets ``bf16``/``fp16``/``tf32``/``use_cpu``
    where they are left at their defaults; under ``auto`` a ``bf16``/``fp16`` set by the caller
    wins, under ``bf16``/``fp32`` one that contradicts it is an error. Master weights stay float32.

    Defaults that differ from ``TrainingArguments``': those of the options (epochs, pairs per
    device and step, learning rate, warm-up, weight decay; batches of similar token length,
    ``train_sampling_strategy="group_by_length"``, which ``"random"`` turns off), 64 pairs per
    device in evaluation, no checkpoints (``save_strategy="no"``), the loss logged per epoch, ``labels`` as the
    label column with ``remove_unused_columns=False`` (rows are tokenised per batch), a
    progress bar only when stderr is a terminal (else a log line per epoch), no per-step NaN
    check (it waits for the GPU every step).

    ``output_dir`` is the run folder of :func:`~trainers.fitting.fit` (model, card, metrics;
    its checkpoints under ``output_dir/checkpoints``). Make variants with new keyword arguments
    rather than ``dataclasses.replace`` of a built instance, whose device fields ``precision``
    has already set. A value outside its rule is a :class:`~semrel.metrics.errors.ParameterError`
    naming the argument.
    """

    # TrainingArguments' own fields with other defaults for sentence pairs (and, from OPTIONS,
    # num_train_epochs, per_device_train_batch_size, learning_rate, warmup_steps, weight_decay,
    # train_sampling_strategy, seed, max_steps, dataloader_num_workers)
    per_device_eval_batch_size: int = _arg(64, "pairs per device and evaluation step")
    save_strategy: SaveStrategy | str = _arg("no", "checkpoints: no | steps | epoch | best")
    logging_strategy: IntervalStrategy | str = _arg("epoch", "when to log the training loss")
    logging_nan_inf_filter: bool = _arg(False, "skip NaN/inf losses in the log (waits for the "
                                               "GPU every step)")
    remove_unused_columns: bool = _arg(False, "must stay False: rows are tokenised per batch "
                                              "from their text columns")
    label_names: list[str] | None = _arg(help="the label column",
                                         default_factory=lambda: ["labels"])
    disable_tqdm: bool | None = _arg(help="no progress bar (default: when stderr is no terminal)",
                                     default_factory=lambda: not sys.stderr.isatty())
    # semrel's own fields (encoder, objective, pooling, combine, max_length, margin, on_invalid,
    # compile, pad_to_multiple_of, precision): from OPTIONS

    def __post_init__(self):
        check_arguments({name: getattr(self, name) for name in RULES})
        from .losses import LOSSES
        from .models import MODEL_CLASSES

        for name, registry in (("encoder", MODEL_CLASSES), ("objective", LOSSES)):
            if getattr(self, name) not in registry:
                raise ParameterError(name, getattr(self, name), f"must be one of {tuple(registry)}")
        self._apply_precision()
        super().__post_init__()

    def _apply_precision(self) -> None:
        defaults = {f.name: f.default for f in fields(TrainingArguments)
                    if f.name in PRECISION_FIELDS}
        explicit = {k for k in PRECISION_FIELDS if getattr(self, k) != defaults[k]}
        wanted = device_kwargs(self.precision, cuda=torch.cuda.is_available() and not self.use_cpu)
        if self.precision == "auto" and explicit & {"bf16", "fp16"}:  # the caller's choice wins
            wanted = {k: v for k, v in wanted.items() if k not in ("bf16", "fp16")}
        for key, value in wanted.items():
            if key not in explicit:
                setattr(self, key, value)
            elif getattr(self, key) != value and self.precision != "auto":
                raise ParameterError("precision", self.precision,
                                     f"contradicts {{{key}}}={getattr(self, key)!r} (it sets "
                                     f"{key}={value!r}): leave {{{key}}} at its default or use "
                                     "'auto'")

    def model_options(self) -> dict:
        """Keyword arguments of :func:`~trainers.models.build_model` that this encoder kind
        takes (``pooling``, ``max_length``, ``combine``)."""
        from .models import MODEL_CLASSES

        return {name: getattr(self, name) for name in MODEL_CLASSES[self.encoder].fit_options}


def cpu_has_native_bf16() -> bool:
    """Whether oneDNN runs bf16 natively on this CPU (AVX512-BF16 or AMX)."""
    return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


def device_kwargs(precision: str = "auto", *, cuda: bool | None = None) -> dict:
    """``TrainingArguments`` device and precision fields for ``precision`` (see
    :class:`PairTrainingArguments`; ``cuda``: train on a CUDA GPU, default when one is there).
    On a GPU, ``auto`` and ``bf16``: bf16 autocast (``auto`` falls back to fp16 on a GPU without
    bf16, ``bf16`` is an error there) and TF32 matmuls where the GPU has them; ``fp32``: neither
    (TF32 switched off, also after an earlier run in the same process switched it on). Without a
    GPU: ``use_cpu`` (which also lets torchrun run several CPU processes over gloo), float32
    unless ``bf16``, which warns on a CPU without native bf16 (AVX512-BF16 or AMX), where autocast
    is emulated and slower than float32."""
    check_arguments({"precision": precision})
    if cuda is None:
        cuda = torch.cuda.is_available()
    if not cuda:
        if precision == "bf16" and not cpu_has_native_bf16():
            warnings.warn("--precision bf16 on a CPU without native bf16 (AVX512-BF16 or AMX): "
                          "autocast is emulated here and runs slower than fp32; use auto or fp32",
                          stacklevel=2)
        return {"use_cpu": True, "bf16": precision == "bf16"}
    if precision == "fp32":
        return {"tf32": False}
    if precision == "bf16" and not torch.cuda.is_bf16_supported():
        raise ParameterError("precision", precision, f"{torch.cuda.get_device_name()} has no "
                             "bf16: use 'auto' (fp16 autocast there) or 'fp32'")
    kwargs = {"bf16" if torch.cuda.is_bf16_supported() else "fp16": True}
    if torch.cuda.get_device_capability()[0] >= 8:  # Ampere and later have TF32 tensor cores
        kwargs["tf32"] = True
    return kwargs


def precision_used(args: TrainingArguments) -> str:
    """The autocast dtype a run trained under: ``bf16``, ``fp16`` or ``fp32`` (+ ``/tf32``)."""
    name = "bf16" if args.bf16 else "fp16" if args.fp16 else "fp32"
    return name + ("/tf32" if args.tf32 else "")


def _recorded(name: str) -> bool:
    return name not in NOT_RECORDED and not name.startswith(NOT_RECORDED_PREFIXES)


def recorded_options(args: PairTrainingArguments) -> dict:
    """What a run writes down about its arguments (run fingerprint, model card,
    ``metrics.json``): every option of :data:`~trainers.options.OPTIONS` under its recorded name
    (``epochs``, ``batch_size``, ...), then, under their own names, the other arguments set away
    from their defaults, except those that change only where a run writes, what it shows or how
    fast batches arrive (:data:`NOT_RECORDED`)."""
    record = {o.name: o.to_record(getattr(args, o.argument)) for o in OPTIONS}
    mapped = {o.argument for o in OPTIONS}
    mine = args.to_dict()
    defaults = type(args)(precision=args.precision, use_cpu=args.use_cpu).to_dict()
    return record | {k: mine[k] for k in sorted(mine)
                     if k not in mapped and _recorded(k) and mine[k] != defaults.get(k)}


def stored_options(saved: dict) -> dict:
    """A saved record with every option it lacks (one added to :data:`~trainers.options.OPTIONS`
    after the record was written) at its default, so it compares equal to
    :func:`recorded_options` of the same run."""
    return {**recorded_options(PairTrainingArguments()), **saved}
