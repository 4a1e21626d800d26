"""From a shared-schema pair dataset to training rows: validated labels, condition groups, batches.

Trainers read only ``sentence1``, ``sentence2``, ``score`` (native scale) and, when present,
``condition``; the native scale ``(lo, hi)`` comes from ``REGISTRY[id].score_range``, a dataset
card's ``score_range`` or the caller (:func:`~semrel.dataset_scripts.pairs.load_pairs`). Labels for the MSE
loss are ``y = (score − lo) / (hi − lo)`` in [0, 1].
"""

from __future__ import annotations

import hashlib
import logging
import pickle
from dataclasses import dataclass

import datasets
import numpy as np
import pandas as pd
import torch

from semrel.dataset_scripts.errors import DataValidationError
from semrel.dataset_scripts.schema import PAIR_COLUMNS, sentence_pair_groups
from semrel.metrics.errors import check_on_invalid

logger = logging.getLogger(__name__)


def scale_scores(scores: np.ndarray, score_range: tuple[float, float], *, where: str) -> np.ndarray:
    """``(score − lo) / (hi − lo)`` as float32; a missing or out-of-range score is an error."""
    lo, hi = score_range
    scores = np.asarray(scores, dtype=np.float64)
    bad = np.flatnonzero(~((scores >= lo) & (scores <= hi)))  # NaN (missing) fails both tests
    if bad.size:
        row = int(bad[0])
        rule = ("score is missing" if np.isnan(scores[row])
                else f"score outside the declared score range [{lo:g}, {hi:g}]")
        raise DataValidationError(where, row + 1, rule,
                                  f"score {scores[row]:g}; {bad.size} such row(s) in all")
    return ((scores - lo) / (hi - lo)).astype(np.float32)


def unscale(labels: np.ndarray, score_range: tuple[float, float]) -> np.ndarray:
    """Back from the [0, 1] label scale to the dataset's native scale: ``lo + y (hi − lo)``."""
    lo, hi = score_range
    return lo + np.asarray(labels, dtype=np.float64) * (hi - lo)


def check_sentences(ds: datasets.Dataset, *, where: str) -> None:
    """Every ``sentence1``/``sentence2`` must be a non-empty string (after stripping whitespace)."""
    missing = [c for c in PAIR_COLUMNS if c not in ds.column_names]
    if missing:
        raise DataValidationError(where, None, "missing pair column(s) " + ", ".join(missing),
                                  f"columns are {ds.column_names}")
    for column in PAIR_COLUMNS:
        text = pd.Series(ds[column], dtype=object)
        blank = text.fillna("").str.strip() == ""
        empty = np.flatnonzero(text.isna().to_numpy() | blank.to_numpy())
        if empty.size:
            raise DataValidationError(where, int(empty[0]) + 1, f"empty {column}",
                                      f"{empty.size} such row(s) in all")


def prepare_pairs(ds: datasets.Dataset, score_range: tuple[float, float], *, where: str,
                  labelled: bool = True) -> datasets.Dataset:
    """The columns the encoders read, checked, plus ``labels`` in [0, 1] when ``labelled``.

    ``where`` names the data in errors (e.g. ``"str-2021/cv-fold-0/train"``); rows are 1-based.
    """
    check_sentences(ds, where=where)
    keep = [c for c in (*PAIR_COLUMNS, "condition") if c in ds.column_names]
    if "condition" in keep:
        null = [i for i, c in enumerate(ds["condition"]) if c is None]
        if null:
            raise DataValidationError(where, null[0] + 1, "condition is null (an empty string "
                                      "means no condition)", f"{len(null)} such row(s) in all")
    out = ds.select_columns(keep)
    if labelled:
        if "score" not in ds.column_names:
            raise DataValidationError(where, None, "missing score column",
                                      f"columns are {ds.column_names}")
        values = ds["score"]
        not_number = [i for i, s in enumerate(values) if s is not None and (
            isinstance(s, bool) or not isinstance(s, (int, float, np.number)))]
        if not_number:
            row = not_number[0]
            raise DataValidationError(where, row + 1, "score must be a number (strings are not "
                                      "converted)", f"score {values[row]!r}; "
                                      f"{len(not_number)} such row(s) in all")
        raw = np.array([np.nan if s is None else s for s in values], dtype=np.float64)
        out = with_column(out, "labels", scale_scores(raw, score_range, where=where).tolist())
    return out


def with_column(ds: datasets.Dataset, name: str, values: list) -> datasets.Dataset:
    """``ds.add_column(name, values)`` fingerprinted as datasets does it (a hash of the old
    fingerprint and the arguments), by sha256 of their pickle instead of datasets' pure-Python
    ``dill`` hasher, which takes a second or more on a few thousand rows of token ids."""
    digest = hashlib.sha256(f"{ds._fingerprint}\0{name}\0".encode())
    digest.update(pickle.dumps(values, protocol=pickle.HIGHEST_PROTOCOL))
    return ds.add_column(name, values, new_fingerprint=digest.hexdigest()[:32])


@dataclass(frozen=True)
class ConditionGroupResult:
    """Row indices of each sentence pair's (high, low) conditions and the tied groups omitted."""

    rows: np.ndarray  # (n_groups, 2) int64: [high-label row, low-label row]
    n_omitted: int


def condition_groups(ds: datasets.Dataset, *, where: str,
                     on_invalid: str = "raise") -> ConditionGroupResult:
    """Group the rows of each (sentence1, sentence2) pair into one (high, low) condition group.

    Rules (C-STS, Deshpande et al. 2023 §2: each pair has a high- and a low-similarity
    condition): a group holds exactly 2 rows; their labels must differ (which one is "high" is
    otherwise undefined) -- ``on_invalid="omit"`` drops tied groups instead and counts them.
    Grouping happens on the raw text, before tokenisation.
    """
    groups = sentence_pair_groups(where, ds["sentence1"], ds["sentence2"])
    pairs = np.array(groups, dtype=np.int64).reshape(-1, 2)
    labels = np.asarray(ds["labels"], dtype=np.float64)
    a, b = labels[pairs[:, 0]], labels[pairs[:, 1]]
    tied = a == b
    check_on_invalid(on_invalid)
    if tied.any() and on_invalid == "raise":
        first = pairs[np.flatnonzero(tied)[0]]
        raise DataValidationError(
            where, int(first[0]) + 1,
            "the two conditions of a sentence pair need different scores for the quadruplet loss",
            f"rows {[int(r) + 1 for r in first]} both score {a[tied][0]:g}; {int(tied.sum())} "
            "tied group(s) in all (on_invalid='omit' drops them and reports the count)")
    if tied.any():
        logger.warning("%s: omitted %d tied condition group(s) of %d", where, int(tied.sum()),
                       len(pairs))
    keep = ~tied
    high_first = np.where((a >= b)[keep, None], pairs[keep], pairs[keep][:, ::-1])
    return ConditionGroupResult(rows=high_first, n_omitted=int(tied.sum()))


def pretokenize_pairs(ds: datasets.Dataset, model: torch.nn.Module) -> datasets.Dataset:
    """``ds`` (rows of :func:`prepare_pairs`) plus the model's token ids of every pair
    (:meth:`~trainers.models.PairEncoder.pretokenize`): tokenised once per dataset, in one
    batched call, instead of once per batch in the collator."""
    condition = ds["condition"] if getattr(model, "conditional", False) else None
    encoded = model.pretokenize(ds["sentence1"], ds["sentence2"], condition)
    for key, values in encoded.items():
        ds = with_column(ds, key, values)
    return ds


@dataclass
class PairCollator:
    """A batch for the model from a list of rows: pre-tokenised rows (``input_ids``, see
    :func:`pretokenize_pairs`) are padded by ``model.pad``; text rows are tokenised with
    ``model.tokenize`` (dynamic padding). Adds ``labels`` when the rows have them."""

    model: torch.nn.Module
    pad_to_multiple_of: int = 0

    def __call__(self, rows: list[dict]) -> dict:
        column = lambda name: [row[name] for row in rows]  # noqa: E731
        if "input_ids" in rows[0]:
            batch = self.model.pad(rows, self.pad_to_multiple_of)
        else:
            batch = dict(self.model.tokenize(column("sentence1"), column("sentence2"),
                                             column("condition") if "condition" in rows[0]
                                             else None))
        if "labels" in rows[0]:
            batch["labels"] = torch.tensor(column("labels"), dtype=torch.float32)
        return batch
