"""Publishing: what a model push may carry (no gold labels of data that may not be
redistributed, no path of this machine), dry run and push agreeing, and build faults that keep the
previous output whole. Fast, in-process; every path argument of `semrel build|verify|push` is in
test_publish_path_arguments.py, the push of a real run trained on str-2021 in
test_publish_model_guard.py (slow)."""

from __future__ import annotations

import errno
import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from huggingface_hub import ModelCard, RepoCard
from safetensors.numpy import save_file

from semrel.cli import main
from semrel.dataset_scripts.crowd_sts.study import worker_count_table
from semrel.metrics import ROOT as METRICS_ROOT
from semrel.publishing import guard, report, spaces
from semrel.publishing.hub_vocabulary import check_card
from semrel.publishing.staging import stage_model

RUN_DATA = "str-2021/cv-fold-0"
GOLD = [0.25, 0.5, 0.75]


def fake_run(folder: Path, *, data: str = RUN_DATA, license: str | None = None) -> Path:
    """A run folder laid out as `semrel fit` writes it (weights are 8 floats): a card, metrics.json
    with the run's path, eval_predictions.json with gold labels, a checkpoint that stays local."""
    folder.mkdir(parents=True)
    save_file({"w": np.arange(8, dtype=np.float32)}, str(folder / "model.safetensors"))
    (folder / "config.json").write_text('{"model_type": "bert"}\n')
    (folder / "metrics.json").write_text(json.dumps({"output_dir": str(folder), "data": data,
                                                     "spearman": 0.5}, indent=2))
    (folder / "eval_predictions.json").write_text(json.dumps({
        "data": data, "split": "test", "ids": ["STS_1", "STS_2", "STS_3"],
        "predictions": [0.3, 0.4, 0.9], "labels": GOLD}))
    (folder / "checkpoints").mkdir()
    (folder / "checkpoints" / "semrel_run.json").write_text(json.dumps({"model": "/tmp/enc"}))
    meta = {"language": ["en"], "library_name": "sentence-transformers",
            "pipeline_tag": "sentence-similarity", "metrics": ["spearmanr"],
            **({"license": license} if license else {})}
    card = ModelCard(f"---\n{RepoCard('').data.__class__(**meta).to_yaml()}\n---\n\n# run\n\n```python\n"
                     f"from sentence_transformers import SentenceTransformer\n"
                     f'path = "{folder.name}"  # the folder of this model\n'
                     "model = SentenceTransformer(path)\n```\n")
    card.save(folder / "README.md")
    return folder


def digest(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(Path(folder).rglob("*")) if p.is_file()}


# --- the guards ------------------------------------------------------------------------------

PATH_CASES = [  # (file name, content, the finding or None)
    ("metrics.json", '{"output_dir": "/tmp/run-7"}', "metrics.json: names a path of this machine "
                                                    "('/tmp/run-7' at output_dir)"),
    ("m.json", '{"a": {"b": ["C:\\\\Users\\\\me\\\\run"]}}', "m.json: names a path of this machine "
                                                         "('C:\\\\Users\\\\me\\\\run' at a.b[0])"),
    ("escaped.json", '{"dir": "\\/home\\/me\\/x"}', "escaped.json: names a path of this machine "
                                                  "('/home/me/x' at dir)"),
    ("key.json", '{"/work/main/x": 1}', "key.json: names a path of this machine ('/work/main/x' at "
                                        "/work/main/x)"),
    ("train.log", "epoch 1\nsaved to /root/models/x\n", "train.log:2: names a path of this machine "
                                                        "('/root/models/x')"),
    ("README.md", "see https://huggingface.co/data/x and/or the (score - 0) / (1 - 0) scale", None),
    ("vocab.txt", "/\nhome\n##/\n", None),
    ("weights.bin", b"\0\0/tmp/x\0", None),  # binary: the model itself
]


def test_weights_are_numbers_but_their_metadata_is_read(tmp_path):
    arrays = {"w": np.arange(4, dtype=np.float32)}
    save_file(arrays, str(tmp_path / "clean.safetensors"), metadata={"format": "pt"})
    save_file(arrays, str(tmp_path / "leaky.safetensors"), metadata={"source": "/home/me/ckpt"})
    assert guard.scan_local_paths(tmp_path, ["clean.safetensors", "leaky.safetensors"]) == [
        "leaky.safetensors: its metadata names a path of this machine ('/home/me/ckpt' at source)"]


@pytest.mark.parametrize("name, content, finding", PATH_CASES, ids=[c[0] for c in PATH_CASES])
def test_local_path_guard_reads_every_text_and_json_file(tmp_path, name, content, finding):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    assert guard.scan_local_paths(tmp_path, [name]) == ([finding] if finding else [])


GOLD_CASES = [  # (JSON, findings)
    ({"predictions": [0.1], "labels": [0.2, 0.3]},
     ["p.json: holds 2 gold label(s) of str-2021/cv-fold-0 (key 'labels'); the labels of data "
      "that may not be redistributed stay here"]),
    ({"per_fold": [{"references": [1, 2, 3]}]}, ["p.json: holds 3 gold label(s) of "
                                                 "str-2021/cv-fold-0 (key 'per_fold[0].references')"
                                                 "; the labels of data that may not be "
                                                 "redistributed stay here"]),
    ([{"id": "a", "Gold": 0.5}], ["p.json: holds 1 gold label(s) of str-2021/cv-fold-0 (key '[0].Gold'); the "
                                  "labels of data that may not be redistributed stay here"]),
    ({"model": {"vocab": {"gold": 2585, "labels": 7}}}, []),  # a tokenizer's vocabulary: words, not labels
    ({"labels": ["entailment", "neutral"], "predictions": [0.1]}, []),  # names, not scores
    ({"ids": ["STS_1"], "predictions": [0.1]}, []),
]


@pytest.mark.parametrize("record, findings", GOLD_CASES)
def test_gold_label_guard(tmp_path, record, findings):
    (tmp_path / "p.json").write_text(json.dumps(record))
    assert guard.scan_gold_labels(tmp_path, ["p.json"], RUN_DATA) == findings


def test_staged_model_sends_what_a_model_repo_needs_and_figures_without_the_path(tmp_path):
    run = fake_run(tmp_path / "run-bi")
    before = digest(run)
    staged = stage_model(run, tmp_path / "staged", repo_id="ORG/run-bi", dataset_repo="ORG/str-2021")
    dest = tmp_path / "staged"
    assert staged.changed == {"metrics.json": "figures only; output_dir stays here",
                              "README.md": "datasets: [ORG/str-2021]; its usage snippet loads ORG/run-bi"}
    assert staged.kept == ("checkpoints/semrel_run.json", "eval_predictions.json")
    assert json.loads((dest / "metrics.json").read_text()) == {"data": RUN_DATA, "spearman": 0.5}
    card = ModelCard.load(dest / "README.md")
    assert card.data.datasets == ["ORG/str-2021"]
    assert 'path = snapshot_download("ORG/run-bi")  # this model, from the Hub' in card.text
    files = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
    assert files == ["README.md", "config.json", "metrics.json", "model.safetensors"]
    assert guard.scan_local_paths(dest, files) == []
    assert guard.scan_gold_labels(dest, files, RUN_DATA) == []
    assert digest(run) == before  # the run folder is not changed (hard links are rewritten anew)


def test_dry_run_and_the_card_check_agree(tmp_path, upstream, capsys):
    """A staged card the Hub check refuses is refused by the dry run too (no token, no upload)."""
    run = fake_run(tmp_path / "model")
    out = tmp_path / "out"
    assert main(["push", "--namespace", "ORG", "--model", str(run), "--out", str(out),
                 "--mirror", str(upstream), "--dry-run"]) == 1
    captured = capsys.readouterr()
    staged = out / "hub" / "models" / "model" / "README.md"
    assert check_card(staged, "model") == [f"{staged}: YAML lacks license"]
    assert "model model: README.md: YAML lacks license" in captured.err
    listed = [line.split()[0] for line in captured.out.splitlines() if line.startswith("    ")]
    assert listed == ["README.md", "config.json", "metrics.json", "model.safetensors"]
    assert "    metrics.json  (figures only; output_dir stays here)\n" in captured.out
    assert "  stays here: checkpoints/ (1 file), eval_predictions.json\n" in captured.out
    fine = fake_run(tmp_path / "licensed", license="apache-2.0")
    assert main(["push", "--namespace", "ORG", "--model", str(fine), "--out", str(out),
                 "--mirror", str(upstream), "--dry-run"]) == 0
    assert check_card(out / "hub" / "models" / "licensed" / "README.md", "model") == []
    assert capsys.readouterr().out.endswith("dry run: every check passed; nothing was sent\n")


def test_a_model_holding_gold_labels_or_a_path_is_refused(tmp_path, upstream, capsys):
    """Files no model repo needs stay here whatever they hold; gold labels or a path in a file
    that goes refuse the push, naming each file."""
    run = fake_run(tmp_path / "run", license="apache-2.0")
    (run / "folds.json").write_text(json.dumps({"references": GOLD}))
    (run / "notes.txt").write_text("trained in /home/me/runs\n")
    assert main(["push", "--namespace", "ORG", "--model", str(run), "--out", str(tmp_path / "out"),
                 "--mirror", str(upstream), "--dry-run"]) == 0
    assert "  stays here: checkpoints/ (1 file), eval_predictions.json, folds.json, notes.txt\n" \
        in capsys.readouterr().out
    (run / "config.json").write_text(json.dumps({"model_type": "bert", "references": GOLD}))
    with open(run / "README.md", "a", encoding="utf-8") as card:
        card.write("\ntrained in /home/me/runs\n")
    assert main(["push", "--namespace", "ORG", "--model", str(run), "--out", str(tmp_path / "out"),
                 "--mirror", str(upstream), "--dry-run"]) == 1
    err = capsys.readouterr().err
    assert "model run: README.md:22: names a path of this machine ('/home/me/runs')" in err
    assert "model run: config.json: holds 3 gold label(s) of str-2021/cv-fold-0 (key 'references')" in err
    assert ("model run: config.json: holds 3 gold labels of str-2021/cv-fold-0/test in their recorded "
            "order") in err  # what eval_predictions.json records, found by value


# --- build faults: the previous output stays whole, the last line says what is true --------------

def enospc_on_call(n: int, real):
    """``real`` until its ``n``-th call, which fails as a full disk does."""
    calls = []

    def copy(*args, **kwargs):
        calls.append(args)
        if len(calls) == n:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(*args, **kwargs)
    return copy


def test_a_full_disk_during_a_space_build_keeps_the_previous_space(tmp_path, monkeypatch):
    hub = tmp_path / "hub"
    previous = hub / "spaces" / "bws_scores"
    shutil.copytree(METRICS_ROOT / "bws_scores", previous, ignore=shutil.ignore_patterns("__pycache__"))
    before = digest(previous)
    wheel = tmp_path / "semrel-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"PK")
    monkeypatch.setattr(spaces, "package_wheel", lambda out: wheel)
    monkeypatch.setattr(spaces.shutil, "copyfile", enospc_on_call(3, shutil.copyfile))
    with pytest.raises(OSError, match="No space left"):
        spaces.build_space("bws_scores", hub)
    assert digest(previous) == before  # no 0-byte .py file: the old Space, whole
    assert sorted(p.name for p in (hub / "spaces").iterdir()) == ["bws_scores"]  # no staging left


def test_a_failed_report_keeps_the_previous_page_and_images(tmp_path, monkeypatch):
    old = tmp_path / "report"
    (old / "images" / "str-2021").mkdir(parents=True)
    (old / "index.html").write_text("<html>the previous good report</html>")
    (old / "images" / "str-2021" / "dice_by_source.png").write_bytes(b"\x89PNG old")
    before = digest(old)

    def full_disk(folder):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(report, "metric_section", full_disk)
    with pytest.raises(OSError):
        report.build_report(tmp_path, ["str-2021"], ["bws_scores"])
    assert digest(old) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]
    monkeypatch.undo()
    page = report.build_report(tmp_path, ["str-2021"], ["bws_scores"])  # a good build replaces it whole
    assert "Not built: run <code>semrel build --only bws_scores</code>" in page.read_text()
    assert not (old / "images" / "str-2021").exists()


BUILD_FAULTS = [  # (--only, what fails, a previous output?, the last line)
    ("lexical_overlap", "build_space", False,
     "build FAILED for metric lexical_overlap (there was no previous output)"),
    ("lexical_overlap", "build_space", True,
     "build FAILED for metric lexical_overlap (its previous output is kept)"),
    ("str-2021", "build_dataset", False, "build FAILED for str-2021 (there was no previous output)"),
]


@pytest.mark.parametrize("only, what, previous, last", BUILD_FAULTS)
def test_a_failed_build_says_what_is_kept(tmp_path, monkeypatch, capsys, only, what, previous, last):
    from semrel.publishing import export

    if previous:
        (tmp_path / "hub" / "spaces" / only).mkdir(parents=True)

    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(spaces if what == "build_space" else export, what, full_disk)
    assert main(["build", "--out", str(tmp_path), "--only", only, "--no-report"]) == 1
    assert capsys.readouterr().err.splitlines()[-1] == last


# --- what the report prints ------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(p.parent.name for p in METRICS_ROOT.glob("*/README.md")))
def test_report_summary_of_a_metric_is_its_first_sentence_whole(name):
    section = report.metric_section(METRICS_ROOT / name)
    description = " ".join(str(RepoCard.load(METRICS_ROOT / name / "README.md").data.description).split())
    assert description.startswith(section.summary) and section.summary.endswith((".", "?", "!", ")"))
    assert section.summary.count("(") == section.summary.count(")")  # never cut inside brackets


def test_worker_counts_print_as_counts():
    annotators = pd.DataFrame({"flagged_slow": [True, True, False], "flagged_any": [True, True, False],
                               "in_authors_list": [True, False, False],
                               "n_annotations": [10, 20, 30]})
    counts = worker_count_table(annotators, ["slow"])
    text = counts.to_string(float_format=lambda v: f"{v:.3f}")
    assert text.splitlines()[1].split() == ["slow", "2", "1", "0.500"]


CARD_META = "license: mit\nlanguage: [en]\npipeline_tag: sentence-similarity\nlibrary_name: semrel\ndatasets: [ns/d]\n"
CARD_CASES = [  # (extra YAML of a model card, problems)
    ("", []),
    ("base_model: sentence-transformers/all-MiniLM-L6-v2\n", []),
    ("base_model: tiny-bert\n", ["base_model 'tiny-bert' is not a Hub id (namespace/name)"]),
    ("model-index:\n- name: m\n  results: []\n", [
        "YAML has a model-index: the Hub would show these self-reported figures in a results widget; "
        "give them in the card's text instead"]),
]


@pytest.mark.parametrize("extra, problems", CARD_CASES)
def test_a_model_card_has_no_model_index_and_only_a_hub_id_as_base(tmp_path, extra, problems):
    card = tmp_path / "README.md"
    card.write_text(f"---\n{CARD_META}{extra}---\n\n# m\n")
    assert check_card(card, "model") == [f"{card}: {p}" for p in problems]


def test_a_full_disk_while_storing_the_wheel_leaves_no_truncated_wheel(tmp_path, monkeypatch):
    """The wheel store is content-addressed and reused: a wheel cut short by a full disk would be
    reused for ever. It is swapped in whole, and the previous state's wheel stays until then."""
    import subprocess

    previous = tmp_path / ".wheels" / "0123456789abcdef" / "semrel-0.1.0-py3-none-any.whl"
    previous.parent.mkdir(parents=True)
    previous.write_bytes(b"PK previous")

    def pip_wheel(argv, **kwargs):  # what `pip wheel -w DIR` leaves: one wheel in DIR
        dist = Path(argv[argv.index("-w") + 1])
        dist.mkdir(parents=True)
        (dist / "semrel-0.1.0-py3-none-any.whl").write_bytes(b"PK new")
        return subprocess.CompletedProcess(argv, 0, "", "")
    monkeypatch.setattr(spaces.subprocess, "run", pip_wheel)
    monkeypatch.setattr(spaces.shutil, "copyfile", enospc_on_call(1, shutil.copyfile))
    with pytest.raises(OSError, match="No space left"):
        spaces.package_wheel(tmp_path)
    assert [p.relative_to(tmp_path).as_posix() for p in (tmp_path / ".wheels").rglob("*")] == [
        ".wheels/0123456789abcdef", ".wheels/0123456789abcdef/semrel-0.1.0-py3-none-any.whl"]
    monkeypatch.setattr(spaces.shutil, "copyfile", shutil.copyfile)
    wheel = spaces.package_wheel(tmp_path)
    assert wheel.read_bytes() == b"PK new" and not previous.exists()


def test_the_raw_worker_ids_are_read_once_for_the_same_bytes_and_again_for_new_ones(tmp_path, monkeypatch):
    from project import fixture_copy

    mirror = fixture_copy(tmp_path / "mirror", "crowd-sts", monkeypatch)
    first = guard.raw_worker_ids(mirror)
    assert guard.raw_worker_ids(mirror) is first  # the same files: not parsed again
    folder = mirror / "crowd-sts"  # the authors' list grows an id, in place, its checksum listed
    authors = (folder / "bad_annotators_all.txt").read_bytes().rstrip(b"\n") + b"\nANEWWORKERID0001\n"
    (folder / "bad_annotators_all.txt").write_bytes(authors)
    sums = (folder / "SHA256SUMS").read_text().splitlines()
    (folder / "SHA256SUMS").write_text("".join(
        f"{hashlib.sha256(authors).hexdigest()}  bad_annotators_all.txt\n" if line.endswith(" bad_annotators_all.txt")
        else line + "\n" for line in sums))
    assert guard.raw_worker_ids(mirror) == first | {"ANEWWORKERID0001"}
