"""One template over every dataset and metric semrel finds: adding either is its folder plus its fixture.

Datasets: every entry of ``semrel.dataset_scripts.registry.REGISTRY`` builds each of its configs
from the fixture mirror ``tests/fixtures/<dataset-id>/`` (configs that need user data read
``tests/fixtures/<dataset-id>/user/``). A config with a ``score`` column is a pair config (the
first config must be one): ``sentence1`` and ``sentence2`` strings, ``score`` float32 with every
published score in the dataset's score range. Metrics: every ``metrics/<name>/<name>.py``
(:func:`semrel.metrics.names`) loads with ``evaluate.load(folder)`` and runs the examples of its
inputs description, a compute on a tiny input.
"""

from __future__ import annotations

import doctest
import warnings

import pytest

from project import FIXTURES, REPO
from semrel.dataset_scripts import load
from semrel.dataset_scripts.registry import REGISTRY
from semrel.metrics import names

CONFIGS = [(dataset_id, config) for dataset_id, spec in sorted(REGISTRY.items()) for config in spec.configs]


def fixture_folder(dataset_id: str):
    folder = FIXTURES / dataset_id
    if not (folder / "SHA256SUMS").is_file():
        pytest.fail(f"{dataset_id} has no fixture: add tests/fixtures/{dataset_id}/ holding a few dozen "
                    "synthetic rows of each upstream file it reads (the mirror's file names and layout) "
                    "and their SHA256SUMS, and the files a user supplies in its user/ folder "
                    "(tests/fixtures/README.md)")
    return folder


@pytest.mark.parametrize("dataset_id, config", CONFIGS, ids=[f"{d}/{c}" for d, c in CONFIGS])
def test_every_config_builds_from_its_fixture(dataset_id, config, fixture_mirror, cache_dir):
    spec = REGISTRY[dataset_id]
    folder = fixture_folder(dataset_id)
    data_dir = folder / "user" if config in spec.user_data_configs else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a build's notes (omitted, unpublished)
        built = load(dataset_id, config, mirror=fixture_mirror, data_dir=data_dir, cache_dir=cache_dir)
    assert built and all(len(split) for split in built.values()), {s: len(d) for s, d in built.items()}
    pair_config = all("score" in split.features for split in built.values())
    assert pair_config or config != spec.configs[0], f"{dataset_id}: the first config {config!r} is no pair config"
    if not pair_config:
        return
    lo, hi = spec.score_range
    published = []
    for name, split in built.items():
        features = split.features
        assert [features[c].dtype for c in ("sentence1", "sentence2", "score")] == ["string", "string", "float32"]
        scores = [s for s in split["score"] if s is not None]
        assert all(lo <= s <= hi for s in scores), f"{name}: a score outside [{lo}, {hi}]"
        assert all(s1 and s2 for s1, s2 in zip(split["sentence1"], split["sentence2"], strict=True))
        published += scores
    assert published, f"{dataset_id}/{config}: no published score in any split"


@pytest.mark.parametrize("name", names())
def test_every_metric_loads_and_computes_its_example(name, tmp_path, monkeypatch):
    import evaluate

    module = evaluate.load(str(REPO / "metrics" / name))
    examples = doctest.DocTestParser().get_doctest(module.inputs_description, {}, name, None, 0)
    if not examples.examples:
        pytest.fail(f"metrics/{name}/{name}.py: its inputs description has no '>>>' example; add one "
                    "that loads the module and computes on a tiny input")
    monkeypatch.chdir(tmp_path)  # the example loads the module of the installed package
    runner = doctest.DocTestRunner()
    report = []
    runner.run(examples, out=report.append)
    assert runner.failures == 0, "".join(report)


def test_a_dataset_without_a_fixture_is_told_what_to_add():
    with pytest.raises(pytest.fail.Exception, match="new-sts has no fixture: add tests/fixtures/new-sts/"):
        fixture_folder("new-sts")
