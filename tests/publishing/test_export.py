import csv
import hashlib
import io
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import pytest
from huggingface_hub import DatasetCard

import toy_dataset
from project import FIXTURES, REPO, fixture_copy, needs_mirror
from semrel import cli as upload
from semrel.dataset_scripts import load
from semrel.dataset_scripts.semrel_2024.files import ENG_TEST_UNLABELLED, FILES
from semrel.publishing.export import build_dataset, data_files, verify_folder
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
    assert pq.read_table(folder / data_files(folder)["default"]["train"][0]).num_rows == 5500


def test_exported_folder_loads_with_load_dataset(built, upstream, cache_dir):
    hub = datasets.load_dataset(str(built.folder), "cv-fold-3", cache_dir=str(cache_dir))
    ref = load("str-2021", "cv-fold-3", mirror=upstream, cache_dir=cache_dir)
    assert hub["test"].features["score"].dtype == "float32"
    for split in ("train", "test"):
        assert hub[split].to_list() == ref[split].to_list()


@pytest.mark.slow
def test_verify_passes_then_catches_a_tampered_file(built, mirror, cache_dir, tmp_path):
    assert verify_folder(built.folder, "str-2021", mirror=mirror, cache_dir=cache_dir) == []
    path = built.folder / data_files(built.folder)["lodo-sts"]["test"][0]
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
    assert "str-2021         cv-fold-0                    test                 1,100" in out
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
    folder = tmp_path / "hub" / "datasets" / "str-2021"
    assert pq.read_table(folder / data_files(folder)["default"]["train"][0]).num_rows == 5500


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


# ---- stock load_dataset never serves the rows of another build of a folder of the same name ----

@pytest.fixture(scope="module")
def toy():
    with toy_dataset.registered():
        yield


def _rescored(pairs: bytes) -> bytes:
    """toy-sts pairs.csv with every score s replaced by 5 - s: the same texts and sizes."""
    rows = list(csv.reader(io.StringIO(pairs.decode())))
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(
        [rows[0], *([*r[:-1], f"{5 - float(r[-1]):.1f}"] for r in rows[1:])])
    return out.getvalue().encode()


TOY_PAIRS = (FIXTURES / "toy-sts" / "pairs.csv").read_bytes()
STALE_CASES = {  # where the second build goes: another folder of the same name, or the same one
    "another folder of the same name": "b",
    "a rebuild of the same folder": "a",
}


@pytest.mark.parametrize("case", STALE_CASES)
def test_load_dataset_returns_the_rows_of_the_build_in_the_folder(case, toy, tmp_path, monkeypatch):
    first = fixture_copy(tmp_path / "mirror-1", "toy-sts", monkeypatch)
    second = fixture_copy(tmp_path / "mirror-2", "toy-sts", monkeypatch, {"pairs.csv": _rescored(TOY_PAIRS)})
    hf_cache = str(tmp_path / "hf-cache")  # one datasets cache for both, as a user's default one
    loaded = []
    for mirror, out in ((first, "a"), (second, STALE_CASES[case])):
        folder = build_dataset("toy-sts", tmp_path / out / "hub", mirror=mirror,
                               cache_dir=tmp_path / "semrel-cache").folder
        for config in ("default", "cv-fold-0"):
            hub = datasets.load_dataset(str(folder), config, cache_dir=hf_cache)
            ref = load("toy-sts", config, mirror=mirror, cache_dir=tmp_path / "semrel-cache")
            assert {s: d.to_list() for s, d in hub.items()} == {s: d.to_list() for s, d in ref.items()}
        loaded.append(hub["test"].to_list())
    assert loaded[0] != loaded[1]


def test_data_file_names_carry_the_sha256_of_their_bytes_and_the_card_names_each(toy, tmp_path):
    folder = build_dataset("toy-sts", tmp_path / "hub", mirror=toy_dataset.MIRROR,
                           cache_dir=tmp_path / "cache").folder
    named = data_files(folder)
    assert {c: sorted(s) for c, s in named.items()} == {"default": ["train"], "cv-fold-0": ["test", "train"]}
    for config, splits in named.items():
        for split, [path] in splits.items():
            digest = hashlib.sha256((folder / path).read_bytes()).hexdigest()
            assert path == f"{config}/{split}-00000-of-00001-{digest[:16]}.parquet"
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.parquet")) == sorted(
        p for splits in named.values() for [p] in splits.values())


def _tamper_keeping_sizes(folder: Path) -> list[str]:
    """Rewrite default/train with its scores reversed (same sizes, other rows) under its name."""
    path = data_files(folder)["default"]["train"][0]
    table = pq.read_table(folder / path)
    pq.write_table(table.set_column(3, "score", table.column("score").take(list(range(31, -1, -1)))),
                   folder / path)
    return [f"default: {path} does not hold the bytes its name's fingerprint says (changed after the "
            "build: stock load_dataset may serve the rows cached for that name); build it again"]


def _older_export(folder: Path) -> list[str]:
    """Rename every data file as an older semrel did and name them by a pattern in the card."""
    card, patterns = (folder / "README.md").read_text(), []
    for config, splits in data_files(folder).items():
        for split, [path] in splits.items():
            (folder / path).rename(folder / config / f"{split}-00000-of-00001.parquet")
            card = card.replace(path, f"{config}/{split}-*.parquet")
            patterns.append(f"{config}/{split}-*.parquet")
    (folder / "README.md").write_text(card)
    return [f"{p.split('/')[0]}: {p} has no content fingerprint in its name (written by an older semrel: stock "
            "load_dataset may serve rows cached from another build for it); build it again" for p in patterns]


@pytest.mark.parametrize("change", [_tamper_keeping_sizes, _older_export], ids=["tampered", "older export"])
def test_verify_refuses_data_files_their_names_do_not_fingerprint(change, toy, tmp_path):
    cache = tmp_path / "cache"  # warm: load_dataset may serve the rows it cached before the change
    folder = build_dataset("toy-sts", tmp_path / "hub", mirror=toy_dataset.MIRROR, cache_dir=cache).folder
    assert verify_folder(folder, "toy-sts", mirror=toy_dataset.MIRROR, cache_dir=cache) == []
    expected = change(folder)
    assert sorted(verify_folder(folder, "toy-sts", mirror=toy_dataset.MIRROR, cache_dir=cache)) == sorted(expected)


def _labelled_english_test() -> bytes:
    """The fixture's unlabelled English test with a score per pair, in the labelled file's
    layout (``PairID,Text,Score``), as the held-back upstream file is."""
    rows = list(csv.reader(io.StringIO((FIXTURES / "semrel-2024" / ENG_TEST_UNLABELLED.path)
                                       .read_text(encoding="utf-8"), newline="")))
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(
        [["PairID", "Text", "Score"], *([*r, f"{(i * 37 % 100) / 100:.2f}"] for i, r in enumerate(rows[1:]))])
    return out.getvalue().encode()


@pytest.mark.slow
def test_a_rebuild_with_the_labelled_english_test_is_what_load_dataset_returns(tmp_path, monkeypatch, capsys):
    """Build semrel-2024 without the labelled English test, load its eng config with stock
    load_dataset, put the labelled file in the mirror and build again: load_dataset has the scores."""
    mirror = fixture_copy(tmp_path / "mirror", "semrel-2024", monkeypatch)
    fixture_copy(mirror, "str-2021", monkeypatch)  # English train is STR-2021
    out, cache, hf_cache = tmp_path / "build", tmp_path / "cache", str(tmp_path / "hf-cache")
    folder = out / "hub" / "datasets" / "semrel-2024"
    build = ["build", "--only", "semrel-2024", "--mirror", str(mirror), "--out", str(out),
             "--cache-dir", str(cache), "--no-report"]
    assert upload.main(build) == 0
    before = datasets.load_dataset(str(folder), "eng", cache_dir=hf_cache)["test"]
    assert len(before) == 10 and set(before["score"]) == {None}

    labelled = mirror / "semrel-2024" / FILES[("eng", "test")].path
    labelled.write_bytes(_labelled_english_test())
    sums = mirror / "semrel-2024" / "SHA256SUMS"
    sums.write_text(sums.read_text() + f"{hashlib.sha256(labelled.read_bytes()).hexdigest()}  "
                                       f"{FILES[('eng', 'test')].path}\n")
    assert upload.main(build) == 0
    ours = load("semrel-2024", "eng", mirror=mirror, cache_dir=cache)["test"]
    assert None not in ours["score"][:] and len(ours) == 10
    parquet = pq.read_table(folder / data_files(folder)["eng"]["test"][0])
    assert parquet.column("score").to_pylist() == ours["score"][:]
    after = datasets.load_dataset(str(folder), "eng", cache_dir=hf_cache)["test"]
    assert after.to_list() == ours.to_list()


def test_a_build_from_a_broken_mirror_fails_with_a_warm_cache(tmp_path, monkeypatch, capsys):
    mirror = fixture_copy(tmp_path / "mirror", "semrel-2024", monkeypatch)
    fixture_copy(mirror, "str-2021", monkeypatch)  # English train is STR-2021
    cache = tmp_path / "cache"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the build's notes (English test unlabelled)
        load("semrel-2024", "all", mirror=mirror, cache_dir=cache)  # the config a build reads first
    path = mirror / "semrel-2024" / FILES[("eng", "train")].path
    path.write_bytes(path.read_bytes()[:-10])
    code, _, err = _main(capsys, "build", "--only", "semrel-2024", "--mirror", str(mirror),
                         "--out", str(tmp_path / "out"), "--cache-dir", str(cache), "--no-report")
    sums = mirror / "semrel-2024" / "SHA256SUMS"
    listed = next(line.split()[0] for line in sums.read_text().splitlines()
                  if line.endswith(FILES[("eng", "train")].path))
    assert code == 1 and "-> semrel-2024: FAILED (SourceError: " in err
    assert (f"{FILES[('eng', 'train')].path} of 'semrel-2024': sha256 mismatch at {path}: expected {listed} "
            f"(test fixture, {sums}), got {hashlib.sha256(path.read_bytes()).hexdigest()}") in err
