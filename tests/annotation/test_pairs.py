"""``semrel pairs`` / :func:`semrel.annotation.pairs.sample_pairs`: candidate pairs from a corpus.

Bad corpora in one line naming file and row; the same seed gives the same bytes in any process;
no pair twice (nor its swap), no two identical texts; the bucket draw's proportions; shards give
what the whole corpus gives; ``--by`` a tiny model."""

from __future__ import annotations

import hashlib
import os
import random
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from project import REPO
from semrel.annotation.pairs import (
    assign_buckets,
    bucket_quotas,
    count_corpus,
    merge_counts,
    pair_id,
    sample_pairs,
    triangle_pairs,
)
from semrel.cli import main

WORDS = ("a", "the", "is", "and", "colour", "shape", "red", "blue", "green", "yellow", "circle", "square",
         "triangle", "star")


def corpus_lines(n: int, seed: int = 0, words=WORDS, low: int = 5, high: int = 12) -> list[str]:
    """``n`` distinct sentences of ``low``..``high`` words of ``words`` (a tiny encoder's vocabulary)."""
    rng, seen = random.Random(seed), {}
    while len(seen) < n:
        text = " ".join(rng.choices(words, k=rng.randint(low, high)))
        seen.setdefault(text, None)
    return list(seen)


def write(path, lines) -> str:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return str(path)


OK = "one two three four five"
BAD_CORPORA = [  # (file name, bytes, options, the error)
    ("c.txt", f"{OK}\n\nsix seven eight nine ten\n".encode(), {},
     "c.txt: row 2: empty text (on_invalid omit skips such rows and counts them)"),
    ("c.txt", f"{OK}\n\xff six seven eight nine\n".encode("latin-1"), {},
     "c.txt: row 2: file is not UTF-8 text (byte b'\\xff' at offset 24)"),
    ("c.txt", f"{OK}\n".encode(), {}, "c.txt: source 'c' has 1 distinct sentence(s) of 5-25 tokens: 0 pairs, "
     "fewer than n=1"),
    ("c.txt", f"{OK}\n{OK.upper()}\n".encode(), {}, "c.txt: source 'c' has 1 distinct sentence(s) of 5-25 "
     "tokens: 0 pairs, fewer than n=1"),  # the second is a duplicate
    ("c.txt", f"{OK}\none two\n".encode(), {}, "c.txt: source 'c' has 1 distinct sentence(s) of 5-25 tokens: "
     "0 pairs, fewer than n=1"),  # the second is too short
    ("c.csv", f"id,sentence\n1,{OK}\n".encode(), {}, "c.csv: no column 'text' (columns: id, sentence)"),
    ("c.csv", f"text,src\n{OK},x\n".encode(), {"source_column": "source"},
     "c.csv: no column 'source' (columns: text, src)"),
    ("c.csv", f"text,source\n{OK},\n".encode(), {"source_column": "source"},
     "c.csv: row 1: empty source ('source') (on_invalid omit skips such rows and counts them)"),
    ("c.csv", f"text\n{OK}\n{OK},x\n".encode(), {}, "c.csv: row 2: 2 fields, the header has 1"),
    ("c.csv", b"", {}, "c.csv: empty file (no header line)"),
    ("c.jsonl", f'{{"text": "{OK}"}}\n["{OK}"]\n'.encode(), {}, "c.jsonl: row 2: not a JSON object (list)"),
    ("c.jsonl", f'{{"text": "{OK}"}}\n{{"text": 3}}\n'.encode(), {}, "c.jsonl: row 2: 'text' is not a string (3)"),
    ("c.jsonl", f'{{"sentence": "{OK}"}}\n'.encode(), {}, "c.jsonl: row 1: no field 'text' (fields: sentence)"),
    ("c.dat", f"{OK}\n".encode(), {}, "format='auto': cannot tell the format of {tmp}/c.dat from its suffix "
     "'.dat': name it (lines, csv, tsv, jsonl)"),
    ("c.txt", f"{OK}\n".encode(), {"text_column": "body"},
     "text_column='body': {tmp}/c.txt is read as one sentence per line: it has no columns"),
]


@pytest.mark.parametrize(("name", "data", "options", "message"), BAD_CORPORA)
def test_a_bad_corpus_is_one_line_naming_file_and_row(tmp_path, name, data, options, message):
    (tmp_path / name).write_bytes(data)
    with pytest.raises(ValueError) as err:
        sample_pairs(tmp_path / name, 1, **options)
    assert str(err.value) == (message if "{tmp}" in message else f"{tmp_path}/{message}").format(tmp=tmp_path)


def test_empty_rows_and_duplicates_are_counted_under_the_stated_rules(tmp_path):
    lines = corpus_lines(40)
    path = write(tmp_path / "c.txt", [lines[0], "", "  " + lines[1].upper() + " ", *lines[1:], "", "two words"])
    sample = sample_pairs(path, 10, on_invalid="omit")
    c = sample.counts
    assert (c.rows_read, c.skipped.count, c.skipped.rows, c.too_short, c.too_long) == (44, 2, [2, 43], 1, 0)
    assert sample.duplicates == 1 and sample.sentences == {"c": 40}
    texts = set(sample.pairs["sentence1"]) | set(sample.pairs["sentence2"])
    assert lines[1].upper() in texts or lines[1] not in texts  # the first of the two is kept, as written
    assert sample.summary()[0] == ("44 rows read; 1 under and 0 over the token limits; 1 duplicates left out "
                                   "(the first of equal normalised texts kept); 2 empty rows skipped (rows 2, 43)")


def test_every_pair_of_a_small_corpus_once_never_swapped_never_identical(tmp_path):
    lines = corpus_lines(12)
    path = write(tmp_path / "c.txt", [*lines, lines[3].upper()])  # a duplicate differing in case only
    sample = sample_pairs(path, 66, draw="uniform")  # 12 distinct sentences: all 66 pairs
    pairs = sample.pairs
    assert len(pairs) == 66 and pairs["pair_id"].is_unique
    assert len({frozenset(p) for p in zip(pairs["sentence1"], pairs["sentence2"], strict=True)}) == 66
    assert not (pairs["sentence1"].str.casefold() == pairs["sentence2"].str.casefold()).any()
    assert set(pairs["sentence1"]) | set(pairs["sentence2"]) == set(lines)
    assert all(pid == pair_id(b, a) for pid, a, b in zip(pairs["pair_id"], pairs["sentence1"], pairs["sentence2"],
                                                          strict=True))


@pytest.mark.parametrize("n", [1, 2, 3, 7, 50])
def test_triangle_positions_are_every_pair_once(n):
    i, j = triangle_pairs(np.arange(n * (n - 1) // 2), n)
    assert list(zip(i.tolist(), j.tolist(), strict=True)) == [(a, b) for a in range(n) for b in range(a + 1, n)]


def test_triangle_positions_of_a_hundred_million_sentences_are_exact():
    n = 10**8
    last = n * (n - 1) // 2 - 1
    i, j = triangle_pairs(np.array([0, n - 2, n - 1, last - 1, last]), n)
    assert list(zip(i.tolist(), j.tolist(), strict=True)) == [(0, 1), (0, n - 1), (1, 2), (n - 3, n - 1),
                                                               (n - 2, n - 1)]


@pytest.mark.parametrize(("weights", "capacity", "n", "quota"), [
    ([1, 1, 1, 1], [9, 9, 9, 9], 8, [2, 2, 2, 2]),
    ([1, 1, 1], [9, 9, 9], 8, [3, 3, 2]),  # largest remainder, ties to the lower bucket
    ([1, 2, 4], [9, 9, 9], 7, [1, 2, 4]),
    ([1, 2, 4], [9, 9, 1], 7, [2, 4, 1]),  # a short bucket gives all it holds; the rest shared 1:2
    ([1, 1, 1], [0, 5, 5], 6, [0, 3, 3]),  # an empty bucket (tied percentiles)
    ([1, 1, 1], [1, 1, 5], 7, [1, 1, 5]),
])
def test_bucket_quotas(weights, capacity, n, quota):
    got = bucket_quotas(np.array(weights, float), np.array(capacity), n)
    assert got.tolist() == quota and got.sum() == n


class HashScorer:
    """A stand-in model: a score per pair from a hash of its texts (distinct, order-free)."""

    def score(self, s1, s2):
        return [int(hashlib.sha256(pair_id(a, b).encode()).hexdigest()[:12], 16) / 16**12
                for a, b in zip(s1, s2, strict=True)]


@pytest.mark.parametrize(("draw", "growth"), [("exponential", 1.05), ("exponential", 1.2), ("uniform", 1.05)])
def test_the_draw_takes_the_bucket_shares(tmp_path, draw, growth):
    path = write(tmp_path / "c.txt", corpus_lines(300))
    n = 500
    pairs = sample_pairs(path, n, draw=draw, growth=growth, by=HashScorer()).pairs  # no ties: 20n / 50 per bucket
    weights = growth ** np.arange(50) if draw == "exponential" else np.ones(50)
    share = n * weights / weights.sum()
    expected = np.floor(share).astype(int)
    expected[np.argsort(-(share - expected), kind="stable")[: n - expected.sum()]] += 1
    assert np.bincount(pairs["bucket"], minlength=50).tolist() == expected.tolist()
    edges = pairs.groupby("bucket")["sampling_score"].agg(["min", "max"])
    assert (edges["max"].to_numpy()[:-1] <= edges["min"].to_numpy()[1:]).all()  # buckets in score order


def test_percentile_buckets_hold_equal_shares():
    scores = np.random.default_rng(0).random(5000)
    assert np.bincount(assign_buckets(scores, 50)).tolist() == [100] * 50


def test_shards_equal_the_concatenated_corpus_bit_for_bit(tmp_path):
    lines = corpus_lines(200)
    lines.insert(150, lines[10].upper())  # in the second shard, a duplicate of one in the first
    (tmp_path / "whole").mkdir()
    whole = write(tmp_path / "whole" / "corpus.txt", lines)  # the source of both: "corpus"
    parts = [write(tmp_path / "corpus.txt", lines[:77]), write(tmp_path / "corpus-2.txt", lines[77:])]
    one, two = count_corpus(whole), merge_counts([count_corpus(p, source="corpus") for p in parts])
    assert (two.n_counted, two.df, two.key.tolist(), two.row.tolist(), two.sources) == (
        one.n_counted, one.df, one.key.tolist(), list(range(1, 78)) + list(range(1, 125)), ["corpus"])
    assert two.shard.tolist() == [0] * 77 + [1] * 124 and two.files == parts
    a, b = sample_pairs(whole, 40, seed=3), sample_pairs(parts, 40, seed=3)
    assert a.duplicates == b.duplicates == 1 and lines[150] not in set(b.pairs["sentence1"]) | set(b.pairs["sentence2"])
    pd.testing.assert_frame_equal(a.pairs, b.pairs)


def test_per_source_draws_and_the_seed(tmp_path):
    lines = corpus_lines(120)
    rows = [f"{text},{'books' if i % 3 else 'news'}" for i, text in enumerate(lines)]
    path = write(tmp_path / "c.csv", ["text,source", *rows])
    a = sample_pairs(path, 30, source_column="source", seed=1).pairs
    assert a["source"].value_counts().to_dict() == {"books": 30, "news": 30}
    of = dict(zip(lines, ["books" if i % 3 else "news" for i in range(120)], strict=True))
    assert all(of[x] == of[y] == s for x, y, s in zip(a["sentence1"], a["sentence2"], a["source"], strict=True))
    pd.testing.assert_frame_equal(a, sample_pairs(path, 30, source_column="source", seed=1).pairs)
    assert not a["pair_id"].equals(sample_pairs(path, 30, source_column="source", seed=2).pairs["pair_id"])


def semrel(*args, env=None):
    return subprocess.run([sys.executable, "-m", "semrel", *map(str, args)], cwd=REPO.parent, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})


def test_the_command_writes_the_same_bytes_in_any_process_and_answers_a_typo(tmp_path):
    path = write(tmp_path / "c.txt", corpus_lines(150))
    outputs = []
    for hash_seed in ("1", "2"):
        out = tmp_path / f"pairs-{hash_seed}.csv"
        done = semrel("pairs", path, "--n", 60, "--seed", 4, "--output", out, env={"PYTHONHASHSEED": hash_seed})
        assert done.returncode == 0, done.stderr
        assert done.stderr.splitlines()[-1] == f"60 pairs written to {out}"
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    assert outputs[0].decode().splitlines()[0] == "pair_id,sentence1,sentence2,sampling_score,sampled_by,bucket,source"
    done = semrel("pairs", path, "--n", 5, "--output", tmp_path / "x.csv", "--sed", 1)
    assert (done.returncode, done.stderr) == (2, "semrel: error: unrecognized arguments: --sed 1 (see semrel --help)\n")
    assert not (tmp_path / "x.csv").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--output", "{corpus}"], "--output {corpus}: is the same file as CORPUS {corpus}: an output never "
                               "replaces an input; give another path"),
    (["--output", "{tmp}/o.csv", "--candidates", "3"], "--candidates 3: must be an integer >= --n, or None"),
    (["--output", "{tmp}/o.csv", "--min-tokens", "9", "--max-tokens", "6"],
     "--max-tokens 6: must be an integer >= min_tokens"),
    (["--output", "{tmp}/o.csv", "--growth", "0"], "--growth 0.0: must be a finite number > 0"),
    (["{tmp}/missing.txt", "--output", "{tmp}/o.csv"], "{tmp}/missing.txt: no such file (a corpus: .txt, .csv, "
                                                       ".tsv or .jsonl)"),
])
def test_command_line_mistakes_are_one_line(tmp_path, capsys, args, message):
    corpus = write(tmp_path / "c.txt", corpus_lines(20))
    argv = [a.format(tmp=tmp_path, corpus=corpus) for a in args]
    before = (tmp_path / "c.txt").read_bytes()
    assert main(["pairs", *([] if argv[0].endswith(".txt") else [corpus]), *argv, "--n", "5"]) == 2
    assert capsys.readouterr().err == f"semrel pairs: error: {message.format(tmp=tmp_path, corpus=corpus)}\n"
    assert (tmp_path / "c.txt").read_bytes() == before and not (tmp_path / "o.csv").exists()


def test_by_a_tiny_model_buckets_its_cosines(tmp_path):
    from semrel.trainers.scoring import load_scorer
    from trainer_fixtures import tiny_sentence_transformer

    model = tiny_sentence_transformer(tmp_path / "st")
    path = write(tmp_path / "c.txt", corpus_lines(80))
    sample = sample_pairs(path, 40, by=str(model), candidates=400)
    pairs = sample.pairs
    assert len(pairs) == 40 and set(pairs["sampled_by"]) == {f"model:{model}"}
    scorer = load_scorer(str(model), cache_dir=None)
    cosines = scorer.score(list(pairs["sentence1"]), list(pairs["sentence2"]))
    assert np.allclose(pairs["sampling_score"], cosines, atol=1e-6) and not np.allclose(cosines, cosines[0])
    assert sample.summary()[1].startswith(f"c: 40 pairs from 400 candidates of 80 sentences by the score of {model}")
    again = sample_pairs(path, 40, by=scorer, candidates=400).pairs
    pd.testing.assert_frame_equal(pairs, again)
