"""Rank average against learned stacks over the SemRel-2024 English recipe's members, on eng dev
(250 pairs). Nothing is trained: the members' dev predictions at their kept epoch are read.

The figures:
- each member's dev Spearman;
- the recipe's rank average (its ``eng_dev.csv``, written by ``scripts/train_semrel_2024_recipe.py``,
  whose ``recipe.json`` names the member folders);
- learned stacks fit on dev only: ridge on the members' scores, ridge with Dice as a feature, and
  gradient boosting with Dice. UAlberta's winning stack was XGBoost with Dice; ``gbm`` is
  scikit-learn's histogram gradient boosting. A stack's figure on its own fit rows measures
  nothing, so its dev figure is cross-fitted (:func:`semrel.trainers.stacking.cross_fitted`):
  5 shuffled folds, each row predicted by the stack fit on the other four.

Every figure has its 95 % interval (paired bootstrap, 1,000 resamples, seed 0). Each stack is
compared with the rank average pairwise (:func:`semrel.metrics.compare.compare_correlations`):
stack − rank with its paired-bootstrap interval, and Williams' p for Pearson. The members chose
their epochs on this dev split, so every figure here is optimistic for it.

``--member DIR`` (repeat) replaces the recipe's members (e.g. the recipe's plus a second seed of
cross@mpnet): their own rank average is then measured too, and compared with the recipe's. It
ranks each member's dev scores among the 250 dev pairs and averages the ranks
(:func:`~semrel.trainers.combination.rank_average` without a reference, as the recipe's
``--final`` does among the test pairs), so only the members' dev predictions are read: a member
trained on a lent GPU, whose weights stayed there, is measured as well.
``--record FILE`` writes the entry :data:`KEY` (``--key``: another).

    python benchmarks/bench_english_stacks.py --recipe runs/semrel-2024-recipe --record benchmarks/results.json
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import numpy as np

from semrel import cli

KEY = "semrel_2024_english_stacks"
STACKS = {"ridge": ("ridge", ()), "ridge + Dice": ("ridge", ("dice",)), "gbm + Dice": ("gbm", ("dice",))}
FOLDS = 5


def interval(predictions, labels) -> dict:
    from semrel.metrics.correlation_intervals import correlation_intervals

    s = correlation_intervals(predictions, labels).spearman
    return {"spearman": round(s.value, 4), "ci": [round(s.interval.low, 4), round(s.interval.high, 4)]}


def versus(predictions, reference, labels) -> dict:
    from semrel.metrics.compare import compare_correlations

    c = compare_correlations(predictions, reference, labels)
    d = c.spearman_difference
    return {"difference": round(d.value, 4), "ci": [round(d.interval.low, 4), round(d.interval.high, 4)],
            "bootstrap_p": round(c.spearman_p_value, 4), "williams_p": round(c.williams.p_value, 4)}


def recipe_dev(path: Path, members: Path, ids: list, labels) -> np.ndarray:
    """The recipe's ``PairID,Pred_Score`` dev file in the members' row order (``members`` names
    them in errors): every one of their pairs once, no other."""
    from semrel.metrics.errors import DataValidationError
    from semrel.metrics.submission import IdScores, align, read_predictions

    try:
        return align(read_predictions(path), IdScores(str(members), ids, labels))
    except DataValidationError as error:
        raise SystemExit(str(error)) from None


def markdown(entry: dict) -> str:
    """The entry as the table of benchmarks/results/english-recipe.md: each member, the recipe's rank average,
    the --member set's own rank average where measured, each stack; the difference to the
    recipe's rank average with its interval and p."""
    def cell(fig: dict) -> str:
        low, high = fig["ci"]
        return f"{fig['spearman']:.4f} [{low:.4f}, {high:.4f}]"

    def diff(fig: dict) -> str:
        d = fig["versus_rank"]
        low, high = d["ci"]
        return f"{d['difference']:+.4f} [{low:+.4f}, {high:+.4f}] (p = {d['bootstrap_p']:.3f})".replace("-", "−")

    rows = [(f"member `{Path(m).name}`", cell(f), "") for m, f in entry["members"].items()]
    rows.append(("**rank average (the recipe)**", cell(entry["rank average (the recipe)"]), "0"))
    if "rank average of these members" in entry:
        mine = entry["rank average of these members"]
        rows.append(("rank average of these members", cell(mine), diff(mine)))
    rows += [(f"stack: {name}", cell(f), diff(f)) for name, f in entry["stacks (cross-fitted on dev)"].items()]
    head = ["| | eng dev Spearman [95 % CI] | − the recipe's rank average [95 % CI] |", "|---|---|---|"]
    return "\n".join(head + [f"| {a} | {b} | {c} |" for a, b, c in rows])


def recipe_members(recipe: Path) -> list[Path]:
    """The member folders of the recipe run in ``recipe`` (its ``recipe.json``)."""
    record = recipe / "recipe.json"
    if not record.is_file():
        raise SystemExit(f"{record}: not found; run scripts/train_semrel_2024_recipe.py --output {recipe} first")
    return [recipe / name for name in json.loads(record.read_text())["members"]]


def main(argv=None) -> None:
    from semrel.trainers.run_folder import load_run
    from semrel.trainers.stacking import cross_fitted, stack_inputs

    ap = cli.Parser(prog="bench_english_stacks.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--recipe", type=Path, default=Path("runs/semrel-2024-recipe"),
                    help="the recipe script's output folder (its members and eng_dev.csv)")
    ap.add_argument("--member", action="append", type=Path, default=[], metavar="DIR",
                    help="a member's run folder, fit with eng dev as its dev split (repeat; default: "
                         "the recipe's)")
    ap.add_argument("--record", type=Path, metavar="FILE", help="write the entry --key into FILE")
    ap.add_argument("--key", default=KEY, help=f"the entry's key in FILE (default: {KEY})")
    args = ap.parse_args(argv)
    recipe = recipe_members(args.recipe)
    members = args.member or recipe
    rows = {features: stack_inputs(members, features=features) for features in {f for _, f in STACKS.values()}}
    plain = rows[()]
    labels = plain.labels
    ids = load_run(members[0], "selection_predictions.json").ids
    result = {"members": {str(m): interval(plain.scores[:, i], labels) for i, m in enumerate(members)}}
    rank = recipe_dev(args.recipe / "eng_dev.csv", members[0], ids, labels)
    result["rank average (the recipe)"] = interval(rank, labels)
    if [m.resolve() for m in members] != [m.resolve() for m in recipe]:
        from semrel.trainers.combination import rank_average

        mine = rank_average(plain.scores)
        result["rank average of these members"] = {**interval(mine, labels),
                                                    "versus_rank": versus(mine, rank, labels)}
    stacks = {}
    for name, (learner, features) in STACKS.items():
        predicted = cross_fitted(rows[features], learner, features=features, folds=FOLDS)
        stacks[name] = {**interval(predicted, labels), "versus_rank": versus(predicted, rank, labels)}
    result["stacks (cross-fitted on dev)"] = stacks
    record = {"command": shlex.join(["python", "benchmarks/bench_english_stacks.py", *(argv or sys.argv[1:])]),
              "n": int(labels.size), "folds": FOLDS, **result}
    print(json.dumps(record, indent=1))
    if args.record:
        from semrel.publishing.results import store

        store(args.key, record, args.record)


if __name__ == "__main__":
    main()
