"""Cross-validation: :func:`~trainers.fitting.fit` on every config of a family of a dataset
(``cv``: ``cv-fold-*``; ``lodo``: ``lodo-*``), for one model or for several members
(``--member ENCODER@MODEL[,option=value...]``, :func:`parse_member`) whose ensembles are then
scored per fold on out-of-fold predictions (:func:`~trainers.combination.cv_ensemble`).
"""

from __future__ import annotations

from pathlib import Path

from semrel.dataset_scripts.pairs import dataset_configs, load_pairs
from semrel.metrics.errors import ParameterError

from .arguments import PairTrainingArguments, recorded_options
from .combination import cv_ensemble
from .fitting import FitResult, fit, with_output
from .options import CV_FAMILIES as FAMILIES
from .options import OPTIONS
from .run_folder import load_run, prepare_output
from .selection import DevSplit


def cross_validate(dataset: str, family: str, model_path, args: PairTrainingArguments, *,
                   overwrite: bool = False, eval_data: DevSplit | None = None,
                   **load_kwargs) -> dict[str, FitResult]:
    """:func:`~trainers.fitting.fit` on every config of a family (``cv``: ``cv-fold-*``;
    ``lodo``: ``lodo-*``) of ``dataset`` (:func:`~semrel.dataset_scripts.pairs.dataset_configs`),
    each into ``args.output_dir/<config>`` (each fold choosing its checkpoint on ``eval_data``
    when given); ``args.output_dir`` follows :func:`~trainers.run_folder.prepare_output`'s
    rules."""
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
                        with_output(args, output_dir / config), eval_data=eval_data)
            for config in configs}


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
    ``args.output_dir``, then their ensembles per fold (:func:`~trainers.combination.cv_ensemble`:
    rank average and stack, both taking the other folds' out-of-fold predictions)."""
    results = {name: cross_validate(dataset, family, model, args, overwrite=overwrite,
                                    eval_data=eval_data, **load_kwargs)
               for name, model, args in members}
    runs = {name: {config: load_run(r.output_dir) for config, r in folds.items()}
            for name, folds in results.items()}
    return results, cv_ensemble(runs)
