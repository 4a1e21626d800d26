"""`semrel push` against a local Hub (tests/hub_server.py): what arrives, and what never may.

Every test here needs the `out` build (every dataset and Space built whole) or the local Hub, and
is slow; the checks that need neither are in test_publish_without_build.py, the push of a model
fit on a semrel dataset in test_publish_fitted_model.py.
The real clients run in subprocesses whose environment points huggingface_hub at the local server
before it is imported (HF_ENDPOINT, HF_HUB_DISABLE_XET=1, a dummy token). Every real dataset of
the suite forbids redistribution, so the full-data path (Parquet, verify, load_dataset from the
Hub) is exercised on the toy fixture dataset (tests/toy_dataset, 32 pairs written for the tests).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from huggingface_hub import DatasetCard, ModelCard, RepoCard
from safetensors.numpy import save_file

import toy_dataset
from hub_server import LocalHub
from project import REPO
from semrel import cli as upload
from semrel.dataset_scripts import REGISTRY
from semrel.dataset_scripts.str_2021 import read_pairs
from semrel.publishing import guard, publish
from semrel.publishing.export import build_dataset, data_files
from semrel.publishing.spaces import build_space, metric_names

TOKEN = "hf_semrelTestToken_MUST_NOT_BE_PRINTED_42"
NS = "semrel-test"
CLI = ("import sys; sys.path.insert(0, 'tests'); import toy_dataset; toy_dataset.register(); "
       "from semrel.cli import main; sys.exit(main(sys.argv[1:]))")


def make_model(folder: Path, card: str | None = None) -> Path:
    """A tiny model folder like `semrel fit` writes: config, weights, model card."""
    folder.mkdir(parents=True)
    (folder / "config.json").write_text('{"model_type": "bert", "hidden_size": 4}\n')
    save_file({"w": np.arange(8, dtype=np.float32).reshape(2, 4)}, str(folder / "model.safetensors"))
    (folder / "checkpoints" / "checkpoint-2").mkdir(parents=True)  # stays local
    (folder / "checkpoints" / "checkpoint-2" / "optimizer.pt").write_bytes(b"\0" * 64)
    if card is None:
        card = ("---\nlicense: apache-2.0\nlanguage: [en]\ndatasets: [toy-sts]\nmetrics: [spearmanr]\n"
                "library_name: sentence-transformers\npipeline_tag: sentence-similarity\n---\n\n"
                "# tiny\n\nSpearman 0.5 on toy-sts.\n")
    (folder / "README.md").write_text(card)
    return folder


@pytest.fixture(scope="module")
def out(mirror, cache_dir, tmp_path_factory, toy_registered):
    """A build folder: every real dataset and metric Space, the toy dataset and a model folder."""
    out = tmp_path_factory.mktemp("build")
    for dataset_id in REGISTRY:
        build_dataset(dataset_id, out / "hub", cache_dir=cache_dir,
                      mirror=toy_dataset.MIRROR if dataset_id == "toy-sts" else mirror)
    for name in metric_names():
        build_space(name, out / "hub")
    make_model(out / "models" / "tiny-encoder")
    return out


@pytest.fixture(scope="module")
def hub():
    with LocalHub() as hub:
        yield hub


def run(hub: LocalHub, out: Path, *args: str, token: str | None = TOKEN, home: Path,
        mirror: Path | None = None) -> subprocess.CompletedProcess:
    """`semrel push` in a fresh interpreter pointed at ``hub`` (HF_HOME=``home``); the client
    logs at debug level, and neither our output nor its logs may show the token."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "SEMREL_"))}
    env |= hub.client_env(token) | {"HF_HOME": str(home), "HF_HUB_VERBOSITY": "debug"}
    if mirror is not None:
        env["SEMREL_MIRROR"] = os.pathsep.join([str(mirror), str(toy_dataset.MIRROR)])
    result = subprocess.run([sys.executable, "-c", CLI, "push", "--namespace", NS, "--out", str(out),
                             *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert TOKEN not in result.stdout + result.stderr
    return result


def str_sentences(mirror: Path) -> set[str]:
    pairs = read_pairs(str(mirror / "str-2021" / "sem_text_rel_ranked.csv"))
    return {p[k] for p in pairs for k in ("sentence1", "sentence2") if len(p[k]) >= 12}


def raw_worker_ids(mirror: Path) -> set[str]:
    ids = set()
    for path in (mirror / "crowd-sts").glob("*_human.csv"):
        with open(path, newline="", encoding="utf-8") as handle:
            ids |= {row["WorkerId"] for row in csv.DictReader(handle)}
    return ids


def sent_texts(hub: LocalHub) -> list[tuple[str, str, str]]:
    """(repo, path, text) of everything committed; Parquet decoded to its string cells."""
    texts = []
    for repo, path, data in hub.sent_bytes():
        if path.endswith(".parquet"):
            table = pq.read_table(io.BytesIO(data))
            text = "\n".join(str(v) for col in table.columns for v in col.to_pylist())
        elif path.endswith((".png", ".safetensors")):
            continue
        else:
            text = data.decode("utf-8", errors="replace")
        texts.append((repo, path, text))
    return texts


@pytest.mark.slow
def test_no_token_is_refused_before_any_request(hub, out, tmp_path):
    result = run(hub, out, "--all", token=None, home=tmp_path)
    assert result.returncode == 1
    assert "no Hugging Face token" in result.stderr and "nothing was uploaded" in result.stderr
    assert hub.requests == []


@pytest.mark.slow
def test_unknown_name_and_unbuilt_metric_are_clear_errors(out, tmp_path, capsys):
    assert upload.main(["push", "--namespace", NS, "--out", str(out), "--only", "nope"]) == 2
    assert "unknown name(s) nope; datasets: c-sts" in capsys.readouterr().err
    assert upload.main(["push", "--namespace", NS, "--out", str(tmp_path), "--only",
                        "lexical_overlap"]) == 1
    assert "has no Space folder" in capsys.readouterr().err


@pytest.mark.slow
def test_push_everything_then_check_what_arrived(hub, out, mirror, tmp_path):
    model = out / "models" / "tiny-encoder"
    result = run(hub, out, "--all", "--private", "--model", str(model), home=tmp_path, mirror=mirror)
    assert result.returncode == 0, result.stderr
    # the token from the standard source (HF_TOKEN) on every API call (LFS PUTs go to storage)
    assert {a for m, _, a in hub.requests if m != "PUT"} == {f"Bearer {TOKEN}"}

    # non-redistributable datasets: the card and its plots, no data, with build instructions
    for dataset_id, spec in REGISTRY.items():
        if spec.redistributable:
            continue
        files = hub.files("dataset", f"{NS}/{dataset_id}")
        assert set(files) <= {"README.md"} | {p for p in files if re.fullmatch(r"images/.*\.png", p)}
        card = DatasetCard(files["README.md"].decode())
        assert card.data.license and card.data.language and card.data.task_categories
        assert "configs" not in card.data.to_dict() and "dataset_info" not in card.data.to_dict()
        assert f"semrel build --only {dataset_id}" in card.text
        assert "card only" in result.stdout
    str_card = hub.files("dataset", f"{NS}/str-2021")
    assert set(str_card) == {"README.md", "images/score_hist_by_source.png"}
    assert "do not redistribute" in str_card["README.md"].decode().lower()

    # the redistributable toy dataset: Parquet + card with configs and features
    toy = hub.files("dataset", f"{NS}/toy-sts")
    parquet = {p.rsplit("-", 1)[0]: p for p in toy if p.endswith(".parquet")}  # stem: file name
    assert set(toy) == {"README.md", "images/scores.png", *parquet.values()}
    assert set(parquet) == {"default/train-00000-of-00001", "cv-fold-0/train-00000-of-00001",
                            "cv-fold-0/test-00000-of-00001"}
    assert all(p == f"{stem}-{hashlib.sha256(toy[p]).hexdigest()[:16]}.parquet" for stem, p in parquet.items())
    toy_card = DatasetCard(toy["README.md"].decode()).data.to_dict()
    assert {c["config_name"] for c in toy_card["configs"]} == {"default", "cv-fold-0"}
    assert toy_card["license"] == "cc0-1.0" and toy_card["dataset_info"]

    # metric Spaces: the built folder, Space YAML
    for name in metric_names():
        files = hub.files("space", f"{NS}/{name}")
        built = out / "hub" / "spaces" / name
        assert set(files) == {p.name for p in built.iterdir()}
        # the Hub installs requirements.txt before the repo's files are there: the wheel by its URL
        wheel = next(built.glob("semrel-*.whl")).name
        url = f"{hub.endpoint}/spaces/{NS}/{name}/resolve/main/{wheel}"
        assert f"semrel @ {url}\n" in files["requirements.txt"].decode()
        assert f"./{wheel}\n" in (built / "requirements.txt").read_text()  # the local folder keeps the file
        assert urllib.request.urlopen(url).read() == (built / wheel).read_bytes()
        meta = RepoCard(files["README.md"].decode()).data.to_dict()
        assert meta["sdk"] == "gradio" and meta["app_file"] == "app.py"
        # evaluate's module types
        assert "evaluate" in meta["tags"] and {"metric", "comparison", "measurement"} & set(meta["tags"])
        assert hub.repos[("space", f"{NS}/{name}")].sdk == "gradio"

    # the model: weights over LFS, card with metadata
    model_files = hub.files("model", f"{NS}/tiny-encoder")
    assert set(model_files) == {"README.md", "config.json", "model.safetensors"}  # no checkpoint
    assert hub.repos[("model", f"{NS}/tiny-encoder")].head["model.safetensors"].lfs
    assert ModelCard(model_files["README.md"].decode()).data.metrics == ["spearmanr"]
    assert all(repo.private for repo in hub.repos.values())
    assert len(hub.commits) == len(hub.repos) == len(REGISTRY) + len(metric_names()) + 1

    # what must never arrive: rows of non-redistributable data, raw crowd-worker ids
    forbidden_rows = str_sentences(mirror)
    raw_ids = raw_worker_ids(mirror)
    assert len(forbidden_rows) > 9_000 and len(raw_ids) == 463
    for repo, path, text in sent_texts(hub):
        assert not path.endswith(".parquet") or repo == f"datasets/{NS}/toy-sts", (repo, path)
        assert not any(s in text for s in forbidden_rows), (repo, path)
        assert not re.search(guard.id_regex(raw_ids), text), (repo, path)


@pytest.mark.slow
def test_push_again_after_rebuild_makes_no_commit(hub, out, mirror, cache_dir, tmp_path):
    build_dataset("toy-sts", out / "hub", mirror=toy_dataset.MIRROR, cache_dir=tmp_path / "cache")
    (tmp_path / "token").write_text(TOKEN)  # where `hf auth login` stores it; no HF_TOKEN now
    commits, requests = len(hub.commits), len(hub.requests)
    result = run(hub, out, "--all", "--model", str(out / "models" / "tiny-encoder"), token=None,
                 home=tmp_path, mirror=mirror)
    assert result.returncode == 0, result.stderr
    assert len(hub.commits) == commits
    assert result.stdout.count("unchanged") == len(hub.repos) and "pushed " not in result.stdout
    assert {a for _, _, a in hub.requests[requests:]} == {f"Bearer {TOKEN}"}  # no PUT: nothing re-sent


@pytest.mark.slow
def test_pushed_dataset_loads_with_load_dataset_from_the_hub(hub, out, tmp_path):
    code = ("import datasets, json, sys; ds = datasets.load_dataset(sys.argv[1], 'cv-fold-0', "
            "cache_dir=sys.argv[2]); print(json.dumps({s: d.to_list() for s, d in ds.items()}))")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env |= hub.client_env(TOKEN) | {"HF_HOME": str(tmp_path)}
    result = subprocess.run([sys.executable, "-c", code, f"{NS}/toy-sts", str(tmp_path / "c")],
                            env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout.splitlines()[-1])
    folder = out / "hub" / "datasets" / "toy-sts"
    local = {s: pq.read_table(folder / data_files(folder)["cv-fold-0"][s][0]).to_pylist() for s in ("train", "test")}
    assert loaded == local and len(loaded["test"]) == 8
    assert any(p.startswith("/datasets/") and "/resolve/" in p for _, p, _ in hub.requests)


@pytest.mark.slow
def test_a_file_no_longer_built_is_deleted_from_the_repo(hub, out, mirror, tmp_path):
    plot = out / "hub" / "datasets" / "toy-sts" / "images" / "scores.png"
    kept = plot.read_bytes()
    plot.unlink()
    try:
        result = run(hub, out, "--only", "toy-sts", home=tmp_path, mirror=mirror)
    finally:
        plot.write_bytes(kept)
    assert result.returncode == 0, result.stderr
    last = hub.commits_to("dataset", f"{NS}/toy-sts")[-1]
    assert [op["key"] for op in last.operations] == ["deletedFile"]
    assert "images/scores.png" not in hub.files("dataset", f"{NS}/toy-sts")


@pytest.mark.slow
def test_server_error_mid_push_then_rerun_resumes(out, mirror, tmp_path):
    model = str(out / "models" / "tiny-encoder")
    with LocalHub() as hub:
        hub.fail("POST", rf"^/api/datasets/{NS}/toy-sts/commit/main$", status=500)
        first = run(hub, out, "--all", "--model", model, home=tmp_path, mirror=mirror)
        assert first.returncode == 1
        assert f"push of {NS}/toy-sts (dataset) failed" in first.stderr
        assert "NOT reported as published" in first.stderr
        assert f"not attempted: {', '.join(metric_names())}, tiny-encoder" in first.stderr
        assert not re.search(rf"^(pushed|unchanged) .* {NS}/toy-sts ", first.stdout, re.M)
        assert re.search(rf"^pushed +dataset +{NS}/str-2021 ", first.stdout, re.M)
        assert hub.commits_to("dataset", f"{NS}/toy-sts") == []
        assert not hub.commits_to("space", f"{NS}/lexical_overlap")
        toy_oids = {hashlib.sha256(p.read_bytes()).hexdigest()
                    for p in (out / "hub" / "datasets" / "toy-sts").rglob("*.parquet")}
        uploaded = {p.rsplit("/", 1)[1] for m, p, _ in hub.requests if m == "PUT"}
        assert toy_oids <= uploaded  # the toy Parquet went up before its commit failed

        second = run(hub, out, "--all", "--model", model, home=tmp_path, mirror=mirror)
        assert second.returncode == 0, second.stderr
        assert len(hub.commits_to("dataset", f"{NS}/toy-sts")) == 1
        assert len(hub.commits_to("dataset", f"{NS}/str-2021")) == 1  # unchanged: no 2nd commit
        assert f"unchanged dataset  {NS}/str-2021" in second.stdout
        puts = [p.rsplit("/", 1)[1] for m, p, _ in hub.requests if m == "PUT"]
        assert len(puts) == len(set(puts)) == len(hub.lfs)  # each LFS object went up once
        assert uploaded < set(puts)


@pytest.mark.slow
def test_refused_before_any_upload(out, mirror, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(out / "hub", bad / "hub")
    folder = bad / "hub" / "datasets" / "toy-sts"
    path = folder / data_files(folder)["default"]["train"][0]
    pq.write_table(pq.read_table(path).slice(1), path)  # one row lost
    leaky = make_model(bad / "leaky-model", card="---\nlicense: mit\n---\nlabels by worker A1Z2X3C4V5B6N7\n")
    no_card = bad / "no-card"
    make_model(no_card).joinpath("README.md").unlink()
    with LocalHub() as hub:
        result = run(hub, bad, "--all", "--model", str(leaky), str(no_card), home=tmp_path,
                     mirror=mirror)
        assert result.returncode == 1
        assert "refusing to push, nothing was uploaded" in result.stderr
        assert ("dataset toy-sts: verification failed: default: the Parquet files do not match the "
                "card's split sizes") in result.stderr
        assert "model leaky-model: README.md: contains what looks like a raw MTurk WorkerId" in result.stderr
        assert "model no-card:" in result.stderr and "model card) is missing" in result.stderr
        assert "A1Z2X3C4V5B6N7" not in result.stderr
        assert hub.requests == []


@pytest.mark.slow
def test_dataset_that_cannot_be_rebuilt_is_refused(out, tmp_path, toy_registered):
    artefact = publish.Artefact("dataset", "toy-sts", "dataset", out / "hub" / "datasets" / "toy-sts")
    with pytest.raises(publish.PublishError, match=r"dataset toy-sts: could not be verified against "
                                                   r"its upstream files: pairs.csv of 'toy-sts' not found"):
        publish.check([artefact], mirror=tmp_path / "empty-mirror", cache_dir=tmp_path / "cache")


@pytest.mark.slow
def test_card_only_folder_quoting_a_row_is_refused(out, mirror, tmp_path):
    staged = publish.stage_card_only("str-2021", out / "hub" / "datasets" / "str-2021",
                                     tmp_path / "hub" / "cards" / "str-2021")
    sentence = sorted(str_sentences(mirror))[0]
    with open(staged / "README.md", "a", encoding="utf-8") as handle:
        handle.write(f"\nExample: {sentence}\n")
    shutil.copytree(out / "hub" / "datasets" / "str-2021", tmp_path / "hub" / "datasets" / "str-2021")
    artefact = publish.Artefact("dataset card", "str-2021", "dataset", staged)
    with pytest.raises(publish.PublishError, match=r"README.md quotes 1 sentence\(s\) of the data"):
        publish.check([artefact])


@pytest.mark.slow
def test_dry_run_lists_files_without_token_or_network(out, capsys):
    assert upload.main(["push", "--namespace", NS, "--out", str(out), "--dry-run",
                        "--only", "str-2021", "lexical_overlap"]) == 0
    text = capsys.readouterr().out
    assert f"dataset card  {NS}/str-2021" in text and "    images/score_hist_by_source.png" in text
    assert "    semrel-0.1.0-py3-none-any.whl" in text and ".parquet" not in text  # the Space carries semrel


@pytest.mark.slow
def test_every_built_and_staged_card_passes_the_card_check(out, tmp_path):
    """Every dataset card (built, and staged card-only), and a model card, against the Hub
    vocabulary list, install lines and build-tree paths (publishing.hub_vocabulary)."""
    from semrel.publishing.hub_vocabulary import check_card

    cards = sorted((out / "hub" / "datasets").glob("*/README.md"))
    cards += [publish.stage_card_only(d, out / "hub" / "datasets" / d, tmp_path / d) / "README.md"
              for d in REGISTRY if not REGISTRY[d].redistributable]
    assert len(cards) >= 2 * len(REGISTRY) - 2
    for card in cards:
        assert check_card(card, "dataset") == [], card
    assert check_card(out / "models" / "tiny-encoder" / "README.md", "model") == []
