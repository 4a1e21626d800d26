"""Label Studio without a server: the check that a project's labelling interface is a semrel BWS
one, and `semrel annotate push` with no server named (one line, exit 2). The round trip against a
real server is in test_label_studio.py."""

from __future__ import annotations

import pytest
from test_label_studio import semrel, write_design

from semrel.annotation import label_studio as ls


@pytest.mark.parametrize("config, k", [
    (ls.label_config(), 4),
    (ls.label_config(3, guide='A "quoted" guide\non two lines & more'), 3),
    ("<View><Choices name='best' toName='x'><Choice value='Pair 1'/><Choice value='Pair 2'/></Choices></View>", None),
    ("<View><Choices name='best' toName='x'><Choice value='A'/></Choices><Choices name='worst' toName='x'>"
     "<Choice value='A'/></Choices></View>", None),
    ("not XML", None),
])
def test_label_studio_interface_check(config, k):
    if k is not None:
        assert ls.check_interface(config, "here") == k
        return
    with pytest.raises(ls.LabelStudioError) as raised:
        ls.check_interface(config, "here")
    assert str(raised.value) == ("here is not a semrel BWS project: its labelling interface lacks the 'best' and "
                                 "'worst' choices of Pair 1..Pair k (semrel annotate push makes them)")


def test_label_studio_without_a_server_or_token_is_one_line(tmp_path):
    write_design(tmp_path, 12)
    done = semrel("annotate", "push", tmp_path / "tuples.csv", "--pairs", tmp_path / "pairs.csv", "--project", "x",
                  env={"LABEL_STUDIO_URL": "", "LABEL_STUDIO_API_KEY": ""})
    assert (done.returncode, done.stderr) == (2, "semrel annotate push: error: no Label Studio server: give --url "
                                                 "and --token (or set LABEL_STUDIO_URL and LABEL_STUDIO_API_KEY)\n")
