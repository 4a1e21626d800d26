"""An ensemble folder: trained member models combined by a rank average, a linear stack or a
learned stack (the math: :mod:`~trainers.combination`, :mod:`~trainers.stacking`).

Members are run folders written by :func:`~trainers.fitting.fit` (their predictions say which
data, split, score range and rows they scored); a saved ensemble folder holds copies of them
(:mod:`~trainers.run_folder`), so it can be moved whole, and a card. Combining runs of different
data, folds or score ranges, or a conditional with an unconditional model, is an error naming the
run.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

import numpy as np
from huggingface_hub import ModelCardData

from semrel.dataset_scripts.folders import replaced_whole
from semrel.metrics.errors import ParameterError
from semrel.metrics.output_files import check_output

from .card import write_card
from .combination import METHODS, StackResult, check_weights, combine, cv_predictions, fit_stack
from .models import PairEncoder
from .run_folder import (
    CHECKPOINTS,
    MEMBERS,
    PREDICTIONS,
    check_ensemble_output,
    check_same_rows,
    cv_folds,
    load_run,
    member_facts,
    read_ensemble,
    write_ensemble,
)
from .stacking import LEARNERS, LearnedStack, build_learned_stack


@dataclass(frozen=True)
class Ensemble:
    """Trained member models combined by ``method``: ``rank`` (optional ``weights``; each
    member's scores ranked against its ``reference`` scores) or ``stack`` (weights fit on the
    members' CVs' out-of-fold predictions)."""

    members: tuple[str, ...]
    method: str
    score_range: tuple[float, float]
    conditional: bool
    weights: tuple[float, ...] | None = None
    stack: StackResult | None = None
    reference: tuple[tuple[float, ...], ...] | None = None
    learned: LearnedStack | None = None  # methods ridge, gbm

    @classmethod
    def build(cls, members: list[str | os.PathLike], method: str = "rank", *, weights=None,
              cv_dirs: list[str | os.PathLike] | None = None, features=()) -> Ensemble:
        """Check that the members can be combined (same score range and conditioning). With
        ``cv_dirs`` (one CV folder per member, same order) their out-of-fold predictions fit the
        stack or are the rank references; a rank average without them ranks against each
        member's own held-out predictions (those of the split it was evaluated on). ``ridge`` and
        ``gbm`` fit a learned stack (:func:`~trainers.stacking.build_learned_stack`, with the
        lexical ``features``) on the CVs' out-of-fold predictions or, without ``cv_dirs``, on the
        members' dev predictions.

        Members trained on different data (another dataset, config or fold), and, for a rank
        average without ``cv_dirs``, members evaluated on different rows, are refused; so are
        ``weights`` with another method than ``rank`` and ``features`` with another than
        ``ridge`` or ``gbm`` (they would be ignored)."""
        check_options(method, weights, features)
        paths = [Path(m) for m in members]
        if len(paths) < 2:
            raise ParameterError("members", [str(p) for p in paths], "must be >= 2 model folders")
        facts = [member_facts(p) for p in paths]
        _same_facts(paths, facts, ("score_range", "conditional"))
        if method in LEARNERS:  # the members' data: checked by build_learned_stack
            return cls(tuple(str(p.resolve()) for p in paths), method,
                       tuple(facts[0]["score_range"]), facts[0]["conditional"],
                       learned=build_learned_stack(paths, method, cv_dirs=cv_dirs,
                                                   features=features))
        oof = None
        if cv_dirs:
            if len(cv_dirs) != len(paths):
                raise ParameterError("cv_dirs", [str(d) for d in cv_dirs],
                                     f"must be one CV folder per member, in the members' order: "
                                     f"{len(cv_dirs)} for {len(paths)} members")
            for path, fact, cv_dir in zip(paths, facts, cv_dirs, strict=True):
                kinds = {load_run(p).encoder for p in cv_folds(cv_dir)}
                if kinds and kinds != {fact["encoder"]}:
                    raise ValueError(f"ensemble member {path} is a {fact['encoder']}-encoder but "
                                     f"its CV {cv_dir} trained {sorted(kinds)}")
            oof = cv_predictions(cv_dirs)
        stack = reference = None
        if method == "stack":
            if oof is None:
                raise ParameterError("cv_dirs", None, "must be given for method 'stack': one CV "
                                     "folder per member, whose out-of-fold predictions fit the "
                                     "weights")
            stack = fit_stack(*oof)
        else:
            if weights is not None:
                weights = tuple(float(w) for w in check_weights(weights, len(paths)))
            columns = oof[0].T if oof is not None else _held_out_scores(paths)
            reference = tuple(tuple(np.sort(c).tolist()) for c in columns)
        _same_facts(paths, facts, ("data",))  # after the predictions', which say more
        return cls(tuple(str(p.resolve()) for p in paths), method,
                   tuple(facts[0]["score_range"]), facts[0]["conditional"], weights, stack,
                   reference)

    def predict(self, sentence1: list[str], sentence2: list[str],
                condition: list[str] | None = None, batch_size: int = 64) -> np.ndarray:
        """One score per pair (stack: on the label scale [0, 1], never clipped; rank: a weighted
        quantile in [0, 1] among its references, whatever else is scored with it; a ``rank``
        folder without references ranks among the given pairs)."""
        if self.conditional and condition is None:
            raise ValueError("this ensemble's members are conditional: give a condition column")
        columns = [encoder.predict(sentence1, sentence2, condition, batch_size=batch_size)
                   for encoder in self.encoders]
        return self.combined(columns, sentence1, sentence2)

    def combined(self, columns, sentence1, sentence2) -> np.ndarray:
        """The members' scores of the pairs (one column per member, in order) combined by the
        ensemble's method (see :meth:`predict`)."""
        if self.learned is not None:
            return self.learned.predict(np.column_stack(columns), sentence1, sentence2)
        return combine(self.method, np.column_stack(columns), weights=self.weights,
                       stack=self.stack, reference=self.reference)

    def check_scored(self, data: str, split: str, ids) -> None:
        """A learned stack refuses the rows it was fit on (others score anything)."""
        if self.learned is not None:
            self.learned.check_scored(data, split, ids)

    @cached_property
    def encoders(self) -> list[PairEncoder]:
        """The members, loaded once (on the first :meth:`predict`) and kept for later calls."""
        return [PairEncoder.from_pretrained(m) for m in self.members]

    def save(self, path: str | os.PathLike) -> Path:
        """A folder that holds everything: copies of the members (``members/<i>-<name>``,
        without checkpoints), the ensemble file naming them relative to the folder, and a
        card. Written beside ``path`` and swapped in whole, so a failure leaves an earlier
        ensemble there intact; a folder that holds something else, a link, or a folder that
        is, lies in or holds a member is refused
        (:func:`~semrel.metrics.output_files.check_output`)."""
        path = Path(path)
        check_ensemble_output(path)
        check_output(path, "path", {"members": self.members}, folder=True)
        with replaced_whole(path) as staging:
            names = []
            for i, member in enumerate(self.members):
                names.append(f"{MEMBERS}/{i}-{Path(member).name}")
                shutil.copytree(member, staging / names[-1],
                                ignore=shutil.ignore_patterns(CHECKPOINTS))
            saved = replace(self, members=tuple(names))
            raw = {"method": self.method, "members": names,
                   "score_range": list(self.score_range), "conditional": self.conditional,
                   "weights": self.weights,
                   "stack": None if self.stack is None else {
                       "weights": list(self.stack.weights), "intercept": self.stack.intercept,
                       "n_rows": self.stack.n_rows},
                   "reference": None if self.reference is None else [list(r) for r in
                                                                      self.reference]}
            if self.learned is not None:  # ridge, gbm
                raw["learned"] = self.learned.to_json()
            write_ensemble(staging, raw)
            write_card(staging, ModelCardData(tags=["semrel", "ensemble", "sentence-similarity"]),
                       saved.card(staging), "path")
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> Ensemble:
        """An ensemble folder written by :meth:`save`; member paths resolve inside it."""
        path = Path(path)
        raw = read_ensemble(path)
        stack, reference, learned = raw.get("stack"), raw.get("reference"), raw.get("learned")
        return cls(tuple(str((path / m).resolve()) for m in raw["members"]), raw["method"],
                   tuple(raw["score_range"]), raw["conditional"],
                   None if raw["weights"] is None else tuple(raw["weights"]),
                   None if stack is None else StackResult(tuple(stack["weights"]),
                                                          stack["intercept"], stack["n_rows"]),
                   None if reference is None else tuple(tuple(r) for r in reference),
                   None if learned is None else LearnedStack.from_json(learned))

    def card(self, base: Path) -> str:
        """The model card's body; ``base`` is the folder the (relative) member paths are in."""
        if self.learned is not None:
            fit = ", ".join(f"{p['data']}/{p['split']}" for p in self.learned.fit_on)
            extra = f" and {', '.join(self.learned.features)}" if self.learned.features else ""
            weights = (tuple(self.learned.state["coef"][:len(self.members)])
                       if self.method == "ridge" else (float("nan"),) * len(self.members))
            how = (f"learned stack ({self.method}) of the members' scores{extra}, fit on "
                   f"{self.learned.n_rows} predictions of pairs the members never trained on "
                   f"({fit}); scoring those rows with it is refused (weight: ridge coefficient)")
        elif self.method == "stack":
            weights = self.stack.weights
            how = (f"linear stack `{self.stack.intercept:+.4f} + Σ w·score`, weights fit by "
                   f"non-negative least squares on {self.stack.n_rows} out-of-fold predictions")
        else:
            weights = self.weights or (1.0,) * len(self.members)
            sizes = " / ".join(str(n) for n in sorted({len(r) for r in self.reference or ()}))
            how = ("rank average: weighted mean of each member's score as its quantile among "
                   f"{sizes} reference scores of that member (its held-out predictions), so a "
                   "pair's score does not depend on the pairs scored with it"
                   if self.reference else "rank average: weighted mean of the members' ranks "
                   "among the pairs scored together")
        rows = "\n".join(f"| `{m}` | {member_facts(base / m)['encoder']} | {w:.4f} |"
                         for m, w in zip(self.members, weights, strict=True))
        return f"""# Ensemble of {len(self.members)} semrel pair encoders

Combination: {how}. Score range of the members' data: {list(self.score_range)};
conditional: {self.conditional}. The members are in this folder (`{MEMBERS}/`); scores are on
the label scale [0, 1] (`predict` below maps them to the dataset's range).

| member | encoder | weight |
|---|---|---|
{rows}

Predict with the semrel code:

```bash
semrel predict --model ENSEMBLE_DIR --dataset DATASET --output preds.json
```
```python
from semrel.trainers.ensemble import Ensemble
Ensemble.load("ENSEMBLE_DIR").predict(["a sentence"], ["another sentence"])
```
"""


def _same_facts(paths: list[Path], facts: list[dict], keys) -> None:
    """Each member's ``keys`` (:func:`~trainers.run_folder.member_facts`) are the first one's."""
    for path, fact in zip(paths[1:], facts[1:], strict=True):
        for key in keys:
            if fact[key] != facts[0][key]:
                raise ValueError(f"ensemble member {path}: its {key.replace('_', ' ')} "
                                 f"{fact[key]} differs from {paths[0]}'s {facts[0][key]}")


def check_options(method: str, weights, features) -> None:
    """``method`` is one of :data:`METHODS`; ``weights`` are given for ``rank`` only and
    ``features`` for ``ridge`` and ``gbm`` only (the other methods would ignore them)."""
    if method not in METHODS:
        raise ParameterError("method", method, f"must be one of {METHODS}")
    if weights is not None and method != "rank":
        raise ParameterError("weights", weights, f"are for {{method}} rank only ({method} fits how "
                             "the members combine); leave them out")
    if features and method not in LEARNERS:
        raise ParameterError("features", list(features), f"are for {{method}} {' or '.join(LEARNERS)} "
                             f"only ({method} combines the members' scores alone); leave them out")


def _held_out_scores(paths: list[Path]) -> list[np.ndarray]:
    """Each member's predictions on the split it was evaluated on (rank references without a
    CV): the same rows of the same data for every member, one score per row."""
    runs = []
    for path in paths:
        if not (path / PREDICTIONS).is_file():
            raise ParameterError("cv_dirs", None, f"must be given: ensemble member {path} has no "
                                 f"held-out predictions (no {PREDICTIONS}: trained without a "
                                 "test split) for a rank average to rank its scores against; one "
                                 "CV folder per member, whose out-of-fold predictions serve")
        runs.append(load_run(path))
    check_same_rows(runs)
    return [run.predictions for run in runs]
