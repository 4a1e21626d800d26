"""What every part's command line is built from: the parser class (one-line errors, exit 2),
:func:`add_command`, :class:`UsageError`, :func:`check_mirror` and the argparse types of numbers in ASCII notation.

The front door (:mod:`semrel.cli`) imports each part's ``cli.py``, which registers its commands
with these; none of them imports the front door. Standard library only (and
:mod:`semrel.metrics.text_numbers`, which loads no numpy).
"""

from __future__ import annotations

import argparse
import logging
import os

from semrel.metrics.text_numbers import INTEGER, ascii_number


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


def at_least(minimum: int, maximum: int | None = None, why: str = ""):
    """An argparse type: a decimal integer (ASCII digits) >= ``minimum`` (and <= ``maximum``;
    ``why``: what the maximum is, said in the error)."""
    rule = f">= {minimum}" if maximum is None else f"from {minimum} to {maximum}{why}"

    def bounded(text: str) -> int:
        if not INTEGER.fullmatch(text.strip()) or int(text) < minimum or (maximum is not None and int(text) > maximum):
            raise argparse.ArgumentTypeError(f"must be an integer {rule}, not {text!r}")
        return int(text)
    bounded.__name__ = f"integer {rule}"
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
    from semrel.dataset_scripts import sources
    from semrel.metrics.errors import ParameterError

    try:
        sources.check_mirror(mirror)
    except ParameterError as exc:
        raise UsageError(f"--mirror {exc.value}: {exc.rule}") from None
    logging.getLogger(__name__).debug("mirror: %s", os.pathsep.join(map(str, sources.mirror_dirs(mirror)))
                                      or "none (upstream URLs)")


def add_group(commands, name: str, help: str, description: str | None = None):
    """A command of subcommands (``semrel bws score``): returns what its subcommands register on
    with :func:`add_command`."""
    group = commands.add_parser(name, help=help, description=description or help)
    return group.add_subparsers(dest=f"{name}_command", required=True, metavar="COMMAND", parser_class=type(group))


def add_command(commands, name: str, run, help: str, description: str | None = None) -> Parser:
    """A subcommand whose parsed arguments go to ``run(args) -> int``."""
    sub = commands.add_parser(name, help=help, description=description or help)
    sub.set_defaults(run=run, prog=sub.prog)  # errors name the whole command, e.g. "semrel bws score"
    return sub
