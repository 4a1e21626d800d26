"""Potato: the task folder semrel writes, Potato's real server answering it over HTTP, and the pull back.

The round trip starts ``potato start`` from ``.venv-potato`` (``make setup`` makes it: Potato pins
Flask, pandas and scikit-learn of its own) on 127.0.0.1, logs simulated annotators in, answers every
tuple through ``/updateinstance`` as Potato's page does, and reads the ``user_state.json`` files the
server wrote. The rule cases write ``user_state.json`` in the layout that server writes
(``UserState.to_json``: ``instance_id_to_label_to_value`` of ``[{"schema", "name"}, value]`` pairs).
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import time

import httpx
import numpy as np
import pytest
from scipy.stats import spearmanr

from label_studio_server import free_port
from project import REPO
from semrel.annotation.answers import RULES, pseudonym
from semrel.annotation.potato import read_answers, write_task
from semrel.metrics.errors import DataValidationError

VENV = REPO / ".venv-potato"
MISSING = f"Potato is not installed in {VENV}: run `make servers` (or `make .venv-potato/.installed`)"
WORDS = ("red", "blue", "green", "yellow", "circle", "square", "triangle", "star", "a", "the")


GENERATE = """import json, yaml
from potato.bws_tuple_generator import BwsTupleGenerator
config = yaml.safe_load(open("config.yaml"))
pool = [json.loads(line) for line in open(config["data_files"][0])]
tuples = BwsTupleGenerator(pool, "id", "text", **{k: v for k, v in config["bws_config"].items()}).generate()
print(json.dumps({t["id"]: [i["source_id"] for i in t["_bws_items"]] for t in tuples}))
"""  # the tuples Potato's own generator cuts from the task folder, as its server does at start


def semrel(*args, cwd=None, env=None):
    return subprocess.run([sys.executable, "-m", "semrel", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})


def write_pairs(path, n: int, seed: int = 0) -> dict[str, float]:
    """A pairs file of ``n`` pairs; returns each pair's latent relatedness."""
    rng = np.random.default_rng(seed)
    latent = {}
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["pair_id", "sentence1", "sentence2", "sampling_score", "source"])
        for i in range(n):
            first = " ".join(rng.choice(WORDS, 6))
            w.writerow([f"p{i:03d}", f"{first} {i}", f"{first[::-1]} {i}", 0.5, "toy"])
            latent[f"p{i:03d}"] = float(rng.uniform())
    return latent


@pytest.fixture
def design(tmp_path):
    """(pairs file, tuples file, latent scores): 40 pairs, 80 tuples of `semrel bws design --pairs`."""
    latent = write_pairs(tmp_path / "pairs.csv", 40)
    done = semrel("bws", "design", "--pairs", tmp_path / "pairs.csv", "--designs", "10", "--csv", tmp_path / "t.csv")
    assert done.returncode == 0, done.stderr
    return tmp_path / "pairs.csv", tmp_path / "t.csv", latent


def answer(latent, items, rng, noise):
    """(best, worst) positions of a noisy annotator (Gumbel noise on the latent scores)."""
    values = np.array([latent[i] for i in items]) + rng.gumbel(size=len(items)) * noise
    return "ABCD"[int(values.argmax())], "ABCD"[int(values.argmin())]


@pytest.mark.slow  # starts Potato's server
def test_potato_round_trip_through_the_real_server(design, tmp_path):
    if not (VENV / "bin" / "potato").is_file():
        pytest.skip(MISSING)
    pairs, tuples, latent = design
    done = semrel("annotate", "potato", tuples, "--pairs", pairs, "--output", tmp_path / "task")
    assert done.returncode == 0, done.stderr
    task = json.loads((tmp_path / "task" / "semrel-task.json").read_text())["tuples"]
    rows = list(csv.DictReader(tuples.open(encoding="utf-8")))
    assert {p: v for p, v in task.items()} == {  # Potato's tuple i is the design's tuple i
        f"bws_tuple_{i + 1:04d}": [r["tuple_id"], [r[f"Item{j}"] for j in range(1, 5)]] for i, r in enumerate(rows)}
    sentences = {r["pair_id"]: r["sentence1"] for r in csv.DictReader(pairs.open(encoding="utf-8"))}
    generated = subprocess.run([str(VENV / "bin" / "python"), "-c", GENERATE], cwd=tmp_path / "task", check=True,
                               capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ""}).stdout
    assert json.loads(generated) == {p: [f"{t}-{c}" for c in "ABCD"] for p, (t, _) in task.items()}
    port = free_port()
    log = (tmp_path / "potato.log").open("w")
    server = subprocess.Popen([str(VENV / "bin" / "potato"), "start", "config.yaml", "-p", str(port), "--host",
                               "127.0.0.1", "--require-password", "false"], cwd=tmp_path / "task", stdout=log,
                              stderr=subprocess.STDOUT, env={**os.environ, "PYTHONPATH": "", "VIRTUAL_ENV": str(VENV)})
    base = f"http://127.0.0.1:{port}"
    rng = np.random.default_rng(1)
    try:
        for _ in range(240):
            try:
                if httpx.get(base + "/", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.5)
        else:
            pytest.fail(f"Potato did not answer in 120 s: {(tmp_path / 'potato.log').read_text()[-2000:]}")
        expected = {"incomplete": 0, "contradictory": 0}
        for annotator, noise in (("ann1@lab.org", 0.05), ("ann2@lab.org", 0.1), ("ann3@lab.org", 0.2),
                                 ("random@lab.org", 100.0)):
            with httpx.Client(base_url=base, follow_redirects=True, timeout=30) as client:
                client.post("/auth", data={"email": annotator})
                page = client.get("/annotate").text  # the first tuple's page: the design's four pairs
                first, items = task["bws_tuple_0001"]
                for letter, pair_id in zip("ABCD", items, strict=True):
                    assert f'"source_id": "{first}-{letter}"' in page and sentences[pair_id] in page
                for n, (potato_id, (_, items)) in enumerate(task.items()):
                    best, worst = answer(latent, items, rng, noise)
                    labels = {"relatedness:::best": best, "relatedness:::worst": worst}
                    if annotator == "ann3@lab.org" and n < 3:  # a best without a worst
                        labels.pop("relatedness:::worst")
                        expected["incomplete"] += 1
                    elif annotator == "ann3@lab.org" and n < 5:  # the same pair best and worst
                        labels["relatedness:::worst"] = best
                        expected["contradictory"] += 1
                    reply = client.post("/updateinstance", json={"instance_id": potato_id, "annotations": labels})
                    assert reply.status_code == 200, reply.text[:300]
    finally:
        server.terminate()
        server.wait(timeout=60)
        log.close()
    out = tmp_path / "pulled.csv"
    done = semrel("annotate", "potato-pull", tmp_path / "task", "--output", out, env={"SEMREL_ANNOTATOR_KEY": "k"})
    assert done.returncode == 0, done.stderr
    kept = 4 * 80 - expected["incomplete"] - expected["contradictory"]
    assert done.stdout.splitlines() == [
        f"320 answers from 4 annotators -> {kept} annotations; " + "; ".join(
            f"{expected.get(rule, 0)} {rule} ({text})" for rule, text in RULES.items()), f"-> {out}"]
    pulled = list(csv.DictReader(out.open(encoding="utf-8")))
    assert len(pulled) == kept and {r["annotator"] for r in pulled} == {
        pseudonym(a, "k") for a in ("ann1@lab.org", "ann2@lab.org", "ann3@lab.org", "random@lab.org")}
    assert "lab.org" not in out.read_text(encoding="utf-8")  # raw ids never written
    done = semrel("bws", "score", out, "--csv", "-")
    assert done.returncode == 0, done.stderr
    scores = {r["item"]: float(r["score"]) for r in csv.DictReader(io.StringIO(done.stdout))}
    assert set(scores) == set(latent)
    rho = spearmanr([scores[p] for p in latent], list(latent.values())).statistic
    assert rho > 0.8, rho  # three careful annotators of four: the latent order comes back


def user_state(folder, user, labels: dict) -> None:
    """``<folder>/annotation_output/<user>/user_state.json`` as Potato writes it, with ``labels``:
    {potato tuple id: {"best": letter, "worst": letter}}."""
    path = folder / "annotation_output" / user / "user_state.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    labelled = {tuple_id: [[{"schema": "relatedness", "name": name}, value] for name, value in chosen.items()]
                for tuple_id, chosen in labels.items()}
    path.write_text(json.dumps({"user_id": user, "instance_id_ordering": list(labels),
                                "instance_id_to_label_to_value": labelled}, indent=2))


@pytest.fixture
def task(tmp_path):
    tuples = {"t1": ["p1", "p2", "p3", "p4"], "t2": ["p5", "p2", "p1", "p3"]}
    pairs = {f"p{i}": {"sentence1": f"first {i}", "sentence2": f"second {i}"} for i in range(1, 6)}
    write_task(tuples, pairs, tmp_path / "task")
    return tmp_path / "task"


@pytest.mark.parametrize("labels, rows, counts", [
    ({"bws_tuple_0001": {"best": "A", "worst": "D"}, "bws_tuple_0002": {"best": "B", "worst": "A"}},
     [["t1", "p1", "p4"], ["t2", "p2", "p5"]], {}),
    ({"bws_tuple_0001": {"best": "A"}, "bws_tuple_0002": {"worst": "C"}}, [], {"incomplete": 2}),
    ({"bws_tuple_0001": {"best": "A", "worst": ""}}, [], {"incomplete": 1}),
    ({"bws_tuple_0001": {"best": "C", "worst": "C"}, "bws_tuple_0002": {"best": "A", "worst": "D"}},
     [["t2", "p5", "p3"]], {"contradictory": 1}),
])
def test_answers_under_the_stated_rules(task, labels, rows, counts):
    user_state(task, "someone@x.org", labels)
    (task / "annotation_output" / "pocket").mkdir()  # Potato's own folder: no annotator
    read = read_answers(task, salt="s")
    assert [[r[1], r[-2], r[-1]] for r in read.rows] == rows
    assert read.counts == {rule: counts.get(rule, 0) for rule in RULES}
    assert read.n_annotators == 1 and {r[0] for r in read.rows} <= {pseudonym("someone@x.org", "s")}


@pytest.mark.parametrize("setup, message", [
    (lambda t: user_state(t, "u", {"bws_tuple_0009": {"best": "A", "worst": "B"}}),
     "{t}/annotation_output/u/user_state.json: a tuple the task does not hold ('bws_tuple_0009')"),
    (lambda t: user_state(t, "u", {"bws_tuple_0001": {"best": "E", "worst": "B"}}),
     "{t}/annotation_output/u/user_state.json: a position the tuple does not have (bws_tuple_0001: 'E' "
     "(positions A..D))"),
    (lambda t: (t / "annotation_output" / "u").mkdir(parents=True)
     or (t / "annotation_output" / "u" / "user_state.json").write_text("{not json"),
     "{t}/annotation_output/u/user_state.json: not a Potato user state (JSONDecodeError: Expecting property "
     "name enclosed in double quotes: line 1 column 2 (char 1))"),
    (lambda t: None, "{t}/annotation_output: no annotations yet (no annotator folder with a user_state.json; "
                     "start Potato with config.yaml and annotate first)"),
    (lambda t: (t / "semrel-task.json").unlink(),
     "{t}: not a Potato task folder of semrel (no semrel-task.json; semrel annotate potato writes one)"),
])
def test_a_bad_output_folder_is_one_line_naming_the_file(task, setup, message):
    setup(task)
    with pytest.raises(DataValidationError) as caught:
        read_answers(task, salt="")
    assert str(caught.value) == message.format(t=task)


@pytest.mark.parametrize("args, message", [
    (["potato", "{tuples}", "--pairs", "{pairs}", "--output", "{full}"],
     "{full}: exists and is not an empty folder (a task folder holds Potato's annotations: never replaced; "
     "give a new folder)"),
    (["potato", "{missing}", "--pairs", "{pairs}", "--output", "{new}"], "{missing}: no such file"),
    (["potato", "{pairs}", "--pairs", "{pairs}", "--output", "{new}"],
     "{pairs}: missing columns (a tuples file needs tuple_id, Item1..Itemk (k >= 2); header is ['pair_id', "
     "'sentence1', 'sentence2', 'sampling_score', 'source'])"),
    (["potato-pull", "{missing}", "--output", "{new}"],
     "{missing}: no such folder (a task folder of semrel annotate potato)"),
    (["potato-pull", "{full}", "--output", "{full}/semrel-task.json"],
     "--output {full}/semrel-task.json: lies in DIR {full}, which this command reads: an output never "
     "replaces an input; give another path"),
])
def test_wrong_arguments_are_one_line(design, tmp_path, args, message):
    pairs, tuples, _ = design
    names = {"pairs": pairs, "tuples": tuples, "missing": tmp_path / "missing", "new": tmp_path / "new",
             "full": tmp_path / "full"}
    assert semrel("annotate", "potato", tuples, "--pairs", pairs, "--output", names["full"]).returncode == 0
    before = sorted(p.name for p in names["full"].iterdir())
    done = semrel("annotate", *[a.format(**names) for a in args])
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"semrel annotate {args[0]}: error: {message.format(**names)}\n"
    assert sorted(p.name for p in names["full"].iterdir()) == before and not names["new"].exists()
