"""Offline measures and sentiment scorers of crowd-sts (maintained implementations, real models)."""

import numpy as np
import pytest
from transformers import BertConfig, BertForSequenceClassification, BertTokenizer, pipeline

from semrel.dataset_scripts import pretrained
from semrel.dataset_scripts.crowd_sts import measures as m


def test_lexical_measures_known_values():
    s1 = ["the cat sat on the mat", "a b c d"]
    s2 = ["the cat sat on the mat", "a b x y"]
    assert m.word_overlap(s1, s2).tolist() == [1.0, pytest.approx(2 / 6)]
    assert m.bleu1(["i love this place so much"], ["i hate this place so much"])[0] == pytest.approx(5 / 6)
    assert m.bleu(s1, s2)[0] == pytest.approx(1.0) and 0 < m.bleu(s1, s2)[1] < 0.5
    assert m.chrf(s1, s2)[0] == pytest.approx(1.0) and m.chrf(s1, s2)[1] < 1
    r = m.rouge(s1, s2)
    assert r["rouge1"].tolist() == [1.0, 0.5] and r["rouge2"][1] == pytest.approx(1 / 3)
    pairs = (["a b c", "the cat sat", "x"], ["d e", "the cat sat on the mat", "x y z"])
    np.testing.assert_allclose(m.bleu1(*pairs), m.bleu_and_bleu1(*pairs)[1])
    assert m.bleu1(*pairs)[0] == 0.0  # no matching unigram: unsmoothed
    with pytest.raises(ValueError, match="row 0: no word token"):
        m.word_overlap(["..."], ["!"])
    with pytest.raises(ValueError, match="1 first sentences but 2 second"):
        m.bleu(["a"], ["a", "b"])


def test_minilm_cosine_with_verified_weights():
    path = m.minilm_model_path()
    assert path is not None and (path / "model.safetensors").is_file()
    cos = m.minilm_cosine(["A man is playing a guitar.", "A man is playing a guitar."],
                          ["A man is playing a guitar.", "The stock market fell sharply."])
    assert cos[0] == pytest.approx(1.0, abs=1e-5) and cos[1] < 0.3


@pytest.fixture(scope="module")
def tiny_pipeline(tmp_path_factory):
    """A real transformers sentiment pipeline over a tiny random BERT (no Hub access)."""
    folder = tmp_path_factory.mktemp("tiny_sentiment")
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "i", "love",
                                "hate", "this", "place"]) + "\n")
    BertTokenizer(vocab_file=str(vocab)).save_pretrained(folder)
    config = BertConfig(vocab_size=10, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, id2label={0: "NEGATIVE", 1: "POSITIVE"},
                        label2id={"NEGATIVE": 0, "POSITIVE": 1})
    BertForSequenceClassification(config).save_pretrained(folder)
    return pipeline("sentiment-analysis", model=str(folder), device=-1)


def test_pipeline_scores_are_signed_top_probabilities(tiny_pipeline):
    texts = ["i love this place", "i hate this place", "this"]
    scores = m.score_sentiment(texts, m.pipeline_sentiment(tiny_pipeline))
    expected = [(1 if p["label"] == "POSITIVE" else -1) * p["score"] for p in tiny_pipeline(texts)]
    np.testing.assert_allclose(scores, expected)
    assert np.all(np.abs(scores) >= 0.5) and np.all(np.abs(scores) <= 1)


def test_pipeline_unknown_label_is_an_error(tiny_pipeline):
    scorer = m.pipeline_sentiment(tiny_pipeline, label_signs={"GOOD": 1, "BAD": -1})
    with pytest.raises(ValueError, match="not in label_signs"):
        scorer(["i love this place"])


def test_vader_compound_in_range():
    scores = m.score_sentiment(["i love this place so much !", "i hate this place", "the mat"])
    assert scores[0] > 0.5 and scores[1] < -0.5 and scores[2] == 0.0


def test_minilm_weights_are_checked(monkeypatch):
    monkeypatch.setattr(pretrained, "MINILM_SHA256", "0" * 64)
    m.minilm_model_path.cache_clear()
    try:
        with pytest.raises(ValueError, match="model.safetensors: sha256 .* != expected 0{64}"):
            m.minilm_model_path()
    finally:
        m.minilm_model_path.cache_clear()


@pytest.mark.slow  # builds the crowd-sts annotators config and runs a model over every pair
def test_sentiment_model_config_runs_the_pipeline_on_real_data(tiny_pipeline, mirror, cache_dir):
    from semrel.dataset_scripts import builder, load

    folder = tiny_pipeline.model.name_or_path
    annotators = load("crowd-sts", "annotators", mirror=mirror, cache_dir=cache_dir,
                      sentiment_model=folder)["train"]
    default = builder("crowd-sts", "annotators", cache_dir=cache_dir)
    assert builder("crowd-sts", "annotators", cache_dir=cache_dir,
                   sentiment_model=folder).cache_dir != default.cache_dir
    # a random tiny classifier scores about ±0.5: no pair reaches the 1.9 gap, nobody is flagged
    assert len(annotators) == 463 and not any(annotators["flagged_sentiment"])
    assert sum(annotators["flagged_low_variance"]) == 134
