"""Training objectives: MSE on [0, 1] labels, the C-STS quadruplet loss, and their sum.

Objectives (Deshpande et al. 2023, "C-STS: Conditional Semantic Textual Similarity", §4.1):
``mse``, ``quad`` and ``quad+mse``.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

OBJECTIVES = ("mse", "quad", "quad+mse")


class QuadrupletLoss(nn.Module):
    """``mean(max(0, margin + d(h1, h2) − d(l1, l2)))`` with the cosine distance ``d = 1 − cos``.

    ``h1, h2`` are the two sentences' vectors under the high-similarity condition, ``l1, l2``
    under the low-similarity condition of the same sentence pair; all of shape (groups, dim).
    The loss pushes the high pair at least ``margin`` closer than the low pair.
    Reference: Deshpande et al. 2023 (C-STS), §4.1; margin 1.0 as in the paper.

    >>> loss = QuadrupletLoss(margin=1.0)
    >>> h = torch.eye(2)
    >>> float(loss(h, h, h, -h))  # d(h1,h2)=0, d(l1,l2)=2: already 2 apart, no loss
    0.0
    """

    def __init__(self, margin: float = 1.0):
        super().__init__()
        self.margin = margin

    def forward(self, high1, high2, low1, low2) -> torch.Tensor:
        d_high = 1.0 - F.cosine_similarity(high1, high2, dim=-1)
        d_low = 1.0 - F.cosine_similarity(low1, low2, dim=-1)
        return torch.clamp_min(self.margin + d_high - d_low, 0.0).mean()


def objective_loss(objective: str, scores, labels, embeddings1=None, embeddings2=None,
                   quad: QuadrupletLoss | None = None) -> torch.Tensor:
    """The ``objective``'s loss for one batch.

    ``mse``: ``mean((score − y)²)``. ``quad``: the quadruplet loss over the batch's condition
    groups, laid out as rows ``[high_0, low_0, high_1, low_1, ...]`` (see
    :class:`trainers.samplers.GroupBatchSampler`). ``quad+mse``: their sum.
    """
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
    loss = scores.new_zeros(())
    if "mse" in objective:
        loss = loss + F.mse_loss(scores.float(), labels.float())
    if "quad" in objective:
        if embeddings1 is None or embeddings1.shape[0] % 2:
            raise ValueError("the quadruplet loss needs pair embeddings of whole (high, low) "
                             "condition groups (an even number of rows)")
        quad = quad or QuadrupletLoss()
        loss = loss + quad(embeddings1[0::2].float(), embeddings2[0::2].float(),
                           embeddings1[1::2].float(), embeddings2[1::2].float())
    return loss
