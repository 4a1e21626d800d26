"""`semrel push --dataset DIR`: a dataset folder of `semrel annotate dataset` planned as a dataset
repo NAMESPACE/<folder name>, staged whole, checked by the dry run as by the push (card, licence,
Parquet files, stock load_dataset, local paths, raw WorkerIds, annotator columns), each refusal one
line; and (slow) pushed to the local Hub and loaded back from it with the same rows."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hub_server import LocalHub
from semrel.annotation.dataset_out import write_dataset
from semrel.cli import main
from semrel.metrics.bws.pairs_file import read_pairs

NS = "my-org"
RAW_IDS = ("A3BCGN11HDM8QR", "alice@example.org", "label-studio-user-17")  # the annotators' own ids
HEADER = ["annotator", "tuple_id", "Item1", "Item2", "Item3", "Item4", "BestItem", "WorstItem"]
WRITER = "semrel annotate dataset"


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """A dataset folder `my-dataset` written by `semrel annotate dataset`'s function from 24 pairs
    and annotations whose annotator column holds raw ids (no pseudonyms)."""
    root = tmp_path_factory.mktemp("made")
    rng = np.random.default_rng(0)
    n = 24
    latent = rng.uniform(size=n)
    with open(root / "pairs.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["pair_id", "sentence1", "sentence2", "source"])
        for i in range(n):
            w.writerow([f"p{i:02d}", f"The cat number {i} sat on a mat.", f"A dog number {i} ran to a park.", "toy"])
    tuples = [[(i + k) % n for k in range(4)] for i in range(n)]
    tuples += [list(rng.choice(n, 4, replace=False)) for _ in range(n)]
    with open(root / "ann.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(HEADER)
        for who in RAW_IDS:
            for t, items in enumerate(tuples):
                judged = latent[items] + rng.normal(0, 0.1, 4)
                ids = [f"p{i:02d}" for i in items]
                w.writerow([who, f"t{t}", *ids, ids[int(judged.argmax())], ids[int(judged.argmin())]])
    write_dataset([root / "ann.csv"], read_pairs(root / "pairs.csv"), root / "my-dataset", license="cc-by-4.0",
                  languages=["en"], name="Toy relatedness", trials=20)
    return root / "my-dataset"


def copy(made: Path, tmp_path: Path, name: str = "my-dataset") -> Path:
    folder = tmp_path / name
    shutil.copytree(made, folder)
    return folder


def data_file(folder: Path) -> Path:
    (path,) = folder.glob("default/*.parquet")
    return path


def files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def dry_run(tmp_path: Path, upstream: Path, *folders) -> int:
    return main(["push", "--namespace", NS, "--dataset", *map(str, folders), "--out", str(tmp_path / "out"),
                 "--mirror", str(upstream), "--dry-run"])


def test_the_folder_is_planned_staged_whole_and_passes_the_dry_run(made, tmp_path, upstream, capsys):
    folder = copy(made, tmp_path)
    before = {rel: (folder / rel).read_bytes() for rel in files(folder)}
    assert dry_run(tmp_path, upstream, folder) == 0
    parquet = data_file(folder).relative_to(folder).as_posix()
    assert capsys.readouterr().out.splitlines() == [
        "kind           repo                                     files  what",
        f"dataset folder {NS}/my-dataset                            2  Parquet + card (the folder, whole)",
        f"    README.md  (its usage snippet loads {NS}/my-dataset)",
        f"    {parquet}",
        "dry run: every check passed; nothing was sent"]
    staged = tmp_path / "out" / "hub" / "dataset-folders" / "my-dataset"
    assert files(staged) == files(folder) == ["README.md", parquet]
    assert (staged / parquet).read_bytes() == before[parquet]
    assert (staged / "README.md").read_text() == before["README.md"].decode().replace(
        'load_dataset("path/to/this/folder")', f'load_dataset("{NS}/my-dataset")')
    assert {rel: (folder / rel).read_bytes() for rel in files(folder)} == before  # the folder is not changed
    sent = (staged / "README.md").read_text() + "\n".join(
        str(v) for column in pq.read_table(staged / parquet).columns for v in column.to_pylist())
    assert [raw for raw in RAW_IDS if raw in sent] == []  # annotators are counted, never named


def test_two_folders_of_one_name_are_refused(made, tmp_path, upstream, capsys):
    one, other = copy(made, tmp_path / "a"), copy(made, tmp_path / "b")
    assert dry_run(tmp_path, upstream, one, other) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"error: two datasets would go to one repo, {NS}/my-dataset: rename a --dataset folder"]


def _missing(folder: Path) -> Path:
    shutil.rmtree(folder)
    return folder


def _a_file(folder: Path) -> Path:
    return folder / "README.md"


def _no_card(folder: Path) -> Path:
    (folder / "README.md").unlink()
    return folder


def _no_parquet(folder: Path) -> Path:
    data_file(folder).unlink()
    return folder


def _no_yaml(folder: Path) -> Path:
    (folder / "README.md").write_text("# My dataset\n", encoding="utf-8")
    return folder


def _no_licence(folder: Path) -> Path:
    card = folder / "README.md"
    card.write_text(re.sub(r"^license: .*\n", "", card.read_text(encoding="utf-8"), flags=re.M), encoding="utf-8")
    return folder


def _link(folder: Path) -> Path:
    (folder / "notes.txt").symlink_to(folder.parent / "elsewhere.txt")
    return folder


def _renamed(name: str):
    def rename(folder: Path) -> Path:
        return folder.rename(folder.parent / name)
    return rename


NOT_A_DATASET = f"not a dataset folder ({WRITER} writes one)"
NAME_RULE = ("Repo id must use alphanumeric chars, '-', '_' or '.'. The name cannot start or end with '-' or '.' "
             "and the maximum length is 96")
REFUSED = {  # case -> (how the folder is spoiled, exit status, the one line of stderr; {} is the folder)
    "no such folder": (_missing, 2, f"semrel push: error: --dataset {{}}: no such folder (a dataset folder of "
                                    f"`{WRITER}`)"),
    "a file": (_a_file, 2, "semrel push: error: --dataset {}: is a file, not a folder"),
    "no card": (_no_card, 1, f"error: --dataset {{}}: holds no README.md (the dataset card): {NOT_A_DATASET}"),
    "no Parquet": (_no_parquet, 1, f"error: --dataset {{}}: holds no Parquet file: {NOT_A_DATASET}"),
    "a card without YAML": (_no_yaml, 1, f"error: --dataset {{}}: README.md has no YAML header (---): not a "
                                         f"dataset card ({WRITER} writes one)"),
    "no licence": (_no_licence, 1, "error: --dataset {}: README.md names no licence (YAML license): data goes to "
                                   f"the Hub only under its licence; write the folder again with {WRITER} --license"),
    "a link": (_link, 1, "error: --dataset {}: notes.txt is a link: a dataset folder goes whole, file by file; "
                         "copy the file in"),
    "a space in the name": (_renamed("my dataset"), 1, f"error: --dataset {{}}: 'my dataset' is no Hub repo name "
                                                       f"({NAME_RULE}); rename the folder (its name is the repo's)"),
    "-- in the name": (_renamed("my--dataset"), 1, "error: --dataset {}: 'my--dataset' is no Hub repo name (Cannot "
                                                   "have -- or .. in repo_id); rename the folder (its name is the "
                                                   "repo's)"),
    "97 characters": (_renamed("d" * 97), 1, f"error: --dataset {{}}: '{'d' * 97}' is no Hub repo name ({NAME_RULE}); "
                                             "rename the folder (its name is the repo's)"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_folder_that_is_no_dataset_folder_is_refused_in_one_line(case, made, tmp_path, upstream, capsys):
    spoil, status, line = REFUSED[case]
    given = spoil(copy(made, tmp_path))
    assert dry_run(tmp_path, upstream, given) == status
    assert capsys.readouterr().err.splitlines() == [line.format(given)]
    assert not (tmp_path / "out" / "hub" / "dataset-folders").exists()  # nothing staged


def _damaged(folder: Path) -> str:
    path = data_file(folder)
    path.write_bytes(path.read_bytes()[:300])
    rel = path.relative_to(folder).as_posix()
    return (f"{rel}: is no readable Parquet file (ArrowInvalid: Could not open Parquet input source '{rel}': "
            "Parquet magic bytes not found in footer. Either the file is corrupted or this is not a parquet file.)"
            f": damaged? write the folder again ({WRITER})")


def _rows_changed(folder: Path) -> str:
    path = data_file(folder)
    pq.write_table(pq.read_table(path).slice(1), path)  # one row lost, the name kept
    return (f"{path.relative_to(folder).as_posix()}: does not hold the bytes its name's fingerprint says (changed "
            "after it was written: stock load_dataset may serve rows cached for that name); write the folder "
            f"again ({WRITER})")


def _annotations_added(folder: Path) -> str:
    pq.write_table(pa.table({"pair_id": ["p00", "p01", "p02"], "annotator": ["ann-0123456789ab", "alice", None]}),
                   folder / "annotations.parquet")
    return ("annotations.parquet: column 'annotator' holds 1 annotator id(s) that are no semrel pseudonym "
            "(ann-<12 hex>): pseudonymise them (semrel annotate pull, potato-pull and crowd do)")


def _user_ids_in_csv(folder: Path) -> str:
    (folder / "answers.csv").write_text("tuple_id,completed_by\nt1,17\nt2,ann-0123456789ab\n", encoding="utf-8")
    return ("answers.csv: column 'completed_by' holds 1 annotator id(s) that are no semrel pseudonym "
            "(ann-<12 hex>): pseudonymise them (semrel annotate pull, potato-pull and crowd do)")


def _worker_id_in_card(folder: Path) -> str:
    with open(folder / "README.md", "a", encoding="utf-8") as card:
        card.write("\nThanks to worker A1Z2X3C4V5B6N7.\n")
    return "README.md: contains what looks like a raw MTurk WorkerId (A1Z2…)"


def _local_path(folder: Path) -> str:
    (folder / "NOTES.md").write_text("made in /home/me/corpus\n", encoding="utf-8")
    return "NOTES.md:1: names a path of this machine ('/home/me/corpus')"


def _licence_outside_the_vocabulary(folder: Path) -> str:
    from semrel.publishing.hub_vocabulary import ALLOWED

    card = folder / "README.md"
    card.write_text(card.read_text(encoding="utf-8").replace("license: cc-by-4.0", "license: gpl-3.0"),
                    encoding="utf-8")
    return f"README.md: license 'gpl-3.0' is not in the allowed list {sorted(ALLOWED['license'])}"


CHECKED = {  # case -> what spoils a copy of the folder and returns the one problem listed (after the folder)
    "damaged Parquet": _damaged,
    "rows changed after writing": _rows_changed,
    "raw annotator ids in a Parquet column": _annotations_added,
    "raw user ids in a CSV column": _user_ids_in_csv,
    "a raw MTurk WorkerId in the card": _worker_id_in_card,
    "a local path": _local_path,
    "a licence outside the Hub vocabulary": _licence_outside_the_vocabulary,
}


@pytest.mark.parametrize("case", list(CHECKED))
def test_the_checks_refuse_what_may_not_go_naming_the_file(case, made, tmp_path, upstream, capsys):
    folder = copy(made, tmp_path)
    problem = CHECKED[case](folder)
    assert dry_run(tmp_path, upstream, folder) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == ["error: refusing to push, nothing was uploaded:", f"  dataset folder my-dataset: {problem}"]
    if case == "a raw MTurk WorkerId in the card":
        assert "A1Z2X3C4V5B6N7" not in "\n".join(err)


def test_a_folder_that_load_dataset_cannot_load_is_refused(made, tmp_path, upstream, capsys):
    """A card whose train split names a file that is not there: stock load_dataset fails, and says why."""
    folder = copy(made, tmp_path)
    card = folder / "README.md"
    text = card.read_text(encoding="utf-8")
    parquet = data_file(folder).relative_to(folder).as_posix()
    card.write_text(text.replace(f"path: {parquet}", "path: default/missing-*.parquet"), encoding="utf-8")
    assert "default/missing-*.parquet" in card.read_text(encoding="utf-8")
    assert dry_run(tmp_path, upstream, folder) == 1
    assert capsys.readouterr().err.splitlines() == [
        "error: refusing to push, nothing was uploaded:",
        "  dataset folder my-dataset: does not load with datasets.load_dataset: DataFilesNotFoundError: No "
        "(supported) data files found in my-dataset"]


def test_benchmark_only_says_it_takes_a_dataset_folder(capsys):
    with pytest.raises(SystemExit):
        main(["benchmark", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines (and at hyphens)
    assert "/pairs/test), or a dataset folder (semrel annotate dataset) --output OUTPUT" in help_text


@pytest.mark.slow
def test_the_folder_pushed_to_the_hub_loads_back_with_the_same_rows(made, tmp_path, upstream):
    folder = copy(made, tmp_path)
    token = "hf_semrelTestToken_MUST_NOT_BE_PRINTED_42"
    with LocalHub() as hub:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "SEMREL_"))}
        env |= hub.client_env(token) | {"HF_HOME": str(tmp_path / "home")}
        pushed = subprocess.run([sys.executable, "-m", "semrel", "push", "--namespace", NS, "--dataset", str(folder),
                                 "--out", str(tmp_path / "out"), "--mirror", str(upstream)],
                                env=env, capture_output=True, text=True, timeout=300)
        assert pushed.returncode == 0, pushed.stderr
        assert pushed.stdout.splitlines()[-1] == "done: 1 repo(s) updated, 0 already up to date"
        assert token not in pushed.stdout + pushed.stderr
        parquet = data_file(folder).relative_to(folder).as_posix()
        sent = hub.files("dataset", f"{NS}/my-dataset")
        assert sorted(sent) == ["README.md", parquet] and sent[parquet] == (folder / parquet).read_bytes()
        assert f'load_dataset("{NS}/my-dataset")' in sent["README.md"].decode()
        code = ("import datasets, json, sys; rows = datasets.load_dataset(sys.argv[1], cache_dir=sys.argv[2]); "
                "print(json.dumps({s: d.to_list() for s, d in rows.items()}))")
        loaded = subprocess.run([sys.executable, "-c", code, f"{NS}/my-dataset", str(tmp_path / "cache")],
                                env=env, capture_output=True, text=True, timeout=300)
    assert loaded.returncode == 0, loaded.stderr
    rows = json.loads(loaded.stdout.splitlines()[-1])
    local = pq.read_table(io.BytesIO((folder / parquet).read_bytes())).to_pylist()
    assert list(rows) == ["train"] and rows["train"] == local and len(local) == 24
