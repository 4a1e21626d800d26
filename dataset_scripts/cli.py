"""``semrel evaluate``: the official SemEval-2024 Task 1 evaluation of predictions files.

    semrel evaluate pred_amh.csv pred_hau.csv --split test        gold: semrel-2024 <lang>/test
    semrel evaluate preds.csv --language eng --split dev [--mirror DIR]
    semrel evaluate pred_amh.csv --gold amh_test_with_labels.csv  gold: a CSV (PairID, Score)
    semrel evaluate ... --json

Each predictions file has the header ``PairID,Pred_Score`` and one row per gold pair; the output is
Spearman's rho per language (the task ranks every language on its own: there is no overall
score). The language of a file is ``--language`` (one per file), else its name
``pred_<lang>.csv`` (as the task's scorer wants it). A file that cannot be read, a missing,
extra or repeated PairID, a bad header or a score that is not a finite number is answered in one
line naming file, row and id, and a ``--mirror`` or ``--cache-dir`` that cannot serve in one line
naming the flag and the cause, exit status 2. Building this parser imports no numpy or
``datasets`` (only the split names of :mod:`.semrel_2024.files`).
"""

from __future__ import annotations

import json
from pathlib import Path

from semrel.command_line import UsageError, add_command, check_mirror
from semrel.dataset_scripts.semrel_2024.files import EVALUATION_SPLITS


def register(commands) -> None:
    """Add ``evaluate`` to the ``semrel`` command."""
    parser = add_command(commands, "evaluate", run, "SemEval-2024 Task 1 evaluation: Spearman per language",
                         description=__doc__)
    parser.add_argument("predictions", nargs="+", type=Path, metavar="PREDICTIONS",
                        help="CSV files with the header PairID,Pred_Score")
    gold = parser.add_mutually_exclusive_group(required=True)
    gold.add_argument("--split", choices=EVALUATION_SPLITS,
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


def _split_gold(language: str, args):
    """:func:`~.semrel_2024.evaluation.gold` of the language's split; a file that cannot be read or
    a datasets cache that cannot be written (read-only, a full disk) is one line naming it and the
    cause."""
    from semrel.dataset_scripts.errors import SourceError
    from semrel.dataset_scripts.semrel_2024.evaluation import gold

    try:
        return gold(language, args.split, mirror=args.mirror, cache_dir=args.cache_dir)
    except (SourceError, ValueError):  # named already: a missing or changed upstream file, a bad row
        raise
    except Exception as exc:
        cause = next((e for e in _chain(exc) if isinstance(e, OSError)), None)
        if cause is None:
            raise
        words = cause.strerror or str(cause).split(". ")[0]
        if args.cache_dir is None:
            from datasets import config

            cache, flag = Path(config.HF_DATASETS_CACHE), f"the datasets cache {config.HF_DATASETS_CACHE}"
        else:
            cache, flag = Path(args.cache_dir).expanduser(), f"--cache-dir {args.cache_dir}"
        name = Path(cause.filename).resolve() if cause.filename else None
        if name is not None and name != cache.resolve() and cache.resolve() not in name.parents:
            raise UsageError(f"{cause.filename}: cannot be read ({words})") from None  # a mirror file
        raise UsageError(f"{flag}: cannot be written ({words})" + (
            "; give another with --cache-dir" if args.cache_dir is None else "")) from None


def _chain(exc: BaseException):
    """``exc`` and the exceptions it was raised from or during."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def run(args) -> int:
    if args.gold is not None and len(args.gold) != len(args.predictions):
        raise UsageError(f"--gold: {len(args.gold)} files for {len(args.predictions)} predictions files")
    if args.gold is not None and (args.mirror or args.cache_dir):
        raise UsageError("--mirror and --cache-dir are for --split (gold from semrel-2024), not --gold")
    check_mirror(args.mirror)
    if args.cache_dir is not None and Path(args.cache_dir).expanduser().is_file():
        raise UsageError(f"--cache-dir {args.cache_dir}: is a file, not a folder")
    languages = _languages(args)
    from semrel.metrics.submission import evaluate, read_gold, read_predictions

    rows = []
    for i, (path, language) in enumerate(zip(args.predictions, languages, strict=True)):
        if args.gold is not None:
            reference, labels = read_gold(args.gold[i]), language
        else:
            reference, labels = _split_gold(language, args)
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
