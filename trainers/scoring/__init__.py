"""Any model as a pair scorer: :func:`load_scorer` turns a model argument (a packaged name, a
semrel run or ensemble, a sentence-transformers bi-encoder or ``CrossEncoder``, a plain
transformers encoder; :func:`~trainers.model_ref.resolve_model_ref`) into a
:class:`~.base.Scorer` with ``score(sentence1, sentence2, condition=None)``; bi-encoders also
``encode(texts)``.

    >>> from semrel.trainers.scoring import load_scorer
    >>> scorer = load_scorer("minilm", cache_dir=None)             # doctest: +SKIP
    >>> scorer.score(["A man plays."], ["Someone plays music."])   # doctest: +SKIP

Every distinct text unit is computed once per model (:mod:`.base`); with a ``cache_dir``
(default :func:`~.cache.default_cache_dir`) the values are kept on disk, keyed by the model's
content hash and its settings, so a second run computes nothing it has seen
(:mod:`.cache`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ..model_ref import ModelRef, content_hash, resolve_model_ref
from .base import EncoderScorer, Scorer, Scores
from .cache import UnitCache, default_cache_dir, remembered_hash

__all__ = ["DEFAULT", "EncoderScorer", "Scorer", "Scores", "UnitCache", "check_model_folder",
           "default_cache_dir", "load_scorer"]
DEFAULT = object()  # cache_dir: the default folder


def load_scorer(model: str | ModelRef, *, kind: str | None = None, max_length: int | None = None,
                batch_size: int = 64, cache_dir=DEFAULT, progress: bool = False,
                device: str | None = None, parameter: str = "model") -> Scorer:
    """The scorer of ``model`` (a model argument or a resolved :class:`ModelRef`; ``kind``
    overrides the detected kind). ``max_length``: tokens per unit (default: the model's own);
    ``cache_dir``: where computed units are kept (None: in memory only); the folder is checked
    whole before it is loaded, a fault a ParameterError on ``parameter``."""
    ref = model if isinstance(model, ModelRef) else resolve_model_ref(model, kind=kind, parameter=parameter)
    options = {"batch_size": batch_size, "progress": progress}
    scorer = _build(ref, max_length=max_length, device=device, parameter=parameter,
                    cache_dir=cache_dir, **options)
    return scorer


def check_model_folder(ref: ModelRef, parameter: str = "model") -> Path:
    """The folder of ``ref`` checked whole for its kind (a semrel run or ensemble:
    :func:`~trainers.run_folder.check_run_folder`; others: a transformer folder with whole
    weights), before anything is loaded; a ParameterError on ``parameter`` otherwise."""
    from ..run_folder import check_run_folder, check_transformer_folder

    if ref.kind in ("semrel", "ensemble"):
        return check_run_folder(ref.path, parameter)
    return check_transformer_folder(ref.path, parameter)


def _build(ref: ModelRef, *, max_length, device, parameter, cache_dir, **options) -> Scorer:
    check_model_folder(ref, parameter)
    if ref.kind == "ensemble":
        from ..ensemble import Ensemble
        from .ensemble import EnsembleScorer

        ensemble = Ensemble.load(ref.path)
        members = [_build(member, max_length=max_length, device=device, parameter=parameter,
                          cache_dir=cache_dir, **options) for member in ensemble.refs]
        scorer = EnsembleScorer(ref.spec, ref.path, ensemble=ensemble, members=members,
                                max_length=max_length, device=device, **options)
    else:
        scorer = _kind_class(ref)(ref.spec, ref.path, max_length=max_length, device=device, **options)
    folder = None if cache_dir is None else default_cache_dir() if cache_dir is DEFAULT else Path(cache_dir)
    model_hash = content_hash(ref.path) if folder is None else remembered_hash(folder, ref.path, content_hash)
    scorer.key = _key(model_hash, scorer.settings())
    if folder is not None:
        scorer.use_cache(UnitCache(folder, scorer.key, {"spec": ref.spec, **scorer.settings()}))
    return scorer


def _kind_class(ref: ModelRef) -> type[Scorer]:
    from . import cross, encoders

    if ref.kind == "semrel":
        from ..run_folder import read_encoder_config

        cross_run = read_encoder_config(ref.path, "model", ref.spec)["kind"] == "cross"
        return cross.SemrelCrossScorer if cross_run else encoders.SemrelEncoderScorer
    return {"bi-encoder": encoders.SentenceTransformerScorer,
            "cross-encoder": cross.CrossEncoderScorer,
            "transformer": encoders.TransformerScorer}[ref.kind]


def _key(model_hash: str, settings: dict) -> str:
    """sha256 of the model's content hash and the settings that change what it computes."""
    return hashlib.sha256(f"{model_hash}\n{json.dumps(settings, sort_keys=True)}".encode()).hexdigest()
