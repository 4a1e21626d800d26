"""Ensemble folders: self-contained folders that predict one pair as in a batch, members that
cannot be combined (other data, folds or rows, a score missing), options a method would ignore, a
run killed while it writes, and stacks built from CV runs; the maths is in
test_ensemble_combination.py."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys

import datasets
import numpy as np
import pytest

import semrel.trainers.ensemble as ensemble_module
from semrel.cli import main
from semrel.dataset_scripts.folders import MARK
from semrel.dataset_scripts.pairs import PairData
from semrel.metrics.errors import ParameterError
from semrel.trainers.combination import rank_average
from semrel.trainers.ensemble import Ensemble
from semrel.trainers.fitting import fit
from semrel.trainers.models import PairEncoder
from semrel.trainers.prediction import predict
from semrel.trainers.run_folder import load_run
from trainer_fixtures import fake_member, small_args, tiny_encoder, toy_pairs


@pytest.fixture(scope="module")
def weights(tmp_path_factory):
    return tiny_encoder(tmp_path_factory.mktemp("tiny-bert"))


def held_out(data="str-2021/cv-fold-0", split="test", n=1100, scored=None, seed=1) -> dict:
    """A member's eval_predictions.json: ``n`` rows of ``data``/``split`` (the same labels for every
    member), ``scored`` of them with a score (default all)."""
    labels = np.random.default_rng(0).random(n)
    scores = labels + np.random.default_rng(seed).normal(0, 0.1, n)
    return {"data": data, "split": split, "score_range": [0.0, 1.0], "encoder": "bi",
            "conditional": False, "ids": [f"p{i}" for i in range(n)],
            "predictions": scores[:scored].tolist(), "labels": labels.tolist(), "sources": None}


MISMATCHED = [  # (case, member b's training data, b's held-out predictions, what is said of b)
    ("trained and evaluated on another fold", "str-2021/cv-fold-1", held_out("str-2021/cv-fold-1"),
     "its data (dataset/config) differs from {a}'s ('str-2021/cv-fold-1' vs 'str-2021/cv-fold-0'); "
     "members must be trained and evaluated on the same fold and score range"),
    ("trained and evaluated on another dataset", "semrel-2024/eng", held_out("semrel-2024/eng"),
     "its data (dataset/config) differs from {a}'s ('semrel-2024/eng' vs 'str-2021/cv-fold-0'); "
     "members must be trained and evaluated on the same fold and score range"),
    ("trained on another fold", "str-2021/cv-fold-1", held_out(),
     "its data str-2021/cv-fold-1 differs from {a}'s str-2021/cv-fold-0"),
    ("trained on another dataset", "semrel-2024/eng", held_out(),
     "its data semrel-2024/eng differs from {a}'s str-2021/cv-fold-0"),
    ("evaluated on another split", "str-2021/cv-fold-0", held_out(split="validation"),
     "its evaluated split differs from {a}'s ('validation' vs 'test'); members must be trained "
     "and evaluated on the same fold and score range"),
    ("evaluated on another fold", "str-2021/cv-fold-0", held_out("str-2021/cv-fold-1"),
     "its data (dataset/config) differs from {a}'s ('str-2021/cv-fold-1' vs 'str-2021/cv-fold-0'); "
     "members must be trained and evaluated on the same fold and score range"),
    ("1,095 predictions for 1,100 ids", "str-2021/cv-fold-0", held_out(scored=1095),
     {"schema": "eval_predictions.json has 1095 predictions for 1100 ids; ids, predictions, labels, "
                "sources, sentence1, sentence2 hold one entry per row"}),  # refused by its file's schema
]


@pytest.mark.parametrize("data, predictions, said", [c[1:] for c in MISMATCHED],
                         ids=[c[0] for c in MISMATCHED])
def test_a_rank_average_refuses_members_of_other_data_or_rows(weights, tmp_path, capsys, data,
                                                              predictions, said):
    """Without CVs a rank average ranks each member against its own held-out predictions: members
    trained or evaluated on other data, or with a score missing, are named with what differs."""
    a = fake_member(tmp_path / "a", weights, "str-2021/cv-fold-0", held_out=held_out(seed=2))
    b = fake_member(tmp_path / "b", weights, data, held_out=predictions)
    if isinstance(said, dict):  # the member folder's check, worded in each door's parameter
        message, line = f"members='{b}': {said['schema']}", f"--member {b}: {said['schema']}"
    else:
        message = line = f"ensemble member {b}: " + said.format(a=a)
    with pytest.raises(ValueError) as refused:
        Ensemble.build([a, b], "rank")
    assert str(refused.value) == message
    assert main(["ensemble", "--method", "rank", "--member", str(a), "--member", str(b),
                 "--output", str(tmp_path / "ens")]) == 2
    assert capsys.readouterr().err == f"semrel ensemble: error: {line}\n"
    assert not (tmp_path / "ens").exists()


def test_a_cv_fold_run_with_a_score_missing_is_named(weights, tmp_path):
    """With CVs the references are the folds' out-of-fold predictions: a fold run holding fewer
    scores than ids is named, never stacked into a matrix of the wrong shape."""
    members, cvs = [], []
    for i, name in enumerate("ab"):
        members.append(fake_member(tmp_path / name, weights, "str-2021/default"))
        cvs.append(tmp_path / f"cv-{name}")
        for fold in range(2):
            short = 1095 if (name, fold) == ("b", 1) else None
            fake_member(cvs[-1] / f"cv-fold-{fold}", weights, f"str-2021/cv-fold-{fold}",
                        held_out=held_out(f"str-2021/cv-fold-{fold}", scored=short, seed=i))
    with pytest.raises(ValueError) as refused:
        Ensemble.build(members, "rank", cv_dirs=cvs)
    assert str(refused.value) == (f"path='{cvs[1]}/cv-fold-1': eval_predictions.json has 1095 predictions "
                                  "for 1100 ids; ids, predictions, labels, sources, sentence1, sentence2 "
                                  "hold one entry per row")


IGNORED = [  # (method, flags the method would ignore, the CLI's line, the Python API's message)
    *[(method, ["--weights", "0.7", "0.3"], {"weights": [0.7, 0.3]},
       f"--weights 0.7 0.3: are for --method rank only ({method} fits how the members combine); "
       "leave them out",
       f"weights=[0.7, 0.3]: are for method rank only ({method} fits how the members combine); "
       "leave them out") for method in ("ridge", "gbm", "stack")],
    *[(method, ["--features", "dice"], {"features": ("dice",)},
       f"--features dice: are for --method ridge or gbm only ({method} combines the members' "
       "scores alone); leave them out",
       f"features=['dice']: are for method ridge or gbm only ({method} combines the members' "
       "scores alone); leave them out") for method in ("rank", "stack")],
]


@pytest.mark.parametrize("method, flags, kwargs, line, message", IGNORED,
                         ids=[f"{c[0]} {c[1][0]}" for c in IGNORED])
def test_an_option_the_method_ignores_is_refused(weights, tmp_path, capsys, method, flags, kwargs,
                                                 line, message):
    a, b = (fake_member(tmp_path / n, weights, "str-2021/cv-fold-0", held_out=held_out(seed=i))
            for i, n in enumerate("ab"))
    with pytest.raises(ParameterError) as refused:
        Ensemble.build([a, b], method, **kwargs)
    assert str(refused.value) == message
    assert main(["ensemble", "--method", method, *flags, "--member", str(a), "--member", str(b),
                 "--output", str(tmp_path / "ens")]) == 2
    assert capsys.readouterr().err == f"semrel ensemble: error: {line}\n"
    assert not (tmp_path / "ens").exists()


KILLED_ENSEMBLE = """
import os, shutil, signal, sys
from semrel.cli import main

copytree = shutil.copytree
def copy_then_die(*args, **kwargs):  # killed with one member copied into the staging folder
    copytree(*args, **kwargs)
    os.kill(os.getpid(), signal.SIGKILL)
shutil.copytree = copy_then_die
main(["ensemble", "--member", sys.argv[1], "--member", sys.argv[2], "--output", sys.argv[3]])
"""


@pytest.mark.slow  # a subprocess that imports torch, twice
@pytest.mark.parametrize("earlier", [False, True], ids=["new folder", "over an earlier ensemble"])
def test_a_killed_ensemble_leaves_nothing_that_the_next_run_keeps(weights, tmp_path, capsys,
                                                                   earlier):
    """``kill -9`` while ``semrel ensemble`` copies its members: the earlier ensemble (if any) is
    whole, and the next run into the same place removes the killed run's staging folder; a
    user's entries named like one stay."""
    a, b = (fake_member(tmp_path / n, weights, "str-2021/cv-fold-0", held_out=held_out(seed=i))
            for i, n in enumerate("ab"))
    out = tmp_path / "out" / "ens"
    argv = ["ensemble", "--member", str(a), "--member", str(b), "--output", str(out)]
    if earlier:
        assert main([*argv, "--weights", "1", "2"]) == 0
    (out.parent / ".ens.new-1").mkdir(parents=True, exist_ok=True)  # a user's folder
    (out.parent / ".ens.new-1" / "mine.txt").write_text("a user's file")
    user = sorted(p.name for p in out.parent.iterdir())
    done = subprocess.run([sys.executable, "-c", KILLED_ENSEMBLE, str(a), str(b), str(out)],
                          capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == -signal.SIGKILL, done.stderr
    left = sorted(set(p.name for p in out.parent.iterdir()) - set(user))
    assert len(left) == 2 and left[1] == left[0] + MARK and left[0].startswith(".ens.new-")
    assert (out.parent / left[0] / "members" / "0-a" / "model.safetensors").is_file()
    if earlier:
        assert Ensemble.load(out).weights == (1.0, 2.0)  # the earlier one, whole
    capsys.readouterr()
    assert main(argv) == 0
    assert sorted(p.name for p in out.parent.iterdir()) == sorted({*user, "ens"})
    assert (out.parent / ".ens.new-1" / "mine.txt").read_text() == "a user's file"
    assert Ensemble.load(out).weights is None


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny bi- and cross-encoder fit on a toy set with a test split, and the data."""
    root = tmp_path_factory.mktemp("ensemble")
    encoder = tiny_encoder(root / "tiny")
    pairs = toy_pairs((0.0, 5.0)).train_test_split(test_size=0.25, seed=0)
    data = PairData(datasets.DatasetDict(train=pairs["train"], test=pairs["test"]), (0.0, 5.0),
                    "toy/fold")
    for kind in ("bi", "cross"):
        fit(data, encoder, small_args(root / kind, encoder=kind, num_train_epochs=2,
                                      max_steps=-1, learning_rate=1e-3, warmup_steps=0.1))
    return root, data, encoder


@pytest.mark.slow  # trains (the `trained` fixture)
def test_an_ensemble_folder_predicts_the_rank_average_of_its_members(trained, tmp_path,
                                                                      monkeypatch):
    root, data, _ = trained
    ensemble = Ensemble.build([root / "bi", root / "cross"], "rank", weights=[0.7, 0.3])
    ensemble.save(tmp_path / "ens")
    card = (tmp_path / "ens" / "README.md").read_text()
    assert "`members/0-bi`" in card and "`members/1-cross`" in card and "| 0.7000 |" in card
    assert str(root) not in card and "quantile among 30 reference scores" in card
    members = np.column_stack([predict(root / k, data) for k in ("bi", "cross")])
    held_out = [load_run(root / k).predictions for k in ("bi", "cross")]  # the test split's
    expected = rank_average(members / 5.0, [0.7, 0.3], reference=held_out) * 5.0
    # the folder holds its members: moved elsewhere, with the originals gone, it predicts the same
    moved = tmp_path / "elsewhere" / "ens"
    moved.parent.mkdir()
    (tmp_path / "ens").rename(moved)
    assert sorted(p.name for p in (moved / "members").iterdir()) == ["0-bi", "1-cross"]
    assert np.allclose(predict(moved, data), expected)
    # one pair alone gets a score: its members' scores ranked against their references
    test = data.splits["test"]
    pair = test["sentence1"][:1], test["sentence2"][:1]
    ensemble = Ensemble.load(moved)
    alone = ensemble.predict(*pair)
    scores = [[PairEncoder.from_pretrained(root / k).predict(*pair)[0] for k in ("bi", "cross")]]
    assert alone.shape == (1,)
    assert alone[0] == pytest.approx(rank_average(scores, [0.7, 0.3], reference=held_out)[0])
    assert load_run(root / "bi").ids == list(range(len(data.splits["test"])))
    # later calls reuse the members loaded by the first, they do not load them again
    monkeypatch.setattr(PairEncoder, "from_pretrained", classmethod(lambda *a, **k: 1 / 0))
    assert np.allclose(ensemble.predict(*pair), alone)


@pytest.mark.slow  # trains (the `trained` fixture)
def test_saving_an_ensemble_replaces_an_earlier_one_whole_or_not_at_all(trained, tmp_path,
                                                                        monkeypatch):
    root, _, _ = trained
    first = Ensemble.build([root / "bi", root / "cross"], "rank")
    first.save(tmp_path / "ens")
    second = Ensemble.build([root / "bi", root / "cross"], "rank", weights=[0.9, 0.1])
    copies = []

    def copy_then_fail(src, dst, *args, **kwargs):
        copies.append(dst)
        if len(copies) == 2:
            raise OSError("disk full")
        return real_copytree(src, dst, *args, **kwargs)

    real_copytree = ensemble_module.shutil.copytree
    monkeypatch.setattr(ensemble_module.shutil, "copytree", copy_then_fail)
    with pytest.raises(OSError, match="disk full"):
        second.save(tmp_path / "ens")
    assert Ensemble.load(tmp_path / "ens").weights is None  # the first one, intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ens"]  # no staging folder left
    monkeypatch.undo()
    second.save(tmp_path / "ens")
    assert Ensemble.load(tmp_path / "ens").weights == (0.9, 0.1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ens"]
    with pytest.raises(ValueError, match="not empty and holds no ensemble"):
        first.save(root / "bi")  # a member (or any other run) is never overwritten
    assert (root / "bi" / "eval_predictions.json").is_file()


@pytest.mark.slow  # trains (the `trained` fixture)
def test_ensembles_refuse_mixed_members(trained, tmp_path):
    root, data, encoder = trained
    other = PairData(data.splits, (0.0, 1.0), "toy/other")
    rescaled = datasets.DatasetDict({k: v.map(lambda r: {"score": r["score"] / 5})
                                     for k, v in data.splits.items()})
    fit(PairData(rescaled, (0.0, 1.0), "toy/other"), encoder,
        small_args(tmp_path / "unit", max_steps=1))
    with pytest.raises(ValueError, match=r"unit: its score range \(0.0, 1.0\) differs"):
        Ensemble.build([root / "bi", tmp_path / "unit"])
    with pytest.raises(ValueError, match="cv_dirs=None: must be given for method 'stack'"):
        Ensemble.build([root / "bi", root / "cross"], "stack")
    with pytest.raises(ParameterError, match="a folder of unknown kind: none of semrel_encoder.json"):
        Ensemble.build([root / "bi", tmp_path])
    assert other.score_range == (0.0, 1.0)


@pytest.mark.slow  # trains (the `trained` fixture)
def test_a_final_model_trains_on_all_data_without_evaluation(trained, tmp_path, capsys):
    _, data, encoder = trained
    everything = PairData(datasets.DatasetDict(train=data.splits["train"]), (0.0, 5.0), "toy")
    result = fit(everything, encoder, small_args(tmp_path / "final"))
    assert result.eval_split is None and result.spearman is None
    metrics = json.loads((tmp_path / "final" / "metrics.json").read_text())
    assert metrics["spearman"] is None and metrics["train_pairs"] == len(data.splits["train"])
    assert not (tmp_path / "final" / "eval_predictions.json").exists()
    assert "Not evaluated: trained on all" in (tmp_path / "final" / "README.md").read_text()
    with pytest.raises(ValueError, match=r"cv_dirs=None: must be given: ensemble member .*final "
                                         r"has no held-out predictions"):
        Ensemble.build([tmp_path / "final", trained[0] / "bi"], "rank")


@pytest.mark.slow  # trains (the `trained` fixture)
def test_cli_cv_members_report_ensembles_and_build_a_stack(trained, mirror, cache_dir, tmp_path,
                                                           capsys):
    _, _, encoder = trained
    members = [f"bi@{encoder},max_steps=2", f"cross@{encoder},max_steps=2"]
    assert main(["cv", "--dataset", "str-2021", "--mirror", str(mirror), "--cache-dir",
                 str(cache_dir), "--model", str(encoder), "--batch-size", "32",
                 "--output", str(tmp_path / "cv"), "--member", members[0],
                 "--member", members[1]]) == 0
    printed = capsys.readouterr().out
    for fold in range(5):
        assert re.search(rf"^cv-fold-{fold}(\s+-?\d\.\d{{4}}){{4}}$", printed, flags=re.M)
    assert re.search(r"^mean(\s+-?\d\.\d{4}){4}$", printed, flags=re.M)
    cv_dirs = sorted((tmp_path / "cv").iterdir())
    assert len(cv_dirs) == 2 and cv_dirs[0].name.startswith("bi-")
    assert cv_dirs[1].name.startswith("cross-") and "max_steps=2" in cv_dirs[1].name
    finals = [d / "cv-fold-0" for d in cv_dirs]
    assert main(["ensemble", "--method", "stack", "--output", str(tmp_path / "ens"),
                 "--member", str(finals[0]), "--member", str(finals[1]),
                 "--cv-dir", str(cv_dirs[0]), "--cv-dir", str(cv_dirs[1])]) == 0
    saved = json.loads((tmp_path / "ens" / "semrel_ensemble.json").read_text())
    assert saved["method"] == "stack" and saved["stack"]["n_rows"] == 5500
    stack = Ensemble.load(tmp_path / "ens")
    one = stack.predict(["A man plays a guitar."], ["Someone plays music."])
    assert one.shape == (1,) and np.isfinite(one[0])  # one pair: b + w·scores, no batch needed
    assert main(["ensemble", "--output", str(tmp_path / "rank"), "--member", str(finals[0]),
                 "--member", str(finals[1]), "--cv-dir", str(cv_dirs[0]),
                 "--cv-dir", str(cv_dirs[1])]) == 0
    saved = json.loads((tmp_path / "rank" / "semrel_ensemble.json").read_text())
    assert [len(r) for r in saved["reference"]] == [5500, 5500]  # every out-of-fold score
    assert saved["reference"][0] == sorted(saved["reference"][0])
    assert main(["ensemble", "--output", str(tmp_path / "rank"), "--member", str(finals[0]),
                 "--member", str(finals[1]), "--cv-dir", str(cv_dirs[0])]) == 2
    assert (f"--cv-dir {cv_dirs[0]}: must be one CV folder per member, in the members' order: "
            "1 for 2 members") in capsys.readouterr().err
    with pytest.raises(ValueError, match="is a bi-encoder but its CV"):
        Ensemble.build(finals, "stack", cv_dirs=cv_dirs[::-1])
