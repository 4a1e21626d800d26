"""``semrel bws score | reliability | design | plan``: Best-Worst Scaling files, as the NRC Perl scripts.

    semrel bws score FILE... [--layout auto|nrc|semeval] [--shr [--trials N]] [--on-invalid raise|omit]
                             [--method counting|bradley_terry|value] [--csv OUT]
    semrel bws reliability FILE... [--trials N] [--seed S] [--spearman-brown] [--method ...]
    semrel bws design ITEMS_FILE | --pairs PAIRS [--k 4] [--factor 2] [--designs 100] [--seed 0] [--csv OUT]
    semrel bws plan FILE... [--per-tuple K] [--target R] [--json] [--output DIR] [--seed S]

``score``: each file on its own, counting scores (#best - #worst) / #appearances per item, and with
``--shr`` its split-half reliability; one table row per file, ``--csv OUT`` the per-item scores
(``-`` for standard output). ``reliability``: split-half reliability alone (as
``split-half-reliability.pl``). ``design``: BWS tuples for the items of a file (one per line), as
``generate-BWS-tuples.pl``, or for the pairs of a pairs file (``--pairs``: the tuples name pair ids,
each row a ``tuple_id`` and its k pair ids). A bad file or argument is answered in at most two lines naming file,
row and rule, exit status 2; so is a ``--csv`` that is a link, a device or FIFO, a folder or one of
the files read. ``--method`` scores by counting (default), Bradley–Terry or Hollis' Value
(:mod:`semrel.metrics.bws.scoring`). ``plan``: where a collection stands and how many more
annotations reach a target (:mod:`.cli_plan`). Imports numpy only (scipy for reliability,
bradley_terry and plan).
"""

from __future__ import annotations

import csv
import logging
import sys
from pathlib import Path

from semrel.command_line import UsageError, add_command, add_group, at_least, number

log = logging.getLogger(__name__)
LAYOUTS = ("auto", "nrc", "semeval")
METHODS = ("counting", "bradley_terry", "value")  # semrel.metrics.bws.scoring.METHODS (numpy-free here)


def register(commands) -> None:
    """Add ``bws score | reliability | design`` to the ``semrel`` command."""
    sub = add_group(commands, "bws", "Best-Worst Scaling files: score, reliability, tuple design, plan", __doc__)
    score_ = add_command(sub, "score", score, "score BWS annotation files (counting, or --method)")
    _file_args(score_)
    score_.add_argument("--shr", action="store_true", help="also compute split-half reliability")
    _reliability_args(score_)
    score_.add_argument("--csv", type=Path, metavar="OUT", help="write per-item scores to OUT (- = stdout)")
    shr = add_command(sub, "reliability", reliability, "split-half reliability of BWS annotation files")
    _file_args(shr)
    _reliability_args(shr)
    shr.add_argument("--spearman-brown", action="store_true",
                     help="also report the Spearman-Brown corrected correlations 2r / (1 + r)")
    design_ = add_command(sub, "design", design, "generate BWS tuples for a list of items or a pairs file")
    source = design_.add_mutually_exclusive_group(required=True)
    source.add_argument("items", type=Path, nargs="?", metavar="ITEMS_FILE", help="one item per line (UTF-8)")
    source.add_argument("--pairs", type=Path, metavar="PAIRS",
                        help="a pairs file (pair_id, sentence1, sentence2, ... as semrel pairs writes): "
                             "the tuples name pair ids, one tuple_id per row")
    design_.add_argument("--k", type=at_least(2), default=4, help="items per tuple")
    design_.add_argument("--factor", type=number, default=2.0,
                         help="round(factor * N) tuples: each item appears about factor * k times")
    design_.add_argument("--designs", type=at_least(1), default=100,
                         help="random designs tried; the most even pair co-occurrence is kept")
    design_.add_argument("--seed", type=at_least(0), default=0, help="seed of the random designs")
    design_.add_argument("--csv", type=Path, metavar="OUT", default=Path("-"),
                         help="write the tuples to OUT (- = stdout), one per row")
    _register_plan(sub)


def _register_plan(sub) -> None:
    """``bws plan`` (:mod:`.cli_plan`)."""
    from .cli_plan import register as register_plan

    register_plan(sub)


def _file_args(parser) -> None:
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE")
    parser.add_argument("--layout", choices=LAYOUTS, default="auto",
                        help="nrc: Item1..Itemk,BestItem,WorstItem; semeval: SemEval-2024 BWS_annotations; "
                             "auto: nrc if the header has BestItem and WorstItem")
    parser.add_argument("--on-invalid", choices=("raise", "omit"), default="raise",
                        help="raise: stop at the first bad row; omit: drop bad rows and count them")
    parser.add_argument("--method", choices=METHODS, default="counting",
                        help="scoring: counting (#best - #worst) / #appearances; bradley_terry: tanh(theta / 2) "
                             "of a penalised Bradley-Terry fit; value: 2v - 1 of Hollis' Value tournament")


def _reliability_args(parser) -> None:
    parser.add_argument("--trials", type=at_least(1), default=1000, help="random half splits")
    parser.add_argument("--seed", type=at_least(0), default=0, help="seed of the random half splits")


def read(path: Path, layout: str, on_invalid: str):
    """Annotations of one file in the given (or detected) layout; returns (layout, annotations)."""
    from .readers import detect_layout, read_header, read_nrc, read_semeval_2024

    if layout == "auto":
        layout = detect_layout(read_header(path))
    reader = read_nrc if layout == "nrc" else read_semeval_2024
    return layout, reader(path, on_invalid=on_invalid)


def _check_csv(args, inputs: dict) -> None:
    """``--csv`` (unless ``-``, standard output) as an output file that is none of ``inputs``
    (:func:`~semrel.metrics.output_files.check_output`), checked before any file is read."""
    from ..errors import ParameterError
    from ..output_files import check_output

    if args.csv is not None and str(args.csv) != "-":
        try:
            check_output(args.csv, "--csv", inputs)
        except ParameterError as exc:
            raise UsageError(exc.worded(show=str, sep=" ")) from None


def score(args) -> int:
    from .scoring import bws_scores

    _check_csv(args, {"FILE": args.files})
    rows, items = [], []
    for path in args.files:
        layout, ann = read(path, args.layout, args.on_invalid)
        scores = bws_scores(ann, method=args.method)
        row = {"file": str(path), "layout": layout, **_method_column(args),
               "annotations": scores.n_annotations,
               "omitted": scores.n_skipped, "items": len(scores.items),
               "min": float(scores.score.min()), "max": float(scores.score.max())}
        if args.shr:
            from ..split_half.split_half import split_half_bws  # scipy: only when asked

            shr = split_half_bws(ann, trials=args.trials, seed=args.seed, method=args.method)
            row.update(shr_spearman=shr.spearman, shr_pearson=shr.pearson)
        rows.append(row)
        items += [(str(path), i, a, b, w, s, s01) for i, a, b, w, s, s01 in zip(
            scores.items.tolist(), scores.appearances.tolist(), scores.n_best.tolist(), scores.n_worst.tolist(),
            scores.score.tolist(), scores.score_01.tolist(), strict=True)]
    if args.csv is not None:
        write_csv(args.csv, ["file", "item", "appearances", "n_best", "n_worst", "score", "score_01"], items)
    if str(args.csv) != "-":
        print_table(rows)
    return 0


def write_csv(out: Path, header: list[str], rows) -> None:
    """CSV rows to standard output (``-``) or written whole to ``out`` (no truncated file, ever)."""
    from ..output_files import written_whole

    if str(out) == "-":
        writer = csv.writer(sys.stdout)
        writer.writerow(header)
        writer.writerows(rows)
        return
    with written_whole(out, "--csv", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(header)
        writer.writerows(rows)


def _method_column(args) -> dict:
    """A ``method`` column when scoring is not counting (counting's table has none)."""
    return {} if args.method == "counting" else {"method": args.method}


def print_table(rows: list[dict]) -> None:
    columns = list(rows[0])
    cells = [[f"{v:.4f}" if isinstance(v, float) else str(v) for v in row.values()] for row in rows]
    widths = [max(len(c), *(len(r[j]) for r in cells)) for j, c in enumerate(columns)]
    for line in [columns, *cells]:
        cells = zip(line, widths, strict=True)
        print("  ".join(v.ljust(w) if j == 0 else v.rjust(w) for j, (v, w) in enumerate(cells)))


def reliability(args) -> int:
    from ..split_half.split_half import split_half_bws  # scipy: only here

    rows = []
    for path in args.files:
        layout, ann = read(path, args.layout, args.on_invalid)
        shr = split_half_bws(ann, trials=args.trials, seed=args.seed, spearman_brown=args.spearman_brown,
                             method=args.method)
        row = {"file": str(path), "layout": layout, **_method_column(args), "items": shr.n_items,
               "omitted": shr.n_skipped,
               "trials": args.trials, "spearman": shr.spearman, "spearman_std": shr.spearman_std,
               "pearson": shr.pearson, "pearson_std": shr.pearson_std}
        if args.spearman_brown:
            row.update(corrected_spearman=shr.corrected_spearman, corrected_pearson=shr.corrected_pearson)
        rows.append(row)
    print_table(rows)
    return 0


def design(args) -> int:
    from ..input_files import read_text
    from .design import generate_tuples, tuple_ids
    from .pairs_file import read_pairs

    given, what = (args.pairs, "PAIRS") if args.pairs is not None else (args.items, "ITEMS_FILE")
    if not given.exists():
        raise FileNotFoundError(f"{given}: no such file ({'a pairs file' if args.pairs else 'one item per line'})")
    _check_csv(args, {what: [given]})
    if args.pairs is not None:
        items = read_pairs(args.pairs).ids
    else:
        items = [line.strip() for line in read_text(args.items, header=False).splitlines() if line.strip()]
    result = generate_tuples(items, k=args.k, factor=args.factor, n_designs=args.designs, seed=args.seed)
    header, rows = [f"Item{i + 1}" for i in range(args.k)], result.tuples.tolist()
    if args.pairs is not None:
        header, rows = ["tuple_id", *header], [[t, *row] for t, row in zip(tuple_ids(len(rows)), rows, strict=True)]
    write_csv(args.csv, header, rows)
    log.info("%d tuples of %d items; pair co-occurrence std %.4f (best of %d designs)",
             len(result.tuples), len(items), result.pair_count_std, args.designs)
    return 0
