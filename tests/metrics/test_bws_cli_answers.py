"""``semrel bws``: bad files (each answered with its own cause, never a traceback) and every output
argument of every ``bws`` command (a missing folder, a folder, a path under a file, a read-only
location, a full disk): one line on stderr, exit status 2, and never a truncated output file.
In-process through ``semrel.cli.main``, as a user's command line runs it."""

from __future__ import annotations

import argparse
import errno
import os
import tempfile

import pytest

from semrel.cli import build_parser, main
from semrel.metrics.bws.counting import bws_counting_scores
from semrel.metrics.errors import DataValidationError

HEADER = "Item1,Item2,Item3,Item4,BestItem,WorstItem\n"
NRC = HEADER + "a,b,c,d,a,d\na,b,c,e,b,a\nb,c,d,e,b,e\n"
PAIR = '"[\'{0} a\', \'{0} b\']"'
SEMEVAL = ("SentPair1,SentPair2,SentPair3,SentPair4,Best,Worst\n"
           + ",".join(PAIR.format(w) for w in "wxyz") + ",{best},4\n")
ARABIC_1 = "\u0661"  # '١': float('١') == 1.0 in Python

FILES = [  # (id, file content, extra arguments, words of the one-line answer)
    ("every row invalid under omit", HEADER + "a,b,c,d,a,a\na,b,c,e,z,a\n", ["--on-invalid", "omit"],
     "every row is invalid, none left to score (2 rows: 1 best is not an item of the tuple, "
     "1 best and worst are the same item)"),
    ("every row invalid under omit, with --shr", HEADER + "a,b,c,d,a,a\n", ["--on-invalid", "omit", "--shr"],
     "every row is invalid, none left to score"),
    ("every semeval cell unreadable under omit", SEMEVAL.replace("[", "(").format(best=1), ["--on-invalid", "omit"],
     "every row is invalid, none left to score (1 rows: 1 cell is not a list literal of two sentences)"),
    ("Best for BestItem", NRC.replace("BestItem", "Best"), [],
     "missing columns (need Item1..Itemk, BestItem, WorstItem; missing ['BestItem']"),
    ("Item1 twice", NRC.replace("Item2", "Item1", 1), [], "a column name appears twice in the header ('Item1')"),
    ("one item column", "Item1,BestItem,WorstItem\na,a,a\n", [],
     "fewer than 2 item columns (a tuple needs Item1..Itemk with k >= 2"),
    ("an Arabic-Indic position", SEMEVAL.format(best=ARABIC_1), [],
     "row 1: best is not an item of the tuple"),
]


def _answer(capsys, argv):
    code = main(argv)
    err = capsys.readouterr().err
    return code, err


@pytest.mark.parametrize("content, extra, words", [c[1:] for c in FILES], ids=[c[0] for c in FILES])
def test_bad_files_are_one_line_naming_the_cause(tmp_path, capsys, content, extra, words):
    path = tmp_path / "ann.csv"
    path.write_text(content, encoding="utf-8")
    code, err = _answer(capsys, ["bws", "score", str(path), *extra])
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"{path}: " in err and words in err, err


NUMBERS = [  # (command line after "bws", words): numbers outside their range, or in other digits
    (["score", "{nrc}", "--shr", "--seed", "-1"], "argument --seed: must be an integer >= 0, not '-1'"),
    (["score", "{nrc}", "--shr", "--trials", "0"], "argument --trials: must be an integer >= 1, not '0'"),
    (["reliability", "{nrc}", "--trials", ARABIC_1], f"argument --trials: must be an integer >= 1, not '{ARABIC_1}'"),
    (["design", "{items}", "--k", "1"], "argument --k: must be an integer >= 2, not '1'"),
    (["design", "{items}", "--designs", "0"], "argument --designs: must be an integer >= 1, not '0'"),
    (["design", "{items}", "--seed", "-3"], "argument --seed: must be an integer >= 0, not '-3'"),
]


@pytest.mark.parametrize("argv, words", NUMBERS, ids=[" ".join(a[::2]) for a, _ in NUMBERS])
def test_numbers_out_of_range_are_usage_mistakes(tmp_path, capsys, argv, words):
    (tmp_path / "nrc.csv").write_text(NRC, encoding="utf-8")
    (tmp_path / "items.txt").write_text("a\nb\nc\nd\ne\n", encoding="utf-8")
    argv = [a.format(nrc=tmp_path / "nrc.csv", items=tmp_path / "items.txt") for a in argv]
    with pytest.raises(SystemExit) as info:
        main(["bws", *argv])
    err = capsys.readouterr().err
    assert info.value.code == 2 and len(err.strip().splitlines()) == 1 and words in err, err


def test_positions_take_ascii_digits_only():
    tuples = [["a", "b", "c", "d"]]
    assert bws_counting_scores(tuples, ["1"], [" 4 "], choice="position").score.tolist() == [1.0, 0, 0, -1.0]
    for text in (ARABIC_1, "1_0", "nan", "inf"):
        with pytest.raises(DataValidationError, match=r"row 1: best is not an item of the tuple .*ASCII digits"):
            bws_counting_scores(tuples, [text], ["4"], choice="position")


# --- every output argument of every bws command ------------------------------------------------

def _bws_commands() -> dict:
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    bws = next(a for a in commands.choices["bws"]._actions if isinstance(a, argparse._SubParsersAction))
    return bws.choices


def _output_options(parser) -> list[str]:
    return [a.option_strings[-1] for a in parser._actions if a.option_strings and a.metavar == "OUT"]


INPUTS = {  # command -> its arguments besides the output, given a folder holding the input files
    "score": lambda d: [str(d / "nrc.csv")],
    "design": lambda d: [str(d / "items.txt")],
}
OUTPUTS = [(name, option) for name, parser in _bws_commands().items() for option in _output_options(parser)]


def test_every_command_with_an_output_is_swept():
    assert {name for name, _ in OUTPUTS} == set(INPUTS) and OUTPUTS


def _enospc(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _erofs(*args, **kwargs):
    raise OSError(errno.EROFS, os.strerror(errno.EROFS))


PLACES = [  # (id, where the output goes, a monkeypatch, words of the answer or None for success)
    ("a missing folder", "new/deeper/out.csv", None, None),
    ("a folder", "folder", None, "is a folder; give the name of the file to write"),
    ("under a file", "afile/out.csv", None, "cannot be written (a folder on its path is a file); nothing was written"),
    ("a read-only location", "old.csv", ("tempfile.mkstemp", _erofs),
     "cannot be written (Read-only file system); the previous file is unchanged"),
    ("a full disk", "old.csv", ("os.fsync", _enospc),
     "cannot be written (No space left on device); the previous file is unchanged"),
]


@pytest.mark.parametrize("command, option", OUTPUTS, ids=[f"{c} {o}" for c, o in OUTPUTS])
@pytest.mark.parametrize("where, patch, words", [p[1:] for p in PLACES], ids=[p[0] for p in PLACES])
def test_output_arguments(tmp_path, capsys, monkeypatch, command, option, where, patch, words):
    (tmp_path / "nrc.csv").write_text(NRC, encoding="utf-8")
    (tmp_path / "items.txt").write_text("".join(f"item {i}\n" for i in range(8)), encoding="utf-8")
    (tmp_path / "folder").mkdir()
    (tmp_path / "afile").write_text("a file\n")
    (tmp_path / "old.csv").write_text("the previous output\n")
    before = sorted(p.name for p in tmp_path.iterdir())
    if patch:
        monkeypatch.setattr(*patch)
    out = tmp_path / where
    code, err = _answer(capsys, ["bws", command, *INPUTS[command](tmp_path), option, str(out)])
    if words is None:
        assert code == 0, err
        assert out.read_text(encoding="utf-8").splitlines()[0].startswith(("file,item", "Item1,"))
        umask = os.umask(0)
        os.umask(umask)
        assert out.stat().st_mode & 0o777 == 0o666 & ~umask  # as a plain open() makes it
        return
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"{option} {out}: {words}" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no partial file left behind
    assert (tmp_path / "old.csv").read_text() == "the previous output\n"


def test_temporary_files_are_beside_the_target(tmp_path, monkeypatch, capsys):
    """The rename is atomic only within one file system: the staged file is in the target's folder."""
    seen = []
    real = tempfile.mkstemp

    def spy(*args, **kwargs):
        seen.append(kwargs.get("dir"))
        return real(*args, **kwargs)

    (tmp_path / "nrc.csv").write_text(NRC, encoding="utf-8")
    monkeypatch.setattr("tempfile.mkstemp", spy)
    assert main(["bws", "score", str(tmp_path / "nrc.csv"), "--csv", str(tmp_path / "sub" / "o.csv")]) == 0
    assert [str(d) for d in seen] == [str(tmp_path / "sub")]


# --- every input argument of every bws command: a link, a folder, a file it cannot read ----------

def _deny(monkeypatch, path):
    """Reading ``path`` fails as a file without read permission does (the tests run as root)."""
    import builtins
    import io

    def guarded(real):
        def open_(file, *args, **kwargs):
            if isinstance(file, (str, os.PathLike)) and str(file) == str(path):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(file))
            return real(file, *args, **kwargs)
        return open_
    monkeypatch.setattr(io, "open", guarded(io.open))
    monkeypatch.setattr(builtins, "open", guarded(builtins.open))


INPUT_COMMANDS = {  # command -> (its input file, the arguments around it)
    "score": ("nrc.csv", []),
    "reliability": ("nrc.csv", ["--trials", "5"]),
    "design": ("items.txt", ["--designs", "2", "--csv", "{tmp}/tuples.csv"]),
}
KINDS = [  # (id, what the input argument is, the one line after "FILE: ", or None: read as the file itself)
    ("a link", "link", None),
    ("a dangling link", "dangling", {"score": "file cannot be read (No such file or directory)",
                                     "reliability": "file cannot be read (No such file or directory)",
                                     "design": "no such file (one item per line)"}),
    ("a folder", "folder", "file cannot be read (Is a directory)"),
    ("an unreadable file", "unreadable", "file cannot be read (Permission denied)"),
    ("not UTF-8", "latin-1", {"score": "row 4: file is not UTF-8 text (byte b'\\xe9' at offset 79)",
                              "reliability": "row 4: file is not UTF-8 text (byte b'\\xe9' at offset 79)",
                              "design": "row 9: file is not UTF-8 text (byte b'\\xe9' at offset 56)"}),
]
INPUT_CASES = [(command, kind, line) for command in INPUT_COMMANDS for _, kind, line in KINDS]


@pytest.mark.parametrize("command, kind, line", INPUT_CASES, ids=[f"{c} {k}" for c, k, _ in INPUT_CASES])
def test_input_arguments(tmp_path, capsys, monkeypatch, command, kind, line):
    name, around = INPUT_COMMANDS[command]
    (tmp_path / "nrc.csv").write_text(NRC, encoding="utf-8")
    (tmp_path / "items.txt").write_text("".join(f"item {i}\n" for i in range(8)), encoding="utf-8")
    given = tmp_path / f"given-{name}"
    if kind == "link":
        given.symlink_to(tmp_path / name)
    elif kind == "dangling":
        given.symlink_to(tmp_path / "gone.csv")
    elif kind == "folder":
        given.mkdir()
    else:
        given.write_bytes((tmp_path / name).read_bytes() + ("\xe9\n" if kind == "latin-1" else "").encode("latin-1"))
        if kind == "unreadable":
            _deny(monkeypatch, given)
    args = [a.format(tmp=tmp_path) for a in around]
    code = main(["bws", command, str(given), *args])
    out, err = capsys.readouterr()
    if line is None:
        written = (tmp_path / "tuples.csv").read_text() if command == "design" else None
        assert code == 0 and main(["bws", command, str(tmp_path / name), *args]) == 0, err
        again = capsys.readouterr().out
        cells = [row.split() for row in out.replace(str(given), str(tmp_path / name)).splitlines()]
        assert cells == [row.split() for row in again.splitlines()]  # the same table, but for the file's name
        assert written is None or written == (tmp_path / "tuples.csv").read_text()
        return
    line = line[command] if isinstance(line, dict) else line
    assert code == 2 and err == f"semrel bws {command}: error: {given}: {line}\n"
