"""benchmarks/bench_c_sts.py, the C-STS study on the open re-annotation: a smoke run with a tiny
model on the real re-annotated files (c-sts/reannotated-dev: train 10,206 rows, dev 1,136,
validation 2,620, validation_invalid 214), as a user runs it (a subprocess from another
directory); and benchmarks/results/c-sts.md's table is the one results.json holds."""

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
from semrel.publishing.prediction_files import check_entries
from trainer_fixtures import tiny_encoder

SCRIPT = REPO / "benchmarks" / "bench_c_sts.py"
QUAD = "bi@minilm,epochs=1,objective=quad+mse,on_invalid=omit"
CANDIDATES = ["zeroshot@minilm", "zeroshot-prefix@minilm", "zeroshot-pair@minilm", QUAD,
              "cross@minilm,epochs=1"]


@pytest.mark.slow
def test_the_study_fits_on_carved_train_chooses_on_dev_and_scores_validation_only(mirror, tmp_path):
    model = tiny_encoder(tmp_path / "tiny-bert")
    out, record = tmp_path / "study", tmp_path / "results.json"
    env = {**os.environ, "SEMREL_MIRROR": str(mirror), "HF_HOME": str(tmp_path / "hf")}
    argv = [sys.executable, str(SCRIPT), *(a for c in CANDIDATES for a in ("--only", c)),
            "--model", f"minilm={model}", "--max-steps", "2", "--precision", "fp32",
            "--out", str(out), "--record", str(record)]
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    commands = [line for line in done.stdout.splitlines() if line.startswith("$ semrel")]
    assert [c.split()[2] for c in commands] == ["fit", "fit"]  # the ensembles: from the members' files
    for fit in commands[:2]:
        assert "--dataset c-sts --config reannotated-dev" in fit
        assert "--eval-dataset c-sts --eval-config reannotated-dev --eval-split dev" in fit
        assert "--max-steps 2 --eval-steps 1" in fit
    assert "--encoder bi --epochs 1 --objective quad+mse --on-invalid omit" in commands[0]
    assert "--encoder cross --epochs 1" in commands[1]
    assert "validation_invalid" not in done.stdout  # never scored, never named

    entry = json.loads(record.read_text())["c_sts_study"]
    rows = {r["candidate"]: r for r in entry["rows"]}
    assert list(rows)[:5] == [*CANDIDATES[:3], QUAD, "cross@minilm,epochs=1"]
    assert [r["kind"] for r in entry["rows"]] == ["zero-shot"] * 3 + ["bi", "cross", "ensemble", "ensemble"]
    assert rows[QUAD]["omitted_tied_pairs"] == 925  # the 1,027 tied train pairs less dev's 102
    for row in entry["rows"]:
        for figure in ("validation_spearman", "validation_pearson"):
            low, high = row[f"{figure}_ci"]
            assert -1 <= low <= row[figure] <= high <= 1, row
    for trained in (QUAD, "cross@minilm,epochs=1"):
        assert len(rows[trained]["dev_by_epoch"]) == 2 and rows[trained]["kept_epoch"] > 0  # every step
    assert [a["spearman"] for a in entry["anchors"]] == [0.475, 0.432, 0.436, 0.396, 0.717, 0.759, 0.739]
    stored = json.loads((out / "results.json").read_text())
    stored_by_name = {r["candidate"]: r for r in stored.values()}
    assert {r["validation"]["n"] for r in stored.values()} == {2620}  # the labelled validation rows
    for r in stored.values():
        if r["kind"] in ("bi", "cross"):
            predictions = json.loads((out / "runs" / r["folder"].rsplit("/", 1)[1] /
                                      "eval_predictions.json").read_text())
            assert predictions["split"] == "validation" and len(predictions["predictions"]) == 2620
            dev = json.loads((out / "runs" / r["folder"].rsplit("/", 1)[1] /
                              "selection_predictions.json").read_text())
            assert (dev["data"], dev["split"], len(dev["labels"])) == ("c-sts/reannotated-dev", "dev", 1136)
            files = {split: json.loads((tmp_path / path).read_text()) for split, path in r["files"].items()}
            assert list(files["dev"]) == [str(i) for i in range(1136)]
            assert np.allclose(list(files["validation"].values()), 1 + 4 * np.array(predictions["predictions"]),
                               rtol=0, atol=1e-12)  # the 1-5 scale
        if r["kind"] == "ensemble":
            scored = json.loads((out / "ensembles" / r["folder"].rsplit("/", 1)[1] / "validation.json").read_text())
            assert len(scored) == 2620
            folders = [stored_by_name[m]["folder"] for m in r["members"]]
            built = ensemble_of_the_runs(r["method"], folders, tmp_path, env)
            # as semrel ensemble + semrel predict give them: predict scores validation again, so a score tied
            # with its reference may move half its tie group (the tiny model ties often): 3 ranks of 2,620
            atol = 3 * 4 / 2620 if r["method"] == "rank" else 1e-8
            assert np.allclose(list(scored.values()), built, rtol=0, atol=atol), r["method"]

    # run again: everything is kept, nothing trained, built or scored again; --publish copies each member's
    # two files and the ensemble's
    published = tmp_path / "benchmarks"
    again = subprocess.run([*argv, "--publish", str(published)], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=1800)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "$ semrel" not in again.stdout and again.stdout.count("kept: ") == 7
    assert json.loads(record.read_text())["c_sts_study"]["rows"] == entry["rows"]
    ensembles = [r for r in stored.values() if r["kind"] == "ensemble"]  # rank, then ridge (sorted keys)
    best = max(ensembles, key=lambda r: -2 if r["dev"] is None else r["dev"])  # a tie keeps the rank average
    entries = json.loads((published / "results.json").read_text())["prediction_files"]
    name = f"predictions/c-sts/{best['method']}-bi-minilm+cross-minilm/validation.json"
    members = [f"predictions/c-sts/member-{m}/{split}.json" for m in
               ("bi-minilm-epochs1-objectivequad+mse-on-invalidomit", "cross-minilm-epochs1")
               for split in ("dev", "validation")]
    assert sorted(entries) == sorted([*members, name])
    assert (published / name).read_bytes() == (tmp_path / best["folder"] / "validation.json").read_bytes()
    rho = best["validation"]["spearman"]
    assert entries[name]["figure"] == {"spearman": None if rho is None else round(rho, 4)}
    assert entries[members[1]]["figure"]["record"]["candidate"] == QUAD
    assert check_entries(published / "results.json", mirror=mirror) == 5  # 2,620 keys "0" ... "2619"; dev 1,136

    # a fresh machine: only the published files are left, and they stand for the trained candidates
    shutil.rmtree(out)
    record.unlink()
    fresh = subprocess.run([*argv, "--publish", str(published), "--reuse-published", "--write-results",
                            "--machine", "2-core CPU"], cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=1800)
    assert fresh.returncode == 0, fresh.stderr[-3000:]
    assert "$ semrel" not in fresh.stdout and fresh.stdout.count("is published and stands for") == 2
    assert json.loads(record.read_text())["c_sts_study"]["rows"] == entry["rows"]  # the same figures
    assert (published / name).read_bytes() == (tmp_path / best["folder"] / "validation.json").read_bytes()
    assert check_entries(published / "results.json", mirror=mirror) == 5
    # --write-results: the cell is the published ensemble's figure, re-scored here from its file
    cell = json.loads((published / "results.json").read_text())["fine_tuned"]["c-sts"]
    labels = load_pairs("c-sts", "reannotated-dev").splits["validation"]["score"]
    rho = spearmanr(list(json.loads((published / name).read_text()).values()), labels).statistic
    assert cell["spearman"] == round(rho, 4)
    assert cell["model"] == (f"{QUAD} + cross@minilm,epochs=1, "
                             f"{'rank average' if best['method'] == 'rank' else 'ridge stack'}, chosen on dev")
    assert cell["machine"] == "2-core CPU" and cell["command"].startswith("python benchmarks/bench_c_sts.py --only")


def ensemble_of_the_runs(method, folders, cwd, env):
    """``semrel ensemble --method METHOD`` over the run folders, its validation scores by ``semrel predict``."""
    out = cwd / f"built-{method}"
    for argv in (["ensemble", "--method", method, *(a for f in folders for a in ("--member", f)), "--output",
                  str(out / "ensemble")],
                 ["predict", "--dataset", "c-sts", "--config", "reannotated-dev", "--split", "validation",
                  "--model", str(out / "ensemble"), "--output", str(out / "validation.json")]):
        done = subprocess.run([sys.executable, "-m", "semrel", *argv], cwd=cwd, env=env, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
    return list(json.loads((out / "validation.json").read_text()).values())


@pytest.mark.parametrize("args, words", [
    (["--model", "minilm"], "argument --model: must be NAME=DIR (e.g. minilm=tiny-bert), not 'minilm'"),
    not_a_count("--max-steps", "0"),
    (["--model", "=tiny-bert"], "argument --model: must be NAME=DIR (e.g. minilm=tiny-bert), not '=tiny-bert'"),
    (["--only", "zeroshot-prefx@minilm"], "argument --only: 'zeroshot-prefx@minilm' is not one of "
                                          "zeroshot@MODEL, zeroshot-prefix@MODEL, zeroshot-pair@MODEL"),
    (["--publish", "d", "--no-ensembles"], "--publish: drop --no-ensembles (an ensemble's file is published)"),
    (["--reuse-published"], "--reuse-published: reuses the files --publish DIR records; give --publish"),
    (["--write-results"], "--write-results: the cell names the published file's figure; give --publish"),
])
def test_a_mistake_is_one_line_before_anything_runs(args, words, tmp_path):
    refused_before_running(SCRIPT, args, words, tmp_path, "--out")


def test_results_page_shows_the_study_of_results_json():
    """benchmarks/results/c-sts.md's C-STS table is the one results.json's entry renders."""
    from benchmarks.c_sts_study.tables import KEY, markdown

    stored = json.loads((REPO / "benchmarks" / "results.json").read_text(encoding="utf-8"))[KEY]
    page = (REPO / "benchmarks" / "results" / "c-sts.md").read_text(encoding="utf-8")
    assert markdown(stored) in page


def test_a_member_file_that_lacks_a_row_is_refused_naming_it(tmp_path):
    from benchmarks.c_sts_study.published import columns
    from semrel.metrics.errors import DataValidationError

    files = {"dev": tmp_path / "dev.json", "validation": tmp_path / "validation.json"}
    files["dev"].write_text(json.dumps({"1": 5.0, "0": 1.0, "2": 3.0}), encoding="utf-8")
    files["validation"].write_text(json.dumps({"0": 2.0, "1": 4.0}), encoding="utf-8")
    record = {"files": {split: str(path) for split, path in files.items()}}
    with pytest.raises(DataValidationError, match=r"validation.json: every key of c-sts/reannotated-dev/validation "
                                                  r"must be predicted: 1 missing \(first 2, row 3 of 3\)"):
        columns(record, (1.0, 5.0), {"dev": 3, "validation": 3})
    scores = columns(record, (1.0, 5.0), {"dev": 3, "validation": 2})
    assert scores["dev"].tolist() == [0.0, 1.0, 0.5]  # by row, on the label scale


def test_an_ensemble_without_a_validation_figure_is_not_stored():
    from benchmarks.c_sts_study.tables import fine_tuned_cell

    constant = {"method": "rank", "members": ["a", "b"], "candidate": "rank of a + b", "dev": 0.5,
                "validation": {"spearman": None}}
    with pytest.raises(SystemExit, match=r"rank of a \+ b has no validation Spearman \(constant predictions\)"):
        fine_tuned_cell([constant], "python benchmarks/bench_c_sts.py", "2-core CPU")
