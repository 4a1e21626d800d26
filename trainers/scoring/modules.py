"""Each torch-backed scorer's forward pass as one module, a tokenizer's tensors in
(``input_ids``, ``attention_mask``, ``token_type_ids`` where the model takes them), a batch's
(n, dim) float values out: what the torch backend runs and the ONNX backends export
(:class:`~.backends.Forward`). Each does exactly what the model's own inference does."""

from __future__ import annotations

import torch


def _named(input_ids, attention_mask, token_type_ids):
    named = {"input_ids": input_ids, "attention_mask": attention_mask}
    if token_type_ids is not None:
        named["token_type_ids"] = token_type_ids
    return named


class SentenceEmbedding(torch.nn.Module):
    """``SentenceTransformer``'s modules (transformer, pooling, normalisation): the
    ``sentence_embedding`` ``encode`` returns. ``constants``: what ``preprocess`` adds that is
    no tensor and the same for every batch (``prompt_length`` with a fixed prompt)."""

    def __init__(self, model, constants: dict):
        super().__init__()
        self.model, self.constants = model, constants

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        features = {**self.constants, **_named(input_ids, attention_mask, token_type_ids)}
        return self.model(features)["sentence_embedding"]


class CrossScores(torch.nn.Module):
    """``CrossEncoder.predict``'s scores of one-label models: the ``scores`` output in float32,
    through the model's activation (a sigmoid, or none), one column."""

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.activation = model.activation_fn

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        scores = self.model(_named(input_ids, attention_mask, token_type_ids))["scores"].float()
        if self.activation is not None:
            scores = self.activation(scores)
        return scores.reshape(-1, 1)


class MeanPooled(torch.nn.Module):
    """A plain transformers encoder: the attention-mask-weighted mean of its last hidden states."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        from ..encoder_outputs import pool

        hidden = self.model(**_named(input_ids, attention_mask, token_type_ids)).last_hidden_state
        return pool(hidden, attention_mask, "mean")


class PairEmbedding(torch.nn.Module):
    """A bi- or tri-encoder saved by ``semrel fit``: :meth:`~trainers.models.PairEncoder.embed`."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        return self.model.embed(input_ids, attention_mask, token_type_ids)


class PairScores(torch.nn.Module):
    """A cross-encoder saved by ``semrel fit``: its score on the [0, 1] label scale, one column."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        return self.model(**_named(input_ids, attention_mask, token_type_ids)).scores.float().reshape(-1, 1)
