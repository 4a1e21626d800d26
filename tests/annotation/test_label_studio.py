"""The Label Studio round trip against a REAL server (``.venv-label-studio``, made by ``make setup``):
semrel annotate push, simulated annotators answering through the API, semrel annotate pull, scores.

The server (SQLite, a temporary data folder, 127.0.0.1, a free port) starts once for this file, from
the migrated database an earlier run kept in pytest's cache where there is one; its users and
personal access tokens are made from the command line (tests/label_studio_server.py).
Without the server's virtualenv these tests fail under CI (``CI=true``) and skip elsewhere.
"""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from label_studio_server import EXECUTABLE, MISSING, LabelStudio, Proxy, free_port, session_cookie, version
from project import REPO
from semrel.annotation import label_studio as ls
from semrel.annotation.answers import RULES, pseudonym
from semrel.metrics.bws.cli import read
from semrel.metrics.bws.design import generate_tuples, tuple_ids
from semrel.metrics.bws.scoring import bws_scores

N_PAIRS, N_ANNOTATORS, RANDOM, NOISE, KEY = 60, 6, ("a5", "a6"), 0.5, "test-key"
UNANSWERED = 4  # tuples nobody answers
INJECTED = {"skipped": 5, "cancelled": 3, "incomplete": 1, "contradictory": 1, "repeated": 1}
SCREENSHOT = REPO / "docs" / "images" / "label-studio-bws.png"
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars")


def semrel(*args, env=None):
    return subprocess.run([sys.executable, "-m", "semrel", *map(str, args)], cwd=REPO, capture_output=True,
                          text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})


def _reference_counting():
    """The counting reference of tests/metrics/test_bws_scores.py (the NRC Perl script's procedure;
    the script itself is in neither this repository nor the mirror)."""
    spec = importlib.util.spec_from_file_location("bws_reference", REPO / "tests" / "metrics" / "test_bws_scores.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.reference_counting


@pytest.fixture(scope="module")
def server(request, tmp_path_factory):
    if not EXECUTABLE.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(MISSING)
        pytest.skip(MISSING)
    cache = getattr(request.config, "cache", None)  # none under -p no:cacheprovider
    prepared = None if cache is None else cache.mkdir(f"label-studio-{version()}")
    with LabelStudio(tmp_path_factory.mktemp("label_studio"), prepared) as running:
        yield running


WHO = ("The old fisherman", "A young teacher", "My neighbour", "The band", "A tired nurse", "The cat")
DOES = ("mends a net by the harbour", "reads a novel on the train", "bakes bread early every morning",
        "plays a loud concert in the park", "walks home after a long night shift", "sleeps in the warm sun",
        "argues about the price of fish", "grades essays late into the evening", "waters the tomatoes on the roof",
        "chases a moth across the kitchen")


def write_design(folder, n_pairs: int, seed: int = 0):
    """A pairs file of ``n_pairs`` pairs and its tuples file (2N 4-tuples, as semrel bws design --pairs)."""
    ids = [f"p{i:03d}" for i in range(n_pairs)]
    texts = [(f"{WHO[i % 6]} {DOES[i % 10]}.", f"{WHO[(i // 6 + i) % 6]} {DOES[(i + 1) % 10]}.")
             for i in range(n_pairs)]
    (folder / "pairs.csv").write_text("pair_id,sentence1,sentence2\n" + "".join(
        f'{p},"{a}","{b}"\n' for p, (a, b) in zip(ids, texts, strict=True)), encoding="utf-8")
    design = generate_tuples(ids, k=4, factor=2, n_designs=20, seed=seed).tuples.tolist()
    (folder / "tuples.csv").write_text("tuple_id,Item1,Item2,Item3,Item4\n" + "".join(
        f"{t},{','.join(row)}\n" for t, row in zip(tuple_ids(len(design)), design, strict=True)), encoding="utf-8")
    return dict(zip(tuple_ids(len(design)), design, strict=True))


def simulate(tuples: dict, seed: int):
    """The clean answers: each answered tuple by 2 of the 6 annotators; best = argmax(latent + Gumbel),
    worst = argmin(latent - Gumbel) among the other three; annotators a5, a6 choose at random.
    Returns (latent per pair, [(annotator, tuple id, best, worst)])."""
    rng = np.random.default_rng(seed)
    pairs = sorted({p for row in tuples.values() for p in row})
    latent = dict(zip(pairs, rng.normal(size=len(pairs)), strict=True))
    answers = []
    for tuple_id in list(tuples)[UNANSWERED:]:
        row = tuples[tuple_id]
        for annotator in rng.choice([f"a{i}" for i in range(1, N_ANNOTATORS + 1)], 2, replace=False):
            z = np.array([latent[p] for p in row])
            if annotator in RANDOM:
                z = np.zeros(4)
            best = int(np.argmax(z + rng.gumbel(scale=NOISE if annotator not in RANDOM else 1, size=4)))
            rest = [i for i in range(4) if i != best]
            worst = rest[int(np.argmin(z[rest] - rng.gumbel(scale=NOISE if annotator not in RANDOM else 1, size=3)))]
            answers.append((str(annotator), tuple_id, row[best], row[worst]))
    return latent, answers


def counting(answers, tuples):
    rows = [tuples[t] for _, t, _, _ in answers]
    return _reference_counting()(rows, [b for *_, b, _ in answers], [w for *_, w in answers])


def spearman(scores: dict, latent: dict) -> float:
    from scipy.stats import spearmanr

    keys = sorted(scores)
    return float(spearmanr([scores[k] for k in keys], [latent[k] for k in keys]).statistic)


def choice(name, position):
    return {"from_name": name, "to_name": "pair1_sentence1", "type": "choices",
            "value": {"choices": [f"Pair {position}"]}}


@pytest.fixture(scope="module")
def round_trip(server, tmp_path_factory):
    folder = tmp_path_factory.mktemp("round_trip")
    tuples = write_design(folder, N_PAIRS)
    env = {"LABEL_STUDIO_URL": server.url, "LABEL_STUDIO_API_KEY": server.token}
    pushed = semrel("annotate", "push", folder / "tuples.csv", "--pairs", folder / "pairs.csv", "--project",
                    "round trip", env=env)
    assert pushed.returncode == 0, pushed.stderr
    project = int(re.search(r"project (\d+)", pushed.stderr)[1])
    users = server.users([f"a{i}" for i in range(1, N_ANNOTATORS + 1)])
    ids = {name.split("@")[0]: str(made["id"]) for name, made in users.items()}
    clients = {name.split("@")[0]: ls.connect(server.url, made["token"]) for name, made in users.items()}
    tasks = {t["data"]["tuple_id"]: t["id"] for t in ls._tasks(clients["a1"], project)}
    latent, answers = simulate(tuples, seed=7)

    def post(annotator, tuple_id, result, cancelled=False):
        clients[annotator].request("POST", f"/api/tasks/{tasks[tuple_id]}/annotations/", what="answering",
                                   json={"result": result, "was_cancelled": cancelled})

    def position(tuple_id, pair):
        return tuples[tuple_id].index(pair) + 1

    def answer(annotator, tuple_id, best, worst):
        post(annotator, tuple_id, [choice("best", position(tuple_id, best)),
                                   choice("worst", position(tuple_id, worst))])

    for annotator, tuple_id, best, worst in answers:
        answer(annotator, tuple_id, best, worst)
    # the odd ones, each by an annotator who gives no clean answer to that tuple (a1 repeats its own)
    answered = {(a, t) for a, t, _, _ in answers}
    spare = [(a, t) for t in list(tuples)[UNANSWERED:] for a in ("a1", "a2", "a3", "a4") if (a, t) not in answered]
    odd = iter(spare)
    for _ in range(INJECTED["skipped"]):
        post(*next(odd), [], cancelled=True)
    for _ in range(INJECTED["cancelled"]):
        post(*next(odd), [choice("best", 1)], cancelled=True)
    post(*next(odd), [choice("best", 2)])  # incomplete: best without worst
    post(*next(odd), [choice("best", 3), choice("worst", 3)])  # contradictory
    repeat = next((a, t, b, w) for a, t, b, w in answers if a == "a1")
    again = (next(p for p in tuples[repeat[1]] if p not in repeat[2:]), repeat[3])  # another best, the same worst
    answer("a1", repeat[1], *again)
    final = [(a, t, *(again if (a, t) == repeat[:2] else (b, w))) for a, t, b, w in answers]
    for client in clients.values():
        client.close()
    pulled = semrel("annotate", "pull", "--project", project, "--tuples", folder / "tuples.csv", "--pairs",
                    folder / "pairs.csv", "--output", folder / "annotations.csv", "--annotator-key", KEY, env=env)
    assert pulled.returncode == 0, pulled.stderr
    return dict(folder=folder, tuples=tuples, project=project, latent=latent, answers=final, ids=ids,
                pulled=pulled, env=env)


@pytest.mark.slow  # starts Label Studio
def test_label_studio_round_trip_every_answer_comes_back_once(round_trip):
    rows = list(csv.DictReader(io.StringIO((round_trip["folder"] / "annotations.csv").read_text(encoding="utf-8"))))
    ids, tuples = round_trip["ids"], round_trip["tuples"]
    expected = sorted((pseudonym(ids[a], KEY), t, *tuples[t], b, w) for a, t, b, w in round_trip["answers"])
    got = sorted((r["annotator"], r["tuple_id"], r["Item1"], r["Item2"], r["Item3"], r["Item4"], r["BestItem"],
                  r["WorstItem"]) for r in rows)
    assert got == expected  # each answered (annotator, task) once, the repeated one with its last answer
    assert len(got) == 2 * (len(tuples) - UNANSWERED) == 232


@pytest.mark.slow  # starts Label Studio
def test_label_studio_pull_prints_the_injected_counts(round_trip):
    n_tuples, kept = len(round_trip["tuples"]), len(round_trip["answers"])
    n_answers = kept + sum(INJECTED.values())
    counts = "; ".join(f"{INJECTED[rule]} {rule} ({text})" for rule, text in RULES.items())
    assert round_trip["pulled"].stderr.splitlines() == [
        f"{n_tuples} tasks ({UNANSWERED} without an answer); {n_answers} answers from {N_ANNOTATORS} annotators "
        f"-> {kept} annotations; {counts}",
        f"{kept} annotations written to {round_trip['folder'] / 'annotations.csv'}"]


@pytest.mark.slow  # starts Label Studio
@pytest.mark.parametrize("how", ["text", "json"])
def test_label_studio_status_prints_what_bws_plan_prints_of_the_pulled_file(round_trip, tmp_path, how):
    folder, name, kept, env = (round_trip[k] for k in ("folder", "project", "answers", "env"))
    path, name, quick = str(folder / "annotations.csv"), f"project-{name}", ["--trials", "100", "--target", "0.95"]
    quick += ["--resamples", "100", "--repeats", "3", *["--json"] * (how == "json")]
    design = ["--tuples", folder / "tuples.csv", "--pairs", folder / "pairs.csv", "--annotator-key", KEY]
    status = semrel("annotate", "status", "--project", round_trip["project"], *design, *quick,
                    *["--output", tmp_path / "out"] * (how == "json"), env=env)
    plan = semrel("bws", "plan", path, *quick)
    assert status.returncode == plan.returncode == 0, status.stderr + plan.stderr
    assert status.stderr == plan.stderr.replace(path, name)  # the same notes
    got, answers, kept = status.stdout, len(kept) + sum(INJECTED.values()), len(kept)
    if how == "text":  # the progress, then SHR now, the projections, the least certain items and annotators
        counts = "; ".join(f"{INJECTED[rule]} {rule} ({text})" for rule, text in RULES.items())
        assert got.splitlines() == [f"{name}: 116 of 120 tasks answered; {answers} answers from {N_ANNOTATORS} "
                                    f"annotators -> {kept} annotations; {counts}",
                                    *plan.stdout.replace(path, name).splitlines()]
        return
    got = json.loads(got)
    written = [tmp_path / "out" / f"{name}-{n}" for n in "reliability.png items.png items.csv annotations.csv".split()]
    assert got["progress"] == {"tasks": 120, "answered": 116, "answers": answers, "annotators": N_ANNOTATORS,
                               "annotations": kept, "rules": INJECTED}
    assert got["plan"] == {**json.loads(plan.stdout)["files"][0], "file": name, "files_written": [*map(str, written)]}
    assert written[-1].read_bytes() == (folder / "annotations.csv").read_bytes()  # what pull writes


@pytest.mark.slow  # starts Label Studio
def test_label_studio_counting_scores_equal_the_reference_on_the_pulled_file(round_trip):
    path = round_trip["folder"] / "annotations.csv"
    _, annotations = read(path, "auto", "raise")  # as semrel bws score reads it
    ours = bws_scores(annotations, method="counting")
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
    reference = _reference_counting()([[r[f"Item{i}"] for i in range(1, 5)] for r in rows],
                                      [r["BestItem"] for r in rows], [r["WorstItem"] for r in rows])
    assert ours.items.tolist() == sorted(reference)
    assert ours.score.tolist() == [reference[i] for i in ours.items]  # exact
    assert reference == counting(round_trip["answers"], round_trip["tuples"])  # what the annotators gave


@pytest.mark.slow  # starts Label Studio
def test_label_studio_recovered_scores_correlate_as_the_noise_implies(round_trip):
    """Spearman of the pulled counting scores with the latent ones, against the same simulation run
    without the server for 200 noise seeds: within 3 standard deviations of their mean."""
    _, annotations = read(round_trip["folder"] / "annotations.csv", "auto", "raise")
    scores = bws_scores(annotations, method="counting")
    recovered = spearman(dict(zip(scores.items.tolist(), scores.score.tolist(), strict=True)), round_trip["latent"])
    offline = []
    for seed in range(100, 300):
        latent, answers = simulate(round_trip["tuples"], seed)
        offline.append(spearman(counting(answers, round_trip["tuples"]), latent))
    mean, sd = float(np.mean(offline)), float(np.std(offline, ddof=1))
    print(f"recovered Spearman {recovered:.4f}; without the server {mean:.4f} +- {sd:.4f} (200 simulations)")
    assert abs(recovered - mean) <= 3 * sd
    assert 0.7 < mean < 0.95  # the noise is neither negligible nor overwhelming


def tiny_project(server, folder, title):
    tuples = write_design(folder, 12)
    done = semrel("annotate", "push", folder / "tuples.csv", "--pairs", folder / "pairs.csv", "--project", title,
                  "--url", server.url, "--token", server.token)
    assert done.returncode == 0, done.stderr
    return int(re.search(r"project (\d+)", done.stderr)[1]), tuples


def pull(server, folder, project, *more, token=None, url=None):
    return semrel("annotate", "pull", "--project", project, "--tuples", folder / "tuples.csv", "--pairs",
                  folder / "pairs.csv", "--output", folder / "out.csv", "--url", url or server.url, "--token",
                  token or server.token, *more)


@pytest.mark.slow  # starts Label Studio
@pytest.mark.parametrize("case", ["wrong token", "legacy token", "unreachable", "deleted project", "foreign project",
                                  "unknown tuple", "unknown text", "title taken"])
def test_label_studio_bad_input_is_one_line_and_no_file_is_written(server, tmp_path, case):
    project, tuples = tiny_project(server, tmp_path, f"bad input: {case}")
    (tmp_path / "out.csv").write_text("mine\n", encoding="utf-8")
    admin = ls.connect(server.url, server.token)
    token, url, at = None, None, f"Label Studio at {server.url}"
    if case == "wrong token":
        token = server.token[:-4] + "AAAA"
        message = f"{at} refused the personal access token (--token or LABEL_STUDIO_API_KEY): 401 Token is invalid"
    elif case == "legacy token":
        token = server.legacy_token()
        message = (f"{at} refused the token (--token or LABEL_STUDIO_API_KEY), project {project}: 401 Authentication "
                   "token no longer valid: legacy token authentication has been disabled for this organization")
    elif case == "unreachable":
        url = f"http://127.0.0.1:{free_port()}"
        message = f"Label Studio at {url}, project {project}: cannot connect ([Errno 111] Connection refused)"
    elif case == "deleted project":
        admin.request("DELETE", f"/api/projects/{project}/", what="deleting")
        message = (f"{at}, project {project}: 404 No Project matches the given query. (no project {project} on this "
                   "server: deleted, or another server's id?)")
    elif case == "foreign project":
        project = admin.request("POST", "/api/projects/", what="creating", json={
            "title": "sentiment", "label_config": '<View><Text name="text" value="$text"/><Choices name="best" '
            'toName="text"><Choice value="Positive"/><Choice value="Negative"/></Choices></View>'})["id"]
        message = (f"{at}: project {project} is not a semrel BWS project: its labelling interface lacks the 'best' "
                   "and 'worst' choices of Pair 1..Pair k (semrel annotate push makes them)")
    elif case in ("unknown tuple", "unknown text"):
        task = ls.tasks({"t00001": tuples["t00001"]}, ls.read_design(tmp_path / "tuples.csv",
                                                                     tmp_path / "pairs.csv")[1])[0]
        if case == "unknown tuple":
            task["data"]["tuple_id"] = "t99999"
        else:
            task["data"]["pair2_sentence1"] = "A text the pairs file does not hold"
        admin.request("POST", f"/api/projects/{project}/import", what="importing", json=[task])
        last = max(t["id"] for t in ls._tasks(admin, project))
        message = (f"{at}: project {project}, task {last}: tuple 't99999' is not in the tuples file"
                   if case == "unknown tuple" else
                   f"{at}: project {project}, task {last}: sentence1 of pair {tuples['t00001'][1]!r} is not the "
                   "pairs file's ('A text the pairs file does not hold')")
    else:  # a second push under a title the server has
        done = semrel("annotate", "push", tmp_path / "tuples.csv", "--pairs", tmp_path / "pairs.csv", "--project",
                      f"bad input: {case}", "--url", server.url, "--token", server.token)
        assert done.returncode == 2
        assert done.stderr == (f"semrel annotate push: error: {at} has a project titled 'bad input: title taken' "
                               f"already (id {project}, 24 tasks): give another --project name, or pull that one\n")
        return
    admin.close()
    done = pull(server, tmp_path, project, token=token, url=url)
    assert (done.returncode, done.stderr) == (2, f"semrel annotate pull: error: {message}\n")
    assert (tmp_path / "out.csv").read_text(encoding="utf-8") == "mine\n"  # the user's file untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv", "pairs.csv", "tuples.csv"]  # nothing half-written


@pytest.mark.slow  # starts Label Studio
def test_label_studio_pull_interrupted_half_way_writes_nothing_and_a_rerun_completes(round_trip, server):
    folder, project = round_trip["folder"], round_trip["project"]
    before = (folder / "annotations.csv").read_bytes()
    with Proxy(server.url, cut=2, path="/api/tasks/") as proxy:  # the second page breaks off half way
        done = semrel("annotate", "pull", "--project", project, "--tuples", folder / "tuples.csv", "--pairs",
                      folder / "pairs.csv", "--output", folder / "annotations.csv", "--annotator-key", KEY,
                      "--url", proxy.url, "--token", server.token)
    assert done.returncode == 2
    assert re.fullmatch(rf"semrel annotate pull: error: Label Studio at {proxy.url}, listing the tasks of project "
                        rf"{project}: the connection broke off \(peer closed connection without sending complete "
                        r"message body \(received \d+ bytes, expected \d+\)\)\n", done.stderr), done.stderr
    assert (folder / "annotations.csv").read_bytes() == before  # no half-written output
    assert not [p for p in folder.iterdir() if p.name.endswith(".partial")]
    (folder / "annotations.csv").unlink()
    again = semrel("annotate", "pull", "--project", project, "--tuples", folder / "tuples.csv", "--pairs",
                   folder / "pairs.csv", "--output", folder / "annotations.csv", "--annotator-key", KEY,
                   env=round_trip["env"])
    assert again.returncode == 0, again.stderr
    assert (folder / "annotations.csv").read_bytes() == before


@pytest.mark.slow  # starts Label Studio and Chromium
def test_label_studio_labelling_page_screenshot(round_trip, server, tmp_path):
    """The labelling page of one task as a person logged in sees it (headless Chromium through a proxy
    that adds the session cookie): kept beside the test's files and copied to the docs."""
    import shutil

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
        pytest.skip("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
    shot = tmp_path / "label-studio-bws.png"
    with Proxy(server.url, cookie=session_cookie(server.url)) as proxy:
        subprocess.run([browser, *CHROMIUM_FLAGS, f"--user-data-dir={tempfile.mkdtemp()}", f"--screenshot={shot}",
                        "--window-size=1280,800", "--virtual-time-budget=30000",
                        f"{proxy.url}/projects/{round_trip['project']}/data?labeling=1"],
                       capture_output=True, timeout=300, check=True)
    print(f"screenshot: {shot}")
    import matplotlib.image as mpimg

    pixels = mpimg.imread(shot)
    assert pixels.shape[:2] == (800, 1280)
    ink = (pixels[..., :3].mean(axis=2) < 0.6).mean()
    assert ink > 0.01  # text and radio buttons drew (a blank or failed page is white)
    from PIL import Image

    Image.open(shot).convert("RGB").quantize(colors=32).save(tmp_path / "small.png", optimize=True)
    if os.environ.get("SEMREL_UPDATE_DOCS_IMAGES"):
        shutil.copyfile(tmp_path / "small.png", SCREENSHOT)
    assert SCREENSHOT.exists()
