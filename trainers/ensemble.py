"""Ensembles of trained pair encoders: a rank average, and a linear stack fit on out-of-fold
predictions only.

* rank average: ``ŝ_i = Σ_m w_m r_m(i) / Σ_m w_m``, ``r_m(i)`` member ``m``'s score of row ``i``
  as a rank in [0, 1]. Against a *reference* (member ``m``'s out-of-fold scores ``R_m``, so a
  pair's score never depends on the other pairs scored with it): the mid-rank quantile
  ``r_m(i) = (#{r ∈ R_m : r < p_m(i)} + #{r ∈ R_m : r ≤ p_m(i)}) / (2 |R_m|)``. Without one:
  ``(rank_m(i) − 1) / (n − 1)``, the average-tie rank among the ``n`` rows scored together.
* stack: ``ŝ_i = b + Σ_m w_m p_m(i)`` with ``w ≥ 0``: non-negative least squares of the labels on
  the members' scores (centred, so the intercept ``b`` is free), fit on out-of-fold predictions --
  Wolpert 1992 "Stacked generalization"; Breiman 1996 "Stacked regressions" (non-negative weights).

In a CV, fold ``f``'s stack weights and rank references are the other folds' test predictions,
whose rows fold ``f``'s test never sees; an ensemble for new data takes them from the members'
whole CVs (or, for a rank average, from each member's own held-out predictions).

Members are run folders written by :func:`trainers.training.fit` (``eval_predictions.json`` says
which data, split, score range and rows they scored); a saved ensemble folder holds copies of them
under ``members/``, so it can be moved whole. Combining runs of different data, folds or score
ranges, or a conditional with an unconditional model, is an error naming the run.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

import numpy as np
from scipy import optimize, stats

from semrel.dataset_scripts.folders import replaced_whole
from semrel.metrics.compare import compare_correlations
from semrel.metrics.errors import ParameterError

from .models import CONFIG_NAME, PairEncoder
from .options import ENSEMBLE_METHODS as METHODS
from .stacking import LEARNERS, LearnedStack, build_learned_stack

PREDICTIONS_FILE = "eval_predictions.json"
ENSEMBLE_FILE = "semrel_ensemble.json"
MEMBERS_DIR = "members"


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


def load_run(path: str | os.PathLike, name: str = PREDICTIONS_FILE) -> RunPredictions:
    """The ``eval_predictions.json`` (or ``name``: ``selection_predictions.json``, the dev
    predictions) of a run folder; ``FileNotFoundError`` naming the folder."""
    file = Path(path) / name
    if not file.is_file():
        raise FileNotFoundError(f"{path}: no {name} (not a run folder written by "
                                "`semrel fit`/`cv`)")
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


def _matrix(predictions, min_rows: int = 2) -> np.ndarray:
    """(n rows, k members) float64; ``ValueError`` for other shapes or non-finite scores."""
    matrix = np.asarray(predictions, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] < min_rows or matrix.shape[1] < 1:
        raise ValueError(f"member predictions must be an (n >= {min_rows} rows, k >= 1 members) "
                         f"array, got shape {matrix.shape}")
    bad = np.argwhere(~np.isfinite(matrix))
    if bad.size:
        raise ValueError(f"member {bad[0][1]} has a non-finite score at row {bad[0][0]}")
    return matrix


def _weights(weights, k: int) -> np.ndarray:
    w = np.ones(k) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (k,) or not np.all(np.isfinite(w)) or (w < 0).any() or w.sum() <= 0:
        raise ParameterError("weights", weights, f"must be {k} finite non-negative numbers with "
                             "a positive sum")
    return w


def quantile_ranks(scores, reference) -> np.ndarray:
    """Mid-rank quantile in [0, 1] of each score among the ``reference`` scores (module
    docstring): ties with the reference count half, so ranks do not depend on tie order."""
    reference = np.sort(np.asarray(reference, dtype=np.float64).reshape(-1))
    if reference.size == 0 or not np.all(np.isfinite(reference)):
        raise ValueError(f"reference scores must be >= 1 finite numbers, got {reference.size} "
                         "values or non-finite ones")
    scores = np.asarray(scores, dtype=np.float64)
    below = np.searchsorted(reference, scores, side="left")
    at_or_below = np.searchsorted(reference, scores, side="right")
    return (below + at_or_below) / (2.0 * reference.size)


def rank_average(predictions, weights=None, reference=None) -> np.ndarray:
    """Weighted mean of the members' scores as ranks in [0, 1] (module docstring): quantiles
    among ``reference[m]`` (member m's out-of-fold scores) when given, else ranks among the rows
    (which then must be >= 2)."""
    if reference is None:
        matrix = _matrix(predictions)
        ranks = (stats.rankdata(matrix, axis=0) - 1.0) / (matrix.shape[0] - 1)
    else:
        matrix = _matrix(predictions, min_rows=1)
        if len(reference) != matrix.shape[1]:
            raise ValueError(f"{matrix.shape[1]} members but {len(reference)} reference score "
                             "sets (one per member)")
        ranks = np.column_stack([quantile_ranks(matrix[:, m], r) for m, r in enumerate(reference)])
    w = _weights(weights, matrix.shape[1])
    return ranks @ w / w.sum()


@dataclass(frozen=True)
class StackResult:
    """Non-negative linear stack ``b + Σ w_m p_m``, fit on ``n_rows`` out-of-fold rows."""

    weights: tuple[float, ...]
    intercept: float
    n_rows: int

    def predict(self, predictions) -> np.ndarray:
        matrix = _matrix(predictions, min_rows=1)
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


def combine(method: str, predictions, *, weights=None, stack: StackResult | None = None,
            reference=None):
    """``rank``: :func:`rank_average` (``weights``, ``reference`` optional); ``stack``:
    ``stack.predict``."""
    if method == "rank":
        return rank_average(predictions, weights, reference)
    if method == "stack":
        if stack is None:
            raise ParameterError("stack", None, "must be given for method 'stack': weights fit "
                                 "on out-of-fold predictions")
        return stack.predict(predictions)
    raise ParameterError("method", method, f"must be one of {METHODS}")


def spearman(predictions, labels) -> float:
    return float(stats.spearmanr(predictions, labels).statistic)


@dataclass(frozen=True)
class EnsembleCVResult:
    """Per fold, the Spearman ρ of each member and of each ensemble (``rank``, ``stack``); the
    stack weights used on each fold (fit on the other folds' test predictions, which are also
    the rank average's reference). ``comparisons[method][member]``: is the ensemble's gain over
    the member more than noise? :func:`semrel.metrics.compare.compare_correlations` (Williams'
    test; paired bootstrap of the Spearman difference, its interval and p-value) on the
    out-of-fold predictions of all folds pooled (every row scored once, by models that never
    saw it); ``{"error": ...}`` where the test cannot run (too few rows, constant scores)."""

    folds: dict[str, dict[str, float]]
    stack_weights: dict[str, StackResult]
    per_source: dict[str, dict[str, float]] = field(default_factory=dict)
    comparisons: dict[str, dict[str, dict]] = field(default_factory=dict)

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
    stack is fit on, and its rank average ranks against, the members' predictions of the other
    folds' test rows (out-of-fold for the members, never fold ``f``'s rows) -- as an ensemble of
    final models does with the whole CV."""
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
    result, weights, per_source, pooled = {}, {}, {}, {}
    for fold in folds:
        others = np.vstack([matrices[f] for f in folds if f != fold])
        stack = fit_stack(others, np.concatenate([labels[f] for f in folds if f != fold]))
        combined = {"rank": rank_average(matrices[fold], rank_weights, reference=others.T),
                    "stack": stack.predict(matrices[fold])}
        for method, p in combined.items():
            pooled.setdefault(method, []).append(p)
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
    gold = np.concatenate([labels[f] for f in folds])
    member_oof = {n: np.concatenate([matrices[f][:, i] for f in folds]) for i, n in enumerate(names)}
    comparisons = {method: {n: _compare(np.concatenate(p), member_oof[n], gold) for n in names}
                   for method, p in pooled.items()}
    return EnsembleCVResult(result, weights, per_source, comparisons)


def _compare(ensemble, member, labels) -> dict:
    """The ensemble against one member on pooled out-of-fold predictions (see EnsembleCVResult)."""
    try:
        return compare_correlations(ensemble, member, labels).as_dict()
    except ValueError as exc:  # few rows or constant scores: said, not dropped
        return {"error": str(exc)}


def cv_predictions(cv_dirs: list[str | os.PathLike]) -> tuple[np.ndarray, np.ndarray]:
    """All out-of-fold predictions of the members' CVs, (rows, members), and their labels:
    ``cv_dirs[m]`` holds member ``m``'s fold runs (``cv-fold-*`` sub-folders), all on the same
    folds and rows."""
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
    return matrix, np.concatenate([members[names[0]][f].labels for f in folds])


def _member_facts(path: Path) -> dict:
    """What a member folder says of itself: encoder kind, conditioning (``semrel_encoder.json``),
    data and score range (``metrics.json``)."""
    config, metrics = path / CONFIG_NAME, path / "metrics.json"
    if not (config.is_file() and metrics.is_file()):
        raise FileNotFoundError(f"ensemble member {path}: not a model folder written by "
                                f"`semrel fit` (needs {CONFIG_NAME} and metrics.json)")
    from .folders import check_encoder_folder  # whole: config, weights, kind, metrics

    check_encoder_folder(path, "members", written_by_fit=True)
    options, result = json.loads(config.read_text()), json.loads(metrics.read_text())
    return {"encoder": options["kind"], "conditional": options.get("conditional", False),
            "data": result.get("data"), "score_range": tuple(result.get("score_range") or ())}


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
        member's own held-out predictions (its ``eval_predictions.json``). ``ridge`` and
        ``gbm`` fit a learned stack (:func:`~trainers.stacking.build_learned_stack`, with the
        lexical ``features``) on the CVs' out-of-fold predictions or, without ``cv_dirs``, on the
        members' dev predictions."""
        if method not in METHODS:
            raise ParameterError("method", method, f"must be one of {METHODS}")
        paths = [Path(m) for m in members]
        if len(paths) < 2:
            raise ParameterError("members", [str(p) for p in paths], "must be >= 2 model folders")
        facts = [_member_facts(p) for p in paths]
        for path, fact in zip(paths[1:], facts[1:], strict=True):
            for key in ("score_range", "conditional"):
                if fact[key] != facts[0][key]:
                    raise ValueError(f"ensemble member {path}: its {key.replace('_', ' ')} "
                                     f"{fact[key]} differs from {paths[0]}'s {facts[0][key]}")
        if method in LEARNERS:
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
                kinds = {load_run(p).encoder for p in Path(cv_dir).iterdir()
                         if (p / PREDICTIONS_FILE).is_file()}
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
                weights = tuple(float(w) for w in _weights(weights, len(paths)))
            columns = oof[0].T if oof is not None else [_held_out_scores(p) for p in paths]
            reference = tuple(tuple(np.sort(c).tolist()) for c in columns)
        return cls(tuple(str(p.resolve()) for p in paths), method,
                   tuple(facts[0]["score_range"]), facts[0]["conditional"], weights, stack,
                   reference)

    def predict(self, sentence1: list[str], sentence2: list[str],
                condition: list[str] | None = None, batch_size: int = 64) -> np.ndarray:
        """One score per pair (stack: on the label scale [0, 1], never clipped; rank: a weighted
        quantile in [0, 1]), whatever else is scored with it (a ``rank`` folder saved before
        references existed ranks among the given pairs)."""
        if self.conditional and condition is None:
            raise ValueError("this ensemble's members are conditional: give a condition column")
        columns = [encoder.predict(sentence1, sentence2, condition, batch_size=batch_size)
                   for encoder in self.encoders]
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
        without checkpoints), ``semrel_ensemble.json`` naming them relative to the folder, and a
        card. Written beside ``path`` and swapped in whole, so a failure leaves an earlier
        ensemble there intact; a folder that holds something else is refused."""
        path = Path(path)
        if path.exists() and not (path / ENSEMBLE_FILE).is_file() and (
                not path.is_dir() or any(path.iterdir())):
            raise ParameterError("path", str(path), f"not empty and holds no ensemble (no "
                                 f"{ENSEMBLE_FILE}); choose an empty or new folder")
        with replaced_whole(path) as staging:
            names = []
            for i, member in enumerate(self.members):
                names.append(f"{MEMBERS_DIR}/{i}-{Path(member).name}")
                shutil.copytree(member, staging / names[-1],
                                ignore=shutil.ignore_patterns("checkpoints"))
            saved = replace(self, members=tuple(names))
            raw = {"method": self.method, "members": names,
                   "score_range": list(self.score_range), "conditional": self.conditional,
                   "weights": self.weights,
                   "stack": None if self.stack is None else {
                       "weights": list(self.stack.weights), "intercept": self.stack.intercept,
                       "n_rows": self.stack.n_rows},
                   "reference": None if self.reference is None else [list(r) for r in
                                                                      self.reference]}
            if self.learned is not None:  # ridge, gbm (rank/stack folders as before)
                raw["learned"] = self.learned.to_json()
            (staging / ENSEMBLE_FILE).write_text(json.dumps(raw, indent=1))
            (staging / "README.md").write_text(saved.card(staging))
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> Ensemble:
        """An ensemble folder written by :meth:`save`; member paths resolve inside it."""
        path = Path(path)
        raw = json.loads((path / ENSEMBLE_FILE).read_text())
        stack, reference, learned = raw.get("stack"), raw.get("reference"), raw.get("learned")
        return cls(tuple(str((path / m).resolve()) for m in raw["members"]), raw["method"],
                   tuple(raw["score_range"]), raw["conditional"],
                   None if raw["weights"] is None else tuple(raw["weights"]),
                   None if stack is None else StackResult(tuple(stack["weights"]),
                                                          stack["intercept"], stack["n_rows"]),
                   None if reference is None else tuple(tuple(r) for r in reference),
                   None if learned is None else LearnedStack.from_json(learned))

    def card(self, base: Path) -> str:
        """The model card; ``base`` is the folder the (relative) member paths are in."""
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
        rows = "\n".join(f"| `{m}` | {_member_facts(base / m)['encoder']} | {w:.4f} |"
                         for m, w in zip(self.members, weights, strict=True))
        return f"""---
tags:
- semrel
- ensemble
- sentence-similarity
---
# Ensemble of {len(self.members)} semrel pair encoders

Combination: {how}. Score range of the members' data: {list(self.score_range)};
conditional: {self.conditional}. The members are in this folder (`{MEMBERS_DIR}/`); scores are on
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


def _held_out_scores(path: Path) -> np.ndarray:
    """A member's predictions on the split it was evaluated on (rank reference without a CV)."""
    if not (path / PREDICTIONS_FILE).is_file():
        raise ParameterError("cv_dirs", None, f"must be given: ensemble member {path} has no "
                             f"held-out predictions (no {PREDICTIONS_FILE}: trained without a "
                             "test split) for a rank average to rank its scores against; one CV "
                             "folder per member, whose out-of-fold predictions serve")
    return load_run(path).predictions
