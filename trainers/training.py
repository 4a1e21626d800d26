"""Runs: fit one split, cross-validate over a family of configs, predict a split.

Everything here works on any dataset with the shared pair schema (:func:`load_pairs`): a
``dataset_scripts`` registry id (its ``score_range`` gives the label scale), a
``DatasetDict.save_to_disk`` folder, a Hub-layout folder (Parquet + README ``configs:``, as
``semrel build`` exports), a Hub dataset id, or a ``datasets.DatasetDict``. Per-source Spearman
is reported when the evaluated split has a ``source`` column. Training arguments are
:class:`~trainers.arguments.PairTrainingArguments`.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import re
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path

import datasets
import numpy as np

from semrel.dataset_scripts.pretrained import known_base_model
from semrel.metrics.correlation_intervals import cv_mean_interval, pearson_interval, spearman_interval
from semrel.metrics.errors import DataValidationError, MissingPathError, ParameterError
from semrel.metrics.submission import IdScores, evaluate, format_predictions

from .arguments import PairTrainingArguments, precision_used, recorded_options, stored_options
from .card import write_model_card
from .data import prepare_pairs, pretokenize_pairs, unscale
from .ensemble import ENSEMBLE_FILE, PREDICTIONS_FILE, Ensemble, cv_ensemble, load_run
from .folders import check_run_folder, recorded_score_range, write_text_whole
from .models import PairEncoder, build_model
from .options import CV_FAMILIES as FAMILIES
from .options import OPTIONS, check_score_range
from .selection import DevSplit, check_selection, selection_record, write_dev_predictions
from .stacking import ID_COLUMNS
from .trainer import EpochClock, PairTrainer, SimilarityResult, similarity_scores

# the run's fingerprint (what resuming and overwriting check); beside the checkpoints, which stay
# local (publishing skips checkpoints/), since it names the local starting-model path
RUN_FILE = "checkpoints/semrel_run.json"
log = logging.getLogger(__name__)
HUB_ID = re.compile(r"^[\w.-]+/[\w.-]+$")  # namespace/name


@dataclass(frozen=True)
class PairData:
    """A loaded pair dataset: its splits, native score range and provenance for the card
    (``name``: what records call it; ``config``: its config, where it has one; ``citation``: the
    data's BibTeX; ``hub_id``: its Hub dataset id where it has one)."""

    splits: datasets.DatasetDict
    score_range: tuple[float, float]
    name: str
    citation: str = ""
    language: tuple[str, ...] = ()
    hub_id: str | None = None
    config: str | None = None


@dataclass(frozen=True)
class FitResult:
    """What one run measured: scores on ``eval_split`` (on the [0, 1] label scale), per-source
    Spearman, training size and speed (pairs/s over the steps trained in this process, so a
    resumed run counts only what it trained after resuming; the seconds of each epoch trained)
    and the options it ran with (:func:`~trainers.arguments.recorded_options`). ``metrics.json``
    writes a figure that is undefined (NaN: e.g. Spearman of constant predictions) as null."""

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


@dataclass(frozen=True)
class _Source:
    """Where a dataset argument points: ``kind`` registry | disk (``save_to_disk``) | folder
    (Hub layout) | hub; its declared configs and card (folder, hub) when it has them."""

    kind: str
    where: str
    configs: tuple[str, ...] = ()
    card: object = None


def _card_configs(card) -> tuple[str, ...]:
    configs = (card.data.get("configs") or []) if card else []
    return tuple(c["config_name"] for c in configs)


def _resolve(dataset: str) -> _Source:
    """What ``dataset`` names, tried in this order: a registry id, a folder (``save_to_disk``
    or Hub layout), a Hub dataset id ``namespace/name``; a ParameterError naming what was tried
    otherwise."""
    from huggingface_hub import DatasetCard
    from huggingface_hub.errors import RemoteEntryNotFoundError

    from semrel.dataset_scripts.registry import REGISTRY

    if dataset in REGISTRY:
        return _Source("registry", dataset, tuple(REGISTRY[dataset].configs))
    path = Path(dataset).expanduser()
    tried = f"not a registry id ({', '.join(sorted(REGISTRY))})"
    if path.is_dir():
        if (path / "dataset_dict.json").is_file():
            return _Source("disk", str(path))
        if (path / "state.json").is_file():
            raise ParameterError("dataset", dataset, "is a save_to_disk folder of one Dataset; "
                                 "a DatasetDict (with a train split) is needed")
        card = DatasetCard.load(path / "README.md") if (path / "README.md").is_file() else None
        return _Source("folder", str(path), _card_configs(card), card)
    if path.exists():
        raise ParameterError("dataset", dataset, f"{tried}, and a file, not a folder")
    if not HUB_ID.match(dataset):
        raise ParameterError("dataset", dataset, f"{tried}, no folder, and not a Hub dataset id "
                             "(namespace/name)")
    try:
        card = DatasetCard.load(dataset, repo_type="dataset")
    except RemoteEntryNotFoundError:  # a Hub dataset without a card
        card = None
    except Exception as exc:  # offline, unknown repo, no access: say what was tried
        raise ParameterError("dataset", dataset, f"{tried}, no folder, and the Hub dataset could "
                             f"not be read ({_first_line(exc)})") from None
    return _Source("hub", dataset, _card_configs(card), card)


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


def dataset_configs(dataset: str) -> tuple[str, ...]:
    """The configs ``dataset`` declares (registry spec or dataset card); empty when it declares
    none (a ``save_to_disk`` folder, a folder or Hub dataset without ``configs:``)."""
    return _resolve(dataset).configs


def _recorded_range(card, score_range, where: str) -> tuple[float, float]:
    """The score range a dataset card records (``score_range: [lo, hi]``), else the given one."""
    recorded = card.data.get("score_range") if card else None
    if recorded is None:
        if score_range is None:
            raise ParameterError("score_range", None, f"must be given: {where} records no score "
                                 "range (score_range: [lo, hi] in its card)")
        return check_score_range(score_range)
    recorded = check_score_range(recorded)
    if score_range is not None and check_score_range(score_range) != recorded:
        raise ParameterError("score_range", list(score_range), f"differs from the score range "
                             f"{list(recorded)} that {where} records; leave it out")
    return recorded


def _card_citation(card) -> str:
    match = re.search(r"```bibtex\n(.*?)```", card.text, re.S) if card else None
    return match[1].strip() if match else ""


def load_pairs(dataset, config: str = "default", *, score_range=None, mirror=None,
               data_dir=None, cache_dir=None, **builder_kwargs) -> PairData:
    """``dataset`` as :class:`PairData`, whatever form it takes:

    * a registry id (``str-2021``, ``c-sts``, ...): ``dataset_scripts.load`` with ``mirror``,
      ``data_dir``, ``cache_dir`` and builder options (``password``); its own score range;
    * a ``DatasetDict.save_to_disk`` folder, or a ``datasets.DatasetDict``: ``score_range``
      needed, no configs;
    * a Hub-layout folder (data files + README.md with YAML ``configs:``, as ``semrel build``
      exports) or a Hub dataset id ``namespace/name``: stock ``datasets.load_dataset(dataset,
      config)``; the score range its card records (``score_range: [lo, hi]``), else
      ``score_range``.

    A ``score_range`` that contradicts the data's own is an error; so are registry-only
    options given for other data. Errors name what was tried.
    """
    if data_dir is not None and not Path(data_dir).expanduser().is_dir():
        raise MissingPathError("data_dir", str(data_dir), "no such folder")
    if isinstance(dataset, datasets.DatasetDict):
        _registry_only(None, mirror=mirror, data_dir=data_dir, **builder_kwargs)
        first = next(iter(dataset.values()), None)
        name = (first.info.dataset_name if first is not None else None) or "DatasetDict"
        return PairData(dataset, _no_configs(config, score_range, "a DatasetDict"),
                        name if config == "default" else f"{name}/{config}")
    dataset = str(dataset)
    source = _resolve(dataset)
    if source.kind == "registry":
        return _registry_pairs(dataset, config, score_range, mirror=mirror, data_dir=data_dir,
                               cache_dir=cache_dir, **builder_kwargs)
    _registry_only(dataset, mirror=mirror, data_dir=data_dir, **builder_kwargs)
    if source.kind == "disk":
        return PairData(datasets.load_from_disk(source.where),
                        _no_configs(config, score_range, "a save_to_disk folder"), source.where)
    if source.configs and config not in source.configs:
        raise ParameterError("config", config, f"must be a config of {dataset}: "
                             f"{', '.join(source.configs)}")
    lo_hi = _recorded_range(source.card, score_range, dataset)
    name = config if source.configs or config != "default" else None
    try:
        splits = datasets.load_dataset(source.where, name, cache_dir=cache_dir)
    except Exception as exc:
        what = "folder" if source.kind == "folder" else "Hub dataset"
        raise ParameterError("dataset", dataset, f"is a {what} that datasets.load_dataset cannot "
                             f"read ({_first_line(exc)})") from None
    language = source.card.data.get("language") if source.card else None
    return PairData(splits, lo_hi, f"{dataset}/{config}", _card_citation(source.card),
                    tuple([language] if isinstance(language, str) else language or ()),
                    dataset if source.kind == "hub" else None, config)


def _no_configs(config: str, score_range, what: str) -> tuple[float, float]:
    if config != "default":
        raise ParameterError("config", config, f"must be 'default': {what} has no configs")
    if score_range is None:
        raise ParameterError("score_range", None, f"must be given for {what} (its native score "
                             "range, e.g. (0, 5))")
    return check_score_range(score_range)


def _registry_only(dataset, **options) -> None:
    """Registry-only options given for other data: an error naming the first one."""
    for name, value in options.items():
        if value is not None:
            raise ParameterError(name, value, "is for registry datasets only; "
                                 f"{dataset or 'a DatasetDict'} is not one")


def _registry_pairs(dataset, config, score_range, **load_kwargs) -> PairData:
    import semrel.dataset_scripts
    from semrel.dataset_scripts.registry import REGISTRY

    spec = REGISTRY[dataset]
    if config not in spec.configs:
        raise ParameterError("config", config, f"must be a config of {dataset}: "
                             f"{', '.join(spec.configs)}")
    if score_range is not None and check_score_range(score_range) != tuple(spec.score_range):
        raise ParameterError("score_range", list(score_range), f"differs from the score range "
                             f"{list(spec.score_range)} that {dataset} declares; leave it out")
    splits = semrel.dataset_scripts.load(dataset, config, **load_kwargs)
    return PairData(splits, spec.score_range, f"{dataset}/{config}", spec.citation, spec.languages,
                    spec.hub_id, config)


def run_fingerprint(data: PairData, model_path, args: PairTrainingArguments) -> dict:
    """What makes two runs the same run: data, starting model, recorded options."""
    return {"data": data.name, "model": str(model_path), "options": recorded_options(args)}


def holds_run(folder: Path) -> bool:
    return (folder / RUN_FILE).is_file() or (folder / "semrel_encoder.json").is_file()


def check_output(output_dir: Path, run: dict, *, resume=None, overwrite: bool = False) -> None:
    """Refuse an ``output_dir`` that ``run`` may not use: a non-empty folder holding no run
    (never cleared), a folder holding a run without ``overwrite`` (or, when resuming, holding
    another run: a different fingerprint), a file. ``resume``: the checkpoint to resume from
    (a folder, or True / ``"last"``), or None."""
    if resume and overwrite:
        raise ParameterError("overwrite", True, "excludes {resume_from_checkpoint}: overwriting "
                             "clears the run that resuming continues")
    if output_dir.exists() and not output_dir.is_dir():
        raise ParameterError("output_dir", str(output_dir), "is a file, not a folder")
    if not (output_dir.is_dir() and any(output_dir.iterdir())):
        return
    if not holds_run(output_dir):
        raise ParameterError("output_dir", str(output_dir), "is not empty and holds no run of "
                             "semrel; choose an empty or new folder")
    if resume:
        saved = (json.loads((output_dir / RUN_FILE).read_text())
                 if (output_dir / RUN_FILE).is_file() else None)
        if saved and isinstance(saved.get("options"), dict):
            saved["options"] = stored_options(saved["options"])
        if saved != run:
            raise ParameterError("resume_from_checkpoint", resume, f"{output_dir} holds another "
                                 "run (data, model or options differ); resuming only continues "
                                 "the same run")
    elif not overwrite:
        raise ParameterError("output_dir", str(output_dir), "already holds a run: set "
                             "{overwrite} to replace it, or {resume_from_checkpoint} to continue "
                             "the same run")


def prepare_output(output_dir: Path, run: dict, *, resume=None, overwrite: bool = False) -> None:
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
        raise ParameterError("resume_from_checkpoint", "last",
                             f"no complete checkpoint in {folder}")
    return max(complete, key=lambda p: int(p.name.split("-")[-1]))


def finite_or_null(value):
    """``value`` with every NaN or infinite float replaced by None (JSON null): a figure that is
    undefined, e.g. Spearman of constant predictions, is written as null, never as ``NaN``,
    which is not JSON."""
    if isinstance(value, float):
        return value if np.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_or_null(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite_or_null(v) for v in value]
    return value


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


def per_language_spearman(split: datasets.Dataset, predictions, labels) -> dict[str, float]:
    """The SemEval-2024 Task 1 evaluation of a split with a ``language`` column (semrel-2024):
    Spearman per language after aligning the predictions to the split's ``pair_id``
    (:func:`semrel.metrics.submission.evaluate`); empty without a ``language`` column, or with a
    warning when a language's Spearman is undefined (constant predictions)."""
    if "language" not in split.column_names:
        return {}
    ids = list(split["pair_id"]) if "pair_id" in split.column_names else list(range(len(split)))
    try:
        scores = evaluate(IdScores("predictions", ids, predictions), IdScores("labels", ids, labels),
                          list(split["language"]))
    except DataValidationError as exc:
        log.warning("per-language Spearman not computed: %s", exc)
        return {}
    return {language: score.spearman for language, score in scores.items()}


def _with_output(args: PairTrainingArguments, output_dir) -> PairTrainingArguments:
    """``args`` with another ``output_dir`` (a copy: the device fields stay as resolved)."""
    args = copy.copy(args)
    args.output_dir = str(output_dir)
    return args


def fit(data: PairData, model_path: str | os.PathLike, args: PairTrainingArguments, *,
        resume_from_checkpoint: str | bool | None = None, overwrite: bool = False,
        callbacks=None, eval_data: DevSplit | None = None) -> FitResult:
    """Train ``args.encoder`` from the transformer at ``model_path`` on the ``train`` split,
    evaluate on :func:`eval_split_name`, save model + model card + ``metrics.json`` in the run
    folder ``args.output_dir`` (the Trainer's checkpoints, e.g. with ``save_strategy="steps"``,
    in ``output_dir/checkpoints``).

    ``output_dir`` must be new or empty, or hold a run: the same run to resume
    (``resume_from_checkpoint``, else ``args.resume_from_checkpoint``: a checkpoint folder, or
    True / ``"last"`` for its last complete checkpoint), or any run with ``overwrite=True``
    (cleared first); see :func:`prepare_output`.

    ``eval_data`` (:func:`~trainers.selection.load_dev`): a dev split, of this or other data on
    the same score range, evaluated during training as ``args`` say
    (:func:`~trainers.selection.selection_arguments`: each epoch, the best checkpoint by a
    metric kept); the curve and the kept checkpoint go into ``selection`` of the result, the
    metrics and the card, the kept model's dev predictions into ``selection_predictions.json``.
    """
    if args.output_dir is None:
        raise ParameterError("output_dir", None, "must name the run folder")
    output_dir = Path(args.output_dir)
    resume = resume_from_checkpoint if resume_from_checkpoint is not None \
        else args.resume_from_checkpoint
    if not Path(model_path).is_dir():
        raise MissingPathError("model_path", str(model_path), "no such model folder")
    check_selection(data, eval_data, args)
    run = run_fingerprint(data, model_path, args)
    if eval_data is not None:
        run["eval_data"] = eval_data.name
    main_process = int(os.environ.get("RANK", "0")) == 0  # torchrun: one process owns the folder
    if main_process:
        check_output(output_dir, run, resume=resume, overwrite=overwrite)
    if "train" not in data.splits:
        raise ValueError(f"{data.name}: no train split to fit on (splits: {list(data.splits)})")
    eval_name = eval_split_name(data.splits)
    train_name = f"{data.name}/train"
    train = prepare_pairs(data.splits["train"], data.score_range, where=train_name)
    conditional = "condition" in train.column_names
    model = build_model(args.encoder, model_path, seed=args.seed, conditional=conditional,
                        **args.model_options())
    train = pretokenize_pairs(train, model)
    checkpoints = output_dir / "checkpoints"
    if main_process:
        prepare_output(output_dir, run, resume=resume, overwrite=overwrite)
    start_step = 0
    if resume is True or resume == "last":
        resume = str(last_complete_checkpoint(checkpoints))
    if resume:
        state = Path(resume) / "trainer_state.json"
        if not state.is_file():
            raise ParameterError("resume_from_checkpoint", resume, "is not a complete "
                                 "checkpoint (no trainer_state.json)")
        start_step = int(json.loads(state.read_text())["global_step"])
    dev_rows = None if eval_data is None else pretokenize_pairs(prepare_pairs(
        eval_data.rows, data.score_range, where=eval_data.name), model)
    clock = EpochClock()
    trainer = PairTrainer(model, _with_output(args, checkpoints), train_name=train_name,
                          train_dataset=train, eval_dataset=dev_rows,
                          callbacks=[clock, *(callbacks or [])])
    train_output = trainer.train(resume_from_checkpoint=resume or None)
    selection = {} if eval_data is None else selection_record(trainer.state, eval_data,
                                                              trainer.args)
    scores, per_source, per_language = SimilarityResult(None, None, None), {}, {}
    if eval_name is not None:
        evaluation = pretokenize_pairs(prepare_pairs(
            data.splits[eval_name], data.score_range, where=f"{data.name}/{eval_name}"), model)
        predictions = np.asarray(trainer.predict(evaluation).predictions,
                                 dtype=np.float64).reshape(-1)
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
        epoch_seconds=clock.seconds, options=run["options"], selection=selection)
    if eval_data is not None:  # the kept model's dev predictions (every process predicts)
        dev_predictions = np.asarray(trainer.predict(dev_rows).predictions,
                                     dtype=np.float64).reshape(-1)
    if trainer.is_world_process_zero():
        model.save_pretrained(output_dir)
        write_text_whole(output_dir / "metrics.json",  # renamed in whole: never truncated
                         json.dumps(finite_or_null(asdict(result)), indent=2, allow_nan=False),
                         "output_dir")
        if eval_name is not None:
            write_eval_predictions(output_dir, data, eval_name, predictions, labels, model)
        if eval_data is not None:
            write_dev_predictions(output_dir, eval_data, dev_predictions,
                                  np.asarray(dev_rows["labels"], dtype=np.float64), model)
        write_model_card(output_dir, model=model, data=data, options=result.options,
                         result=result, log_history=trainer.state.log_history,
                         base_model=known_base_model(model_path))
    return result


def cross_validate(dataset: str, family: str, model_path, args: PairTrainingArguments, *,
                   overwrite: bool = False, eval_data: DevSplit | None = None,
                   **load_kwargs) -> dict[str, FitResult]:
    """:func:`fit` on every config of a family (``cv``: ``cv-fold-*``; ``lodo``: ``lodo-*``) of
    ``dataset`` (:func:`dataset_configs`), each into ``args.output_dir/<config>`` (each fold
    choosing its checkpoint on ``eval_data`` when given); ``args.output_dir`` follows
    :func:`prepare_output`'s rules."""
    if family not in FAMILIES:
        raise ParameterError("family", family, f"must be one of {list(FAMILIES)}")
    configs = [c for c in dataset_configs(str(dataset)) if c.startswith(FAMILIES[family])]
    if not configs:
        raise ParameterError("family", family, f"{dataset} has no {family} configs "
                             f"({FAMILIES[family]}*)")
    if args.output_dir is None:
        raise ParameterError("output_dir", None, "must name the folder of the fold runs")
    output_dir = Path(args.output_dir)
    run = {"cv": family, "data": str(dataset), "model": str(model_path),
           "options": recorded_options(args)}
    if eval_data is not None:
        run["eval_data"] = eval_data.name
    prepare_output(output_dir, run, overwrite=overwrite)
    return {config: fit(load_pairs(dataset, config, **load_kwargs), model_path,
                        _with_output(args, output_dir / config), eval_data=eval_data)
            for config in configs}


def write_eval_predictions(output_dir: Path, data: PairData, split: str, predictions, labels,
                           model: PairEncoder) -> Path:
    """``eval_predictions.json`` beside a trained model: its scores on the evaluated split (label
    scale [0, 1], row order, with the rows' ``pair_id`` when the split has one), the gold labels
    and what an ensemble must check before combining runs (data, split, score range, kind)."""
    rows = data.splits[split]
    ids = list(rows["pair_id"]) if "pair_id" in rows.column_names else list(range(len(rows)))
    path = output_dir / PREDICTIONS_FILE
    write_text_whole(path, json.dumps({
        "data": data.name, "split": split, "score_range": list(data.score_range),
        "encoder": model.kind, "conditional": model.conditional, "ids": ids,
        "predictions": [float(p) for p in predictions], "labels": [float(y) for y in labels],
        "sources": list(rows["source"]) if "source" in rows.column_names else None}),
        "output_dir")
    return path


def parse_member(spec: str) -> tuple[str, str, dict]:
    """``ENCODER@MODEL[,option=value...]`` (e.g. ``cross@mpnet,learning_rate=3e-5``; options
    by their recorded names, :data:`~trainers.options.OPTIONS`) -> (name for its folder, model
    name or path, ``PairTrainingArguments`` keyword arguments it sets)."""
    head, *overrides = spec.split(",")
    encoder, at, model = head.partition("@")
    if not at or not encoder or not model:
        raise ParameterError("member", spec, "must be ENCODER@MODEL[,option=value...], e.g. "
                             "bi@mpnet or cross@minilm,learning_rate=3e-5")
    options = {o.name: o for o in OPTIONS}
    values = {"encoder": encoder}
    for item in overrides:
        key, eq, value = item.partition("=")
        if not eq or key not in options:
            raise ParameterError("member", spec, f"{item!r} is not option=value with an option "
                                 f"of {sorted(options)}")
        option = options[key]
        kind = type(option.default)
        try:
            typed = (value.lower() in ("1", "true", "yes")) if kind is bool else kind(value)
        except ValueError:
            raise ParameterError("member", spec, f"{key}={value!r} is not a {kind.__name__}"
                                 ) from None
        values[option.argument] = option.to_argument(typed)
    name = "".join(c if c.isalnum() or c in "-_.=" else "_" for c in spec.replace("@", "-"))
    return name, model, values


def cross_validate_members(dataset: str, family: str,
                           members: list[tuple[str, str, PairTrainingArguments]], *,
                           overwrite: bool = False, eval_data: DevSplit | None = None,
                           **load_kwargs):
    """:func:`cross_validate` of each member ``(name, model path, arguments)`` into its
    ``args.output_dir``, then their ensembles per fold (:func:`trainers.ensemble.cv_ensemble`:
    rank average and stack, both taking the other folds' out-of-fold predictions)."""
    results = {name: cross_validate(dataset, family, model, args, overwrite=overwrite,
                                    eval_data=eval_data, **load_kwargs)
               for name, model, args in members}
    runs = {name: {config: load_run(r.output_dir) for config, r in folds.items()}
            for name, folds in results.items()}
    return results, cv_ensemble(runs)


def eval_intervals(predictions, labels, confidence: float = 0.95) -> dict:
    """``spearman_ci`` (seeded paired bootstrap, 1,000 resamples) and ``pearson_ci`` (Fisher z) of a
    run's evaluation, from :mod:`semrel.metrics.correlation_intervals`; both None where the
    evaluation has too few rows for them (< 8) or constant scores."""
    try:
        rho, r = spearman_interval(predictions, labels, confidence), pearson_interval(predictions, labels, confidence)
    except ValueError:
        return {"spearman_ci": None, "pearson_ci": None}
    return {"spearman_ci": [rho.interval.low, rho.interval.high], "pearson_ci": [r.interval.low, r.interval.high]}


def mean_interval(results: dict[str, FitResult], confidence: float = 0.95) -> list[float] | None:
    """Interval for the mean Spearman over CV folds: the corrected resampled t of Nadeau & Bengio
    (:func:`~semrel.metrics.correlation_intervals.cv_mean_interval`); None with fewer than 2 folds."""
    scores = [r.spearman for r in results.values() if r.spearman is not None]
    if len(scores) < 2:
        return None
    interval = cv_mean_interval(scores, confidence)
    return [interval.low, interval.high]


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
    The model folder is checked whole first (:func:`~trainers.folders.check_run_folder`). An
    unconditional model on conditional data is an error (it would ignore the conditions); so is
    data on another score range than the one the run recorded (its predictions would be put on
    a scale it never learnt)."""
    check_run_folder(model_path, "model_path")
    if split not in data.splits:
        raise ParameterError("split", split, f"must be a split of {data.name}: "
                             f"{', '.join(data.splits)}")
    if (Path(model_path) / ENSEMBLE_FILE).is_file():
        model = Ensemble.load(model_path)
        scored = data.splits[split]  # a learned stack refuses the rows it was fit on
        model.check_scored(data.name, split, [i for c in ID_COLUMNS if c in scored.column_names
                                              for i in scored[c]])
    else:
        model = PairEncoder.from_pretrained(model_path)
    rows = prepare_pairs(data.splits[split], data.score_range, where=f"{data.name}/{split}",
                         labelled=False)
    if "condition" in rows.column_names and not model.conditional:
        what = f"{model.kind}-encoder" if isinstance(model, PairEncoder) else "ensemble"
        raise ParameterError("model_path", str(model_path), f"is an unconditional {what}, which "
                             f"cannot score {data.name}, whose pairs have conditions (it would "
                             "ignore them)")
    recorded = recorded_score_range(model_path)
    if recorded is not None and tuple(data.score_range) != recorded[0]:
        raise ParameterError("model_path", str(model_path), f"was trained on scores in "
                             f"{list(recorded[0])} (its {recorded[1]}), but {data.name} is on "
                             f"{list(data.score_range)}: its predictions cannot be put on that "
                             "scale; predict data on the run's score range")
    condition = rows["condition"] if model.conditional else None
    scores = model.predict(rows["sentence1"], rows["sentence2"], condition, batch_size=batch_size)
    return unscale(scores, data.score_range)


def write_submission(predictions: np.ndarray, path: str | os.PathLike, ids=None) -> Path:
    """The submission file ``path`` names by its suffix, written beside it and renamed in
    (:func:`~trainers.folders.write_text_whole`): ``.csv``, the SemEval-2024 Task 1 file
    ``PairID,Pred_Score`` (``ids``: the split's ``pair_id``; ``semrel evaluate`` scores it);
    otherwise the C-STS JSON object ``{"0": float, ..., "n-1": float}`` by row."""
    if Path(path).suffix.lower() == ".csv":
        if ids is None:
            raise ParameterError("path", str(path), "is a .csv submission (PairID,Pred_Score), "
                                 "which needs the split's pair_id column; this split has none")
        return write_text_whole(path, format_predictions(ids, predictions))
    return write_text_whole(path, json.dumps({str(i): float(p) for i, p in enumerate(predictions)}))
