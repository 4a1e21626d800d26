"""Czech News STS paper numbers (Sido et al. 2021) and the agreement computation they are compared with."""

from __future__ import annotations

import numpy as np

PAPER_INTER = {"pearson": 0.861, "spearman": 0.840, "rmse": 1.017, "mse": 1.035}  # Table 1, inter
PAPER_BOUND = 0.1731  # MSE lower bound, §6 and §10
PAPER_TABLE2_FREE = (2.66, 1.78)  # Table 2 "test free": mean, "variance" (it is the std)
# Table 5, free test: the best model, Czert cross-attention fine-tuned on the RAW train split
# (116,956 Czech pairs, Table 4; a user-supplied file here)
PAPER_FINE_TUNED = {"model": "Czert cross-attention", "train_pairs": 116956, "pearson": 0.919,
                    "spearman": 0.893}


def agreement_of(annotations):
    """Annotator agreement of per-pair annotation lists; annotators are positions (the public file
    has no annotator ids), see ``metrics.annotator_agreement``."""
    from semrel.metrics.agreement import annotator_agreement

    items = np.repeat(np.arange(len(annotations)), [len(a) for a in annotations])
    annotators = np.concatenate([np.arange(len(a)) for a in annotations])  # positions, not ids
    return annotator_agreement(items, annotators, np.concatenate(
        [np.asarray(a, dtype=float) for a in annotations]))


def agreement_intervals(annotations, confidence: float = 0.95, *, n_resamples: int = 1000,
                        seed: int | None = 0) -> dict:
    """Intervals of the inter-annotator Pearson and Spearman of :func:`agreement_of`: ``pooled``
    (each rating against its pair's mean, the paper's Table 1) and ``loo`` (against the mean of
    the others), each ``{"pearson": Estimate, "spearman": Estimate}`` with a percentile interval
    from a bootstrap over pairs that keeps a pair's annotations together
    (:func:`semrel.metrics.human_correlation.average_annotator`). Needs >= 8 pairs."""
    from semrel.metrics.human_correlation import average_annotator

    arrays = [np.asarray(a, dtype=float) for a in annotations]
    options = dict(n_resamples=n_resamples, seed=seed)
    return {"pooled": average_annotator(arrays, confidence, include_self=True, **options),
            "loo": average_annotator(arrays, confidence, **options)}
