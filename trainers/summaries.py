"""The figures a run reports beyond Pearson, Spearman and MSE: per source, per language, their
intervals, the means over CV folds; and the one rule for writing an undefined figure.

Correlations come from :func:`~trainers.trainer.similarity_scores` (Pearson r, Spearman ρ) and
:mod:`semrel.metrics.correlation_intervals` (intervals).
"""

from __future__ import annotations

import logging
import math

import numpy as np

from semrel.metrics.correlation_intervals import cv_mean_interval, pearson_interval, spearman_interval
from semrel.metrics.errors import DataValidationError
from semrel.metrics.submission import IdScores, evaluate

from .trainer import similarity_scores

log = logging.getLogger(__name__)


def finite_or_null(value):
    """``value`` with every NaN or infinite float replaced by None (JSON null): a figure that is
    undefined, e.g. Spearman of constant predictions, is written as null, never as ``NaN``,
    which is not JSON.

    >>> finite_or_null({"spearman": float("nan"), "per_source": [0.5, float("inf")]})
    {'spearman': None, 'per_source': [0.5, None]}
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_or_null(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite_or_null(v) for v in value]
    return value


def per_source_spearman(split, predictions, labels) -> dict[str, float]:
    """Spearman ρ within each value of the split's ``source`` column (empty without one)."""
    if "source" not in split.column_names:
        return {}
    sources = np.asarray(split["source"], dtype=object)
    return {s: similarity_scores(predictions[sources == s], labels[sources == s]).spearman
            for s in sorted(set(sources.tolist())) if (sources == s).sum() >= 2}


def per_language_spearman(split, predictions, labels) -> dict[str, float]:
    """The SemEval-2024 Task 1 evaluation of a split with a ``language`` column (semrel-2024):
    Spearman per language after aligning the predictions to the split's ``pair_id``
    (:func:`semrel.metrics.submission.evaluate`); empty without a ``language`` column, or with a
    warning when a language's Spearman is undefined (constant predictions)."""
    if "language" not in split.column_names:
        return {}
    ids = list(split["pair_id"]) if "pair_id" in split.column_names else list(range(len(split)))
    try:
        scores = evaluate(IdScores("predictions", ids, predictions), IdScores("labels", ids, labels),
                          list(split["language"]))
    except DataValidationError as exc:
        log.warning("per-language Spearman not computed: %s", exc)
        return {}
    return {language: score.spearman for language, score in scores.items()}


def eval_intervals(predictions, labels, confidence: float = 0.95) -> dict:
    """``spearman_ci`` (seeded paired bootstrap, 1,000 resamples) and ``pearson_ci`` (Fisher z) of a
    run's evaluation, from :mod:`semrel.metrics.correlation_intervals`; both None where the
    evaluation has too few rows for them (< 8) or constant scores."""
    try:
        rho, r = spearman_interval(predictions, labels, confidence), pearson_interval(predictions, labels, confidence)
    except ValueError:
        return {"spearman_ci": None, "pearson_ci": None}
    return {"spearman_ci": [rho.interval.low, rho.interval.high], "pearson_ci": [r.interval.low, r.interval.high]}


def mean_interval(results: dict, confidence: float = 0.95) -> list[float] | None:
    """Interval for the mean Spearman over CV folds (``results``: fold -> ``FitResult``): the
    corrected resampled t of Nadeau & Bengio
    (:func:`~semrel.metrics.correlation_intervals.cv_mean_interval`); None with fewer than 2 folds."""
    scores = [r.spearman for r in results.values() if r.spearman is not None]
    if len(scores) < 2:
        return None
    interval = cv_mean_interval(scores, confidence)
    return [interval.low, interval.high]


def mean_scores(results: dict) -> tuple[float, dict[str, float]]:
    """Mean Spearman over folds, and per source the mean over the folds that score it."""
    overall = float(np.mean([r.spearman for r in results.values()]))
    sources = sorted({s for r in results.values() for s in r.per_source})
    per_source = {s: float(np.mean([r.per_source[s] for r in results.values()
                                    if s in r.per_source])) for s in sources}
    return overall, per_source
