"""Cross-encoder scorers: one joint sequence per pair, its score computed once per distinct
(sentence1, sentence2[, condition]).

* :class:`CrossEncoderScorer` -- a sentence-transformers ``CrossEncoder`` folder (a
  sequence-classification transformer with one label), scored by ``CrossEncoder.predict`` with
  the activation its config declares (a sigmoid: scores on the [0, 1] label scale; none: logits);
* :class:`SemrelCrossScorer` -- a cross-encoder saved by ``semrel fit``
  (:class:`~trainers.models.CrossPairEncoder`), conditional ones included.
"""

from __future__ import annotations

from .backends import Forward
from .base import Scorer
from .encoders import _device, token_counts


class _PairScorer(Forward, Scorer):
    def combine(self, values):
        return values[0][:, 0]


class CrossEncoderScorer(_PairScorer):
    """A sentence-transformers ``CrossEncoder`` (see module docstring)."""

    def load(self):
        from sentence_transformers import CrossEncoder

        self.model = CrossEncoder(str(self.path), device=_device(self), local_files_only=True,
                                  max_length=self.requested_max_length)
        activation = type(self.model.activation_fn).__name__
        return {"max_length": self.model.max_seq_length, "activation": activation,
                "scale": "label" if activation == "Sigmoid" else "logit"}

    def pair_units(self, sentence1, sentence2, condition):
        return ((sentence1, sentence2),)

    def lengths(self, units):
        return token_counts(self.model.tokenizer, [a for a, _ in units], [b for _, b in units])

    def tokenized(self, units):
        """``CrossEncoder.predict``'s own tokenising of one batch (``preprocess``)."""
        return self.model.preprocess([list(u) for u in units])

    def forward_module(self):
        from .modules import CrossScores

        return CrossScores(self.model.eval())


class SemrelCrossScorer(_PairScorer):
    """A cross-encoder saved by ``semrel fit`` (see module docstring)."""

    def __init__(self, spec, path, **options):
        super().__init__(spec, path, **options)
        from ..run_folder import read_encoder_config

        self.conditional = bool(read_encoder_config(self.path, "model", spec).get("conditional", False))

    def load(self):
        from ..models import PairEncoder

        self.device = _device(self)
        self.model = PairEncoder.from_pretrained(self.path).to(self.device).eval()
        if self.requested_max_length is not None:
            self.model.max_length = self.requested_max_length
        return {"max_length": self.model.max_length, "scale": "label", "encoder": "cross"}

    def pair_units(self, sentence1, sentence2, condition):
        return ((sentence1, sentence2) if condition is None else (sentence1, sentence2, condition),)

    def _columns(self, units):
        return ([u[0] for u in units], [u[1] for u in units],
                [u[2] for u in units] if self.conditional else None)

    def lengths(self, units):
        s1, s2, condition = self._columns(units)
        prompt = self.model.prompt  # as the model's tokenize puts it before each sentence
        first, second = self.model.texts([prompt + s for s in s1], [prompt + s for s in s2], condition)
        return token_counts(self.model.tokenizer, first, second)

    def tokenized(self, units):
        return self.model.tokenize(*self._columns(units))

    def forward_module(self):
        from .modules import PairScores

        return PairScores(self.model)
