"""The trainers take any datasets input: a registry id, a save_to_disk folder, a Hub-layout folder
as `semrel build` exports it (stock load_dataset), a Hub dataset id (against the local Hub of
tests/hub_server.py) and a DatasetDict; errors name what was tried."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import datasets
import pytest
from huggingface_hub import DatasetCard, ModelCard

import toy_dataset
from hub_server import LocalHub
from project import REPO
from semrel.cli import main
from semrel.dataset_scripts import load
from semrel.dataset_scripts.pairs import dataset_configs, load_pairs
from semrel.dataset_scripts.registry import REGISTRY
from semrel.metrics.errors import ParameterError
from semrel.publishing.export import build_dataset
from trainer_fixtures import tiny_encoder, toy_pairs


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """toy-sts (32 pairs, scores in [0, 5]) exported as `semrel build` does: Parquet + card."""
    out = tmp_path_factory.mktemp("build")
    toy_dataset.register()
    try:
        result = build_dataset("toy-sts", out / "hub", mirror=toy_dataset.MIRROR,
                               cache_dir=out / "cache")
        reference = load("toy-sts", "cv-fold-0", mirror=toy_dataset.MIRROR,
                         cache_dir=out / "cache")
    finally:
        REGISTRY.pop("toy-sts")
    return result.folder, reference


def test_an_exported_folder_loads_with_load_dataset(exported, tmp_path):
    folder, reference = exported
    data = load_pairs(str(folder), "cv-fold-0", score_range=(0, 5), cache_dir=tmp_path)
    assert {s: d.to_list() for s, d in data.splits.items()} == \
        {s: d.to_list() for s, d in reference.items()}
    assert data.score_range == (0.0, 5.0) and data.config == "cv-fold-0"
    assert data.name == f"{folder}/cv-fold-0" and data.hub_id is None
    assert data.language == ("en",)
    assert sorted(dataset_configs(str(folder))) == ["cv-fold-0", "default"]
    assert load_pairs(str(folder), "cv-fold-0", cache_dir=tmp_path).score_range == (0.0, 5.0)  # the card's
    blank = tmp_path / "no-range"
    shutil.copytree(folder, blank)
    card = DatasetCard.load(blank / "README.md")
    del card.data.score_range
    card.save(blank / "README.md")
    with pytest.raises(ParameterError, match=r"score_range=None: must be given: .*records "
                                             r"no score range \(score_range: \[lo, hi\]"):
        load_pairs(str(blank), "cv-fold-0", cache_dir=tmp_path)
    with pytest.raises(ParameterError, match="config='cv-fold-9': must be a config of .*: "
                                             "cv-fold-0, default"):
        load_pairs(str(folder), "cv-fold-9", score_range=(0, 5))
    with pytest.raises(ParameterError, match="mirror='m': is for registry datasets only"):
        load_pairs(str(folder), "cv-fold-0", score_range=(0, 5), mirror="m")


def test_a_score_range_recorded_in_the_card_is_used(exported, tmp_path):
    folder, _ = exported
    copy = tmp_path / "toy-sts"
    shutil.copytree(folder, copy)
    card = DatasetCard.load(copy / "README.md")
    card.data.score_range = [0, 5]
    card.save(copy / "README.md")
    data = load_pairs(str(copy), "cv-fold-0", cache_dir=tmp_path / "cache")
    assert data.score_range == (0.0, 5.0)
    assert load_pairs(str(copy), "cv-fold-0", score_range=(0, 5),
                      cache_dir=tmp_path / "cache").score_range == (0.0, 5.0)
    with pytest.raises(ParameterError, match=r"score_range=\[0, 1\]: differs from the score "
                                             r"range \[0.0, 5.0\] that .* records"):
        load_pairs(str(copy), "cv-fold-0", score_range=[0, 1])


def test_save_to_disk_folders_and_what_is_not_a_dataset(tmp_path):
    pairs = toy_pairs()
    datasets.DatasetDict(train=pairs).save_to_disk(tmp_path / "dict")
    data = load_pairs(str(tmp_path / "dict"), score_range=(0, 1))
    assert data.splits["train"].to_list() == pairs.to_list() and data.config is None
    with pytest.raises(ParameterError, match="config='cv-fold-0': must be 'default': a "
                                             "save_to_disk folder has no configs"):
        load_pairs(str(tmp_path / "dict"), "cv-fold-0", score_range=(0, 1))
    pairs.save_to_disk(tmp_path / "one")
    with pytest.raises(ParameterError, match="a save_to_disk folder of one Dataset; a "
                                             "DatasetDict"):
        load_pairs(str(tmp_path / "one"), score_range=(0, 1))
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(ParameterError, match=r"not a registry id \(c-sts, .*str-2021\), and a "
                                             "file, not a folder"):
        load_pairs(str(tmp_path / "file.txt"))
    with pytest.raises(ParameterError, match=r"dataset='str2021': not a registry id .* no "
                                             r"folder, and not a Hub dataset id"):
        load_pairs("str2021")
    with pytest.raises(ParameterError, match=r"dataset='nobody/nothing': not a registry id .* "
                                             r"the Hub dataset could not be read \(\w+"):
        load_pairs("nobody/nothing")  # the tests run offline: the Hub is tried and refuses
    (tmp_path / "empty").mkdir()
    with pytest.raises(ParameterError, match="is a folder that datasets.load_dataset cannot "
                                             "read"):
        load_pairs(str(tmp_path / "empty"), score_range=(0, 1), cache_dir=tmp_path / "c")


def test_a_registry_dataset_takes_an_agreeing_score_range_only(upstream, cache_dir):
    data = load_pairs("str-2021", "cv-fold-0", mirror=upstream, cache_dir=cache_dir,
                      score_range=(0, 1))
    assert data.score_range == (0.0, 1.0) and data.config == "cv-fold-0"
    with pytest.raises(ParameterError, match=r"score_range=\[0, 5\]: differs from the score "
                                             r"range \[0.0, 1.0\] that str-2021 declares"):
        load_pairs("str-2021", "cv-fold-0", mirror=upstream, score_range=[0, 5])


HUB_SCRIPT = """
import json, sys
from huggingface_hub import HfApi
folder, out, encoder = sys.argv[1:4]
api = HfApi()
api.create_repo("semrel-test/toy-sts", repo_type="dataset")
api.upload_folder(repo_id="semrel-test/toy-sts", repo_type="dataset", folder_path=folder)
from semrel.dataset_scripts.pairs import load_pairs
data = load_pairs("semrel-test/toy-sts", "cv-fold-0", score_range=(0, 5), cache_dir=out + "/c")
from semrel.cli import main
status = main(["fit", "--dataset", "semrel-test/toy-sts", "--config", "cv-fold-0",
               "--score-range", "0", "5", "--cache-dir", out + "/c", "--model", encoder,
               "--output", out + "/run", "--max-steps", "2", "--batch-size", "8"])
print(json.dumps({"status": status, "rows": {s: d.to_list() for s, d in data.splits.items()},
                  "hub_id": data.hub_id, "name": data.name}))
"""


@pytest.mark.slow  # starts a server and a process, trains 2 steps
def test_a_hub_dataset_id_loads_with_load_dataset_and_names_the_dataset_in_the_card(
        exported, tmp_path):
    folder, reference = exported
    encoder = tiny_encoder(tmp_path / "tiny")
    with LocalHub() as hub:
        env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
        env |= hub.client_env("hf_dummy") | {"HF_HOME": str(tmp_path / "home"),
                                             "PYTHONPATH": str(REPO)}
        done = subprocess.run([sys.executable, "-c", HUB_SCRIPT, str(folder), str(tmp_path),
                               str(encoder)], env=env, capture_output=True, text=True,
                              timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["status"] == 0 and got["hub_id"] == "semrel-test/toy-sts"
    assert got["rows"] == {s: d.to_list() for s, d in reference.items()}
    assert got["name"] == "semrel-test/toy-sts/cv-fold-0"
    assert any("/resolve/" in path for _, path, _ in hub.requests)
    card = ModelCard.load(tmp_path / "run" / "README.md").data
    assert card.datasets == ["semrel-test/toy-sts"]
    assert card.eval_results is None  # no model-index ever: the figures are self-reported


@pytest.mark.slow  # builds the whole STR-2021 export, trains 3 steps
def test_fit_takes_the_exported_str_2021_folder(mirror, cache_dir, tmp_path, capsys):
    built = build_dataset("str-2021", tmp_path / "hub", mirror=mirror, cache_dir=cache_dir)
    encoder = tiny_encoder(tmp_path / "tiny")
    argv = ["fit", "--dataset", str(built.folder), "--config", "cv-fold-0", "--cache-dir",
            str(cache_dir), "--model", str(encoder), "--output", str(tmp_path / "run"),
            "--max-steps", "3", "--batch-size", "32"]
    assert main(argv) == 0  # the export's card records its score range, [0, 1]
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["train_pairs"] == 4400 and metrics["eval_split"] == "test"
    assert metrics["data"] == f"{built.folder}/cv-fold-0" and len(metrics["per_source"]) == 7
    assert metrics["options"]["max_steps"] == 3 and metrics["options"]["batch_size"] == 32
