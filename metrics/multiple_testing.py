"""Multiple-comparison corrections of p-values: one claim per test, the family-wise error rate kept.

- **Holm** (Holm 1979, "A simple sequentially rejective multiple test procedure", Scandinavian
  Journal of Statistics 6:65): sort the m p-values ascending, p₍₁₎ ≤ … ≤ p₍ₘ₎; the adjusted
  p₍ᵢ₎ is max over j ≤ i of min(1, (m − j + 1)·p₍ⱼ₎). Rejecting where the adjusted p < α keeps
  the probability of any false rejection ≤ α under any dependence between the tests, and rejects
  at least what Bonferroni (m·p) rejects. Equal to ``statsmodels``' ``multipletests(method="holm")``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

CORRECTIONS = {"holm": "Holm (1979) step-down adjustment: family-wise error rate <= alpha"}


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm-adjusted p-values, in the input order.

    >>> holm([0.01, 0.04, 0.03, 0.2]).tolist()
    [0.04, 0.09, 0.09, 0.2]
    """
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"p_values must be a flat list, got shape {p.shape}")
    bad = np.flatnonzero(~((p >= 0) & (p <= 1)))
    if bad.size:
        raise ValueError(f"p_values[{bad[0]}] is {p[bad[0]]}; a p-value is a number in [0, 1]")
    m = p.size
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adjusted
    return out
