"""Lexical overlap of sentence pairs: the Dice coefficient of unique unigrams.

Abdalla et al. (2023), STR-2021 paper §5, Eq. 1:

    dice(X, Y) = 2 · |unigrams(X) ∩ unigrams(Y)| / (|unigrams(X)| + |unigrams(Y)|)

Unigrams are the unique lower-cased word tokens (``\\w+`` runs, Unicode aware). A pair of two
token-less strings has no defined overlap and raises an error naming the row.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from .correlation import CorrelationResult, correlate
from .text_numbers import float_array

TOKEN = re.compile(r"\w+", re.UNICODE)


def unigrams(text: str) -> frozenset[str]:
    return frozenset(TOKEN.findall(text.lower()))


def dice(sentence1: Sequence[str], sentence2: Sequence[str]) -> np.ndarray:
    """Dice coefficient per pair, in [0, 1]."""
    if len(sentence1) != len(sentence2):
        raise ValueError(f"dice: {len(sentence1)} first sentences but {len(sentence2)} second")
    out = np.empty(len(sentence1), dtype=np.float64)
    for row, (a, b) in enumerate(zip(sentence1, sentence2, strict=True)):
        ua, ub = unigrams(a), unigrams(b)
        if not ua and not ub:
            raise ValueError(f"dice: row {row}: both sentences have no word token ({a!r}, {b!r})")
        out[row] = 2 * len(ua & ub) / (len(ua) + len(ub))
    return out


def dice_correlation(sentence1: Sequence[str], sentence2: Sequence[str],
                     references: Sequence[float]) -> CorrelationResult:
    """Spearman and Pearson correlation of the Dice coefficient with gold scores."""
    scores = dice(sentence1, sentence2)
    gold = float_array(references, "references")
    if gold.shape != scores.shape:
        raise ValueError(f"dice_correlation: {len(gold)} references for {len(scores)} pairs")
    if not np.isfinite(gold).all():
        row = int(np.argmin(np.isfinite(gold)))
        raise ValueError(f"dice_correlation: references[{row}] is {gold[row]}; references must be finite numbers")
    return correlate(scores, gold)
