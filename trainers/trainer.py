"""``transformers.Trainer`` for sentence-pair encoders, with similarity metrics.

:class:`PairTrainer` takes :class:`~trainers.arguments.PairTrainingArguments`; the Trainer does
the rest: the DataLoader (every ``dataloader_*`` argument), gradient accumulation, checkpoints and
``resume_from_checkpoint``, several devices through accelerate / ``torchrun`` (no code change),
mixed precision. Batching is customised in one hook, :meth:`PairTrainer.get_batch_sampler`. As
sentence-transformers does, a callback (:class:`ModelCardCallback`) gathers what the model card
says, so a model saved after training (``model.save_pretrained``) carries its card.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np
import torch
from torch.utils.data import SequentialSampler
from transformers import EvalPrediction, Trainer, TrainerCallback
from transformers.trainer_callback import PrinterCallback, ProgressCallback

from semrel.metrics.correlation import correlate
from semrel.metrics.errors import ParameterError

from .arguments import PairTrainingArguments, precision_used, recorded_options
from .card import CardFacts
from .data import PairCollator, condition_groups
from .losses import PairLoss, PairMSELoss, build_loss
from .models import PairEncoder, sequence_lengths
from .samplers import BatchOrderSampler, GroupBatchSampler

logger = logging.getLogger(__name__)


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


class ModelCardCallback(TrainerCallback):
    """At the end of training, the model's :class:`~trainers.card.CardFacts` (``model.
    card_facts``): the training data's name and size, the recorded options, the log, the
    omitted groups, precision and seconds; ``save_pretrained`` writes the card from them."""

    def __init__(self, trainer: PairTrainer, options: dict):
        self.trainer, self.options = trainer, options

    def on_train_end(self, args, state, control, **kwargs):
        trainer = self.trainer
        runtime = next((e["train_runtime"] for e in reversed(state.log_history)
                        if "train_runtime" in e), 0.0)
        trainer.model.card_facts = CardFacts(
            train_name=trainer.train_name, options=self.options,
            log_history=state.log_history, train_pairs=len(trainer.train_dataset or ()),
            n_omitted_groups=trainer.n_omitted_groups, precision=precision_used(args),
            train_seconds=float(runtime))


class EpochLogCallback(TrainerCallback):
    """Each log of the Trainer (the loss per epoch, by default) as one line through
    :mod:`logging` -- where transformers' ``PrinterCallback`` prints -- so ``semrel -q`` silences
    it and a library caller's logging configuration decides."""

    def on_log(self, args, state, control, logs=None, **kwargs):
        if state.is_local_process_zero and logs:
            shown = ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
                              for k, v in logs.items() if k not in ("epoch", "total_flos"))
            logger.info("epoch %.2f: %s", state.epoch or 0.0, shown)


def compile_encoder(model: PairEncoder, args: PairTrainingArguments) -> None:
    """``torch.compile`` the model's transformer in place when ``args.compile`` asks for it
    (state-dict keys and saving stay as they are); shapes are static with width buckets
    (``pad_to_multiple_of``), dynamic otherwise."""
    if args.compile != "none":
        model.encoder.compile(mode=None if args.compile == "default" else args.compile,
                              dynamic=not args.pad_to_multiple_of)


class PairTrainer(Trainer):
    """Trainer for a :class:`~trainers.models.PairEncoder` with ``loss``, a
    :class:`~trainers.losses.PairLoss` it delegates to (default: the one ``args.objective`` names
    in :data:`~trainers.losses.LOSSES`, with ``args.margin``), all else set by ``args``
    (:class:`~trainers.arguments.PairTrainingArguments`; its model fields -- ``encoder``,
    ``pooling``, ``combine`` -- must describe ``model``). The card records the loss's ``name``
    as the objective.

    Datasets hold the columns of :func:`trainers.data.prepare_pairs` (``sentence1``,
    ``sentence2`` [, ``condition``], ``labels`` in [0, 1]); rows are tokenised per batch
    (dynamic padding) unless pre-tokenised by :func:`~trainers.data.pretokenize_pairs` (then only
    padded per batch; ``pad_to_multiple_of`` rounds the width up: few shapes to compile). With a
    ``grouped`` loss the training rows are grouped into (high, low) condition groups before
    tokenisation and batched whole; ``on_invalid="omit"`` drops groups whose two scores are equal
    (counted in ``n_omitted_groups``; ``"raise"``, the default, refuses them); ``train_name``
    names the training data in those errors. ``train_sampling_strategy="group_by_length"``
    batches rows (or groups) of similar token length together, so dynamic padding wastes little.
    Both through :meth:`get_batch_sampler`. Evaluation keeps the dataset order; its loss is the
    MSE term alone.
    """

    def __init__(self, model: PairEncoder, args: PairTrainingArguments, *,
                 loss: PairLoss | None = None, train_name: str = "train_dataset", **kwargs):
        if not isinstance(args, PairTrainingArguments):
            raise TypeError(f"PairTrainer needs PairTrainingArguments (semrel's fields beside "
                            f"TrainingArguments'), got {type(args).__name__}")
        if model.kind != args.encoder:
            raise ParameterError("encoder", args.encoder, f"must name the model's kind: the "
                                 f"model is a {model.kind}-encoder")
        for name in type(model).fit_options:
            if name != "max_length" and getattr(model, name) != getattr(args, name):
                raise ParameterError(name, getattr(args, name),
                                     f"must match the model's {name}, {getattr(model, name)!r}")
        named = "objective" if loss is None else "loss"  # the parameter that chose the loss
        if loss is None:
            loss = build_loss(args.objective, margin=args.margin)
        elif not isinstance(loss, PairLoss):
            raise TypeError(f"PairTrainer's loss must be a PairLoss (semrel.trainers.losses), got "
                            f"{type(loss).__name__}")
        if loss.needs_embeddings and not model.has_embeddings:
            raise ParameterError(named, loss.name, f"needs a bi- or tri-encoder (one "
                                 f"vector per sentence); a {model.kind}-encoder has none")
        if loss.grouped and args.per_device_train_batch_size % 2:
            raise ParameterError("per_device_train_batch_size",
                                 args.per_device_train_batch_size,
                                 f"must be even for objective {loss.name!r}: quadruplet batches "
                                 "hold whole (high, low) condition groups")
        if args.remove_unused_columns:
            raise ParameterError("remove_unused_columns", True, "must be False: rows are "
                                 "tokenised per batch from their text columns")
        self.loss, self.eval_loss, self.train_name = loss, PairMSELoss(), train_name
        self.n_omitted_groups = 0
        # recorded before the Trainer sets up the accelerator: recording makes default arguments
        card = ModelCardCallback(self, recorded_options(args) | {"objective": loss.name or type(loss).__name__})
        compile_encoder(model, args)
        kwargs.setdefault("data_collator", PairCollator(model, args.pad_to_multiple_of))
        kwargs.setdefault("compute_metrics", compute_metrics)
        kwargs.setdefault("processing_class", model.tokenizer)
        super().__init__(model=model, args=args, **kwargs)
        self.add_callback(card)
        if args.disable_tqdm:
            self.remove_callback(PrinterCallback)
            self.add_callback(EpochLogCallback)
        else:
            self.remove_callback(ProgressCallback)
            self.add_callback(LossProgressCallback)

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        loss_fn = self.loss if model.training else self.eval_loss  # eval batches: not grouped
        outputs = model(**inputs, return_embeddings=loss_fn.needs_embeddings)
        loss = loss_fn(outputs.scores, labels, outputs.embeddings1, outputs.embeddings2)
        return (loss, {"scores": outputs.scores.float()}) if return_outputs else loss

    def get_batch_sampler(self, dataset, batch_size: int) -> GroupBatchSampler | None:
        """The training batches (the one batching hook): whole (high, low) groups for grouped
        losses, rows grouped by length with ``train_sampling_strategy="group_by_length"``;
        ``None`` leaves the Trainer's own sampler (``"random"``). Every batch but the last must
        hold ``batch_size`` rows: the Trainer's DataLoader cuts the rows of these batches, in
        order, into batches of that size (:class:`~trainers.samplers.BatchOrderSampler`)."""
        grouped = self.loss.grouped
        by_length = self.args.train_sampling_strategy == "group_by_length"
        if not (grouped or by_length):
            return None
        if grouped:
            groups = condition_groups(dataset, where=self.train_name,
                                      on_invalid=self.args.on_invalid)
            self.n_omitted_groups, rows = groups.n_omitted, groups.rows
        else:
            rows = np.arange(len(dataset), dtype=np.int64)[:, None]
        lengths = None
        if by_length:
            if "input_ids" in dataset.column_names:  # pre-tokenised: no second tokenizer pass
                per_row = sequence_lengths(dataset["input_ids"])
            else:
                model = self.accelerator.unwrap_model(self.model)
                per_row = model.token_lengths(dataset["sentence1"], dataset["sentence2"],
                                              dataset["condition"] if model.conditional else None)
            lengths = per_row[rows].max(axis=1)
        seed = self.args.data_seed if self.args.data_seed is not None else self.args.seed
        return GroupBatchSampler(rows, batch_size, seed=seed, lengths=lengths,
                                 world_size=self.args.world_size)

    def _get_train_sampler(self, train_dataset=None):
        """transformers' sampler hook (private: its public ``get_*_dataloader`` take no sampler;
        a test pins it): the rows of :meth:`get_batch_sampler`'s batches in order, so the Trainer
        builds the DataLoader itself (with every ``dataloader_*`` argument) and cuts them into
        the same batches; else the Trainer's own sampler."""
        dataset = self.train_dataset if train_dataset is None else train_dataset
        batches = self.get_batch_sampler(dataset, self._train_batch_size)
        if batches is None:
            return super()._get_train_sampler(train_dataset)
        return BatchOrderSampler(batches)

    def _get_eval_sampler(self, eval_dataset):
        """Evaluation and ``predict`` keep the dataset's row order (transformers would sort
        them by length under ``train_sampling_strategy="group_by_length"``)."""
        if eval_dataset is None or self.args.world_size > 1:
            return None  # several processes: accelerate shards the rows in order
        return SequentialSampler(eval_dataset)
