"""semrel bws design --pairs: tuples of pair ids from a pairs file, run as a user runs it."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from test_bws_command import run

from semrel.metrics.bws.design import generate_tuples, pair_count_std
from semrel.metrics.bws.pairs_file import read_pairs, read_tuples

HEADER = "pair_id,sentence1,sentence2,score,source\n"


def pairs_text(n: int) -> str:
    return HEADER + "".join(f"p{i:03d},first sentence {i},second sentence {i},0.5,books\n" for i in range(n))


@pytest.fixture
def pairs(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text(pairs_text(50), encoding="utf-8")
    return path


def test_tuples_of_pair_ids_2n_each_pair_8_times_the_most_even_design(pairs, tmp_path):
    done = run("design", "--pairs", pairs, "--designs", "20", "--seed", "3", "--csv", tmp_path / "t.csv")
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == "100 tuples of 50 items; pair co-occurrence std " \
        f"{generate_tuples(read_pairs(pairs).ids, n_designs=20, seed=3).pair_count_std:.4f} (best of 20 designs)"
    rows = list(csv.reader(io.StringIO((tmp_path / "t.csv").read_text(encoding="utf-8"))))
    assert rows[0] == ["tuple_id", "Item1", "Item2", "Item3", "Item4"]
    assert [r[0] for r in rows[1:]] == [f"t{i:05d}" for i in range(1, 101)]  # 2N tuples
    design = generate_tuples(read_pairs(pairs).ids, n_designs=20, seed=3)
    assert [r[1:] for r in rows[1:]] == design.tuples.tolist()  # the best-of-n design, ids kept
    counts = np.unique(design.tuples, return_counts=True)[1]
    assert counts.min() == counts.max() == 8  # each pair 2k = 8 times
    codes = np.searchsorted(sorted(read_pairs(pairs).ids), design.tuples)
    assert pair_count_std(codes, 50) == design.pair_count_std == design.candidate_stds.min()
    tuples = read_tuples(tmp_path / "t.csv", read_pairs(pairs))  # what the annotation adapters read back
    assert tuples["t00001"] == rows[1][1:] and len(tuples) == 100


def test_the_same_seed_gives_the_same_tuples_to_stdout(pairs):
    first, second = run("design", "--pairs", pairs, "--designs", "5"), run("design", "--pairs", pairs, "--designs", "5")
    assert first.returncode == 0 and first.stdout == second.stdout
    assert first.stdout != run("design", "--pairs", pairs, "--designs", "5", "--seed", "1").stdout


@pytest.mark.parametrize("text, message", [
    ("pair_id,sentence1\np1,a\n", "{f}: missing columns (a pairs file needs pair_id, sentence1, sentence2; "
                                   "missing sentence2; header is ['pair_id', 'sentence1'])"),
    ("id,sentence1,sentence2\np1,a,b\n", "{f}: missing columns (a pairs file needs pair_id, sentence1, sentence2; "
                                         "missing pair_id; header is ['id', 'sentence1', 'sentence2'])"),
    (HEADER + "p1,a,b,1,x\np2,c,d,1,x\np1,e,f,1,x\n", "{f}: row 3: a pair id appears twice ('p1', first in row 1)"),
    (HEADER + "p1,a cat,a dog,1,x\np2,c,d,1,x\np3,a dog,a cat,1,x\n",
     "{f}: row 3: the same pair twice, in swapped order (pair 'p3' is row 1's 'p1' with sentence1 and "
     "sentence2 swapped)"),
    (HEADER + "p1,a cat,a dog,1,x\np2,a  cat,a dog ,1,x\n",
     "{f}: row 2: the same pair twice (pair 'p2' is row 1's 'p1')"),
    (HEADER + "p1,a cat,a  cat,1,x\n", "{f}: row 1: sentence1 and sentence2 are the same text (pair 'p1')"),
    (HEADER + "p1,a,b,1,x\n,c,d,1,x\n", "{f}: row 2: empty pair_id"),
    (HEADER + "p1,a,,1,x\n", "{f}: row 1: empty sentence2"),
    (HEADER + "p1,a,b,1\n",
     "{f}: row 1: row has fewer fields than the header (4 fields, header has 5; truncated file?)"),
    (HEADER, "{f}: file has a header but no data rows"),
])
def test_a_bad_pairs_file_is_one_line_naming_the_row(text, message, tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text(text, encoding="utf-8")
    done = run("design", "--pairs", path, "--csv", tmp_path / "t.csv")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"semrel bws design: error: {message.format(f=path)}\n"
    assert not (tmp_path / "t.csv").exists()


@pytest.mark.parametrize("args, message", [
    (["x.txt", "--pairs", "{p}"],
     "argument --pairs: not allowed with argument ITEMS_FILE (see semrel bws design --help)"),
    ([], "one of the arguments ITEMS_FILE --pairs is required (see semrel bws design --help)"),
    (["--pairs", "{missing}"], "{missing}: no such file (a pairs file)"),
    (["--pairs", "{p}", "--csv", "{p}"], "--csv {p}: is the same file as PAIRS {p}: an output never replaces an input; "
                                        "give another path"),
])
def test_wrong_arguments(args, message, pairs, tmp_path):
    names = {"p": pairs, "missing": tmp_path / "missing.csv"}
    done = run("design", *[a.format(**names) for a in args])
    assert done.returncode == 2
    assert done.stderr == f"semrel bws design: error: {message.format(**names)}\n"
    assert pairs.read_text(encoding="utf-8") == pairs_text(50)  # the input is never overwritten


@pytest.mark.parametrize("text, message", [
    ("tuple_id,Item1,Item2\nt1,p000,p001\nt1,p002,p003\n", "{f}: row 2: a tuple id appears twice ('t1')"),
    ("tuple_id,Item1,Item2\nt1,p000,zzz\n", "{f}: row 1: an item is no pair id of the pairs file ('zzz' not in {p})"),
    ("tuple_id,Item1,Item2\nt1,p000,p000\n", "{f}: row 1: a tuple holds a pair twice (tuple 't1')"),
    ("Item1,Item2\np000,p001\n", "{f}: missing columns (a tuples file needs tuple_id, Item1..Itemk (k >= 2); "
                                 "header is ['Item1', 'Item2'])"),
])
def test_a_bad_tuples_file_names_the_row(text, message, pairs, tmp_path):
    path = tmp_path / "tuples.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError) as caught:
        read_tuples(path, read_pairs(pairs))
    assert str(caught.value) == message.format(f=path, p=pairs)
