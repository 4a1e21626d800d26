"""Fine-tuning sentence-pair encoders on shared-schema datasets.

Cross-, bi- and tri-encoders (:mod:`trainers.models`), loss modules chosen by name
(:mod:`trainers.losses`), a ``transformers.Trainer`` subclass (:mod:`trainers.trainer`), runs and
the CLI ``semrel fit | cv | predict`` (:mod:`trainers.training`, :mod:`trainers.cli`).

Names are imported on first use, so ``import trainers`` (and ``semrel --help``)
does not import torch or transformers.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "LOSSES": "losses", "OBJECTIVES": "losses", "PairLoss": "losses", "build_loss": "losses",
    "MSELoss": "losses", "QuadrupletLoss": "losses", "QuadrupletMSELoss": "losses",
    "CoSENTLoss": "losses",
    "BiEncoder": "models", "CrossEncoder": "models", "PairEncoder": "models",
    "TriEncoder": "models", "build_model": "models", "MODEL_CLASSES": "models",
    "PairTrainer": "trainer", "similarity_scores": "trainer",
    "training_arguments": "trainer", "FitOptions": "options",
    "FitResult": "training", "PairData": "training", "cross_validate": "training",
    "fit": "training", "load_pairs": "training", "predict": "training",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'trainers' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
