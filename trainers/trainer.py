"""``transformers.Trainer`` for sentence-pair encoders, with similarity metrics and precision set-up.

The Trainer does the rest: gradient accumulation, checkpoints and ``resume_from_checkpoint``,
several devices through accelerate / ``torchrun`` (no code change), mixed precision.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from functools import partial

import numpy as np
import torch
from torch.utils.data import DataLoader
from transformers import EvalPrediction, Trainer, TrainerCallback, TrainingArguments
from transformers.trainer_callback import ProgressCallback
from transformers.trainer_utils import seed_worker

from semrel.metrics.correlation import correlate

from .data import PairCollator, condition_groups
from .losses import MSELoss, PairLoss, build_loss
from .models import PairEncoder, sequence_lengths
from .options import PRECISIONS
from .samplers import GroupBatchSampler


@dataclass(frozen=True)
class SimilarityResult:
    """Agreement of predicted with gold scores: Pearson r, Spearman ρ, mean squared error."""

    pearson: float
    spearman: float
    mse: float


def similarity_scores(predictions, labels) -> SimilarityResult:
    """Pearson r, Spearman ρ (``scipy.stats``) and ``mean((p − y)²)`` over 1-D arrays: the one
    correlation helper of the trainers (runs, per-source scores, ``compute_metrics``)."""
    p = np.asarray(predictions, dtype=np.float64).reshape(-1)
    y = np.asarray(labels, dtype=np.float64).reshape(-1)
    if p.shape != y.shape or p.size < 2:
        raise ValueError(f"need two equal-length arrays of >= 2 scores, got {p.shape}, {y.shape}")
    correlation = correlate(p, y)  # the one Pearson/Spearman helper (metrics, ground floor)
    return SimilarityResult(pearson=correlation.pearson, spearman=correlation.spearman,
                            mse=float(np.mean((p - y) ** 2)))


def compute_metrics(eval_pred: EvalPrediction) -> dict[str, float]:
    """``compute_metrics`` for the Trainer: pearson, spearman and mse on the [0, 1] label scale."""
    predictions = eval_pred.predictions
    if isinstance(predictions, tuple):
        predictions = predictions[0]
    return vars(similarity_scores(predictions, eval_pred.label_ids))


def device_kwargs(precision: str = "auto") -> dict:
    """Device and precision for TrainingArguments (``precision``: see
    :class:`~trainers.options.FitOptions`). On a CUDA GPU, ``auto`` and ``bf16``: bf16 autocast
    (``auto`` falls back to fp16 on a GPU without bf16, ``bf16`` is a ValueError there) and TF32
    matmuls where the GPU has them; ``fp32``: neither (TF32 switched off, also after an earlier
    run in the same process switched it on); always fused AdamW. Without a GPU: ``use_cpu``
    (which also lets torchrun run several CPU processes over gloo), float32 unless ``bf16``."""
    if precision not in PRECISIONS:
        raise ValueError(f"--precision {precision!r}: must be one of {PRECISIONS}")
    if not torch.cuda.is_available():
        return {"use_cpu": True, "bf16": precision == "bf16"}
    kwargs = {"optim": "adamw_torch_fused"}  # one kernel per step, not one per tensor group
    if precision == "fp32":
        return {**kwargs, "tf32": False}
    if precision == "bf16" and not torch.cuda.is_bf16_supported():
        raise ValueError(f"--precision bf16: {torch.cuda.get_device_name()} has no bf16; use "
                         "auto (fp16 autocast there) or fp32")
    kwargs["bf16" if torch.cuda.is_bf16_supported() else "fp16"] = True
    if torch.cuda.get_device_capability()[0] >= 8:  # Ampere and later have TF32 tensor cores
        kwargs["tf32"] = True
    return kwargs


def precision_used(args: TrainingArguments) -> str:
    """The autocast dtype a run trained under: ``bf16``, ``fp16`` or ``fp32`` (+ ``/tf32``)."""
    name = "bf16" if args.bf16 else "fp16" if args.fp16 else "fp32"
    return name + ("/tf32" if args.tf32 else "")


def training_arguments(output_dir: str, *, epochs: float = 4, batch_size: int = 16,
                       learning_rate: float = 2e-5, warmup: float = 0.1, weight_decay: float = 0.01,
                       seed: int = 42, precision: str = "auto", **overrides
                       ) -> TrainingArguments:
    """TrainingArguments for pair encoders: no column pruning, ``labels`` as the label name,
    loss logged per epoch, device and precision from :func:`device_kwargs`; a progress bar
    (steps, loss, ETA) when stderr is a terminal, else one log line per epoch; ``overrides`` win
    (e.g. ``eval_strategy="epoch"`` with an ``eval_dataset``)."""
    kwargs = dict(
        output_dir=output_dir, num_train_epochs=epochs, per_device_train_batch_size=batch_size,
        per_device_eval_batch_size=max(batch_size, 64), learning_rate=learning_rate,
        warmup_steps=warmup, weight_decay=weight_decay, seed=seed, data_seed=seed,
        eval_strategy="no", save_strategy="no", logging_strategy="epoch",
        remove_unused_columns=False, label_names=["labels"], report_to="none",
        disable_tqdm=not sys.stderr.isatty(), dataloader_pin_memory=torch.cuda.is_available(),
        logging_nan_inf_filter=False,  # its per-step isnan check waits for the GPU every step
        **device_kwargs(precision),
    )
    kwargs.update(overrides)
    return TrainingArguments(**kwargs)


class LossProgressCallback(ProgressCallback):
    """transformers' progress bar (steps, ETA) with the last logged training loss beside it."""

    def on_log(self, args, state, control, logs=None, **kwargs):
        if state.is_world_process_zero and self.training_bar is not None and logs \
                and "loss" in logs:
            self.training_bar.set_postfix(loss=f"{logs['loss']:.4f}", refresh=False)
        super().on_log(args, state, control, logs=logs, **kwargs)


class EpochClock(TrainerCallback):
    """Wall seconds of each training epoch, device work included (CUDA synchronised at the
    epoch's end): a whole run splits into its first epoch (data-loader workers, first kernels,
    compilation) and the steady epochs after it. Any ``transformers`` Trainer takes it."""

    def __init__(self):
        self.seconds: list[float] = []
        self._start = 0.0

    def on_epoch_begin(self, args, state, control, **kwargs):
        self._start = time.perf_counter()

    def on_epoch_end(self, args, state, control, **kwargs):
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.synchronize()
        self.seconds.append(time.perf_counter() - self._start)


class PairTrainer(Trainer):
    """Trainer for a :class:`~trainers.models.PairEncoder` with a loss from
    :data:`~trainers.losses.LOSSES` (``objective``: its name, or a :class:`PairLoss` module).

    Datasets hold the columns of :func:`trainers.data.prepare_pairs` (``sentence1``,
    ``sentence2`` [, ``condition``], ``labels`` in [0, 1]); rows are tokenised per batch
    (dynamic padding). With a ``grouped`` loss the training rows are grouped into
    (high, low) condition groups before tokenisation and batched by
    :class:`~trainers.samplers.GroupBatchSampler`; ``on_invalid="omit"`` drops groups whose two
    scores are equal (counted in ``n_omitted_groups``; ``"raise"``, the default, refuses them);
    ``train_name`` names the training data in those errors. ``group_by_length`` batches rows (or
    groups) of similar token length together (same sampler, lengths from
    :meth:`~trainers.models.PairEncoder.token_lengths`), so dynamic padding wastes little.
    Rows pre-tokenised by :func:`~trainers.data.pretokenize_pairs` are only padded per batch
    (``pad_to_multiple_of`` rounds the width up: few shapes to compile). Evaluation keeps the dataset order; its loss is the MSE term alone.
    """

    def __init__(self, model: PairEncoder, args: TrainingArguments, *,
                 objective: str | PairLoss = "mse", margin: float = 1.0,
                 on_invalid: str = "raise", group_by_length: bool = False,
                 train_name: str = "train_dataset", pad_to_multiple_of: int = 0, **kwargs):
        loss = objective if isinstance(objective, PairLoss) else build_loss(objective,
                                                                            margin=margin)
        if loss.needs_embeddings and not model.has_embeddings:
            raise ValueError(f"objective {loss.name!r} needs a bi- or tri-encoder (one vector "
                             f"per sentence); a {model.kind}-encoder has none")
        if loss.grouped and args.per_device_train_batch_size % 2:
            raise ValueError(f"objective {loss.name!r}: batch size "
                             f"{args.per_device_train_batch_size} is odd; quadruplet batches "
                             "hold whole (high, low) condition groups, so it must be even")
        if on_invalid not in ("raise", "omit"):
            raise ValueError(f"on_invalid must be 'raise' or 'omit', got {on_invalid!r}")
        if args.remove_unused_columns:
            raise ValueError("PairTrainer needs remove_unused_columns=False (rows are tokenised "
                             "per batch from their text columns); use training_arguments()")
        self.loss, self.eval_loss, self.train_name = loss, MSELoss(), train_name
        self.on_invalid, self.group_by_length = on_invalid, group_by_length
        self.n_omitted_groups = 0
        kwargs.setdefault("data_collator", PairCollator(model, pad_to_multiple_of))
        kwargs.setdefault("compute_metrics", compute_metrics)
        kwargs.setdefault("processing_class", model.tokenizer)
        super().__init__(model=model, args=args, **kwargs)
        if not args.disable_tqdm:
            self.remove_callback(ProgressCallback)
            self.add_callback(LossProgressCallback)

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        loss_fn = self.loss if model.training else self.eval_loss  # eval batches: not grouped
        outputs = model(**inputs, return_embeddings=loss_fn.needs_embeddings)
        loss = loss_fn(outputs.scores, labels, outputs.embeddings1, outputs.embeddings2)
        return (loss, {"scores": outputs.scores.float()}) if return_outputs else loss

    def train_batch_sampler(self) -> GroupBatchSampler | None:
        """Whole (high, low) groups for grouped losses, rows grouped by length with
        ``group_by_length``; ``None`` leaves the Trainer's random sampler."""
        grouped = self.loss.grouped
        if not (grouped or self.group_by_length):
            return None
        data = self.train_dataset
        if grouped:
            groups = condition_groups(data, where=self.train_name, on_invalid=self.on_invalid)
            self.n_omitted_groups, rows = groups.n_omitted, groups.rows
        else:
            rows = np.arange(len(data), dtype=np.int64)[:, None]
        lengths = None
        if self.group_by_length:
            if "input_ids" in data.column_names:  # pre-tokenised: no second tokenizer pass
                per_row = sequence_lengths(data["input_ids"])
            else:
                model = self.accelerator.unwrap_model(self.model)
                per_row = model.token_lengths(data["sentence1"], data["sentence2"],
                                              data["condition"] if model.conditional else None)
            lengths = per_row[rows].max(axis=1)
        seed = self.args.data_seed if self.args.data_seed is not None else self.args.seed
        return GroupBatchSampler(rows, self.args.per_device_train_batch_size, seed=seed,
                                 lengths=lengths, world_size=self.args.world_size)

    def get_train_dataloader(self) -> DataLoader:
        sampler = self.train_batch_sampler()
        if sampler is None:
            return super().get_train_dataloader()
        loader = DataLoader(self.train_dataset, batch_sampler=sampler,
                            collate_fn=self.data_collator,
                            num_workers=self.args.dataloader_num_workers,
                            pin_memory=self.args.dataloader_pin_memory,
                            worker_init_fn=partial(seed_worker,
                                                   num_workers=self.args.dataloader_num_workers,
                                                   rank=self.args.process_index))
        return self.accelerator.prepare(loader)
