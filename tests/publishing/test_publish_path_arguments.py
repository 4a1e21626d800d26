"""Every path argument of `semrel build|verify|push` (--out, --cache-dir, --mirror, --data-dir,
--model) that is missing, a file, under a file, unwritable or on a read-only disk: answered in one
line naming the flag, exit 2. Fast, in-process."""

from __future__ import annotations

import errno
import tempfile
from pathlib import Path

import pytest

from semrel.cli import main


def _paths(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "built").mkdir()
    (tmp_path / "run").mkdir()
    return {"file": str(tmp_path / "a-file"), "missing": str(tmp_path / "missing"),
            "under_file": str(tmp_path / "a-file" / "sub"), "out": str(tmp_path / "built"),
            "run": str(tmp_path / "run")}


MIRROR_HINT = " (expected <mirror>/<dataset-id>/<file>)"
DATA_HINT = " (the folder with the files the authors give you)"
SWEEP = [  # (id, argv with {placeholders}, the one line after "semrel CMD: error: ")
    ("build --out file", "build --out {file}", "--out {file}: is a file, not a folder"),
    ("build --out under a file", "build --out {under_file}", "--out {under_file}: {file} is a file, not a folder"),
    ("build --out unwritable", "build --out /proc/semrel-out", "--out /proc/semrel-out: cannot write in /proc "
     "(No such file or directory)"),
    ("build --out read-only", "build --out {out}/new READONLY", "--out {out}/new: cannot write in {out} "
                                                               "(Read-only file system)"),
    ("build --cache-dir file", "build --out {out} --cache-dir {file}", "--cache-dir {file}: is a file, not a folder"),
    ("build --cache-dir read-only", "build --out {out}/o --cache-dir {out}/c READONLY",
     "--out {out}/o: cannot write in {out} (Read-only file system)"),
    ("build --mirror missing", "build --out {out} --mirror {missing}",
     "--mirror {missing}: no such directory" + MIRROR_HINT),
    ("build --mirror file", "build --out {out} --mirror {file}",
     "--mirror {file}: is a file, not a directory" + MIRROR_HINT),
    ("build --data-dir missing", "build --out {out} --data-dir c-sts={missing}",
     "--data-dir c-sts={missing}: no such directory" + DATA_HINT),
    ("build --data-dir file", "build --out {out} --data-dir c-sts={file}", "--data-dir c-sts={file}: is a file, "
                                                                           "not a folder" + DATA_HINT),
    ("verify --out missing", "verify --out {missing}", "--out {missing}: no such folder: run `semrel build` first"),
    ("verify --out file", "verify --out {file}", "--out {file}: is a file, not a folder"),
    ("verify --cache-dir file", "verify --out {out} --cache-dir {file}", "--cache-dir {file}: is a file, not a folder"),
    ("verify --mirror file", "verify --out {out} --mirror {file}",
     "--mirror {file}: is a file, not a directory" + MIRROR_HINT),
    ("verify --data-dir file", "verify --out {out} --data-dir c-sts={file}", "--data-dir c-sts={file}: is a file, "
                                                                             "not a folder" + DATA_HINT),
    ("push --out file", "push --namespace ORG --out {file} --only str-2021 --dry-run",
     "--out {file}: is a file, not a folder"),
    ("push --out read-only", "push --namespace ORG --out {out}/o --only str-2021 --dry-run READONLY",
     "--out {out}/o: cannot write in {out} (Read-only file system)"),
    ("push --model missing", "push --namespace ORG --out {out} --model {missing} --dry-run",
     "--model {missing}: no such folder (a run folder of `semrel fit`)"),
    ("push --model file", "push --namespace ORG --out {out} --model {file} --dry-run",
     "--model {file}: is a file, not a folder"),
    ("push --model, --out read-only", "push --namespace ORG --out {out} --model {run} --dry-run READONLY",
     "--out {out}: cannot write in {out} (Read-only file system)"),
    ("push --cache-dir file", "push --namespace ORG --out {out} --only str-2021 --cache-dir {file} --dry-run",
     "--cache-dir {file}: is a file, not a folder"),
    ("push --mirror file", "push --namespace ORG --out {out} --mirror {file} --dry-run",
     "--mirror {file}: is a file, not a directory" + MIRROR_HINT),
]


def read_only(monkeypatch):
    """A read-only disk as this process meets it (the tests run as root, whom chmod does not stop):
    creating anything in a folder fails with EROFS."""
    def refuse(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")
    monkeypatch.setattr(tempfile, "mkdtemp", refuse)
    monkeypatch.setattr(tempfile, "mkstemp", refuse)


@pytest.mark.parametrize("argv, line", [c[1:] for c in SWEEP], ids=[c[0] for c in SWEEP])
def test_every_path_argument_is_answered_in_one_line(tmp_path, monkeypatch, capsys, argv, line):
    values = _paths(tmp_path)
    words = argv.format(**values).split()
    if "READONLY" in words:
        words.remove("READONLY")
        read_only(monkeypatch)
    assert main(words) == 2
    err = capsys.readouterr().err
    assert err == f"semrel {words[0]}: error: {line.format(**values)}\n"
