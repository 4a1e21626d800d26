"""The official SemEval-2024 Task 1 evaluation against a split of ``semrel-2024``: the split's
``pair_id``/``score`` columns are the gold, its ``language`` column says which language each pair
is scored in (Spearman per language, :func:`semrel.metrics.submission.evaluate`)::

    evaluate_file("pred_amh.csv", "amh", "test")   # {"amh": LanguageScore(spearman=..., n=171)}
"""

from __future__ import annotations

from pathlib import Path

from semrel.metrics.errors import DataValidationError
from semrel.metrics.submission import IdScores, LanguageScore, evaluate, read_predictions

from .files import DATASET_ID, EVALUATION_SPLITS


def split_gold(rows, where: str) -> tuple[IdScores, list[str]]:
    """(gold scores by pair id, language per pair) of a loaded split (``datasets.Dataset`` with
    ``pair_id``, ``language``, ``score``); a pair without a score (labels not published: Spanish
    test, English test without its held-back file) is an error naming it."""
    scores = rows["score"]
    for row, (pair_id, score) in enumerate(zip(rows["pair_id"], scores, strict=True), start=1):
        if score is None:
            raise DataValidationError(where, row, "no gold score: the labels of this split are not "
                                      "published (or not in the mirror)", pair_id)
    return IdScores(where, rows["pair_id"], scores), list(rows["language"])


def gold(config: str, split: str, *, mirror=None, cache_dir=None) -> tuple[IdScores, list[str]]:
    """:func:`split_gold` of ``semrel-2024``/``config`` (a language, ``cross-lingual-<lang>`` or
    ``all``), ``split`` one of :data:`~.files.EVALUATION_SPLITS` (``dev`` is ``validation``)."""
    import semrel.dataset_scripts

    if split not in EVALUATION_SPLITS:
        raise ValueError(f"split {split!r}: must be one of {', '.join(EVALUATION_SPLITS)}")
    splits = semrel.dataset_scripts.load(DATASET_ID, config, mirror=mirror, cache_dir=cache_dir)
    name = EVALUATION_SPLITS[split]
    if name not in splits:
        raise ValueError(f"{DATASET_ID}/{config} has no {name} split (splits: {', '.join(splits)})")
    return split_gold(splits[name], f"{DATASET_ID}/{config}/{name}")


def evaluate_file(predictions: str | Path, config: str, split: str, *, mirror=None,
                  cache_dir=None) -> dict[str, LanguageScore]:
    """Spearman per language of a ``PairID,Pred_Score`` file against ``semrel-2024``/``config``'s
    ``split``: every pair id of the split predicted exactly once."""
    reference, languages = gold(config, split, mirror=mirror, cache_dir=cache_dir)
    return evaluate(read_predictions(predictions), reference, languages)
