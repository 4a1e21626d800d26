"""``transformers.Trainer`` for sentence-pair encoders, with similarity metrics and precision set-up.

The Trainer does the rest: gradient accumulation, checkpoints and ``resume_from_checkpoint``,
several devices through accelerate / ``torchrun`` (no code change), mixed precision.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
import torch
from scipy import stats
from torch.utils.data import DataLoader
from transformers import EvalPrediction, Trainer, TrainingArguments
from transformers.trainer_utils import seed_worker

from .data import PairCollator, condition_groups
from .losses import OBJECTIVES, QuadrupletLoss, objective_loss
from .models import PairEncoder, sequence_lengths
from .samplers import GroupBatchSampler


@dataclass(frozen=True)
class SimilarityScores:
    """Agreement of predicted with gold scores: Pearson r, Spearman ρ, mean squared error."""

    pearson: float
    spearman: float
    mse: float


def similarity_scores(predictions, labels) -> SimilarityScores:
    """Pearson r, Spearman ρ (``scipy.stats``) and ``mean((p − y)²)`` over 1-D arrays."""
    p = np.asarray(predictions, dtype=np.float64).reshape(-1)
    y = np.asarray(labels, dtype=np.float64).reshape(-1)
    if p.shape != y.shape or p.size < 2:
        raise ValueError(f"need two equal-length arrays of >= 2 scores, got {p.shape}, {y.shape}")
    return SimilarityScores(pearson=float(stats.pearsonr(p, y).statistic),
                            spearman=float(stats.spearmanr(p, y).statistic),
                            mse=float(np.mean((p - y) ** 2)))


def compute_metrics(eval_pred: EvalPrediction) -> dict[str, float]:
    """``compute_metrics`` for the Trainer: pearson, spearman and mse on the [0, 1] label scale."""
    predictions = eval_pred.predictions
    if isinstance(predictions, tuple):
        predictions = predictions[0]
    return vars(similarity_scores(predictions, eval_pred.label_ids))


def device_kwargs() -> dict:
    """On a CUDA GPU: bf16 (else fp16) autocast, TF32 matmuls where the GPU has them, and the
    fused AdamW (one kernel per step instead of one per parameter group and operation).
    Without one: ``use_cpu`` (which also lets torchrun run several CPU processes over gloo)."""
    if not torch.cuda.is_available():
        return {"use_cpu": True}
    kwargs = {"bf16": True} if torch.cuda.is_bf16_supported() else {"fp16": True}
    kwargs["optim"] = "adamw_torch_fused"
    if torch.cuda.get_device_capability()[0] >= 8:  # Ampere and later have TF32 tensor cores
        kwargs["tf32"] = True
    return kwargs


def training_arguments(output_dir: str, *, epochs: float = 4, batch_size: int = 16,
                       learning_rate: float = 2e-5, warmup: float = 0.1, weight_decay: float = 0.01,
                       seed: int = 42, **overrides) -> TrainingArguments:
    """TrainingArguments for pair encoders: no column pruning, ``labels`` as the label name,
    loss logged per epoch, device and precision from :func:`device_kwargs`; ``overrides`` win
    (e.g. ``eval_strategy="epoch"`` with an ``eval_dataset``)."""
    kwargs = dict(
        output_dir=output_dir, num_train_epochs=epochs, per_device_train_batch_size=batch_size,
        per_device_eval_batch_size=max(batch_size, 64), learning_rate=learning_rate,
        warmup_steps=warmup, weight_decay=weight_decay, seed=seed, data_seed=seed,
        eval_strategy="no", save_strategy="no", logging_strategy="epoch",
        remove_unused_columns=False, label_names=["labels"], report_to="none",
        disable_tqdm=True, dataloader_pin_memory=torch.cuda.is_available(),
        logging_nan_inf_filter=False,  # its per-step isnan check waits for the GPU every step
        **device_kwargs(),
    )
    kwargs.update(overrides)
    return TrainingArguments(**kwargs)


class PairTrainer(Trainer):
    """Trainer for a :class:`~trainers.models.PairEncoder` with an objective from
    :data:`~trainers.losses.OBJECTIVES`.

    Datasets hold the columns of :func:`trainers.data.prepare_pairs` (``sentence1``,
    ``sentence2`` [, ``condition``], ``labels`` in [0, 1]); rows are tokenised per batch
    (dynamic padding). With a quadruplet objective the training rows are grouped into
    (high, low) condition groups before tokenisation and batched by
    :class:`~trainers.samplers.GroupBatchSampler`; ``skip_tied_groups`` drops groups whose two
    scores are equal (counted in ``n_skipped_ties``); ``train_name`` names the training data in
    those errors. ``group_by_length`` batches rows (or groups) of similar token length together
    (same sampler, lengths from :meth:`~trainers.models.PairEncoder.token_lengths`), so dynamic
    padding wastes little. Rows pre-tokenised by :func:`~trainers.data.pretokenize_pairs` are
    only padded per batch (``pad_to_multiple_of`` rounds the width up: few shapes to compile). Evaluation keeps the dataset order; its loss is the MSE term alone.
    """

    def __init__(self, model: PairEncoder, args: TrainingArguments, *, objective: str = "mse",
                 margin: float = 1.0, skip_tied_groups: bool = False,
                 group_by_length: bool = False, train_name: str = "train_dataset",
                 pad_to_multiple_of: int = 0, **kwargs):
        if objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
        if "quad" in objective:
            if model.kind == "cross":
                raise ValueError(f"objective {objective!r} needs a bi- or tri-encoder (one vector "
                                 "per sentence); a cross-encoder has none")
            if args.per_device_train_batch_size % 2:
                raise ValueError(f"objective {objective!r}: batch size "
                                 f"{args.per_device_train_batch_size} is odd; quadruplet batches "
                                 "hold whole (high, low) condition groups, so it must be even")
        if args.remove_unused_columns:
            raise ValueError("PairTrainer needs remove_unused_columns=False (rows are tokenised "
                             "per batch from their text columns); use training_arguments()")
        self.objective, self.train_name = objective, train_name
        self.skip_tied_groups, self.group_by_length = skip_tied_groups, group_by_length
        self.quadruplet_loss = QuadrupletLoss(margin)
        self.n_skipped_ties = 0
        kwargs.setdefault("data_collator", PairCollator(model, pad_to_multiple_of))
        kwargs.setdefault("compute_metrics", compute_metrics)
        kwargs.setdefault("processing_class", model.tokenizer)
        super().__init__(model=model, args=args, **kwargs)

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        objective = self.objective if model.training else "mse"  # eval batches are not grouped
        outputs = model(**inputs, return_embeddings="quad" in objective)
        loss = objective_loss(objective, outputs.scores, labels, outputs.embeddings1,
                              outputs.embeddings2, self.quadruplet_loss)
        return (loss, {"scores": outputs.scores.float()}) if return_outputs else loss

    def train_batch_sampler(self) -> GroupBatchSampler | None:
        """Whole (high, low) groups for quadruplet objectives, rows grouped by length with
        ``group_by_length``; ``None`` leaves the Trainer's random sampler."""
        quadruplet = "quad" in self.objective
        if not (quadruplet or self.group_by_length):
            return None
        data = self.train_dataset
        if quadruplet:
            groups = condition_groups(data, where=self.train_name,
                                      skip_ties=self.skip_tied_groups)
            self.n_skipped_ties, rows = groups.n_skipped_ties, groups.rows
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
