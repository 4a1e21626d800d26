"""Run folders saved by an earlier semrel still load, predict, ensemble and resume.

``tests/fixtures/saved_runs`` holds what ``fit``, ``cross_validate_members`` and
``Ensemble.save`` wrote (the JSON, text and card files; weights are not committed) for a tiny
BERT at ``base`` on the toy folds at ``toy-cv``, both given as relative paths, as their
fingerprints record them:

* ``run``: a bi-encoder fit on ``toy-cv/cv-fold-0`` (seed 3, 2 steps, a checkpoint each step);
* ``cv/bi``, ``cv/cross``: a bi- and a cross-encoder CV over both folds (2 steps each);
* ``ensemble-rank``, ``ensemble-stack``, ``ensemble-ridge``: the fold-0 members combined with
  the CVs' out-of-fold predictions.

The fixture rebuilds the base model, the data and every weights file (a fresh model of the kind
each ``semrel_encoder.json`` names) beside the saved files. The figures below come from the saved
predictions alone, so they are the same whatever the weights.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from semrel.cli import main
from semrel.dataset_scripts.pairs import load_pairs
from semrel.metrics.errors import ParameterError
from semrel.trainers.arguments import recorded_options, stored_options
from semrel.trainers.combination import cv_ensemble, cv_predictions
from semrel.trainers.ensemble import Ensemble
from semrel.trainers.fitting import fit, run_fingerprint
from semrel.trainers.models import PairEncoder
from semrel.trainers.prediction import predict
from semrel.trainers.run_folder import (
    check_cv_folder,
    check_output,
    check_run_folder,
    last_complete_checkpoint,
    load_run,
    recorded_score_range,
)
from trainer_fixtures import saved_runs, small_args

FOLDS = ("cv-fold-0", "cv-fold-1")
MEMBERS = ("ensemble-rank/members/0-cv-fold-0", "ensemble-rank/members/1-cv-fold-0")
RUN_ARGS = {"save_strategy": "steps", "save_steps": 1, "seed": 3}  # what saved `run`


@pytest.fixture
def saved(tmp_path_factory, monkeypatch):
    root = saved_runs(tmp_path_factory.mktemp("saved-runs"))
    monkeypatch.chdir(root)  # the runs name their model and data relative to here
    return root


def test_saved_folders_pass_the_checks_and_load(saved):
    for folder in ("run", *(f"cv/{m}/{f}" for m in ("bi", "cross") for f in FOLDS), *MEMBERS):
        check_run_folder(folder, written_by_fit=True)
        assert PairEncoder.from_pretrained(folder).kind == ("cross" if "cross" in folder or
                                                            folder.startswith(MEMBERS[1]) else "bi")
        assert recorded_score_range(folder) == ((0.0, 1.0), "metrics.json")
    for kind in ("rank", "stack", "ridge"):
        check_run_folder(f"ensemble-{kind}")
        assert recorded_score_range(f"ensemble-{kind}") == ((0.0, 1.0), "semrel_ensemble.json")
        assert Ensemble.load(f"ensemble-{kind}").method == kind
    for member in ("bi", "cross"):
        check_cv_folder(f"cv/{member}")
    run = load_run("run")
    assert (run.data, run.split, run.encoder, len(run.ids)) == ("toy-cv/cv-fold-0", "test", "bi", 16)


def test_saved_runs_and_ensembles_predict(saved):
    data = load_pairs("toy-cv", "cv-fold-1")
    for model in ("run", "ensemble-rank", "ensemble-stack"):
        scores = predict(model, data, "test")
        assert scores.shape == (16,) and np.isfinite(scores).all()
    with pytest.raises(ParameterError, match="the learned stack was fit on toy-cv/cv-fold-1/test"):
        predict("ensemble-ridge", data, "test")  # fit on both folds' out-of-fold rows


def test_saved_cv_predictions_give_the_same_ensembles(saved):
    runs = {m: {f: load_run(f"cv/{m}/{f}") for f in FOLDS} for m in ("bi", "cross")}
    result = cv_ensemble(runs)
    assert result.folds == {
        "cv-fold-0": {"bi": 0.6581451817144176, "cross": -0.36563621206356534,
                      "rank": 0.7025399288487936, "stack": 0.6581451817144176},
        "cv-fold-1": {"bi": 0.4782867026529595, "cross": -0.12298800925361815,
                      "rank": 0.49897236085859464, "stack": 0.5056173713759858}}
    assert result.stack_weights["cv-fold-1"].weights == pytest.approx((2.1680212852117102,
                                                                       4390.015966362126))
    comparison = result.comparisons["rank"]["cross"]
    assert (comparison["spearman_difference"], comparison["spearman_p_value"]) == pytest.approx(
        (0.40977033148929776, 0.013986013986013986))
    matrix, labels = cv_predictions(["cv/bi", "cv/cross"])
    assert matrix.shape == (32, 2) and float(labels.sum()) == 6.0
    for kind in ("rank", "stack", "ridge"):
        built = Ensemble.build(MEMBERS, kind, cv_dirs=["cv/bi", "cv/cross"])
        loaded = Ensemble.load(f"ensemble-{kind}")
        assert (built.stack, built.reference, built.weights) == (loaded.stack, loaded.reference,
                                                                 loaded.weights)
        assert (built.learned is None) == (loaded.learned is None)
        if built.learned is not None:
            assert built.learned.fit_on == loaded.learned.fit_on
            for key, value in loaded.learned.state.items():
                assert built.learned.state[key] == pytest.approx(value)
    assert Ensemble.load("ensemble-stack").stack.weights == pytest.approx((1.6447633261111363, 0.0))


def test_saved_fingerprints_are_the_runs_of_today(saved):
    """The fingerprint a run saved is the one the same arguments give now: resuming checks it."""
    data = load_pairs("toy-cv", "cv-fold-0")
    run = run_fingerprint(data, "base", small_args("run", **RUN_ARGS))
    check_output(Path("run"), run, resume="last", as_recorded=stored_options)
    with pytest.raises(ParameterError, match="holds another run"):
        check_output(Path("run"), run_fingerprint(data, "base", small_args("run", seed=4)),
                     resume="last", as_recorded=stored_options)
    with pytest.raises(ParameterError, match="already holds a run"):
        check_output(Path("run"), run)
    cv_run = {"cv": "cv", "data": "toy-cv", "model": "base",
              "options": recorded_options(small_args("cv/bi", encoder="bi"))}
    check_output(Path("cv/bi"), cv_run, resume=True, as_recorded=stored_options)
    assert last_complete_checkpoint(Path("run/checkpoints")).name == "checkpoint-2"


@pytest.mark.slow  # trains (no step: the saved run ended at its last checkpoint)
def test_a_saved_run_resumes_from_its_last_checkpoint(saved, capsys):
    result = fit(load_pairs("toy-cv", "cv-fold-0"), "base", small_args("run", **RUN_ARGS),
                 resume_from_checkpoint="last")
    assert result.spearman is not None and Path("run/metrics.json").is_file()
    argv = ["fit", "--dataset", "toy-cv", "--config", "cv-fold-0", "--model", "base", "--output",
            "run", "--max-steps", "2", "--batch-size", "8", "--learning-rate", "0.003",
            "--warmup", "0", "--seed", "3", "--save-steps", "1", "--resume", "last"]
    assert main(argv) == 0
    assert main([*argv[:-4], "--seed", "4", "--save-steps", "1", "--resume", "last"]) == 2
    assert "--resume last: run holds another run" in capsys.readouterr().err


@pytest.mark.slow  # trains 3 steps
def test_save_steps_keeps_only_the_latest_checkpoint(saved):
    argv = ["fit", "--dataset", "toy-cv", "--config", "cv-fold-0", "--model", "base", "--output", "fresh",
            "--max-steps", "3", "--batch-size", "8", "--warmup", "0", "--save-steps", "1"]
    assert main(argv) == 0
    assert [p.name for p in Path("fresh/checkpoints").glob("checkpoint-*")] == ["checkpoint-3"]
    assert last_complete_checkpoint(Path("fresh/checkpoints")).name == "checkpoint-3"
