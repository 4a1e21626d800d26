"""Fine-tuning sentence-pair encoders on shared-schema datasets.

Cross-, bi- and tri-encoders (:mod:`trainers.models`), loss modules chosen by name
(:mod:`trainers.losses`), training arguments that are ``transformers.TrainingArguments`` plus
semrel's fields (:mod:`trainers.arguments`), a ``transformers.Trainer`` subclass
(:mod:`trainers.trainer`); runs on any pair dataset
(:func:`~semrel.dataset_scripts.pairs.load_pairs`): fit (:mod:`trainers.fitting`), cross
validation (:mod:`trainers.cross_validation`), prediction (:mod:`trainers.prediction`), their
figures (:mod:`trainers.summaries`); ensembles (:mod:`trainers.ensemble`,
:mod:`trainers.combination`, :mod:`trainers.stacking`); the files of a run
(:mod:`trainers.run_folder`); the model card (:mod:`trainers.card`); more training pairs,
nearest neighbours labelled by a teacher (:mod:`trainers.neighbour_pairs`); and the commands
``semrel fit | cv | predict | ensemble | models | benchmark | augment`` (:mod:`trainers.cli`).

Names are imported on first use, so ``import semrel.trainers`` (and ``semrel --help``)
does not import torch or transformers.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "LOSSES": "losses", "OBJECTIVES": "losses", "PairLoss": "losses", "build_loss": "losses",
    "PairMSELoss": "losses", "QuadrupletLoss": "losses", "QuadrupletMSELoss": "losses",
    "PairCoSENTLoss": "losses",
    "BiPairEncoder": "models", "CrossPairEncoder": "models", "PairEncoder": "models",
    "TriPairEncoder": "models", "build_model": "models", "MODEL_CLASSES": "models",
    "PairTrainer": "trainer", "similarity_scores": "trainer",
    "PairTrainingArguments": "arguments", "recorded_options": "arguments",
    "ParameterError": "options",
    "FitResult": "fitting", "fit": "fitting", "cross_validate": "cross_validation",
    "predict": "prediction",
    "PairData": "semrel.dataset_scripts.pairs", "load_pairs": "semrel.dataset_scripts.pairs",
}  # name -> its module in this package (or elsewhere, a dotted name)
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'semrel.trainers' has no attribute {name!r}")
    module = _EXPORTS[name]
    return getattr(importlib.import_module(module if "." in module else f".{module}", __name__), name)
