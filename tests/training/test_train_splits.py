"""``train_splits`` (``semrel fit --train-splits train+validation``): a final model trained on
more than the train split, scored and chosen on none of the splits it learnt from."""

from __future__ import annotations

import json

import pytest

from semrel.cli import main
from semrel.dataset_scripts.pairs import load_pairs
from semrel.metrics.errors import ParameterError
from semrel.trainers.arguments import PairTrainingArguments
from semrel.trainers.fitting import eval_split_name, fit
from semrel.trainers.run_folder.seen import pair_hashes
from semrel.trainers.selection import load_dev, selection_arguments
from trainer_fixtures import small_args


def test_the_scored_split_is_the_first_not_trained_on_that_has_labels(folders):
    labelled = load_pairs(str(folders / "labelled"), score_range=(0, 1)).splits
    held_back = load_pairs(str(folders / "held-back"), score_range=(0, 1)).splits
    assert eval_split_name(labelled) == "validation"
    assert eval_split_name(labelled, ["train", "validation"]) == "test"
    assert eval_split_name(held_back, ["train", "validation"]) is None
    assert eval_split_name(labelled, ["train", "validation", "test"]) is None


@pytest.mark.slow
def test_a_run_on_train_and_validation_learns_both_and_is_scored_on_neither(encoder, folders,
                                                                            tmp_path):
    data = load_pairs(str(folders / "held-back"), score_range=(0, 1))
    out = tmp_path / "final"
    result = fit(data, encoder, small_args(out, train_splits="train+validation"))
    assert result.train_pairs == 64 + 24
    assert result.eval_split is None and not (out / "eval_predictions.json").exists()
    assert result.options["train_splits"] == "train+validation"
    parts = json.loads((out / "seen_pairs.json").read_text())["parts"]
    assert [(p["role"], p["split"]) for p in parts] == [("train", "train"), ("train", "validation")]
    validation = data.splits["validation"]
    assert parts[1]["pairs"] == pair_hashes(validation["sentence1"], validation["sentence2"])
    card = (out / "README.md").read_text()
    assert "train pairs: 88, the split(s) `train+validation`; evaluation split: none" in card
    assert "Not evaluated: trained on 88 pairs, the splits `train+validation`" in card

    labelled = load_pairs(str(folders / "labelled"), score_range=(0, 1))
    scored = fit(labelled, encoder, small_args(tmp_path / "scored", train_splits="train+validation"))
    assert scored.eval_split == "test" and scored.spearman == scored.spearman


def test_a_split_trained_on_cannot_choose_and_a_missing_one_is_named(encoder, folders, tmp_path):
    data = load_pairs(str(folders / "labelled"), score_range=(0, 1))
    dev = load_dev(str(folders / "labelled"), split="validation", score_range=(0, 1))
    out = tmp_path / "run"
    with pytest.raises(ParameterError, match=r"eval_split='validation': .*/validation, which this "
                                             r"run trains on \(train_splits=train\+validation\)"):
        fit(data, encoder, small_args(out, train_splits="train+validation", **selection_arguments()),
            eval_data=dev)
    with pytest.raises(ParameterError, match=r"train_splits='train\+dev': .* has no dev split to fit "
                                             r"on \(splits: \['train', 'validation', 'test'\]\)"):
        fit(data, encoder, small_args(out, train_splits="train+dev"))
    assert not out.exists()


@pytest.mark.parametrize("value", ["train+train", "train++validation", "", "train validation"])
def test_train_splits_outside_their_rule_name_the_parameter(value):
    with pytest.raises(ParameterError, match=r"train_splits=.*: must be split names joined by \+"):
        PairTrainingArguments(output_dir="unused", train_splits=value)


@pytest.mark.parametrize("value, words", [
    ("train+train", "--train-splits train+train: must be split names joined by +"),
    ("train+dev", "labelled has no dev split to fit on (splits: ['train', 'validation', 'test'])"),
])
def test_the_command_answers_a_bad_train_splits_in_one_line(encoder, folders, tmp_path, capsys,
                                                            value, words):
    status = main(["fit", "--dataset", str(folders / "labelled"), "--score-range", "0", "1",
                   "--model", str(encoder), "--output", str(tmp_path / "out"),
                   "--train-splits", value])
    err = capsys.readouterr().err
    assert status == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"semrel fit: error: --train-splits {value}: ") and words in err, err
    assert not (tmp_path / "out").exists()
