"""Any model as a pair scorer: every kind scores as its own library does, each distinct text is
computed once, the disk cache serves a second run whole and survives an interrupted one, and
truncation is counted."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest

from semrel.metrics.errors import ParameterError
from semrel.trainers.models import PairEncoder
from semrel.trainers.scoring import load_scorer
from semrel.trainers.scoring.base import cosine
from semrel.trainers.scoring.cache import UnitCache
from trainer_fixtures import saved_runs, toy_pairs

TOY = toy_pairs()
S1, S2 = TOY["sentence1"][:40], TOY["sentence2"][:40]


def test_a_sentence_transformer_scores_the_cosine_of_its_own_embeddings(kinds):
    from sentence_transformers import SentenceTransformer

    scorer = load_scorer(str(kinds["bi-encoder"]), cache_dir=None)
    model = SentenceTransformer(str(kinds["bi-encoder"]), device="cpu")
    expected = cosine(model.encode(S1), model.encode(S2))
    assert scorer.kind == "bi-encoder" and scorer.scale == "cosine"
    np.testing.assert_allclose(scorer.score(S1, S2), expected, atol=1e-6)
    np.testing.assert_allclose(scorer.encode(S1[:3]), model.encode(S1[:3]), atol=1e-6)


@pytest.mark.parametrize(("prompt", "truncate_dim"), [("", None), ("query: ", None), ("", 16)])
def test_a_sentence_transformer_batch_is_its_encode_bit_for_bit(kinds, prompt, truncate_dim):
    scorer = load_scorer(str(kinds["bi-encoder"]), cache_dir=None)
    scorer.ensure_loaded()
    scorer.prompt = prompt  # tokenised with the prompt, as encode does with it
    scorer.model.truncate_dim = truncate_dim
    texts = ["a", "a red circle on a blue square", "two", "a red circle", "the same text", "the same text"]
    np.testing.assert_array_equal(scorer.compute(scorer.tokenized([(t,) for t in texts])),
                                  scorer.model.encode(texts, batch_size=len(texts), prompt=prompt or None))


class _InOrder:
    """A stand-in for the helper thread: each batch tokenised when it is asked for, in this thread."""

    def __init__(self, *args, **kwargs):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def submit(self, work, *args):
        from concurrent.futures import Future

        done = Future()
        done.set_result(work(*args))
        return done


@pytest.mark.parametrize("kind", ["bi-encoder", "transformer", "semrel-bi", "semrel-cross", "cross-encoder"])
def test_batches_tokenised_ahead_give_the_values_of_batches_made_in_turn(kinds, kind, monkeypatch):
    ahead = load_scorer(str(kinds[kind]), cache_dir=None, batch_size=4)
    ahead.precompute(S1, S2)
    monkeypatch.setattr("semrel.trainers.scoring.base.ThreadPoolExecutor", _InOrder)
    in_turn = load_scorer(str(kinds[kind]), cache_dir=None, batch_size=4)
    in_turn.precompute(S1, S2)
    assert ahead._memory.keys() == in_turn._memory.keys() and len(ahead._memory) > 4 * 3
    for key, (tokens, value) in ahead._memory.items():
        assert tokens == in_turn._memory[key][0]
        np.testing.assert_array_equal(value, in_turn._memory[key][1])


def test_a_plain_transformer_is_mean_pooled(kinds):
    import torch
    from transformers import AutoModel, AutoTokenizer

    scorer = load_scorer(str(kinds["transformer"]), cache_dir=None)
    tokenizer, model = (AutoTokenizer.from_pretrained(kinds["transformer"]),
                        AutoModel.from_pretrained(kinds["transformer"]))
    batch = tokenizer(S1[:5], padding=True, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1)
    expected = ((hidden * mask).sum(1) / mask.sum(1)).numpy()
    assert scorer.kind == "transformer" and scorer.facts["pooling"] == "mean"
    np.testing.assert_allclose(scorer.encode(S1[:5]), expected, atol=1e-5)


def test_a_cross_encoder_scores_as_sentence_transformers_does(kinds):
    from sentence_transformers import CrossEncoder

    scorer = load_scorer(str(kinds["cross-encoder"]), cache_dir=None)
    expected = CrossEncoder(str(kinds["cross-encoder"]), device="cpu").predict(list(zip(S1, S2, strict=True)))
    assert scorer.kind == "cross-encoder" and scorer.scale == "label"  # its sigmoid
    np.testing.assert_allclose(scorer.score(S1, S2), expected, atol=1e-6)


@pytest.mark.parametrize("kind", ["bi", "cross", "tri"])
def test_a_semrel_run_scores_as_it_predicts(kinds, kind):
    scorer = load_scorer(str(kinds[f"semrel-{kind}"]), cache_dir=None)
    model = PairEncoder.from_pretrained(kinds[f"semrel-{kind}"])
    condition = ["the colour"] * len(S1) if kind == "tri" else None
    assert scorer.kind == "semrel" and scorer.conditional == (kind == "tri")
    np.testing.assert_allclose(scorer.score(S1, S2, condition), model.predict(S1, S2, condition), atol=1e-5)
    if kind == "tri":
        with pytest.raises(ValueError, match="is a conditional model: give a condition column"):
            scorer.score(S1, S2)


def test_an_ensemble_combines_its_members_by_its_own_method(tmp_path):
    from semrel.trainers.ensemble import Ensemble

    root = saved_runs(tmp_path)
    for method in ("rank", "stack"):
        folder = root / f"ensemble-{method}"
        scorer = load_scorer(str(folder), cache_dir=None)
        assert scorer.kind == "ensemble" and len(scorer.members) == 2
        np.testing.assert_allclose(scorer.score(S1, S2), Ensemble.load(folder).predict(S1, S2), atol=1e-5)


def test_each_distinct_text_is_computed_once(kinds):
    scorer = load_scorer(str(kinds["bi-encoder"]), cache_dir=None, batch_size=7)
    scores = scorer.scored(S1 + S1, S2 + S2)
    assert scores.computed == len(set(S1) | set(S2)) == scorer.computed
    assert scorer.scored(S2, S1).computed == 0  # all in memory


def test_each_unit_is_hashed_once_per_scorer(kinds, monkeypatch):
    from semrel.trainers.scoring import base

    hashed, unit_key = [], base.unit_key
    monkeypatch.setattr(base, "unit_key", lambda unit: hashed.append(unit) or unit_key(unit))
    scorer = load_scorer(str(kinds["bi-encoder"]), cache_dir=None)
    scorer.precompute(S1, S2)  # as a benchmark does: every unit first, then set by set
    scorer.scored(S1, S2)
    scorer.scored(S2[:5], S1[:5])
    assert sorted(hashed) == sorted({(t,) for t in S1 + S2})


def test_a_second_run_reads_everything_from_the_cache(kinds, tmp_path):
    first = load_scorer(str(kinds["bi-encoder"]), cache_dir=tmp_path)
    expected = first.score(S1, S2)
    first.close()
    again = load_scorer(str(kinds["bi-encoder"]), cache_dir=tmp_path)
    calls = []
    again.compute = lambda units: calls.append(units)  # nothing may be computed
    scores = again.scored(S1, S2)
    assert (scores.computed, calls) == (0, [])
    np.testing.assert_array_equal(scores.values, expected)
    assert not again.loaded and again.facts == first.facts  # the model itself is never loaded


def test_settings_that_change_the_output_get_their_own_cache(kinds, tmp_path):
    plain = load_scorer(str(kinds["bi-encoder"]), cache_dir=tmp_path)
    cut = load_scorer(str(kinds["bi-encoder"]), cache_dir=tmp_path, max_length=4)
    assert plain.key != cut.key
    assert sorted(p.stem for p in tmp_path.glob("*.sqlite")) == sorted([plain.key, cut.key, "hashes"])


def test_an_interrupted_run_leaves_a_valid_cache_of_its_finished_batches(kinds, tmp_path):
    scorer = load_scorer(str(kinds["bi-encoder"]), cache_dir=tmp_path, batch_size=8)
    compute, done = scorer.compute, []

    def interrupted(units):
        if len(done) == 2:
            raise KeyboardInterrupt
        done.append(len(units))
        return compute(units)

    scorer.compute = interrupted
    with pytest.raises(KeyboardInterrupt):
        scorer.score(S1, S2)
    scorer.close()
    cache = sqlite3.connect(tmp_path / f"{scorer.key}.sqlite")
    assert cache.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert cache.execute("SELECT COUNT(*) FROM units").fetchone() == (16,)
    again = load_scorer(str(kinds["bi-encoder"]), cache_dir=tmp_path, batch_size=8)
    assert again.scored(S1, S2).computed == len(set(S1) | set(S2)) - 16


def test_texts_longer_than_the_max_length_are_cut_and_counted(kinds):
    scorer = load_scorer(str(kinds["bi-encoder"]), cache_dir=None, max_length=4)
    scores = scorer.scored(["a red circle", "red"], ["blue", "green"])  # [CLS] a red circle [SEP]: 5
    assert (scores.truncated, scores.cut.tolist(), scores.max_length) == (1, [True, False], 4)
    cross = load_scorer(str(kinds["semrel-cross"]), cache_dir=None, max_length=6)
    assert cross.scored(["a red circle"], ["the blue star"]).truncated == 1  # 9 tokens together


def test_a_cached_unit_still_says_it_was_cut(kinds, tmp_path):
    load_scorer(str(kinds["bi-encoder"]), cache_dir=tmp_path, max_length=4).score(["a red circle"], ["red"])
    again = load_scorer(str(kinds["bi-encoder"]), cache_dir=tmp_path, max_length=4)
    scores = again.scored(["a red circle"], ["red"])
    assert (scores.computed, scores.truncated) == (0, 1)


def test_a_folder_of_unknown_kind_is_named(tmp_path):
    (tmp_path / "notes.txt").write_text("not a model")
    with pytest.raises(ParameterError, match=r"^model='.*': a folder of unknown kind: none of "
                                             r"semrel_encoder.json, semrel_ensemble.json"):
        load_scorer(str(tmp_path), cache_dir=None)
    with pytest.raises(ParameterError, match="no such model folder, and neither a packaged model name"):
        load_scorer(str(tmp_path / "nope"), cache_dir=None)


def test_unit_cache_round_trip(tmp_path):
    cache = UnitCache(tmp_path, "k" * 64, {"spec": "x"})
    cache.put([(b"a" * 32, 3, np.arange(4, dtype=np.float32))])
    tokens, value = cache.get([b"a" * 32, b"b" * 32])[b"a" * 32]
    assert (tokens, value.tolist(), len(cache)) == (3, [0.0, 1.0, 2.0, 3.0], 1)


KILLED = """
import sys, time
sys.path.insert(0, {tests!r})
from semrel.trainers.scoring import load_scorer
from trainer_fixtures import toy_pairs
scorer = load_scorer({model!r}, cache_dir={cache!r}, batch_size=4)
compute, calls = scorer.compute, []
def slow(units):
    calls.append(1)
    if len(calls) == 4:  # three batches stored: wait here to be killed
        print("ready", flush=True)
        time.sleep(600)
    return compute(units)
scorer.compute = slow
rows = toy_pairs()
scorer.score(rows["sentence1"], rows["sentence2"])
"""


@pytest.mark.slow  # a subprocess, killed
def test_a_killed_run_leaves_a_valid_cache(kinds, tmp_path):
    import signal
    import subprocess
    import sys
    from pathlib import Path

    code = KILLED.format(tests=str(Path(__file__).parents[1]), model=str(kinds["bi-encoder"]),
                         cache=str(tmp_path))
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().strip() == "ready"
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    again = load_scorer(str(kinds["bi-encoder"]), cache_dir=tmp_path, batch_size=4)
    assert len(UnitCache(tmp_path, again.key)) == 12
    scores = again.scored(TOY["sentence1"], TOY["sentence2"])
    assert scores.computed == len(set(TOY["sentence1"]) | set(TOY["sentence2"])) - 12


def test_predict_takes_a_model_semrel_did_not_train(kinds, tmp_path, capsys):
    from semrel.cli import main
    from semrel.dataset_scripts.pairs import load_pairs
    from semrel.trainers.prediction import predict
    from trainer_fixtures import toy_folder

    folder = toy_folder(tmp_path / "toy", 8, 16)
    scores = predict(str(kinds["bi-encoder"]), load_pairs(str(folder), score_range=(0, 5)))
    rows = load_pairs(str(folder), score_range=(0, 5)).splits["test"]
    expected = load_scorer(str(kinds["bi-encoder"]), cache_dir=None).score(rows["sentence1"], rows["sentence2"])
    np.testing.assert_allclose(scores, expected * 5)  # read on [0, 1], put on the data's range
    out = tmp_path / "p.json"
    assert main(["predict", "--dataset", str(folder), "--score-range", "0", "5", "--model",
                 str(kinds["cross-encoder"]), "--output", str(out)]) == 0
    assert len(json.loads(out.read_text())) == 16 and "16 predictions" in capsys.readouterr().out


def test_identical_texts_tie_rather_than_being_ordered_by_rounding_noise(kinds):
    scorer = load_scorer(str(kinds["bi-encoder"]), cache_dir=None)
    texts = ["a red circle", "the blue star", "a green square and a yellow star"]
    assert scorer.score(texts, texts).tolist() == [1.0, 1.0, 1.0]
