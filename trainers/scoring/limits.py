"""A model to score, checked before anything is loaded or scored (:func:`check_scored_model`): its
folder whole, and the max length asked of its scorer against what its tokenizer and config allow
(:mod:`~trainers.token_limits`; no weights loaded)."""

from __future__ import annotations

from ..token_limits import TokenLimits, check_max_length, token_limits
from .loader import check_model_folder


def scorer_limits(ref) -> TokenLimits:
    """The limits of what the scorer of ``ref`` (a :class:`~trainers.model_ref.ModelRef` of a
    kind that tokenises, not an ensemble) tokenises, as its kind says
    (:meth:`~trainers.kinds.base.ModelKind.tokenized`), read from its tokenizer and config alone
    (no weights loaded)."""
    from transformers import AutoConfig, AutoTokenizer

    folder, pair, prompt, prompted = ref.model_kind.tokenized(ref)
    return token_limits(AutoTokenizer.from_pretrained(str(folder)), AutoConfig.from_pretrained(str(folder)),
                        pair=pair, prompt=prompt, prompted=prompted)


def check_scoring_max_length(ref, max_length: int | None, parameter: str = "max_length") -> None:
    """``max_length`` (None: each model's own) checked against each model the scorer of ``ref``
    tokenises (an ensemble's members); a ParameterError on ``parameter`` naming the model."""
    if max_length is None:
        return
    for model, name in ref.model_kind.scored_models(ref):
        check_max_length(max_length, scorer_limits(model), name, parameter)


def check_scored_model(ref, max_length: int | None, parameter: str = "model") -> None:
    """The folder of ``ref`` checked whole (:func:`~.loader.check_model_folder`, a fault a
    ParameterError on ``parameter``), then ``max_length`` (:func:`check_scoring_max_length`)."""
    check_model_folder(ref, parameter)
    check_scoring_max_length(ref, max_length)
