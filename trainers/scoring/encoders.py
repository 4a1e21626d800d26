"""Bi-encoder scorers: each sentence encoded apart, a pair scored by the cosine of its vectors.

* :class:`SentenceTransformerScorer` -- a sentence-transformers folder (``modules.json``),
  encoded by ``SentenceTransformer.encode`` as it is configured: its pooling and normalisation,
  its ``max_seq_length``, and its default prompt (the packaged e5-small: ``"query: "``, the
  prefix e5 expects for symmetric tasks);
* :class:`TransformerScorer` -- a plain transformers encoder (``config.json`` alone): the
  attention-mask-weighted mean of its last hidden states;
* :class:`SemrelEncoderScorer` -- a bi- or tri-encoder saved by ``semrel fit``, through its own
  tokenisation and pooling (:class:`~trainers.models.PairEncoder`): a conditional bi-encoder's
  units are (sentence, condition) text pairs, a tri-encoder's vectors pass its condition layers.
"""

from __future__ import annotations

import numpy as np

from .backends import Forward
from .base import EncoderScorer, cosine


def _device(scorer) -> str:
    """The scorer's device: as asked, else a GPU where there is one; CPU for a backend other
    than torch (whose export is made and run there)."""
    import torch

    if scorer.backend != "torch":
        return "cpu"
    return scorer.device_name or ("cuda" if torch.cuda.is_available() else "cpu")


def token_counts(tokenizer, first: list[str], second: list[str] | None = None) -> np.ndarray:
    """Each text's (text pair's) token count with special tokens, untruncated."""
    encoded = tokenizer(first, second, add_special_tokens=True, truncation=False,
                        return_attention_mask=False, return_token_type_ids=False, verbose=False)
    return np.array([len(ids) for ids in encoded["input_ids"]], dtype=np.int64)


class SentenceTransformerScorer(Forward, EncoderScorer):
    """A sentence-transformers bi-encoder (see module docstring)."""

    def load(self):
        from sentence_transformers import SentenceTransformer

        self.model = SentenceTransformer(str(self.path), device=_device(self), local_files_only=True)
        if self.requested_max_length is not None:
            self.model.max_seq_length = self.requested_max_length
        name = self.model.default_prompt_name
        self.prompt = self.model.prompts.get(name, "") if name else ""
        probe = self.model.preprocess([""], prompt=self.prompt or None)
        self.constants = {k: v for k, v in probe.items() if not hasattr(v, "shape")}
        return {"max_length": self.model.max_seq_length, "scale": "cosine", "prompt": self.prompt}

    def lengths(self, units):
        return token_counts(self.model.tokenizer, [self.prompt + t for (t,) in units])

    def tokenized(self, units):
        """``SentenceTransformer.encode``'s own steps for one batch, split where the tokenising
        ends: the texts in its order (longest in characters first), ``preprocess`` with the
        prompt; :meth:`finish` puts the values' rows back in the units' order."""
        texts = [t for (t,) in units]
        order = np.argsort([-len(t) for t in texts])
        return order, self.model.preprocess([texts[i] for i in order], prompt=self.prompt or None)

    def forward_module(self):
        from .modules import SentenceEmbedding

        return SentenceEmbedding(self.model.eval(), self.constants)

    def forward_inputs(self, batch):
        return batch[1]

    def finish(self, batch, values):
        order = batch[0]
        if self.model.truncate_dim is not None:  # as encode cuts a model made with truncate_dim
            values = values[:, :self.model.truncate_dim]
        ordered = np.empty_like(values)
        ordered[order] = values
        return ordered


class _TorchEncoder(Forward, EncoderScorer):
    """An encoder run by semrel itself: a tokenizer, a transformer and pooling."""

    def _tokens(self, first: list[str], second: list[str] | None = None):
        return self.tokenizer(first, second, truncation=True, max_length=self.max_length,
                              padding=True, return_tensors="pt")


class TransformerScorer(_TorchEncoder):
    """A plain transformers encoder, mean-pooled (see module docstring)."""

    def load(self):
        import torch
        from transformers import AutoModel, AutoTokenizer

        self.device = _device(self)
        self.tokenizer = AutoTokenizer.from_pretrained(str(self.path))
        self.model = AutoModel.from_pretrained(str(self.path), dtype=torch.float32).to(self.device).eval()
        limit = min(self.tokenizer.model_max_length,
                    getattr(self.model.config, "max_position_embeddings", 512), 512)
        return {"max_length": self.requested_max_length or limit, "scale": "cosine", "pooling": "mean"}

    def lengths(self, units):
        return token_counts(self.tokenizer, [t for (t,) in units])

    def forward_module(self):
        from .modules import MeanPooled

        return MeanPooled(self.model)

    def tokenized(self, units):
        return self._tokens([t for (t,) in units])


class SemrelEncoderScorer(_TorchEncoder):
    """A bi- or tri-encoder saved by ``semrel fit`` (see module docstring)."""

    def __init__(self, spec, path, **options):
        super().__init__(spec, path, **options)
        from ..run_folder import read_encoder_config

        config = read_encoder_config(self.path, "model", spec)
        self.tri = config["kind"] == "tri"
        self.conditional = self.tri or bool(config.get("conditional", False))
        self.prompt = config.get("prompt") or ""  # before each sentence, never a condition (PairEncoder)

    def load(self):
        from ..models import PairEncoder

        self.device = _device(self)
        self.model = PairEncoder.from_pretrained(self.path).to(self.device).eval()
        self.tokenizer = self.model.tokenizer
        if self.requested_max_length is not None:
            self.model.max_length = self.requested_max_length
        return {"max_length": self.model.max_length, "scale": "label", "encoder": self.model.kind,
                "pooling": self.model.pooling}

    def pair_units(self, sentence1, sentence2, condition):
        """The texts the model reads: each sentence after the run's prompt, as
        :meth:`~trainers.models.PairEncoder.tokenize` gives them (e5's ``"query: "``), the condition as it is."""
        s1, s2 = self.prompt + sentence1, self.prompt + sentence2
        if self.tri:
            return (s1,), (s2,), (condition,)
        if self.conditional:
            return (s1, condition), (s2, condition)
        return (s1,), (s2,)

    def encode(self, texts) -> np.ndarray:
        """Each sentence's embedding as the model makes it: after the run's prompt."""
        return super().encode([self.prompt + t for t in texts])

    def _split(self, units):
        """The first texts and, for (sentence, condition) units, the second (all units of a
        scorer have one width)."""
        first = [u[0] for u in units]
        return first, ([u[1] for u in units] if len(units[0]) == 2 else None)

    def lengths(self, units):
        return token_counts(self.tokenizer, *self._split(units))

    def forward_module(self):
        from .modules import PairEmbedding

        return PairEmbedding(self.model)

    def tokenized(self, units):
        return self._tokens(*self._split(units))

    def combine(self, values):
        if not self.tri:
            return cosine(values[0], values[1])
        import torch

        self.ensure_loaded()  # the condition layers
        with torch.inference_mode():
            s1, s2, c = (torch.from_numpy(v.astype(np.float32)).to(self.device) for v in values)
            h1, h2 = self.model.conditioned(s1, c), self.model.conditioned(s2, c)
            return cosine(h1.float().cpu().numpy(), h2.float().cpu().numpy())
