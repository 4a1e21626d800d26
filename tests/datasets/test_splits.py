import random

import numpy as np
import pytest

from semrel.dataset_scripts.splits import leave_one_group_out, stable_hash, stratified_folds


def _data(n=503):
    rng = random.Random(0)
    ids = [f"item_{i}" for i in range(n)]
    strata = [rng.choice(["a", "b", "c", "dd"]) for _ in ids]
    return ids, strata


def test_stable_hash_is_pinned():
    # A pinned value: any change of algorithm, platform or library would change fold membership.
    assert stable_hash("STS_1") == 0x774F0862B9DE7C9F
    assert stable_hash("STS_1", salt="x") != stable_hash("STS_1")


def test_folds_partition_and_balance():
    ids, strata = _data()
    folds = stratified_folds(ids, strata, 5)
    assert folds.shape == (len(ids),) and set(folds.tolist()) == set(range(5))
    sizes = np.bincount(folds, minlength=5)
    assert sizes.max() - sizes.min() <= 1
    strata = np.asarray(strata)
    for s in set(strata.tolist()):
        per = np.bincount(folds[strata == s], minlength=5)
        assert per.max() - per.min() <= 1, s


def test_folds_do_not_depend_on_row_order():
    ids, strata = _data()
    reference = dict(zip(ids, stratified_folds(ids, strata, 5), strict=True))
    order = list(range(len(ids)))
    random.Random(42).shuffle(order)
    shuffled = stratified_folds([ids[i] for i in order], [strata[i] for i in order], 5)
    assert {ids[i]: f for i, f in zip(order, shuffled, strict=True)} == reference


def test_salt_changes_assignment_and_duplicates_are_refused():
    ids, strata = _data()
    assert (stratified_folds(ids, strata, 5) != stratified_folds(ids, strata, 5, salt="other")).any()
    with pytest.raises(ValueError, match="duplicate id 'item_3'"):
        stratified_folds(ids + ["item_3"], strata + ["a"], 5)


def test_leave_one_group_out():
    masks = leave_one_group_out(["x", "y", "x", "z"])
    assert list(masks) == ["x", "y", "z"]
    assert masks["x"].tolist() == [True, False, True, False]
    assert sum(m.sum() for m in masks.values()) == 4
