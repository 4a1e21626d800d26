"""``semrel fit | cv | predict | ensemble | models | benchmark | augment``: fine-tune, use and judge
encoders, and add training pairs.

    semrel fit --dataset str-2021 --config cv-fold-0 --encoder bi --model minilm --output DIR
    semrel fit --dataset build/hub/datasets/str-2021 --config cv-fold-0 --model minilm --output DIR
    semrel cv --dataset str-2021 --family cv --encoder cross --model PATH --output DIR
    semrel predict --model DIR --dataset c-sts --data-dir CSTS --output preds.json
    semrel cv --dataset str-2021 --member bi@mpnet --member cross@mpnet --output DIR
    semrel ensemble --member DIR1 --member DIR2 --method rank --output DIR
    semrel models
    semrel benchmark --model minilm --model DIR [--only semrel-2024] [--output OUT] [--card DIR]
    semrel augment --dataset semrel-2024 --config eng --neighbours 2 --teacher DIR --output DATA

Multi-GPU / multi-process: ``torchrun --nproc_per_node N -m semrel fit ...`` (same arguments;
``--batch-size`` is per process). The training flags are the options of
:data:`~trainers.options.OPTIONS`, each setting one field of
:class:`~trainers.arguments.PairTrainingArguments`. Each command has its own handler
(``run_fit``, ``run_cv``, ...; benchmark's in :mod:`~trainers.cli_benchmark`, augment's in
:mod:`~trainers.cli_augment`; what fit and cv print in :mod:`~trainers.cli_results`). A mistake
(unknown dataset, config or model, a missing folder, an output folder holding another run, a
value outside its rule) is answered in one line on stderr with exit status 2, worded in the
command's flags (:mod:`~trainers.cli_flags`): the library's
:class:`~semrel.metrics.errors.ParameterError` names the parameter, and each flag is declared
with the parameters it sets. This module imports torch only once a command runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from semrel.command_line import UsageError, integer, number
from semrel.dataset_scripts.schema import check_score_range
from semrel.metrics.errors import ParameterError
from semrel.metrics.output_files import check_output

from .cli_augment import run_augment
from .cli_benchmark import run_benchmark
from .cli_flags import (
    add_augment_flags,
    add_backend_flags,
    add_benchmark_flags,
    add_data_flags,
    add_model_kind_flag,
    add_selection_flags,
    add_training_flags,
    check_caches,
    command,
    data_read,
    flag,
    load_kwargs,
    training_arguments,
)
from .cli_results import ci, print_ensemble, print_scores, print_selection
from .options import CV_FAMILIES, ENSEMBLE_METHODS, STACK_FEATURES


def register(commands) -> None:
    """Add fit, cv, predict, ensemble, models, benchmark and augment to the ``semrel`` command."""
    p_fit = command(commands, "fit", run_fit, "train on one config, evaluate, save model + card")
    add_data_flags(p_fit)
    flag(p_fit, "--config", default="default", help="dataset config")
    add_training_flags(p_fit)
    flag(p_fit, "--save-steps", type=integer, help="checkpoint every N steps (the latest kept: what --resume needs)")
    flag(p_fit, "--resume", "resume_from_checkpoint",
         help="resume the same run from a checkpoint folder, or 'last' (its last complete "
              "checkpoint)")
    add_selection_flags(p_fit)
    p_cv = command(commands, "cv", run_cv, "fit every fold of a CV or LODO family")
    add_data_flags(p_cv)
    flag(p_cv, "--family", choices=tuple(CV_FAMILIES), default="cv",
         help="configs " + " or ".join(f"{p}*" for p in CV_FAMILIES.values()))
    add_training_flags(p_cv, model_required=False)
    flag(p_cv, "--member", action="append", metavar="ENCODER@MODEL[,OPT=VALUE...]",
         help="train this member's CV too (repeat, >= 2 members; e.g. bi@mpnet or cross@minilm,"
              "learning_rate=3e-5; options default to the flags); print their rank average and "
              "out-of-fold stack per fold")
    add_selection_flags(p_cv)
    p_predict = command(commands, "predict", run_predict, "predict a split; write a submission file")
    add_data_flags(p_predict)
    flag(p_predict, "--config", default="default", help="dataset config")
    flag(p_predict, "--model", "model_path", required=True,
         help="any model: a run or ensemble saved by semrel, a sentence-transformers bi-encoder or "
              "CrossEncoder, a transformers encoder (mean-pooled), a packaged name (minilm, "
              "mpnet, e5-small), or a Hub model id namespace/name[@revision]; one semrel did not "
              "train scores zero-shot")
    add_model_kind_flag(p_predict)
    add_backend_flags(p_predict)
    flag(p_predict, "--split", default="test", help="split to predict")
    flag(p_predict, "--output", "path", required=True,
         help="submission file: .csv -> PairID,Pred_Score (SemEval-2024 Task 1, scored by "
              "semrel evaluate), else JSON {\"0\": score, ...} (C-STS)")
    p_ens = command(commands, "ensemble", run_ensemble,
                    "combine models into an ensemble folder")
    flag(p_ens, "--member", "members", action="append", required=True, metavar="MODEL",
         help="any model (repeat): a run of semrel fit, a sentence-transformers bi-encoder or "
              "CrossEncoder, a transformers encoder (mean-pooled), a packaged name (minilm, mpnet, "
              "e5-small) or a Hub model id namespace/name[@revision]; one semrel did not train "
              "scores the rows of the runs' held-out predictions (or of its --cv-dir's folds)")
    add_model_kind_flag(p_ens)
    flag(p_ens, "--method", choices=ENSEMBLE_METHODS, default="rank",
         help="rank average, linear stack fit on the members' CV predictions, or a learned stack "
              "(ridge, gbm) fit on their CV or dev predictions")
    flag(p_ens, "--features", nargs="+", choices=STACK_FEATURES, default=(),
         help="ridge/gbm: lexical features of the pairs beside the members' scores")
    flag(p_ens, "--weights", type=number, nargs="+", help="rank: one weight per member")
    flag(p_ens, "--cv-dir", "cv_dirs", action="append", metavar="DIR",
         help="each member's CV folder (same order), whose out-of-fold predictions fit the "
              "stack or are the rank average's reference (rank without it: each member's own "
              "test-split predictions)")
    flag(p_ens, "--output", "path", required=True, help="ensemble folder")
    command(commands, "models", run_models, "the packaged verified models and how to get them")
    add_benchmark_flags(command(commands, "benchmark", run_benchmark,
                                "score any models on every labelled set, with intervals"))
    add_augment_flags(command(commands, "augment", run_augment,
                              "add nearest-neighbour train pairs labelled by a teacher model"))


def _training_values(args) -> dict:
    """fit's and cv's checks that need no torch: ``--score-range``, then every training flag
    (:func:`~trainers.cli_flags.training_arguments`)."""
    if args.score_range is not None:
        check_score_range(args.score_range)
    return training_arguments(args, args.output)


def _dev(args):
    """The dev split of ``--eval-dataset`` (:func:`~trainers.selection.load_dev`), or None."""
    if args.eval_dataset is None:
        return None
    from .selection import load_dev

    return load_dev(args.eval_dataset, args.eval_config or "default", args.eval_split,
                    score_range=args.eval_score_range, mirror=args.mirror,
                    cache_dir=args.cache_dir)


def _model_ref(spec: str, args, parameter: str):
    """``spec`` (``--model``, a ``--member``'s model) resolved with ``--model-kind``: a
    :class:`~trainers.model_ref.ModelRef` (a Hub model fetched into the cache), else a
    ParameterError on ``parameter``."""
    from .model_ref import resolve_model_ref

    return resolve_model_ref(spec, kind=args.model_kind, parameter=parameter)


def _starting_model(spec: str, args, values: dict):
    """fit's and cv's ``--model`` (a ``--member``'s model, trained with ``values``) as a
    :class:`~trainers.model_ref.ModelRef` whose starting transformer
    (:func:`~trainers.starting_point.starting_folder`) is a whole transformer folder."""
    from .starting_point import starting_folder
    from .token_limits import check_start

    ref = _model_ref(spec, args, "name_or_path")
    check_start(ref, starting_folder(ref, values["encoder"], "name_or_path"), values)
    return ref


def _check_training_folders(args, values: dict):
    """fit's and cv's folders before anything is loaded or trained (:mod:`~trainers.run_folder`):
    the models read (``--model``, fetched from the Hub if it names a Hub model, and fit's
    ``--resume``), then the places written (``--output``: no link, none of the inputs, inside
    the model or holding an input; ``--cache-dir``). The model's ModelRef, or None."""
    from . import run_folder as folders

    ref = None if args.model is None else _starting_model(args.model, args, values)
    if getattr(args, "resume", None) not in (None, "last"):
        folders.check_checkpoint_folder(args.resume, "resume_from_checkpoint")
    check_output(args.output, "output_dir", {"name_or_path": [str(ref.path) if ref else None]},
                 folder=True, data={**data_read(args), "eval_dataset": [args.eval_dataset]})
    folders.check_output_folder(args.output, "output_dir")
    check_caches(args)
    return ref


def _member_model(spec: str, model: str, args, values: dict):
    """A cv ``--member``'s model (:func:`_starting_model`), checked; its faults name the
    member."""
    try:
        return _starting_model(model, args, values)
    except ParameterError as exc:
        raise ParameterError("member", spec, exc.rule) from None


def _predict_range(args, load_kwargs: dict, model_path: Path):
    """``predict``'s data, on the score range the run at ``--model`` (``model_path``) was
    trained on: a ``--score-range`` that differs from it is refused, and data that records no
    range takes it."""
    from semrel.dataset_scripts.pairs import load_pairs

    from .run_folder import recorded_score_range

    recorded = recorded_score_range(model_path)
    if recorded is not None and args.score_range is not None:
        (lo, hi), source = recorded
        if check_score_range(args.score_range) != (lo, hi):
            raise ParameterError("score_range", args.score_range, f"differs from the score range "
                                 f"[{lo:g}, {hi:g}] that {{model_path}} {args.model} was "
                                 f"trained on (its {source}); predictions are on that scale: "
                                 "leave {score_range} out")
    try:
        return load_pairs(args.dataset, args.config, **load_kwargs)
    except ParameterError as exc:  # data without a recorded range: the run's
        if recorded is None or exc.parameter != "score_range" or exc.value is not None:
            raise
        return load_pairs(args.dataset, args.config, **{**load_kwargs, "score_range": recorded[0]})


def run_fit(args: argparse.Namespace) -> int:
    """``semrel fit``: checks, then train on one config, evaluate, save model + card."""
    values = _training_values(args)
    model = _check_training_folders(args, values)
    from semrel.dataset_scripts.pairs import load_pairs

    from .arguments import PairTrainingArguments
    from .fitting import fit
    from .run_folder import CARD, METRICS

    training = PairTrainingArguments(**values)
    result = fit(load_pairs(args.dataset, args.config, **load_kwargs(args)), model, training,
                 resume_from_checkpoint=args.resume, overwrite=args.overwrite,
                 eval_data=_dev(args))
    split = f" ({result.eval_split})" if result.eval_split else ""
    print_scores(f"{args.dataset}/{args.config}{split}", result)
    print_selection(f"{args.dataset}/{args.config}", result)
    print(f"model, {CARD} and {METRICS} in {args.output}")
    return 0


def run_cv(args: argparse.Namespace) -> int:
    """``semrel cv``: fit every fold of a family (of each ``--member``), print the scores."""
    values = _training_values(args)
    if not (args.model or args.member):
        raise UsageError("cv needs --model (or --member ENCODER@MODEL, repeated)")
    model = _check_training_folders(args, values)
    if args.member:
        return _run_cv_members(args)
    from .arguments import PairTrainingArguments
    from .cross_validation import cross_validate
    from .summaries import mean_interval, mean_scores

    results = cross_validate(args.dataset, args.family, model,
                             PairTrainingArguments(**values), overwrite=args.overwrite,
                             eval_data=_dev(args), **load_kwargs(args))
    for config, result in results.items():
        print_scores(config, result)
        print_selection(config, result)
    overall, per_source = mean_scores(results)
    print(f"mean Spearman over {len(results)} folds: {overall:.4f}{ci(mean_interval(results))}"
          + (" (95% CI, corrected resampled t over folds)" if len(results) > 1 else ""))
    for source, rho in per_source.items():
        print(f"    {source:<12} {rho:.4f}")
    return 0


def _run_cv_members(args: argparse.Namespace) -> int:
    """cv of each ``--member`` (its options over the flags), then their ensembles per fold."""
    from .arguments import PairTrainingArguments
    from .cross_validation import cross_validate_members, parse_member

    members = []
    for spec in args.member:
        name, model, changes = parse_member(spec)
        member = training_arguments(args, str(Path(args.output) / name), changes)
        members.append((name, _member_model(spec, model, args, member),
                        PairTrainingArguments(**member)))
    if len(members) == 1:
        raise ParameterError("member", args.member[0], "is the only member: an ensemble needs "
                             ">= 2 (repeat {member}); one model's CV is {name_or_path} with the "
                             "training flags")
    _, ensemble = cross_validate_members(args.dataset, args.family, members,
                                         overwrite=args.overwrite, eval_data=_dev(args),
                                         **load_kwargs(args))
    print_ensemble(ensemble)
    return 0


def run_predict(args: argparse.Namespace) -> int:
    """``semrel predict``: a split's predictions as a submission file, by any model."""
    if args.score_range is not None:  # the checks that need no torch come first
        check_score_range(args.score_range)
    from . import run_folder as folders
    from .scoring import check_backend, check_model_folder

    ref = _model_ref(args.model, args, "model_path")
    check_model_folder(ref, "model_path")
    check_output(args.output, "path", {"model_path": [str(ref.path)]}, data=data_read(args))
    folders.check_output_file(args.output, "path")
    check_caches(args)
    check_backend(args.backend, args.quantize)
    from .prediction import predict, write_submission

    data = _predict_range(args, load_kwargs(args), ref.path)
    rows = data.splits[args.split] if args.split in data.splits else None
    ids = list(rows["pair_id"]) if rows is not None and "pair_id" in rows.column_names else None
    values = predict(str(ref.path), data, args.split, kind=ref.kind, backend=args.backend, quantize=args.quantize)
    path = write_submission(values, args.output, ids=ids)
    print(f"{len(data.splits[args.split])} predictions of {data.name}/{args.split} -> {path}")
    return 0


def run_ensemble(args: argparse.Namespace) -> int:
    """``semrel ensemble``: combine models (runs of fit, or any other) into an ensemble folder."""
    from . import run_folder as folders

    refs = [_model_ref(member, args, "members") for member in args.member]
    for ref in refs:
        folders.check_member_folder(ref.path, ref.kind, "members")
    for cv_dir in args.cv_dir or ():
        folders.check_cv_folder(cv_dir, "cv_dirs")
    check_output(args.output, "path", {"members": [str(r.path) for r in refs], "cv_dirs": args.cv_dir},
                 folder=True)
    folders.check_output_folder(args.output, "path")
    from .ensemble import Ensemble

    path = Ensemble.build(refs, args.method, weights=args.weights, cv_dirs=args.cv_dir,
                          features=tuple(args.features)).save(args.output)
    print(f"ensemble of {len(args.member)} members ({args.method}) -> {path}")
    return 0


def run_models(args: argparse.Namespace) -> int:
    """``semrel models``: the packaged verified models and where they are."""
    from semrel.dataset_scripts.pretrained import PACKAGED_MODELS

    for name, model in PACKAGED_MODELS.items():
        try:
            where = str(model.path())
        except (ImportError, FileNotFoundError, ValueError) as exc:
            where = f"not available: {exc}"
        print(f"{name:<7} {model.hub_id} ({model.license}): {where}")
    return 0
