"""``--model namespace/name[@revision]`` against the local Hub (tests/hub_server.py), with the real
huggingface_hub client in ``semrel`` subprocesses: tiny sentence-transformers bi-encoder,
CrossEncoder and plain BERT repos pushed there; fit downloads the model's files (no other) into
``$HF_HOME``, records the commit it started from, and runs again offline from the cache; offline
with an empty cache, an unknown repo or revision, a gated repo, a Hub that times out or refuses
the connection, a repo holding no model and an ensemble each answer in one line, exit 2."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from huggingface_hub import ModelCard

from hub_server import LocalHub
from project import REPO
from trainer_fixtures import tiny_cross_encoder, tiny_encoder, tiny_sentence_transformer, toy_folder

pytestmark = pytest.mark.slow  # starts a server and semrel processes, trains a few steps

CARD = "---\nlicense: mit\nlibrary_name: sentence-transformers\n---\n# tiny-st\n"
NOT_MODEL_FILES = {"onnx/model.onnx": b"\0onnx", "pytorch_model.bin": b"\0torch", "tf_model.h5": b"\0tf",
                   "train_script.py": b"print('training')\n"}  # beside the model: never fetched


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """The local Hub holding ns/tiny-st (two commits: the first one is pinned by the runs),
    ns/tiny-ce, ns/tiny-bert (tag v1), a gated and a slow copy, a repo without a model and an
    ensemble; ``hub.commit_of`` names the commits."""
    root = tmp_path_factory.mktemp("models")
    st = tiny_sentence_transformer(root / "st")
    (st / "README.md").write_text(CARD)
    for rel, data in NOT_MODEL_FILES.items():
        (st / rel).parent.mkdir(parents=True, exist_ok=True)
        (st / rel).write_bytes(data)
    with LocalHub() as hub:
        hub.commit_of = {"st": hub.put_folder("model", "ns/tiny-st", st)}
        hub.put("model", "ns/tiny-st", {"README.md": CARD.replace("# tiny-st", "# tiny-st, v2").encode()})
        hub.commit_of["ce"] = hub.put_folder("model", "ns/tiny-ce", tiny_cross_encoder(root / "ce"))
        hub.commit_of["bert"] = hub.put_folder("model", "ns/tiny-bert", tiny_encoder(root / "bert"))
        hub.tag("model", "ns/tiny-bert", "v1", hub.commit_of["bert"])
        for name in ("gated", "slow"):
            hub.put_folder("model", f"ns/{name}", st)
        hub.gate("model", "ns/gated")
        hub.slow(r"ns/slow\b", 4)
        hub.put("model", "ns/notes", {"notes.txt": b"no model here\n"})
        hub.put("model", "ns/ensemble", {"semrel_ensemble.json": b"{}", "README.md": b"# an ensemble\n"})
        yield hub


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    return toy_folder(tmp_path_factory.mktemp("toy") / "toy", 48, 16)


def semrel(hub: LocalHub, home: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """``semrel ARGS`` with the local Hub's client environment, ``HF_HOME=home`` and ``env``."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    base |= hub.client_env("hf_dummy") | {"HF_HOME": str(home), "PYTHONPATH": str(REPO),
                                          "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    return subprocess.run([sys.executable, "-m", "semrel", *args], env=base | env,
                          capture_output=True, text=True, timeout=600)


def fit(toy: Path, model: str, output: Path, *more: str) -> list[str]:
    return ["fit", "--dataset", str(toy), "--score-range", "0", "1", "--model", model,
            "--max-steps", "2", "--batch-size", "8", "--output", str(output), *more]


def downloaded(hub: LocalHub, since: int = 0) -> set[str]:
    """The files the client fetched (GET .../resolve/REV/PATH) since request ``since``."""
    return {m[1] for method, path, _ in hub.requests[since:] if method == "GET"
            if (m := re.match(r"^/[^/]+/[^/]+/resolve/[^/]+/(.+)$", path))}


def test_fit_from_a_hub_bi_encoder_at_a_commit_then_offline_from_the_cache(hub, toy, tmp_path):
    sha = hub.commit_of["st"]
    spec = f"ns/tiny-st@{sha}"
    done = semrel(hub, tmp_path / "home", *fit(toy, spec, tmp_path / "online"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert downloaded(hub) >= {"model.safetensors", "modules.json", "1_Pooling/config.json",
                               "tokenizer.json", "config.json", "README.md"}
    assert not downloaded(hub) & set(NOT_MODEL_FILES)  # nor are they in the cache
    snapshot = tmp_path / "home" / "hub" / "models--ns--tiny-st" / "snapshots" / sha
    assert (snapshot / "model.safetensors").is_file() and not (snapshot / "onnx").exists()
    assert not (snapshot / "pytorch_model.bin").exists()
    online = json.loads((tmp_path / "online" / "metrics.json").read_text())
    assert online["start_model"] == {"spec": spec, "kind": "bi-encoder", "hub_id": "ns/tiny-st",
                                     "revision": sha}  # the pinned commit, not main's head
    card = ModelCard.load(tmp_path / "online" / "README.md")
    assert (card.data.base_model, card.data.license) == ("ns/tiny-st", "mit")
    assert f"Started from `ns/tiny-st` at revision `{sha}` (a sentence-transformers bi-encoder)" \
        in card.text

    asked = len(hub.requests)
    done = semrel(hub, tmp_path / "home", *fit(toy, spec, tmp_path / "offline"), HF_HUB_OFFLINE="1")
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(hub.requests) == asked  # the Hub was never asked
    offline = json.loads((tmp_path / "offline" / "metrics.json").read_text())
    assert offline["start_model"] == online["start_model"]
    assert offline["spearman"] == online["spearman"]  # the same model, the same seed


def test_fit_a_cross_encoder_from_a_hub_cross_encoder(hub, toy, tmp_path):
    done = semrel(hub, tmp_path / "home", *fit(toy, "ns/tiny-ce", tmp_path / "run", "--encoder", "cross"))
    assert done.returncode == 0, done.stderr[-3000:]
    # the CrossEncoder's head goes on training: transformers reports no newly made classifier
    assert "classifier.weight | MISSING" not in done.stderr
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["start_model"] == {"spec": "ns/tiny-ce", "kind": "cross-encoder",
                                      "hub_id": "ns/tiny-ce", "revision": hub.commit_of["ce"]}
    assert ModelCard.load(tmp_path / "run" / "README.md").data.base_model == "ns/tiny-ce"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


RESOLVE = "import sys; from semrel.trainers.model_ref import resolve_model_ref as r; " \
          "m = r(sys.argv[1]); print(m.kind, m.revision, m.path.name)"


def test_a_plain_bert_by_tag_resolves_online_then_from_the_cached_ref(hub, tmp_path):
    """Online, offline, and online with a Hub that cannot be reached (the cached snapshot, with a
    warning)."""
    sha = hub.commit_of["bert"]
    base = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    unreachable = {"HF_ENDPOINT": f"http://127.0.0.1:{_closed_port()}"}  # online: the cache, said
    for env in ({}, {"HF_HUB_OFFLINE": "1"}, unreachable):
        got = subprocess.run([sys.executable, "-c", RESOLVE, "ns/tiny-bert@v1"], capture_output=True,
                             text=True, env=base | hub.client_env(None) | {
                                 "HF_HOME": str(tmp_path / "home"), "PYTHONPATH": str(REPO), **env})
        assert got.returncode == 0, got.stderr[-3000:]
        assert got.stdout.split() == ["transformer", sha, sha], env
        assert ("the Hub did not answer" in got.stderr) == (env is unreachable), got.stderr


NO_SNAPSHOT = ", and the Hugging Face cache holds no snapshot of model repo {} at main"  # the Hub did not answer
ERRORS = [  # (case, --model, environment, the one line after "semrel fit: error: --model MODEL: ")
    ("offline, empty cache", "ns/tiny-st", {"HF_HUB_OFFLINE": "1"},
     r"no such folder, and HF_HUB_OFFLINE is set while the Hugging Face cache \(\{home\}/hub\) holds "
     r"no whole snapshot of model repo ns/tiny-st at main: fetch it once online \(HF_HUB_OFFLINE unset\)"),
    ("unknown repo", "ns/nope", {},
     r"no such folder, and \{endpoint\} has no model repo ns/nope \(or it is private: set HF_TOKEN to "
     r"a token that may read it\)"),
    ("unknown revision", "ns/tiny-st@v9", {},
     r"model repo ns/tiny-st has no revision v9 \(a branch, tag or commit\) on \{endpoint\}"),
    ("gated", "ns/gated", {"HF_HUB_DISABLE_PROGRESS_BARS": "0"},  # refused before any progress bar
     r"model repo ns/gated at main is gated: accept its terms on \{endpoint\}/ns/gated and set "
     r"HF_TOKEN to a token of that account"),
    ("timeout", "ns/slow", {"HF_HUB_ETAG_TIMEOUT": "1", "HF_HUB_DOWNLOAD_TIMEOUT": "1"},
     r"\{endpoint\} \(HF_ENDPOINT\) did not answer within HF_HUB_ETAG_TIMEOUT=1 s \(a download "
     r"within HF_HUB_DOWNLOAD_TIMEOUT=1 s\)" + NO_SNAPSHOT.format("ns/slow")),
    ("connection refused", "ns/tiny-st", {"HF_ENDPOINT": "http://127.0.0.1:{closed}"},
     r"cannot connect to http://127.0.0.1:\{closed\} \(HF_ENDPOINT\): .+" + NO_SNAPSHOT.format("ns/tiny-st")),
    ("no model in the repo", "ns/notes", {},
     r"model repo ns/notes at main holds no file of a model \(config.json, modules.json, "
     r"semrel_encoder.json, semrel_ensemble.json, weights, ...\)"),
    ("an ensemble", "ns/ensemble", {}, r"an ensemble cannot be fine-tuned; pass one of its members"),
]


@pytest.mark.parametrize("model, env, line", [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_each_hub_failure_is_one_line(hub, toy, tmp_path, model, env, line):
    values = {"home": str(tmp_path / "home"), "endpoint": hub.endpoint, "closed": str(_closed_port())}
    env = {k: v.format(**values) for k, v in env.items()}
    done = semrel(hub, tmp_path / "home", *fit(toy, model, tmp_path / "run"), **env)
    assert done.returncode == 2, done.stderr[-3000:]
    pattern = re.escape(f"semrel fit: error: --model {model}: ") + \
        re.sub(r"\\\{(\w+)\\\}", lambda m: re.escape(values[m[1]]), line)
    assert re.fullmatch(pattern + "\n", done.stderr), done.stderr
    assert not (tmp_path / "run").exists()
