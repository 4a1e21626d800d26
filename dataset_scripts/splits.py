"""Stable splits: fold membership from a hash of each example's id.

Folds never depend on row order, machine or library version: within each stratum the ids are
ordered by ``stable_hash`` and dealt round-robin to the k folds, starting where the previous
stratum (strata in sorted order) stopped, so fold sizes differ by at most one overall and by at
most one within every stratum.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np


def stable_hash(key: str, salt: str = "semrel") -> int:
    """64-bit integer from sha256(salt + NUL + key): identical on every machine and run."""
    digest = hashlib.sha256(f"{salt}\0{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def stratified_folds(
    ids: Sequence[str], strata: Sequence[str] | None, k: int, salt: str = "semrel"
) -> np.ndarray:
    """Fold index in ``[0, k)`` for each id, stratified by ``strata`` (one label per id).

    Raises ``ValueError`` on duplicate ids (a fold must be a function of the id alone).
    """
    ids = [str(i) for i in ids]
    if k < 2:
        raise ValueError(f"k must be >= 2, got {k}")
    if len(set(ids)) != len(ids):
        seen, dup = set(), None
        for i in ids:
            if i in seen:
                dup = i
                break
            seen.add(i)
        raise ValueError(f"stratified_folds: duplicate id {dup!r}")
    strata = ["" for _ in ids] if strata is None else [str(s) for s in strata]
    if len(strata) != len(ids):
        raise ValueError("stratified_folds: ids and strata differ in length")
    hashes = np.array([stable_hash(i, salt) for i in ids], dtype=np.uint64)
    folds = np.empty(len(ids), dtype=np.int64)
    strata_arr = np.asarray(strata, dtype=object)
    start = 0
    for stratum in sorted(set(strata)):
        members = np.flatnonzero(strata_arr == stratum)
        order = np.array(sorted(members, key=lambda m: (int(hashes[m]), ids[m])), dtype=np.int64)
        folds[order] = (start + np.arange(len(order))) % k
        start = (start + len(order)) % k
    return folds


def leave_one_group_out(groups: Sequence[str]) -> dict[str, np.ndarray]:
    """For each group g (sorted), the boolean test mask ``groups == g``; train is its complement."""
    arr = np.asarray([str(g) for g in groups], dtype=object)
    return {g: arr == g for g in sorted(set(arr.tolist()))}
