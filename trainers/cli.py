"""``semrel fit | cv | predict | ensemble | models``: fine-tune and use encoders.

    semrel fit --dataset str-2021 --config cv-fold-0 --encoder bi --model minilm --output DIR
    semrel fit --dataset build/hub/datasets/str-2021 --config cv-fold-0 --model minilm --output DIR
    semrel cv --dataset str-2021 --family cv --encoder cross --model PATH --output DIR
    semrel predict --model DIR --dataset c-sts --data-dir CSTS --output preds.json
    semrel cv --dataset str-2021 --member bi@mpnet --member cross@mpnet --output DIR
    semrel ensemble --member DIR1 --member DIR2 --method rank --output DIR
    semrel models

Multi-GPU / multi-process: ``torchrun --nproc_per_node N -m semrel fit ...`` (same arguments;
``--batch-size`` is per process). The training flags are the options of
:data:`~trainers.options.OPTIONS`, each setting one field of
:class:`~trainers.arguments.PairTrainingArguments`. A mistake (unknown dataset, config or model, a
missing folder, an output folder holding another run, a value outside its rule) is answered in
one line on stderr with exit status 2, worded in flags: the library's
:class:`~semrel.metrics.errors.ParameterError` names the parameter, :data:`FLAGS` the flag. This module
imports torch only once a command runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from semrel.command_line import UsageError, add_command, integer, number
from semrel.dataset_scripts.schema import check_score_range
from semrel.metrics.errors import ParameterError

from .options import OPTIONS, check_arguments
from .selection import SELECTION_FLAGS, add_selection_args, selection_values

ENSEMBLE_METHODS = ("rank", "stack", "ridge", "gbm")  # trainers.combination.METHODS (no torch here)
FLAGS = {o.argument: o.flag for o in OPTIONS} | {  # Python API parameter -> the flag setting it
    "save_steps": "--save-steps", "output_dir": "--output", "overwrite": "--overwrite",
    "resume_from_checkpoint": "--resume", "dataset": "--dataset", "config": "--config",
    "score_range": "--score-range", "mirror": "--mirror", "data_dir": "--data-dir",
    "cache_dir": "--cache-dir", "password": "--password", "model_path": "--model",
    "name_or_path": "--model", "kind": "--encoder", "split": "--split", "family": "--family",
    "member": "--member", "dataloader_persistent_workers": "--num-workers",
}
FLAGS |= SELECTION_FLAGS  # --eval-dataset and the flags that go with it
ARG_TYPES = {int: integer, float: number}  # ASCII decimal notation, as every semrel command
COMMAND_FLAGS = {"ensemble": {"members": "--member", "method": "--method",
                              "weights": "--weights", "cv_dirs": "--cv-dir", "path": "--output",
                              "features": "--features"},
                 "predict": {"path": "--output"}}


def _data_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", required=True,
                        help="registry id (str-2021, c-sts, ...), a DatasetDict.save_to_disk "
                             "folder, an exported Hub-layout folder (build/hub/datasets/ID) or a "
                             "Hub dataset id (namespace/name)")
    parser.add_argument("--score-range", nargs=2, type=number, metavar=("LO", "HI"),
                        help="native score range of data that records none (registry datasets "
                             "declare their own; a dataset card may record it)")
    parser.add_argument("--mirror", help="mirror directory of the upstream files ($SEMREL_MIRROR)")
    parser.add_argument("--data-dir", help="user-supplied data (C-STS: csts.tar.enc or the CSVs)")
    parser.add_argument("--password", help="C-STS password (else $CSTS_PASSWORD)")
    parser.add_argument("--cache-dir", help="datasets cache directory")


def _fit_args(parser: argparse.ArgumentParser, model_required: bool = True) -> None:
    parser.add_argument("--model", required=model_required,
                        help="pretrained transformer folder, or a packaged name (minilm, mpnet; "
                             "see `semrel models`)")
    parser.add_argument("--output", required=True,
                        help="output folder (new, empty, or --overwrite)")
    parser.add_argument("--overwrite", action="store_true",
                        help="clear an output folder that holds another run")
    for option in OPTIONS:
        if isinstance(option.default, bool):
            parser.add_argument(option.flag, action=argparse.BooleanOptionalAction,
                                default=option.default, help=option.help)
        else:
            parser.add_argument(option.flag, type=ARG_TYPES.get(type(option.default), str), default=option.default,
                                help=option.help, choices=option.choices)


def register(commands) -> None:
    """Add fit, cv, predict, ensemble and models to the ``semrel`` command."""
    p_fit = add_command(commands, "fit", run, "train on one config, evaluate, save model + card")
    _data_args(p_fit)
    p_fit.add_argument("--config", default="default", help="dataset config")
    _fit_args(p_fit)
    p_fit.add_argument("--save-steps", type=integer, help="checkpoint every N steps")
    p_fit.add_argument("--resume", help="resume the same run from a checkpoint folder, or "
                                        "'last' (its last complete checkpoint)")
    add_selection_args(p_fit)
    p_cv = add_command(commands, "cv", run, "fit every fold of a CV or LODO family")
    _data_args(p_cv)
    p_cv.add_argument("--family", choices=("cv", "lodo"), default="cv",
                      help="configs cv-fold-* or lodo-*")
    _fit_args(p_cv, model_required=False)
    p_cv.add_argument("--member", action="append", metavar="ENCODER@MODEL[,OPT=VALUE...]",
                      help="train this member's CV too (repeat; e.g. bi@mpnet or "
                           "cross@minilm,learning_rate=3e-5; options default to the flags); with "
                           ">= 2 members, print their rank average and out-of-fold stack per fold")
    add_selection_args(p_cv)
    p_predict = add_command(commands, "predict", run, "predict a split; write a submission file")
    _data_args(p_predict)
    p_predict.add_argument("--config", default="default", help="dataset config")
    p_predict.add_argument("--model", required=True, help="a model saved by fit")
    p_predict.add_argument("--split", default="test", help="split to predict")
    p_predict.add_argument("--output", required=True,
                           help="submission file: .csv -> PairID,Pred_Score (SemEval-2024 Task 1, "
                                "scored by semrel evaluate), else JSON {\"0\": score, ...} (C-STS)")
    p_ens = add_command(commands, "ensemble", run, "combine trained models into an ensemble folder")
    p_ens.add_argument("--member", action="append", required=True, metavar="DIR",
                       help="a model folder written by fit (repeat)")
    p_ens.add_argument("--method", choices=ENSEMBLE_METHODS, default="rank",
                       help="rank average, linear stack fit on the members' CV predictions, or a "
                            "learned stack (ridge, gbm) fit on their CV or dev predictions")
    p_ens.add_argument("--features", nargs="+", choices=("dice",), default=(),
                       help="ridge/gbm: lexical features of the pairs beside the members' scores")
    p_ens.add_argument("--weights", type=number, nargs="+", help="rank: one weight per member")
    p_ens.add_argument("--cv-dir", action="append", metavar="DIR",
                       help="each member's CV folder (same order), whose out-of-fold "
                            "predictions fit the stack or are the rank average's reference "
                            "(rank without it: each member's own test-split predictions)")
    p_ens.add_argument("--output", required=True, help="ensemble folder")
    add_command(commands, "models", run, "the packaged verified models and how to get them")


def _load_kwargs(args) -> dict:
    kwargs = {"score_range": args.score_range, "mirror": args.mirror, "data_dir": args.data_dir,
              "cache_dir": args.cache_dir}
    if args.password is not None:
        kwargs["password"] = args.password
    return kwargs


def _arguments(args, output: str, changes: dict | None = None) -> dict:
    """``PairTrainingArguments`` keyword arguments from the flags (workers kept across epochs
    when there are any; ``--save-steps N``: a checkpoint every N steps), checked by the rules
    that need no torch."""
    values = {o.argument: o.to_argument(getattr(args, o.name)) for o in OPTIONS}
    values.update(changes or {})
    values["dataloader_persistent_workers"] = values["dataloader_num_workers"] > 0
    if getattr(args, "save_steps", None) is not None:
        values.update(save_strategy="steps", save_steps=args.save_steps)
    values.update(selection_values(args))  # --eval-dataset: evaluate, keep the best checkpoint
    values["output_dir"] = output
    check_arguments(values)
    return values


def _dev(args):
    """The dev split of ``--eval-dataset`` (:func:`~trainers.selection.load_dev`), or None."""
    if getattr(args, "eval_dataset", None) is None:
        return None
    from .selection import load_dev

    return load_dev(args.eval_dataset, args.eval_config or "default", args.eval_split,
                    score_range=args.eval_score_range, mirror=args.mirror,
                    cache_dir=args.cache_dir)


def _print_selection(name: str, result) -> None:
    """The dev curve of a run that chose its checkpoint on dev, and the one it kept."""
    selection = result.selection
    if not selection:
        return
    metric, kept = selection["metric"], selection["kept"] or {}
    curve = ", ".join(f"{e['epoch']:g}: " + ("undefined" if e.get(metric) is None else
                                              f"{e[metric]:.4f}") for e in selection["curve"])
    print(f"{name}: {metric} on {selection['data']} by epoch ({curve}); kept epoch "
          f"{kept.get('epoch', 0):g} ({selection['checkpoint']})")


def _show(value) -> str:
    """A value as typed on the command line: numbers as ``%g``, sequences space-separated, a
    flag that is set (True) or left out (None) as nothing."""
    if value is None or value is True:
        return ""
    if isinstance(value, (list, tuple)):
        return " ".join(_show(v) for v in value)
    return f"{value:g}" if isinstance(value, float) else str(value)


def in_flags(error: ParameterError, command: str) -> str:
    """``error`` worded for the command line: parameters named by their flags (a parameter
    without a flag keeps its Python name)."""
    flags = FLAGS | COMMAND_FLAGS.get(command, {})
    return error.worded(name=lambda p: flags.get(p, p), show=_show, sep=" ")


def _model(name: str) -> str:
    """A packaged model name or a folder, else a ParameterError naming it."""
    from .pretrained import resolve_model

    return resolve_model(name)


def _check_paths(args) -> None:
    """Every folder or file argument of the command, before anything is loaded or trained
    (:mod:`~trainers.run_folder`): the models read (``--model``, ``--resume``, ``--member``,
    ``--cv-dir``), then the places written (``--output``, ``--cache-dir``)."""
    from . import run_folder as folders

    if args.command in ("fit", "cv") and args.model is not None:
        folders.check_transformer_folder(_model(args.model), "name_or_path")
    if getattr(args, "resume", None) not in (None, "last"):
        folders.check_checkpoint_folder(args.resume, "resume_from_checkpoint")
    if args.command == "predict":
        folders.check_run_folder(args.model, "model_path")
        folders.check_output_file(args.output, "path")
    elif args.command == "ensemble":
        for member in args.member:
            folders.check_run_folder(member, "members", written_by_fit=True)
        for cv_dir in args.cv_dir or ():
            folders.check_cv_folder(cv_dir, "cv_dirs")
        folders.check_output_folder(args.output, "path")
    else:
        folders.check_output_folder(args.output, "output_dir")
    if getattr(args, "cache_dir", None) is not None:
        folders.check_output_folder(args.cache_dir, "cache_dir")


def _member_model(spec: str, model: str) -> str:
    """A cv ``--member``'s model folder, checked; its faults name the member."""
    from .run_folder import check_transformer_folder

    try:
        return str(check_transformer_folder(_model(model), "name_or_path"))
    except ParameterError as exc:
        raise ParameterError("member", spec, exc.rule) from None


def _predict_range(args, load_kwargs: dict):
    """``predict``'s data, on the score range the run at ``--model`` was trained on: a
    ``--score-range`` that differs from it is refused, and data that records no range takes
    it."""
    from semrel.dataset_scripts.pairs import load_pairs

    from .run_folder import recorded_score_range

    recorded = recorded_score_range(args.model)
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


def _os_error(exc: OSError) -> str:
    """An OSError in one line: ``path: reason``, else its first line."""
    if exc.filename is not None and exc.strerror:
        return f"{exc.filename}: {exc.strerror}"
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _ci(interval) -> str:
    return f" [{interval[0]:.4f}, {interval[1]:.4f}]" if interval else ""


def _print_scores(name: str, result) -> None:
    if result.spearman is None:
        print(f"{name}: trained on {result.train_pairs} pairs, not evaluated (no validation or "
              f"test split; {result.pairs_per_second:.1f} pairs/s, {result.train_seconds:.0f} s)")
        return
    print(f"{name}: Spearman {result.spearman:.4f}{_ci(getattr(result, 'spearman_ci', None))}  "
          f"Pearson {result.pearson:.4f}  "
          f"MSE {result.mse:.4f}  ({result.pairs_per_second:.1f} pairs/s, "
          f"{result.train_seconds:.0f} s)")
    for source, rho in result.per_source.items():
        print(f"    {source:<12} {rho:.4f}")
    for language, rho in getattr(result, "per_language", {}).items():
        print(f"    {language:<12} {rho:.4f}")


def _print_ensemble(ensemble) -> None:
    names = list(next(iter(ensemble.folds.values())))
    print("Spearman per fold: members, then their rank average and out-of-fold stack")
    print(f"{'fold':<12}" + "".join(f"{n[:22]:>24}" for n in names))
    for fold, scores in ensemble.folds.items():
        print(f"{fold:<12}" + "".join(f"{scores[n]:>24.4f}" for n in names))
    mean = ensemble.mean()
    print(f"{'mean':<12}" + "".join(f"{mean[n]:>24.4f}" for n in names))
    if ensemble.comparisons:
        print("ensemble - member on the pooled out-of-fold predictions: Spearman difference [95% CI] "
              "(paired bootstrap p; Williams' p for Pearson)")
    for method, members in ensemble.comparisons.items():
        for member, c in members.items():
            if "error" in c:
                print(f"    {method} - {member}: not tested ({c['error']})")
                continue
            low, high = c["spearman_difference_ci"]
            print(f"    {method} - {member}: {c['spearman_difference']:+.4f} [{low:+.4f}, {high:+.4f}] "
                  f"(p {c['spearman_p_value']:.4f}; Williams p {c['williams_p_value']:.4f}; n {c['n']})")


def run_models() -> None:
    from semrel.dataset_scripts.pretrained import PACKAGED_MODELS

    for name, model in PACKAGED_MODELS.items():
        try:
            where = str(model.path())
        except (ImportError, FileNotFoundError, ValueError) as exc:
            where = f"not available: {exc}"
        print(f"{name:<7} {model.hub_id} ({model.license}): {where}")


def run(args: argparse.Namespace) -> int:
    """Run a parsed command; a ParameterError is answered in flags (UsageError, exit 2)."""
    try:
        return _run(args)
    except ParameterError as exc:
        raise UsageError(in_flags(exc, args.command)) from exc
    except OSError as exc:  # a fault the checks up front cannot foresee (a full disk)
        raise UsageError(_os_error(exc)) from exc


def _run(args: argparse.Namespace) -> int:
    if args.command == "models":
        run_models()
        return 0
    if args.command == "ensemble":
        _check_paths(args)
        from .ensemble import Ensemble

        path = Ensemble.build(args.member, args.method, weights=args.weights,
                              cv_dirs=args.cv_dir, features=tuple(args.features)
                              ).save(args.output)
        print(f"ensemble of {len(args.member)} members ({args.method}) -> {path}")
        return 0
    if args.score_range is not None:  # the checks that need no torch come first
        check_score_range(args.score_range)
    if args.command != "predict":
        values = _arguments(args, args.output)
    if args.command == "cv" and not (args.model or args.member):
        raise UsageError("cv needs --model (or --member ENCODER@MODEL, repeated)")
    _check_paths(args)
    from semrel.dataset_scripts.pairs import load_pairs

    from .arguments import PairTrainingArguments
    from .cross_validation import cross_validate, cross_validate_members, parse_member
    from .fitting import fit
    from .prediction import predict, write_submission
    from .run_folder import CARD, METRICS
    from .summaries import mean_interval, mean_scores

    if args.command == "fit":
        model = _model(args.model)
        training = PairTrainingArguments(**values)
        result = fit(load_pairs(args.dataset, args.config, **_load_kwargs(args)), model, training,
                     resume_from_checkpoint=args.resume, overwrite=args.overwrite,
                     eval_data=_dev(args))
        split = f" ({result.eval_split})" if result.eval_split else ""
        _print_scores(f"{args.dataset}/{args.config}{split}", result)
        _print_selection(f"{args.dataset}/{args.config}", result)
        print(f"model, {CARD} and {METRICS} in {args.output}")
    elif args.command == "cv" and args.member:
        members = []
        for spec in args.member:
            name, model, changes = parse_member(spec)
            member = _arguments(args, str(Path(args.output) / name), changes)
            members.append((name, _member_model(spec, model), PairTrainingArguments(**member)))
        _, ensemble = cross_validate_members(args.dataset, args.family, members,
                                             overwrite=args.overwrite, eval_data=_dev(args),
                                             **_load_kwargs(args))
        _print_ensemble(ensemble)
    elif args.command == "cv":
        results = cross_validate(args.dataset, args.family, _model(args.model),
                                 PairTrainingArguments(**values), overwrite=args.overwrite,
                                 eval_data=_dev(args), **_load_kwargs(args))
        for config, result in results.items():
            _print_scores(config, result)
            _print_selection(config, result)
        overall, per_source = mean_scores(results)
        print(f"mean Spearman over {len(results)} folds: {overall:.4f}{_ci(mean_interval(results))}"
              + (" (95% CI, corrected resampled t over folds)" if len(results) > 1 else ""))
        for source, rho in per_source.items():
            print(f"    {source:<12} {rho:.4f}")
    else:
        data = _predict_range(args, _load_kwargs(args))
        rows = data.splits[args.split] if args.split in data.splits else None
        ids = list(rows["pair_id"]) if rows is not None and "pair_id" in rows.column_names else None
        path = write_submission(predict(args.model, data, args.split), args.output, ids=ids)
        print(f"{len(data.splits[args.split])} predictions of {data.name}/{args.split} -> {path}")
    return 0
