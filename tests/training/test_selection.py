"""Choosing a checkpoint on a dev split of other data (trainers.selection): the kept model is the
best one of the recorded curve by the named metric, and each bad input (an unknown metric, a dev
split without labels, a dev dataset of another score range, flags that need --eval-dataset) is
refused before training, in one line with exit 2 on the command line."""

from __future__ import annotations

import json

import datasets
import numpy as np
import pytest

from semrel.cli import main
from semrel.dataset_scripts.pairs import load_pairs
from semrel.metrics.errors import ParameterError
from semrel.trainers.fitting import fit
from semrel.trainers.prediction import predict
from semrel.trainers.selection import METRICS, check_metric, dev_split, load_dev, selection_arguments
from semrel.trainers.trainer import similarity_scores
from trainer_fixtures import small_args, toy_pairs


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """Training data (train 64, test 32 toy pairs on [0, 1]); dev data of other toy rows on the
    same scale, on [0, 5], and without labels; each a save_to_disk folder."""
    root = tmp_path_factory.mktemp("data")
    toy = toy_pairs().shuffle(seed=0)
    datasets.DatasetDict({"train": toy.select(range(64)),
                          "test": toy.select(range(64, 96))}).save_to_disk(root / "train")
    dev = toy.select(range(96, 120))
    datasets.DatasetDict({"dev": dev, "test": dev}).save_to_disk(root / "dev")
    datasets.DatasetDict({"dev": dev.map(lambda r: {"score": 5 * r["score"]})}).save_to_disk(
        root / "dev-0-5")
    unlabelled = dev.remove_columns("score").add_column("score", [None] * len(dev))
    datasets.DatasetDict({"test": unlabelled, "dev": dev}).save_to_disk(root / "unlabelled")
    return root


def test_metric_names_and_their_direction():
    assert check_metric("spearman") == check_metric("eval_spearman") == "spearman"
    with pytest.raises(ParameterError, match=r"metric_for_best_model='spearmn': must be one of "
                                             r"\('spearman', 'pearson', 'mse', 'loss'\)"):
        check_metric("spearmn")
    assert selection_arguments("mse")["greater_is_better"] is False
    assert selection_arguments()["greater_is_better"] is True
    assert selection_arguments(eval_steps=5)["save_steps"] == 5
    with pytest.raises(ParameterError, match="eval_steps=0: must be an integer >= 1"):
        selection_arguments(eval_steps=0)


def test_a_split_without_labels_cannot_choose(folders):
    data = load_pairs(str(folders / "unlabelled"), score_range=(0, 1))
    with pytest.raises(ParameterError, match=r"eval_split='test': .*/test has no gold scores "
                                             r"\(no score column, or a null score in all 24 rows"):
        dev_split(data, "test")
    assert dev_split(data).split == "dev"  # the default: dev, then validation, never test
    with pytest.raises(ParameterError, match="eval_split='tset': must be a split of"):
        dev_split(data, "tset")
    no_dev = load_pairs(str(folders / "train"), score_range=(0, 1))
    with pytest.raises(ParameterError, match="eval_split=None: must be given: .* has no dev or "
                                             "validation split"):
        dev_split(no_dev)


def test_fit_refuses_bad_selection_before_training(encoder, folders, tmp_path):
    data = load_pairs(str(folders / "train"), score_range=(0, 1))
    dev = load_dev(str(folders / "dev-0-5"), score_range=(0, 5))
    out = tmp_path / "run"
    with pytest.raises(ParameterError, match=r"eval_dataset='.*dev-0-5': has the native score "
                                             r"range \[0.0, 5.0\], the training data .* \[0.0, 1.0\]"):
        fit(data, encoder, small_args(out, **selection_arguments()), eval_data=dev)
    same = load_dev(str(folders / "dev"), score_range=(0, 1))
    with pytest.raises(ParameterError, match="eval_strategy='no': must be 'epoch' or 'steps'"):
        fit(data, encoder, small_args(out), eval_data=same)
    with pytest.raises(ParameterError, match="greater_is_better=True: must be False for metric "
                                             "'mse'"):
        fit(data, encoder, small_args(out, **{**selection_arguments("mse"),
                                              "greater_is_better": True}), eval_data=same)
    with pytest.raises(ParameterError, match="load_best_model_at_end=True: needs eval_data"):
        fit(data, encoder, small_args(out, **selection_arguments()))
    assert not out.exists()


SELECTION_MISTAKES = [  # (arguments after the base `fit` ones, the one line's words)
    (["--eval-dataset", "DEV", "--eval-score-range", "0", "1", "--metric-for-best", "spearmn"],
     "--metric-for-best spearmn: must be one of ('spearman', 'pearson', 'mse', 'loss')"),
    (["--metric-for-best", "mse"], "--metric-for-best mse: needs --eval-dataset"),
    (["--eval-split", "dev"], "--eval-split dev: needs --eval-dataset"),
    (["--eval-dataset", "DEV", "--eval-score-range", "0", "1", "--save-steps", "5"],
     "--save-steps 5: excludes --eval-dataset: checkpoints are saved at each evaluation"),
    (["--eval-dataset", "DEV", "--eval-score-range", "0", "1", "--eval-steps", "0"],
     "--eval-steps 0: must be an integer >= 1"),
    (["--eval-dataset", "DEV-0-5", "--eval-score-range", "0", "5"],
     "has the native score range [0.0, 5.0], the training data"),
    (["--eval-dataset", "DEV"], "--eval-score-range: must be given for a save_to_disk folder"),
    (["--eval-dataset", "UNLABELLED", "--eval-score-range", "0", "1", "--eval-split", "test"],
     "/test has no gold scores (no score column, or a null score in all 24 rows): a split without "
     "labels cannot choose a checkpoint"),
    (["--eval-dataset", "DEV", "--eval-score-range", "0", "1", "--eval-config", "eng"],
     "--eval-config eng: must be 'default'"),
    (["--eval-dataset", "no-such-data"], "--eval-dataset no-such-data: not a registry id"),
]


@pytest.mark.parametrize("change,words", SELECTION_MISTAKES,
                         ids=[" ".join(c) for c, _ in SELECTION_MISTAKES])
def test_cli_answers_a_selection_mistake_in_one_line(encoder, folders, tmp_path, capsys, change,
                                                     words):
    where = {"DEV": "dev", "DEV-0-5": "dev-0-5", "UNLABELLED": "unlabelled"}
    change = [str(folders / where[c]) if c in where else c for c in change]
    status = main(["fit", "--dataset", str(folders / "train"), "--score-range", "0", "1",
                   "--model", str(encoder), "--output", str(tmp_path / "out"), *change])
    err = capsys.readouterr().err
    assert status == 2, err[-2000:]
    assert len(err.strip().splitlines()) == 1, err
    assert words in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_the_kept_checkpoint_is_the_best_of_the_curve(encoder, folders, tmp_path, capsys):
    """5 epochs at a learning rate that overshoots: the dev Spearman peaks before the last
    epoch, and the saved model is the peak's (its dev predictions score the peak)."""
    out = tmp_path / "run"
    status = main(["fit", "--dataset", str(folders / "train"), "--score-range", "0", "1",
                   "--model", str(encoder), "--output", str(out), "--epochs", "5",
                   "--batch-size", "8", "--learning-rate", "1e-2", "--warmup", "0",
                   "--eval-dataset", str(folders / "dev"), "--eval-score-range", "0", "1",
                   "--metric-for-best", "spearman"])
    printed = capsys.readouterr().out
    assert status == 0
    selection = json.loads((out / "metrics.json").read_text())["selection"]
    curve, kept = selection["curve"], selection["kept"]
    assert [e["epoch"] for e in curve] == [1, 2, 3, 4, 5]
    assert kept["spearman"] == max(e["spearman"] for e in curve)
    assert kept["step"] != curve[-1]["step"], "the curve should peak before its end here"
    assert kept["spearman"] > curve[-1]["spearman"]
    assert selection["checkpoint"] == f"checkpoint-{kept['step']}"
    assert sorted(p.name for p in (out / "checkpoints").glob("checkpoint-*")) == \
        [selection["checkpoint"]]  # the best alone at the end
    dev = load_pairs(str(folders / "dev"), score_range=(0, 1))
    rho = similarity_scores(predict(out, dev, "dev"), np.asarray(dev.splits["dev"]["score"]))
    assert rho.spearman == pytest.approx(kept["spearman"], abs=1e-6)  # the saved model is the kept one
    stored = json.loads((out / "selection_predictions.json").read_text())
    assert stored["split"] == "dev" and len(stored["predictions"]) == 24
    card = (out / "README.md").read_text()
    assert "## Checkpoint selection" in card and f"| {kept['epoch']:g} (kept) | {kept['step']} |" in card
    assert f"kept epoch {kept['epoch']:g} ({selection['checkpoint']})" in printed
    run = json.loads((out / "checkpoints" / "semrel_run.json").read_text())
    assert run["eval_data"].endswith("dev/dev")


@pytest.mark.slow
def test_a_lower_is_better_metric_keeps_the_lowest(encoder, folders, tmp_path):
    data = load_pairs(str(folders / "train"), score_range=(0, 1))
    dev = load_dev(str(folders / "dev"), score_range=(0, 1))
    args = small_args(tmp_path / "run", max_steps=-1, num_train_epochs=4, learning_rate=1e-2,
                      **selection_arguments("mse", eval_steps=4))
    result = fit(data, encoder, args, eval_data=dev)
    curve, kept = result.selection["curve"], result.selection["kept"]
    assert [e["step"] for e in curve] == [4, 8, 12, 16, 20, 24, 28, 32]
    assert kept["mse"] == min(e["mse"] for e in curve)
    assert result.selection["metric"] == "mse" and METRICS["mse"] is False
    dev_scores = predict(tmp_path / "run", dev.data, "dev")
    assert float(np.mean((dev_scores - np.asarray(dev.rows["score"])) ** 2)) == \
        pytest.approx(kept["mse"], abs=1e-6)


def test_the_unlabelled_semrel_2024_test_cannot_choose(mirror, cache_dir):
    """The real case: SemRel-2024's Spanish test split was released without scores."""
    with pytest.raises(ParameterError, match=r"eval_split='test': semrel-2024/esp/test has no gold "
                                             r"scores \(.* a null score in all 600 rows\)"):
        load_dev("semrel-2024", "esp", "test", mirror=mirror, cache_dir=cache_dir)


def test_cv_takes_the_same_flags(encoder, folders, tmp_path, capsys):
    status = main(["cv", "--dataset", "str-2021", "--model", str(encoder), "--output",
                   str(tmp_path / "cv"), "--eval-dataset", str(folders / "dev"),
                   "--eval-score-range", "0", "1", "--metric-for-best", "kendall"])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1, err
    assert "--metric-for-best kendall: must be one of ('spearman', 'pearson', 'mse', 'loss')" in err
    assert not (tmp_path / "cv").exists()
