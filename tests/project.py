"""Paths every test shares: the repository, the mirror of the real upstream files and the fixtures; and
how a script of the repository answers a mistake."""

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MIRROR = Path(os.environ.get("SEMREL_MIRROR") or REPO.parent / "shared" / "upstream")
HAS_MIRROR = (MIRROR / "str-2021").is_dir()
NEEDS_MIRROR = "needs the upstream mirror (../shared/upstream or $SEMREL_MIRROR)"
# small files of every upstream format in the mirror layout, each dataset folder with its own
# SHA256SUMS (see tests/fixtures/README.md)
FIXTURES = REPO / "tests" / "fixtures"


def needs_mirror(test):
    """Skip ``test`` without the real mirror: it asserts figures of the real data."""
    import pytest

    return pytest.mark.skipif(not HAS_MIRROR, reason=NEEDS_MIRROR)(test)


def fixture_copy(root: Path, dataset_id: str, monkeypatch, changes: dict[str, bytes] | None = None) -> Path:
    """A mirror at ``root`` holding a copy of the fixture folder of ``dataset_id`` with ``changes``
    ({path in the dataset folder: bytes}) written into it and listed in its SHA256SUMS, and named
    in ``$SEMREL_FIXTURE_MIRROR`` beside the fixture mirror (so checked against that list)."""
    import hashlib
    import shutil

    folder = root / dataset_id
    shutil.copytree(FIXTURES / dataset_id, folder)
    sums = dict(reversed(line.split(maxsplit=1)) for line in (folder / "SHA256SUMS").read_text().splitlines())
    for name, data in (changes or {}).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
        sums[name] = hashlib.sha256(data).hexdigest()
    (folder / "SHA256SUMS").write_text("".join(f"{digest}  {name}\n" for name, digest in sorted(sums.items())))
    monkeypatch.setenv("SEMREL_FIXTURE_MIRROR", os.pathsep.join([os.environ["SEMREL_FIXTURE_MIRROR"], str(root)]))
    return root


def refused_before_running(script: Path, args: list[str], words: str, tmp_path: Path, out_flag: str) -> None:
    """``script *args <out_flag> tmp_path/out``, run as a user runs it (a subprocess from
    ``tmp_path``), exits 2 with the one line ``<script>: error: <words> (see <script> --help)``,
    prints nothing and writes no output."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(script), *args, out_flag, str(tmp_path / "out")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == f"{script.name}: error: {words} (see {script.name} --help)\n"
    assert not (tmp_path / "out").exists()


def not_a_count(flag: str, value: str) -> tuple[list[str], str]:
    """A row of a script's mistakes: ``flag value`` where an integer >= 1 belongs, and the line said."""
    return [flag, value], f"argument {flag}: must be an integer >= 1, not '{value}'"
