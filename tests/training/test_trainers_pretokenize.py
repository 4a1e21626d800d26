"""Pre-tokenised training: batches padded from ids tokenised once per dataset equal the
batches tokenised per batch, for every encoder kind; a training run gives the same losses."""

from __future__ import annotations

import datasets
import numpy as np
import pytest
import torch

from semrel.trainers.arguments import PairTrainingArguments
from semrel.trainers.data import PairCollator, prepare_pairs, pretokenize_pairs
from semrel.trainers.models import build_model, sequence_lengths
from semrel.trainers.trainer import PairTrainer
from trainer_fixtures import tiny_encoder, toy_conditional_pairs, toy_pairs

KINDS = [("cross", False), ("bi", False), ("cross", True), ("bi", True), ("tri", True)]


@pytest.fixture(scope="module")
def encoder_path(tmp_path_factory):
    return tiny_encoder(tmp_path_factory.mktemp("tiny-bert"))


def ragged_rows(conditional: bool) -> datasets.Dataset:
    """Pairs whose texts differ in token count (so padding matters), with a condition column
    when ``conditional``."""
    words = ["red", "blue circle", "the green square and a star", "a yellow star is a shape"]
    rows = {"sentence1": [], "sentence2": [], "score": []}
    for i, first in enumerate(words):
        for j, second in enumerate(words):
            rows["sentence1"].append(first)
            rows["sentence2"].append(second)
            rows["score"].append(float(i == j))
    if conditional:
        rows["condition"] = [("the colour" if k % 2 else "the shape and the colour")
                             for k in range(len(rows["score"]))]
    return prepare_pairs(datasets.Dataset.from_dict(rows), (0.0, 1.0), where="ragged")


@pytest.mark.parametrize("kind,conditional", KINDS)
def test_padded_pretokenized_batches_equal_tokenized_batches(encoder_path, kind, conditional):
    model = build_model(kind, encoder_path, conditional=conditional)
    text = ragged_rows(conditional)
    tokens = pretokenize_pairs(text, model)
    for batch in ([0, 5, 9], [3], list(range(len(text)))):
        expected = PairCollator(model)([text[i] for i in batch])
        got = PairCollator(model)([tokens[i] for i in batch])
        assert set(got) == set(expected)
        for key in expected:
            assert torch.equal(got[key], expected[key]), key
    per_pair = len(tokens[0]["input_ids"])
    assert per_pair == {"cross": 1, "bi": 2, "tri": 3}[kind]
    assert np.array_equal(sequence_lengths(tokens["input_ids"]),
                          model.token_lengths(text["sentence1"], text["sentence2"],
                                              text["condition"] if conditional else None))


def test_width_buckets_round_up_and_keep_the_scores(encoder_path):
    model = build_model("bi", encoder_path).eval()
    tokens = pretokenize_pairs(ragged_rows(False), model)
    rows = [tokens[i] for i in range(6)]
    exact, bucketed = PairCollator(model)(rows), PairCollator(model, 16)(rows)
    assert bucketed["input_ids"].shape[1] % 16 == 0
    assert bucketed["input_ids"].shape[1] > exact["input_ids"].shape[1]
    exact.pop("labels"), bucketed.pop("labels")
    with torch.no_grad():
        assert torch.allclose(model(**exact).scores, model(**bucketed).scores, atol=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("kind,objective,toy", [("bi", "mse", "plain"), ("cross", "mse", "plain"),
                                                ("tri", "quad+mse", "conditional")])
def test_pretokenized_training_gives_the_same_losses(encoder_path, tmp_path, kind, objective, toy):
    data = (prepare_pairs(toy_pairs(), (0.0, 1.0), where="toy") if toy == "plain"
            else prepare_pairs(toy_conditional_pairs(), (1.0, 5.0), where="toy"))
    losses = []
    for pretokenized in (False, True):
        model = build_model(kind, encoder_path, seed=3, conditional=toy != "plain")
        args = PairTrainingArguments(str(tmp_path / str(pretokenized)), encoder=kind,
                                     objective=objective, num_train_epochs=2,
                                     per_device_train_batch_size=8, learning_rate=1e-3,
                                     logging_strategy="steps", logging_steps=1,
                                     train_sampling_strategy="group_by_length")
        train = pretokenize_pairs(data, model) if pretokenized else data
        trainer = PairTrainer(model, args, train_dataset=train)
        trainer.train()
        losses.append([e["loss"] for e in trainer.state.log_history if "loss" in e])
    assert len(losses[0]) > 4
    assert losses[1] == pytest.approx(losses[0], rel=1e-5, abs=1e-7)
