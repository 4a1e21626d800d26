"""A model to score, checked before anything is loaded or scored (:func:`check_scored_model`): its
folder whole, and the max length asked of its scorer against what its tokenizer and config allow
(:mod:`~trainers.token_limits`; no weights loaded)."""

from __future__ import annotations

import json
from pathlib import Path

from ..token_limits import TokenLimits, check_max_length, default_prompt, token_limits
from .loader import check_model_folder


def _transformer_folder(path: Path) -> Path:
    """A sentence-transformers folder's Transformer module folder (``modules.json``), else
    ``path`` itself."""
    try:
        modules = json.loads((path / "modules.json").read_text(encoding="utf-8"))
        folder = next(str(m.get("path") or "") for m in modules if str(m["type"]).endswith("Transformer"))
        return path / folder
    except (OSError, ValueError, TypeError, KeyError, AttributeError, StopIteration):
        return path


def scorer_limits(ref) -> TokenLimits:
    """The limits of what the scorer of ``ref`` (a :class:`~trainers.model_ref.ModelRef`, not
    an ensemble) tokenises, read from its tokenizer and config alone (no weights loaded)."""
    from transformers import AutoConfig, AutoTokenizer

    from ..run_folder import read_encoder_config

    folder, pair, prompt, prompted = ref.path, ref.kind == "cross-encoder", "", 1
    if ref.kind == "bi-encoder":
        folder, prompt = _transformer_folder(ref.path), default_prompt(ref.path)
    elif ref.kind == "semrel":
        options = read_encoder_config(ref.path, "model", ref.spec)
        pair = options["kind"] == "cross" or (options["kind"] == "bi" and bool(options.get("conditional")))
        prompt, prompted = options.get("prompt") or "", 2 if options["kind"] == "cross" else 1
    return token_limits(AutoTokenizer.from_pretrained(str(folder)), AutoConfig.from_pretrained(str(folder)),
                        pair=pair, prompt=prompt, prompted=prompted)


def check_scoring_max_length(ref, max_length: int | None, parameter: str = "max_length") -> None:
    """``max_length`` (None: each model's own) checked against the model ``ref`` and, for an
    ensemble, each of its members; a ParameterError on ``parameter`` naming the model."""
    if max_length is None:
        return
    if ref.kind == "ensemble":
        from ..ensemble import Ensemble

        for member in Ensemble.load(ref.path).refs:
            check_max_length(max_length, scorer_limits(member), f"{ref.spec}'s member {member.path.name}", parameter)
        return
    check_max_length(max_length, scorer_limits(ref), ref.spec, parameter)


def check_scored_model(ref, max_length: int | None, parameter: str = "model") -> None:
    """The folder of ``ref`` checked whole (:func:`~.loader.check_model_folder`, a fault a
    ParameterError on ``parameter``), then ``max_length`` (:func:`check_scoring_max_length`)."""
    check_model_folder(ref, parameter)
    check_scoring_max_length(ref, max_length)
