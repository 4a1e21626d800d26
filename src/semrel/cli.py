"""The ``semrel`` command (also ``python -m semrel``): one front door onto every part.

    semrel build|verify|push ...              datasets, metric Spaces, report -> build/hub (the Hub)
    semrel bws score|reliability|design|plan  Best-Worst Scaling files, tuple designs, plans to a target
    semrel ratings plan FILE [--target R]     a rating file's reliability now, and the raters a target needs
    semrel fit|cv|predict|ensemble|models ... fine-tune and use encoders
    semrel benchmark --model M [--model M2]   any models on every labelled set, with intervals
    semrel augment --dataset D --teacher M    more train pairs: nearest neighbours, a teacher's labels
    semrel evaluate PREDICTIONS... --split S   SemEval-2024 Task 1 evaluation: Spearman per language
    semrel pairs CORPUS --n N --output PAIRS   candidate pairs from a corpus (IDF-Dice or model buckets)
    semrel annotate push|pull|crowd|potato|potato-pull|dataset ...   Label Studio, Potato, crowd CSV; a dataset

Every command shares one parser class: a typo, a missing file or a value outside its rule is
answered in one line on stderr with exit status 2; ``-q`` shows warnings only, ``-v`` debug
messages. Building the parser imports only the standard library (and semrel's number rule,
:mod:`semrel.metrics.text_numbers`, which loads no numpy), so ``--help`` is instant. Each part
registers its commands from its own ``cli.py`` with :mod:`semrel.command_line`, which this module
re-exports.
"""

from __future__ import annotations

import logging
import sys

from semrel.command_line import (  # noqa: F401  (the kit every part's command line is built from)
    Formatter,
    Parser,
    UsageError,
    add_command,
    at_least,
    integer,
    number,
)

PROG = "semrel"


def build_parser() -> Parser:
    from semrel.annotation.cli import register as register_annotation
    from semrel.dataset_scripts.cli import register as register_evaluate
    from semrel.metrics.bws.cli import register as register_bws
    from semrel.metrics.rating_plan.cli import register as register_ratings
    from semrel.publishing.cli import register as register_publishing
    from semrel.trainers.cli import register as register_training

    parser = Parser(prog=PROG, description=__doc__)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    noise = parser.add_mutually_exclusive_group()
    noise.add_argument("-q", "--quiet", action="store_true", help="warnings and errors only")
    noise.add_argument("-v", "--verbose", action="store_true", help="debug messages too")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                     parser_class=Parser)
    register_publishing(commands)
    register_bws(commands)
    register_ratings(commands)
    register_training(commands)
    register_evaluate(commands)
    register_annotation(commands)
    return parser


def _version() -> str:
    from semrel import __version__

    return __version__


def configure_logging(quiet: bool = False, verbose: bool = False) -> None:
    """semrel's messages on stderr, one line each; ``-q`` warnings only, ``-v`` debug."""
    level = logging.WARNING if quiet else logging.DEBUG if verbose else logging.INFO
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger = logging.getLogger("semrel")
    logger.handlers[:] = [handler]
    logger.setLevel(level)
    logger.propagate = False


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_logging(args.quiet, args.verbose)
    prog = args.prog
    try:
        return args.run(args) or 0
    except (UsageError, ValueError, FileNotFoundError, ImportError) as exc:  # incl. DataValidationError
        lines = str(exc).strip().splitlines() or [type(exc).__name__]
        sys.stderr.write(f"{prog}: error: {lines[0]}\n" + "".join(f"  {line}\n" for line in lines[1:3]))
        return 2
    except KeyboardInterrupt:
        sys.stderr.write(f"{prog}: interrupted\n")
        return 130


def run_logged(*argv: str) -> float:
    """Run ``semrel ARGV`` in this process (torch loads once), printing ``$ semrel ARGV`` first,
    as the recipes in ``scripts/`` do; its seconds, or SystemExit naming the failed command."""
    import shlex
    import time

    print("$ semrel " + shlex.join(argv), flush=True)
    start = time.perf_counter()
    status = main(list(argv))
    if status:
        raise SystemExit(f"semrel {argv[0]} failed with exit status {status}")
    return time.perf_counter() - start


def resume_flags(folder) -> list[str]:
    """``["--resume", "last"]`` for a recipe's ``semrel fit`` into the run folder ``folder`` when a
    run there was cut off after a complete Trainer checkpoint (one holding ``trainer_state.json``,
    which transformers writes last); else none."""
    from pathlib import Path

    from semrel.trainers.run_folder.files import CHECKPOINTS, TRAINER_STATE

    return ["--resume", "last"] if any((Path(folder) / CHECKPOINTS).glob(f"checkpoint-*/{TRAINER_STATE}")) else []


def drop_checkpoints(folder) -> None:
    """A finished run's Trainer checkpoints removed (its model is saved at the top of ``folder``)."""
    import shutil
    from pathlib import Path

    from semrel.trainers.run_folder.files import CHECKPOINTS

    for checkpoint in (Path(folder) / CHECKPOINTS).glob("checkpoint-*"):
        shutil.rmtree(checkpoint)


def model_folder(*names: str):
    """An argparse type for a recipe's ``--model NAME=DIR`` (a model folder in place of NAME, for
    smoke runs): NAME one of ``names``; ``(NAME, DIR)``."""
    import argparse

    def parse(text: str) -> tuple[str, str]:
        name, sep, folder = text.partition("=")
        if not sep or name not in names or not folder:
            which = names[0] if len(names) == 1 else f"one of {', '.join(names)}"
            raise argparse.ArgumentTypeError(f"must be NAME=DIR with NAME {which}, not {text!r}")
        return name, folder

    return parse
