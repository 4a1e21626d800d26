"""Ensembles of trained pair encoders: a rank average, and a linear stack fit on out-of-fold
predictions only.

* rank average: ``ŝ_i = Σ_m w_m r_m(i) / Σ_m w_m`` with ``r_m(i) = (rank_m(i) − 1) / (n − 1)``
  the (average-tie) rank of row ``i`` among member ``m``'s ``n`` scores, scaled to [0, 1].
* stack: ``ŝ_i = b + Σ_m w_m p_m(i)`` with ``w ≥ 0``: non-negative least squares of the labels on
  the members' scores (centred, so the intercept ``b`` is free), fit on out-of-fold predictions --
  Wolpert 1992 "Stacked generalization"; Breiman 1996 "Stacked regressions" (non-negative weights).
  In a CV the weights used on fold ``f`` are fit on the other folds' test predictions, whose rows
  fold ``f``'s test never sees; an ensemble for new data takes weights fit on the whole CV.

Members are run folders written by :func:`trainers.training.fit` (``eval_predictions.json`` says
which data, split, score range and rows they scored). Combining runs of different data, folds or
score ranges, or a conditional with an unconditional model, is an error naming the run.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy import optimize, stats

from .models import CONFIG_NAME, PairEncoder

PREDICTIONS_FILE = "eval_predictions.json"
ENSEMBLE_FILE = "semrel_ensemble.json"
METHODS = ("rank", "stack")


@dataclass(frozen=True)
class RunPredictions:
    """One trained run's scores on its evaluated split (label scale [0, 1]) and their context."""

    path: str
    data: str
    split: str
    score_range: tuple[float, float]
    encoder: str
    conditional: bool
    ids: list
    predictions: np.ndarray
    labels: np.ndarray
    sources: list | None = None


def load_run(path: str | os.PathLike) -> RunPredictions:
    """The ``eval_predictions.json`` of a run folder; ``FileNotFoundError`` naming the folder."""
    file = Path(path) / PREDICTIONS_FILE
    if not file.is_file():
        raise FileNotFoundError(f"{path}: no {PREDICTIONS_FILE} (not a run folder written by "
                                "`python -m trainers fit`/`cv`)")
    raw = json.loads(file.read_text())
    return RunPredictions(path=str(path), data=raw["data"], split=raw["split"],
                          score_range=tuple(raw["score_range"]), encoder=raw["encoder"],
                          conditional=raw["conditional"], ids=raw["ids"],
                          predictions=np.asarray(raw["predictions"], dtype=np.float64),
                          labels=np.asarray(raw["labels"], dtype=np.float64),
                          sources=raw.get("sources"))


def check_same_rows(runs: list[RunPredictions]) -> None:
    """Members of one ensemble must have scored the same rows of the same data, split and score
    range, and agree on conditioning; ``ValueError`` naming the first run that differs."""
    first = runs[0]
    for run in runs[1:]:
        for what, a, b in (("data (dataset/config)", first.data, run.data),
                           ("evaluated split", first.split, run.split),
                           ("score range", first.score_range, run.score_range),
                           ("conditioning", first.conditional, run.conditional),
                           ("rows (pair ids, in order)", first.ids, run.ids)):
            if a != b:
                raise ValueError(f"ensemble member {run.path}: its {what} differs from "
                                 f"{first.path}'s ({_short(b)} vs {_short(a)}); members must be "
                                 "trained and evaluated on the same fold and score range")
        if not np.array_equal(first.labels, run.labels):
            raise ValueError(f"ensemble member {run.path}: its gold labels differ from "
                             f"{first.path}'s on the same rows")


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _matrix(predictions) -> np.ndarray:
    """(n rows, k members) float64; ``ValueError`` for other shapes or non-finite scores."""
    matrix = np.asarray(predictions, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] < 2 or matrix.shape[1] < 1:
        raise ValueError(f"member predictions must be an (n >= 2 rows, k >= 1 members) array, "
                         f"got shape {matrix.shape}")
    bad = np.argwhere(~np.isfinite(matrix))
    if bad.size:
        raise ValueError(f"member {bad[0][1]} has a non-finite score at row {bad[0][0]}")
    return matrix


def _weights(weights, k: int) -> np.ndarray:
    w = np.ones(k) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (k,) or not np.all(np.isfinite(w)) or (w < 0).any() or w.sum() <= 0:
        raise ValueError(f"weights must be {k} finite non-negative numbers with a positive sum, "
                         f"got {weights!r}")
    return w


def rank_average(predictions, weights=None) -> np.ndarray:
    """Weighted mean of the members' rank-scaled scores (module docstring), in [0, 1]."""
    matrix = _matrix(predictions)
    ranks = (stats.rankdata(matrix, axis=0) - 1.0) / (matrix.shape[0] - 1)
    w = _weights(weights, matrix.shape[1])
    return ranks @ w / w.sum()


@dataclass(frozen=True)
class StackResult:
    """Non-negative linear stack ``b + Σ w_m p_m``, fit on ``n_rows`` out-of-fold rows."""

    weights: tuple[float, ...]
    intercept: float
    n_rows: int

    def predict(self, predictions) -> np.ndarray:
        matrix = _matrix(predictions)
        if matrix.shape[1] != len(self.weights):
            raise ValueError(f"the stack has {len(self.weights)} members, got predictions of "
                             f"{matrix.shape[1]}")
        return self.intercept + matrix @ np.asarray(self.weights)


def fit_stack(predictions, labels) -> StackResult:
    """Non-negative least squares of ``labels`` on the members' scores with a free intercept
    (``scipy.optimize.nnls`` on centred columns). Give it out-of-fold predictions only."""
    matrix = _matrix(predictions)
    y = np.asarray(labels, dtype=np.float64).reshape(-1)
    if y.shape != (matrix.shape[0],) or not np.all(np.isfinite(y)):
        raise ValueError(f"labels must be {matrix.shape[0]} finite numbers, got shape {y.shape}")
    x_mean, y_mean = matrix.mean(axis=0), y.mean()
    weights, _ = optimize.nnls(matrix - x_mean, y - y_mean)
    return StackResult(tuple(float(w) for w in weights), float(y_mean - x_mean @ weights),
                       len(y))


def combine(method: str, predictions, *, weights=None, stack: StackResult | None = None):
    """``rank``: :func:`rank_average` (``weights`` optional); ``stack``: ``stack.predict``."""
    if method == "rank":
        return rank_average(predictions, weights)
    if method == "stack":
        if stack is None:
            raise ValueError("method 'stack' needs weights fit on out-of-fold predictions")
        return stack.predict(predictions)
    raise ValueError(f"method must be one of {METHODS}, got {method!r}")


def spearman(predictions, labels) -> float:
    return float(stats.spearmanr(predictions, labels).statistic)


@dataclass(frozen=True)
class EnsembleCVResult:
    """Per fold, the Spearman ρ of each member and of each ensemble (``rank``, ``stack``); the
    stack weights used on each fold (fit on the other folds' test predictions)."""

    folds: dict[str, dict[str, float]]
    stack_weights: dict[str, StackResult]
    per_source: dict[str, dict[str, float]] = field(default_factory=dict)

    def mean(self) -> dict[str, float]:
        names = next(iter(self.folds.values())).keys()
        return {n: float(np.mean([f[n] for f in self.folds.values()])) for n in names}


def _same_folds(members: dict[str, dict[str, RunPredictions]]) -> tuple[list, list]:
    """(member names, fold names) after checking that every member ran the same folds and, per
    fold, scored the same rows (:func:`check_same_rows`)."""
    names = list(members)
    folds = list(members[names[0]])
    for name in names:
        if list(members[name]) != folds:
            raise ValueError(f"ensemble member {name!r} has folds {list(members[name])}, "
                             f"expected {folds}")
    for fold in folds:
        check_same_rows([members[n][fold] for n in names])
    return names, folds


def cv_ensemble(members: dict[str, dict[str, RunPredictions]],
                rank_weights=None) -> EnsembleCVResult:
    """Ensembles over a CV: ``members[name][fold]`` is that member's run on that fold.

    Each fold's test rows must be disjoint from the other folds' (a k-fold CV); fold ``f``'s
    stack is fit on the members' predictions of the other folds' test rows (out-of-fold for the
    members, and never fold ``f``'s rows)."""
    names, folds = _same_folds(members)
    if len(names) < 2 or len(folds) < 2:
        raise ValueError(f"a CV ensemble needs >= 2 members and >= 2 folds, got members {names} "
                         f"and folds {folds}")
    runs = {f: [members[n][f] for n in names] for f in folds}
    seen: dict = {}
    for fold in folds:
        for row_id in runs[fold][0].ids:
            if row_id in seen:
                raise ValueError(f"row {row_id!r} is in the test split of both {seen[row_id]} "
                                 f"and {fold}: stacking needs disjoint folds (a k-fold CV)")
            seen[row_id] = fold
    matrices = {f: np.column_stack([r.predictions for r in runs[f]]) for f in folds}
    labels = {f: runs[f][0].labels for f in folds}
    result, weights, per_source = {}, {}, {}
    for fold in folds:
        others = [f for f in folds if f != fold]
        stack = fit_stack(np.vstack([matrices[f] for f in others]),
                          np.concatenate([labels[f] for f in others]))
        combined = {"rank": rank_average(matrices[fold], rank_weights),
                    "stack": stack.predict(matrices[fold])}
        scores = {n: spearman(matrices[fold][:, i], labels[fold]) for i, n in enumerate(names)}
        scores.update({m: spearman(p, labels[fold]) for m, p in combined.items()})
        result[fold], weights[fold] = scores, stack
        sources = runs[fold][0].sources
        if sources:
            sources = np.asarray(sources, dtype=object)
            for source in sorted(set(sources.tolist())):
                rows = sources == source
                per_source.setdefault(fold, {})[source] = {
                    **{n: spearman(matrices[fold][rows, i], labels[fold][rows])
                       for i, n in enumerate(names)},
                    **{m: spearman(p[rows], labels[fold][rows]) for m, p in combined.items()}}
    return EnsembleCVResult(result, weights, per_source)


def fit_stack_on_cv(cv_dirs: list[str | os.PathLike]) -> StackResult:
    """Stack weights for an ensemble of final models, fit on all out-of-fold predictions of their
    CVs: ``cv_dirs[m]`` holds member ``m``'s fold runs (``cv-fold-*`` sub-folders)."""
    members = {}
    for directory in cv_dirs:
        folds = sorted(p for p in Path(directory).iterdir()
                       if (p / PREDICTIONS_FILE).is_file())
        if not folds:
            raise FileNotFoundError(f"{directory}: no fold runs with {PREDICTIONS_FILE}")
        members[str(directory)] = {p.name: load_run(p) for p in folds}
    names, folds = _same_folds(members)
    matrix = np.vstack([np.column_stack([members[n][f].predictions for n in names])
                        for f in folds])
    labels = np.concatenate([members[names[0]][f].labels for f in folds])
    return fit_stack(matrix, labels)


def _member_facts(path: Path) -> dict:
    """What a member folder says of itself: encoder kind, conditioning (``semrel_encoder.json``),
    data and score range (``metrics.json``)."""
    config, metrics = path / CONFIG_NAME, path / "metrics.json"
    if not (config.is_file() and metrics.is_file()):
        raise FileNotFoundError(f"ensemble member {path}: not a model folder written by "
                                f"`python -m trainers fit` (needs {CONFIG_NAME} and metrics.json)")
    options, result = json.loads(config.read_text()), json.loads(metrics.read_text())
    return {"encoder": options["kind"], "conditional": options.get("conditional", False),
            "data": result.get("data"), "score_range": tuple(result.get("score_range") or ())}


@dataclass(frozen=True)
class Ensemble:
    """Trained member models combined by ``method`` (``rank`` with optional ``weights``, or
    ``stack`` with ``stack`` weights fit on their CVs' out-of-fold predictions)."""

    members: tuple[str, ...]
    method: str
    score_range: tuple[float, float]
    conditional: bool
    weights: tuple[float, ...] | None = None
    stack: StackResult | None = None

    @classmethod
    def build(cls, members: list[str | os.PathLike], method: str = "rank", *, weights=None,
              cv_dirs: list[str | os.PathLike] | None = None) -> "Ensemble":
        """Check that the members can be combined (same score range and conditioning) and fit
        the stack on ``cv_dirs`` (one CV folder per member, same order) for ``stack``."""
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        paths = [Path(m) for m in members]
        if len(paths) < 2:
            raise ValueError(f"an ensemble needs >= 2 members, got {len(paths)}")
        facts = [_member_facts(p) for p in paths]
        for path, fact in zip(paths[1:], facts[1:]):
            for key in ("score_range", "conditional"):
                if fact[key] != facts[0][key]:
                    raise ValueError(f"ensemble member {path}: its {key.replace('_', ' ')} "
                                     f"{fact[key]} differs from {paths[0]}'s {facts[0][key]}")
        stack = None
        if method == "stack":
            if not cv_dirs or len(cv_dirs) != len(paths):
                raise ValueError("method 'stack' needs one CV folder per member (--cv-dirs), "
                                 "whose out-of-fold predictions fit the weights")
            for path, fact, cv_dir in zip(paths, facts, cv_dirs):
                kinds = {load_run(p).encoder for p in Path(cv_dir).iterdir()
                         if (p / PREDICTIONS_FILE).is_file()}
                if kinds and kinds != {fact["encoder"]}:
                    raise ValueError(f"ensemble member {path} is a {fact['encoder']}-encoder but "
                                     f"its CV {cv_dir} trained {sorted(kinds)}")
            stack = fit_stack_on_cv(cv_dirs)
        elif weights is not None:
            weights = tuple(float(w) for w in _weights(weights, len(paths)))
        return cls(tuple(str(p.resolve()) for p in paths), method,
                   tuple(facts[0]["score_range"]), facts[0]["conditional"], weights, stack)

    def predict(self, sentence1: list[str], sentence2: list[str],
                condition: list[str] | None = None, batch_size: int = 64) -> np.ndarray:
        """The ensemble's scores (label scale for ``stack``; [0, 1] ranks for ``rank``)."""
        if self.conditional and condition is None:
            raise ValueError("this ensemble's members are conditional: give a condition column")
        columns = [PairEncoder.from_pretrained(m).predict(sentence1, sentence2, condition,
                                                          batch_size=batch_size)
                   for m in self.members]
        return combine(self.method, np.column_stack(columns), weights=self.weights,
                       stack=self.stack)

    def save(self, path: str | os.PathLike) -> Path:
        """``semrel_ensemble.json`` and a card (README.md) listing members and weights."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        raw = {"method": self.method, "members": list(self.members),
               "score_range": list(self.score_range), "conditional": self.conditional,
               "weights": self.weights,
               "stack": None if self.stack is None else {
                   "weights": list(self.stack.weights), "intercept": self.stack.intercept,
                   "n_rows": self.stack.n_rows}}
        (path / ENSEMBLE_FILE).write_text(json.dumps(raw, indent=2))
        (path / "README.md").write_text(self.card())
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Ensemble":
        raw = json.loads((Path(path) / ENSEMBLE_FILE).read_text())
        stack = raw.get("stack")
        return cls(tuple(raw["members"]), raw["method"], tuple(raw["score_range"]),
                   raw["conditional"], None if raw["weights"] is None else tuple(raw["weights"]),
                   None if stack is None else StackResult(tuple(stack["weights"]),
                                                          stack["intercept"], stack["n_rows"]))

    def card(self) -> str:
        if self.method == "stack":
            weights = self.stack.weights
            how = (f"linear stack `{self.stack.intercept:+.4f} + Σ w·score`, weights fit by "
                   f"non-negative least squares on {self.stack.n_rows} out-of-fold predictions")
        else:
            weights = self.weights or (1.0,) * len(self.members)
            how = "weighted mean of each member's rank-scaled scores (rank average)"
        rows = "\n".join(f"| `{m}` | {_member_facts(Path(m))['encoder']} | {w:.4f} |"
                         for m, w in zip(self.members, weights))
        return f"""---
tags:
- semrel
- ensemble
- sentence-similarity
---
# Ensemble of {len(self.members)} semrel pair encoders

Combination: {how}. Score range of the members' data: {list(self.score_range)};
conditional: {self.conditional}.

| member | encoder | weight |
|---|---|---|
{rows}

Predict with the semrel code (the members stay in their folders):

```bash
python -m trainers predict --model ENSEMBLE_DIR --dataset DATASET --output preds.json
```
```python
from trainers.ensemble import Ensemble
Ensemble.load("ENSEMBLE_DIR").predict(["a sentence"], ["another sentence"])
```
"""
