"""Training objectives as ``nn.Module`` losses: :class:`~trainers.trainer.PairTrainer` is given
one (``PairTrainer(model, args, loss=PairCoSENTLoss())``) and delegates to it; :data:`LOSSES`
names them for ``--objective`` and ``PairTrainingArguments.objective`` (:func:`build_loss`).

Every loss takes one batch's ``scores`` (batch,) on the [0, 1] label scale, its ``labels``
(batch,) and, when it declares ``needs_embeddings``, the two pair vectors (batch, dim). A loss
that declares ``grouped`` is given batches of whole (high, low) condition groups, laid out as rows
``[high_0, low_0, high_1, low_1, ...]`` (:class:`trainers.samplers.GroupBatchSampler`).

``mse``, ``quad`` and ``quad+mse`` are the objectives of Deshpande et al. 2023 ("C-STS:
Conditional Semantic Textual Similarity", §4.1); ``cosent`` (Su 2022) is a ranking objective on
the same scores, offered beside them. Adding a loss: a :class:`PairLoss` subclass here, its
``name`` in ``LOSSES`` (for the CLI) and its test; a loss given straight to ``PairTrainer`` needs
no name in the table.
"""

from __future__ import annotations

from typing import ClassVar

import torch
from torch import nn
from torch.nn import functional as F

from semrel.metrics.errors import ParameterError


class PairLoss(nn.Module):
    """Base class: ``forward(scores, labels, embeddings1=None, embeddings2=None) -> scalar``."""

    name: ClassVar[str] = ""
    needs_embeddings: ClassVar[bool] = False  # needs one vector per sentence (bi/tri-encoders)
    grouped: ClassVar[bool] = False  # needs batches of whole (high, low) condition groups

    def forward(self, scores, labels, embeddings1=None, embeddings2=None) -> torch.Tensor:
        raise NotImplementedError


class PairMSELoss(PairLoss):
    """``mean((s − y)²)`` of scores ``s`` (batch,) against labels ``y`` (batch,) in [0, 1].

    Reference: Reimers & Gurevych 2019 (SBERT, regression objective); Deshpande et al. 2023 §4.1.

    >>> float(PairMSELoss()(torch.tensor([0.5, 1.0]), torch.tensor([0.0, 1.0])))
    0.125
    """

    name = "mse"

    def forward(self, scores, labels, embeddings1=None, embeddings2=None):
        return F.mse_loss(scores.float(), labels.float())


class QuadrupletLoss(PairLoss):
    """``mean(max(0, margin + d(h1, h2) − d(l1, l2)))`` with the cosine distance ``d = 1 − cos``.

    ``h1, h2`` are the two sentences' vectors under the high-similarity condition, ``l1, l2``
    under the low-similarity condition of the same sentence pair, each (groups, dim): rows
    ``0::2`` and ``1::2`` of the batch's ``embeddings1``/``embeddings2`` (batch, dim). The loss
    pushes the high pair at least ``margin`` closer than the low pair. Reference: Deshpande et al.
    2023 (C-STS), §4.1; margin 1.0 as in the paper.

    >>> h = torch.eye(2)  # group 0: d(h1,h2) = 0, d(l1,l2) = 2: already 2 apart, no loss
    >>> float(QuadrupletLoss(margin=1.0).quadruplet(h[:1], h[:1], h[:1], -h[:1]))
    0.0
    """

    name = "quad"
    needs_embeddings = True
    grouped = True

    def __init__(self, margin: float = 1.0):
        super().__init__()
        self.margin = margin

    def quadruplet(self, high1, high2, low1, low2) -> torch.Tensor:
        d_high = 1.0 - F.cosine_similarity(high1.float(), high2.float(), dim=-1)
        d_low = 1.0 - F.cosine_similarity(low1.float(), low2.float(), dim=-1)
        return torch.clamp_min(self.margin + d_high - d_low, 0.0).mean()

    def forward(self, scores, labels, embeddings1=None, embeddings2=None):
        if embeddings1 is None or embeddings1.shape[0] % 2:
            raise ValueError("the quadruplet loss needs pair embeddings of whole (high, low) "
                             "condition groups (an even number of rows)")
        return self.quadruplet(embeddings1[0::2], embeddings2[0::2], embeddings1[1::2],
                               embeddings2[1::2])


class QuadrupletMSELoss(QuadrupletLoss):
    """``PairMSELoss(s, y) + QuadrupletLoss(e1, e2)``: the sum of both (Deshpande et al. 2023 §4.1).

    Shapes as for the two parts: scores, labels (batch,); embeddings (batch, dim), rows in
    (high, low) group order.
    """

    name = "quad+mse"

    def forward(self, scores, labels, embeddings1=None, embeddings2=None):
        return (F.mse_loss(scores.float(), labels.float())
                + super().forward(scores, labels, embeddings1, embeddings2))


class PairCoSENTLoss(PairLoss):
    """``log(1 + Σ_{y_i > y_j} exp(scale · (s_j − s_i)))`` over the batch's pairs of rows.

    Scores and labels (batch,). Penalises every pair of rows whose predicted order contradicts
    the gold order, smoothly: a ranking loss, aligned with Spearman's ρ, that leaves the score
    scale free. Reference: Su 2022, "CoSENT" (https://kexue.fm/archives/8847); scale 20 as in
    sentence-transformers' ``CoSENTLoss`` and Li & Li 2023 (AnglE).

    >>> round(float(PairCoSENTLoss()(torch.tensor([0.1, 0.9]), torch.tensor([1.0, 0.0]))), 3)
    16.0
    """

    name = "cosent"

    def __init__(self, scale: float = 20.0):
        super().__init__()
        self.scale = scale

    def forward(self, scores, labels, embeddings1=None, embeddings2=None):
        scores, labels = scores.float(), labels.float()
        diff = self.scale * (scores[None, :] - scores[:, None])  # diff[i, j] = scale (s_j - s_i)
        wrong_way = diff[labels[:, None] > labels[None, :]]
        return torch.logsumexp(torch.cat([diff.new_zeros(1), wrong_way]), dim=0)


LOSSES: dict[str, type[PairLoss]] = {
    cls.name: cls for cls in (PairMSELoss, QuadrupletLoss, QuadrupletMSELoss, PairCoSENTLoss)}
OBJECTIVES = tuple(LOSSES)


def build_loss(objective: str, *, margin: float = 1.0) -> PairLoss:
    """The registered loss called ``objective`` (``margin`` for the quadruplet losses)."""
    if objective not in LOSSES:
        raise ParameterError("objective", objective, f"must be one of {OBJECTIVES}")
    cls = LOSSES[objective]
    return cls(margin=margin) if issubclass(cls, QuadrupletLoss) else cls()
