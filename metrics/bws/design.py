"""Tuple design for Best-Worst Scaling annotation (Kiritchenko & Mohammad 2016, 2017).

Follows the NRC script ``generate-BWS-tuples.pl``: ``round(factor * N)`` k-tuples (round half up)
are cut from a stream of random permutations of the N items, so every item appears
``factor * k`` times give or take one. Where a tuple straddles two permutations, items of the
new permutation that are already in the tuple are moved to that permutation's end, so no tuple
repeats an item. Of ``n_designs`` such random designs the one whose pair co-occurrence counts
spread least is kept: the standard deviation (ddof 1) of the counts over all N(N-1)/2 item pairs,
zeros included.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TupleDesign:
    """The chosen design and the pair-count spread of every candidate."""

    tuples: np.ndarray  # (n_tuples, k) item ids
    pair_count_std: float  # spread of pair co-occurrence counts of the chosen design
    candidate_stds: np.ndarray  # (n_designs,) the same for every candidate, in generation order


def generate_tuples(items, *, k: int = 4, factor: float = 2.0, n_designs: int = 100,
                    seed=0) -> TupleDesign:
    """Best of ``n_designs`` random designs of ``round(factor * N)`` k-tuples over ``items``.

    Args:
        items: the item ids (distinct), or an int N for items 0..N-1.
        seed: int or numpy Generator; default 0, so the same call gives the same design;
            seed=None draws fresh randomness.

    >>> d = generate_tuples(10, k=4, factor=2, n_designs=20, seed=0)
    >>> d.tuples.shape
    (20, 4)
    """
    ids = np.arange(items) if isinstance(items, (int, np.integer)) else np.asarray(items)
    values, counts = np.unique(ids, return_counts=True)
    if (counts > 1).any():
        raise ValueError(f"items must be distinct; repeated: {values[counts > 1][:10].tolist()}")
    n = len(ids)
    if not 2 <= k <= n:
        raise ValueError(f"need 2 <= k <= number of items, got k={k}, {n} items")
    if factor <= 0 or n_designs < 1:
        raise ValueError(f"need factor > 0 and n_designs >= 1, got {factor} and {n_designs}")
    n_tuples = int(np.floor(factor * n + 0.5))
    rng = np.random.default_rng(seed)
    best, stds = None, np.empty(n_designs)
    for d in range(n_designs):
        design = _random_design(n, n_tuples, k, rng)
        stds[d] = pair_count_std(design, n)
        if best is None or stds[d] < stds[best[0]]:
            best = (d, design)
    return TupleDesign(tuples=ids[best[1]], pair_count_std=float(stds[best[0]]), candidate_stds=stds)


def tuple_ids(n: int) -> list[str]:
    """Ids of a design's ``n`` tuples in design order, ``t`` and a zero-padded number.

    >>> tuple_ids(3)
    ['t00001', 't00002', 't00003']
    """
    return [f"t{i:05d}" for i in range(1, n + 1)]


def pair_count_std(tuples: np.ndarray, n_items: int) -> float:
    """Standard deviation (ddof 1) of co-occurrence counts over all n(n-1)/2 pairs of item codes."""
    k = tuples.shape[1]
    low = np.concatenate([np.minimum(tuples[:, i], tuples[:, j]) for i in range(k) for j in range(i + 1, k)])
    high = np.concatenate([np.maximum(tuples[:, i], tuples[:, j]) for i in range(k) for j in range(i + 1, k)])
    _, counts = np.unique(low.astype(np.int64) * n_items + high, return_counts=True)
    n_pairs = n_items * (n_items - 1) // 2
    if n_pairs == 1:
        return 0.0
    mean = counts.sum() / n_pairs
    squares = ((counts - mean) ** 2).sum() + mean**2 * (n_pairs - len(counts))  # absent pairs count 0
    return float(np.sqrt(squares / (n_pairs - 1)))


def _random_design(n: int, n_tuples: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """(n_tuples, k) item codes cut from consecutive random permutations (one loop step each)."""
    tuples, leftover = [], np.empty(0, dtype=np.int64)
    while sum(map(len, tuples)) < n_tuples:
        stream = rng.permutation(n)
        if len(leftover):  # complete the straddling tuple without repeating an item
            need = k - len(leftover)
            clash = np.isin(stream, leftover)
            end = np.flatnonzero(np.cumsum(~clash) == need)[0] + 1
            head, moved = stream[:end][~clash[:end]], stream[:end][clash[:end]]
            tuples.append(np.concatenate([leftover, head])[None, :])
            stream = np.concatenate([stream[end:], moved])
        full = len(stream) // k
        tuples.append(stream[: full * k].reshape(full, k))
        leftover = stream[full * k:]
    return np.concatenate(tuples)[:n_tuples]
