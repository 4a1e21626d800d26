"""Split-half reliability of BWS annotations scored by a model-based or tournament method.

The halves are drawn as for counting (:func:`split_half.split_half_bws`: every distinct tuple's
annotations shuffled and halved, the odd one to a random half); each half is scored by
``method`` (:mod:`semrel.metrics.bws.scoring`) and the two halves' ``score`` (bradley_terry:
tanh(theta / 2); value: 2v - 1) are correlated over the items annotated in both halves (Spearman
on average ranks, Pearson). Bradley–Terry is fitted once per half; Value plays the tournaments of
a chunk of trials together (one shuffle per pass, shared), seeded from ``seed``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..bws.counting import Annotations
from ..bws.scoring import DEFAULT_ALPHA, DEFAULT_PASSES, bradley_terry, check_method, implied_pairs, value_tournament
from .halves import layout, random_halves
from .trialwise import masked_pearson, ranks_by_sorting

CHUNK_CELLS = 1 << 22  # (pairs or annotations) x trials per chunk


def split_half_method(ann: Annotations, group: np.ndarray, method: str, *, trials: int, seed,
                      alpha: float = DEFAULT_ALPHA, passes: int = DEFAULT_PASSES):
    """(spearman_trials, pearson_trials, n_items_both) over ``trials`` splits of the annotations in
    ``ann``, grouped by ``group`` (tuple id per annotation)."""
    check_method(method)
    if method == "counting":
        raise ValueError("counting has its own vectorised split_half_bws")
    n, n_items = len(ann.best), len(ann.items)
    rng = np.random.default_rng(seed)
    lay = layout(group)
    incidence = sp.csr_matrix((np.ones(ann.tuples.size, dtype=np.float32),
                               (ann.tuples.ravel(), np.repeat(np.arange(n), ann.tuples.shape[1]))),
                              shape=(n_items, n))
    winners, losers, source = implied_pairs(ann.tuples, ann.best, ann.worst, with_source=True)
    chunk = max(1, min(trials, CHUNK_CELLS // (2 * len(winners))))
    rho, r, both = [], [], []
    for start in range(0, trials, chunk):
        m = min(chunk, trials - start)
        member, _ = random_halves(lay, m, rng, np.float32)
        in_a = np.empty((n, m), dtype=bool)
        in_a[lay.element_order] = member > 0
        halves = np.concatenate([in_a, ~in_a], axis=1)  # (annotations, 2m): fit f = half f // m of trial f % m
        counts = np.asarray((incidence @ halves.astype(np.float32)).T)  # (2m, items) appearances per half
        valid = (counts[:m] > 0) & (counts[m:] > 0)
        if method == "bradley_terry":
            scores = np.tanh(np.stack([
                bradley_terry(ann.tuples[h], ann.best[h], ann.worst[h], n_items, alpha=alpha)
                for h in halves.T]) / 2.0)
        else:
            scores = 2.0 * value_tournament(winners, losers, n_items, halves[source], passes=passes,
                                            seed=rng.integers(2**63)) - 1.0
        a, b = scores[:m], scores[m:]
        rho.append(masked_pearson(ranks_by_sorting(a, valid), ranks_by_sorting(b, valid), valid))
        r.append(masked_pearson(a, b, valid))
        both.append(valid.sum(axis=1))
    return np.concatenate(rho), np.concatenate(r), np.concatenate(both)
