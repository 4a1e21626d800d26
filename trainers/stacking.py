"""A learned stack over ensemble members: a second-level regressor of the gold score on the
members' scores (and, optionally, the pair's lexical overlap), fit on predictions the members made
of pairs they never trained on -- their CVs' out-of-fold predictions or their dev predictions
written by ``fit`` with a dev split -- and never scored on those rows.

    ŝ = g(p_1(x), ..., p_k(x)[, dice(x)][, ridge(x)])

* ``ridge``: g linear, ``b + Σ w_m p_m`` (weights of any sign), L2 penalty chosen by
  leave-one-out CV (``sklearn.linear_model.RidgeCV``); stored as numbers.
* ``gbm``: g a gradient-boosted tree ensemble (``xgboost``, Friedman 2001 "Greedy function
  approximation"; Chen & Guestrin 2016), stored as xgboost's JSON model. The SemEval-2024 Task 1
  English winner stacked fine-tuned encoders and Dice this way (XGBoost).

Features beside the members' scores: ``dice``, the pair's word overlap
(:func:`semrel.metrics.overlap.dice`), and ``char-ridge``, the character n-gram ridge
(:class:`~trainers.lexical.CharNgramRidge`) fit on the members' training pairs -- on a CV, each
fold's ridge on that fold's training pairs, so its column is out-of-fold too -- and stored in the
stack (``char_ridge``), so it scores new pairs without the training data.

Stacking: Wolpert 1992 "Stacked generalization"; Breiman 1996 "Stacked regressions". The rows a
stack was fit on are recorded (data, split, pair ids); scoring it on any of them is refused
(:meth:`LearnedStack.check_scored`), as is stacking members trained on different data. Needs
``scikit-learn`` (``ridge``, ``char-ridge``) or ``xgboost`` (``gbm``): the ``train`` extra.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

import numpy as np

from semrel.metrics.errors import ParameterError

from .options import STACK_FEATURES as FEATURES
from .options import STACK_LEARNERS as LEARNERS
from .run_folder import METRICS, PREDICTIONS, SELECTION, check_same_rows, load_run, read_cvs, read_metrics

RIDGE_ALPHAS = tuple(float(a) for a in np.logspace(-3, 2, 11))
GBM_PARAMS = {"n_estimators": 300, "max_depth": 3, "learning_rate": 0.03, "subsample": 0.8,
              "min_child_weight": 5, "n_jobs": 1}
ID_COLUMNS = ("pair_id", "str_2021_pair_id")  # a pair's ids in the data; any shared one overlaps


def _features(scores, sentence1=None, sentence2=None, features=(), char_ridge=None) -> np.ndarray:
    """(n, k [+ extra]) float64: the members' scores, then each of ``features`` of the pairs;
    ``char_ridge``: the fitted :class:`~trainers.lexical.CharNgramRidge`, or its column already
    computed (an array: out-of-fold on a CV)."""
    matrix = np.asarray(scores, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] < 1 or matrix.shape[1] < 1:
        raise ValueError(f"member scores must be an (n rows, k members) array, got {matrix.shape}")
    bad = np.argwhere(~np.isfinite(matrix))
    if bad.size:
        raise ValueError(f"member {bad[0][1]} has a non-finite score at row {bad[0][0]}")
    columns = [matrix]
    for name in features:
        if name not in FEATURES:
            raise ParameterError("features", name, f"must be one of {FEATURES}")
        if sentence1 is None or sentence2 is None:
            raise ValueError(f"feature {name!r} needs the pairs' sentences")
        if name == "dice":
            from semrel.metrics.overlap import dice

            column = dice(list(sentence1), list(sentence2))
        elif char_ridge is None:
            raise ValueError("feature 'char-ridge' needs the char n-gram ridge fit on the members' "
                             "training pairs")
        elif isinstance(char_ridge, np.ndarray):
            column = char_ridge
        else:
            column = char_ridge.predict(sentence1, sentence2)
        if len(column) != matrix.shape[0]:
            raise ValueError(f"{len(column)} pairs for {matrix.shape[0]} rows of member scores")
        columns.append(np.asarray(column, dtype=np.float64)[:, None])
    return np.hstack(columns)


@dataclass(frozen=True)
class LearnedStack:
    """A fitted stack: ``learner`` (:data:`LEARNERS`), extra ``features``, the fitted ``state``
    (ridge: ``coef``, ``intercept``, ``alpha``; gbm: xgboost's JSON model), ``fit_on``: the
    rows it was fit on, as ``[{"data", "split", "ids"}, ...]`` (one entry per fold or split), and
    with the ``char-ridge`` feature ``char_ridge``: its fitted numbers and the training pairs they
    come from (``data``, ``split``, ``pairs``; :meth:`~trainers.lexical.CharNgramRidge.to_json`)."""

    learner: str
    features: tuple[str, ...]
    n_members: int
    state: dict
    fit_on: list = field(default_factory=list)
    char_ridge: dict | None = None

    @cached_property
    def char_ridge_model(self):
        from .lexical import CharNgramRidge

        return None if self.char_ridge is None else CharNgramRidge.from_json(self.char_ridge)

    @property
    def n_rows(self) -> int:
        return sum(len(part["ids"]) for part in self.fit_on)

    def predict(self, scores, sentence1=None, sentence2=None) -> np.ndarray:
        """ŝ per row (label scale, never clipped) from the members' scores (n, k)."""
        return self.predict_features(_features(scores, sentence1, sentence2, self.features,
                                               self.char_ridge_model))

    def predict_features(self, x: np.ndarray) -> np.ndarray:
        """ŝ per row of the feature matrix (members' scores, then ``features``' columns)."""
        if x.shape[1] != self.n_members + len(self.features):
            raise ValueError(f"the stack has {self.n_members} members, got scores of "
                             f"{x.shape[1] - len(self.features)}")
        if self.learner == "ridge":
            return float(self.state["intercept"]) + x @ np.asarray(self.state["coef"])
        import xgboost

        booster = xgboost.Booster()
        booster.load_model(bytearray(self.state["model"].encode()))
        return booster.predict(xgboost.DMatrix(x)).astype(np.float64)

    def check_scored(self, data: str, split: str, ids) -> None:
        """Refuse scoring rows the stack was fit on: the same data and split, or any shared
        pair id (:data:`ID_COLUMNS`; e.g. SemRel-2024 English train rows name their STR-2021
        pairs)."""
        ids = {str(i) for i in ids if i is not None}
        for part in self.fit_on:
            same = part["data"] == data and part["split"] == split
            shared = ids & {str(i) for i in part["ids"]}
            if same or (shared and part.get("global_ids", True)):
                what = (f"it is {data}/{split}" if same else
                        f"{len(shared)} of its pairs (e.g. {sorted(shared)[0]})")
                raise ParameterError("split", split, f"the learned stack was fit on "
                                     f"{part['data']}/{part['split']} and {what}: scoring a "
                                     "stack on its own fit rows measures nothing; score other "
                                     "data")

    def to_json(self) -> dict:
        char_ridge = {} if self.char_ridge is None else {"char_ridge": self.char_ridge}
        return {"learner": self.learner, "features": list(self.features),
                "n_members": self.n_members, "state": self.state, "fit_on": self.fit_on,
                **char_ridge}

    @classmethod
    def from_json(cls, raw: dict) -> LearnedStack:
        return cls(raw["learner"], tuple(raw["features"]), int(raw["n_members"]), raw["state"],
                   list(raw["fit_on"]), raw.get("char_ridge"))


def fit_learned_stack(scores, labels, *, learner: str = "ridge", fit_on: list,
                      sentence1=None, sentence2=None, features=(), seed: int = 0,
                      char_ridge: CharRidgeFeature | None = None) -> LearnedStack:
    """Fit ``learner`` on the members' out-of-fold or dev ``scores`` (n, k) and gold ``labels``
    (label scale); ``fit_on`` says which rows these are (:class:`LearnedStack`), and must name
    them all. The ``char-ridge`` feature needs ``char_ridge`` (:func:`char_ridge_feature`)."""
    if learner not in LEARNERS:
        raise ParameterError("learner", learner, f"must be one of {LEARNERS}")
    features = tuple(features)
    if ("char-ridge" in features) != (char_ridge is not None):
        raise ValueError("the char-ridge feature and a fitted char n-gram ridge (char_ridge) go "
                         f"together: features {list(features)}, char_ridge "
                         f"{'given' if char_ridge is not None else 'not given'}")
    column = None
    if char_ridge is not None:
        column = char_ridge.column if char_ridge.column is not None else char_ridge.model
    x = _features(scores, sentence1, sentence2, features, column)
    y = np.asarray(labels, dtype=np.float64).reshape(-1)
    if y.shape != (x.shape[0],) or not np.all(np.isfinite(y)):
        raise ValueError(f"labels must be {x.shape[0]} finite numbers, got shape {y.shape}")
    if sum(len(part["ids"]) for part in fit_on) != len(y):
        raise ValueError(f"fit_on names {sum(len(p['ids']) for p in fit_on)} rows, the scores "
                         f"hold {len(y)}: record every row the stack is fit on")
    if x.shape[0] < 10:
        raise ValueError(f"a learned stack needs >= 10 rows to fit on, got {x.shape[0]}")
    k = np.asarray(scores).shape[1]
    if learner == "ridge":
        from sklearn.linear_model import RidgeCV

        model = RidgeCV(alphas=RIDGE_ALPHAS).fit(x, y)
        state = {"coef": [float(c) for c in model.coef_], "intercept": float(model.intercept_),
                 "alpha": float(model.alpha_)}
    else:
        try:
            import xgboost
        except ImportError:
            raise ImportError("learner 'gbm' needs xgboost: pip install 'xgboost-cpu>=2' (or "
                              "the train extra)") from None
        model = xgboost.XGBRegressor(**GBM_PARAMS, random_state=seed).fit(x, y)
        state = {"model": bytes(model.get_booster().save_raw("json")).decode(),
                 "params": {**GBM_PARAMS, "random_state": seed}}
    return LearnedStack(learner, features, k, state, [dict(part) for part in fit_on],
                        None if char_ridge is None else char_ridge.to_json())


def fit_rows(run) -> dict:
    """``fit_on`` entry for the rows of one member's predictions (a
    :class:`~trainers.run_folder.RunPredictions`)."""
    return {"data": run.data, "split": run.split, "ids": [str(i) for i in run.ids],
            "global_ids": not all(isinstance(i, int) for i in run.ids)}  # row numbers are local


def training_data(paths) -> str:
    """The data every member was trained on (its run's recorded ``data``); members trained on
    different data (another dataset, config or fold) are a ValueError naming the first."""
    seen = {}
    for path in paths:
        if not (Path(path) / METRICS).is_file():
            raise FileNotFoundError(f"ensemble member {path}: no {METRICS} (not a run folder "
                                    "written by `semrel fit`)")
        seen[str(path)] = read_metrics(path, "members").get("data")
    first, data = next(iter(seen.items()))
    for path, other in seen.items():
        if other != data:
            raise ValueError(f"ensemble member {path} was trained on {other}, {first} on {data}: "
                             "a learned stack combines members trained on the same data")
    return data


def pair_texts(run, name: str) -> tuple[list[str], list[str]]:
    """The sentences of the rows a member's predictions (``run``, read from file ``name``) score:
    as the file records them (dev predictions do), else loaded again by the registry data name
    it records (``dataset/config``), checked against its ids."""
    from semrel.dataset_scripts.pairs import load_pairs
    from semrel.dataset_scripts.registry import REGISTRY

    if run.sentence1 is not None and run.sentence2 is not None:
        return list(run.sentence1), list(run.sentence2)
    dataset, _, config = run.data.rpartition("/")
    if dataset not in REGISTRY:
        raise ValueError(f"{run.path}: {name} records no sentences and {run.data} is not a "
                         "registry dataset to load them from, for the pairs' lexical features")
    rows = load_pairs(dataset, config).splits[run.split]
    if [str(i) for i in rows["pair_id"]] != [str(i) for i in run.ids]:
        raise ValueError(f"{run.path}: the rows of {run.data}/{run.split} are not the ones it "
                         "scored (pair ids differ)")
    return list(rows["sentence1"]), list(rows["sentence2"])


@dataclass(frozen=True)
class CharRidgeFeature:
    """The ``char-ridge`` feature of a stack: the ridge fit on the members' training pairs
    (``data``'s ``split``, ``pairs`` of them) and, on a CV, its column over the stack's fit rows
    (each fold's rows scored by that fold's ridge); without ``column`` the model scores them."""

    model: object  # trainers.lexical.CharNgramRidge
    data: str
    split: str
    pairs: int
    column: np.ndarray | None = None

    def to_json(self) -> dict:
        return {"data": self.data, "split": self.split, "pairs": self.pairs, **self.model.to_json()}


def char_ridge_feature(data: str, split: str = "train") -> CharRidgeFeature:
    """The char n-gram ridge fit on ``split`` of the registry data named ``data``
    (``dataset/config``, as a run records what it trained on), on the label scale [0, 1]."""
    from semrel.dataset_scripts.pairs import load_pairs
    from semrel.dataset_scripts.registry import REGISTRY

    from .lexical import CharNgramRidge

    dataset, _, config = data.rpartition("/")
    if dataset not in REGISTRY:
        raise ValueError(f"the char-ridge feature fits on the members' training pairs, and {data} "
                         "is not a registry dataset to load them from")
    pairs = load_pairs(dataset, config)
    rows = pairs.splits[split]
    lo, hi = pairs.score_range
    labels = (np.asarray(rows["score"], dtype=np.float64) - lo) / (hi - lo)
    model = CharNgramRidge.fit(rows["sentence1"], rows["sentence2"], labels)
    return CharRidgeFeature(model, data, split, len(labels))


@dataclass(frozen=True)
class StackInputs:
    """What a learned stack is fit on: the members' scores (n, k), the gold labels, the rows'
    sentences (with features), ``fit_on`` and the ``char-ridge`` feature when asked for."""

    scores: np.ndarray
    labels: np.ndarray
    sentence1: list[str] | None
    sentence2: list[str] | None
    fit_on: list
    char_ridge: CharRidgeFeature | None = None


def stack_inputs(paths, *, cv_dirs=None, features=(),
                 selection_file: str | os.PathLike | None = None) -> StackInputs:
    """The rows a stack over the run folders ``paths`` is fit on: their CVs' out-of-fold
    predictions (``cv_dirs``, one per member, same folds) or, without them, each member's dev
    predictions (written by ``fit`` with a dev split). Members trained on different data, or
    predictions of different rows, are refused."""
    trained_on = training_data(paths)
    if cv_dirs:
        members, names, folds = read_cvs(cv_dirs)
        fold_data = [training_data([Path(n) / f for n in names]) for f in folds]  # per fold, one
        runs = [[members[n][f] for n in names] for f in folds]
        name = PREDICTIONS
    else:
        name = selection_file or SELECTION
        missing = [str(p) for p in paths if not (Path(p) / name).is_file()]
        if missing:
            raise ParameterError("cv_dirs", None, f"must be given: ensemble member {missing[0]} "
                                 f"has no {name} (dev predictions: fit it with a dev split, "
                                 "--eval-dataset) to fit the stack on")
        runs = [[load_run(p, name) for p in paths]]
        fold_data = None
        check_same_rows(runs[0])
    scores = np.vstack([np.column_stack([r.predictions for r in part]) for part in runs])
    labels = np.concatenate([part[0].labels for part in runs])
    texts = [pair_texts(part[0], name) for part in runs] if features else []
    s1 = [t for a, _ in texts for t in a] or None
    s2 = [t for _, b in texts for t in b] or None
    char_ridge = None
    if "char-ridge" in features:
        char_ridge = char_ridge_feature(trained_on)
        if fold_data is not None:  # each fold's rows by the ridge of that fold's training pairs
            column = np.concatenate([char_ridge_feature(d).model.predict(a, b)
                                     for d, (a, b) in zip(fold_data, texts, strict=True)])
            char_ridge = replace(char_ridge, column=column)
    return StackInputs(scores, labels, s1, s2, [fit_rows(part[0]) for part in runs], char_ridge)


def build_learned_stack(paths, learner: str, *, cv_dirs=None, features=(), seed: int = 0,
                        selection_file: str | os.PathLike | None = None) -> LearnedStack:
    """A stack over the run folders ``paths`` fit on :func:`stack_inputs`."""
    rows = stack_inputs(paths, cv_dirs=cv_dirs, features=features, selection_file=selection_file)
    return fit_learned_stack(rows.scores, rows.labels, learner=learner, seed=seed,
                             features=features, fit_on=rows.fit_on, sentence1=rows.sentence1,
                             sentence2=rows.sentence2, char_ridge=rows.char_ridge)


def cross_fitted(rows: StackInputs, learner: str, *, features=(), folds: int = 5,
                 seed: int = 0) -> np.ndarray:
    """Predictions of each of ``rows`` by a stack fit on the others: ``folds`` shuffled folds
    (``sklearn.model_selection.KFold``, ``seed``), each scored by the stack fit on the rest. Its
    Spearman says how the stack does on rows it was not fit on, where the stack fit on all
    ``rows`` cannot be scored (a stack's figure on its own fit rows measures nothing)."""
    from sklearn.model_selection import KFold

    n = len(rows.labels)
    if not 2 <= folds <= n:
        raise ParameterError("folds", folds, f"must be an integer from 2 to the {n} rows")
    predicted = np.empty(n)
    column = None if rows.char_ridge is None else (
        rows.char_ridge.column if rows.char_ridge.column is not None
        else rows.char_ridge.model.predict(rows.sentence1, rows.sentence2))

    def part(index, values):
        return None if values is None else [values[i] for i in index]

    for fit, held in KFold(folds, shuffle=True, random_state=seed).split(np.arange(n)):
        ridge = None if column is None else replace(rows.char_ridge, column=column[fit])
        stack = fit_learned_stack(rows.scores[fit], rows.labels[fit], learner=learner, seed=seed,
                                  features=features, sentence1=part(fit, rows.sentence1),
                                  sentence2=part(fit, rows.sentence2), char_ridge=ridge,
                                  fit_on=[{"data": "fold", "split": "fit", "ids": [str(i) for i in fit]}])
        x = _features(rows.scores[held], part(held, rows.sentence1), part(held, rows.sentence2),
                      features, None if column is None else column[held])
        predicted[held] = stack.predict_features(x)
    return predicted
