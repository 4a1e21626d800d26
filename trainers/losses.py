"""Training objectives: MSE on [0, 1] labels, the C-STS quadruplet loss, their sum, and CoSENT.

Objectives ``mse``, ``quad`` and ``quad+mse`` are those of Deshpande et al. 2023 ("C-STS:
Conditional Semantic Textual Similarity", §4.1); ``cosent`` (Su 2022) is a ranking objective on
the same scores, offered beside them.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

OBJECTIVES = ("mse", "quad", "quad+mse", "cosent")


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


def cosent_loss(scores: torch.Tensor, labels: torch.Tensor, scale: float = 20.0) -> torch.Tensor:
    """``log(1 + Σ_{y_i > y_j} exp(scale · (s_j − s_i)))`` over the batch's pairs of rows.

    Penalises every pair of rows whose predicted order contradicts the gold order, smoothly:
    a ranking loss, aligned with Spearman's ρ, that leaves the score scale free. Reference:
    Su 2022, "CoSENT" (https://kexue.fm/archives/8847); scale 20 as in sentence-transformers'
    ``CoSENTLoss`` and Li & Li 2023 (AnglE).

    >>> round(float(cosent_loss(torch.tensor([0.1, 0.9]), torch.tensor([1.0, 0.0]))), 3)
    16.0
    """
    diff = scale * (scores[None, :] - scores[:, None])  # diff[i, j] = scale (s_j - s_i)
    wrong_way = diff[labels[:, None] > labels[None, :]]
    return torch.logsumexp(torch.cat([diff.new_zeros(1), wrong_way]), dim=0)


def objective_loss(objective: str, scores, labels, embeddings1=None, embeddings2=None,
                   quad: QuadrupletLoss | None = None) -> torch.Tensor:
    """The ``objective``'s loss for one batch.

    ``mse``: ``mean((score − y)²)``. ``quad``: the quadruplet loss over the batch's condition
    groups, laid out as rows ``[high_0, low_0, high_1, low_1, ...]`` (see
    :class:`trainers.samplers.GroupBatchSampler`). ``quad+mse``: their sum. ``cosent``:
    :func:`cosent_loss` of the scores.
    """
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
    if objective == "cosent":
        return cosent_loss(scores.float(), labels.float())
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
