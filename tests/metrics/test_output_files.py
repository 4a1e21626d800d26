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


def test_a_folder_that_replaces_only_some_parts_may_hold_an_input_elsewhere(tmp_path):
    """``semrel build --out`` replaces ``hub/`` and ``report/`` only: a model kept in another part of
    the folder is read, never replaced; one inside ``hub/`` would be."""
    from semrel.metrics.errors import ParameterError
    from semrel.metrics.output_files import check_output

    for part in ("models", "hub"):
        (tmp_path / part / "m").mkdir(parents=True)
    inputs = {"model": [tmp_path / "models" / "m"]}
    assert check_output(tmp_path, "out", inputs, folder=True, replaced=("hub", "report")) == tmp_path
    with pytest.raises(ParameterError, match=r"holds \{model\}|holds model"):
        check_output(tmp_path, "out", inputs, folder=True)
    with pytest.raises(ParameterError, match="holds model .*/hub/m, which this command reads"):
        check_output(tmp_path, "out", {"model": [tmp_path / "hub" / "m"]}, folder=True,
                     replaced=("hub", "report"))
