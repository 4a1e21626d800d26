"""Score Best-Worst Scaling annotation files from the command line (as the NRC Perl scripts do).

    python -m metrics.bws_scores score FILE... [--layout auto|nrc|semeval] [--shr [--trials N]]
                                               [--on-invalid raise|omit] [--csv OUT]

Each file is scored on its own: counting scores (#best - #worst) / #appearances per item, and with
``--shr`` its split-half reliability. Prints one table row per file; ``--csv OUT`` writes the
per-item scores (``-`` for standard output). A bad file or argument is answered in at most two lines
naming file, row and rule, exit status 2. Imports numpy only (scipy with ``--shr``).
"""

from __future__ import annotations

import argparse
import csv
import gc
import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: counting needs no BLAS thread pool

from .counting import bws_counting_scores  # noqa: E402
from .errors import DataValidationError
from .readers import read_nrc
from .readers import read_semeval_2024
from .readers import read_header

LAYOUTS = ("auto", "nrc", "semeval")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line of error and one of help, exit 2 (not the whole usage)
        sys.stderr.write(f"{self.prog}: error: {message}\n{self.prog}: see --help for the options\n")
        sys.exit(2)


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m metrics.bws_scores", description=__doc__.splitlines()[0],
                formatter_class=argparse.ArgumentDefaultsHelpFormatter, allow_abbrev=False)
    commands = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    score = commands.add_parser("score", help="score BWS annotation files", allow_abbrev=False,
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    score.add_argument("files", nargs="+", type=Path, metavar="FILE")
    score.add_argument("--layout", choices=LAYOUTS, default="auto",
                       help="nrc: Item1..Itemk,BestItem,WorstItem; semeval: SemEval-2024 BWS_annotations; "
                            "auto: nrc if the header has BestItem and WorstItem")
    score.add_argument("--shr", action="store_true", help="also compute split-half reliability")
    score.add_argument("--trials", type=int, default=1000, help="random half splits for --shr")
    score.add_argument("--seed", type=int, default=0, help="seed of the --shr splits")
    score.add_argument("--on-invalid", choices=("raise", "omit"), default="raise",
                       help="raise: stop at the first bad row; omit: drop bad rows and count them")
    score.add_argument("--csv", type=Path, metavar="OUT", help="write per-item scores to OUT (- = stdout)")
    return p


def read(path: Path, layout: str, on_invalid: str):
    """Annotations of one file in the given (or detected) layout; returns (layout, annotations)."""
    if layout == "auto":
        header = read_header(path)
        layout = "nrc" if {"BestItem", "WorstItem"} <= set(header) else "semeval"
    reader = read_nrc if layout == "nrc" else read_semeval_2024
    return layout, reader(path, on_invalid=on_invalid)


def score(args) -> int:
    rows, items = [], []
    for path in args.files:
        layout, ann = read(path, args.layout, args.on_invalid)
        scores = bws_counting_scores(ann)
        row = {"file": str(path), "layout": layout, "annotations": scores.n_annotations,
               "omitted": scores.n_skipped, "items": len(scores.items),
               "min": float(scores.score.min()), "max": float(scores.score.max())}
        if args.shr:
            from metrics.split_half_reliability.split_half import split_half_bws  # scipy: only when asked

            shr = split_half_bws(ann, trials=args.trials, seed=args.seed)
            row.update(shr_spearman=shr.spearman, shr_pearson=shr.pearson)
        rows.append(row)
        items += [(str(path), i, a, b, w, s, s01) for i, a, b, w, s, s01 in zip(
            scores.items.tolist(), scores.appearances.tolist(), scores.n_best.tolist(), scores.n_worst.tolist(),
            scores.score.tolist(), scores.score_01.tolist())]
    if args.csv is not None:
        out = sys.stdout if str(args.csv) == "-" else args.csv.open("w", newline="", encoding="utf-8")
        writer = csv.writer(out)
        writer.writerow(["file", "item", "appearances", "n_best", "n_worst", "score", "score_01"])
        writer.writerows(items)
        if out is not sys.stdout:
            out.close()
    if str(args.csv) != "-":
        print_table(rows)
    return 0


def print_table(rows: list[dict]) -> None:
    columns = list(rows[0])
    cells = [[f"{v:.4f}" if isinstance(v, float) else str(v) for v in row.values()] for row in rows]
    widths = [max(len(c), *(len(r[j]) for r in cells)) for j, c in enumerate(columns)]
    for line in [columns, *cells]:
        print("  ".join(v.ljust(w) if j == 0 else v.rjust(w) for j, (v, w) in enumerate(zip(line, widths))))


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    try:
        return score(args)
    except (DataValidationError, ValueError) as err:
        first, *rest = str(err).splitlines() or [""]
        sys.stderr.write(f"error: {first}\n" + (f"  {rest[0]}\n" if rest else ""))
        return 2


if __name__ == "__main__":
    gc.disable()  # a short-lived process making no reference cycles: no collector passes (~0.1 s on 88k)
    sys.exit(main())
