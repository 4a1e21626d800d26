"""The max lengths (tokens per input) a model can honour: :func:`check_max_length`, asked of a
new encoder (:func:`honoured_max_length`) and of the one ``semrel fit`` starts from
(:func:`check_start`); and the prompt a sentence-transformers folder puts before each text
(:func:`default_prompt`).

A tokenizer cut to ``max_length`` keeps the special tokens of an input ([CLS] ... [SEP]) and
cuts only its text; asked for fewer tokens than the special tokens, it cuts nothing and says
nothing (the input stays whole), and at exactly the special tokens (a text pair: plus one) a
text is cut to nothing. So the least max length a model honours is its special tokens, its
prompt's tokens (each text that carries it) and one token of each text of an input: a single
text (a bi-encoder's sentence, a tri-encoder's sentence or condition) or a text pair (a
cross-encoder's two sentences, a conditional bi-encoder's sentence and condition). The most is
what its position embeddings number (models that number positions after the padding index,
RoBERTa's kind, lose those). Anything outside is a ParameterError, never a silent change.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from semrel.metrics.errors import ParameterError

from .options import OPTIONS
from .run_folder.files import ST_CONFIG  # sentence-transformers' prompts live there

DEFAULT_MAX_LENGTH = next(o.default for o in OPTIONS if o.name == "max_length")
# model types whose position ids start after the padding index (pad_token_id + 1 positions unused)
PADDING_OFFSET = ("roberta", "xlm-roberta", "camembert", "mpnet", "data2vec-text", "longformer",
                  "roberta-prelayernorm", "xmod", "ibert", "luke")


def default_prompt(path: str | Path) -> str:
    """The prompt a sentence-transformers folder applies by default (``prompts`` at
    ``default_prompt_name`` in its config, e.g. e5's ``"query: "``); ``""`` when it names none."""
    config = Path(path) / ST_CONFIG
    if not config.is_file():
        return ""
    loaded = json.loads(config.read_text(encoding="utf-8"))
    name = loaded.get("default_prompt_name")
    return (loaded.get("prompts") or {}).get(name, "") if name else ""


@dataclass(frozen=True)
class TokenLimits:
    """``least`` and ``most`` (None: no position limit) tokens of one input; ``parts``: what
    the least is made of, in words."""

    least: int
    most: int | None
    parts: str


def token_limits(tokenizer, config, *, pair: bool, prompt: str = "", prompted: int = 1) -> TokenLimits:
    """The limits of inputs of one text (``pair``: two) tokenised by ``tokenizer`` for a model
    of ``config``; ``prompted`` of the texts start with ``prompt``."""
    specials = tokenizer.num_special_tokens_to_add(pair=pair)
    prompt_tokens = len(tokenizer(prompt, add_special_tokens=False)["input_ids"]) if prompt else 0
    texts = 2 if pair else 1
    parts = [f"{specials} special tokens" + (" of a text pair" if pair else "")]
    if prompt_tokens:
        parts.append(f"{prompt_tokens * prompted} of the prompt {prompt!r}")
    parts.append("1 of each text" if pair else "1 of the text")
    return TokenLimits(specials + prompt_tokens * prompted + texts, _positions(tokenizer, config),
                       " + ".join(parts))


def _positions(tokenizer, config) -> int | None:
    positions = getattr(config, "max_position_embeddings", None)
    if isinstance(positions, int) and positions > 0:
        if getattr(config, "model_type", "") in PADDING_OFFSET:
            positions -= (getattr(config, "pad_token_id", None) or 0) + 1
        return positions
    limit = getattr(tokenizer, "model_max_length", None)
    return limit if isinstance(limit, int) and 0 < limit < 1_000_000 else None


def check_max_length(value: int, limits: TokenLimits, model: str, parameter: str = "max_length") -> int:
    """``value`` if ``model`` (its name, for the message) honours it, else a ParameterError
    on ``parameter``."""
    if value < limits.least:
        raise ParameterError(parameter, value, f"must be >= {limits.least} for {model} ({limits.parts}): "
                             "a shorter cut leaves a text no token, or its tokenizer ignores it")
    if limits.most is not None and value > limits.most:
        raise ParameterError(parameter, value, f"must be <= {limits.most} for {model} (its position "
                             "embeddings)")
    return value


def encoder_inputs(kind: str, conditional: bool) -> tuple[bool, int]:
    """``(pair, prompted)`` of a semrel encoder's inputs: a cross-encoder's sentence pair, each
    sentence prompted (2); a conditional bi-encoder's (sentence, condition), one prompted; else
    one text."""
    return kind == "cross" or (kind == "bi" and conditional), 2 if kind == "cross" else 1


def encoder_limits(model) -> TokenLimits:
    """The limits of a :class:`~trainers.models.PairEncoder`'s inputs (:func:`encoder_inputs`)."""
    pair, prompted = encoder_inputs(model.kind, model.conditional)
    return token_limits(model.tokenizer, model.encoder.config, pair=pair, prompt=model.prompt, prompted=prompted)


def _check_asked(max_length: int, limits: TokenLimits, model: str) -> None:
    """``max_length`` asked of a new encoder: the option's default is "at most" (cut to the
    positions of a smaller model); any other value is honoured or refused."""
    if max_length != DEFAULT_MAX_LENGTH or max_length < limits.least:
        check_max_length(max_length, limits, model)


def honoured_max_length(model, max_length: int) -> int:
    """The max length of a :class:`~trainers.models.PairEncoder` asked for ``max_length``
    (:func:`_check_asked`; the default cut to what its tokenizer and positions take)."""
    limits = encoder_limits(model)
    _check_asked(max_length, limits, "this model")
    if max_length != DEFAULT_MAX_LENGTH:
        return max_length
    return min(max_length, model.tokenizer.model_max_length, limits.most or max_length)


def check_start(ref, folder: Path, values: dict, parameter: str = "name_or_path") -> None:
    """fit's starting transformer ``folder`` (of the model ``ref``) checked whole, a fault a
    ParameterError on ``parameter``; then the max length ``values`` (``PairTrainingArguments``
    keyword arguments) ask of the encoder it starts, from its tokenizer and config, before any
    data is read (a conditional bi-encoder's text pairs are checked once the data says so:
    :func:`honoured_max_length`)."""
    from transformers import AutoConfig, AutoTokenizer

    from .run_folder import check_transformer_folder

    check_transformer_folder(folder, parameter)
    cross = values["encoder"] == "cross"
    limits = token_limits(AutoTokenizer.from_pretrained(str(folder)), AutoConfig.from_pretrained(str(folder)),
                          pair=cross, prompt="" if cross else default_prompt(ref.path), prompted=1)
    _check_asked(values["max_length"], limits, ref.spec)
