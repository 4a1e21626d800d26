"""Every encoder x objective trains a tiny random BERT (the loss falls on a learnable toy set),
and save -> reload gives identical predictions."""

from __future__ import annotations

import datasets
import numpy as np
import pytest
import torch

from semrel.metrics.errors import ParameterError
from semrel.trainers.arguments import PairTrainingArguments
from semrel.trainers.data import PairCollator, condition_groups, prepare_pairs
from semrel.trainers.losses import LOSSES, PairCoSENTLoss, PairLoss, QuadrupletLoss, build_loss
from semrel.trainers.models import PairEncoder, build_model
from semrel.trainers.trainer import PairTrainer
from trainer_fixtures import small_args, tiny_encoder, toy_conditional_pairs, toy_pairs

CASES = [  # (encoder, options, objective, toy set)
    ("cross", {}, "mse", "plain"),
    ("bi", {}, "mse", "plain"),
    ("bi", {"pooling": "cls"}, "mse", "plain"),
    ("bi", {}, "cosent", "plain"),
    ("cross", {}, "mse", "with-condition"),
    ("bi", {}, "mse", "conditional"),
    ("bi", {}, "quad", "conditional"),
    ("bi", {}, "quad+mse", "conditional"),
    ("tri", {"combine": "hadamard"}, "mse", "conditional"),
    ("tri", {"combine": "hadamard"}, "quad", "conditional"),
    ("tri", {"combine": "concat"}, "quad+mse", "conditional"),
]


@pytest.fixture(scope="module")
def encoder_path(tmp_path_factory):
    return tiny_encoder(tmp_path_factory.mktemp("tiny-bert"))


@pytest.fixture(scope="module")
def toy():
    """plain pairs; the same with a constant condition (the conditional input path of a
    cross-encoder, whose toy XOR of condition and attributes a tiny model does not learn in a few
    steps); C-STS-shaped (high, low) condition groups."""
    return {"plain": prepare_pairs(toy_pairs(), (0.0, 1.0), where="toy"),
            "with-condition": prepare_pairs(toy_pairs(condition="the colour"), (0.0, 1.0),
                                            where="toy-with-condition"),
            "conditional": prepare_pairs(toy_conditional_pairs(), (1.0, 5.0),
                                         where="toy-conditional")}


def full_batch_loss(model, data, objective) -> float:
    """The objective on the whole toy set, in eval mode, rows in (high, low) group order."""
    if "quad" in objective:
        data = data.select(condition_groups(data, where="toy").rows.reshape(-1))
    batch = PairCollator(model)([data[i] for i in range(len(data))])
    labels = batch.pop("labels")
    model.eval()
    with torch.no_grad():
        out = model(**batch, return_embeddings="quad" in objective)
    return float(build_loss(objective)(out.scores, labels, out.embeddings1, out.embeddings2))


@pytest.mark.slow
@pytest.mark.parametrize("encoder,options,objective,toy_set", CASES,
                         ids=[f"{e}-{o.get('combine', o.get('pooling', ''))}-{obj}-{t}"
                              for e, o, obj, t in CASES])
def test_loss_falls_and_reload_is_identical(encoder_path, toy, tmp_path, encoder, options,
                                            objective, toy_set):
    data = toy[toy_set]
    conditional = "condition" in data.column_names
    model = build_model(encoder, encoder_path, conditional=conditional, **options)
    before = full_batch_loss(model, data, objective)
    args = PairTrainingArguments(str(tmp_path / "run"), encoder=encoder, objective=objective,
                                 per_device_train_batch_size=8, learning_rate=3e-3,
                                 max_steps=25, warmup_steps=0.0,
                                 train_sampling_strategy="random", **options)
    PairTrainer(model, args, train_dataset=data).train()
    after = full_batch_loss(model, data, objective)
    assert after < 0.85 * before, (before, after)

    model.save_pretrained(tmp_path / "saved")
    again = PairEncoder.from_pretrained(tmp_path / "saved")
    assert type(again) is type(model) and again.options() == model.options()
    condition = data["condition"] if conditional else None
    first = model.predict(data["sentence1"], data["sentence2"], condition)
    np.testing.assert_array_equal(first, again.predict(data["sentence1"], data["sentence2"],
                                                       condition))


def test_plain_bi_encoder_loads_as_sentence_transformer(encoder_path, toy, tmp_path):
    from sentence_transformers import SentenceTransformer

    data = toy["plain"]
    model = build_model("bi", encoder_path)
    model.save_pretrained(tmp_path / "bi")
    st = SentenceTransformer(str(tmp_path / "bi"), device="cpu")
    e1 = st.encode(data["sentence1"], convert_to_tensor=True)
    e2 = st.encode(data["sentence2"], convert_to_tensor=True)
    ours = model.predict(data["sentence1"], data["sentence2"])
    np.testing.assert_allclose(torch.cosine_similarity(e1, e2).numpy(), ours, atol=1e-5)


def test_a_default_prompt_prefixes_each_sentence_and_travels_with_the_model(encoder_path, toy,
                                                                             tmp_path):
    """A starting folder whose sentence-transformers config names a default prompt (e5's "query: ")
    prefixes each sentence, in our predict and in SentenceTransformer.encode of the saved folder."""
    import json
    import shutil

    from sentence_transformers import SentenceTransformer

    data = toy["plain"]
    prompted = shutil.copytree(encoder_path, tmp_path / "prompted")
    (prompted / "config_sentence_transformers.json").write_text(json.dumps(
        {"prompts": {"query": "the ", "passage": "a "}, "default_prompt_name": "query"}))
    model = build_model("bi", prompted)
    assert model.options()["prompt"] == "the "
    plain = build_model("bi", encoder_path)
    assert "prompt" not in plain.options()
    s1, s2 = data["sentence1"], data["sentence2"]
    np.testing.assert_allclose(model.predict(s1, s2),
                               plain.predict([f"the {s}" for s in s1], [f"the {s}" for s in s2]),
                               atol=1e-6)
    assert not np.allclose(model.predict(s1, s2), plain.predict(s1, s2), atol=1e-4)
    model.save_pretrained(tmp_path / "bi")
    assert PairEncoder.from_pretrained(tmp_path / "bi").prompt == "the "
    st = SentenceTransformer(str(tmp_path / "bi"), device="cpu")
    e1, e2 = (st.encode(s, convert_to_tensor=True) for s in (s1, s2))
    np.testing.assert_allclose(torch.cosine_similarity(e1, e2).numpy(), model.predict(s1, s2),
                               atol=1e-5)


def test_conditional_models_need_a_condition(encoder_path, toy):
    model = build_model("bi", encoder_path, conditional=True)
    with pytest.raises(ValueError, match="conditional"):
        model.tokenize(["a red star"], ["a red circle"])
    with pytest.raises(ValueError, match="tri-encoder needs a condition"):
        build_model("tri", encoder_path, conditional=False)
    with pytest.raises(ParameterError, match="kind='quad': must be one of"):
        build_model("quad", encoder_path)


def test_quadruplet_objective_refuses_cross_encoders_and_odd_batches(encoder_path, toy, tmp_path):
    args = PairTrainingArguments(str(tmp_path), encoder="cross", objective="quad")
    with pytest.raises(ParameterError, match="objective='quad': needs a bi- or tri-encoder"):
        PairTrainer(build_model("cross", encoder_path, conditional=True), args)
    odd = PairTrainingArguments(str(tmp_path), objective="quad+mse", per_device_train_batch_size=7)
    with pytest.raises(ParameterError, match="per_device_train_batch_size=7: must be even"):
        PairTrainer(build_model("bi", encoder_path, conditional=True), odd)


def test_the_arguments_must_describe_the_model(encoder_path, tmp_path):
    with pytest.raises(ParameterError, match="encoder='bi': must name the model's kind: the "
                                             "model is a cross-encoder"):
        PairTrainer(build_model("cross", encoder_path), PairTrainingArguments(str(tmp_path)))
    with pytest.raises(ParameterError, match="pooling='mean': must match the model's pooling"):
        PairTrainer(build_model("bi", encoder_path, pooling="cls"),
                    PairTrainingArguments(str(tmp_path)))
    with pytest.raises(ParameterError, match="remove_unused_columns=True: must be False"):
        PairTrainer(build_model("bi", encoder_path),
                    PairTrainingArguments(str(tmp_path), remove_unused_columns=True))
    with pytest.raises(TypeError, match="needs PairTrainingArguments"):
        from transformers import TrainingArguments

        PairTrainer(build_model("bi", encoder_path), TrainingArguments(str(tmp_path)))


def test_reload_refuses_a_plain_transformer_folder(encoder_path):
    with pytest.raises(FileNotFoundError, match="semrel_encoder.json"):
        PairEncoder.from_pretrained(encoder_path)


def test_quadruplet_batches_hold_whole_high_low_groups(encoder_path, toy, tmp_path):
    data = toy["conditional"]
    model = build_model("bi", encoder_path, conditional=True)
    args = PairTrainingArguments(str(tmp_path), objective="quad", per_device_train_batch_size=6)
    trainer = PairTrainer(model, args, train_dataset=data)
    batches = list(trainer.get_train_dataloader())
    assert sum(len(b["labels"]) for b in batches) == len(data)
    for batch in batches:
        labels, ids = batch["labels"], batch["input_ids"]
        assert len(labels) % 2 == 0 and (labels[0::2] > labels[1::2]).all()
        n = len(labels)  # rows 0..n-1 are sentence1 (with condition), n..2n-1 sentence2
        first = [model.tokenizer.decode(i, skip_special_tokens=True).split(" the ")[0]
                 for i in ids[:n]]
        assert first[0::2] == first[1::2]  # both rows of a group: the same sentence pair


@pytest.mark.parametrize("objective", ["mse", "quad", "quad+mse", "cosent"])
def test_trainer_optimises_the_chosen_objective(encoder_path, toy, tmp_path, objective):
    data = toy["conditional"]
    model = build_model("bi", encoder_path, conditional=True)  # no dropout: deterministic
    trainer = PairTrainer(model, PairTrainingArguments(str(tmp_path), objective=objective,
                                                       per_device_train_batch_size=8),
                          train_dataset=data)
    batch = next(iter(trainer.get_train_dataloader()))
    model.train()
    got = trainer.compute_loss(model, dict(batch)).item()
    labels = batch.pop("labels")
    out = model(**batch, return_embeddings=True)
    expected = build_loss(objective)(out.scores, labels, out.embeddings1,
                              out.embeddings2).item()
    assert got == pytest.approx(expected, rel=1e-6)
    if objective != "mse":  # and it is not the MSE
        assert got != pytest.approx(build_loss("mse")(out.scores, labels).item(), rel=1e-3)


class ToyL1Loss(PairLoss):
    """``mean(|s − y|)``: a loss no table names, given straight to PairTrainer; counts its calls."""

    name = "toy-l1"

    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, scores, labels, embeddings1=None, embeddings2=None):
        self.calls += 1
        return (scores.float() - labels.float()).abs().mean()


@pytest.mark.parametrize("loss, expected", [
    (ToyL1Loss(), lambda s, y: (s - y).abs().mean()),
    (PairCoSENTLoss(scale=5.0), lambda s, y: PairCoSENTLoss(scale=5.0)(s, y)),  # not the table's scale 20
])
def test_the_trainer_delegates_to_the_loss_it_is_given(encoder_path, toy, tmp_path, loss, expected):
    model = build_model("bi", encoder_path)
    trainer = PairTrainer(model, PairTrainingArguments(str(tmp_path), per_device_train_batch_size=8),
                          loss=loss, train_dataset=toy["plain"])
    batch = next(iter(trainer.get_train_dataloader()))
    model.train()
    got = trainer.compute_loss(model, dict(batch)).item()
    labels = batch.pop("labels")
    assert got == pytest.approx(expected(model(**batch).scores.float(), labels.float()).item(), rel=1e-6)
    mse = build_loss("mse")(model(**batch).scores, labels).item()  # args.objective's loss
    assert got != pytest.approx(mse, rel=1e-3)


@pytest.mark.parametrize("encoder, loss, error, message", [
    ("cross", QuadrupletLoss(), ParameterError, "loss='quad': needs a bi- or tri-encoder (one vector per "
                                                "sentence); a cross-encoder has none"),
    ("bi", torch.nn.MSELoss(), TypeError, "PairTrainer's loss must be a PairLoss (semrel.trainers.losses), "
                                          "got MSELoss"),
])
def test_a_loss_the_model_cannot_train_is_refused(encoder_path, tmp_path, encoder, loss, error, message):
    with pytest.raises(error) as caught:
        PairTrainer(build_model(encoder, encoder_path), PairTrainingArguments(str(tmp_path), encoder=encoder),
                    loss=loss)
    assert str(caught.value) == message


@pytest.mark.slow  # trains two steps
def test_a_new_loss_trains_without_a_table_entry(encoder_path, toy, tmp_path):
    loss = ToyL1Loss()
    model = build_model("bi", encoder_path)
    PairTrainer(model, small_args(tmp_path, train_sampling_strategy="random"), loss=loss,
                train_dataset=toy["plain"]).train()
    assert "toy-l1" not in LOSSES and loss.calls == 2  # one call per training step
    assert model.card_facts.options["objective"] == "toy-l1"  # the card names the loss it trained with


def test_length_grouped_training_batches_pad_less(encoder_path, tmp_path):
    words = ["a red star", "the blue green yellow red circle square star triangle and a shape"]
    texts = [words[i % 2] for i in range(256)]  # half the pairs short, half long
    data = prepare_pairs(datasets.Dataset.from_dict({
        "sentence1": texts, "sentence2": texts, "score": [0.5] * 256}), (0.0, 1.0),
        where="toy")
    model = build_model("bi", encoder_path)
    lengths = model.token_lengths(data["sentence1"], data["sentence2"])
    assert set(lengths.tolist()) == {5, 14}  # [CLS] + words + [SEP]; a pair: its longest text
    widths = {strategy: [b["input_ids"].shape[1] for b in PairTrainer(
        model, PairTrainingArguments(str(tmp_path), per_device_train_batch_size=8,
                                     train_sampling_strategy=strategy),
        train_dataset=data).get_train_dataloader()] for strategy in ("random", "group_by_length")}
    widths = {False: widths["random"], True: widths["group_by_length"]}
    assert len(widths[True]) == len(widths[False]) == 32
    # P(8 random pairs all short) = 1/256; sorted windows of 64 pairs give several short batches
    assert widths[False].count(5) <= 2 and widths[True].count(5) >= 8
    cross = build_model("cross", encoder_path)
    assert cross.token_lengths(["a red star"], ["the blue circle"]).tolist() == [9]


def cross_encoder_scores(folder, model, data, conditional):
    """(ours, reloaded by PairEncoder, stock sentence-transformers CrossEncoder) on ``data``."""
    from sentence_transformers import CrossEncoder

    model.save_pretrained(folder)
    s1, s2 = data["sentence1"], data["sentence2"]
    condition = data["condition"] if conditional else None
    second = ([f"{b} {model.tokenizer.sep_token} {c}" for b, c in zip(s2, condition, strict=True)]
              if conditional else s2)
    return (model.predict(s1, s2, condition),
            PairEncoder.from_pretrained(folder).predict(s1, s2, condition),
            CrossEncoder(str(folder), device="cpu").predict(list(zip(s1, second, strict=True)), batch_size=64))


@pytest.mark.slow
@pytest.mark.parametrize("conditional", [False, True])
def test_trained_cross_encoder_scores_alike_in_sentence_transformers(encoder_path, toy, tmp_path,
                                                                     conditional):
    """The saved folder is a one-label sequence-classification model with a sigmoid: stock
    ``sentence_transformers.CrossEncoder`` loads the trained head and gives our scores."""
    data = toy["with-condition" if conditional else "plain"]
    model = build_model("cross", encoder_path, conditional=conditional)
    untrained = model.predict(data["sentence1"], data["sentence2"],
                              data["condition"] if conditional else None)
    args = PairTrainingArguments(str(tmp_path / "run"), encoder="cross",
                                 per_device_train_batch_size=8, learning_rate=3e-3, max_steps=25,
                                 warmup_steps=0.0)
    PairTrainer(model, args, train_dataset=data).train()
    ours, again, theirs = cross_encoder_scores(tmp_path / "trained", model, data, conditional)
    assert np.abs(ours - untrained).max() > 1e-2  # the trained head, not a fresh one
    np.testing.assert_allclose(theirs, ours, atol=1e-5, rtol=0)
    np.testing.assert_allclose(again, ours, atol=1e-6, rtol=0)
    # the tiny random BERT's [CLS] barely varies between inputs: spread its weights so the
    # scores spread too, and compare again (pooling or head differences would show here)
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn(p.shape, generator=generator))
    ours, again, theirs = cross_encoder_scores(tmp_path / "spread", model, data, conditional)
    assert np.ptp(ours) > 0.05
    np.testing.assert_allclose(theirs, ours, atol=1e-5, rtol=0)
    np.testing.assert_allclose(again, ours, atol=1e-6, rtol=0)


def test_an_old_cross_encoder_folder_is_refused_clearly(encoder_path, tmp_path):
    model = build_model("cross", encoder_path)
    model.save_pretrained(tmp_path / "old")
    (tmp_path / "old" / "semrel_head.safetensors").write_bytes(b"")  # the pre-0.2 layout
    with pytest.raises(ValueError, match="older semrel.*train it again"):
        PairEncoder.from_pretrained(tmp_path / "old")


def test_a_missing_model_folder_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such model folder"):
        PairEncoder.from_pretrained(tmp_path / "nope")


def test_encoder_kinds_come_from_one_registry():
    from semrel.trainers.models import ENCODER_KINDS, MODEL_CLASSES

    assert ENCODER_KINDS == tuple(MODEL_CLASSES) == ("cross", "bi", "tri")
    assert all(cls.description and cls.kind == kind for kind, cls in MODEL_CLASSES.items())
