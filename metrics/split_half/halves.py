"""Random half-splits of grouped annotations, for many trials at once.

Every group of n elements (the annotations of one BWS tuple, or the ratings of one item) gives
half A floor(n/2) or ceil(n/2) elements, uniformly among such subsets; for odd n each size has
probability 1/2 (as SHR-BWS.pl: the odd annotation goes to a random half). Half B is the rest.

Groups of the same size are drawn together. For n <= TABLE_MAX_GROUP a trial picks one row of the
table of all half-splits of n (one random integer per group and trial); larger groups rank random
keys. Elements are laid out so that each draw is written without transposing: the groups sorted
by size, and inside a size class position-major (element j of group g at j * count + g).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache

import numpy as np

TABLE_MAX_GROUP = 16


@dataclass(frozen=True)
class Layout:
    """Where each element and group sits in the drawn arrays."""

    element_order: np.ndarray  # (elements,) element index at each drawn row
    group_order: np.ndarray  # (groups,) group id at each position
    classes: tuple  # ((n, count), ...) group size classes, in drawn order
    odd_groups: np.ndarray  # group ids of odd size, in the order of the rows of ``extra``


def layout(group: np.ndarray) -> Layout:
    """Layout of elements whose group ids are ``group`` (0..G-1, every id used)."""
    sizes = np.bincount(group)
    group_order = np.argsort(sizes, kind="stable")
    position = np.empty_like(group_order)
    position[group_order] = np.arange(len(group_order))
    n_values, counts = np.unique(sizes[group_order], return_counts=True)
    group_start = np.concatenate([[0], np.cumsum(counts)])[:-1]  # first position of each class
    element_start = np.concatenate([[0], np.cumsum(n_values * counts)])[:-1]
    by_group = np.argsort(group, kind="stable")
    rank = np.empty_like(by_group)  # index of each element within its group
    rank[by_group] = np.arange(len(group)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    cls = np.searchsorted(n_values, sizes[group])
    row = element_start[cls] + rank * counts[cls] + position[group] - group_start[cls]
    element_order = np.empty_like(row)
    element_order[row] = np.arange(len(group))
    return Layout(element_order=element_order, group_order=group_order,
                  classes=tuple(zip(n_values.tolist(), counts.tolist(), strict=True)),
                  odd_groups=group_order[(sizes[group_order] % 2) == 1])


def random_halves(lay: Layout, trials: int, rng: np.random.Generator,
                  dtype=np.float32) -> tuple[np.ndarray, np.ndarray]:
    """Half-A membership (elements in ``lay.element_order``, trials) as 0/1 of ``dtype``, and for
    the odd-sized groups (``lay.odd_groups``, trials) whether half A got the extra element."""
    rows = sum(n * count for n, count in lay.classes)
    member = np.empty((rows, trials), dtype=dtype)
    extra, start = [], 0
    for n, count in lay.classes:
        block = member[start:start + n * count].reshape(n, count, trials)
        if n <= TABLE_MAX_GROUP:
            table = _half_splits(n)
            pick = rng.integers(0, table.shape[1], size=(count, trials), dtype=np.uint16)
            np.take(table.astype(dtype), pick, axis=1, out=block)
        else:
            keys = rng.random((n, count, trials))
            size = n // 2 + (rng.integers(0, 2, size=(count, trials)) if n % 2 else 0)
            block[...] = keys.argsort(axis=0).argsort(axis=0) < size
        if n % 2:
            extra.append(block.sum(axis=0) - n // 2)
        start += n * count
    return member, (np.concatenate(extra) if extra else np.zeros((0, trials), dtype=dtype))


@cache
def _half_splits(n: int) -> np.ndarray:
    """(n, subsets) 0/1: all subsets of size floor(n/2), and of ceil(n/2) when n is odd."""
    subsets = [s for m in sorted({n // 2, (n + 1) // 2}) for s in itertools.combinations(range(n), m)]
    table = np.zeros((n, len(subsets)), dtype=np.uint8)
    for column, subset in enumerate(subsets):
        table[list(subset), column] = 1
    return table
