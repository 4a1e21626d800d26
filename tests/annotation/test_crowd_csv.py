"""semrel annotate crowd: a crowd platform's results CSV (MTurk batch results) into the BWS file."""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys

import pytest

from project import REPO
from semrel.annotation.answers import pseudonym
from semrel.annotation.crowd_csv import read_crowd_csv

PAIRS = "pair_id,sentence1,sentence2\n" + "".join(f"p{i},first {i},second {i}\n" for i in range(1, 7))
TUPLES = "tuple_id,Item1,Item2,Item3,Item4\nt1,p1,p2,p3,p4\nt2,p3,p4,p5,p6\n"
HEAD = "HITId,WorkerId,AssignmentStatus,WorkTimeInSeconds,Input.tuple_id,Input.Item1,Input.Item2,Input.Item3," \
       "Input.Item4,Answer.best,Answer.worst\n"
T1, T2 = "t1,p1,p2,p3,p4", "t2,p3,p4,p5,p6"
RESULTS = HEAD + "".join(f"H,{row}\n" for row in [
    f"W1,Approved,30,{T1},p1,p4",
    f"W2,Submitted,31,{T1},p2,p3",
    f"W3,Rejected,2,{T1},p1,p2",       # rejected
    f"W1,Approved,20,{T2},p5,p6",
    f"W2,Approved,25,{T2},,",          # skipped
    f"W3,Approved,25,{T2},p3,",        # incomplete
    f"W4,Approved,25,{T2},p4,p4",      # contradictory
    f"W1,Approved,28,{T2},p6,p5",      # repeated: this answer counts
])
SUMMARY = ("7 answers from 4 annotators -> 3 annotations; 1 skipped (skipped by the annotator: no annotation); "
           "0 cancelled (cancelled in the tool: no annotation); 1 incomplete (best without worst (or worst without "
           "best): no annotation); 1 contradictory (the same pair chosen best and worst: no annotation); 1 repeated "
           "(the same annotator answered the tuple again: the last answer counts); 1 rejected (rejected on the "
           "platform: no annotation)")


def semrel(*args, cwd=REPO, env=None):
    return subprocess.run([sys.executable, "-m", "semrel", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})


@pytest.fixture
def files(tmp_path):
    for name, text in (("pairs.csv", PAIRS), ("tuples.csv", TUPLES), ("results.csv", RESULTS)):
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def crowd(folder, results="results.csv", output="out.csv", *more, env=None):
    return semrel("annotate", "crowd", folder / results, "--tuples", folder / "tuples.csv", "--pairs",
                  folder / "pairs.csv", "--output", folder / output, *more, env=env)


def test_results_become_the_bws_file_every_odd_row_counted(files):
    done = crowd(files, "results.csv", "out.csv", "--annotator-key", "k")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [SUMMARY, f"3 annotations written to {files / 'out.csv'}"]
    rows = list(csv.reader(io.StringIO((files / "out.csv").read_text(encoding="utf-8"))))
    assert rows == [["annotator", "tuple_id", "Item1", "Item2", "Item3", "Item4", "BestItem", "WorstItem"],
                    [pseudonym("W1", "k"), "t1", "p1", "p2", "p3", "p4", "p1", "p4"],
                    [pseudonym("W2", "k"), "t1", "p1", "p2", "p3", "p4", "p2", "p3"],
                    [pseudonym("W1", "k"), "t2", "p3", "p4", "p5", "p6", "p6", "p5"]]
    assert "W1" not in (files / "out.csv").read_text(encoding="utf-8")  # raw worker ids never written
    scored = semrel("bws", "score", files / "out.csv", "--csv", "-")  # what semrel bws score reads
    assert scored.returncode == 0, scored.stderr
    assert scored.stdout.splitlines()[1].split(",")[1:5] == ["p1", "2", "1", "0"]


def test_the_key_comes_from_the_environment_and_changes_every_pseudonym(files):
    read = read_crowd_csv(files / "results.csv", {"t1": ["p1", "p2", "p3", "p4"], "t2": ["p3", "p4", "p5", "p6"]},
                          salt="other")
    assert read.summary() == SUMMARY
    assert crowd(files, "results.csv", "out.csv", env={"SEMREL_ANNOTATOR_KEY": "other"}).returncode == 0
    written = [row[0] for row in csv.reader(io.StringIO((files / "out.csv").read_text(encoding="utf-8")))][1:]
    assert written == [row[0] for row in read.rows.rows] != [pseudonym("W1", "k")] * 3


@pytest.mark.parametrize("results, message", [
    (HEAD.replace(",Answer.worst", "") + f"H,W1,Approved,3,{T1},p1\n",
     "{r}: missing columns (a results file needs WorkerId, AssignmentStatus, Input.tuple_id, Answer.best, "
     "Answer.worst; missing Answer.worst)"),
    (HEAD + f"H,W1,Approved,3,{T1},p1,p4\nH,W2,Returned,3,{T1},p1,p4\n",
     "{r}: row 2: unknown AssignmentStatus ('Returned', not one of Submitted, Approved, Rejected)"),
    (HEAD + "H,W1,Approved,3,t1,p1,p2,p3,p5,p1,p5\n",
     "{r}: row 1: the posted items are not the tuple's pair ids (tuple 't1': p1, p2, p3, p5 posted, the tuples "
     "file has p1, p2, p3, p4)"),
    (HEAD + "H,W1,Approved,3,t9,p1,p2,p3,p4,p1,p4\n",
     "{r}: answer to a tuple the design does not hold (row 1: tuple 't9')"),
    (HEAD + f"H,W1,Approved,3,{T1},p1,p6\n",
     "{r}: worst is not a pair of its tuple (row 1: 'p6' not in tuple 't1' (p1, p2, p3, p4))"),
    (HEAD + f"H,W1,Approved,3,{T1},p1\n", "{r}: row 1: row has fewer fields than the header (10 fields, header "
                                          "has 11; truncated file?)"),
])
def test_a_bad_results_file_is_one_line_naming_file_and_row(files, results, message):
    (files / "bad.csv").write_text(results, encoding="utf-8")
    (files / "out.csv").write_text("mine\n", encoding="utf-8")
    done = crowd(files, "bad.csv", "out.csv")
    assert done.returncode == 2
    assert done.stderr == f"semrel annotate crowd: error: {message.format(r=files / 'bad.csv')}\n"
    assert (files / "out.csv").read_text(encoding="utf-8") == "mine\n"  # the user's file untouched


@pytest.mark.parametrize("output, message", [
    ("results.csv", "--output {f}/results.csv: is the same file as RESULTS {f}/results.csv: an output never "
                    "replaces an input; give another path"),
    ("pairs.csv", "--output {f}/pairs.csv: is the same file as --pairs {f}/pairs.csv: an output never replaces an "
                  "input; give another path"),
    ("link.csv", "--output {f}/link.csv: is a symbolic link: an output is replaced whole, never written through a "
                 "link; give another path"),
])
def test_an_output_that_is_an_input_or_a_link_is_refused(files, output, message):
    os.symlink(files / "elsewhere.csv", files / "link.csv")
    done = crowd(files, "results.csv", output)
    assert done.returncode == 2
    assert done.stderr == f"semrel annotate crowd: error: {message.format(f=files)}\n"
    assert (files / "pairs.csv").read_text(encoding="utf-8") == PAIRS
