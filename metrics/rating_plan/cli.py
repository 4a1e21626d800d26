"""``semrel ratings plan``: where a rating-scale collection stands and how many raters reach a target.

    semrel ratings plan FILE [--raters K] [--target R] [--scale LO-HI] [--max-raters N] [--next N]
                             [--json] [--output DIR] [--seed S] [--trials N] [--resamples N]

FILE is a CSV with columns item, annotator, score (optional seconds, is_random): one row per
rating; a second row of the same item and annotator is a re-test. Printed: the reliability of
the item means now (split-half, Spearman–Brown corrected) and Krippendorff's α with intervals,
the projected reliability at K raters per item by Spearman–Brown and by resampling the file's own
raters (which to trust, and why), the raters and ratings a ``--target`` needs, the least certain
items and the annotators the checks flag; ``--next N``: which items N more ratings should go to.
``--json``: the same as one JSON object on standard output (``projected.reliability``: at K).
``--output DIR``: ``reliability.png``, ``item_means.png``, ``plan.json`` (and ``next_batch.csv``).
Bad input is one line naming the file and the rule, exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from semrel.command_line import UsageError, add_command, add_group, at_least, number


def register(commands) -> None:
    """Add ``ratings plan`` to the ``semrel`` command."""
    sub = add_group(commands, "ratings", "rating-scale collections: reliability now and a plan", __doc__)
    plan_ = add_command(sub, "plan", plan, "reliability of a rating file now, and the raters a target needs")
    plan_.add_argument("file", type=Path, metavar="FILE", help="CSV: item, annotator, score [, seconds, is_random]")
    plan_.add_argument("--raters", type=at_least(1), metavar="K",
                       help="raters per item to project to (default: twice the median now)")
    plan_.add_argument("--target", type=_target, metavar="R", help="reliability to reach, in (0, 1)")
    plan_.add_argument("--scale", type=_scale, metavar="LO-HI",
                       help="the rating scale, e.g. 1-5 (default: read from the ratings, refusing mixed scales)")
    plan_.add_argument("--max-raters", type=at_least(1), metavar="N",
                       help="the most raters per item any budget can buy (e.g. the annotator pool)")
    plan_.add_argument("--next", type=at_least(1), metavar="N", dest="next_ratings",
                       help="where N more ratings help most: the items with the widest intervals "
                            "(with --output: next_batch.csv)")
    plan_.add_argument("--json", action="store_true", help="print the plan as one JSON object")
    plan_.add_argument("--output", type=Path, metavar="DIR", help="write the pictures and plan.json to DIR")
    plan_.add_argument("--seed", type=at_least(0), default=0, help="seed of the splits and resamples")
    plan_.add_argument("--trials", type=at_least(10), default=200, help="random rater splits per estimate")
    plan_.add_argument("--resamples", type=at_least(50), default=400, help="bootstrap resamples over items")


def _target(text: str) -> float:
    value = number(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1), not {text!r}")
    return value


def _scale(text: str) -> tuple[float, float]:
    from semrel.metrics.rating_plan.table import parse_scale

    try:
        return parse_scale(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _flag(parameter: str) -> str:
    """A parameter as the command line names it: ``max_raters`` -> ``--max-raters``; ``FILE`` as is."""
    return parameter if parameter.isupper() else "--" + parameter.replace("_", "-")


def plan(args) -> int:
    from semrel.metrics.errors import ParameterError
    from semrel.metrics.output_files import check_output, write_whole
    from semrel.metrics.rating_plan.plan import plan_ratings
    from semrel.metrics.rating_plan.table import read_ratings

    if args.output is not None:
        try:
            check_output(args.output, "output", {"FILE": [args.file]}, folder=True)
        except ParameterError as exc:
            raise UsageError(exc.worded(name=_flag, show=str, sep=" ")) from None
    table = read_ratings(args.file, scale=args.scale)
    try:
        result = plan_ratings(table, raters=args.raters, target=args.target, max_raters=args.max_raters,
                              seed=args.seed, trials=args.trials, n_resamples=args.resamples,
                              next_ratings=args.next_ratings)
    except ParameterError as exc:
        raise UsageError(f"{args.file}: " + exc.worded(name=_flag, show=str, sep=" ")) from None
    figures = result.as_dict()
    if args.json:
        print(json.dumps(figures, indent=1))
    else:
        print_plan(args.file, result)
    sys.stdout.flush()
    if args.output is not None:
        from semrel.metrics.rating_plan.plots import write_pictures

        written = write_pictures(result, args.output)
        written.append(write_whole(args.output / "plan.json", json.dumps(figures, indent=1) + "\n", "--output"))
        if result.next_batch is not None:
            written.append(write_whole(args.output / "next_batch.csv", result.next_batch.to_csv(index=False),
                                       "--output"))
        print("wrote " + ", ".join(map(str, written)), file=sys.stderr)
    return 0


def _r(x) -> str:
    return f"{x.value:.3f} [{x.low:.3f}, {x.high:.3f}]"


def print_plan(path: Path, result) -> None:
    """The plan as a few lines of text."""
    p = result.plan
    lo, med, hi = result.raters
    print(f"{path}: {result.n_items} items, {result.n_annotators} annotators, {result.n_ratings} ratings "
          f"({lo}-{hi} raters per item, median {med:g}), {result.n_retests} re-tests")
    print(f"reliability of the item means now  {_r(p.now)}   (split-half r {p.split_half:.3f}, Spearman-Brown)")
    print(f"Krippendorff's alpha (interval)    {_r(result.alpha)}")
    print("measured with k raters per item    " + "  ".join(f"{k}: {t.value:.3f}" for k, t in
                                                          zip(p.trace_raters, p.trace, strict=True)))
    for projection in (p.spearman_brown, p.resampled):
        print(f"at K={p.raters} raters, {projection.method:<15} {_r(projection.reliability)}  "
              f"asymptote {projection.asymptote.value:.3f}"
              + (f"  target needs {_k(projection.raters_needed)} raters per item"
                 if projection.raters_needed is not None else ""))
    print(f"trust: {p.trusted} ({p.why})" + ("; the two disagree" if p.disagree else "; the two agree"))
    if p.ratings_needed is not None:
        n = p.ratings_needed
        print(f"to reach {p.target:g}: {n.value:,.0f} more ratings [{n.low:,.0f}, {n.high:,.0f}]")
    least = result.least_certain(5)
    print("least certain items: " + ", ".join(f"{row.item} ({row.low:.2f}-{row.high:.2f})"
                                              for row in least.itertuples()))
    if result.next_batch is not None:
        batch = result.next_batch
        print(f"next {int(batch['more'].sum())} ratings: to {len(batch)} items, widest intervals first: "
              + ", ".join(f"{row.item} +{row.more}" for row in batch.head(5).itertuples()))
    flagged = result.annotators.table[result.annotators.table["flags"] != ""]
    print(f"annotators flagged: {len(flagged)} of {result.n_annotators}"
          + "".join(f"\n  {name}: {row['flags']} (loo r {row['loo_r']:.2f} over {row['loo_items']} items)"
                    for name, row in flagged.head(10).iterrows()))


def _k(x) -> str:
    return f"{x.value:g} [{x.low:g}, {x.high:g}]"
