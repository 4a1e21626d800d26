"""A dataset and a metric are each one folder: written here into tmp_path (a dataset package with
its builder, spec and card; a metric folder with its module, card, app and requirements) and put
among ``semrel.dataset_scripts``' and ``semrel.metrics``' folders (a second entry of the package's
``__path__``, as a folder in the checkout would be), they are found by the registry, exported with
their card, given a report section, benchmarked (``semrel benchmark``, MTEB tasks) and listed with
the metrics, without an edit anywhere else.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

import semrel.dataset_scripts
import semrel.metrics
from semrel.dataset_scripts import registry

DATASET_ID, PACKAGE, METRIC = "plugin-sts", "plugin_sts", "plugin_gap"
PAIRS = "id,sentence1,sentence2,score\n" + "".join(
    f"p{i},a cat sat on mat {i},{'a cat lay on mat' if i % 2 else 'the dog ran off'} {i * 7},{i % 6}.0\n"
    for i in range(12))

BUILDER = '''\
"""plugin-sts: twelve English sentence pairs scored 0-5 (a test's toy, CC0)."""

import csv

import datasets

from ..base import SemrelBuilder, SemrelConfig
from ..sources import Source

SOURCE = Source(dataset_id="plugin-sts", file_name="pairs.csv", url="https://example.invalid/pairs.csv",
                sha256="{sha256}", licence="CC0-1.0",
                licence_url="https://creativecommons.org/publicdomain/zero/1.0/", redistributable=True)
FEATURES = datasets.Features({{"id": datasets.Value("string"), "sentence1": datasets.Value("string"),
                              "sentence2": datasets.Value("string"), "score": datasets.Value("float32")}})


class PluginSts(SemrelBuilder):
    DATASET_ID = "plugin-sts"
    SOURCES = (SOURCE,)
    SCORE_RANGE = (0.0, 5.0)
    CITATION = "@misc{{plugin-sts, title = {{plugin-sts}}}}"
    HOMEPAGE = "https://example.invalid/plugin-sts"
    LICENSE = SOURCE.licence
    VERSION = datasets.Version("1.0.0")
    BUILDER_CONFIGS = [SemrelConfig(name="default", description="all pairs")]

    def _info(self):
        return datasets.DatasetInfo(description=__doc__, features=FEATURES, homepage=self.HOMEPAGE,
                                    license=self.LICENSE, citation=self.CITATION)

    def _split_generators(self, dl_manager):
        with open(self.fetch(SOURCE, dl_manager), newline="", encoding="utf-8") as handle:
            rows = [dict(r, score=float(r["score"])) for r in csv.DictReader(handle)]
        return [datasets.SplitGenerator("train", gen_kwargs={{"rows": rows}})]

    def _generate_examples(self, rows):
        for row in rows:
            yield row["id"], row
'''
SPEC = '''\
from ..spec import Benchmarked, DatasetSpec, Licence, MtebFacts
from .builder import PluginSts

SPEC = DatasetSpec(PluginSts, pretty_name="Plugin STS", licence=Licence("cc0-1.0"), languages=("en",),
                   card_body=f"{__package__}.card:card_body", report_section=f"{__package__}.card:report_section",
                   benchmark=Benchmarked((("default", "train"),), MtebFacts(("Written",), "created")))
'''
CARD = '''\
def card_body(built, image_dir):
    from semrel.publishing.cards import split_statistics

    return f"# Plugin STS\\n\\nA test's toy.\\n\\n{split_statistics(built)}\\n"


def report_section(built, image_dir, *, mirror=None, cache_dir=None):
    return f"### Plugin scores\\n\\n{len(built['default']['train'])} pairs, all declared in one folder."
'''
MODULE = '''\
"""evaluate module: the mean absolute gap between predictions and references (a test's toy)."""

import datasets
import evaluate


class PluginGap(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description="Mean absolute gap between predictions and references.", citation="",
            inputs_description="predictions, references: lists of floats",
            features=datasets.Features({"predictions": datasets.Value("float64"),
                                        "references": datasets.Value("float64")}))

    def _compute(self, predictions, references):
        gaps = [abs(p - r) for p, r in zip(predictions, references, strict=True)]
        return {"gap": sum(gaps) / len(gaps)}
'''
METRIC_CARD = '''\
---
title: Plugin Gap
sdk: gradio
sdk_version: 6.31.0
app_file: app.py
tags:
- evaluate
- metric
description: The mean absolute gap between predictions and references. A test's toy metric.
---

# Metric Card for Plugin Gap
'''
APP = '''\
from pathlib import Path

from semrel.metrics.space_app import launch

EXAMPLES = {"default": {"inputs": {"predictions": [1.0, 2.0], "references": [1.5, 2.0]}, "options": {}}}

if __name__ == "__main__":
    launch(Path(__file__).with_name("plugin_gap.py"), EXAMPLES)
'''


def write_plugins(root: Path) -> dict[str, Path]:
    """The toy dataset package (``<root>/dataset_scripts/plugin_sts``), its upstream file
    (``<root>/mirror/plugin-sts/pairs.csv``) and the toy metric folder (``<root>/metrics/plugin_gap``)."""
    mirror = root / "mirror"
    (mirror / DATASET_ID).mkdir(parents=True)
    (mirror / DATASET_ID / "pairs.csv").write_text(PAIRS, encoding="utf-8")
    package = root / "dataset_scripts" / PACKAGE
    package.mkdir(parents=True)
    files = {"__init__.py": "", "builder.py": BUILDER.format(sha256=hashlib.sha256(PAIRS.encode()).hexdigest()),
             "spec.py": SPEC, "card.py": CARD}
    for name, text in files.items():
        (package / name).write_text(text, encoding="utf-8")
    metric = root / "metrics" / METRIC
    metric.mkdir(parents=True)
    files = {f"{METRIC}.py": MODULE, "README.md": METRIC_CARD, "app.py": APP,
             "requirements.txt": "# nothing besides semrel and gradio\n"}
    for name, text in files.items():
        (metric / name).write_text(text, encoding="utf-8")
    return {"datasets": root / "dataset_scripts", "metrics": root / "metrics", "mirror": mirror}


@pytest.fixture
def plugins(tmp_path, monkeypatch):
    """The toy folders among semrel's own; the registry as a process that starts now sees it."""
    folders = write_plugins(tmp_path / "plugins")
    monkeypatch.setattr(semrel.dataset_scripts, "__path__", [*semrel.dataset_scripts.__path__,
                                                             str(folders["datasets"])])
    monkeypatch.setattr(semrel.metrics, "__path__", [*semrel.metrics.__path__, str(folders["metrics"])])
    for dataset_id, spec in registry.discover().items():  # what REGISTRY holds in a process started now
        monkeypatch.setitem(registry.REGISTRY, dataset_id, spec)
    yield folders
    for name in [m for m in sys.modules if m.startswith(f"semrel.dataset_scripts.{PACKAGE}")]:
        del sys.modules[name]


def test_discovery_finds_the_toy_dataset_and_metric(plugins):
    spec = registry.get_spec(DATASET_ID)
    assert spec.builder_class.__module__ == f"semrel.dataset_scripts.{PACKAGE}.builder"
    assert (spec.pretty_name, spec.licence.hub_id, spec.languages, spec.score_range) == \
        ("Plugin STS", "cc0-1.0", ("en",), (0.0, 5.0))
    assert spec.redistributable and spec.configs == ["default"]
    assert {"str-2021", "c-sts", DATASET_ID} <= set(registry.discover())
    assert METRIC in semrel.metrics.names() and "bws_scores" in semrel.metrics.names()
    assert Path(semrel.metrics.module_path(METRIC)) == plugins["metrics"] / METRIC

    from semrel.publishing.cli import _selected
    from semrel.publishing.publish import known_names

    datasets, metrics = _selected(None)
    assert DATASET_ID in datasets and METRIC in metrics and {DATASET_ID, METRIC} <= set(known_names())


def test_the_toy_dataset_is_exported_with_its_card_and_reported(plugins, tmp_path):
    from huggingface_hub import DatasetCard

    from semrel.dataset_scripts import load
    from semrel.publishing.export import build_dataset
    from semrel.publishing.hub_vocabulary import check_card
    from semrel.publishing.report import build_report

    out, cache = tmp_path / "out", tmp_path / "cache"
    rows = load(DATASET_ID, mirror=plugins["mirror"], cache_dir=str(cache))["train"]
    assert rows.num_rows == 12 and rows.features["score"].dtype == "float32"
    result = build_dataset(DATASET_ID, out / "hub", mirror=plugins["mirror"], cache_dir=cache)
    assert result.rows == {"default": {"train": 12}} and not result.card_only
    card = DatasetCard.load(result.folder / "README.md")
    assert card.data.pretty_name == "Plugin STS" and card.data.license == "cc0-1.0"
    assert card.data.score_range == [0.0, 5.0] and card.text.strip().startswith("# Plugin STS")
    assert check_card(result.folder / "README.md") == []
    page = build_report(out, [DATASET_ID], [METRIC], mirror=plugins["mirror"], cache_dir=cache).read_text()
    assert 'id="dataset-plugin-sts"' in page and "12 pairs, all declared in one folder." in page
    assert 'id="metric-plugin-gap"' in page  # listed; not built here (its Space needs the wheel)


def test_the_trainers_read_the_spec(plugins, tmp_path):
    from semrel.trainers import load_pairs

    spec = registry.get_spec(DATASET_ID)
    data = load_pairs(DATASET_ID, mirror=plugins["mirror"], cache_dir=str(tmp_path / "cache"))
    assert (data.score_range, data.citation, data.language, data.hub_id) == \
        (spec.score_range, spec.citation, spec.languages, spec.hub_id) == \
        ((0.0, 5.0), "@misc{plugin-sts, title = {plugin-sts}}", ("en",), None)


@pytest.fixture(scope="module")
def encoder(tmp_path_factory) -> Path:
    """A tiny random transformers encoder that reads the toy pairs character by character."""
    from trainer_fixtures import tiny_encoder

    return tiny_encoder(tmp_path_factory.mktemp("model") / "encoder", texts=[PAIRS])


TOY_SET = f"{DATASET_ID}/default/train"


@pytest.mark.parametrize("only", [None, [DATASET_ID], [f"{DATASET_ID}/default"], [TOY_SET]])
def test_the_toy_dataset_declares_its_benchmark_set(plugins, only):
    from semrel.dataset_scripts.benchmark_sets import benchmarked_datasets, select_sets

    assert benchmarked_datasets()[-1] == DATASET_ID
    assert select_sets(only)[-1].name == TOY_SET and (only is None or len(select_sets(only)) == 1)


def test_semrel_benchmark_scores_the_toy_dataset(plugins, encoder, tmp_path):
    import json

    from semrel.cli import main

    assert main(["benchmark", "--model", str(encoder), "--only", TOY_SET, "--mirror", str(plugins["mirror"]),
                 "--cache-dir", str(tmp_path / "cache"), "--resamples", "100", "--output", str(tmp_path / "out")]) == 0
    result = json.loads((tmp_path / "out" / "benchmark.json").read_text(encoding="utf-8"))
    assert [(s["name"], s["n"], s["status"]) for s in result["sets"]] == [(TOY_SET, 12, "loaded")]
    assert [(c["set"], c["status"]) for c in result["cells"]] == [(TOY_SET, "scored")]


def test_the_toy_dataset_is_an_mteb_task(plugins, tmp_path):
    pytest.importorskip("mteb", reason="the mteb extra is not installed (pip install -e '.[mteb]')")
    from semrel.trainers.benchmark.mteb_tasks import mteb_tasks

    said = []
    tasks = mteb_tasks(only=[DATASET_ID], mirror=plugins["mirror"], cache_dir=tmp_path / "cache", log=said.append)
    meta = [(t.metadata.name, t.metadata.eval_langs, t.metadata.license, t.metadata.domains, len(t.semrel_rows))
            for t in tasks]
    assert said == [] and meta == [("SemrelPluginStsDefaultTrain", ["eng-Latn"], "cc0-1.0", ["Written"], 12)]


def test_the_toy_metric_loads_through_evaluate(plugins, tmp_path, monkeypatch):
    import evaluate

    monkeypatch.setenv("HF_MODULES_CACHE", str(tmp_path / "modules"))
    gap = evaluate.load(semrel.metrics.module_path(METRIC)).compute(predictions=[1.0, 2.0], references=[1.5, 2.0])
    assert gap == {"gap": 0.25}


CLI = """
import sys
import semrel.dataset_scripts, semrel.metrics
semrel.dataset_scripts.__path__.append(sys.argv[1])
semrel.metrics.__path__.append(sys.argv[2])
from semrel.cli import main
sys.exit(main(sys.argv[3:]))
"""


@pytest.mark.slow
def test_semrel_build_makes_the_toy_dataset_space_and_report(tmp_path):
    """``semrel build`` in a process whose semrel holds the two folders: nothing registers them."""
    folders = write_plugins(tmp_path / "plugins")
    out = tmp_path / "build"
    done = subprocess.run([sys.executable, "-c", CLI, str(folders["datasets"]), str(folders["metrics"]), "build",
                           "--out", str(out), "--mirror", str(folders["mirror"]), "--cache-dir",
                           str(tmp_path / "cache"), "--only", DATASET_ID, METRIC],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert f"{DATASET_ID:<16} default" in done.stdout
    assert (out / "hub" / "datasets" / DATASET_ID / "README.md").is_file()
    space = out / "hub" / "spaces" / METRIC
    assert {p.name for p in space.iterdir() if p.suffix != ".whl"} == {f"{METRIC}.py", "README.md", "app.py",
                                                                      "requirements.txt"}
    page = (out / "report" / "index.html").read_text(encoding="utf-8")
    assert 'id="dataset-plugin-sts"' in page and 'id="metric-plugin-gap"' in page
