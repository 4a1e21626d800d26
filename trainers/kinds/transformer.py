"""``transformer``: a plain transformers encoder (``config.json`` and its weights alone): a
starting point for fit (a new head or pooling over it), scored zero-shot by the mean of its last
hidden states (:class:`~trainers.scoring.encoders.TransformerScorer`)."""

from __future__ import annotations

from ..run_folder.checks import check_transformer_folder
from ..run_folder.files import CONFIG
from .base import ModelKind


class Transformer(ModelKind):
    name = "transformer"
    order = 50
    files = (CONFIG,)
    start_words = "a transformers encoder"
    member_words = "transformers encoder (mean-pooled cosine)"

    def check(self, path, parameter="model"):
        return check_transformer_folder(path, parameter)

    def scorer_class(self, ref):
        from ..scoring.encoders import TransformerScorer

        return TransformerScorer


KIND = Transformer()
