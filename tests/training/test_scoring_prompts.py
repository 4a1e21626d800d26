"""A semrel run saved with a prompt (e5-small's ``"query: "``) is scored by ``load_scorer`` as
the run itself predicts: each sentence after the prompt, the condition as it is; the scores of
``semrel benchmark``, ``predict`` and ``ensemble`` equal ``PairEncoder.predict``'s, and those
of the same weights read without the prompt differ."""

from __future__ import annotations

import numpy as np
import pytest

from semrel.trainers.models import PairEncoder, build_model
from semrel.trainers.scoring import load_scorer
from trainer_fixtures import tiny_encoder, toy_pairs

PROMPT = "query: "
CONDITION = "the colour"


@pytest.fixture(scope="module")
def encoder(tmp_path_factory):
    rows = toy_pairs()
    texts = [*rows["sentence1"], *rows["sentence2"], PROMPT, CONDITION]
    return tiny_encoder(tmp_path_factory.mktemp("prompted") / "encoder", texts=texts)


@pytest.mark.parametrize("kind, conditional", [("bi", False), ("bi", True), ("tri", True), ("cross", False)])
def test_a_prompted_runs_scores_are_its_own_predictions(encoder, tmp_path, kind, conditional):
    folder = build_model(kind, encoder, seed=1, prompt=PROMPT, **({"conditional": True} if conditional else {})
                         ).save_pretrained(tmp_path / "run")
    rows = toy_pairs().select(range(0, 120, 5))
    s1, s2 = list(rows["sentence1"]), list(rows["sentence2"])
    condition = [CONDITION] * len(s1) if conditional else None
    model = PairEncoder.from_pretrained(folder)
    assert model.prompt == PROMPT
    expected = model.predict(s1, s2, condition)
    scorer = load_scorer(str(folder), cache_dir=tmp_path / "scores")
    try:
        assert np.allclose(scorer.scored(s1, s2, condition).values, expected, atol=1e-5)
        if kind == "bi" and not conditional:  # a sentence's embedding, as the model makes it
            assert np.allclose(scorer.encode(s1), _embedded(model, s1), atol=1e-5)
    finally:
        scorer.close()
    if kind != "cross":  # an untrained cross-encoder's head scores every pair 0.5024 ± 1e-5, prompt or not
        model.prompt = ""
        assert not np.allclose(model.predict(s1, s2, condition), expected, atol=1e-3)  # the prompt matters here


def _embedded(model, texts):
    """Each text's pooled embedding after the model's prompt."""
    import torch

    batch = model.tokenizer([model.prompt + t for t in texts], truncation=True, max_length=model.max_length,
                            padding=True, return_tensors="pt")
    with torch.inference_mode():
        return model.embed(**batch).numpy()
