import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import pytest
from huggingface_hub import DatasetCard

from project import REPO, needs_mirror
from semrel import cli as upload
from semrel.dataset_scripts import load
from semrel.publishing.export import build_dataset, verify_folder
from semrel.publishing.hub_vocabulary import check_card


@pytest.fixture(scope="module")
def built(upstream, cache_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    return build_dataset("str-2021", out / "hub", mirror=upstream, cache_dir=cache_dir)


@needs_mirror
def test_build_writes_parquet_card_and_plot(built):
    folder = built.folder
    assert len(built.rows) == 13 and built.rows["cv-fold-3"] == {"train": 4400, "test": 1100}
    card = DatasetCard.load(folder / "README.md")
    assert card.data.license == "other" and card.data.language == ["en"]
    names = [c["config_name"] for c in card.data.configs]
    assert set(names) == {"default", *(f"cv-fold-{i}" for i in range(5)),
                          *(f"lodo-{s}" for s in ["formality", "goodreads", "paranmt", "snli",
                                                  "sts", "stance", "wikipedia"])}
    assert {i["config_name"] for i in card.data.dataset_info} == set(names)
    assert "do not redistribute" in card.text.lower() and "@inproceedings" in card.text
    assert (folder / "images" / "score_hist_by_source.png").stat().st_size > 10_000
    assert pq.read_table(folder / "default" / "train-00000-of-00001.parquet").num_rows == 5500


def test_exported_folder_loads_with_load_dataset(built, upstream, cache_dir):
    hub = datasets.load_dataset(str(built.folder), "cv-fold-3", cache_dir=str(cache_dir))
    ref = load("str-2021", "cv-fold-3", mirror=upstream, cache_dir=cache_dir)
    assert hub["test"].features["score"].dtype == "float32"
    for split in ("train", "test"):
        assert hub[split].to_list() == ref[split].to_list()


@pytest.mark.slow
def test_verify_passes_then_catches_a_tampered_file(built, mirror, cache_dir, tmp_path):
    assert verify_folder(built.folder, "str-2021", mirror=mirror, cache_dir=cache_dir) == []
    path = built.folder / "lodo-sts" / "test-00000-of-00001.parquet"
    table = pq.read_table(path)
    pq.write_table(table.slice(1), path)
    try:
        problems = verify_folder(built.folder, "str-2021", mirror=mirror,
                                 cache_dir=tmp_path / "fresh")
        assert len(problems) == 1 and problems[0].startswith(
            "lodo-sts: the Parquet files do not match the card's split sizes")
    finally:
        pq.write_table(table, path)


@pytest.mark.slow
def test_cli_build_prints_summary(mirror, cache_dir, tmp_path, capsys):
    assert upload.main(["build", "--only", "str-2021", "--mirror", str(mirror),
                        "--out", str(tmp_path), "--cache-dir", str(cache_dir)]) == 0
    out = capsys.readouterr().out
    assert "str-2021         cv-fold-0                    test         1,100" in out
    assert f"13 config(s) in {tmp_path}/hub/datasets/str-2021" in out


@needs_mirror
def test_card_has_hub_vocabulary_and_exact_split_sizes(built, tmp_path):
    card = DatasetCard.load(built.folder / "README.md").data
    assert card.size_categories == ["1K<n<10K"] and card.multilinguality == "monolingual"
    assert card.task_ids == ["semantic-similarity-scoring", "text-scoring"]
    assert card.license_name and card.license_link.startswith("https://")
    assert check_card(built.folder / "README.md") == []
    # stock load_dataset checks the card's split sizes and records the same bytes
    builder = datasets.load_dataset_builder(str(built.folder), "lodo-sts", cache_dir=str(tmp_path))
    builder.download_and_prepare()
    info = next(i for i in card.dataset_info if i["config_name"] == "lodo-sts")
    assert {s["name"]: (s["num_examples"], s["num_bytes"]) for s in info["splits"]} == {
        name: (s.num_examples, s.num_bytes) for name, s in builder.info.splits.items()}


@pytest.mark.parametrize("text, words", [
    ("pip install semrel\n", "pip install semrel"),
    ("pip install git+https://example.org/semrel\n", "git+https"),
    ("pip install not-a-real-dist-xyz\n", "not-a-real-dist-xyz"),
    ("Files in build/hub/datasets/c-sts/\n", "path of the build machine"),
    ("see /work/shared/upstream\n", "path of the build machine"),
])
def test_card_check_refuses_uninstallable_packages_and_build_paths(built, tmp_path, text, words):
    card = tmp_path / "README.md"
    card.write_text((built.folder / "README.md").read_text() + text)
    problems = check_card(card)
    assert len(problems) == 1 and words in problems[0]


def test_card_check_refuses_values_outside_the_vocabulary(built, tmp_path):
    card = tmp_path / "README.md"
    card.write_text((built.folder / "README.md").read_text()
                    .replace("- text-scoring", "- text-scoreing").replace("license_name:", "x:"))
    problems = check_card(card)
    assert any("task_ids 'text-scoreing' is not in the allowed list" in p for p in problems)
    assert any("license: other needs license_name" in p for p in problems)
    good = tmp_path / "model.md"  # a model card is checked against the model keys
    good.write_text("---\nlicense: apache-2.0\nlanguage: [en]\npipeline_tag: sentence-similarity\n"
                    "library_name: sentence-transformers\ndatasets: [x/str-2021]\n---\n"
                    "pip install '.[train]'\n")
    assert check_card(good) == []


def _digests(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_failed_build_keeps_the_previous_output(mirror, cache_dir, tmp_path, capsys):
    out = tmp_path / "out"
    assert upload.main(["build", "--only", "str-2021", "--mirror", str(mirror), "--out", str(out),
                        "--cache-dir", str(cache_dir), "--no-report"]) == 0
    before = _digests(out / "hub" / "datasets" / "str-2021")
    bad = tmp_path / "bad-mirror" / "str-2021"
    shutil.copytree(mirror / "str-2021", bad)
    for path in bad.iterdir():
        path.write_bytes(path.read_bytes()[:-10])  # truncated: sha256 no longer matches
    capsys.readouterr()
    assert upload.main(["build", "--only", "str-2021", "--mirror", str(bad.parent), "--out", str(out),
                        "--cache-dir", str(tmp_path / "fresh-cache")]) == 1
    err = capsys.readouterr().err
    assert "str-2021: FAILED" in err and "its previous output is kept" in err
    assert _digests(out / "hub" / "datasets" / "str-2021") == before
    assert "Stale: the last build of" in (out / "report" / "index.html").read_text()
    assert not [p for p in (out / "hub" / "datasets").iterdir() if p.name.startswith(".")]


@pytest.mark.slow
def test_concurrent_builds_into_one_folder_both_succeed(mirror, cache_dir, tmp_path):
    command = [sys.executable, str(REPO / "upload.py"), "build", "--only", "str-2021", "--mirror",
               str(mirror), "--out", str(tmp_path), "--cache-dir", str(cache_dir), "--no-report"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    runs = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True) for _ in range(2)]
    results = [(r.wait(timeout=600), r.stdout.read(), r.stderr.read()) for r in runs]
    assert [rc for rc, _, _ in results] == [0, 0], results
    assert all("13 config(s)" in out for _, out, _ in results)
    assert pq.read_table(tmp_path / "hub" / "datasets" / "str-2021" / "default"
                         / "train-00000-of-00001.parquet").num_rows == 5500


def _main(capsys, *args: str) -> tuple[int, str, str]:
    """``semrel ARGS`` in this process (the subprocess path, upload.py included, is tests/test_cli.py's):
    (exit status, stdout, stderr)."""
    capsys.readouterr()
    try:
        code = upload.main(list(args))
    except SystemExit as exit_:  # argparse: --help, unknown options
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("args, words", [
    (["build", "--only", "str2021"], "unknown name(s) str2021; datasets: c-sts, crowd-sts"),
    (["verify", "--only", "lexical-overlap", "--out", "{tmp}"], "metrics: annotator_agreement"),
    (["build", "--mirror", "/nonexistent/mirror"], "--mirror /nonexistent/mirror: no such directory"),
    (["build", "--data-dir", "c-sts=/no/such/folder"], "c-sts=/no/such/folder: no such directory"),
    (["build", "--data-dir", "csts=/tmp"], "ID=DIR with ID one of c-sts"),
    (["build", "--ony", "x"], "unrecognized arguments"),
])
def test_cli_answers_a_mistake_in_two_lines(args, words, capsys, tmp_path):
    code, out, err = _main(capsys, *(a.replace("{tmp}", str(tmp_path)) for a in args))  # a build folder that exists
    assert code == 2 and out == ""
    assert words in err and len(err.strip().splitlines()) <= 2, err


def test_cli_help_shows_defaults_and_imports_nothing_heavy(capsys):
    code, out, _ = _main(capsys, "build", "--help")
    assert code == 0 and "(default: build)" in out
    probe = subprocess.run([sys.executable, "-c", "import sys; from semrel.cli import build_parser; build_parser(); "
                            "print(sorted(m for m in ('datasets', 'torch', 'matplotlib', 'pandas') "
                            "if m in sys.modules))"], capture_output=True, text=True, cwd=REPO,
                           env={**os.environ, "PYTHONPATH": str(REPO)})
    assert probe.stdout.strip() == "[]", probe


def test_verify_fails_when_nothing_is_built_or_the_mirror_is_missing(built, tmp_path, capsys):
    code, _, err = _main(capsys, "verify", "--out", str(tmp_path))
    assert code == 1 and "nothing is built" in err
    code, out, _ = _main(capsys, "verify", "--only", "str-2021", "--out", str(built.folder.parents[2]),
                         "--mirror", str(tmp_path / "absent"))
    assert code == 2 and "verified" not in out


def test_verify_reads_the_upstream_files_not_the_cache(built, cache_dir, tmp_path, capsys):
    empty = tmp_path / "empty-mirror"
    empty.mkdir()
    code, out, _ = _main(capsys, "verify", "--only", "str-2021", "--out", str(built.folder.parents[2]),
                         "--mirror", str(empty), "--cache-dir", str(cache_dir))
    assert code == 1 and "could not rebuild it from the upstream files" in out, out


def test_publishing_sits_above_and_imports_have_no_side_effects():
    probe = """
import sys
import semrel.dataset_scripts, semrel.dataset_scripts.registry, semrel.dataset_scripts.str_2021.dice
print(sorted(m for m in ("semrel.publishing", "matplotlib") if m in sys.modules))
print([])
import matplotlib
backend = matplotlib.rcParams._get("backend")
import semrel.publishing.cards, semrel.publishing.report, semrel.publishing.publish
print(matplotlib.rcParams._get("backend") == backend, "matplotlib.pyplot" in sys.modules)
"""
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    lines = run.stdout.splitlines()
    assert lines[:2] == ["[]", "[]"], run  # dataset_scripts imports neither publishing nor matplotlib
    assert lines[2] == "True False", run  # no backend switch, no pyplot
