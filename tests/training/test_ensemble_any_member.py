"""Ensemble members of any kind: a run of `semrel fit` beside a model semrel did not train (a
sentence-transformers folder, copied; a packaged name and a Hub model, by reference), whose scores of the run's
held-out rows are its rank reference; the saved folder predicts after a move, through `semrel
predict` in a subprocess; and one line for each member that cannot be combined."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from hub_server import LocalHub
from project import REPO
from semrel.cli import main
from semrel.dataset_scripts.pairs import load_pairs
from semrel.metrics.errors import ParameterError
from semrel.trainers.ensemble import Ensemble
from semrel.trainers.fitting import fit
from semrel.trainers.prediction import predict
from semrel.trainers.run_folder import load_run
from trainer_fixtures import fake_member, small_args, tiny_encoder, tiny_sentence_transformer, toy_cv


def cosines(model_dir, first, second) -> np.ndarray:
    """The zero-shot score, computed apart from semrel: sentence-transformers' embeddings, cosine."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(model_dir), device="cpu")
    u, v = model.encode(list(first)), model.encode(list(second))
    return (u * v).sum(1) / (np.linalg.norm(u, axis=1) * np.linalg.norm(v, axis=1))


def mid_rank_quantile(scores, reference) -> np.ndarray:
    """(#{r < s} + #{r <= s}) / (2 |R|), by hand."""
    reference = np.asarray(reference)
    return np.array([((reference < s).sum() + (reference <= s).sum()) / (2 * len(reference))
                     for s in scores])


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A bi-encoder run fit on fold 0 of a toy Hub-layout dataset (16 test rows), and a plain
    sentence-transformers bi-encoder over another random tiny BERT."""
    root = tmp_path_factory.mktemp("any-member")
    folder = toy_cv(root / "toy-cv")
    data = load_pairs(str(folder), "cv-fold-0")
    fit(data, tiny_encoder(root / "tiny"), small_args(root / "run", encoder="bi"))
    return root, folder, data, tiny_sentence_transformer(root / "st", seed=1)


@pytest.fixture(autouse=True)
def score_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SEMREL_CACHE", str(tmp_path / "cache"))


@pytest.mark.slow  # trains (the `trained` fixture), and runs `semrel predict` in a subprocess
def test_a_run_and_a_zero_shot_model_rank_average_and_move_whole(trained, tmp_path):
    root, folder, data, st = trained
    test = data.splits["test"]
    ensemble = Ensemble.build([root / "run", st], "rank")
    held_out = load_run(root / "run")
    zero_shot = cosines(st, test["sentence1"], test["sentence2"])  # its scores of the run's rows
    assert np.allclose(ensemble.reference[1], np.sort(zero_shot), atol=1e-6)
    assert ensemble.reference[0] == tuple(np.sort(held_out.predictions).tolist())
    assert ensemble.models[0] is None and ensemble.models[1]["source"] == "folder"

    ensemble.save(tmp_path / "ens")
    saved = json.loads((tmp_path / "ens" / "semrel_ensemble.json").read_text())
    assert saved["members"] == ["members/0-run", "members/1-st"]
    assert saved["models"][1] == {"spec": st.name, "kind": "bi-encoder", "source": "folder",
                                  "hub_id": None, "revision": None}
    card = (tmp_path / "ens" / "README.md").read_text()
    assert f"bi-encoder run of `semrel fit`, trained on {os.path.basename(folder)}/cv-fold-0" in card
    assert str(tmp_path) not in card and str(folder) not in json.dumps(saved)  # names, never paths
    assert "sentence-transformers bi-encoder: a copy of the folder `st`, not trained by semrel" in card

    # scored: the train rows (a reference row against itself would sit on a tie, where float noise
    # between two ways of computing one score moves its rank by half a step)
    train = data.splits["train"]
    run_scores = predict(root / "run", data, "train")  # [0, 1] data: the label scale
    expected = (mid_rank_quantile(run_scores, held_out.predictions)
                + mid_rank_quantile(cosines(st, train["sentence1"], train["sentence2"]), zero_shot)) / 2

    moved = tmp_path / "elsewhere" / "ens"  # moved, with the original model gone
    moved.parent.mkdir()
    (tmp_path / "ens").rename(moved)
    away = tmp_path / "away"
    shutil.move(st, away)
    try:
        assert np.allclose(Ensemble.load(moved).predict(train["sentence1"], train["sentence2"]),
                           expected, atol=1e-6)
        cwd = tmp_path / "cwd"
        cwd.mkdir()
        done = subprocess.run([sys.executable, "-m", "semrel", "predict", "--model", str(moved),
                               "--dataset", str(folder), "--config", "cv-fold-0", "--split", "train",
                               "--output", "preds.json"], cwd=cwd, capture_output=True, text=True,
                              env={**os.environ, "HF_HUB_OFFLINE": "1"})
        assert done.returncode == 0, done.stderr
        written = json.loads((cwd / "preds.json").read_text())
        assert np.allclose([written[str(i)] for i in range(len(train))], expected, atol=1e-6)
    finally:
        shutil.move(away, st)


@pytest.mark.slow  # trains (the `trained` fixture)
def test_a_packaged_member_is_kept_by_reference(trained, tmp_path):
    root, _, data, _ = trained
    assert main(["ensemble", "--member", str(root / "run"), "--member", "minilm",
                 "--weights", "2", "1", "--output", str(tmp_path / "ens")]) == 0
    saved = json.loads((tmp_path / "ens" / "semrel_ensemble.json").read_text())
    assert saved["members"] == ["members/0-run", "minilm"]
    assert sorted(p.name for p in (tmp_path / "ens" / "members").iterdir()) == ["0-run"]
    assert "packaged model `minilm`, by reference" in (tmp_path / "ens" / "README.md").read_text()
    reference = predict("minilm", data)  # minilm's scores of the run's held-out (test) rows
    assert np.allclose(saved["reference"][1], np.sort(reference), atol=1e-6)
    train = data.splits["train"]
    expected = (2 * mid_rank_quantile(predict(root / "run", data, "train"), load_run(root / "run").predictions)
                + mid_rank_quantile(predict("minilm", data, "train"), reference)) / 3
    assert np.allclose(predict(tmp_path / "ens", data, "train"), expected, atol=1e-6)
    assert np.allclose(Ensemble.load(tmp_path / "ens").predict(train["sentence1"], train["sentence2"]),
                       expected, atol=1e-6)


@pytest.mark.slow  # trains (the `trained` fixture), starts the local Hub and semrel processes
def test_a_hub_member_is_kept_by_its_commit_and_loads_offline(trained, tmp_path):
    """``--member ns/tiny-st`` is recorded as ``ns/tiny-st@<commit>``, not copied; the moved
    folder predicts offline from the Hugging Face cache, and a later commit on the Hub changes
    nothing."""
    root, folder, data, st = trained
    with LocalHub() as hub:
        commit = hub.put_folder("model", "ns/tiny-st", st)
        base = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
        env = base | hub.client_env("hf_dummy") | {"HF_HOME": str(tmp_path / "home"), "PYTHONPATH": str(REPO),
                                                   "SEMREL_CACHE": str(tmp_path / "cache")}

        def semrel(*args, **more):
            return subprocess.run([sys.executable, "-m", "semrel", *args], env=env | more, cwd=tmp_path,
                                  capture_output=True, text=True, timeout=600)

        done = semrel("ensemble", "--member", str(root / "run"), "--member", "ns/tiny-st",
                      "--output", str(tmp_path / "ens"))
        assert done.returncode == 0, done.stderr
        hub.put_folder("model", "ns/tiny-st", tiny_sentence_transformer(tmp_path / "other", seed=7))
    saved = json.loads((tmp_path / "ens" / "semrel_ensemble.json").read_text())
    assert saved["members"] == ["members/0-run", f"ns/tiny-st@{commit}"]
    assert saved["models"][1] == {"spec": "ns/tiny-st", "kind": "bi-encoder", "source": "hub",
                                  "hub_id": "ns/tiny-st", "revision": commit}
    assert sorted(p.name for p in (tmp_path / "ens" / "members").iterdir()) == ["0-run"]
    assert f"Hub model `ns/tiny-st` at commit `{commit}`" in (tmp_path / "ens" / "README.md").read_text()
    (tmp_path / "ens").rename(tmp_path / "moved")
    done = semrel("predict", "--model", "moved", "--dataset", str(folder), "--config", "cv-fold-0",
                  "--split", "train", "--output", "preds.json", HF_HUB_OFFLINE="1")
    assert done.returncode == 0, done.stderr
    train = data.splits["train"]
    test = data.splits["test"]
    expected = (mid_rank_quantile(predict(root / "run", data, "train"), load_run(root / "run").predictions)
                + mid_rank_quantile(cosines(st, train["sentence1"], train["sentence2"]),
                                    cosines(st, test["sentence1"], test["sentence2"]))) / 2
    written = json.loads((tmp_path / "preds.json").read_text())
    assert np.allclose([written[str(i)] for i in range(len(train))], expected, atol=1e-6)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Untrained: a plain BERT, a sentence-transformers bi-encoder, a folder of nothing, an ensemble."""
    root = tmp_path_factory.mktemp("members")
    (root / "odd").mkdir()
    (root / "odd" / "notes.txt").write_text("not a model")
    (root / "ens").mkdir()
    (root / "ens" / "semrel_ensemble.json").write_text("{}")
    return {"weights": tiny_encoder(root / "bert"), "st": tiny_sentence_transformer(root / "st"),
            "odd": root / "odd", "ens": root / "ens"}


def held_out(conditional: bool) -> dict:
    n = 12
    return {"data": "str-2021/cv-fold-0", "split": "test", "score_range": [0.0, 1.0], "encoder": "bi",
            "conditional": conditional, "ids": [f"p{i}" for i in range(n)],
            "predictions": np.linspace(0, 1, n).tolist(), "labels": np.linspace(1, 0, n).tolist()}


def conditional_run(folder, weights):
    run = fake_member(folder, weights, "str-2021/cv-fold-0", held_out=held_out(True))
    (run / "semrel_encoder.json").write_text(json.dumps({"kind": "bi", "conditional": True}))
    return run


REFUSED = [  # (case, members, method, the CLI's line after "--member ...: ")
    ("a folder of unknown kind", ("run", "odd"), "rank",
     "{odd}: a folder of unknown kind: none of semrel_encoder.json, semrel_ensemble.json, modules.json "
     "or config.json is in it"),
    ("an ensemble", ("run", "ens"), "rank",
     "{ens}: is an ensemble folder; an ensemble's members are models: give its members instead"),
    ("an unconditional zero-shot model beside a conditional run", ("conditional", "st"), "rank",
     "{st}: is a bi-encoder model, which cannot score the conditions of the pairs {conditional} "
     "scored (it would ignore them); an ensemble's members all take the condition or none does"),
    ("zero-shot models alone", ("st", "weights"), "rank",
     "{st} {weights}: are all models semrel did not train, with no held-out rows to rank their scores "
     "against: add a member trained by `semrel fit` (its held-out rows are scored by every member) "
     "or one CV folder per member (cv_dirs; its folds' rows are scored)"),
    ("a zero-shot model in a learned stack", ("run", "st"), "ridge",
     "{st}: is a bi-encoder model semrel did not train: a learned stack (ridge) fits on runs' own "
     "dev or CV predictions; combine it by --method rank or stack"),
]


@pytest.mark.parametrize("names, method, line", [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_members_that_cannot_be_combined_are_one_line(models, tmp_path, capsys, names, method, line):
    paths = {**models, "run": fake_member(tmp_path / "run", models["weights"], "str-2021/cv-fold-0",
                                          held_out=held_out(False)),
             "conditional": conditional_run(tmp_path / "conditional", models["weights"])}
    members = [paths[n] for n in names]
    with pytest.raises(ParameterError) as refused:
        Ensemble.build(members, method)
    said = line.format(**paths)
    assert str(refused.value).split(": ", 1)[1] == said.split(": ", 1)[1]
    argv = ["ensemble", "--method", method, "--output", str(tmp_path / "ens")]
    for member in members:
        argv += ["--member", str(member)]
    assert main(argv) == 2
    assert capsys.readouterr().err == f"semrel ensemble: error: --member {said}\n"
    assert not (tmp_path / "ens").exists()


def test_zero_shot_models_alone_rank_against_the_rows_of_a_cv(models, tmp_path, capsys):
    """With one CV folder per member, models semrel did not train score the rows of its folds
    (read from the folds' predictions files), and those scores are their references."""
    folder = toy_cv(tmp_path / "toy-cv")
    cv = tmp_path / "cv"
    rows = []
    for k in range(2):
        test = load_pairs(str(folder), f"cv-fold-{k}").splits["test"]
        rows.append(test)
        (cv / f"cv-fold-{k}").mkdir(parents=True)
        (cv / f"cv-fold-{k}" / "eval_predictions.json").write_text(json.dumps({
            "data": f"{folder}/cv-fold-{k}", "split": "test", "score_range": [0, 1], "encoder": "bi",
            "conditional": False, "ids": list(test["pair_id"]), "predictions": [0.5] * len(test),
            "labels": list(test["score"])}))
    first = [s for t in rows for s in t["sentence1"]]
    second = [s for t in rows for s in t["sentence2"]]
    assert main(["ensemble", "--member", str(models["st"]), "--member", str(models["weights"]),
                 "--cv-dir", str(cv), "--cv-dir", str(cv), "--output", str(tmp_path / "ens")]) == 0
    saved = json.loads((tmp_path / "ens" / "semrel_ensemble.json").read_text())
    assert [m["kind"] for m in saved["models"]] == ["bi-encoder", "transformer"]
    assert saved["score_range"] == [0, 1] and len(saved["reference"][0]) == 32
    assert np.allclose(saved["reference"][0], np.sort(cosines(models["st"], first, second)), atol=1e-6)
    card = (tmp_path / "ens" / "README.md").read_text()
    assert "transformers encoder (mean-pooled cosine): a copy of the folder `bert`" in card
    data = load_pairs(str(folder), "cv-fold-0")
    assert predict(tmp_path / "ens", data, "train").shape == (len(data.splits["train"]),)
    assert main(["ensemble", "--member", str(models["st"]), "--member", str(models["weights"]),
                 "--cv-dir", str(cv), "--output", str(tmp_path / "one")]) == 2
    assert capsys.readouterr().err.endswith("must be one CV folder per member, in the members' order: "
                                            "1 for 2 members\n")
