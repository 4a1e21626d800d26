"""c-sts ``reannotated-dev``: a dev split carved from the re-annotated train, both conditions of a
pair together, a function of the pairs (never of their order), stratified."""

from __future__ import annotations

from collections import Counter

import pytest

from project import needs_mirror
from semrel.dataset_scripts import load
from semrel.dataset_scripts.errors import DataValidationError


def pair_keys(rows):
    return list(zip(rows["sentence1"], rows["sentence2"], strict=True))


def test_dev_carve_keeps_both_conditions_of_a_pair_together(fixture_mirror, cache_dir):
    carved = load("c-sts", "reannotated-dev", mirror=fixture_mirror, cache_dir=cache_dir)
    whole = load("c-sts", "reannotated", mirror=fixture_mirror, cache_dir=cache_dir)
    assert list(carved) == ["train", "dev", "validation", "validation_invalid"]
    assert {s: len(d) for s, d in carved.items()} == {"train": 10, "dev": 2, "validation": 6,
                                                      "validation_invalid": 2}
    dev, train = pair_keys(carved["dev"]), pair_keys(carved["train"])
    assert Counter(dev) == {dev[0]: 2} and not set(dev) & set(train)  # one pair, both conditions
    rows = sorted(carved["train"].to_list() + carved["dev"].to_list(), key=str)
    assert rows == sorted(whole["train"].to_list(), key=str)  # nothing lost, nothing added
    for split in ("validation", "validation_invalid"):
        assert carved[split].to_list() == whole[split].to_list()


def test_dev_carve_is_a_function_of_the_pairs_not_their_order():
    from semrel.dataset_scripts.c_sts.reannotated import carve_dev

    rows = [{"sentence1": f"pair {i // 2}", "sentence2": "other", "condition": f"c{i}",
             "score": float(1 + (i // 2) % 5 if i % 2 else 5 - (i // 2) % 3)} for i in range(400)]
    train, dev = carve_dev("toy", rows)
    assert len(dev) == 40 and len(train) == 360  # 20 of 200 pairs, both rows each
    assert set(Counter((r["sentence1"], r["sentence2"]) for r in dev).values()) == {2}
    shuffled = rows[1::2] + rows[0::2]  # the pairs' rows far apart, in another order
    assert sorted(map(str, carve_dev("toy", shuffled)[1])) == sorted(map(str, dev))
    assert [r["_n"] for r in carve_dev("toy", [{**r, "_n": n} for n, r in enumerate(rows)])[0]] == \
        sorted(n for n, r in enumerate(rows) if r not in dev)  # row order kept


def test_dev_carve_refuses_a_pair_without_exactly_two_conditions():
    from semrel.dataset_scripts.c_sts.reannotated import carve_dev

    rows = [{"sentence1": "a", "sentence2": "b", "condition": c, "score": 1.0} for c in "xyz"]
    with pytest.raises(DataValidationError, match=r"toy: row 1: a condition group .*rows \[1, 2, 3\]"):
        carve_dev("toy", rows)


@needs_mirror
def test_real_dev_carve_sizes_labels_and_pairs(mirror, cache_dir):
    carved = load("c-sts", "reannotated-dev", mirror=mirror, cache_dir=cache_dir)
    assert {s: len(d) for s, d in carved.items()} == {"train": 10206, "dev": 1136, "validation": 2620,
                                                      "validation_invalid": 214}
    dev, train = pair_keys(carved["dev"]), pair_keys(carved["train"])
    assert set(Counter(dev).values()) == set(Counter(train).values()) == {2}
    assert len(set(dev)) == 568 and not set(dev) & set(train)
    assert Counter(carved["dev"]["score"]) == {1.0: 112, 2.0: 190, 3.0: 379, 4.0: 242, 5.0: 213}

    def tied(rows):
        scores = {}
        for key, score in zip(pair_keys(rows), rows["score"], strict=True):
            scores.setdefault(key, []).append(score)
        return sum(a == b for a, b in scores.values())

    assert (tied(carved["dev"]), tied(carved["train"])) == (102, 925)  # of the 1,027: stratified
