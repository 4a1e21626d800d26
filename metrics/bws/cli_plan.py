"""``semrel bws plan FILE... [--per-tuple K] [--target R] [--json] [--output DIR] [--seed S]``.

Where a BWS collection stands (SHR with the spread of its splits, item scores with bootstrap and
Bradley–Terry intervals, the least certain items, per-annotator checks where the NRC file has an
``annotator`` column, time flags where it has ``seconds``) and the plan: SHR projected at K
annotations per tuple by Spearman–Brown and by resampling, the annotations reaching ``--target``
with their spread, and which projection to read (:mod:`semrel.metrics.bws.plan`). ``--json``: one
JSON document on standard output; ``--output DIR``: per file ``<stem>-reliability.png``,
``<stem>-items.png`` and ``<stem>-items.csv``. Notes (one line each) go to standard error.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
from pathlib import Path

from semrel.command_line import UsageError, add_command, at_least, number

log = logging.getLogger(__name__)


def _share(text: str) -> float:
    value = number(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1) (a split-half reliability), not {text!r}")
    return value


def _positive(text: str) -> float:
    value = number(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a number > 0, not {text!r}")
    return value


def register(sub) -> None:
    """Add ``bws plan`` to the ``bws`` subcommands ``sub``."""
    plan_ = add_command(sub, "plan", run, "where a BWS collection stands and how many more annotations reach a target",
                        description=__doc__)
    plan_.add_argument("files", nargs="+", type=Path, metavar="FILE")
    plan_.add_argument("--layout", choices=("auto", "nrc", "semeval"), default="auto",
                       help="as semrel bws score: nrc, semeval, or auto (nrc if the header has BestItem and WorstItem)")
    plan_.add_argument("--on-invalid", choices=("raise", "omit"), default="raise",
                       help="raise: stop at the first bad row; omit: drop bad rows and count them")
    plan_arguments(plan_, "the file's")
    plan_.add_argument("--annotator-column", metavar="NAME",
                       help="NRC files: the column naming the annotator (default: 'annotator' where the file has it)")
    plan_.add_argument("--time-column", metavar="NAME",
                       help="NRC files: seconds per annotation (default: 'seconds' where the file has it)")


def plan_arguments(parser, now: str) -> None:
    """The options of the plan itself (``bws plan`` and ``annotate status``); ``now`` names where
    the annotations per tuple so far are counted."""
    parser.add_argument("--per-tuple", type=_positive, metavar="K",
                        help=f"project SHR at K annotations per tuple (default: twice {now})")
    parser.add_argument("--target", type=_share, metavar="R", help="split-half reliability to reach, in (0, 1)")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of the text")
    parser.add_argument("--output", type=Path, metavar="DIR", help="write pictures and item intervals to DIR")
    parser.add_argument("--seed", type=at_least(0), default=0, help="seed of every random split and resample")
    parser.add_argument("--trials", type=at_least(2), default=1000, help="random half splits of SHR now")
    parser.add_argument("--resamples", type=at_least(2), default=1000, help="bootstrap replicates of item intervals")
    parser.add_argument("--repeats", type=at_least(2), default=20, help="random orders of the resampled curve")
    parser.add_argument("--least", type=at_least(1), default=10, help="least certain items listed")


def run(args) -> int:
    from ..errors import ParameterError
    from ..output_files import check_output

    if args.output is not None:
        try:
            check_output(args.output, "--output", {"FILE": args.files}, folder=True)
        except ParameterError as exc:
            raise UsageError(exc.worded(show=str, sep=" ")) from None
        stems = [path.stem for path in args.files]
        twice = sorted({stem for stem in stems if stems.count(stem) > 1})
        if twice:
            raise UsageError(f"--output {args.output}: two FILEs are named {twice[0]!r}.*: their pictures would "
                             "replace each other; plan them one at a time")
    documents = []
    for path in args.files:
        documents.append(plan_one(path, *read(path, args), args))
    if args.json:
        print(json.dumps({"files": documents}, indent=2, ensure_ascii=False, allow_nan=False))
    return 0


def plan_one(path: Path, ann, annotators, seconds, args) -> dict:
    """The plan of ``ann`` (read from ``path``) as a JSON document: notes logged, the pictures
    written to ``args.output`` where given, and the text printed unless ``args.json``."""
    from .plan import bws_plan

    result = bws_plan(ann, per_tuple=args.per_tuple, target=args.target, trials=args.trials,
                      resamples=args.resamples, repeats=args.repeats, least=args.least, seed=args.seed,
                      annotators=annotators, seconds=seconds, source=str(path))
    doc = document(path, ann, result)
    for line in notes(path, ann, result):
        log.warning("%s", line)
    if args.output is not None:
        doc["files_written"] = [str(p) for p in write_output(args.output, path, ann, result)]
    if not args.json:
        print_text(doc)
        if "files_written" in doc:
            print(f"  wrote {', '.join(doc['files_written'])}")
    return doc


def read(path: Path, args):
    """(annotations, annotator per annotation or None, seconds per annotation or None)."""
    import numpy as np

    from ..errors import DataValidationError
    from ..text_numbers import ascii_number
    from .readers import detect_layout, read_header, read_nrc, read_semeval_2024, read_table

    layout = detect_layout(read_header(path)) if args.layout == "auto" else args.layout
    asked = [flag for flag, value in (("--annotator-column", args.annotator_column),
                                      ("--time-column", args.time_column)) if value is not None]
    if layout == "semeval":
        if asked:
            raise DataValidationError(str(path), None, f"{asked[0]}: a SemEval-2024 layout file has no such column")
        return read_semeval_2024(path, on_invalid=args.on_invalid), None, None
    ann = read_nrc(path, on_invalid=args.on_invalid)
    header, table = read_table(path)
    cells = table[ann.rows - 1]

    def column(given, default, flag):
        if given is not None and given not in header:
            raise DataValidationError(str(path), None, f"{flag} {given}: no such column", f"header is {header}")
        name = default if given is None else given
        return cells[:, header.index(name)] if name in header else None

    annotators = column(args.annotator_column, "annotator", "--annotator-column")
    seconds = column(args.time_column, "seconds", "--time-column")
    time_column = args.time_column or "seconds"
    if seconds is not None:
        values = np.array([ascii_number(v) for v in seconds.tolist()], dtype=np.float64)  # None -> nan
        bad = ~(values >= 0)
        if bad.any():
            i = int(np.argmax(bad))
            raise DataValidationError(str(path), int(ann.rows[i]), f"{time_column} is not a number >= 0",
                                      repr(seconds[i]))
        seconds = values
    return ann, annotators, seconds


def _finite(value):
    """A float for JSON: None where infinite (no budget) or not a number."""
    return float(value) if value is not None and math.isfinite(value) else None


def document(path: Path, ann, result) -> dict:
    """The plan of one file as plain JSON data."""
    now = result.now
    items = ann.items.tolist()

    def projection(p):
        out = {"shr": p.shr, "interval": [p.low, p.high], "reliability": p.reliability,
               "annotations": p.annotations, "at_cap": p.at_cap, "at_cap_interval": [p.at_cap_low, p.at_cap_high]}
        if p.target is not None:
            out.update(annotations_needed=_finite(p.needed),
                       annotations_needed_interval=[_finite(p.needed_low), _finite(p.needed_high)],
                       per_tuple_needed=_finite(p.needed / now.tuples), reachable=math.isfinite(p.needed))
        return out

    boot, lik = result.bootstrap, result.likelihood
    doc = {"file": str(path), "annotations": now.annotations, "items": len(items), "tuples": now.tuples,
           "per_tuple_now": now.per_tuple,
           "shr": {"spearman": now.shr, "interval": [now.low, now.high], "interval_over": f"{now.trials} random splits",
                   "reliability": now.corrected},
           "per_tuple": result.spearman_brown.per_tuple, "target": result.spearman_brown.target,
           "projected": {"spearman_brown": projection(result.spearman_brown),
                         "resampling": projection(result.resampling)},
           "trust": result.trust,
           "least_certain": [{"item": items[i], "score": float(boot.score[i]), "interval": [float(boot.low[i]),
                                                                                             float(boot.high[i])],
                              "bradley_terry": float(lik.score[i]),
                              "bradley_terry_interval": [float(lik.low[i]), float(lik.high[i])]}
                             for i in result.least_certain],
           "intervals": {"bootstrap": boot.method, "likelihood": lik.method, "level": boot.level},
           "always_best": [items[i] for i in result.always_best],
           "always_worst": [items[i] for i in result.always_worst]}
    checks = result.annotators
    if checks is not None:
        doc["annotators"] = [
            {"annotator": str(a), "annotations": int(n), "agreement": _finite(g),
             "interval": [_finite(lo), _finite(hi)], "random_like": bool(r),
             **({"seconds_median": float(checks.seconds_median[j]), "fast": bool(checks.fast[j]),
                 "slow": bool(checks.slow[j])} if checks.seconds_median is not None else {})}
            for j, (a, n, g, lo, hi, r) in enumerate(zip(checks.annotators, checks.annotations, checks.agreement,
                                                          checks.low, checks.high, checks.random_like, strict=True))]
    return doc


def notes(path: Path, ann, result) -> list[str]:
    """One line per thing a reader must know: items always best or worst, a target out of reach,
    checks not run."""
    out = []
    lik = result.likelihood
    for codes, what in ((result.always_best, "best"), (result.always_worst, "worst")):
        if len(codes):
            i = int(codes[0])
            out.append(f"{path}: {len(codes)} item(s) always chosen {what}, e.g. {ann.items[i]!r}: counting score "
                       f"{1 if what == 'best' else -1} with a zero-width bootstrap interval; Bradley–Terry's prior "
                       f"keeps its strength finite: score {lik.score[i]:.3f} [{lik.low[i]:.3f}, {lik.high[i]:.3f}]")
    sb, rs = result.spearman_brown, result.resampling
    if sb.target is not None and not (math.isfinite(sb.needed) or math.isfinite(rs.needed)):
        out.append(f"{path}: target {sb.target:g} is above what any budget up to 100x the annotations so far reaches: "
                   f"there SHR would be {rs.at_cap:.3f} [{rs.at_cap_low:.3f}, {rs.at_cap_high:.3f}] by resampling, "
                   f"{sb.at_cap:.3f} by Spearman–Brown")
    return [*out, *result.notes]


def print_text(doc: dict) -> None:
    sb, rs = doc["projected"]["spearman_brown"], doc["projected"]["resampling"]
    shr = doc["shr"]
    print(f"{doc['file']}: {doc['annotations']:,} annotations of {doc['items']:,} items in {doc['tuples']:,} tuples "
          f"({doc['per_tuple_now']:.2f} per tuple)")
    print(f"  SHR now {shr['spearman']:.4f} [{shr['interval'][0]:.4f}, {shr['interval'][1]:.4f}] "
          f"(over {shr['interval_over']}); reliability of all annotations 2r/(1+r) {shr['reliability']:.4f}")
    print(f"  at {doc['per_tuple']:.2f} per tuple ({sb['annotations']:,.0f} annotations): SHR {sb['shr']:.4f} "
          f"[{sb['interval'][0]:.4f}, {sb['interval'][1]:.4f}] by Spearman–Brown, {rs['shr']:.4f} "
          f"[{rs['interval'][0]:.4f}, {rs['interval'][1]:.4f}] by resampling")
    if doc["target"] is not None:
        for name, p in (("Spearman–Brown", sb), ("resampling", rs)):
            low, high = (f"{v:,.0f}" if v is not None else "out of reach" for v in p["annotations_needed_interval"])
            got = (f"{p['annotations_needed']:,.0f} annotations ({p['per_tuple_needed']:.2f} per tuple) [{low}, {high}]"
                   if p["reachable"] else "out of reach within 100x the annotations so far")
            if p["reachable"] and p["annotations_needed"] <= doc["annotations"]:
                got = f"reached already ({got})"
            print(f"  target {doc['target']:g} by {name}: {got}")
    print(f"  {doc['trust']}")
    print("  least certain items (counting score, 95 % bootstrap interval):")
    for row in doc["least_certain"]:
        print(f"    {str(row['item'])[:60]!r}: {row['score']:.3f} [{row['interval'][0]:.3f}, {row['interval'][1]:.3f}]")
    for row in doc.get("annotators", []):
        flags = [f for f in ("random_like", "fast", "slow") if row.get(f)]
        agreement = "n/a" if row["agreement"] is None else f"{row['agreement']:.3f}"
        print(f"  annotator {row['annotator']}: {row['annotations']} annotations, agreement with the others "
              f"{agreement}" + (f"  [{', '.join(flags)}]" if flags else ""))


def write_output(folder: Path, path: Path, ann, result) -> list[Path]:
    """The two pictures and the item intervals of one file in ``folder``."""
    import csv

    from ..output_files import written_whole
    from .plan_plots import items_plot, reliability_plot

    stem = path.stem
    written = [reliability_plot(folder / f"{stem}-reliability.png", result.now, result.curve,
                                result.spearman_brown, result.resampling, result.spearman_brown.target),
               items_plot(folder / f"{stem}-items.png", result.bootstrap, result.likelihood)]
    boot, lik = result.bootstrap, result.likelihood
    with written_whole(folder / f"{stem}-items.csv", "--output", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["item", "score", "low", "high", "drawn", "bradley_terry", "bt_low", "bt_high"])
        writer.writerows(zip(ann.items.tolist(), boot.score.tolist(), boot.low.tolist(), boot.high.tolist(),
                             boot.drawn.tolist(), lik.score.tolist(), lik.low.tolist(), lik.high.tolist(),
                             strict=True))
    return [*written, folder / f"{stem}-items.csv"]
