"""Publishing guards, slow part: a real tiny run trained on str-2021 `cv-fold-0` (its checkpoint chosen on
SemRel-2024 eng, a dataset that may not be redistributed either) pushed to the local Hub
(tests/hub_server.py) sends exactly the files a model repo needs, none of the gold labels or
texts of either dataset and no path of this machine, and the files the command lists are the
files that arrive; every kind's model card has no model-index, says how the model loads and its
snippet runs as written; the Space server prints its real URL."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import urllib.request

import datasets
import pytest
from huggingface_hub import ModelCard

from hub_server import LocalHub
from project import REPO
from semrel.cli import main
from semrel.dataset_scripts import load
from semrel.dataset_scripts.pairs import PairData
from semrel.publishing.guard import local_path_regex, run_of_labels, written_numbers
from semrel.trainers.fitting import fit
from trainer_fixtures import small_args, tiny_encoder, toy_conditional_pairs, toy_pairs

pytestmark = pytest.mark.slow  # trains models, starts servers
NS = "semrel-test"


@pytest.fixture(scope="module")
def encoder(tmp_path_factory):
    return tiny_encoder(tmp_path_factory.mktemp("tiny-bert"))


SNIPPETS = """\
import contextlib, io, json, os, sys, traceback
for line in sys.stdin:
    job, out = json.loads(line), io.StringIO()
    os.chdir(job["cwd"])
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(job["code"], "<snippet>", "exec"), {"__name__": "__main__"})
        error = None
    except BaseException:
        error = traceback.format_exc()
    print("@@snippet@@" + json.dumps({"stdout": out.getvalue(), "error": error}), flush=True)
"""


@pytest.fixture(scope="module")
def run_snippet():
    """``run_snippet(code, cwd) -> (stdout, traceback or None)``: ``code`` run as a script
    (``__main__``, its own namespace) in one fresh interpreter that the cards of this module
    share, not this test process; a snippet imports what it uses as in any interpreter, only
    once for all (each a new interpreter: ~10 s of torch and transformers imports apiece)."""
    process = subprocess.Popen([sys.executable, "-c", SNIPPETS], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})

    def run(code: str, cwd) -> tuple[str, str | None]:
        process.stdin.write(json.dumps({"code": code, "cwd": str(cwd)}) + "\n")
        process.stdin.flush()
        for line in process.stdout:  # what the interpreter itself printed, then the answer
            if line.startswith("@@snippet@@"):
                done = json.loads(line.removeprefix("@@snippet@@"))
                return done["stdout"], done["error"]
        raise AssertionError("the snippet interpreter ended")

    yield run
    process.stdin.close()
    process.wait(timeout=60)


def numbers(value):
    """Every list of numbers inside a JSON value."""
    if isinstance(value, dict):
        for item in value.values():
            yield from numbers(item)
    elif isinstance(value, list):
        if value and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
            yield value
        for item in value:
            yield from numbers(item)


def files_of(folder) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def push_licensed(run_dir, tmp_path, mirror) -> tuple[str, dict, list, list]:
    """``semrel push --model run_dir`` to the local Hub once the run's card says a licence (a random
    tiny BERT has none: a user must say one before the push is allowed): (its stdout, the files the
    repo got, every file sent, the files the command lists). The push leaves the run folder as it was."""
    card = ModelCard.load(run_dir / "README.md")
    card.data.license = "apache-2.0"
    card.save(run_dir / "README.md")
    before = files_of(run_dir)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "SEMREL_"))}
    env["SEMREL_FIXTURE_MIRROR"] = os.environ["SEMREL_FIXTURE_MIRROR"]  # upstream may be the fixtures
    with LocalHub() as hub:
        env |= hub.client_env("hf_dummy") | {"HF_HOME": str(tmp_path / "home")}
        done = subprocess.run([sys.executable, "-m", "semrel", "push", "--namespace", NS,
                               "--model", str(run_dir), "--out", str(tmp_path / "build"),
                               "--mirror", str(mirror)], cwd=REPO, env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        sent = hub.files("model", f"{NS}/{run_dir.name}")
        every = hub.sent_bytes()
    assert files_of(run_dir) == before
    return done.stdout, sent, every, [line.split()[0] for line in done.stdout.splitlines() if line.startswith("    ")]


def test_a_run_on_str_2021_leaves_without_its_gold_labels_and_paths(encoder, mirror, cache_dir,
                                                                    tmp_path, capsys):
    run_dir = tmp_path / "str-bi"
    assert main(["fit", "--dataset", "str-2021", "--config", "cv-fold-0", "--mirror", str(mirror),
                 "--cache-dir", str(cache_dir), "--encoder", "bi", "--model", str(encoder),
                 "--output", str(run_dir), "--max-steps", "1", "--batch-size", "8"]) == 0
    record = json.loads((run_dir / "eval_predictions.json").read_text())
    gold = record["labels"]  # the fold's gold scores (str-2021's native scale is [0, 1])
    assert len(gold) == 1100 and json.loads((run_dir / "metrics.json").read_text())["output_dir"]
    stdout, sent, every, listed = push_licensed(run_dir, tmp_path, mirror)
    assert sorted(listed) == sorted(sent) == SENT  # what the command lists is what arrives
    kept = re.search(r"^  stays here: checkpoints/ \(\d+ files?\), (.*)$", stdout, re.M)
    assert sorted(kept.group(1).split(", ")) == ["eval_predictions.json", "seen_pairs.json"]
    assert "    metrics.json  (figures only; output_dir, start_model stay here)\n" in stdout
    paths = local_path_regex()
    for _, name, data in every:
        assert str(tmp_path).encode() not in data and str(REPO).encode() not in data, name
        text = data.decode("utf-8", errors="ignore")
        assert not paths.search(text), (name, paths.search(text))
        if name.endswith(".json"):
            assert not [n for n in numbers(json.loads(text)) if n == gold], name
    assert ModelCard(sent["README.md"].decode()).data.datasets == [f"{NS}/str-2021"]
    assert not [n for n in sent if n.startswith("checkpoints/")]


# what a bi-encoder's model repo holds: the transformer, its tokenizer, the sentence-transformers
# files, semrel's encoder file, the card and the figures (publishing.staging.model_files)
SENT = ["1_Pooling/config.json", "README.md", "config.json", "config_sentence_transformers.json",
        "metrics.json", "model.safetensors", "modules.json", "semrel_encoder.json",
        "sentence_bert_config.json", "tokenizer.json", "tokenizer_config.json"]


def texts_of(dataset_id: str, config: str, upstream, cache_dir) -> set[str]:
    """Every sentence of every split of a config (>= 12 characters: shorter ones occur in prose)."""
    splits = load(dataset_id, config, mirror=upstream, cache_dir=cache_dir)
    return {t for split in splits.values() for column in ("sentence1", "sentence2")
            for t in split[column] if len(t) >= 12}


def test_a_run_chosen_on_a_card_only_dev_set_is_pushed_with_nothing_of_it(encoder, upstream, cache_dir,
                                                                          tmp_path):
    """The README's workflow: fit on str-2021 cv-fold-0, choose the checkpoint on SemRel-2024 eng
    (`--eval-dataset`); the push goes through and sends the model, its card and its figures only."""
    run_dir = tmp_path / "str-bi-dev"
    assert main(["fit", "--dataset", "str-2021", "--config", "cv-fold-0", "--mirror", str(upstream),
                 "--cache-dir", str(cache_dir), "--encoder", "bi", "--model", str(encoder),
                 "--output", str(run_dir), "--max-steps", "2", "--batch-size", "8",
                 "--eval-dataset", "semrel-2024", "--eval-config", "eng", "--eval-steps", "1"]) == 0
    dev = json.loads((run_dir / "selection_predictions.json").read_text())
    test = json.loads((run_dir / "eval_predictions.json").read_text())
    assert (dev["data"], dev["split"], test["data"]) == ("semrel-2024/eng", "validation", "str-2021/cv-fold-0")
    assert len(dev["sentence1"]) == len(dev["labels"]) >= 3
    stdout, sent, every, listed = push_licensed(run_dir, tmp_path, upstream)
    assert sorted(sent) == listed == SENT
    kept = re.search(r"^  stays here: checkpoints/ \(\d+ files\), (.*)$", stdout, re.M)
    assert sorted(kept.group(1).split(", ")) == ["eval_predictions.json", "seen_pairs.json",
                                                 "selection_predictions.json"]
    metrics = json.loads(sent["metrics.json"])
    assert "output_dir" not in metrics and metrics["selection"]["data"] == "semrel-2024/eng/validation"
    forbidden = texts_of("semrel-2024", "eng", upstream, cache_dir) | texts_of("str-2021", "cv-fold-0", upstream,
                                                                               cache_dir)
    assert set(dev["sentence1"]) <= forbidden
    paths = local_path_regex()
    assert {name for _, name, _ in every} == set(SENT)
    for _, name, data in every:
        text = data.decode("utf-8", errors="ignore")
        assert not [t for t in forbidden if t in text] and str(tmp_path) not in text, name
        if name.endswith(".safetensors"):  # the weights: numbers, no text to search
            continue
        assert not paths.search(text), (name, paths.search(text))
        for labels in (dev["labels"], test["labels"]):
            assert run_of_labels(written_numbers(text), tuple(labels)) == 0, name
            if name.endswith(".json"):
                assert not [n for n in numbers(json.loads(text)) if n == labels], name
    assert ModelCard(sent["README.md"].decode()).data.datasets == [f"{NS}/str-2021"]


KINDS = [  # (encoder, conditional data?, library_name, pipeline_tag)
    ("bi", False, "sentence-transformers", "sentence-similarity"),
    ("cross", False, "sentence-transformers", "text-ranking"),
    ("bi", True, "semrel", "sentence-similarity"),
    ("cross", True, "sentence-transformers", "text-ranking"),
    ("tri", True, "semrel", "sentence-similarity"),
]


@pytest.mark.parametrize("kind, conditional, library, pipeline", KINDS,
                         ids=[f"{k}{'-conditional' if c else ''}" for k, c, _, _ in KINDS])
def test_every_card_loads_as_it_says_and_its_snippet_runs(encoder, run_snippet, tmp_path, kind, conditional,
                                                          library, pipeline):
    pairs = toy_conditional_pairs() if conditional else toy_pairs()
    pairs = pairs.shuffle(seed=0)
    data = datasets.DatasetDict({"train": pairs.select(range(32)), "test": pairs.select(range(32, 48))})
    run_dir = tmp_path / f"run-{kind}"
    fit(PairData(data, (1.0, 5.0) if conditional else (0.0, 1.0), "toy"), str(encoder),
        small_args(run_dir, encoder=kind))
    text = (run_dir / "README.md").read_text()
    meta = ModelCard(text).data
    assert "model-index" not in text and meta.eval_results is None  # self-reported: no widget
    assert (meta.library_name, meta.pipeline_tag) == (library, pipeline)
    assert meta.base_model is None  # a random BERT is no packaged (Hub) model
    if library == "sentence-transformers":
        assert "pip install 'sentence-transformers>=6.0'" in text  # what pyproject requires
    else:
        assert "PairEncoder.from_pretrained(path)" in text and "transformers" not in meta.tags
        assert "Only semrel loads this model" in text and "`AutoModel` would load the bare encoder" in text
        if kind == "tri":
            assert "silently drop `semrel_head.safetensors`" in text
    snippet = re.search(r"```python\n(.*?)```", text, re.S)[1]
    assert f'path = "{run_dir.name}"' in snippet
    printed, error = run_snippet(snippet + "\nprint('ran')", cwd=tmp_path)
    assert error is None and printed.strip().endswith("ran"), error


def test_the_space_server_prints_the_url_it_runs_on(tmp_path):
    """gradio moves to the next port when 7860 is taken: the printed URL is the one it serves."""
    taken = socket.socket()
    try:
        taken.bind(("127.0.0.1", 7860))
        taken.listen()
    except OSError:  # another program holds it already: gradio moves on all the same
        pass
    app = subprocess.Popen([sys.executable, "-m", "semrel.publishing.spaces", "bws_scores", "--out",
                            str(tmp_path / "hub")], cwd=REPO, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True,
                           env={**os.environ, "GRADIO_ANALYTICS_ENABLED": "False"})
    try:
        lines = []
        for line in app.stdout:
            lines.append(line)
            if served := re.match(r"serving (http://127\.0\.0\.1:(\d+)/?) \(Ctrl-C stops\)", line):
                break
        else:
            pytest.fail("".join(lines[-30:]))
        assert int(served[2]) != 7860
        with urllib.request.urlopen(served[1], timeout=30) as page:
            assert page.status == 200
    finally:
        app.terminate()
        app.wait(30)
        taken.close()
