"""Fine-tuning sentence-pair encoders on shared-schema datasets.

Cross-, bi- and tri-encoders (:mod:`trainers.models`), MSE and quadruplet objectives
(:mod:`trainers.losses`), a ``transformers.Trainer`` subclass (:mod:`trainers.trainer`), runs and
the CLI ``python -m trainers fit | cv | predict`` (:mod:`trainers.training`, :mod:`trainers.cli`).
"""

from .losses import OBJECTIVES, QuadrupletLoss
from .models import BiEncoder, CrossEncoder, PairEncoder, TriEncoder, build_model
from .trainer import PairTrainer, similarity_scores, training_arguments
from .training import FitOptions, FitResult, cross_validate, fit, load_pairs, predict

__all__ = ["OBJECTIVES", "QuadrupletLoss", "BiEncoder", "CrossEncoder", "PairEncoder",
           "TriEncoder", "build_model", "PairTrainer", "similarity_scores", "training_arguments",
           "FitOptions", "FitResult", "cross_validate", "fit", "load_pairs", "predict"]
