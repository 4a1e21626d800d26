"""Cross-validation: :func:`~trainers.fitting.fit` on every config of a family of a dataset
(``cv``: ``cv-fold-*``; ``lodo``: ``lodo-*``), for one model or for several members
(``--member ENCODER@MODEL[,option=value...]``, :func:`parse_member`) whose ensembles are then
scored per fold on out-of-fold predictions (:func:`~trainers.combination.cv_ensemble`).
"""

from __future__ import annotations

from pathlib import Path

from semrel.dataset_scripts.pairs import dataset_configs, load_pairs
from semrel.metrics.errors import ParameterError
from semrel.metrics.text_numbers import INTEGER, ascii_number

from .arguments import PairTrainingArguments, recorded_options
from .combination import cv_ensemble
from .fitting import FitResult, eval_split_name, fit, model_ref, train_split_names, with_output
from .options import CV_FAMILIES as FAMILIES
from .options import OPTIONS
from .run_folder import finish_run, load_run, prepare_output
from .selection import DevSplit, check_selection
from .starting_point import starting_folder

BOOLEANS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


def cross_validate(dataset: str, family: str, model_path, args: PairTrainingArguments, *,
                   overwrite: bool = False, eval_data: DevSplit | None = None,
                   **load_kwargs) -> dict[str, FitResult]:
    """:func:`~trainers.fitting.fit` from ``model_path`` (any model ``fit`` takes, resolved and
    checked as a starting point once) on every config of a family (``cv``: ``cv-fold-*``;
    ``lodo``: ``lodo-*``) of ``dataset`` (:func:`~semrel.dataset_scripts.pairs.dataset_configs`),
    each into ``args.output_dir/<config>`` (each fold choosing its checkpoint on ``eval_data``
    when given, checked for every fold before any trains); ``args.output_dir`` follows
    :func:`~trainers.run_folder.prepare_output`'s rules."""
    if family not in FAMILIES:
        raise ParameterError("family", family, f"must be one of {list(FAMILIES)}")
    configs = [c for c in dataset_configs(str(dataset)) if c.startswith(FAMILIES[family])]
    if not configs:
        raise ParameterError("family", family, f"{dataset} has no {family} configs "
                             f"({FAMILIES[family]}*)")
    if args.output_dir is None:
        raise ParameterError("output_dir", None, "must name the folder of the fold runs")
    output_dir = Path(args.output_dir)
    ref = model_ref(model_path)
    starting_folder(ref, args.encoder, "model_path")
    run = {"cv": family, "data": str(dataset), "model": ref.fingerprint,
           "options": recorded_options(args)}
    if eval_data is not None:
        run["eval_data"] = eval_data.name
    folds = {config: load_pairs(dataset, config, **load_kwargs) for config in configs}
    for data in folds.values():
        trained = train_split_names(data, args.train_splits)
        check_selection(data, eval_data, args, held_out=eval_split_name(data.splits, trained),
                        trained=trained)
    prepare_output(output_dir, run, overwrite=overwrite)
    results = {config: fit(data, ref, with_output(args, output_dir / config),
                           eval_data=eval_data) for config, data in folds.items()}
    finish_run(output_dir, run)
    return results


def parse_member(spec: str) -> tuple[str, str, dict]:
    """``ENCODER@MODEL[,option=value...]`` (e.g. ``cross@mpnet,learning_rate=3e-5``; options
    by their recorded names, :data:`~trainers.options.OPTIONS`) -> (name for its folder, model
    name or path, ``PairTrainingArguments`` keyword arguments it sets). Values are read as the
    flags read them: numbers in ASCII notation, integers in ASCII digits, booleans as one of
    true/false, 1/0, yes/no (any case)."""
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
        values[option.argument] = option.to_argument(_typed(spec, key, value, option.type))
    name = "".join(c if c.isalnum() or c in "-_.=" else "_" for c in spec.replace("@", "-"))
    return name, model, values


def _typed(spec: str, key: str, value: str, kind: type):
    """A ``--member`` option's text as a value of ``kind``, by the rule the flags follow."""
    if kind is bool:
        typed, rule = BOOLEANS.get(value.strip().lower()), "true or false (or 1/0, yes/no)"
    elif kind is int:
        typed = int(value) if INTEGER.fullmatch(value.strip()) else None
        rule = "an integer in ASCII digits, e.g. 10"
    elif kind is float:
        typed, rule = ascii_number(value), "a number in ASCII notation, e.g. 2e-5"
    else:
        return value
    if typed is None:
        raise ParameterError("member", spec, f"{key}={value!r} is not a {kind.__name__}: write "
                             f"{rule}")
    return typed


def cross_validate_members(dataset: str, family: str,
                           members: list[tuple[str, str, PairTrainingArguments]], *,
                           overwrite: bool = False, eval_data: DevSplit | None = None,
                           **load_kwargs):
    """:func:`cross_validate` of each member ``(name, model path, arguments)`` into its
    ``args.output_dir``, then their ensembles per fold (:func:`~trainers.combination.cv_ensemble`:
    rank average and stack, both taking the other folds' out-of-fold predictions); an ensemble
    needs two members or more (one model's CV is :func:`cross_validate`)."""
    if len(members) < 2:
        raise ParameterError("members", [name for name, _, _ in members], "an ensemble needs >= 2 "
                             "members; one model's CV is cross_validate()")
    results = {name: cross_validate(dataset, family, model, args, overwrite=overwrite,
                                    eval_data=eval_data, **load_kwargs)
               for name, model, args in members}
    runs = {name: {config: load_run(r.output_dir) for config, r in folds.items()}
            for name, folds in results.items()}
    return results, cv_ensemble(runs)
