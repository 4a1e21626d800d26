"""Choosing a checkpoint on a dev split of other data: evaluate during training on pairs annotated
apart from the training data (e.g. train on STR-2021, evaluate each epoch on SemRel-2024's
English dev), keep the best checkpoint by a named metric, record the curve.

The Trainer does the choosing (transformers' ``eval_strategy``, ``load_best_model_at_end``,
``metric_for_best_model``, ``greater_is_better``; :func:`selection_arguments` sets them): after
each epoch (or every ``eval_steps`` steps) it scores the dev rows with
:func:`~trainers.trainer.compute_metrics` and saves a checkpoint; at the end it loads the one
with the best metric. A checkpoint chosen on dev makes the dev figure optimistic (the maximum of
noisy estimates): report the figure of data that chose nothing beside it.

Bad input is refused before training: a metric that the evaluation does not compute, a dev
split without gold scores, a dev dataset whose native score range differs from the training
data's (labels would be scaled differently), a dev split that is the split the run is then
scored on or holds any of its pairs (its figure would be chosen on it), a dev split that holds
pairs the run trains on (pairs compared by content: SemRel-2024's English train is STR-2021),
unless ``selection_overlap="omit"``, which chooses on the dev split's other pairs (:func:`chosen_on`)
and counts the omitted ones in the record and the card.
This module imports the standard library only (the CLI's flags, :mod:`~trainers.cli_flags`, read
its metrics and splits); data and torch are imported where a function needs them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

from semrel.metrics.errors import ParameterError

# metric name -> greater is better; each is a key of compute_metrics (or the eval loss: the MSE term)
METRICS = {"spearman": True, "pearson": True, "mse": False, "loss": False}
DEV_SPLITS = ("dev", "validation")  # tried in this order when no split is named; never `test`


def check_metric(name: str) -> str:
    """The metric's name without transformers' ``eval_`` prefix; a ParameterError unless it is
    one of :data:`METRICS`."""
    bare = name[len("eval_"):] if isinstance(name, str) and name.startswith("eval_") else name
    if bare not in METRICS:
        raise ParameterError("metric_for_best_model", name, f"must be one of {tuple(METRICS)} "
                             "(what the evaluation computes)")
    return bare


def selection_arguments(metric: str = "spearman", eval_steps: int | None = None) -> dict:
    """``TrainingArguments`` keyword arguments for choosing on dev: evaluate and save a checkpoint
    each epoch (or every ``eval_steps`` steps), load the best by ``metric`` at the end, keep
    only the best and the latest checkpoint while training (``save_total_limit=1``: the latest
    stays for ``resume``; the best alone at the end)."""
    metric = check_metric(metric)
    if eval_steps is not None and (isinstance(eval_steps, bool) or not isinstance(eval_steps, int)
                                   or eval_steps < 1):
        raise ParameterError("eval_steps", eval_steps, "must be an integer >= 1 (evaluate every "
                             "N steps; leave it out to evaluate each epoch)")
    strategy = "epoch" if eval_steps is None else "steps"
    kwargs = {"eval_strategy": strategy, "save_strategy": strategy, "load_best_model_at_end": True,
              "metric_for_best_model": metric, "greater_is_better": METRICS[metric],
              "save_total_limit": 1}
    if eval_steps is not None:
        kwargs.update(eval_steps=eval_steps, save_steps=eval_steps)
    return kwargs


@dataclass(frozen=True)
class DevSplit:
    """The split of a loaded dataset (:class:`~semrel.dataset_scripts.pairs.PairData`) that training is
    evaluated on; ``name`` is ``<data name>/<split>``; ``omitted``: how many of its pairs were left
    out as pairs the run trains on (:func:`chosen_on`; None: none could be)."""

    data: object
    split: str
    omitted: int | None = None

    @property
    def name(self) -> str:
        return f"{self.data.name}/{self.split}"

    @property
    def rows(self):
        return self.data.splits[self.split]


def dev_split(data, split: str | None = None) -> DevSplit:
    """``split`` of ``data`` (default: its first of :data:`DEV_SPLITS`), checked to hold gold
    scores: a split with no ``score`` column, or a null score in every row (e.g. a test split
    released without labels), is a ParameterError. A null score in some rows is bad data, refused
    with its row when the split is prepared."""
    splits = list(data.splits)
    if split is None:
        split = next((s for s in DEV_SPLITS if s in data.splits), None)
        if split is None:
            raise ParameterError("eval_split", None, f"must be given: {data.name} has no "
                                 f"{' or '.join(DEV_SPLITS)} split (splits: {', '.join(splits)})")
    if split not in data.splits:
        raise ParameterError("eval_split", split, f"must be a split of {data.name}: "
                             f"{', '.join(splits)}")
    rows = data.splits[split]
    scores = rows["score"] if "score" in rows.column_names else []
    if not any(s is not None and not (isinstance(s, float) and math.isnan(s)) for s in scores):
        raise ParameterError("eval_split", split, f"{data.name}/{split} has no gold scores (no "
                             f"score column, or a null score in all {len(rows)} rows): a split "
                             "without labels cannot choose a checkpoint")
    if len(rows) < 3:
        raise ParameterError("eval_split", split, f"{data.name}/{split} has {len(rows)} rows; "
                             "correlations need >= 3")
    return DevSplit(data, split)


def load_dev(dataset, config: str = "default", split: str | None = None, *, score_range=None,
             mirror=None, cache_dir=None, **builder_kwargs) -> DevSplit:
    """:func:`~semrel.dataset_scripts.pairs.load_pairs` of the dev data (anything it takes), then
    :func:`dev_split`; its errors name the ``eval_*`` parameters. ``mirror`` and builder
    options are passed only to a registry dataset (they may have been given for the training
    data)."""
    from semrel.dataset_scripts.pairs import load_pairs
    from semrel.dataset_scripts.registry import REGISTRY

    registry = isinstance(dataset, str) and dataset in REGISTRY
    extra = ({"mirror": mirror, **builder_kwargs} if registry else {})
    try:
        data = load_pairs(dataset, config, score_range=score_range, cache_dir=cache_dir, **extra)
    except ParameterError as exc:
        if exc.parameter in ("dataset", "config", "score_range"):
            raise ParameterError(f"eval_{exc.parameter}", exc.value, exc.rule) from None
        raise
    return dev_split(data, split)


def check_selection(data, dev: DevSplit | None, args, held_out: str | None = None,
                    trained=("train",)) -> None:
    """What :func:`~trainers.fitting.fit` checks before training with ``dev`` (or without):
    evaluation on and a metric the evaluation computes, in the direction that is better for
    it; the dev data on the training data's native score range and, where the run is scored on
    ``data``'s ``test`` split (``held_out``), holding none of that split (by name, or any of its
    pairs: compared as :func:`~trainers.run_folder.seen.pair_hashes` keys them; a run scored on
    ``validation`` may choose on it, and its figure is then a dev figure), nor of a split it
    trains on (``trained``), unless ``args.selection_overlap`` is ``"omit"`` and >= 3 of its
    pairs are left once those are omitted (:func:`chosen_on`); ``load_best_model_at_end`` and
    ``selection_overlap="omit"`` only with dev data."""
    if dev is None:
        for name, value in (("load_best_model_at_end", True), ("selection_overlap", "omit")):
            if getattr(args, name, None) == value:
                raise ParameterError(name, value, "needs eval_data (the dev split a checkpoint "
                                     "is chosen on)")
        return
    if str(getattr(args.eval_strategy, "value", args.eval_strategy)) == "no":
        raise ParameterError("eval_strategy", "no", "must be 'epoch' or 'steps' when eval_data is "
                             "given (selection_arguments() sets it)")
    if args.metric_for_best_model is not None:
        metric = check_metric(args.metric_for_best_model)
        if bool(args.greater_is_better) != METRICS[metric]:
            raise ParameterError("greater_is_better", args.greater_is_better, f"must be "
                                 f"{METRICS[metric]} for metric {metric!r}")
    if tuple(dev.data.score_range) != tuple(data.score_range):
        raise ParameterError("eval_dataset", dev.data.name, f"has the native score range "
                             f"{list(dev.data.score_range)}, the training data {data.name} "
                             f"{list(data.score_range)}: labels would be scaled differently; "
                             "evaluate on data of the same scale")
    chosen = set(_keys(dev.rows))
    if held_out == "test":  # a run scored on validation may choose on it: a dev figure
        scored, rows = f"{data.name}/{held_out}", data.splits[held_out]
        shared = _shared(rows, chosen)
        if dev.name == scored or shared:
            what = "is" if dev.name == scored else f"holds {shared} of the {len(rows)} pairs of {scored},"
            raise ParameterError("eval_split", dev.split, f"{dev.name} {what} the split this run is "
                                 "scored on (reported as held out): a checkpoint chosen on it makes "
                                 "that figure optimistic; choose on other pairs ({eval_dataset}, "
                                 "{eval_config}, {eval_split})")
    named = next((s for s in trained if dev.name == f"{data.name}/{s}"), None)
    shared = sum(_shared(data.splits[s], chosen) for s in trained)
    train, instead = f"{data.name}/{'+'.join(trained)}", "fix the epochs instead (no {eval_dataset})"
    left = len(chosen_on(data, dev, trained).rows)
    if getattr(args, "selection_overlap", "refuse") == "omit":
        if left < 3:
            raise ParameterError("selection_overlap", "omit", f"{dev.name} has {left} of its "
                                 f"{len(dev.rows)} pairs left once those {train} holds are omitted: "
                                 f"correlations need >= 3; choose on other pairs or {instead}")
    elif named or shared:
        what = f"is {data.name}/{named}" if named else \
            f"holds {shared} of the {sum(len(data.splits[s]) for s in trained)} pairs of {train}"
        rest = (f", choose on other pairs, or on its other {left} ({{selection_overlap}} omit)"
                if left >= 3 else " or choose on other pairs")
        raise ParameterError("eval_split", dev.split, f"{dev.name} {what}, which this run trains on "
                             f"(train_splits={'+'.join(trained)}): a checkpoint chosen on training "
                             f"pairs is not chosen; {instead}{rest}")


def chosen_on(data, dev: DevSplit | None, trained=("train",), args=None) -> DevSplit | None:
    """The pairs of ``dev`` a run on ``data``'s ``trained`` splits chooses on: with ``args``
    whose ``selection_overlap`` is ``"refuse"``, ``dev`` as it is (:func:`check_selection`
    refused it if it holds any of them); else (and without ``args``) ``dev`` without the pairs
    those splits hold, their number in ``omitted``."""
    if dev is None or (args is not None and getattr(args, "selection_overlap", "refuse") != "omit"):
        return dev
    import datasets

    trains = {h for s in trained for h in _keys(data.splits[s])}
    kept = [i for i, h in enumerate(_keys(dev.rows)) if h not in trains]
    rows = dev.rows.select(kept)
    narrowed = replace(dev.data, splits=datasets.DatasetDict({**dev.data.splits, dev.split: rows}))
    return DevSplit(narrowed, dev.split, omitted=len(dev.rows) - len(kept))


def _keys(rows) -> list[str]:
    """The pair hash of each of ``rows`` (:func:`~trainers.run_folder.seen.pair_hashes`: either
    order, case, white space and format characters aside, with the condition)."""
    from .run_folder.seen import pair_hashes

    condition = rows["condition"] if "condition" in rows.column_names else None
    return pair_hashes(rows["sentence1"], rows["sentence2"], condition)


def _shared(rows, hashes: set[str]) -> int:
    """How many of ``rows`` are pairs ``hashes`` holds."""
    return sum(h in hashes for h in _keys(rows))


def selection_record(state, dev: DevSplit, args) -> dict:
    """What a run records about its choice (``selection`` of its figures, the card): the dev
    split, the metric and its direction, the curve (every evaluation's epoch, step and
    metrics, on the [0, 1] label scale), the kept checkpoint (its step, epoch and metric;
    the last evaluation's when nothing was chosen), the dev pairs it was chosen on and, where
    pairs shared with training could be omitted (:func:`chosen_on`), how many were."""
    metric = check_metric(args.metric_for_best_model or "loss")
    curve = [{"epoch": round(float(e["epoch"]), 4), "step": int(e["step"]),
              **{m: _finite(e[f"eval_{m}"]) for m in METRICS if f"eval_{m}" in e}}
             for e in state.log_history if f"eval_{metric}" in e]
    best = state.best_model_checkpoint
    step = int(Path(best).name.rsplit("-", 1)[-1]) if best else (curve[-1]["step"] if curve else 0)
    kept = next((e for e in curve if e["step"] == step), None)
    return {"data": dev.name, "metric": metric, "greater_is_better": METRICS[metric],
            "curve": curve, "kept": kept, "checkpoint": Path(best).name if best else None,
            "pairs": len(dev.rows), **({} if dev.omitted is None else {"omitted": dev.omitted})}


def omitted_note(selection: dict) -> str:
    """How many dev pairs chose and how many shared with training were omitted ("chosen on 54 of
    102 validation pairs; 48 shared with train omitted"); empty where none could be."""
    if selection.get("omitted") is None:
        return ""
    pairs, omitted = selection["pairs"], selection["omitted"]
    return (f"chosen on {pairs} of {pairs + omitted} {selection['data'].rsplit('/', 1)[-1]} pairs; "
            f"{omitted} shared with train omitted")


def selection_line(name: str, selection: dict) -> str:
    """The output's line about a run that chose its checkpoint on dev: the curve, the kept
    epoch, the :func:`omitted_note`."""
    metric, kept = selection["metric"], selection["kept"] or {}
    curve = ", ".join(f"{e['epoch']:g}: " + ("undefined" if e.get(metric) is None else
                                              f"{e[metric]:.4f}") for e in selection["curve"])
    note = omitted_note(selection)
    return (f"{name}: {metric} on {selection['data']} by epoch ({curve}); kept epoch "
            f"{kept.get('epoch', 0):g} ({selection['checkpoint']})" + (f"; {note}" if note else ""))


def _finite(value) -> float | None:
    """A metric as recorded: None where it is undefined (constant predictions give NaN)."""
    value = float(value)
    return value if math.isfinite(value) else None


def card_section(selection: dict) -> str:
    """The model card's "Checkpoint selection" section (empty without a selection)."""
    if not selection:
        return ""
    metric, kept = selection["metric"], selection.get("kept") or {}
    names = [m for m in METRICS if any(m in e for e in selection["curve"])]
    lines = ["| epoch | step | " + " | ".join(names) + " |", "|---" * (2 + len(names)) + "|"]
    for e in selection["curve"]:
        mark = " (kept)" if kept and e["step"] == kept.get("step") else ""
        lines.append(f"| {e['epoch']:g}{mark} | {e['step']} | "
                     + " | ".join(f"{e[m]:.4f}" if e.get(m) is not None else "" for m in names)
                     + " |")
    better = "higher" if selection["greater_is_better"] else "lower"
    return (f"\n\n## Checkpoint selection\n\nEvaluated on `{selection['data']}` during training; "
            f"the checkpoint with the best `{metric}` ({better} is better) was kept "
            f"(`{selection['checkpoint']}`). A figure chosen on this split is optimistic for it: "
            "judge the model on data that chose nothing."
            + (f" The checkpoint was {note} (`selection_overlap: omit`)." if (note := omitted_note(selection))
               else "") + "\n\n" + "\n".join(lines))

