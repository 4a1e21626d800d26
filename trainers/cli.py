"""``python -m trainers``: fit | cv | predict.

    python -m trainers fit --dataset str-2021 --config cv-fold-0 --encoder bi --model PATH --output DIR
    python -m trainers cv --dataset str-2021 --family cv --encoder cross --model PATH --output DIR
    python -m trainers predict --model DIR --dataset c-sts --data-dir CSTS --output preds.json

Multi-GPU / multi-process: ``torchrun --nproc_per_node N -m trainers fit ...`` (same arguments;
``--batch-size`` is per process).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import fields

from .losses import OBJECTIVES
from .models import ENCODER_KINDS, POOLINGS, TRI_COMBINES
from .pretrained import resolve_model
from dataset_scripts.pretrained import PACKAGED_MODELS

from .ensemble import METHODS, Ensemble
from .training import COMPILE_MODES, FAMILIES, FitOptions, cross_validate, cross_validate_members, fit, \
    load_pairs, mean_scores, parse_member, predict, write_submission


def _data_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", required=True,
                        help="registry id (str-2021, c-sts, ...) or a DatasetDict.save_to_disk folder")
    parser.add_argument("--score-range", nargs=2, type=float, metavar=("LO", "HI"),
                        help="native score range of a folder dataset")
    parser.add_argument("--mirror", help="mirror directory of the upstream files ($SEMREL_MIRROR)")
    parser.add_argument("--data-dir", help="user-supplied data (C-STS: csts.tar.enc or the CSVs)")
    parser.add_argument("--password", help="C-STS password (else $CSTS_PASSWORD)")
    parser.add_argument("--cache-dir", help="datasets cache directory")


def _fit_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True,
                        help="pretrained transformer folder, or a packaged verified model: "
                             "'minilm' or 'mpnet' (see `python -m trainers models`)")
    parser.add_argument("--output", required=True, help="output folder")
    defaults = FitOptions()
    choices = {"encoder": ENCODER_KINDS, "objective": OBJECTIVES, "pooling": POOLINGS,
               "combine": TRI_COMBINES, "compile": COMPILE_MODES}
    for f in fields(FitOptions):
        flag = "--" + f.name.replace("_", "-")
        default = getattr(defaults, f.name)
        if isinstance(default, bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=default)
        else:
            parser.add_argument(flag, type=type(default), default=default,
                                choices=choices.get(f.name))


def _load_kwargs(args) -> dict:
    kwargs = {"score_range": args.score_range, "mirror": args.mirror, "data_dir": args.data_dir,
              "cache_dir": args.cache_dir}
    if args.password is not None:
        kwargs["password"] = args.password
    return kwargs


def _options(args) -> FitOptions:
    return FitOptions(**{f.name: getattr(args, f.name) for f in fields(FitOptions)})


def _print_scores(name: str, result) -> None:
    if result.spearman is None:
        print(f"{name}: trained on {result.train_pairs} pairs, not evaluated (no validation or "
              f"test split; {result.pairs_per_second:.1f} pairs/s, {result.train_seconds:.0f} s)")
        return
    print(f"{name}: Spearman {result.spearman:.4f}  Pearson {result.pearson:.4f}  "
          f"MSE {result.mse:.4f}  ({result.pairs_per_second:.1f} pairs/s, "
          f"{result.train_seconds:.0f} s)")
    for source, rho in result.per_source.items():
        print(f"    {source:<12} {rho:.4f}")


def _print_ensemble(ensemble) -> None:
    names = list(next(iter(ensemble.folds.values())))
    print("Spearman per fold: members, then their rank average and out-of-fold stack")
    print(f"{'fold':<12}" + "".join(f"{n[:22]:>24}" for n in names))
    for fold, scores in ensemble.folds.items():
        print(f"{fold:<12}" + "".join(f"{scores[n]:>24.4f}" for n in names))
    mean = ensemble.mean()
    print(f"{'mean':<12}" + "".join(f"{mean[n]:>24.4f}" for n in names))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m trainers", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    p_fit = commands.add_parser("fit", help="train on one config, evaluate, save model + card")
    _data_args(p_fit)
    p_fit.add_argument("--config", default="default")
    _fit_args(p_fit)
    p_fit.add_argument("--save-steps", type=int, help="checkpoint every N steps")
    p_fit.add_argument("--resume", help="resume from a checkpoint folder, or 'last'")
    p_cv = commands.add_parser("cv", help="fit every fold of a CV or LODO family")
    _data_args(p_cv)
    p_cv.add_argument("--family", choices=sorted(FAMILIES), default="cv")
    _fit_args(p_cv)
    p_cv.add_argument("--member", action="append", metavar="ENCODER@MODEL[,OPT=VALUE...]",
                      help="train this member too (repeat): e.g. bi@mpnet or "
                           "cross@minilm,learning_rate=3e-5 (options default to the flags "
                           "above); with >= 2 members, report their rank and stack ensembles")
    p_ens = commands.add_parser("ensemble", help="combine trained models into an ensemble folder")
    p_ens.add_argument("--member", action="append", required=True, metavar="DIR",
                       help="a model folder written by fit (repeat)")
    p_ens.add_argument("--method", choices=METHODS, default="rank")
    p_ens.add_argument("--weights", type=float, nargs="+", help="rank: one weight per member")
    p_ens.add_argument("--cv-dir", action="append", metavar="DIR",
                       help="stack: each member's CV folder (same order), whose out-of-fold "
                            "predictions fit the weights")
    p_ens.add_argument("--output", required=True, help="ensemble folder")
    commands.add_parser("models", help="the packaged verified models and how to get them")
    p_predict = commands.add_parser("predict", help="predict a split; write submission JSON")
    _data_args(p_predict)
    p_predict.add_argument("--config", default="default")
    p_predict.add_argument("--model", required=True, help="a model saved by fit")
    p_predict.add_argument("--split", default="test")
    p_predict.add_argument("--output", required=True, help="JSON file {\"0\": score, ...}")
    args = parser.parse_args(argv)

    if args.command == "fit":
        resume = True if args.resume == "last" else args.resume
        result = fit(load_pairs(args.dataset, args.config, **_load_kwargs(args)),
                     resolve_model(args.model),
                     args.output, _options(args), resume_from_checkpoint=resume,
                     save_steps=args.save_steps)
        _print_scores(f"{args.dataset}/{args.config} ({result.eval_split})", result)
        print(f"model, README.md and metrics.json in {args.output}")
    elif args.command == "cv" and args.member:
        members = [parse_member(spec, _options(args)) for spec in args.member]
        members = [(name, resolve_model(model), options) for name, model, options in members]
        results, ensemble = cross_validate_members(args.dataset, args.family, members,
                                                   args.output, **_load_kwargs(args))
        _print_ensemble(ensemble)
    elif args.command == "ensemble":
        path = Ensemble.build(args.member, args.method, weights=args.weights,
                              cv_dirs=args.cv_dir).save(args.output)
        print(f"ensemble of {len(args.member)} members ({args.method}) -> {path}")
    elif args.command == "models":
        for name, model in PACKAGED_MODELS.items():
            try:
                where = str(model.path())
            except (ImportError, FileNotFoundError, ValueError) as exc:
                where = f"not available: {exc}"
            print(f"{name:<7} {model.hub_id} ({model.license}): {where}")
    elif args.command == "cv":
        results = cross_validate(args.dataset, args.family, resolve_model(args.model), args.output,
                                 _options(args), **_load_kwargs(args))
        for config, result in results.items():
            _print_scores(config, result)
        overall, per_source = mean_scores(results)
        print(f"mean Spearman over {len(results)} folds: {overall:.4f}")
        for source, rho in per_source.items():
            print(f"    {source:<12} {rho:.4f}")
    else:
        data = load_pairs(args.dataset, args.config, **_load_kwargs(args))
        path = write_submission(predict(args.model, data, args.split), args.output)
        print(f"{len(data.splits[args.split])} predictions of {data.name}/{args.split} -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
