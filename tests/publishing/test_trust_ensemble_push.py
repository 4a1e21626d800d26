"""Publishing an ensemble, and a damaged export (issue 48, §5 and §4's push): an ensemble's card is
made from its members' facts (the licence that covers every member's, refused in one line where
none does; the union of languages and datasets; how it loads) and passes the push's checks; pushed
to the local Hub (tests/hub_server.py) and downloaded back, it loads and scores as its card says,
the scores of the local ensemble. `push --dry-run` over an export with a flipped byte names the file."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from huggingface_hub import ModelCard

import toy_dataset
from hub_server import LocalHub
from project import REPO
from semrel.cli import main
from semrel.metrics.errors import ParameterError
from semrel.publishing.export import build_dataset, data_files
from semrel.publishing.hub_vocabulary import check_card
from semrel.trainers.ensemble import Ensemble
from semrel.trainers.ensemble_card import combined_licence, ensemble_metadata
from trainer_fixtures import fake_member, tiny_encoder

NS = "semrel-test"
ORDER = ("in the order cc0-1.0 < mit < apache-2.0 < cc-by-4.0 < cc-by-sa-4.0 and cc-by-4.0 < cc-by-nc-4.0 "
         "< cc-by-nc-sa-4.0")
LICENCES = [  # (the members' licences, the ensemble's licence, or the one line that refuses them)
    (["apache-2.0", "apache-2.0"], {"license": "apache-2.0"}),
    (["mit", "apache-2.0"], {"license": "apache-2.0"}),
    (["cc0-1.0", "cc-by-4.0", "mit"], {"license": "cc-by-4.0"}),
    (["apache-2.0", "cc-by-sa-4.0"], {"license": "cc-by-sa-4.0"}),
    (["mit", "cc-by-nc-4.0", "cc-by-nc-sa-4.0"], {"license": "cc-by-nc-sa-4.0"}),
    (["unknown", "mit"], {"license": "unknown"}),
    (["gpl-3.0", "gpl-3.0"], {"license": "gpl-3.0"}),
    (["mit", None], {}),
    ([("other", "terms-a", "https://a.example"), ("other", "terms-a", "https://a.example")],
     {"license": "other", "license_name": "terms-a", "license_link": "https://a.example"}),
    (["cc-by-sa-4.0", "cc-by-nc-4.0"], "members=['m0', 'm1']: have licences no single one covers: cc-by-sa-4.0 "
     f"(m0) and cc-by-nc-4.0 (m1); an ensemble's card takes the member licence that covers every other, {ORDER}"),
    (["cc-by-sa-4.0", "cc-by-nc-sa-4.0"], "members=['m0', 'm1']: have licences no single one covers: "
     "cc-by-sa-4.0 (m0) and cc-by-nc-sa-4.0 (m1); an ensemble's card takes the member licence that covers "
     f"every other, {ORDER}"),
    (["gpl-3.0", "mit"], "members=['m0', 'm1']: have licences no single one covers: gpl-3.0 (m0) and mit (m1); "
     f"an ensemble's card takes the member licence that covers every other, {ORDER}"),
    ([("other", "terms-a", "https://a.example"), ("other", "terms-b", "https://b.example")],
     "members=['m0', 'm1']: have licences no single one covers: other (terms-a) (m0) and other (terms-b) (m1); "
     f"an ensemble's card takes the member licence that covers every other, {ORDER}"),
]


def card_of(licence) -> dict:
    name, link = (None, None) if not isinstance(licence, tuple) else licence[1:]
    licence = licence[0] if isinstance(licence, tuple) else licence
    return {k: v for k, v in {"license": licence, "license_name": name, "license_link": link}.items() if v}


@pytest.mark.parametrize("licences, expected", LICENCES, ids=[" + ".join(map(str, c[0])) for c in LICENCES])
def test_the_ensemble_takes_the_licence_that_covers_every_member(licences, expected):
    cards = {f"m{i}": card_of(licence) for i, licence in enumerate(licences)}
    if isinstance(expected, str):
        with pytest.raises(ParameterError) as caught:
            combined_licence(cards)
        assert caught.value.worded() == expected
    else:
        assert combined_licence(cards) == expected


def test_languages_and_datasets_are_the_union_of_the_members():
    cards = {"a": {"license": "mit", "language": "en", "datasets": ["x/one"]},
             "b": {"license": "mit", "language": ["cs", "en"], "datasets": ["x/two", "x/one"]},
             "c": {"license": "mit"}}
    metadata, note = ensemble_metadata(cards, conditional=False)
    assert metadata.to_dict() == {"language": ["en", "cs"], "license": "mit", "library_name": "semrel",
                                  "datasets": ["x/one", "x/two"], "pipeline_tag": "sentence-similarity",
                                  "tags": ["semrel", "ensemble", "sentence-similarity"]}
    assert note == ""
    metadata, note = ensemble_metadata({**cards, "c": {}}, conditional=True)
    assert "license" not in metadata.to_dict() and metadata.tags[-1] == "conditional"
    assert note.strip() == ("No licence: the card of `c` names none, so this card cannot name the whole's; add "
                            "`license:` once the members' terms are known.")


@pytest.fixture(scope="module")
def weights(tmp_path_factory):
    return tiny_encoder(tmp_path_factory.mktemp("tiny-bert"))


def held_out(seed: int, n: int = 40) -> dict:
    labels = np.random.default_rng(0).random(n)
    scores = labels + np.random.default_rng(seed).normal(0, 0.1, n)
    return {"data": "str-2021/cv-fold-0", "split": "test", "score_range": [0.0, 1.0], "encoder": "bi",
            "conditional": False, "ids": [f"p{i}" for i in range(n)], "predictions": scores.tolist(),
            "labels": labels.tolist(), "sources": None}


def members(weights, root: Path, licences) -> list[str]:
    """Runs trained on str-2021 cv-fold-0 (untrained weights), each card naming its licence."""
    folders = []
    for i, licence in enumerate(licences):
        folder = fake_member(root / f"m{i}", weights, "str-2021/cv-fold-0", held_out=held_out(i + 1))
        (folder / "README.md").write_text(f"---\nlicense: {licence}\nlanguage: en\n---\n# run {i}\n")
        folders.append(str(folder))
    return folders


def test_conflicting_licences_refuse_the_ensemble_in_one_line_and_write_nothing(weights, tmp_path, capsys):
    argv = [a for m in members(weights, tmp_path, ["cc-by-sa-4.0", "cc-by-nc-4.0"]) for a in ("--member", m)]
    assert main(["ensemble", *argv, "--output", str(tmp_path / "ens")]) == 2
    assert capsys.readouterr().err == (
        "semrel ensemble: error: --member m0 m1: have licences no single one covers: cc-by-sa-4.0 (m0) and "
        f"cc-by-nc-4.0 (m1); an ensemble's card takes the member licence that covers every other, {ORDER}\n")
    assert not (tmp_path / "ens").exists()


def test_the_card_of_two_apache_runs_passes_the_push_checks(weights, tmp_path, upstream, capsys):
    argv = [a for m in members(weights, tmp_path, ["apache-2.0", "apache-2.0"]) for a in ("--member", m)]
    assert main(["ensemble", *argv, "--output", str(tmp_path / "ens")]) == 0
    card = ModelCard.load(tmp_path / "ens" / "README.md")
    assert card.data.to_dict() == {"language": ["en"], "license": "apache-2.0", "library_name": "semrel",
                                   "pipeline_tag": "sentence-similarity",
                                   "tags": ["semrel", "ensemble", "sentence-similarity"]}
    assert check_card(tmp_path / "ens" / "README.md", "model") == [f"{tmp_path / 'ens' / 'README.md'}: YAML "
                                                                   "lacks datasets"]  # the push adds it
    assert 'path = "ens"  # the folder of this model\nmodel = Ensemble.load(path)\n' in card.text
    capsys.readouterr()
    assert main(["push", "--namespace", NS, "--model", str(tmp_path / "ens"), "--out", str(tmp_path / "out"),
                 "--mirror", str(upstream), "--dry-run"]) == 0, capsys.readouterr().err
    assert "    README.md  (datasets: [semrel-test/str-2021]; its usage snippet loads semrel-test/ens)\n" in (
        capsys.readouterr().out)


PAIRS = (["A man plays.", "the red circle", "a blue square"], ["Someone is playing.", "a red square", "the tree"])
PRINT = f"\nimport json\nprint(json.dumps(model.predict({PAIRS[0]!r}, {PAIRS[1]!r}).tolist()))\n"


@pytest.mark.slow  # starts a server and a semrel process
def test_a_pushed_ensemble_loads_from_the_hub_as_its_card_says(weights, tmp_path, upstream):
    argv = [a for m in members(weights, tmp_path, ["apache-2.0", "mit"]) for a in ("--member", m)]
    assert main(["ensemble", *argv, "--output", str(tmp_path / "ens")]) == 0
    local = Ensemble.load(tmp_path / "ens").predict(*PAIRS)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "SEMREL_"))}
    env["SEMREL_FIXTURE_MIRROR"] = os.environ["SEMREL_FIXTURE_MIRROR"]
    with LocalHub() as hub:
        env |= hub.client_env("hf_dummy") | {"HF_HOME": str(tmp_path / "home")}
        done = subprocess.run([sys.executable, "-m", "semrel", "push", "--namespace", NS, "--model",
                               str(tmp_path / "ens"), "--out", str(tmp_path / "build"), "--mirror", str(upstream)],
                              cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        sent = hub.files("model", f"{NS}/ens")
        card = ModelCard(sent["README.md"].decode())
        assert (card.data.license, card.data.datasets, card.data.library_name) == (
            "apache-2.0", [f"{NS}/str-2021"], "semrel")
        snippet = re.search(r"```python\n(.*?)```", card.text, re.S)[1]
        assert 'path = snapshot_download("semrel-test/ens")' in snippet
        ran = subprocess.run([sys.executable, "-c", snippet + PRINT], cwd=tmp_path, env=env, capture_output=True,
                             text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    assert np.allclose(json.loads(ran.stdout.splitlines()[-1]), local, rtol=0, atol=1e-6)


# ---- push --dry-run over an export with a flipped byte --------------------------------------

@pytest.fixture(scope="module")
def toy():
    with toy_dataset.registered():
        yield


def footer_name(data: bytes) -> int:
    """The offset of the column name ``id`` in the Parquet footer's schema (a thrift string: its
    length, 2, then the name)."""
    footer = len(data) - 8 - int.from_bytes(data[-8:-4], "little")
    return data.index(b"\x18\x02id", footer) + 2


def readable_flip(data: bytes) -> int:
    """The first byte of the rows whose flip pyarrow still reads (another value, the same layout)."""
    import io

    for at in range(4, len(data) - 8):
        flipped = bytearray(data)
        flipped[at] ^= 0xFF
        try:
            pq.read_table(io.BytesIO(bytes(flipped))).to_pylist()
            return at
        except (OSError, ValueError):
            continue
    raise AssertionError("no byte of the file can be flipped and read")


FLIPS = {  # where a byte of default/train is flipped, and what pyarrow says of it (None: it reads it)
    "a column name in the footer": (footer_name, "UnicodeDecodeError"),
    "the footer's length": (lambda data: len(data) - 8, "OSError"),
    "a value of the rows": (readable_flip, None),
    "the leading magic bytes": (lambda data: 0, None),
}


@pytest.mark.parametrize("flip", FLIPS)
def test_a_dry_run_over_a_damaged_parquet_file_names_it(toy, tmp_path, capsys, monkeypatch, flip):
    folder = build_dataset("toy-sts", tmp_path / "build" / "hub", mirror=toy_dataset.MIRROR,
                           cache_dir=tmp_path / "cache").folder
    rel = data_files(folder)["default"]["train"][0]
    data = bytearray((folder / rel).read_bytes())
    where, error = FLIPS[flip]
    data[where(bytes(data))] ^= 0xFF
    (folder / rel).write_bytes(bytes(data))
    try:  # what pyarrow says of it, every name and value read
        pq.read_table(folder / rel).to_pylist()
        said = None
    except (OSError, ValueError) as exc:
        said = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0]}"
    assert (said or "").split(":")[0] == (error or "")
    capsys.readouterr()
    monkeypatch.delenv("SEMREL_MIRROR", raising=False)
    monkeypatch.chdir(tmp_path)  # no ../shared/upstream beside it: the dry run reads no upstream file
    assert main(["push", "--namespace", NS, "--out", str(tmp_path / "build"), "--only", "toy-sts",
                 "--dry-run"]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "error: refusing to push, nothing was uploaded:"
    unreadable = ([f"dataset toy-sts: {rel}: is no readable Parquet file ({said}): damaged after the build? build "
                   "it again (`semrel verify` compares a build with its upstream files)"] if said else [])
    assert [line.strip() for line in lines[1:]] == [*unreadable, (
        f"dataset toy-sts: default: {rel} does not hold the bytes its name's fingerprint says (changed after the "
        "build: stock load_dataset may serve the rows cached for that name); build it again")]
