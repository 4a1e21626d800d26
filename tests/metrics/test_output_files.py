"""The one whole-file writer refuses what the commands refuse up front: a symbolic link (to a
file, dangling, to /dev/null as /dev/stdout is), a FIFO and a folder, in one line naming the
argument, and changes nothing there (a link is never replaced by a file)."""

from __future__ import annotations

import os

import pytest

from semrel.metrics.output_files import LINK, write_whole

FIFO = "is not a regular file (a device, FIFO or socket); give the path of a file to write"
CASES = [  # (case, how the path is made, what is said of it)
    ("a link to a file", lambda p: p.symlink_to(p.with_name("target.csv")), LINK),
    ("a dangling link", lambda p: p.symlink_to(p.with_name("nowhere")), LINK),
    ("a link to /dev/null", lambda p: p.symlink_to(os.devnull), LINK),
    ("a FIFO", os.mkfifo, FIFO),
    ("a folder", lambda p: p.mkdir(), "is a folder; give the name of the file to write"),
]


@pytest.mark.parametrize("make, said", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_the_writer_refuses_a_link_a_fifo_or_a_folder(tmp_path, make, said):
    (tmp_path / "target.csv").write_text("the user's file\n")
    out = tmp_path / "out.csv"
    make(out)
    before = (out.is_symlink(), os.readlink(out) if out.is_symlink() else None)
    with pytest.raises(ValueError) as refused:
        write_whole(out, "a,b\n", "--csv")
    assert str(refused.value) == f"--csv {out}: {said}"
    assert (out.is_symlink(), os.readlink(out) if out.is_symlink() else None) == before
    assert (tmp_path / "target.csv").read_text() == "the user's file\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv", "target.csv"]  # nothing staged
