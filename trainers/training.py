"""Runs: fit one split, cross-validate over a family of configs, predict a split.

Everything here works on any dataset with the shared pair schema: a ``dataset_scripts``
registry id (its ``score_range`` gives the label scale) or a ``DatasetDict.save_to_disk`` folder
with an explicit ``score_range``. Per-source Spearman is reported when the evaluated split has a
``source`` column.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

import datasets
import numpy as np

from semrel.dataset_scripts.pretrained import known_base_model

from .card import write_model_card
from .data import prepare_pairs, pretokenize_pairs, unscale
from .ensemble import ENSEMBLE_FILE, PREDICTIONS_FILE, Ensemble, cv_ensemble, load_run
from .losses import LOSSES
from .models import MODEL_CLASSES, PairEncoder, build_model
from .options import FitOptions, check_score_range, check_save_steps, stored_options
from .trainer import (EpochClock, PairTrainer, SimilarityResult, precision_used,
                      similarity_scores, training_arguments)

FAMILIES = {"cv": "cv-fold-", "lodo": "lodo-"}
# the run's fingerprint (what --resume and --overwrite check); beside the checkpoints, which stay
# local (publishing skips checkpoints/), since it names the local starting-model path
RUN_FILE = "checkpoints/semrel_run.json"


@dataclass(frozen=True)
class PairData:
    """A loaded pair dataset: its splits, native score range and provenance for the card
    (``citation``: the data's BibTeX; ``hub_id``: its Hub dataset id where it has one)."""

    splits: datasets.DatasetDict
    score_range: tuple[float, float]
    name: str
    citation: str = ""
    language: tuple[str, ...] = ()
    hub_id: str | None = None


@dataclass(frozen=True)
class FitResult:
    """What one run measured: scores on ``eval_split`` (on the [0, 1] label scale), per-source
    Spearman, training size and speed (pairs/s over the steps trained in this process, so a
    resumed run counts only what it trained after resuming; the seconds of each epoch trained)."""

    output_dir: str
    eval_split: str | None
    pearson: float | None
    spearman: float | None
    mse: float | None
    per_source: dict[str, float] = field(default_factory=dict)
    train_pairs: int = 0
    train_seconds: float = 0.0
    pairs_per_second: float = 0.0
    n_omitted_groups: int = 0
    data: str = ""
    score_range: tuple[float, float] | None = None
    precision: str = ""
    epoch_seconds: list[float] = field(default_factory=list)


def load_pairs(dataset: str, config: str = "default", *, score_range=None, mirror=None,
               data_dir=None, cache_dir=None, **builder_kwargs) -> PairData:
    """A registry dataset (``dataset_scripts.load``; its own score range, so ``score_range`` is
    refused) or a ``save_to_disk`` folder (needs ``score_range``)."""
    if data_dir is not None and not Path(data_dir).expanduser().is_dir():
        raise FileNotFoundError(f"--data-dir {data_dir}: no such folder")
    if Path(dataset).is_dir():
        if score_range is None:
            raise ValueError(f"{dataset} is a folder: give its score range (--score-range LO HI)")
        return PairData(datasets.load_from_disk(dataset), check_score_range(score_range),
                        f"{dataset}")
    import semrel.dataset_scripts
    from semrel.dataset_scripts.registry import REGISTRY

    if dataset not in REGISTRY:
        raise ValueError(f"--dataset {dataset}: neither a folder nor a known dataset id "
                         f"({', '.join(sorted(REGISTRY))})")
    spec = REGISTRY[dataset]
    if config not in spec.configs:
        raise ValueError(f"--config {config}: {dataset} has the configs "
                         f"{', '.join(spec.configs)}")
    if score_range is not None:
        raise ValueError(f"--score-range: {dataset} declares its own score range "
                         f"{list(spec.score_range)}; --score-range is for folder datasets only")
    splits = semrel.dataset_scripts.load(dataset, config, mirror=mirror, data_dir=data_dir,
                                  cache_dir=cache_dir, **builder_kwargs)
    builder = spec.builder_class
    return PairData(splits, spec.score_range, f"{dataset}/{config}", builder.CITATION,
                    tuple(getattr(builder, "LANGUAGES", ()) or ()),
                    getattr(builder, "HUB_ID", None))


def run_fingerprint(data: PairData, model_path, options: FitOptions) -> dict:
    """What makes two runs the same run: data, starting model, options."""
    return {"data": data.name, "model": str(model_path), "options": asdict(options)}


def holds_run(folder: Path) -> bool:
    return (folder / RUN_FILE).is_file() or (folder / "semrel_encoder.json").is_file()


def check_output(output_dir: Path, run: dict, *, resume: bool, overwrite: bool) -> None:
    """Refuse an ``output_dir`` that ``run`` may not use: a non-empty folder holding no run
    (never cleared), a folder holding a run without ``overwrite`` (or, with ``resume``, holding
    another run: a different fingerprint), a file."""
    if resume and overwrite:
        raise ValueError("--resume and --overwrite exclude each other")
    if output_dir.exists() and not output_dir.is_dir():
        raise ValueError(f"--output {output_dir}: is a file, not a folder")
    if not (output_dir.is_dir() and any(output_dir.iterdir())):
        return
    if not holds_run(output_dir):
        raise ValueError(f"--output {output_dir}: not empty and holds no run of "
                         "semrel; choose an empty or new folder")
    if resume:
        saved = (json.loads((output_dir / RUN_FILE).read_text())
                 if (output_dir / RUN_FILE).is_file() else None)
        if saved and isinstance(saved.get("options"), dict):
            saved["options"] = stored_options(saved["options"])
        if saved != run:
            raise ValueError(f"--resume: {output_dir} holds another run (data, model or "
                             "options differ); resume only continues the same run")
    elif not overwrite:
        raise ValueError(f"--output {output_dir} already holds a run; pass --overwrite to "
                         "replace it (or --resume last to continue the same run)")


def prepare_output(output_dir: Path, run: dict, *, resume: bool, overwrite: bool) -> None:
    """After :func:`check_output`: clear a held run with ``overwrite``, then write ``run``'s
    fingerprint (``semrel_run.json``)."""
    check_output(output_dir, run, resume=resume, overwrite=overwrite)
    if overwrite and output_dir.is_dir():
        shutil.rmtree(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    (output_dir / RUN_FILE).parent.mkdir(exist_ok=True)
    (output_dir / RUN_FILE).write_text(json.dumps(run, indent=2))


def last_complete_checkpoint(folder: Path) -> Path:
    """The highest ``checkpoint-N`` in ``folder`` whose ``trainer_state.json`` exists
    (transformers writes it last, so a checkpoint cut off while written has none)."""
    complete = [p for p in folder.glob("checkpoint-*")
                if p.name.split("-")[-1].isdigit() and (p / "trainer_state.json").is_file()]
    if not complete:
        raise ValueError(f"--resume last: no complete checkpoint in {folder}")
    return max(complete, key=lambda p: int(p.name.split("-")[-1]))


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


def compile_encoder(model: PairEncoder, options: FitOptions) -> None:
    """``torch.compile`` the model's transformer in place when ``options.compile`` asks for it
    (state-dict keys and saving stay as they are); shapes are static with width buckets
    (``pad_to_multiple_of``), dynamic otherwise."""
    if options.compile != "none":
        model.encoder.compile(mode=None if options.compile == "default" else options.compile,
                              dynamic=not options.pad_to_multiple_of)


def fit(data: PairData, model_path: str | os.PathLike, output_dir: str | os.PathLike,
        options: FitOptions = FitOptions(), *, resume_from_checkpoint: str | bool | None = None,
        save_steps: int | None = None, overwrite: bool = False, callbacks=None,
        **argument_overrides) -> FitResult:
    """Train ``options.encoder`` from the transformer at ``model_path`` on the ``train`` split,
    evaluate on :func:`eval_split_name`, save model + model card + ``metrics.json`` in
    ``output_dir`` (checkpoints, when ``save_steps`` is set, in ``output_dir/checkpoints``).

    ``output_dir`` must be new or empty, or hold a run: the same run to resume
    (``resume_from_checkpoint=True`` picks its last complete checkpoint), or any run with
    ``overwrite=True`` (cleared first); see :func:`prepare_output`.
    """
    output_dir = Path(output_dir)
    if options.encoder not in MODEL_CLASSES:
        raise ValueError(f"--encoder {options.encoder}: must be one of {tuple(MODEL_CLASSES)}")
    if options.objective not in LOSSES:
        raise ValueError(f"--objective {options.objective}: must be one of {tuple(LOSSES)}")
    check_save_steps(save_steps)
    if not Path(model_path).is_dir():
        raise FileNotFoundError(f"--model {model_path}: no such model folder")
    run = run_fingerprint(data, model_path, options)
    main_process = int(os.environ.get("RANK", "0")) == 0  # torchrun: one process owns the folder
    if main_process:
        check_output(output_dir, run, resume=bool(resume_from_checkpoint), overwrite=overwrite)
    if "train" not in data.splits:
        raise ValueError(f"{data.name}: no train split to fit on (splits: {list(data.splits)})")
    eval_name = eval_split_name(data.splits)
    train_name = f"{data.name}/train"
    train = prepare_pairs(data.splits["train"], data.score_range, where=train_name)
    conditional = "condition" in train.column_names
    model_class = MODEL_CLASSES[options.encoder]
    model_options = {name: getattr(options, name) for name in model_class.fit_options}
    model = build_model(options.encoder, model_path, seed=options.seed, conditional=conditional,
                        **model_options)
    compile_encoder(model, options)
    train = pretokenize_pairs(train, model)
    checkpoints = output_dir / "checkpoints"
    if main_process:
        prepare_output(output_dir, run, resume=bool(resume_from_checkpoint),
                       overwrite=overwrite)
    start_step = 0
    if resume_from_checkpoint is True:
        resume_from_checkpoint = str(last_complete_checkpoint(checkpoints))
    if resume_from_checkpoint:
        state = Path(resume_from_checkpoint) / "trainer_state.json"
        if not state.is_file():
            raise ValueError(f"--resume {resume_from_checkpoint}: not a complete checkpoint "
                             "(no trainer_state.json)")
        start_step = int(json.loads(state.read_text())["global_step"])
    saving = {"save_strategy": "steps", "save_steps": save_steps} if save_steps else {}
    args = training_arguments(
        str(checkpoints), epochs=options.epochs, batch_size=options.batch_size,
        learning_rate=options.learning_rate, warmup=options.warmup,
        weight_decay=options.weight_decay, seed=options.seed, max_steps=options.max_steps,
        precision=options.precision, dataloader_num_workers=options.num_workers,
        dataloader_persistent_workers=options.num_workers > 0, **saving, **argument_overrides)
    clock = EpochClock()
    trainer = PairTrainer(model, args, objective=options.objective, margin=options.margin,
                          on_invalid=options.on_invalid,
                          group_by_length=options.group_by_length, train_name=train_name,
                          pad_to_multiple_of=options.pad_to_multiple_of,
                          train_dataset=train, callbacks=[clock, *(callbacks or [])])
    train_output = trainer.train(resume_from_checkpoint=resume_from_checkpoint)
    scores, per_source = SimilarityResult(None, None, None), {}
    if eval_name is not None:
        evaluation = pretokenize_pairs(prepare_pairs(
            data.splits[eval_name], data.score_range, where=f"{data.name}/{eval_name}"), model)
        predictions = np.asarray(trainer.predict(evaluation).predictions,
                                 dtype=np.float64).reshape(-1)
        labels = np.asarray(evaluation["labels"], dtype=np.float64)
        scores = similarity_scores(predictions, labels)
        per_source = per_source_spearman(data.splits[eval_name], predictions, labels)
    seconds = float(train_output.metrics["train_runtime"])
    pairs_all_steps = (len(train) * float(args.num_train_epochs) if args.max_steps <= 0
                       else args.max_steps * args.train_batch_size * args.world_size)
    steps = trainer.state.global_step
    pairs_here = pairs_all_steps * (steps - start_step) / steps if steps else 0.0
    result = FitResult(
        output_dir=str(output_dir), eval_split=eval_name, pearson=scores.pearson,
        spearman=scores.spearman, mse=scores.mse, per_source=per_source,
        train_pairs=len(train), train_seconds=seconds,
        pairs_per_second=pairs_here / seconds if seconds > 0 else 0.0,
        n_omitted_groups=trainer.n_omitted_groups, data=data.name,
        score_range=data.score_range, precision=precision_used(args),
        epoch_seconds=clock.seconds)
    if trainer.is_world_process_zero():
        model.save_pretrained(output_dir)
        (output_dir / "metrics.json").write_text(json.dumps(asdict(result), indent=2,
                                                            allow_nan=False))
        if eval_name is not None:
            write_eval_predictions(output_dir, data, eval_name, predictions, labels, model)
        write_model_card(output_dir, model=model, data=data, options=options, result=result,
                         log_history=trainer.state.log_history,
                         base_model=known_base_model(model_path))
    return result


def cross_validate(dataset: str, family: str, model_path, output_dir, options=FitOptions(), *,
                   overwrite: bool = False, **load_kwargs) -> dict[str, FitResult]:
    """:func:`fit` on every config of a family (``cv``: ``cv-fold-*``; ``lodo``: ``lodo-*``),
    each into ``output_dir/<config>``; ``output_dir`` follows :func:`prepare_output`'s rules."""
    from semrel.dataset_scripts.registry import REGISTRY

    if family not in FAMILIES:
        raise ValueError(f"--family {family}: must be one of {list(FAMILIES)}")
    if dataset not in REGISTRY:
        raise ValueError(f"--dataset {dataset}: not a known dataset id "
                         f"({', '.join(sorted(REGISTRY))})")
    configs = [c for c in REGISTRY[dataset].configs if c.startswith(FAMILIES[family])]
    if not configs:
        raise ValueError(f"{dataset} has no {family} configs ({FAMILIES[family]}*)")
    output_dir = Path(output_dir)
    run = {"cv": family, "data": dataset, "model": str(model_path), "options": asdict(options)}
    prepare_output(output_dir, run, resume=False, overwrite=overwrite)
    return {config: fit(load_pairs(dataset, config, **load_kwargs), model_path,
                        output_dir / config, options)
            for config in configs}


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
                           output_dir, *, overwrite: bool = False, **load_kwargs):
    """:func:`cross_validate` of each member ``(name, model path, options)`` into
    ``output_dir/<name>``, then their ensembles per fold (:func:`trainers.ensemble.cv_ensemble`:
    rank average and stack, both taking the other folds' out-of-fold predictions)."""
    results = {name: cross_validate(dataset, family, model, Path(output_dir) / name, options,
                                    overwrite=overwrite, **load_kwargs)
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
    """Predictions for every row of ``split`` on the dataset's native scale, in row order.
    An unconditional model on conditional data is an error (it would ignore the conditions)."""
    if (Path(model_path) / ENSEMBLE_FILE).is_file():
        model = Ensemble.load(model_path)
    else:
        model = PairEncoder.from_pretrained(model_path)
    if split not in data.splits:
        raise ValueError(f"--split {split}: {data.name} has the splits {list(data.splits)}")
    rows = prepare_pairs(data.splits[split], data.score_range, where=f"{data.name}/{split}",
                         labelled=False)
    if "condition" in rows.column_names and not model.conditional:
        what = f"{model.kind}-encoder" if isinstance(model, PairEncoder) else "ensemble"
        raise ValueError(f"--model {model_path}: an unconditional {what} cannot "
                         f"score {data.name}, whose pairs have conditions (it would ignore them)")
    condition = rows["condition"] if model.conditional else None
    scores = model.predict(rows["sentence1"], rows["sentence2"], condition, batch_size=batch_size)
    return unscale(scores, data.score_range)


def write_submission(predictions: np.ndarray, path: str | os.PathLike) -> Path:
    """The C-STS submission file: a JSON object ``{"0": float, ..., "n-1": float}`` by row."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({str(i): float(p) for i, p in enumerate(predictions)}))
    return path
