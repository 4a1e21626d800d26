"""Fit one run: train an encoder on the ``train`` split (or ``train_splits``) of any pair dataset
(:class:`~semrel.dataset_scripts.pairs.PairData`), evaluate it, save it with its card, figures and
predictions in its run folder (:mod:`~trainers.run_folder`).

Training arguments are :class:`~trainers.arguments.PairTrainingArguments`; per-source and
per-language Spearman and the intervals come from :mod:`~trainers.summaries`.
"""

from __future__ import annotations

import copy
import logging
import os
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import datasets
import numpy as np

from semrel.dataset_scripts.pairs import PairData
from semrel.metrics.errors import ParameterError

from .arguments import PairTrainingArguments, precision_used, recorded_options, stored_options
from .card import CardFacts
from .data import prepare_pairs, pretokenize_pairs
from .model_ref import ModelRef, resolve_model_ref
from .models import build_model, default_prompt, sequence_lengths
from .run_folder import (
    CHECKPOINTS,
    PREDICTIONS,
    SELECTION,
    check_checkpoint_run,
    check_output,
    finish_run,
    prepare_output,
    resume_point,
    seen_part,
    start_seen,
    write_metrics,
    write_predictions,
    write_seen_pairs,
)
from .selection import DevSplit, check_selection, chosen_on, selection_record
from .starting_point import base_model, pooling_note, starting_folder
from .summaries import eval_intervals, finite_or_null, per_language_spearman, per_source_spearman
from .trainer import EpochClock, PairTrainer, SimilarityResult, similarity_scores

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FitResult:
    """What one run measured: scores on ``eval_split`` (on the [0, 1] label scale), per-source
    Spearman, training size and speed (pairs/s over the steps trained in this process, so a
    resumed run counts only what it trained after resuming; the seconds of each epoch trained),
    the options it ran with (:func:`~trainers.arguments.recorded_options`) and the model it
    started from (``start_model``: :meth:`~trainers.model_ref.ModelRef.record`). The run folder's
    record of it writes a figure that is undefined (NaN: e.g. Spearman of constant predictions)
    as null."""

    output_dir: str
    eval_split: str | None
    pearson: float | None
    spearman: float | None
    mse: float | None
    per_source: dict[str, float] = field(default_factory=dict)
    per_language: dict[str, float] = field(default_factory=dict)  # per_language_spearman
    train_pairs: int = 0
    train_seconds: float = 0.0
    pairs_per_second: float = 0.0
    n_omitted_groups: int = 0
    data: str = ""
    score_range: tuple[float, float] | None = None
    precision: str = ""
    epoch_seconds: list[float] = field(default_factory=list)
    options: dict = field(default_factory=dict)
    selection: dict = field(default_factory=dict)  # trainers.selection.selection_record
    spearman_ci: list[float] | None = None  # 95 % paired-bootstrap interval (eval_intervals)
    pearson_ci: list[float] | None = None  # 95 % Fisher-z interval
    start_model: dict = field(default_factory=dict)  # spec, kind, Hub id and revision


def model_ref(model) -> ModelRef:
    """A model argument of :func:`fit` (a :class:`~trainers.model_ref.ModelRef`, or what
    :func:`~trainers.model_ref.resolve_model_ref` takes) as a ModelRef."""
    return model if isinstance(model, ModelRef) else resolve_model_ref(str(model),
                                                                       parameter="model_path")


def run_fingerprint(data: PairData, model: ModelRef | str | os.PathLike,
                    args: PairTrainingArguments) -> dict:
    """What makes two runs the same run: data, starting model (a folder by its path, a Hub model
    by id and commit: :attr:`~trainers.model_ref.ModelRef.fingerprint`), recorded options."""
    named = model.fingerprint if isinstance(model, ModelRef) else str(model)
    return {"data": data.name, "model": named, "options": recorded_options(args)}


def eval_split_name(splits, trained=("train",)) -> str | None:
    """The split a run is scored on: ``validation`` when the dataset has one and the run does
    not train on it, else ``test`` (likewise); ``None`` when there is neither (a final model
    trained on all the data is not evaluated), or when the run trains on ``validation`` and the
    ``test`` it falls back to has no gold score in any row (SemRel-2024 English's held-back
    test, predicted afterwards by ``semrel predict``). Any other unlabelled split is scored, and
    so refused by :func:`fit` before training."""
    trained_on_validation = "validation" in splits and "validation" in trained
    for name in ("validation", "test"):
        if name in splits and name not in trained:
            rows = splits[name]
            unlabelled = "score" in rows.column_names and all(s is None for s in rows["score"])
            return None if unlabelled and trained_on_validation else name
    return None


def train_split_names(data: PairData, train_splits: str = "train") -> list[str]:
    """The splits ``train_splits`` (``train`` or names joined by ``+``) names, each one of
    ``data``'s; a ValueError names the first that is not."""
    names = train_splits.split("+")
    for name in names:
        if name not in data.splits and train_splits == "train":
            raise ValueError(f"{data.name}: no train split to fit on (splits: {list(data.splits)})")
        if name not in data.splits:
            raise ParameterError("train_splits", train_splits, f"{data.name} has no {name} split to "
                                 f"fit on (splits: {list(data.splits)})")
    return names


def with_output(args: PairTrainingArguments, output_dir) -> PairTrainingArguments:
    """``args`` with another ``output_dir`` (a copy: the device fields stay as resolved)."""
    args = copy.copy(args)
    args.output_dir = str(output_dir)
    return args


def longest_first(rows):
    """Pre-tokenised ``rows`` (:func:`~trainers.data.pretokenize_pairs`) longest pair first
    (stable), so that each evaluation batch pads to a similar width, and the order that puts
    them back: ``rows`` re-sorted ``.select(order)``, a row's prediction at ``order``."""
    order = np.argsort(-sequence_lengths(rows["input_ids"]), kind="stable")
    return rows.select(order), order


def _predict(trainer, rows) -> np.ndarray:
    """The trainer's predictions of ``rows``, in row order; batched longest first (on
    STR-2021 and MiniLM half the padded work of the rows' own order)."""
    sorted_rows, order = longest_first(rows)
    predictions = np.empty(len(order), dtype=np.float64)
    predictions[order] = np.asarray(trainer.predict(sorted_rows).predictions,
                                    dtype=np.float64).reshape(-1)
    return predictions


def fit(data: PairData, model_path: str | os.PathLike | ModelRef, args: PairTrainingArguments, *,
        resume_from_checkpoint: str | bool | None = None, overwrite: bool = False,
        callbacks=None, eval_data: DevSplit | None = None) -> FitResult:
    """Train ``args.encoder`` from the model ``model_path`` (a packaged name, a folder, a Hub
    model id ``namespace/name[@revision]`` or a resolved
    :class:`~trainers.model_ref.ModelRef`; the transformer it starts from is
    :func:`~trainers.starting_point.starting_folder`'s) on the ``train`` split (or
    the splits ``args.train_splits`` names, e.g. ``train+validation``), evaluate on
    :func:`eval_split_name`, save model + model card + figures + the hashes of the pairs it
    trained and chose on (:mod:`~trainers.run_folder.seen`) in the run
    folder ``args.output_dir`` (the Trainer's checkpoints, e.g. with ``save_strategy="steps"``,
    in its ``checkpoints``).

    ``output_dir`` must be new or empty, or hold a run: the same run to resume
    (``resume_from_checkpoint``, else ``args.resume_from_checkpoint``: a checkpoint folder of
    this run, or True / ``"last"`` for its last complete checkpoint), or any run with
    ``overwrite=True`` (cleared first), or this run unfinished (started afresh); see
    :func:`~trainers.run_folder.prepare_output`. The data are checked before anything is
    written or trained: a train split, and gold scores in every row of the split evaluated.

    ``eval_data`` (:func:`~trainers.selection.load_dev`): a dev split, of this or other data on
    the same score range, evaluated during training as ``args`` say
    (:func:`~trainers.selection.selection_arguments`: each epoch, the best checkpoint by a
    metric kept); the curve and the kept checkpoint go into ``selection`` of the result, the
    figures and the card, the kept model's dev predictions beside them. The split evaluated
    after training (:func:`eval_split_name`) cannot be the one that chooses; pairs the run
    trains on refuse the dev split, or with ``args.selection_overlap="omit"`` are left out of it
    (:func:`~trainers.selection.chosen_on`: counted in ``selection``, the card and the output;
    ``seen_pairs.json`` and ``selection_predictions.json`` hold the pairs it chose on).
    ``seen_pairs.json`` also holds what the model it starts from saw, where that folder records
    it (:func:`~trainers.run_folder.start_seen`; a run that records its data but not its pairs
    is refused as a start).
    """
    if args.output_dir is None:
        raise ParameterError("output_dir", None, "must name the run folder")
    output_dir = Path(args.output_dir)
    resume = resume_from_checkpoint if resume_from_checkpoint is not None \
        else args.resume_from_checkpoint
    ref = model_ref(model_path)
    start = starting_folder(ref, args.encoder, "model_path")
    hashing, start_saw = start_seen(ref.path, "model_path", ref.spec)  # a run started from: what it saw
    trained = train_split_names(data, args.train_splits)
    eval_name = eval_split_name(data.splits, trained)
    check_selection(data, eval_data, args, held_out=eval_name, trained=trained)
    eval_data = chosen_on(data, eval_data, trained, args)  # selection_overlap="omit": the rest
    run = run_fingerprint(data, ref, args)
    if eval_data is not None:
        run["eval_data"] = eval_data.name
    main_process = int(os.environ.get("RANK", "0")) == 0  # torchrun: one process owns the folder
    if main_process:
        check_output(output_dir, run, resume=resume, overwrite=overwrite, as_recorded=stored_options)
    if resume and resume is not True and resume != "last":
        check_checkpoint_run(resume, run, as_recorded=stored_options)
    train_name = f"{data.name}/{args.train_splits}"
    train = datasets.concatenate_datasets([
        prepare_pairs(data.splits[s], data.score_range, where=f"{data.name}/{s}") for s in trained])
    evaluation = None if eval_name is None else prepare_pairs(  # its gold scores, before training
        data.splits[eval_name], data.score_range, where=f"{data.name}/{eval_name}")
    dev_rows = None if eval_data is None else prepare_pairs(eval_data.rows, data.score_range,
                                                            where=eval_data.name)
    checkpoint, start_step = resume_point(output_dir, resume)  # none written yet: refused here
    conditional = "condition" in train.column_names
    if (note := pooling_note(ref, args.encoder, args.pooling)) and main_process:
        log.warning(note)
    options = args.model_options()
    if start != ref.path and args.encoder != "cross":  # a transformer in a module folder: the
        options["prompt"] = default_prompt(ref.path)  # prompts are in the model's own config
    model = build_model(args.encoder, start, seed=args.seed, conditional=conditional, **options)
    train = pretokenize_pairs(train, model)
    if main_process:
        prepare_output(output_dir, run, resume=resume, overwrite=overwrite,
                       as_recorded=stored_options)
    dev_rows = None if dev_rows is None else pretokenize_pairs(dev_rows, model)
    clock = EpochClock()
    trainer = PairTrainer(model, with_output(args, output_dir / CHECKPOINTS),
                          train_name=train_name, train_dataset=train,
                          eval_dataset=None if dev_rows is None else longest_first(dev_rows)[0],
                          callbacks=[clock, *(callbacks or [])])
    train_output = trainer.train(resume_from_checkpoint=checkpoint)
    selection = {} if eval_data is None else selection_record(trainer.state, eval_data,
                                                              trainer.args)
    scores, per_source, per_language = SimilarityResult(None, None, None), {}, {}
    if eval_name is not None:
        evaluation = pretokenize_pairs(evaluation, model)
        predictions = _predict(trainer, evaluation)
        labels = np.asarray(evaluation["labels"], dtype=np.float64)
        scores = similarity_scores(predictions, labels)
        per_source = per_source_spearman(data.splits[eval_name], predictions, labels)
        per_language = per_language_spearman(data.splits[eval_name], predictions, labels)
    seconds = float(train_output.metrics["train_runtime"])
    used = trainer.args
    pairs_all_steps = (len(train) * float(used.num_train_epochs) if used.max_steps <= 0 else
                       used.max_steps * used.train_batch_size * used.world_size
                       * used.gradient_accumulation_steps)
    steps = trainer.state.global_step
    pairs_here = pairs_all_steps * (steps - start_step) / steps if steps else 0.0
    result = FitResult(
        output_dir=str(output_dir), eval_split=eval_name, pearson=scores.pearson,
        spearman=scores.spearman, mse=scores.mse, per_source=per_source,
        **(eval_intervals(predictions, labels) if eval_name is not None else {}),
        per_language=per_language,
        train_pairs=len(train), train_seconds=seconds,
        pairs_per_second=pairs_here / seconds if seconds > 0 else 0.0,
        n_omitted_groups=trainer.n_omitted_groups, data=data.name,
        score_range=data.score_range, precision=precision_used(used),
        epoch_seconds=clock.seconds, options=run["options"], selection=selection,
        start_model=ref.record())
    if eval_data is not None:  # the kept model's dev predictions (every process predicts)
        dev_predictions = _predict(trainer, dev_rows)
    if trainer.is_world_process_zero():
        model.card_facts = replace(model.card_facts or CardFacts(), data=data, result=result,
                                   base_model=base_model(ref, start))
        model.save_pretrained(output_dir)  # with its card
        write_metrics(output_dir, finite_or_null(asdict(result)))
        write_seen_pairs(output_dir, start_saw + [seen_part("train", data.name, s, data.splits[s], hashing)
                                                  for s in trained]
                         + ([] if eval_data is None else [seen_part("selection", eval_data.data.name,
                                                                    eval_data.split, eval_data.rows, hashing)]),
                         hashing)
        if eval_name is not None:
            write_predictions(output_dir, PREDICTIONS, data, eval_name, predictions, labels,
                              encoder=model.kind, conditional=model.conditional)
        if eval_data is not None:
            write_predictions(output_dir, SELECTION, eval_data.data, eval_data.split,
                              dev_predictions, np.asarray(dev_rows["labels"], dtype=np.float64),
                              encoder=model.kind, conditional=model.conditional, sentences=True)
        finish_run(output_dir, run)
    return result
