"""scripts/train_str_2021.py, STR-2021's best fine-tuned figure trained again fold by fold: a smoke
run with a tiny model on the real STR-2021 folds (5 × 1,100 test pairs), as a user runs it (a
subprocess from another directory), its files re-scored against the loader's labels."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from scipy.stats import spearmanr

from project import REPO, not_a_count, refused_before_running
from semrel.dataset_scripts.pairs import load_pairs
from semrel.metrics.submission import read_predictions
from semrel.publishing.prediction_files import check, check_entries
from trainer_fixtures import tiny_encoder

SCRIPT = REPO / "scripts" / "train_str_2021.py"
FOLDS = [f"cv-fold-{k}" for k in range(5)]


@pytest.mark.slow
def test_two_members_on_five_folds_make_one_rank_average_file_per_fold(mirror, tmp_path):
    model = tiny_encoder(tmp_path / "tiny-bert")
    out, pub = tmp_path / "cv", tmp_path / "pub"
    env = {**os.environ, "SEMREL_MIRROR": str(mirror), "HF_HOME": str(tmp_path / "hf")}
    argv = [sys.executable, str(SCRIPT), "--model", f"mpnet={model}", "--max-steps", "2",
            "--output", str(out), "--publish", str(pub), "--machine", "test machine"]

    def run():
        done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1800)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        return done

    done = run()
    fits = [line for line in done.stdout.splitlines() if line.startswith("$ semrel fit")]
    assert [f.split("--config ")[1].split()[0] for f in fits] == FOLDS * 2
    assert all("--encoder bi --precision" in f for f in fits[:5])
    assert all("--encoder cross --learning-rate 4e-5 --precision" in f for f in fits[5:])
    assert all("--save-steps 1" in f and f.endswith("--max-steps 2") for f in fits)
    record = json.loads((out / "study.json").read_text(encoding="utf-8"))
    assert list(record["folds"]) == FOLDS and set(record["comparisons"]["rank"]) == {"bi-mpnet", "cross-mpnet"}
    assert record["published_members"] == {"bi-mpnet": [], "cross-mpnet": []}  # every member trained here
    for fold in FOLDS:
        file = out / "predictions" / f"{fold}.csv"
        assert check(file, "str-2021", fold, "test", mirror=mirror) == 1100
        found, test = read_predictions(file), load_pairs("str-2021", fold, mirror=mirror).splits["test"]
        assert list(found.ids) == [str(i) for i in test["pair_id"]]  # the split's order
        rho = spearmanr(np.asarray(found.scores), test["score"]).statistic
        assert record["folds"][fold]["rank"] == pytest.approx(rho, abs=5e-5)
        assert not list((out / "bi-mpnet" / fold / "checkpoints").glob("checkpoint-*"))  # removed once finished
    mean = np.mean([record["folds"][f]["rank"] for f in FOLDS])
    assert record["mean"]["rank"] == pytest.approx(mean, abs=1e-4)
    assert f"| mean | {record['mean']['bi-mpnet']:.4f} |" in (out / "table.md").read_text(encoding="utf-8")
    assert check_entries(pub / "results.json", mirror=mirror) == 15  # the rank average's and each member's
    entries = json.loads((pub / "results.json").read_text(encoding="utf-8"))["prediction_files"]
    member = entries["predictions/str-2021/mpnet-cross-lr4e-5-cv/cv-fold-1.csv"]
    assert member["figure"] == {"spearman": record["folds"]["cv-fold-1"]["cross-mpnet"]}
    entry = entries["predictions/str-2021/mpnet-bi-cross-rank-cv/cv-fold-3.csv"]
    assert (entry["config"], entry["split"], entry["rows"], entry["machine"]) == ("cv-fold-3", "test", 1100,
                                                                                  "test machine")
    assert entry["figure"] == {"spearman": record["folds"]["cv-fold-3"]["rank"]}
    assert entry["command"].startswith("python scripts/train_str_2021.py --model mpnet=")

    before = (out / "predictions" / "cv-fold-0.csv").read_bytes()
    again = run()  # every fold kept, nothing trained, the same files
    assert "$ semrel fit" not in again.stdout and again.stdout.count("kept: ") == 10
    assert (out / "predictions" / "cv-fold-0.csv").read_bytes() == before

    shutil.rmtree(out)  # a fresh machine: only the published files are left
    argv.append("--reuse-published")
    again = run()
    assert "$ semrel fit" not in again.stdout and again.stdout.count("is published and stands for") == 10
    assert (out / "predictions" / "cv-fold-0.csv").read_bytes() == before  # the same rank average
    study = json.loads((out / "study.json").read_text(encoding="utf-8"))
    assert study["folds"] == record["folds"]
    assert study["published_members"] == {name: FOLDS for name in record["members"]}


@pytest.mark.parametrize(("args", "words"), [
    (["--model", "minilm=x"], "argument --model: must be NAME=DIR with NAME mpnet, not 'minilm=x'"),
    (["--max-steps", "2", "--write-results"],
     "--write-results: a smoke run (--max-steps, --model) measures nothing to store"),
    (["--model", "mpnet=x", "--publish"],
     "--publish: a smoke run (--max-steps, --model) goes into another folder: --publish DIR"),
    (["--precision", "fp16"], "argument --precision: invalid choice: 'fp16' (choose from 'bf16', 'fp32', 'auto')"),
    (["--reuse-published"], "--reuse-published: reuses the files --publish DIR records; give --publish"),
    not_a_count("--max-steps", "0"),
])
def test_mistakes_are_refused_before_anything_trains(args, words, tmp_path):
    refused_before_running(SCRIPT, args, words, tmp_path, "--output")


def test_a_fold_cut_off_resumes_from_its_last_checkpoint(tmp_path):
    from scripts.train_str_2021 import MEMBERS, fit_argv

    folder = tmp_path / "cross-mpnet" / "cv-fold-2"
    fresh = fit_argv(folder, "cv-fold-2", "mpnet", MEMBERS["cross-mpnet"], "auto", None)
    assert fresh == ["fit", "--dataset", "str-2021", "--config", "cv-fold-2", "--model", "mpnet", "--encoder",
                     "cross", "--learning-rate", "4e-5", "--precision", "auto", "--save-steps", "100",
                     "--output", str(folder)]
    (folder / "checkpoints" / "checkpoint-300").mkdir(parents=True)  # cut off while written: no state
    assert fit_argv(folder, "cv-fold-2", "mpnet", MEMBERS["cross-mpnet"], "auto", None) == fresh
    (folder / "checkpoints" / "checkpoint-200").mkdir()
    (folder / "checkpoints" / "checkpoint-200" / "trainer_state.json").write_text("{}", encoding="utf-8")
    assert fit_argv(folder, "cv-fold-2", "mpnet", MEMBERS["cross-mpnet"], "auto", None) == [*fresh, "--resume", "last"]


def test_a_published_member_file_that_changed_is_refused_not_reused(mirror, tmp_path, monkeypatch):
    from scripts.train_str_2021 import reused

    name = "predictions/str-2021/mpnet-bi-cv/cv-fold-0.csv"
    (tmp_path / name).parent.mkdir(parents=True)
    (tmp_path / name).write_text("PairID,Pred_Score\n", encoding="utf-8")
    entry = {"sha256": "0" * 64}
    (tmp_path / "results.json").write_text(json.dumps({"prediction_files": {name: entry}}), encoding="utf-8")
    assert reused("cross-mpnet", "cv-fold-0", tmp_path) is None  # not published: trained
    with pytest.raises(SystemExit, match=r"--reuse-published: .*cv-fold-0.csv: sha256 [0-9a-f]{64}, but the "
                                         r"entry says 0{64}"):
        reused("bi-mpnet", "cv-fold-0", tmp_path)
    (tmp_path / name).unlink()
    with pytest.raises(SystemExit, match="cv-fold-0.csv: no such file"):
        reused("bi-mpnet", "cv-fold-0", tmp_path)


def test_a_published_member_file_stands_for_its_run_with_the_folds_labels(mirror, tmp_path, monkeypatch):
    from scripts.train_str_2021 import run_from_file
    from semrel.metrics.submission import write_predictions

    monkeypatch.setenv("SEMREL_MIRROR", str(mirror))
    test = load_pairs("str-2021", "cv-fold-4", mirror=mirror).splits["test"]
    ids = [str(i) for i in test["pair_id"]]
    scores = np.linspace(0, 1, len(ids))
    run = run_from_file(write_predictions(tmp_path / "f.csv", ids, scores), "cv-fold-4", "cross")
    assert (run.data, run.split, run.score_range, run.encoder, run.ids) == (
        "str-2021/cv-fold-4", "test", (0.0, 1.0), "cross", ids)
    assert np.array_equal(run.predictions, scores)
    assert np.array_equal(run.labels, np.asarray(test["score"], dtype=np.float32).astype(np.float64))
    write_predictions(tmp_path / "g.csv", ids[::-1], scores)
    with pytest.raises(SystemExit, match="its PairIDs are not str-2021/cv-fold-4/test's, in the split's order"):
        run_from_file(tmp_path / "g.csv", "cv-fold-4", "cross")
