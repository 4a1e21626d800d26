"""What an encoder gives: one vector per text from a transformer's token vectors (:func:`pool`,
which every semrel encoder of :mod:`~trainers.models` and the zero-shot transformer scorer of
:mod:`~trainers.scoring.encoders` apply), and the scores of a batch of pairs
(:class:`SimilarityOutput`)."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from transformers.utils import ModelOutput


def pool(hidden: torch.Tensor, attention_mask: torch.Tensor, mode: str) -> torch.Tensor:
    """``cls``: the first token's vector; ``mean``: the mask-weighted mean of the token vectors,
    ``Σ_t m_t h_t / max(Σ_t m_t, 1e-9)`` (hidden: (batch, tokens, dim); mask: (batch, tokens))."""
    if mode == "cls":
        return hidden[:, 0]
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)


@dataclass
class SimilarityOutput(ModelOutput):
    """``scores`` (batch,); with ``return_embeddings`` also the two pair vectors (batch, dim)."""

    scores: torch.Tensor | None = None
    embeddings1: torch.Tensor | None = None
    embeddings2: torch.Tensor | None = None
