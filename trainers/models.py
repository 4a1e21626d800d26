"""Sentence-pair encoders: cross-, bi- and tri-encoder over one shared transformer.

Scores (all on the [0, 1] label scale the losses use; see :mod:`trainers.data`):

* cross-encoder  ``score = σ(head(enc(s1 [SEP] s2 [SEP] c)))``  (``[SEP] c`` only when
  conditional; ``head``: the architecture's sequence-classification head with one label, e.g.
  BERT's linear layer over the pooled [CLS]) -- Reimers & Gurevych 2019; C-STS (Deshpande et
  al. 2023, §4.1). The sigmoid keeps the score in the [0, 1] label range.
* bi-encoder     ``score = cos(pool(enc(s1[, c])), pool(enc(s2[, c])))``; conditional inputs are
  text pairs ``(s, c)`` through the same encoder (C-STS §4.1).
* tri-encoder    ``h_i = f(pool(enc(s_i)), W_c · pool(enc(c)) + b_c)``, ``score = cos(h1, h2)``,
  with ``f`` the Hadamard product or ``f(s, c) = W [s; c] + b`` (concat + linear) (C-STS §4.1).

A starting transformer whose sentence-transformers config names a default prompt (e5's
``query: ``) gets it as the ``prompt`` option: each sentence (not the condition) is prefixed with
it before tokenizing, in training and prediction alike, and a saved bi-encoder names it as its
default prompt, so ``SentenceTransformer(dir).encode`` applies it too.

``save_pretrained(dir)`` writes the transformer and tokenizer at the top of ``dir`` (so
``AutoModel.from_pretrained(dir)`` loads the encoder), the encoder config (kind and options), the
tri-encoder's condition layers (the files of :mod:`~trainers.run_folder`) and, for a model that a
trainer trained (``card_facts``), its card (:func:`~trainers.card.write_model_card`). A cross-encoder folder
is a sequence-classification model that ``sentence_transformers.CrossEncoder(dir)`` loads; a
plain (unconditional) bi-encoder also writes the sentence-transformers files, so
``SentenceTransformer(dir)`` loads it. ``PairEncoder.from_pretrained(dir)`` rebuilds whichever
kind was saved. The classes are :class:`CrossPairEncoder`, :class:`BiPairEncoder` and
:class:`TriPairEncoder`, named apart from sentence-transformers' ``CrossEncoder`` and
``SentenceTransformer`` (which open their folders).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from torch import nn
from torch.nn import functional as F
from transformers import (
    AutoModel,
    AutoModelForSequenceClassification,
    AutoTokenizer,
    PreTrainedModel,
    PreTrainedTokenizerBase,
)

from semrel.metrics.errors import ParameterError

from .card import write_model_card
from .encoder_outputs import SimilarityOutput, pool
from .options import ENCODER_KINDS, POOLINGS, TRI_COMBINES
from .run_folder import HEAD, check_encoder_folder, read_encoder_config, write_encoder_config
from .token_limits import default_prompt, honoured_max_length

PRETOKENIZED = ("input_ids", "token_type_ids")  # kept per sequence; the mask follows from lengths


def sequence_lengths(input_ids: list[list[list[int]]]) -> np.ndarray:
    """Per pair (rows of :meth:`PairEncoder.pretokenize`), the token count of its longest
    sequence: the padded width it forces on a batch."""
    return np.array([max(len(s) for s in pair) for pair in input_ids], dtype=np.int64)


# encoder kind -> its class: each subclass below with a kind of its own, as it is defined (a class
# is the whole registration; options.ENCODER_KINDS names the kinds for the CLI, without torch)
MODEL_CLASSES: dict[str, type[PairEncoder]] = {}


class PairEncoder(nn.Module):
    """A shared transformer ``encoder`` + pooling; subclasses say how a pair becomes a score.

    ``tokenize`` turns a batch of (sentence1, sentence2[, condition]) into one padded tensor
    batch (one sequence per pair for the cross-encoder; for the others, blocks of all first
    texts, then all second texts[, then all conditions]); ``forward`` takes that batch.
    """

    kind: ClassVar[str] = ""
    has_embeddings: ClassVar[bool] = True  # one vector per sentence (needed by quadruplet losses)
    fit_options: ClassVar[tuple[str, ...]] = ("pooling", "max_length")  # PairTrainingArguments it takes
    description: ClassVar[str] = ""  # one line for the model card

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "kind" in cls.__dict__:  # from_pretrained and build_model find it by its kind
            MODEL_CLASSES[cls.kind] = cls

    def __init__(self, encoder: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, *,
                 pooling: str = "mean", conditional: bool = False, max_length: int = 256,
                 prompt: str = ""):
        super().__init__()
        if pooling not in POOLINGS:
            raise ParameterError("pooling", pooling, f"must be one of {POOLINGS}")
        self.encoder, self.tokenizer = encoder, tokenizer
        self.pooling, self.conditional, self.prompt = pooling, conditional, prompt
        self.max_length = honoured_max_length(self, max_length)  # one it cannot honour: refused
        self.card_facts = None  # trainers.card.CardFacts, set by the trainer's callback

    # ---- construction and persistence ------------------------------------------------------
    @classmethod
    def from_encoder(cls, path: str | Path, **options) -> PairEncoder:
        """A fresh model of this kind over the pretrained transformer and tokenizer at ``path``
        (its default prompt, :func:`default_prompt`, unless ``prompt`` is given)."""
        options.setdefault("prompt", default_prompt(path))
        # float32 master weights whatever the checkpoint holds (transformers 5 loads a float16
        # checkpoint as float16 by default, which then trains to NaN under bf16 autocast)
        return cls(AutoModel.from_pretrained(str(path), dtype=torch.float32),
                   AutoTokenizer.from_pretrained(str(path)),
                   **options)

    def options(self) -> dict:
        prompt = {"prompt": self.prompt} if self.prompt else {}
        return {"pooling": self.pooling, "conditional": self.conditional,
                "max_length": self.max_length, **prompt}

    @property
    def dim(self) -> int:
        return self.encoder.config.hidden_size

    def head_state_dict(self) -> dict[str, torch.Tensor]:
        """Parameters outside the transformer (empty for the bi-encoder)."""
        return {k: v for k, v in self.state_dict().items() if not k.startswith("encoder.")}

    def save_pretrained(self, path: str | Path) -> Path:
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        self.encoder.save_pretrained(path)
        self.tokenizer.save_pretrained(path)
        write_encoder_config(path, self.kind, self.options())
        head = self.head_state_dict()
        if head:
            save_file({k: v.detach().contiguous().cpu() for k, v in head.items()}, path / HEAD)
        if self.card_facts is not None:
            write_model_card(path, self)
        return path

    @staticmethod
    def from_pretrained(path: str | Path) -> PairEncoder:
        """Load a model saved by :meth:`save_pretrained` (any kind); a folder that is not one
        whole (:func:`~trainers.run_folder.check_encoder_folder`) is a ParameterError naming it
        (``from_encoder`` starts a model from a plain transformer)."""
        path = check_encoder_folder(path, "path")
        options = read_encoder_config(path)
        kind = options.pop("kind")
        model = MODEL_CLASSES[kind].from_encoder(path, **options)
        if (path / HEAD).is_file():
            missing, unexpected = model.load_state_dict(load_file(path / HEAD), strict=False)
            if unexpected or any(not k.startswith("encoder.") for k in missing):
                raise ValueError(f"{path / HEAD} does not fit a {kind}-encoder: missing "
                                 f"{[k for k in missing if not k.startswith('encoder.')]}, "
                                 f"unexpected {unexpected}")
        return model

    # ---- inputs -----------------------------------------------------------------------------
    def texts(self, sentence1: list[str], sentence2: list[str], condition: list[str] | None):
        """(first texts, second texts or None) handed to the tokenizer."""
        raise NotImplementedError

    def _encode(self, sentence1, sentence2, condition, **tokenizer_options):
        """The tokenizer over :meth:`texts` (truncated to ``max_length``); a conditional model
        without a condition is an error."""
        if self.conditional and condition is None:
            raise ValueError(f"this {self.kind}-encoder is conditional: give a condition column")
        first, second = self.texts([self.prompt + s for s in sentence1],
                                   [self.prompt + s for s in sentence2],
                                   list(condition) if self.conditional else None)
        return self.tokenizer(first, second, truncation=True, max_length=self.max_length,
                              **tokenizer_options)

    def tokenize(self, sentence1: list[str], sentence2: list[str],
                 condition: list[str] | None = None):
        """A padded (to the longest in this batch) tensor batch for :meth:`forward`."""
        return self._encode(sentence1, sentence2, condition, padding=True, return_tensors="pt")

    def pretokenize(self, sentence1: list[str], sentence2: list[str],
                    condition: list[str] | None = None) -> dict[str, list]:
        """Every pair tokenised once, unpadded: per pair the ids of each of its sequences, in
        the order :meth:`tokenize` lays out its blocks (cross: 1 sequence; bi: 2; tri: 3) --
        ``{"input_ids": [[ids_1, ids_2], ...][, "token_type_ids": ...]}``. One batched call
        of the (fast) tokenizer over the whole dataset; :meth:`pad` makes batches of it."""
        n = len(sentence1)
        encoded = self._encode(sentence1, sentence2, condition)
        per_pair = len(encoded["input_ids"]) // max(n, 1)
        return {key: [[values[j * n + i] for j in range(per_pair)] for i in range(n)]
                for key, values in encoded.items() if key in PRETOKENIZED}

    def pad(self, rows: list[dict], pad_to_multiple_of: int = 0) -> dict[str, torch.Tensor]:
        """A tensor batch for :meth:`forward` from :meth:`pretokenize` rows, identical to
        :meth:`tokenize` of the same texts: block ``j`` holds sequence ``j`` of every row; each
        block padded (right, with the tokenizer's pad id; mask 0) to the longest sequence of
        the batch, rounded up to a multiple of ``pad_to_multiple_of`` when given (fewer
        distinct shapes for a compiled step)."""
        per_pair = len(rows[0]["input_ids"])
        sequences = [row["input_ids"][j] for j in range(per_pair) for row in rows]
        width = max(len(s) for s in sequences)
        if pad_to_multiple_of:
            width = min(-(-width // pad_to_multiple_of) * pad_to_multiple_of,
                        max(self.max_length, width))
        lengths = np.array([len(s) for s in sequences])
        mask = np.arange(width)[None, :] < lengths[:, None]
        if self.tokenizer.padding_side == "left":
            mask = mask[:, ::-1]
        batch = {"attention_mask": torch.from_numpy(mask.astype(np.int64))}
        pads = {"input_ids": self.tokenizer.pad_token_id,
                "token_type_ids": self.tokenizer.pad_token_type_id}
        for key in rows[0]:
            if key in PRETOKENIZED:
                values = np.full((len(sequences), width), pads[key], dtype=np.int64)
                values[mask] = np.concatenate([row[key][j] for j in range(per_pair)
                                               for row in rows])
                batch[key] = torch.from_numpy(values)
        return batch

    def token_lengths(self, sentence1: list[str], sentence2: list[str],
                      condition: list[str] | None = None) -> np.ndarray:
        """Per pair, the padded width it forces on a batch: the token count of its longest
        sequence (cross: the joint sequence; bi/tri: the longest of its texts)."""
        return sequence_lengths(self.pretokenize(sentence1, sentence2, condition)["input_ids"])

    def embed(self, input_ids, attention_mask, token_type_ids=None) -> torch.Tensor:
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state
        return pool(hidden, attention_mask, self.pooling)

    def forward(self, input_ids, attention_mask, token_type_ids=None,
                return_embeddings: bool = False) -> SimilarityOutput:
        raise NotImplementedError

    @torch.inference_mode()
    def predict(self, sentence1: list[str], sentence2: list[str],
                condition: list[str] | None = None, batch_size: int = 64) -> np.ndarray:
        """Scores on the [0, 1] label scale, in input order (eval mode, no gradient)."""
        was_training = self.training
        self.eval()
        device = next(self.parameters()).device
        out = []
        for start in range(0, len(sentence1), batch_size):
            end = start + batch_size
            batch = self.tokenize(sentence1[start:end], sentence2[start:end],
                                  None if condition is None else condition[start:end])
            out.append(self(**batch.to(device)).scores.float().cpu().numpy())
        self.train(was_training)
        return np.concatenate(out) if out else np.zeros(0, dtype=np.float32)


class CrossPairEncoder(PairEncoder):
    """One sequence ``s1 [SEP] s2 [SEP] condition`` -> the architecture's own
    sequence-classification head (one label; BERT: pooler over [CLS] -> dropout -> linear) ->
    sigmoid.

    The transformer IS an ``AutoModelForSequenceClassification`` with ``num_labels=1`` and a
    sigmoid activation declared in its config, so the saved folder opens unchanged in
    ``sentence_transformers.CrossEncoder(dir)`` and scores the same (``pooling`` does not apply).
    """

    kind = "cross"
    has_embeddings = False
    fit_options = ("max_length",)
    description = ("cross-encoder: one sequence `s1 [SEP] s2` (`[SEP] condition` when "
                   "conditional) -> the architecture's sequence-classification head "
                   "(one label) -> sigmoid")
    ACTIVATION = "torch.nn.modules.activation.Sigmoid"  # what sentence-transformers reads

    def __init__(self, encoder, tokenizer, *, pooling: str | None = None, **options):
        super().__init__(encoder, tokenizer, pooling="cls", **options)
        self.pooling = None

    @classmethod
    def from_encoder(cls, path: str | Path, **options) -> CrossPairEncoder:
        if (Path(path) / HEAD).is_file():
            raise ValueError(f"{path} holds a cross-encoder saved by an older semrel (its head in "
                             f"{HEAD}, pooled differently from the sequence-classification "
                             "head used now): train it again with this version")
        encoder = AutoModelForSequenceClassification.from_pretrained(str(path), num_labels=1,
                                                                     dtype=torch.float32)
        return cls(encoder, AutoTokenizer.from_pretrained(str(path)), **options)

    def options(self):
        prompt = {"prompt": self.prompt} if self.prompt else {}
        return {"conditional": self.conditional, "max_length": self.max_length, **prompt}

    def save_pretrained(self, path):
        self.encoder.config.sentence_transformers = {"activation_fn": self.ACTIVATION}
        self.tokenizer.model_max_length = self.max_length  # the truncation ST's CrossEncoder applies
        return super().save_pretrained(path)

    def texts(self, sentence1, sentence2, condition):
        if condition is None:
            return sentence1, sentence2
        sep = self.tokenizer.sep_token
        return sentence1, [f"{s} {sep} {c}" for s, c in zip(sentence2, condition, strict=True)]

    def forward(self, input_ids, attention_mask, token_type_ids=None, return_embeddings=False):
        if return_embeddings:
            raise ValueError("a cross-encoder has no per-sentence embeddings (quadruplet "
                             "objectives need a bi- or tri-encoder)")
        logits = self.encoder(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).logits
        return SimilarityOutput(scores=torch.sigmoid(logits.squeeze(-1)))


class BiPairEncoder(PairEncoder):
    """``cos(pool(enc(s1[, c])), pool(enc(s2[, c])))`` through one shared encoder."""

    kind = "bi"
    description = ("bi-encoder: one shared encoder, score = cosine of the two pooled sentence "
                   "vectors (each sentence paired with the condition as a text pair when "
                   "conditional)")

    def texts(self, sentence1, sentence2, condition):
        if condition is None:
            return sentence1 + sentence2, None
        return sentence1 + sentence2, condition + condition

    def pair_vectors(self, input_ids, attention_mask, token_type_ids):
        vectors = self.embed(input_ids, attention_mask, token_type_ids)
        return vectors.chunk(2, dim=0)

    def forward(self, input_ids, attention_mask, token_type_ids=None, return_embeddings=False):
        h1, h2 = self.pair_vectors(input_ids, attention_mask, token_type_ids)
        scores = F.cosine_similarity(h1, h2, dim=-1)
        if return_embeddings:
            return SimilarityOutput(scores=scores, embeddings1=h1, embeddings2=h2)
        return SimilarityOutput(scores=scores)

    def save_pretrained(self, path):
        path = super().save_pretrained(path)
        if not self.conditional:
            self.save_sentence_transformer(path)
        return path

    def save_sentence_transformer(self, path: str | Path) -> None:
        """Add the sentence-transformers files (modules.json, pooling) beside the saved encoder."""
        from sentence_transformers import SentenceTransformer
        from sentence_transformers.sentence_transformer.modules import Pooling, Transformer

        transformer = Transformer(str(path), max_seq_length=self.max_length)
        prompts = {"prompts": {"query": self.prompt}, "default_prompt_name": "query"} if self.prompt else {}
        st = SentenceTransformer(modules=[transformer, Pooling(self.dim, pooling_mode=self.pooling)],
                                 **prompts)
        st.save(str(path), create_model_card=False)


class TriPairEncoder(BiPairEncoder):
    """s1, s2 and the condition encoded apart; the transformed condition conditions each sentence."""

    kind = "tri"
    fit_options = ("pooling", "max_length", "combine")
    description = ("tri-encoder: sentences and condition encoded apart; the linearly transformed "
                   "condition vector is combined with each sentence vector; score = cosine")

    def __init__(self, encoder, tokenizer, *, combine: str = "hadamard", **options):
        options.setdefault("conditional", True)
        super().__init__(encoder, tokenizer, **options)
        if not self.conditional:
            raise ValueError("a tri-encoder needs a condition (conditional=True)")
        if combine not in TRI_COMBINES:
            raise ParameterError("combine", combine, f"must be one of {TRI_COMBINES}")
        self.combine = combine
        self.condition_transform = nn.Linear(self.dim, self.dim)
        self.concat_linear = nn.Linear(2 * self.dim, self.dim) if combine == "concat" else None

    def options(self):
        return {**super().options(), "combine": self.combine}

    def texts(self, sentence1, sentence2, condition):
        return sentence1 + sentence2 + condition, None

    def pair_vectors(self, input_ids, attention_mask, token_type_ids):
        s1, s2, c = self.embed(input_ids, attention_mask, token_type_ids).chunk(3, dim=0)
        return self.conditioned(s1, c), self.conditioned(s2, c)

    def conditioned(self, sentence: torch.Tensor, condition: torch.Tensor) -> torch.Tensor:
        """``h = f(s, W_c · c + b_c)`` of pooled sentence and condition vectors (batch, dim)."""
        c = self.condition_transform(condition)
        if self.combine == "hadamard":
            return sentence * c
        return self.concat_linear(torch.cat([sentence, c], dim=-1))

    def save_pretrained(self, path):
        return PairEncoder.save_pretrained(self, path)


def build_model(kind: str, encoder_path: str | Path, *, seed: int = 0, **options) -> PairEncoder:
    """A new ``kind`` ('cross' | 'bi' | 'tri') encoder over the pretrained transformer at a path;
    new head weights are drawn from ``torch.manual_seed(seed)`` (global RNG state untouched)."""
    if kind not in MODEL_CLASSES:
        raise ParameterError("kind", kind, f"must be one of {ENCODER_KINDS}")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return MODEL_CLASSES[kind].from_encoder(encoder_path, **options)
