"""An ensemble folder: member models combined by a rank average, a linear stack or a learned
stack (the math: :mod:`~trainers.combination`, :mod:`~trainers.stacking`).

A member is any model argument (:func:`~trainers.model_ref.resolve_model_ref`). Run folders
written by :func:`~trainers.fitting.fit` say which data, split, score range and rows they scored;
a model semrel did not train (a packaged name, a sentence-transformers bi-encoder or
``CrossEncoder``, a transformers encoder, a Hub model) takes those from them and scores their
rows (:mod:`~trainers.members`). A saved ensemble folder holds copies of the runs and of local
folders, references to packaged and Hub models (:mod:`~trainers.members` says why), and a card
made from the members' facts (:mod:`~trainers.ensemble_card`): it can be moved whole. Combining
runs of different data, folds or score ranges, or a conditional
with an unconditional model, is an error naming the member.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

import numpy as np

from semrel.dataset_scripts.folders import replaced_whole
from semrel.metrics.errors import ParameterError
from semrel.metrics.output_files import check_output

from .card import write_card
from .combination import METHODS, StackResult, check_weights, combine, fit_stack, fold_matrix
from .ensemble_card import ensemble_body, ensemble_metadata, member_cards
from .members import check_conditioning, member_model, resolve_member, saved_name, scored_like
from .model_ref import ModelRef, resolve_model_ref
from .models import PairEncoder
from .run_folder import (
    CHECKPOINTS,
    MEMBERS,
    PREDICTIONS,
    RunPredictions,
    check_ensemble_output,
    check_member_folder,
    check_same_rows,
    cv_folds,
    load_run,
    member_facts,
    read_ensemble,
    same_folds,
    write_ensemble,
)
from .scoring.loader import model_scorer
from .stacking import LEARNERS, LearnedStack, build_learned_stack


@dataclass(frozen=True)
class Ensemble:
    """Member models combined by ``method``: ``rank`` (optional ``weights``; each member's
    scores ranked against its ``reference`` scores) or ``stack`` (weights fit on the members'
    CVs' out-of-fold predictions). ``models``: per member, None for a run of ``semrel fit``, else
    what the model is (:func:`~trainers.members.member_model`); None when every member is a run."""

    members: tuple[str, ...]
    method: str
    score_range: tuple[float, float]
    conditional: bool
    weights: tuple[float, ...] | None = None
    stack: StackResult | None = None
    reference: tuple[tuple[float, ...], ...] | None = None
    learned: LearnedStack | None = None  # methods ridge, gbm
    models: tuple[dict | None, ...] | None = None

    @classmethod
    def build(cls, members: list[str | os.PathLike | ModelRef], method: str = "rank", *,
              weights=None, cv_dirs: list[str | os.PathLike] | None = None,
              features=()) -> Ensemble:
        """Check that the members (model arguments, or resolved :class:`ModelRef`) can be
        combined (same score range and conditioning). With ``cv_dirs`` (one CV folder per member,
        same order) their out-of-fold predictions fit the stack or are the rank references; a
        rank average without them ranks against each member's own held-out predictions (those
        of the split it was evaluated on). ``ridge`` and ``gbm`` fit a learned stack
        (:func:`~trainers.stacking.build_learned_stack`, with the lexical ``features``) on the
        CVs' out-of-fold predictions or, without ``cv_dirs``, on the members' dev predictions.

        A member semrel did not train (:mod:`~trainers.members`) scores the rows of the trained
        members' held-out predictions or, with ``cv_dirs``, of the folds of its CV folder (any
        CV of the data); its scores there are its reference or stack rows. Such members alone
        without ``cv_dirs``, or in a learned stack, are refused.

        Members trained on different data (another dataset, config or fold), and, for a rank
        average without ``cv_dirs``, members evaluated on different rows, are refused; so are
        ``weights`` with another method than ``rank`` and ``features`` with another than
        ``ridge`` or ``gbm`` (they would be ignored)."""
        check_options(method, weights, features)
        refs = [m if isinstance(m, ModelRef) else resolve_model_ref(str(m), parameter="members")
                for m in members]
        if len(refs) < 2:
            raise ParameterError("members", [r.spec for r in refs], "must be >= 2 models")
        fit_runs = [check_member_folder(r.path, r.kind, "members") for r in refs]
        paths = [r.path for r in refs]
        runs = [p for p, fit in zip(paths, fit_runs, strict=True) if fit]
        facts = [member_facts(p) for p in runs]
        _same_facts(runs, facts, ("score_range", "conditional"))
        others = {i: ref for i, (ref, fit) in enumerate(zip(refs, fit_runs, strict=True)) if not fit}
        models = tuple(member_model(r) if i in others else None for i, r in enumerate(refs))
        if others and method in LEARNERS:
            ref = next(iter(others.values()))
            raise ParameterError("members", ref.spec, f"is a {ref.kind} model semrel did not train: a "
                                 f"learned stack ({method}) fits on runs' own dev or CV predictions; "
                                 "combine it by --method rank or stack")
        if others and not runs and not cv_dirs:
            raise ParameterError("members", [r.spec for r in refs], "are all models semrel did not "
                                 "train, with no held-out rows to rank their scores against: add a "
                                 "member trained by `semrel fit` (its held-out rows are scored by "
                                 "every member) or one CV folder per member (cv_dirs; its folds' "
                                 "rows are scored)")
        if method in LEARNERS:  # the members' data: checked by build_learned_stack
            return cls(tuple(str(p.resolve()) for p in paths), method,
                       tuple(facts[0]["score_range"]), facts[0]["conditional"],
                       learned=build_learned_stack(paths, method, cv_dirs=cv_dirs,
                                                   features=features))
        scorers = {i: model_scorer(ref, parameter="members") for i, ref in others.items()}
        try:  # the scorers of the members semrel did not train: their units cached on disk
            oof = None
            if cv_dirs:
                oof, first = _cv_predictions(refs, fit_runs, cv_dirs, scorers)
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
                if oof is None:
                    held_out = _held_out_scores(runs)
                    first = held_out[0]
                    loaded: dict = {}
                    for i, ref in others.items():
                        check_conditioning(ref, scorers[i], first.conditional, first.path)
                    by_member = iter(held_out)
                    columns = [scored_like(ref, scorers[i], first, loaded).predictions if i in others
                               else next(by_member).predictions for i, ref in enumerate(refs)]
                else:
                    columns = oof[0].T
                reference = tuple(tuple(np.sort(c).tolist()) for c in columns)
        finally:
            for scorer in scorers.values():
                scorer.close()
        _same_facts(runs, facts, ("data",))  # after the predictions', which say more
        score_range = facts[0]["score_range"] if facts else first.score_range
        conditional = facts[0]["conditional"] if facts else first.conditional
        return cls(tuple(str(p.resolve()) for p in paths), method, tuple(score_range), conditional,
                   weights, stack, reference, models=models if others else None)

    def predict(self, sentence1: list[str], sentence2: list[str],
                condition: list[str] | None = None, batch_size: int = 64) -> np.ndarray:
        """One score per pair (stack: on the label scale [0, 1], never clipped; rank: a weighted
        quantile in [0, 1] among its references, whatever else is scored with it; a ``rank``
        folder without references ranks among the given pairs)."""
        if self.conditional and condition is None:
            raise ValueError("this ensemble's members are conditional: give a condition column")
        columns = [model.predict(sentence1, sentence2, condition, batch_size=batch_size)
                   if isinstance(model, PairEncoder) else
                   model.score(sentence1, sentence2, condition if model.conditional else None)
                   for model in self.encoders]
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

    @property
    def refs(self) -> list[ModelRef]:
        """Each member as a resolved model: a run of ``semrel fit`` (kind ``semrel``), else of
        the kind its record says."""
        models = self.models or (None,) * len(self.members)
        return [ModelRef(m, Path(m), "semrel") if model is None else
                ModelRef(m, Path(m), model["kind"], model["revision"], model["hub_id"])
                for m, model in zip(self.members, models, strict=True)]

    @cached_property
    def encoders(self) -> list:
        """The members, loaded once (on the first :meth:`predict`) and kept for later calls: a
        run as its :class:`PairEncoder`, another model as its scorer
        (:func:`~trainers.scoring.loader.model_scorer`, in memory)."""
        return [PairEncoder.from_pretrained(ref.path) if model is None else
                model_scorer(ref, cache_dir=None, parameter="model_path")
                for ref, model in zip(self.refs, self.models or (None,) * len(self.members), strict=True)]

    def save(self, path: str | os.PathLike) -> Path:
        """A folder that holds everything: copies of the runs and of local model folders
        (``members/<i>-<name>``, without checkpoints), the ensemble file naming them relative to
        the folder (packaged and Hub members by name and commit: :mod:`~trainers.members`), and
        a card. Written beside ``path`` and swapped in whole, so a failure leaves an earlier
        ensemble there intact; a folder that holds something else, a link, or a folder that
        is, lies in or holds a member is refused
        (:func:`~semrel.metrics.output_files.check_output`)."""
        path, models = Path(path), self.models or (None,) * len(self.members)
        check_ensemble_output(path)
        check_output(path, "path", {"members": self.members}, folder=True)
        metadata, note = ensemble_metadata(member_cards(self.members, models), self.conditional)
        with replaced_whole(path) as staging:
            names = []
            for i, (member, model) in enumerate(zip(self.members, models, strict=True)):
                if model is not None and model["source"] != "folder":
                    names.append(saved_name(model))
                    continue
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
            if self.models is not None:  # a copied folder by its name, never a path of this machine
                raw["models"] = [m if m is None or m["source"] != "folder" else {**m, "spec": Path(m["spec"]).name}
                                 for m in self.models]
            write_ensemble(staging, raw)
            write_card(staging, metadata, ensemble_body(saved, staging, path.name, note), "path")
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> Ensemble:
        """An ensemble folder written by :meth:`save`; member paths resolve inside it, packaged
        and Hub members by their name and commit (:func:`~trainers.members.resolve_member`)."""
        path = Path(path)
        raw = read_ensemble(path)
        stack, reference, learned = raw.get("stack"), raw.get("reference"), raw.get("learned")
        models = raw.get("models")
        members = tuple(str((path / m).resolve()) if model is None else
                        str(resolve_member(m, model, path).path)
                        for m, model in zip(raw["members"], models or [None] * len(raw["members"]), strict=True))
        return cls(members, raw["method"],
                   tuple(raw["score_range"]), raw["conditional"],
                   None if raw["weights"] is None else tuple(raw["weights"]),
                   None if stack is None else StackResult(tuple(stack["weights"]),
                                                          stack["intercept"], stack["n_rows"]),
                   None if reference is None else tuple(tuple(r) for r in reference),
                   None if learned is None else LearnedStack.from_json(learned),
                   None if models is None else tuple(models))


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


def _held_out_scores(paths: list[Path]) -> list[RunPredictions]:
    """Each trained member's predictions on the split it was evaluated on (rank references
    without a CV): the same rows of the same data for every member, one score per row."""
    runs = []
    for path in paths:
        if not (path / PREDICTIONS).is_file():
            raise ParameterError("cv_dirs", None, f"must be given: ensemble member {path} has no "
                                 f"held-out predictions (no {PREDICTIONS}: trained without a "
                                 "test split) for a rank average to rank its scores against; one "
                                 "CV folder per member, whose out-of-fold predictions serve")
        runs.append(load_run(path))
    check_same_rows(runs)
    return runs


def _cv_predictions(refs: list[ModelRef], fit_runs: list[bool], cv_dirs, scorers: dict
                    ) -> tuple[tuple[np.ndarray, np.ndarray], RunPredictions]:
    """The out-of-fold predictions of every member, (rows, members) with their labels, and the
    first fold run: a trained member's from its own CV folder, a member semrel did not train
    (``scorers[i]``) scoring the rows of its folder's fold runs; all on the same folds and rows."""
    if len(cv_dirs) != len(refs):
        raise ParameterError("cv_dirs", [str(d) for d in cv_dirs],
                             f"must be one CV folder per member, in the members' order: "
                             f"{len(cv_dirs)} for {len(refs)} members")
    members, loaded = {}, {}
    for i, (ref, fit, cv_dir) in enumerate(zip(refs, fit_runs, cv_dirs, strict=True)):
        folds = {p.name: load_run(p) for p in cv_folds(cv_dir)}
        if not folds:
            raise FileNotFoundError(f"{cv_dir}: no fold runs with {PREDICTIONS}")
        if fit:
            encoder = member_facts(ref.path)["encoder"]
            kinds = {run.encoder for run in folds.values()}
            if kinds != {encoder}:
                raise ValueError(f"ensemble member {ref.path} is a {encoder}-encoder but its CV "
                                 f"{cv_dir} trained {sorted(kinds)}")
            name = str(cv_dir)
        else:
            first = next(iter(folds.values()))
            check_conditioning(ref, scorers[i], first.conditional, first.path)
            folds = {fold: scored_like(ref, scorers[i], run, loaded) for fold, run in folds.items()}
            name = f"{ref.spec} on {cv_dir}"
        members[name if name not in members else f"{name} (member {i + 1})"] = folds
    names, folds = same_folds(members)
    return fold_matrix(members, names, folds), members[names[0]][folds[0]]
