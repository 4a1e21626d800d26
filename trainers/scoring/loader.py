"""The scorer of one model of any kind: its folder checked whole, its scorer made by its kind
(:meth:`~trainers.kinds.base.ModelKind.scorer`; an ensemble's members each by theirs), its
cache key (content hash + settings) and disk cache."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from semrel.metrics.errors import ParameterError

from ..kinds import check_model_kind
from ..model_ref import ModelRef, content_hash
from .base import Scorer
from .cache import UnitCache, default_cache_dir, remembered_hash

DEFAULT = object()  # cache_dir: the default folder


def check_model_folder(ref: ModelRef, parameter: str = "model") -> Path:
    """The folder of ``ref`` checked whole as a model of its kind, read from its files or forced
    (:func:`~trainers.kinds.check_model_kind`: a folder that is not of that kind is
    refused, so no kind loads with weights drawn at random), before anything is loaded; a
    ParameterError on ``parameter`` naming the model as given otherwise."""
    try:
        return check_model_kind(ref.path, ref.kind, parameter)
    except ParameterError as exc:  # a packaged or Hub model: its name, not its folder
        if exc.value != str(ref.path):
            raise
        raise type(exc)(exc.parameter, ref.spec, exc.rule) from None


def model_scorer(ref: ModelRef, *, max_length=None, device=None, parameter: str = "model",
                 cache_dir=DEFAULT, **options) -> Scorer:
    """The scorer of the model ``ref``, its folder checked first, made by its kind (the models
    an ensemble is made of each by this function: their own scorers and caches), keyed and
    cached (:func:`keyed`)."""
    check_model_folder(ref, parameter)

    def member(model: ModelRef) -> Scorer:
        return model_scorer(model, max_length=max_length, device=device, parameter=parameter,
                            cache_dir=cache_dir, **options)

    scorer = ref.model_kind.scorer(ref, {"max_length": max_length, "device": device, **options}, member)
    scorer.kind = ref.kind
    return keyed(scorer, ref, cache_dir)


def keyed(scorer: Scorer, ref: ModelRef, cache_dir) -> Scorer:
    """``scorer`` with its cache key (the content hash of ``ref``'s folder and the scorer's
    settings) and, with a ``cache_dir`` (:data:`DEFAULT`: :func:`~.cache.default_cache_dir`),
    its disk cache, whose ``exports/`` keeps a backend's model exports (without one they are
    made in a temporary folder, gone when the scorer closes)."""
    folder = None if cache_dir is None else default_cache_dir() if cache_dir is DEFAULT else Path(cache_dir)
    model_hash = content_hash(ref.path) if folder is None else remembered_hash(folder, ref.path, content_hash)
    scorer.key = _key(model_hash, scorer.settings())
    scorer.model_hash = model_hash
    if folder is not None:
        scorer.use_cache(UnitCache(folder, scorer.key, {"spec": ref.spec, **scorer.settings()}))
        scorer.export_root = folder / "exports"
    return scorer


def _key(model_hash: str, settings: dict) -> str:
    """sha256 of the model's content hash and the settings that change what it computes."""
    return hashlib.sha256(f"{model_hash}\n{json.dumps(settings, sort_keys=True)}".encode()).hexdigest()
