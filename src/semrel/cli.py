"""The ``semrel`` command (also ``python -m semrel``): one front door onto every part.

    semrel build|verify|push ...              datasets, metric Spaces, report -> build/hub (the Hub)
    semrel bws score|reliability|design ...   Best-Worst Scaling annotation files and tuple designs
    semrel fit|cv|predict|ensemble|models ... fine-tune and use encoders
    semrel evaluate PREDICTIONS... --split S   SemEval-2024 Task 1 evaluation: Spearman per language

Every command shares one parser class: a typo, a missing file or a value outside its rule is
answered in one line on stderr with exit status 2; ``-q`` shows warnings only, ``-v`` debug
messages. Building the parser imports the standard library and each part's ``cli`` module with
the light semrel modules they name (the number rule :mod:`semrel.metrics.text_numbers`, the
SemRel-2024 split names), never numpy, torch or datasets, so ``--help`` is instant.
"""

from __future__ import annotations

import argparse
import logging
import sys

from semrel.metrics.text_numbers import INTEGER, ascii_number

PROG = "semrel"


class UsageError(Exception):
    """A mistake on the command line (unknown name, missing folder): one line, exit 2."""


class Parser(argparse.ArgumentParser):
    """argparse whose mistakes take one line (no usage block) and exit 2; no abbreviated flags."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


# Numbers on the command line are ASCII decimal notation, the rule of every file semrel reads
# (semrel.metrics.text_numbers): int("١") == 1 in Python, but no command takes it.


def integer(text: str) -> int:
    """An argparse type: a decimal integer in ASCII digits."""
    if not INTEGER.fullmatch(text.strip()):
        raise argparse.ArgumentTypeError(f"must be an integer in ASCII digits, not {text!r}")
    return int(text)


def number(text: str) -> float:
    """An argparse type: a finite decimal number in ASCII notation (2, 0.5, 2e-5)."""
    value = ascii_number(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"must be a number in ASCII digits, not {text!r}")
    return value


def at_least(minimum: int):
    """An argparse type: a decimal integer (ASCII digits) >= ``minimum``."""
    def bounded(text: str) -> int:
        if not INTEGER.fullmatch(text.strip()) or int(text) < minimum:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}, not {text!r}")
        return int(text)
    bounded.__name__ = f"integer >= {minimum}"
    return bounded


class Formatter(argparse.RawDescriptionHelpFormatter):
    """Keeps descriptions as written and shows each option's default where it has one."""

    def _get_help_string(self, action):
        if action.default in (None, False, argparse.SUPPRESS, []) or not action.option_strings:
            return action.help
        return f"{action.help} (default: %(default)s)"


def check_mirror(mirror: str | None) -> None:
    """A ``--mirror`` that names no directory (each of its ``os.pathsep``-separated parts) is a
    :class:`UsageError`; ``-v`` says which mirror is used. Every command that reads upstream files
    checks its flag here."""
    import os
    from pathlib import Path

    from semrel.dataset_scripts.sources import mirror_dirs

    for part in (mirror or "").split(os.pathsep):
        if part and Path(part).expanduser().is_file():
            raise UsageError(f"--mirror {part}: is a file, not a directory (expected <mirror>/<dataset-id>/<file>)")
        if part and not Path(part).expanduser().is_dir():
            raise UsageError(f"--mirror {part}: no such directory (expected <mirror>/<dataset-id>/<file>)")
    logging.getLogger(__name__).debug("mirror: %s", os.pathsep.join(map(str, mirror_dirs(mirror)))
                                      or "none (upstream URLs)")


def add_command(commands, name: str, run, help: str, description: str | None = None) -> Parser:
    """A subcommand whose parsed arguments go to ``run(args) -> int``."""
    sub = commands.add_parser(name, help=help, description=description or help)
    sub.set_defaults(run=run, prog=sub.prog)  # errors name the whole command, e.g. "semrel bws score"
    return sub


def build_parser() -> Parser:
    from semrel.dataset_scripts.cli import register as register_evaluate
    from semrel.metrics.bws.cli import register as register_bws
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
    register_training(commands)
    register_evaluate(commands)
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
