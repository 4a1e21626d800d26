"""Runs: fit one split, cross-validate over a family of configs, predict a split.

Everything here works on any dataset with the shared pair schema: a ``dataset_scripts``
registry id (its ``score_range`` gives the label scale) or a ``DatasetDict.save_to_disk`` folder
with an explicit ``score_range``. Per-source Spearman is reported when the evaluated split has a
``source`` column.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

import datasets
import numpy as np

from dataset_scripts.pretrained import known_base_model

from .card import write_model_card
from .ensemble import ENSEMBLE_FILE, PREDICTIONS_FILE, Ensemble, cv_ensemble, load_run
from .data import prepare_pairs, pretokenize_pairs, unscale
from .models import PairEncoder, build_model
from .trainer import PairTrainer, SimilarityScores, similarity_scores, training_arguments

FAMILIES = {"cv": "cv-fold-", "lodo": "lodo-"}


@dataclass(frozen=True)
class FitOptions:
    """Model and training hyperparameters of one run (``batch_size`` is per device;
    ``group_by_length`` batches pairs of similar token length, see
    :class:`~trainers.samplers.GroupBatchSampler`). GPU speed, opt-in: ``compile`` compiles the
    transformer with ``torch.compile`` in that mode (``reduce-overhead``: CUDA graphs);
    ``pad_to_multiple_of`` pads batches to width buckets (few shapes to compile);
    ``num_workers`` collates batches in that many DataLoader worker processes."""

    encoder: str = "bi"
    objective: str = "mse"
    pooling: str = "mean"
    combine: str = "hadamard"
    max_length: int = 256
    epochs: float = 4
    batch_size: int = 16
    learning_rate: float = 2e-5
    warmup: float = 0.1
    weight_decay: float = 0.01
    seed: int = 42
    max_steps: int = -1
    margin: float = 1.0
    skip_tied_groups: bool = False
    group_by_length: bool = True
    compile: str = "none"
    pad_to_multiple_of: int = 0
    num_workers: int = 0


COMPILE_MODES = ("none", "default", "reduce-overhead", "max-autotune")


@dataclass(frozen=True)
class PairData:
    """A loaded pair dataset: its splits, native score range and provenance for the card."""

    splits: datasets.DatasetDict
    score_range: tuple[float, float]
    name: str
    citation: str = ""


@dataclass(frozen=True)
class FitResult:
    """What one run measured: scores on ``eval_split`` (on the [0, 1] label scale), per-source
    Spearman, training size and speed."""

    output_dir: str
    eval_split: str | None
    pearson: float | None
    spearman: float | None
    mse: float | None
    per_source: dict[str, float] = field(default_factory=dict)
    train_pairs: int = 0
    train_seconds: float = 0.0
    pairs_per_second: float = 0.0
    n_skipped_ties: int = 0
    data: str = ""
    score_range: tuple[float, float] | None = None


def load_pairs(dataset: str, config: str = "default", *, score_range=None, mirror=None,
               data_dir=None, cache_dir=None, **builder_kwargs) -> PairData:
    """A registry dataset (``dataset_scripts.load``) or a ``save_to_disk`` folder (needs
    ``score_range``)."""
    if Path(dataset).is_dir():
        if score_range is None:
            raise ValueError(f"{dataset} is a folder: give its score range (--score-range LO HI)")
        return PairData(datasets.load_from_disk(dataset), tuple(score_range), f"{dataset}")
    import dataset_scripts

    spec = dataset_scripts.get_spec(dataset)
    splits = dataset_scripts.load(dataset, config, mirror=mirror, data_dir=data_dir,
                                  cache_dir=cache_dir, **builder_kwargs)
    return PairData(splits, spec.score_range, f"{dataset}/{config}",
                    spec.builder_class.CITATION)


def eval_split_name(splits: datasets.DatasetDict) -> str | None:
    """``validation`` when the dataset has one, else ``test``; ``None`` when it has neither (a
    final model trained on all the data is not evaluated)."""
    for name in ("validation", "test"):
        if name in splits:
            return name
    return None


def per_source_spearman(split: datasets.Dataset, predictions, labels) -> dict[str, float]:
    """Spearman ρ within each value of the split's ``source`` column (empty without one)."""
    if "source" not in split.column_names:
        return {}
    sources = np.asarray(split["source"], dtype=object)
    return {s: similarity_scores(predictions[sources == s], labels[sources == s]).spearman
            for s in sorted(set(sources.tolist())) if (sources == s).sum() >= 2}


def fit(data: PairData, model_path: str | os.PathLike, output_dir: str | os.PathLike,
        options: FitOptions = FitOptions(), *, resume_from_checkpoint: str | bool | None = None,
        save_steps: int | None = None, callbacks=None, **argument_overrides) -> FitResult:
    """Train ``options.encoder`` from the transformer at ``model_path`` on the ``train`` split,
    evaluate on :func:`eval_split_name`, save model + model card + ``metrics.json`` in
    ``output_dir`` (checkpoints, when ``save_steps`` is set, in ``output_dir/checkpoints``)."""
    output_dir = Path(output_dir)
    eval_name = eval_split_name(data.splits)
    train_name = f"{data.name}/train"
    train = prepare_pairs(data.splits["train"], data.score_range, where=train_name)
    if "train" not in data.splits:
        raise ValueError(f"{data.name} has no train split (splits: {list(data.splits)})")
    conditional = "condition" in train.column_names
    model_options = {"pooling": options.pooling, "conditional": conditional,
                     "max_length": options.max_length}
    if options.encoder == "tri":
        model_options["combine"] = options.combine
    model = build_model(options.encoder, model_path, seed=options.seed, **model_options)
    if options.compile not in COMPILE_MODES:
        raise ValueError(f"compile must be one of {COMPILE_MODES}, got {options.compile!r}")
    if options.compile != "none":  # in place: state-dict keys and saving stay as they are
        model.encoder.compile(mode=None if options.compile == "default" else options.compile,
                              dynamic=not options.pad_to_multiple_of)
    train = pretokenize_pairs(train, model)
    saving = {"save_strategy": "steps", "save_steps": save_steps} if save_steps else {}
    args = training_arguments(
        str(output_dir / "checkpoints"), epochs=options.epochs, batch_size=options.batch_size,
        learning_rate=options.learning_rate, warmup=options.warmup,
        weight_decay=options.weight_decay, seed=options.seed, max_steps=options.max_steps,
        dataloader_num_workers=options.num_workers,
        dataloader_persistent_workers=options.num_workers > 0, **saving, **argument_overrides)
    trainer = PairTrainer(model, args, objective=options.objective, margin=options.margin,
                          skip_tied_groups=options.skip_tied_groups,
                          group_by_length=options.group_by_length, train_name=train_name,
                          pad_to_multiple_of=options.pad_to_multiple_of,
                          train_dataset=train, callbacks=callbacks)
    train_output = trainer.train(resume_from_checkpoint=resume_from_checkpoint)
    seconds = float(train_output.metrics["train_runtime"])
    pairs_trained = (len(train) * float(args.num_train_epochs) if args.max_steps <= 0
                     else args.max_steps * args.train_batch_size * args.world_size)
    scores, per_source = SimilarityScores(None, None, None), {}
    if eval_name is not None:
        evaluation = pretokenize_pairs(prepare_pairs(
            data.splits[eval_name], data.score_range, where=f"{data.name}/{eval_name}"), model)
        predictions = np.asarray(trainer.predict(evaluation).predictions,
                                 dtype=np.float64).reshape(-1)
        labels = np.asarray(evaluation["labels"], dtype=np.float64)
        scores = similarity_scores(predictions, labels)
        per_source = per_source_spearman(data.splits[eval_name], predictions, labels)
    result = FitResult(
        output_dir=str(output_dir), eval_split=eval_name, pearson=scores.pearson,
        spearman=scores.spearman, mse=scores.mse, per_source=per_source,
        train_pairs=len(train), train_seconds=seconds,
        pairs_per_second=pairs_trained / seconds,
        n_skipped_ties=trainer.n_skipped_ties, data=data.name, score_range=data.score_range)
    if trainer.is_world_process_zero():
        model.save_pretrained(output_dir)
        (output_dir / "metrics.json").write_text(json.dumps(asdict(result), indent=2))
        if eval_name is not None:
            write_eval_predictions(output_dir, data, eval_name, predictions, labels, model)
        write_model_card(output_dir, model=model, data=data, options=options, result=result,
                         log_history=trainer.state.log_history,
                         base_model=known_base_model(model_path))
    return result


def write_eval_predictions(output_dir: Path, data: PairData, split: str, predictions, labels,
                           model: PairEncoder) -> Path:
    """``eval_predictions.json`` beside a trained model: its scores on the evaluated split (label
    scale [0, 1], row order, with the rows' ``pair_id`` when the split has one), the gold labels
    and what an ensemble must check before combining runs (data, split, score range, kind)."""
    rows = data.splits[split]
    ids = list(rows["pair_id"]) if "pair_id" in rows.column_names else list(range(len(rows)))
    path = output_dir / PREDICTIONS_FILE
    path.write_text(json.dumps({
        "data": data.name, "split": split, "score_range": list(data.score_range),
        "encoder": model.kind, "conditional": model.conditional, "ids": ids,
        "predictions": [float(p) for p in predictions], "labels": [float(y) for y in labels],
        "sources": list(rows["source"]) if "source" in rows.column_names else None}))
    return path


def cross_validate(dataset: str, family: str, model_path, output_dir, options=FitOptions(),
                   **load_kwargs) -> dict[str, FitResult]:
    """:func:`fit` on every config of a family (``cv``: ``cv-fold-*``; ``lodo``: ``lodo-*``)."""
    import dataset_scripts

    if family not in FAMILIES:
        raise ValueError(f"family must be one of {list(FAMILIES)}, got {family!r}")
    configs = [c for c in dataset_scripts.get_spec(dataset).configs
               if c.startswith(FAMILIES[family])]
    if not configs:
        raise ValueError(f"{dataset} has no {family} configs ({FAMILIES[family]}*)")
    return {config: fit(load_pairs(dataset, config, **load_kwargs), model_path,
                        Path(output_dir) / config, options)
            for config in configs}


def parse_member(spec: str, defaults: FitOptions = FitOptions()) -> tuple[str, str, FitOptions]:
    """``ENCODER@MODEL[,option=value...]`` (e.g. ``cross@mpnet,learning_rate=3e-5``) -> (name
    for its folder, model name or path, options = ``defaults`` with the encoder and overrides)."""
    head, *overrides = spec.split(",")
    encoder, at, model = head.partition("@")
    if not at or not encoder or not model:
        raise ValueError(f"member {spec!r}: expected ENCODER@MODEL[,option=value...], e.g. "
                         "bi@mpnet or cross@minilm,learning_rate=3e-5")
    types = {f.name: type(getattr(defaults, f.name)) for f in fields(FitOptions)}
    values = {"encoder": encoder}
    for item in overrides:
        key, eq, value = item.partition("=")
        if not eq or key not in types:
            raise ValueError(f"member {spec!r}: {item!r} is not option=value with an option of "
                             f"{sorted(types)}")
        kind = types[key]
        values[key] = (value.lower() in ("1", "true", "yes")) if kind is bool else kind(value)
    name = "".join(c if c.isalnum() or c in "-_.=" else "_" for c in spec.replace("@", "-"))
    return name, model, replace(defaults, **values)


def cross_validate_members(dataset: str, family: str, members: list[tuple[str, str, FitOptions]],
                           output_dir, **load_kwargs):
    """:func:`cross_validate` of each member ``(name, model path, options)`` into
    ``output_dir/<name>``, then their ensembles per fold (:func:`trainers.ensemble.cv_ensemble`:
    rank average, and a stack fit on the other folds' out-of-fold predictions)."""
    results = {name: cross_validate(dataset, family, model, Path(output_dir) / name, options,
                                    **load_kwargs)
               for name, model, options in members}
    runs = {name: {config: load_run(r.output_dir) for config, r in folds.items()}
            for name, folds in results.items()}
    return results, cv_ensemble(runs)


def mean_scores(results: dict[str, FitResult]) -> tuple[float, dict[str, float]]:
    """Mean Spearman over folds, and per source the mean over the folds that score it."""
    overall = float(np.mean([r.spearman for r in results.values()]))
    sources = sorted({s for r in results.values() for s in r.per_source})
    per_source = {s: float(np.mean([r.per_source[s] for r in results.values()
                                    if s in r.per_source])) for s in sources}
    return overall, per_source


def predict(model_path, data: PairData, split: str = "test", *,
            batch_size: int = 64) -> np.ndarray:
    """Predictions for every row of ``split`` on the dataset's native scale, in row order."""
    rows = prepare_pairs(data.splits[split], data.score_range, where=f"{data.name}/{split}",
                         labelled=False)
    if (Path(model_path) / ENSEMBLE_FILE).is_file():
        model = Ensemble.load(model_path)
    else:
        model = PairEncoder.from_pretrained(model_path)
    condition = rows["condition"] if model.conditional else None
    scores = model.predict(rows["sentence1"], rows["sentence2"], condition, batch_size=batch_size)
    return unscale(scores, data.score_range)


def write_submission(predictions: np.ndarray, path: str | os.PathLike) -> Path:
    """The C-STS submission file: a JSON object ``{"0": float, ..., "n-1": float}`` by row."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({str(i): float(p) for i, p in enumerate(predictions)}))
    return path
