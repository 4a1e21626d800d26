"""The `semrel` command, run as a user runs it: a subprocess, typos included."""

from __future__ import annotations

import argparse
import csv
import io
import os
import subprocess
import sys

import pytest

from project import REPO
from semrel.metrics.bws.design import generate_tuples
from semrel.metrics.bws.readers import read_semeval_2024
from semrel.metrics.split_half.split_half import split_half_bws

HEAVY = ("numpy", "datasets", "torch", "transformers", "pandas", "scipy", "evaluate")
COMMANDS = [["build"], ["verify"], ["push"], ["bws"], ["bws", "score"], ["bws", "reliability"],
            ["bws", "design"], ["bws", "plan"], ["ratings"], ["ratings", "plan"],
            ["fit"], ["cv"], ["predict"], ["ensemble"], ["models"], ["augment"], ["pairs"],
            ["annotate"], ["annotate", "push"], ["annotate", "pull"], ["annotate", "crowd"], ["annotate", "potato"],
            ["annotate", "potato-pull"], ["annotate", "dataset"], ["annotate", "status"]]


def semrel(*args, cwd=None, env=None):
    """``python -m semrel ARGS`` in a working directory outside the repository (default)."""
    return subprocess.run([sys.executable, "-m", "semrel", *map(str, args)], cwd=cwd or REPO.parent,
                          capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})})


def test_help_lists_every_command_and_imports_nothing_heavy():
    code = ("import sys\nfrom semrel.cli import main\ntry: main(['--help'])\nexcept SystemExit: pass\n"
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO.parent)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"  # --help is the standard library only
    for name in ("build", "verify", "push", "bws", "fit", "cv", "predict", "ensemble", "models", "augment",
                 "pairs", "annotate", "ratings"):
        assert f"\n    {name} " in done.stdout


@pytest.mark.slow  # a subprocess per case
@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_subcommand_answers_help(command):
    done = semrel(*command, "--help")
    assert done.returncode == 0 and done.stdout.startswith(f"usage: semrel {' '.join(command)}"), done.stderr


def test_console_script_is_installed_and_matches_python_m():
    script = os.path.join(os.path.dirname(sys.executable), "semrel")
    done = subprocess.run([script, "--version"], capture_output=True, text=True, cwd=REPO.parent)
    assert done.returncode == 0 and done.stdout.startswith("semrel "), done.stderr
    assert done.stdout == semrel("--version").stdout


@pytest.mark.slow  # a subprocess per case
@pytest.mark.parametrize("args, words", [
    (["biuld"], "invalid choice: 'biuld'"),
    (["bws", "scroe", "x.csv"], "invalid choice: 'scroe'"),
    (["fit", "--dataset", "str-2021", "--model", "minilm", "--output", "o", "--epoch", "2"],
     "unrecognized arguments: --epoch"),  # no abbreviated flags
    (["fit", "--dataset", "str-2021", "--output", "o"], "the following arguments are required: --model"),
    (["bws", "score", "/no/such/file.csv"], "/no/such/file.csv"),
    (["bws", "reliability", "/no/such/file.csv"], "/no/such/file.csv"),
    (["bws", "design", "/no/such/items.txt"], "semrel bws design: error: /no/such/items.txt: no such file"),
    (["bws", "design", "items.txt", "--k", "1"], "argument --k: must be an integer >= 2, not '1'"),
    (["build", "--mirror", "/no/such/mirror"], "--mirror /no/such/mirror: no such directory"),
    (["-q", "-v", "models"], "not allowed with argument"),
])
def test_mistakes_are_one_line_with_exit_2(args, words, tmp_path):
    (tmp_path / "items.txt").write_text("a\nb\nc\n", encoding="utf-8")
    done = semrel(*args, cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert words in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_old_doors_are_gone():
    for module in ("trainers", "metrics.bws_scores", "publishing.spaces"):
        done = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True,
                              cwd=REPO.parent)
        assert done.returncode == 1 and "No module named" in done.stderr, (module, done.stderr)


@pytest.mark.slow  # a subprocess per case
def test_bws_reliability_equals_the_function_on_a_real_file(mirror):
    path = mirror / "semrel-2024" / "BWS_annotations" / "arb_bws.csv"
    done = semrel("bws", "reliability", path, "--on-invalid", "omit", "--trials", "30", "--seed", "3",
                  "--spearman-brown")
    assert done.returncode == 0, done.stderr
    header, row = done.stdout.splitlines()
    cells = dict(zip(header.split(), row.split(), strict=True))
    expected = split_half_bws(read_semeval_2024(path, on_invalid="omit"), trials=30, seed=3,
                              spearman_brown=True)
    assert cells["items"] == str(expected.n_items) and cells["trials"] == "30"
    assert cells["spearman"] == f"{expected.spearman:.4f}"
    assert cells["corrected_pearson"] == f"{expected.corrected_pearson:.4f}"


def test_bws_design_writes_the_function_tuples_and_logs_unless_quiet(tmp_path):
    items = [f"s{i}" for i in range(12)]
    (tmp_path / "items.txt").write_text("\n".join(items) + "\n", encoding="utf-8")
    done = semrel("bws", "design", "items.txt", "--designs", "5", "--seed", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = list(csv.reader(io.StringIO(done.stdout)))
    expected = generate_tuples(items, n_designs=5, seed=1)
    assert rows[0] == ["Item1", "Item2", "Item3", "Item4"] and rows[1:] == expected.tuples.tolist()
    assert "24 tuples of 12 items" in done.stderr  # an info message
    quiet = semrel("-q", "bws", "design", "items.txt", "--designs", "5", "--seed", "1", cwd=tmp_path)
    assert quiet.returncode == 0 and quiet.stderr == "" and quiet.stdout == done.stdout


@pytest.mark.slow  # a subprocess per case
def test_verbose_says_which_mirror_every_command_uses(tmp_path, mirror):
    done = semrel("-v", "verify", "--only", "str-2021", "--out", tmp_path, env={"SEMREL_MIRROR": str(mirror)})
    assert f"mirror: {mirror.resolve()}" in done.stderr, done.stderr
    assert f"mirror: {mirror.resolve()}" not in semrel("verify", "--only", "str-2021", "--out", tmp_path,
                                                       env={"SEMREL_MIRROR": str(mirror)}).stderr


def test_upload_py_is_an_alias_of_build_verify_push(tmp_path):
    done = subprocess.run([sys.executable, str(REPO / "upload.py"), "verify", "--out", str(tmp_path)],
                          capture_output=True, text=True, cwd=REPO.parent)
    assert done.returncode == 1 and "nothing is built" in done.stderr and "semrel build" in done.stderr
    done = subprocess.run([sys.executable, str(REPO / "upload.py"), "fit"], capture_output=True, text=True)
    assert done.returncode == 2 and "use one of build, verify, push" in done.stderr


def _numeric_flags():
    """(command words, flag, nargs) of every option of every command whose type reads a number."""
    from semrel.cli import at_least, build_parser, integer, number

    def walk(parser, words):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from walk(sub, [*words, name])
            elif action.option_strings and (action.type in (integer, number)
                                            or getattr(action.type, "__name__", "").startswith("integer >=")):
                yield words, action.option_strings[0], action.nargs
    assert at_least  # the bounded integers of `semrel bws` are named "integer >= N"
    return list(walk(build_parser(), []))


NUMERIC_FLAGS = _numeric_flags()


def test_the_numeric_flag_sweep_sees_every_command_that_takes_numbers():
    commands = {tuple(words) for words, _, _ in NUMERIC_FLAGS}
    assert {("fit",), ("cv",), ("predict",), ("ensemble",), ("bws", "reliability"), ("bws", "design")} <= commands
    assert len(NUMERIC_FLAGS) >= 20


@pytest.mark.parametrize("value", ["١", "٢.٥", "1_0", "nan", "inf", "0x10", ""])
@pytest.mark.parametrize("words, flag, nargs", NUMERIC_FLAGS, ids=lambda v: v if isinstance(v, str) else None)
def test_numbers_on_the_command_line_are_ascii_decimal(words, flag, nargs, value, capsys):
    """One rule everywhere: the flags read numbers as the files do (Arabic-Indic digits, '_',
    nan/inf words and hex are refused in one line, exit 2), before any data or model is touched."""
    from semrel.cli import main

    values = [value] * (nargs if isinstance(nargs, int) else 1)
    with pytest.raises(SystemExit) as stop:
        main([*words, flag, *values])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"argument {flag}" in err and ("ASCII digits" in err or "must be an integer >=" in err), err
