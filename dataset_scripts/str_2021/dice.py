"""The STR-2021 lexical-overlap (Dice) baseline: paper Table 5 row 1 and Table 6 column 1.

Protocol (paper §6): Dice needs no training, but to compare with trained models it is evaluated on
each of the 5 CV test folds separately and the Spearman correlations are averaged; per source, the
correlation is taken over the fold's pairs of that source.
"""

from __future__ import annotations

import numpy as np

from semrel.metrics.overlap import dice

from .builder import N_FOLDS

PAPER_OVERALL = 0.57  # Table 5, row 1
PAPER_PER_SOURCE = {  # Table 6, Dice CV column (paper names Wikipedia "Wiki")
    "STS": 0.60, "SNLI": 0.53, "Stance": 0.20, "Goodreads": 0.44, "Wikipedia": 0.48,
    "Formality": 0.69, "ParaNMT": 0.44,
}


def fold_correlations(mirror=None, cache_dir=None) -> tuple[list[float], dict[str, list[float]]]:
    """Spearman ρ of Dice vs the human scores on each CV test fold: (overall, per source)."""
    from scipy import stats

    from .. import load

    overall, per_source = [], {s: [] for s in PAPER_PER_SOURCE}
    for fold in range(N_FOLDS):
        test = load("str-2021", f"cv-fold-{fold}", mirror=mirror, cache_dir=cache_dir)["test"]
        pred = dice(test["sentence1"], test["sentence2"])
        gold = np.asarray(test["score"], dtype=float)
        sources = np.asarray(test["source"])
        overall.append(stats.spearmanr(pred, gold).statistic)
        for source in per_source:
            mask = sources == source
            per_source[source].append(stats.spearmanr(pred[mask], gold[mask]).statistic)
    return overall, per_source
