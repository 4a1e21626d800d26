"""A model kind is one module: a toy kind written here into tmp_path (a folder holding
``toy_kind.json``, whose pairs score the share of words they have in common) joins
``semrel.trainers.kinds`` with no other edit, and is detected, checked (refused where the folder
is not of its kind, and refusing other kinds' folders), scored by ``load_scorer``, predicted by
``semrel predict --model-kind toy-kind`` and judged by ``semrel benchmark``."""

from __future__ import annotations

import json
import sys

import pytest

from semrel.cli import main
from semrel.metrics.errors import ParameterError
from semrel.trainers import kinds as registry
from semrel.trainers.model_ref import detect_kind, resolve_model_ref
from semrel.trainers.scoring import load_scorer
from trainer_fixtures import toy_folder

MODULE = '''"""toy-kind: a folder holding toy_kind.json; a pair scores the share of the words of its two
sentences they have in common (a test's toy)."""

import json
from pathlib import Path

import numpy as np

from semrel.metrics.errors import ParameterError

from .base import ModelKind
from ..scoring.base import Scorer

FILE = "toy_kind.json"


def overlap(a, b):
    a, b = set(a.lower().split()), set(b.lower().split())
    return len(a & b) / max(len(a | b), 1)


class WordOverlapScorer(Scorer):
    def load(self):
        return {"max_length": 512, "scale": "label"}

    def pair_units(self, sentence1, sentence2, condition):
        return ((sentence1, sentence2),)

    def lengths(self, units):
        return np.array([len(a.split()) + len(b.split()) for a, b in units])

    def compute(self, units):
        return np.array([[overlap(a, b)] for a, b in units], dtype=np.float32)

    def combine(self, values):
        return values[0][:, 0]


class ToyKind(ModelKind):
    name = "toy-kind"
    order = 5
    files = (FILE,)

    def detects(self, folder, parameter, value):
        return (folder / FILE).is_file()

    def check(self, path, parameter="model"):
        folder = Path(path)
        if not (folder / FILE).is_file():
            raise ParameterError(parameter, str(path), f"holds no {FILE}: not a toy-kind model")
        rule = json.loads((folder / FILE).read_text()).get("rule")
        if rule != "word-overlap":
            raise ParameterError(parameter, str(path), f"{FILE} names rule {rule!r}; a toy-kind "
                                 "model scores by word-overlap")
        return folder

    def scorer_class(self, ref):
        return WordOverlapScorer


KIND = ToyKind()
'''
NO_CONFIG = "holds no config.json: not a model folder (save_pretrained writes config.json and model.safetensors)"
NOT_SEMREL = ("holds no semrel_encoder.json: not a model saved by `semrel fit` (a plain transformer "
              "folder is a starting model for fit)")


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The toy kind's module among semrel's kinds, and a model folder of each kind it meets:
    ``toy`` (its own), ``bad-rule`` (its file names another rule), ``plain`` (a config.json)."""
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    (plugin / "toy_kind.py").write_text(MODULE, encoding="utf-8")
    monkeypatch.setattr(registry, "__path__", [*registry.__path__, str(plugin)])
    monkeypatch.setattr(registry, "REGISTRY", registry.discover())
    folders = {name: tmp_path / name for name in ("toy", "bad-rule", "plain")}
    for name, file, text in (("toy", "toy_kind.json", '{"rule": "word-overlap"}'),
                             ("bad-rule", "toy_kind.json", '{"rule": "coin-flip"}'),
                             ("plain", "config.json", "{}")):
        folders[name].mkdir()
        (folders[name] / file).write_text(text, encoding="utf-8")
    yield folders
    sys.modules.pop("semrel.trainers.kinds.toy_kind", None)


def test_the_toy_kind_is_found_first_and_detected(toy):
    assert registry.names() == ("toy-kind", "semrel", "ensemble", "bi-encoder", "cross-encoder", "transformer")
    assert detect_kind(toy["toy"]) == "toy-kind" and detect_kind(toy["plain"]) == "transformer"
    assert resolve_model_ref(str(toy["toy"])).kind == "toy-kind"
    (toy["plain"] / "config.json").unlink()
    (toy["plain"] / "notes.txt").write_text("hello")
    with pytest.raises(ParameterError, match="a folder of unknown kind: none of toy_kind.json, "
                                             "semrel_encoder.json, semrel_ensemble.json, modules.json or "
                                             "config.json is in it"):
        detect_kind(toy["plain"])


@pytest.mark.parametrize("folder,kind,outcome", [
    ("toy", None, "WordOverlapScorer"),
    ("toy", "toy-kind", "WordOverlapScorer"),
    ("toy", "transformer", NO_CONFIG),
    ("toy", "semrel", NOT_SEMREL),
    ("plain", "toy-kind", "holds no toy_kind.json: not a toy-kind model"),
    ("bad-rule", None, "toy_kind.json names rule 'coin-flip'; a toy-kind model scores by word-overlap"),
])
def test_the_toy_kind_is_checked_and_refuses_what_is_not_its_kind(toy, folder, kind, outcome):
    try:
        scorer = load_scorer(str(toy[folder]), kind=kind, cache_dir=None)
    except ParameterError as exc:
        assert exc.rule == outcome
    else:
        assert type(scorer).__name__ == outcome and scorer.kind == "toy-kind"


def test_the_toy_kind_scores_predicts_and_is_benchmarked(toy, tmp_path, capsys, fixture_mirror):
    scorer = load_scorer(str(toy["toy"]), cache_dir=None)
    assert scorer.score(["a red star", "one two"], ["a red circle", "three four"]).tolist() == [0.5, 0.0]
    data, out = toy_folder(tmp_path / "data", 8, 16), tmp_path / "p.json"
    assert main(["predict", "--dataset", str(data), "--score-range", "0", "5", "--model", str(toy["toy"]),
                 "--model-kind", "toy-kind", "--output", str(out)]) == 0
    assert len(json.loads(out.read_text())) == 16 and "16 predictions" in capsys.readouterr().out
    assert main(["benchmark", "--model", str(toy["toy"]), "--only", "semrel-2024/eng", "--mirror",
                 str(fixture_mirror), "--cache-dir", str(tmp_path / "hf"), "--score-cache",
                 str(tmp_path / "scores"), "--resamples", "200"]) == 0
    table = capsys.readouterr().out
    assert "semrel-2024/eng/validation" in table and "refused" not in table
