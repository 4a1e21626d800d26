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

from ..model_ref import ModelRef, resolve_model_ref
from .backends import BACKENDS, QUANTIZATIONS, check_backend
from .base import EncoderScorer, Scorer, Scores
from .cache import UnitCache, default_cache_dir
from .loader import DEFAULT, check_model_folder, model_scorer

__all__ = ["BACKENDS", "DEFAULT", "QUANTIZATIONS", "EncoderScorer", "Scorer", "Scores", "UnitCache",
           "check_backend", "check_model_folder", "default_cache_dir", "load_scorer"]


def load_scorer(model: str | ModelRef, *, kind: str | None = None, max_length: int | None = None,
                batch_size: int = 64, cache_dir=DEFAULT, progress: bool = False,
                device: str | None = None, parameter: str = "model", backend: str = "torch",
                quantize: str | None = None) -> Scorer:
    """The scorer of ``model`` (a model argument or a resolved :class:`ModelRef`; ``kind``
    overrides the detected kind). ``max_length``: tokens per unit (default: the model's own);
    ``cache_dir``: where computed units are kept (None: in memory only); the folder is checked
    whole before it is loaded, a fault a ParameterError on ``parameter``; the scorer is made by
    the model's kind (:func:`~.loader.model_scorer`; an ensemble's members each have their own
    scorer and cache). ``backend``: where the forward passes run (torch, onnx, openvino) and
    ``quantize`` (int8, onnx only): :mod:`.backends`."""
    check_backend(backend, quantize)
    ref = model if isinstance(model, ModelRef) else resolve_model_ref(model, kind=kind, parameter=parameter)
    return model_scorer(ref, parameter=parameter, cache_dir=cache_dir, batch_size=batch_size,
                        progress=progress, max_length=max_length, device=device, backend=backend,
                        quantize=quantize)
