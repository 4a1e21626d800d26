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

from .base import EncoderScorer, cosine


def _device(device: str | None) -> str:
    import torch

    return device or ("cuda" if torch.cuda.is_available() else "cpu")


def token_counts(tokenizer, first: list[str], second: list[str] | None = None) -> np.ndarray:
    """Each text's (text pair's) token count with special tokens, untruncated."""
    encoded = tokenizer(first, second, add_special_tokens=True, truncation=False,
                        return_attention_mask=False, return_token_type_ids=False, verbose=False)
    return np.array([len(ids) for ids in encoded["input_ids"]], dtype=np.int64)


class SentenceTransformerScorer(EncoderScorer):
    """A sentence-transformers bi-encoder (see module docstring)."""

    kind = "bi-encoder"

    def __init__(self, spec, path, *, max_length: int | None = None, device: str | None = None, **options):
        super().__init__(spec, path, **options)
        from sentence_transformers import SentenceTransformer

        self.model = SentenceTransformer(str(path), device=_device(device), local_files_only=True)
        if max_length is not None:
            self.model.max_seq_length = max_length
        self.max_length = self.model.max_seq_length
        name = self.model.default_prompt_name
        self.prompt = self.model.prompts.get(name, "") if name else ""

    def settings(self):
        return {**super().settings(), "prompt": self.prompt}

    def lengths(self, units):
        return token_counts(self.model.tokenizer, [self.prompt + t for (t,) in units])

    def compute(self, units):
        return self.model.encode([t for (t,) in units], batch_size=len(units), convert_to_numpy=True,
                                 show_progress_bar=False).astype(np.float32)


class _TorchEncoder(EncoderScorer):
    """An encoder run by semrel itself: a tokenizer, a transformer and mean pooling."""

    def _embed(self, first: list[str], second: list[str] | None = None) -> np.ndarray:
        import torch

        batch = self.tokenizer(first, second, truncation=True, max_length=self.max_length,
                               padding=True, return_tensors="pt").to(self.device)
        with torch.inference_mode():
            return self.embed(batch).float().cpu().numpy()


class TransformerScorer(_TorchEncoder):
    """A plain transformers encoder, mean-pooled (see module docstring)."""

    kind = "transformer"

    def __init__(self, spec, path, *, max_length: int | None = None, device: str | None = None, **options):
        super().__init__(spec, path, **options)
        import torch
        from transformers import AutoModel, AutoTokenizer

        self.device = _device(device)
        self.tokenizer = AutoTokenizer.from_pretrained(str(path))
        self.model = AutoModel.from_pretrained(str(path), dtype=torch.float32).to(self.device).eval()
        limit = min(self.tokenizer.model_max_length,
                    getattr(self.model.config, "max_position_embeddings", 512), 512)
        self.max_length = max_length or limit

    def settings(self):
        return {**super().settings(), "pooling": "mean"}

    def lengths(self, units):
        return token_counts(self.tokenizer, [t for (t,) in units])

    def embed(self, batch):
        from ..models import pool

        hidden = self.model(**batch).last_hidden_state
        return pool(hidden, batch["attention_mask"], "mean")

    def compute(self, units):
        return self._embed([t for (t,) in units])


class SemrelEncoderScorer(_TorchEncoder):
    """A bi- or tri-encoder saved by ``semrel fit`` (see module docstring)."""

    kind = "semrel"
    scale = "label"

    def __init__(self, spec, path, *, model=None, max_length: int | None = None,
                 device: str | None = None, **options):
        super().__init__(spec, path, **options)
        from ..models import PairEncoder

        self.device = _device(device)
        self.model = (model or PairEncoder.from_pretrained(path)).to(self.device).eval()
        self.tokenizer = self.model.tokenizer
        self.conditional = self.model.conditional
        self.max_length = max_length or self.model.max_length
        self.tri = self.model.kind == "tri"

    def settings(self):
        return {**super().settings(), "encoder": self.model.kind, "pooling": self.model.pooling}

    def pair_units(self, sentence1, sentence2, condition):
        if self.tri:
            return (sentence1,), (sentence2,), (condition,)
        if self.conditional:
            return (sentence1, condition), (sentence2, condition)
        return (sentence1,), (sentence2,)

    def _split(self, units):
        """The first texts and, for (sentence, condition) units, the second (all units of a
        scorer have one width)."""
        first = [u[0] for u in units]
        return first, ([u[1] for u in units] if len(units[0]) == 2 else None)

    def lengths(self, units):
        return token_counts(self.tokenizer, *self._split(units))

    def embed(self, batch):
        return self.model.embed(batch["input_ids"], batch["attention_mask"], batch.get("token_type_ids"))

    def compute(self, units):
        return self._embed(*self._split(units))

    def combine(self, values):
        if not self.tri:
            return cosine(values[0], values[1])
        import torch

        with torch.inference_mode():
            s1, s2, c = (torch.from_numpy(v.astype(np.float32)).to(self.device) for v in values)
            h1, h2 = self.model.conditioned(s1, c), self.model.conditioned(s2, c)
            return cosine(h1.float().cpu().numpy(), h2.float().cpu().numpy())

