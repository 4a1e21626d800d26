"""crowd-sts and the MTurk identifiers of its upstream files: WorkerIds become keyed
pseudonyms, the HITId is kept as ``pair_id`` (a task, not a person; the card says why), every other
identifier is dropped; the publishing guard tells HITIds from WorkerIds on the real files."""

from __future__ import annotations

import csv
import inspect
import re

import pytest

from project import FIXTURES
from semrel.dataset_scripts.crowd_sts.reading import COLUMNS, read_annotations
from semrel.publishing.guard import ID_PATTERN

TOY = FIXTURES / "crowd-sts" / "toy"
IDS = ("HITId", "HITTypeId", "AssignmentId", "WorkerId")


def _upstream_ids(files) -> dict[str, set[str]]:
    ids = {column: set() for column in IDS}
    for path in files:
        with open(path, encoding="utf-8", newline="") as f:
            for row in csv.DictReader(f):
                for column in IDS:
                    ids[column].add(row[column])
    return ids


def test_only_the_hitid_is_kept_and_only_as_pair_id():
    files = sorted(TOY.glob("*_human.csv"))
    df = read_annotations({p.name: p for p in files})
    upstream = _upstream_ids(files)
    assert set(df["pair_id"]) == upstream["HITId"]
    assert set(COLUMNS) & set(IDS) == {"HITId", "WorkerId"}  # the two identifiers read at all
    cells = {str(v) for column in df.columns if column != "pair_id" for v in df[column]}
    for column in ("HITTypeId", "AssignmentId", "WorkerId", "HITId"):
        assert not cells & upstream[column], column  # in no other column, not even a HITId


def test_the_card_says_what_is_kept_and_why():
    from semrel.publishing.datasets import crowd_sts

    text = " ".join(inspect.getsource(crowd_sts.card_body).split())
    assert "only the HITId is kept, as `pair_id`: it names a task (one sentence pair), not a person" in text
    assert "AssignmentId, HITTypeId, approval rates and accept/submit times are dropped" in text


def test_guard_pattern_finds_every_real_worker_id_and_no_hit_or_assignment_id(mirror):
    ids = _upstream_ids(sorted((mirror / "crowd-sts").glob("*.csv")))
    pattern = re.compile(ID_PATTERN)
    assert len(ids["WorkerId"]) == 463 and all(pattern.search(w) for w in ids["WorkerId"])
    for column in ("HITId", "AssignmentId", "HITTypeId"):
        assert ids[column] and not any(pattern.search(i) for i in ids[column]), column


@pytest.mark.parametrize("hit", ["3T5ZXGO9DEODEIR3CPS5EBLJMKVQZX", "pair 3T5ZXGO9DEODEIR3CPS5EBLJMKVQZX."])
def test_a_hitid_in_text_is_no_worker_id(hit):
    assert not re.search(ID_PATTERN, hit)
