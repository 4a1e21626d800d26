"""Where the next ratings go: a uniform assignment, and one that spends them on the items whose
means are least certain (it reaches a given correlation with the latent scores with fewer
ratings in simulation: benchmarks/results/making-a-dataset.md, "Next batch where it helps most"; the BWS
counterpart, tuples drawn by interval width, did not beat a uniform design there and lives only
in ``benchmarks/bench_next_batch.py``).

- **Ratings, uniform**: ``budget`` more ratings spread evenly, the remainder to the items with
  the fewest raters (ties at random).
- **Ratings, widest**: water-filling on the standard error of each item's mean: item i gets n_i
  more ratings so that s_i/√(m_i + n_i) falls below one level τ, τ found by bisection so that
  Σ n_i = budget exactly (the last ratings go to the widest of the items at the level). s_i² is
  shrunk towards the pooled within-item variance s̄² with ``prior`` pseudo-ratings,
  ((m_i − 1)·s_i² + prior·s̄²) / (m_i − 1 + prior), since 2 or 3 ratings give a noisy s_i.
"""

from __future__ import annotations

import numpy as np

BISECTION_STEPS = 60


def uniform_assignment(counts: np.ndarray, budget: int, rng: np.random.Generator) -> np.ndarray:
    """More ratings per item: ``budget`` spread evenly (module docstring)."""
    counts = np.asarray(counts)
    n = counts.size
    extra = np.full(n, budget // n, dtype=np.int64)
    order = np.lexsort((rng.random(n), counts))  # fewest raters first, ties at random
    extra[order[: budget % n]] += 1
    return extra


def shrunk_sd(values: np.ndarray, counts: np.ndarray, prior: float = 2.0) -> np.ndarray:
    """Each item's rating standard deviation shrunk towards the pooled one (module docstring)."""
    filled = np.where(np.isnan(values), 0.0, values)
    m = counts.astype(np.float64)
    mean = filled.sum(axis=1) / np.maximum(m, 1)
    ss = np.where(np.isnan(values), 0.0, (values - mean[:, None]) ** 2).sum(axis=1)
    df = np.maximum(m - 1, 0)
    pooled = ss.sum() / max(df.sum(), 1)
    return np.sqrt((ss + prior * pooled) / (df + prior))


def widest_assignment(sd: np.ndarray, counts: np.ndarray, budget: int) -> np.ndarray:
    """More ratings per item by water-filling the standard errors sd/√m (module docstring)."""
    sd, m = np.asarray(sd, dtype=np.float64), np.asarray(counts, dtype=np.float64)

    def given(tau):
        return np.maximum(np.ceil((sd / tau) ** 2 - m), 0)

    se = sd / np.sqrt(np.maximum(m, 1))
    low, high = 1e-12, float(se.max()) + 1e-12  # given(high) = 0; given(low) is huge
    for _ in range(BISECTION_STEPS):
        mid = np.sqrt(low * high)
        low, high = (mid, high) if given(mid).sum() > budget else (low, mid)
    extra = given(high).astype(np.int64)  # <= budget
    left = budget - int(extra.sum())
    if left:
        after = sd / np.sqrt(m + extra)  # the widest after the fill take the rest
        extra[np.argsort(-after, kind="stable")[:left]] += 1
    return extra
