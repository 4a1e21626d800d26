"""How ensembles combine their members' scores: a rank average, and a linear stack fit on
out-of-fold predictions only; and their evaluation over a CV.

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

The members' predictions are :class:`~trainers.run_folder.RunPredictions`; combining runs of
different data, folds or score ranges, or a conditional with an unconditional model, is an error
naming the run. :class:`~trainers.ensemble.Ensemble` is the folder of trained members combined so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, stats

from semrel.metrics.compare import compare_correlations
from semrel.metrics.errors import ParameterError

from .options import ENSEMBLE_METHODS as METHODS
from .run_folder import RunPredictions, read_cvs, same_folds


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


def check_weights(weights, k: int) -> np.ndarray:
    """``weights`` of ``k`` members (all 1 when None): finite, non-negative, a positive sum."""
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
        w = check_weights(weights, matrix.shape[1])
        # ranks (half-integers) are averaged before they are scaled: with equal weights the sums
        # are exact, so rows whose rank sums tie stay tied on every machine
        return ((stats.rankdata(matrix, axis=0) @ w) / w.sum() - 1.0) / (matrix.shape[0] - 1)
    matrix = _matrix(predictions, min_rows=1)
    if len(reference) != matrix.shape[1]:
        raise ValueError(f"{matrix.shape[1]} members but {len(reference)} reference score "
                         "sets (one per member)")
    ranks = np.column_stack([quantile_ranks(matrix[:, m], r) for m, r in enumerate(reference)])
    w = check_weights(weights, matrix.shape[1])
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
    saw it); ``{"error": ...}`` where the test cannot run (too few rows, constant scores).
    ``predictions[fold]``: the fold's test row ids and each ensemble's scores of them, in order."""

    folds: dict[str, dict[str, float]]
    stack_weights: dict[str, StackResult]
    per_source: dict[str, dict[str, float]] = field(default_factory=dict)
    comparisons: dict[str, dict[str, dict]] = field(default_factory=dict)
    predictions: dict[str, tuple[list, dict[str, np.ndarray]]] = field(default_factory=dict)

    def mean(self) -> dict[str, float]:
        names = next(iter(self.folds.values())).keys()
        return {n: float(np.mean([f[n] for f in self.folds.values()])) for n in names}


def cv_ensemble(members: dict[str, dict[str, RunPredictions]],
                rank_weights=None) -> EnsembleCVResult:
    """Ensembles over a CV: ``members[name][fold]`` is that member's run on that fold.

    Each fold's test rows must be disjoint from the other folds' (a k-fold CV); fold ``f``'s
    stack is fit on, and its rank average ranks against, the members' predictions of the other
    folds' test rows (out-of-fold for the members, never fold ``f``'s rows) -- as an ensemble of
    final models does with the whole CV."""
    names, folds = same_folds(members)
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
    result, weights, per_source, predictions = {}, {}, {}, {}
    for fold in folds:
        others = np.vstack([matrices[f] for f in folds if f != fold])
        stack = fit_stack(others, np.concatenate([labels[f] for f in folds if f != fold]))
        combined = {"rank": rank_average(matrices[fold], rank_weights, reference=others.T),
                    "stack": stack.predict(matrices[fold])}
        predictions[fold] = (list(runs[fold][0].ids), combined)
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
    pooled = {method: np.concatenate([predictions[f][1][method] for f in folds])
              for method in predictions[folds[0]][1]}
    comparisons = {method: {n: _compare(p, member_oof[n], gold) for n in names} for method, p in pooled.items()}
    return EnsembleCVResult(result, weights, per_source, comparisons, predictions)


def _compare(ensemble, member, labels) -> dict:
    """The ensemble against one member on pooled out-of-fold predictions (see EnsembleCVResult)."""
    try:
        return compare_correlations(ensemble, member, labels).as_dict()
    except ValueError as exc:  # few rows or constant scores: said, not dropped
        return {"error": str(exc)}


def cv_predictions(cv_dirs: list[str | os.PathLike]) -> tuple[np.ndarray, np.ndarray]:
    """All out-of-fold predictions of the members' CVs, (rows, members), and their labels:
    ``cv_dirs[m]`` holds member ``m``'s fold runs (``cv-fold-*`` sub-folders), all on the same
    folds and rows (:func:`~trainers.run_folder.read_cvs`)."""
    return fold_matrix(*read_cvs(cv_dirs))


def fold_matrix(members: dict[str, dict[str, RunPredictions]], names: list,
                folds: list) -> tuple[np.ndarray, np.ndarray]:
    """The predictions ``members[name][fold]`` stacked fold after fold, (rows, members in
    ``names``' order), and their labels."""
    matrix = np.vstack([np.column_stack([members[n][f].predictions for n in names])
                        for f in folds])
    return matrix, np.concatenate([members[names[0]][f].labels for f in folds])
