"""``semrel evaluate``: the official SemEval-2024 Task 1 evaluation of predictions files.

    semrel evaluate pred_amh.csv pred_hau.csv --split test        gold: semrel-2024 <lang>/test
    semrel evaluate preds.csv --language eng --split dev [--mirror DIR]
    semrel evaluate pred_amh.csv --gold amh_test_with_labels.csv  gold: a CSV (PairID, Score)
    semrel evaluate ... --json

Each predictions file has the header ``PairID,Pred_Score`` and one row per gold pair; the output is
Spearman's rho per language (the task ranks every language on its own: there is no overall
score). The language of a file is ``--language`` (one per file), else its name
``pred_<lang>.csv`` (as the task's scorer wants it). A missing, extra or repeated PairID, a bad
header or a score that is not a finite number is answered in one line naming file, row and id,
exit status 2. Building this parser imports only the standard library.
"""

from __future__ import annotations

import json
from pathlib import Path

from semrel.command_line import UsageError, add_command

SPLITS = ("train", "dev", "validation", "test")  # semrel_2024.evaluation.SPLITS (no import here)


def register(commands) -> None:
    """Add ``evaluate`` to the ``semrel`` command."""
    parser = add_command(commands, "evaluate", run, "SemEval-2024 Task 1 evaluation: Spearman per language",
                         description=__doc__)
    parser.add_argument("predictions", nargs="+", type=Path, metavar="PREDICTIONS",
                        help="CSV files with the header PairID,Pred_Score")
    gold = parser.add_mutually_exclusive_group(required=True)
    gold.add_argument("--split", choices=SPLITS,
                      help="gold = this split of the semrel-2024 config of each file's language "
                           "(dev = validation)")
    gold.add_argument("--gold", action="append", type=Path, metavar="GOLD",
                      help="a gold CSV (PairID and Score columns, any order; other columns "
                           "ignored); repeat: one per predictions file, in the same order")
    parser.add_argument("--language", action="append", metavar="LANG",
                        help="a semrel-2024 config (amh, ..., all, cross-lingual-<lang>) with "
                             "--split, the label shown with --gold; repeat: one per predictions "
                             "file (default: from pred_<lang>.csv, or the gold file's <lang>_ prefix)")
    parser.add_argument("--mirror", help="mirror directory of the upstream files ($SEMREL_MIRROR)")
    parser.add_argument("--cache-dir", help="datasets cache directory")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def _languages(args) -> list[str]:
    """One language (or config) per predictions file."""
    from semrel.metrics.submission import submission_language

    n = len(args.predictions)
    if args.language is not None:
        if len(args.language) != n:
            raise UsageError(f"--language: {len(args.language)} given for {n} predictions files")
        return args.language
    out = []
    for i, path in enumerate(args.predictions):
        language = submission_language(path)
        if language is None and args.gold is not None:
            language = args.gold[i].name.split("_")[0]  # the task's scorer: <lang>_... gold files
        if language is None:
            raise UsageError(f"{path}: name it pred_<lang>.csv or give --language")
        out.append(language)
    return out


def run(args) -> int:
    if args.gold is not None and len(args.gold) != len(args.predictions):
        raise UsageError(f"--gold: {len(args.gold)} files for {len(args.predictions)} predictions files")
    if args.gold is not None and (args.mirror or args.cache_dir):
        raise UsageError("--mirror and --cache-dir are for --split (gold from semrel-2024), not --gold")
    languages = _languages(args)
    from semrel.metrics.submission import evaluate, read_gold, read_predictions

    rows = []
    for i, (path, language) in enumerate(zip(args.predictions, languages, strict=True)):
        if args.gold is not None:
            reference, labels = read_gold(args.gold[i]), language
        else:
            from semrel.dataset_scripts.semrel_2024.evaluation import gold

            reference, labels = gold(language, args.split, mirror=args.mirror, cache_dir=args.cache_dir)
        for name, score in evaluate(read_predictions(path), reference, labels).items():
            rows.append({"predictions": str(path), "gold": reference.file, "language": name,
                         "pairs": score.n, "spearman": score.spearman})
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    columns = ("predictions", "gold", "language", "pairs", "spearman")
    cells = [[f"{r[c]:.4f}" if c == "spearman" else str(r[c]) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[j]) for row in cells)) for j, c in enumerate(columns)]
    for line in [list(columns), *cells]:
        print("  ".join(v.ljust(w) if j < 3 else v.rjust(w)
                        for j, (v, w) in enumerate(zip(line, widths, strict=True))))
    return 0
