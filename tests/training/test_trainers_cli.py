"""``semrel`` fit / cv / predict on the real STR-2021 file and a C-STS-shaped fixture."""

from __future__ import annotations

import json
import re

import datasets
import numpy as np
import pytest
from huggingface_hub import ModelCard

from semrel.cli import UsageError, build_parser, main
from semrel.dataset_scripts import pretrained
from semrel.dataset_scripts.errors import DataValidationError
from semrel.dataset_scripts.pretrained import known_base_model, minilm_path
from semrel.trainers.models import PairEncoder
from trainer_fixtures import toy_conditional_pairs


def run_argv(argv: list[str]) -> None:
    """The CLI's command in this process, raising what it raises (main() answers in one line)."""
    args = build_parser().parse_args(argv)
    args.run(args)



STR_SOURCES = ["Formality", "Goodreads", "ParaNMT", "SNLI", "STS", "Stance", "Wikipedia"]


@pytest.mark.slow
def test_fit_on_a_str_fold_writes_model_card_and_metrics(encoder, mirror, cache_dir, tmp_path,
                                                         capsys):
    out = tmp_path / "model"
    assert main(["fit", "--dataset", "str-2021", "--config", "cv-fold-0", "--mirror", str(mirror),
                 "--cache-dir", str(cache_dir), "--encoder", "bi", "--model", str(encoder),
                 "--output", str(out), "--max-steps", "3", "--batch-size", "32"]) == 0
    printed = capsys.readouterr().out
    assert re.search(r"str-2021/cv-fold-0 \(test\): Spearman -?0\.\d{4}", printed)
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["eval_split"] == "test" and metrics["train_pairs"] == 4400
    assert sorted(metrics["per_source"]) == STR_SOURCES
    card = (out / "README.md").read_text()
    for needle in ("Spearman rho", "str-2021/cv-fold-0", "| learning_rate | 2e-05 |",
                   "abdalla-etal-2023-makes", "reimers-gurevych-2019-sentence", "| Stance |"):
        assert needle in card, needle
    meta = ModelCard.load(out / "README.md").data
    # str-2021 has no Hub dataset id: no made-up `datasets:` / model-index type, and the card
    # says why; the Hub fields it can fill are there
    assert meta.datasets is None and meta.eval_results is None
    assert "has no Hub dataset id" in card
    assert (meta.language, meta.pipeline_tag, meta.library_name) == \
        (["en"], "sentence-similarity", "sentence-transformers")
    assert meta.metrics == ["pearsonr", "spearmanr", "mse"] and "bi-encoder" in meta.tags
    assert "pip install semrel" not in card and "SentenceTransformer(path)" in card
    assert meta.base_model is None and meta.license is None  # a random tiny BERT: unknown base
    model = PairEncoder.from_pretrained(out)
    assert model.kind == "bi" and not model.conditional


@pytest.mark.slow
def test_cv_runs_every_fold_and_prints_means(encoder, mirror, cache_dir, tmp_path, capsys):
    assert main(["cv", "--dataset", "str-2021", "--family", "cv", "--mirror", str(mirror),
                 "--cache-dir", str(cache_dir), "--encoder", "cross", "--model", str(encoder),
                 "--output", str(tmp_path), "--max-steps", "1", "--batch-size", "16"]) == 0
    printed = capsys.readouterr().out
    folds = re.findall(r"^cv-fold-(\d): Spearman (-?\d\.\d{4})", printed, flags=re.M)
    assert [f for f, _ in folds] == ["0", "1", "2", "3", "4"]
    mean = re.search(r"mean Spearman over 5 folds: (-?\d\.\d{4})", printed)
    assert float(mean.group(1)) == pytest.approx(np.mean([float(s) for _, s in folds]), abs=1e-3)
    for source in STR_SOURCES:  # the per-source means follow the overall mean
        assert re.search(rf"^\s+{source}\s+-?\d\.\d{{4}}$", printed[mean.end():], flags=re.M)
    assert all((tmp_path / f"cv-fold-{f}" / "README.md").is_file() for f in range(5))
    meta = ModelCard.load(tmp_path / "cv-fold-0" / "README.md").data  # a cross-encoder's card
    assert (meta.library_name, meta.pipeline_tag) == ("sentence-transformers", "text-ranking")
    assert "CrossEncoder(path)" in (tmp_path / "cv-fold-0" / "README.md").read_text()


@pytest.fixture()
def csts_dir(tmp_path):
    """Three C-STS-shaped CSVs (test labels hidden as -1)."""
    toy = toy_conditional_pairs()
    for split, rows in {"train": range(0, 48), "validation": range(48, 72),
                        "test": range(72, 96)}.items():
        frame = toy.select(rows).to_pandas().rename(columns={"score": "label"})
        if split == "test":
            frame["label"] = -1.0
        frame.to_csv(tmp_path / f"csts_{split}.csv", index=False)
    return tmp_path


@pytest.mark.slow
def test_conditional_fit_then_predict_writes_the_submission_json(encoder, csts_dir, tmp_path,
                                                                 capsys):
    model = tmp_path / "tri"
    assert main(["fit", "--dataset", "c-sts", "--data-dir", str(csts_dir), "--cache-dir",
                 str(tmp_path / "cache"), "--encoder", "tri", "--objective", "quad+mse",
                 "--model", str(encoder), "--output", str(model), "--max-steps", "2",
                 "--batch-size", "8"]) == 0
    assert "(validation): Spearman" in capsys.readouterr().out
    card = (model / "README.md").read_text()
    assert card.count("@inproceedings{deshpande-etal-2023-csts") == 1  # data and method: once
    assert "PairEncoder.from_pretrained(path)" in card and "pip install '.[train]'" in card
    assert ModelCard.load(model / "README.md").data.library_name == "semrel"  # AutoModel would drop the head
    submission = tmp_path / "submission.json"
    assert main(["predict", "--dataset", "c-sts", "--data-dir", str(csts_dir), "--cache-dir",
                 str(tmp_path / "cache"), "--model", str(model), "--output",
                 str(submission)]) == 0
    predictions = json.loads(submission.read_text())
    assert list(predictions) == [str(i) for i in range(24)]
    values = np.array(list(predictions.values()))
    assert np.isfinite(values).all() and values.min() >= 1.0 - 4.0 and values.max() <= 5.0


@pytest.mark.slow
def test_reannotated_csts_fit_predict_and_sentence_transformers(encoder, fixture_mirror, tmp_path,
                                                                capsys):
    """C-STS's open re-annotation (fixture zip): a conditional cross-encoder trains on its train
    split and is scored on validation (the -1 rows, validation_invalid, are not); `semrel predict`
    writes the JSON of any split, from the registry or the exported folder alike; the card says
    CrossEncoder and CrossEncoder gives the model's scores. A tri-encoder with the quadruplet
    objective omits the pair whose two conditions tie; its card says PairEncoder, not ST."""
    from sentence_transformers import CrossEncoder

    from semrel.dataset_scripts import load
    from semrel.publishing.export import build_dataset

    data = ["--dataset", "c-sts", "--config", "reannotated", "--mirror", str(fixture_mirror),
            "--cache-dir", str(tmp_path / "cache")]
    cross = tmp_path / "cross"
    assert main(["fit", *data, "--encoder", "cross", "--model", str(encoder), "--output", str(cross),
                 "--max-steps", "2", "--batch-size", "4"]) == 0
    assert "c-sts/reannotated (validation): Spearman" in capsys.readouterr().out
    metrics = json.loads((cross / "metrics.json").read_text())
    assert metrics["eval_split"] == "validation" and metrics["train_pairs"] == 12
    card = (cross / "README.md").read_text()
    assert "CrossEncoder(path)" in card and "zhang-etal-2025-annotating" in card
    assert ModelCard.load(cross / "README.md").data.library_name == "sentence-transformers"

    outputs = {}
    for split, n in (("validation", 6), ("validation_invalid", 2)):
        outputs[split] = tmp_path / f"{split}.json"
        assert main(["predict", *data, "--split", split, "--model", str(cross), "--output",
                     str(outputs[split])]) == 0
        predictions = json.loads(outputs[split].read_text())
        assert list(predictions) == [str(i) for i in range(n)]
        assert all(1.0 <= v <= 5.0 for v in predictions.values())
    rows = load("c-sts", "reannotated", mirror=fixture_mirror, cache_dir=tmp_path / "cache")["validation"]
    model = PairEncoder.from_pretrained(cross)
    ours = model.predict(rows["sentence1"], rows["sentence2"], rows["condition"])
    second = [f"{b} {model.tokenizer.sep_token} {c}" for b, c in zip(rows["sentence2"], rows["condition"],
                                                                      strict=True)]
    theirs = CrossEncoder(str(cross), device="cpu").predict(list(zip(rows["sentence1"], second, strict=True)))
    np.testing.assert_allclose(theirs, ours, atol=1e-5, rtol=0)
    np.testing.assert_allclose(list(json.loads(outputs["validation"].read_text()).values()),
                               1 + 4 * np.asarray(ours), atol=1e-5, rtol=0)

    export = build_dataset("c-sts", tmp_path / "hub", mirror=fixture_mirror, cache_dir=tmp_path / "cache")
    from_export = tmp_path / "from-export.json"
    assert main(["predict", "--dataset", str(export.folder), "--config", "reannotated", "--split",
                 "validation", "--model", str(cross), "--output", str(from_export),
                 "--cache-dir", str(tmp_path / "cache")]) == 0
    assert json.loads(from_export.read_text()) == json.loads(outputs["validation"].read_text())

    tri = tmp_path / "tri"
    assert main(["fit", *data, "--encoder", "tri", "--objective", "quad+mse", "--on-invalid", "omit",
                 "--model", str(encoder), "--output", str(tri), "--max-steps", "2", "--batch-size", "4"]) == 0
    assert json.loads((tri / "metrics.json").read_text())["n_omitted_groups"] == 1  # 3.0 under both conditions
    assert ModelCard.load(tri / "README.md").data.library_name == "semrel"
    assert "PairEncoder.from_pretrained(path)" in (tri / "README.md").read_text()


def test_labels_outside_the_score_range_stop_the_run(encoder, tmp_path):
    bad = datasets.Dataset.from_dict({"sentence1": ["a red star", "a blue star"],
                                      "sentence2": ["a red circle", "a red star"],
                                      "score": [0.5, 1.5]})
    datasets.DatasetDict({"train": bad, "test": bad}).save_to_disk(tmp_path / "bad")
    with pytest.raises(DataValidationError, match=r"row 2: score outside the declared score range"):
        run_argv(["fit", "--dataset", str(tmp_path / "bad"), "--score-range", "0", "1",
                  "--model", str(encoder), "--output", str(tmp_path / "out")])
    assert not (tmp_path / "out").exists()
    with pytest.raises(UsageError, match="^--score-range: must be given for a save_to_disk "
                                         "folder"):
        run_argv(["fit", "--dataset", str(tmp_path / "bad"), "--model", str(encoder),
                  "--output", str(tmp_path / "out")])


def test_packaged_minilm_is_checksum_verified(encoder, monkeypatch):
    path = minilm_path()
    assert known_base_model(path) == ("sentence-transformers/all-MiniLM-L6-v2", "apache-2.0")
    assert known_base_model(encoder) is None
    monkeypatch.setattr(pretrained, "MINILM_SHA256", "0" * 64)
    with pytest.raises(ValueError, match="sha256 .* != expected 0{64}"):
        minilm_path()


def test_quadruplet_run_names_a_broken_condition_group(encoder, csts_dir, tmp_path):
    train = csts_dir / "csts_train.csv"
    lines = train.read_text().splitlines(keepends=True)
    train.write_text("".join(lines + [lines[1]]))  # the first pair now has 3 conditions
    with pytest.raises(DataValidationError, match=r"c-sts/default/train: row 1: a condition "
                                                  r"group .* exactly 2 rows.*rows \[1, 2, 49\]"):
        run_argv(["fit", "--dataset", "c-sts", "--data-dir", str(csts_dir), "--cache-dir",
                  str(tmp_path / "cache"), "--encoder", "bi", "--objective", "quad", "--model",
                  str(encoder), "--output", str(tmp_path / "out"), "--max-steps", "1"])
    assert not (tmp_path / "out" / "model.safetensors").exists()
