"""semrel bws score, run as a user runs it: a subprocess on real and broken files."""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys

import pytest

from project import REPO
from semrel.metrics.bws.counting import bws_counting_scores
from semrel.metrics.bws.readers import read_semeval_2024

NRC = "Item1,Item2,Item3,Item4,BestItem,WorstItem\na,b,c,d,a,d\na,b,c,e,b,a\nb,c,d,e,b,e\n"


def run(*args, cwd=REPO):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "semrel", "bws", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def nrc(tmp_path):
    path = tmp_path / "nrc.csv"
    path.write_text(NRC, encoding="utf-8")
    return path


def test_nrc_file_table_and_csv_equal_the_function(nrc, tmp_path):
    done = run("score", nrc)
    assert done.returncode == 0, done.stderr
    header, row = done.stdout.splitlines()
    assert header.split()[:5] == ["file", "layout", "annotations", "omitted", "items"]
    assert row.split()[1:5] == ["nrc", "3", "0", "5"]
    done = run("score", nrc, "--csv", "-")
    table = list(csv.DictReader(io.StringIO(done.stdout)))
    expected = bws_counting_scores([r.split(",")[:4] for r in NRC.splitlines()[1:]],
                                   [r.split(",")[4] for r in NRC.splitlines()[1:]],
                                   [r.split(",")[5] for r in NRC.splitlines()[1:]])
    assert [r["item"] for r in table] == expected.items.tolist()
    assert [float(r["score"]) for r in table] == expected.score.tolist()


def test_semeval_files_with_shr(upstream):
    files = sorted((upstream / "semrel-2024" / "BWS_annotations").glob("*.csv"))
    done = run("score", *files, "--on-invalid", "omit", "--shr", "--trials", "20")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1 + len(files) and "shr_spearman" in lines[0]
    ann = read_semeval_2024(files[0], on_invalid="omit")
    assert lines[1].split()[1:5] == ["semeval", str(len(ann.best)), str(ann.n_skipped), str(len(ann.items))]


@pytest.mark.parametrize("args, words", [
    (["scroe", "x.csv"], "invalid choice: 'scroe'"),
    (["score", "{nrc}", "--layuot", "nrc"], "unrecognized arguments: --layuot"),
    (["score", "{nrc}", "--layout", "nrcc"], "invalid choice: 'nrcc'"),
    (["score", "{nrc}", "--on-invalid", "skip"], "invalid choice: 'skip'"),
    (["score", "{nrc}", "--trials", "ten"], "argument --trials: must be an integer >= 1, not 'ten'"),
    (["score", "missing.csv"], "missing.csv: file cannot be read (No such file or directory)"),
    (["score", "{nrc}", "--layout", "semeval"], "row 1: cell is not a list literal of two sentences"),
    (["score", "{bad}"], "bad.csv: row 2: best and worst are the same item"),
    (["score", "{empty}"], "empty.csv: file is empty"),
])
def test_mistakes_are_answered_in_two_lines_with_exit_2(nrc, tmp_path, args, words):
    (tmp_path / "bad.csv").write_text(NRC.replace("b,c,d,e,b,e", "b,c,d,e,b,b").replace("a,b,c,e,b,a", "a,b,c,e,b,b"))
    (tmp_path / "empty.csv").write_bytes(b"")
    args = [a.format(nrc=nrc, bad=tmp_path / "bad.csv", empty=tmp_path / "empty.csv") for a in args]
    done = run(*args, cwd=tmp_path)
    assert done.returncode == 2
    assert words in done.stderr and len(done.stderr.strip().splitlines()) <= 2, done.stderr
    assert "Traceback" not in done.stderr


def test_the_command_imports_no_torch_pandas_or_scipy(nrc):
    code = (f"import sys, runpy; sys.argv = ['x', 'bws', 'score', {str(nrc)!r}]\n"
            "try: runpy.run_module('semrel', run_name='__main__')\n"
            "except SystemExit: pass\n"
            "print(sorted(m for m in ('torch', 'pandas', 'scipy') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout + done.stderr
