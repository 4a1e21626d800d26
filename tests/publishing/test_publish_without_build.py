"""What `semrel push` checks without a build folder: the raw WorkerId guard (it cannot be walked
around, it knows the real ids and passes clean files) and the card of a dataset that is not built,
which comes from its builder."""

from __future__ import annotations

import re

import pyarrow.parquet as pq
import pytest
from huggingface_hub import DatasetCard
from test_publish import raw_worker_ids

from semrel.publishing import guard, publish
from semrel.publishing.cards import build_recipe


def test_card_of_an_unbuilt_dataset_comes_from_its_builder(tmp_path):
    """C-STS without the user's decrypted files: nothing is built, its card is still published."""
    staged = publish.stage_card_only("str-2021", tmp_path / "not-built", tmp_path / "card")
    assert [p.name for p in staged.iterdir()] == ["README.md"]
    card = DatasetCard.load(staged / "README.md")
    assert card.data.license == "other" and card.data.language == ["en"]
    assert card.text.lstrip().startswith("# STR-2021: Semantic Textual Relatedness\n\nSTR-2021: 5,500")
    assert "## Build it yourself" in card.text and build_recipe("str-2021") in card.text
    assert "`cv-fold-0`: 5-fold CV stratified by subset" in card.text and "@inproceedings" in card.text


def _table_with(**columns):
    import pyarrow as pa

    return pa.table(columns)


# (file name, content) -> must be refused; ids: a real one without digits (4 of the 463 real ids
# have none), one glued to a word, ids in .log/.html/suffix-less files, inside text cells, in a
# list column, in a struct, as a column name
REAL_NO_DIGIT = "AQWERTYUIOPAS"  # shape of the real digit-free ids; added to the known set below
LEAKS = {
    "no digit (pattern)": ("card.md", "worker AZXCVBNMQWERT labelled"),
    "no digit (real id)": ("notes.txt", f"WORKERID{REAL_NO_DIGIT}"),  # the pattern alone misses it
    "glued to a word": ("README.md", "see worker_A1B2C3D4E5F6G7 here"),
    "log file": ("train.log", "step 3 A3BCGN11HDM8QR"),
    "html file": ("index.html", "<td>A3BCGN11HDM8QR</td>"),
    "no suffix": ("LICENSE", "A3BCGN11HDM8QR"),
    "inside a text cell": ("a.parquet", _table_with(text=["labelled by A3BCGN11HDM8QR today"])),
    "list column": ("b.parquet", _table_with(workers=[["w1", "A3BCGN11HDM8QR"], []])),
    "struct column": ("c.parquet", _table_with(meta=[{"who": "A3BCGN11HDM8QR", "n": 1}])),
    "column name": ("d.parquet", _table_with(A3BCGN11HDM8QR=[1, 2])),
    "plain cell": ("e.parquet", _table_with(worker_id=["w0a1b2c3d4e5f", "A3BCGN11HDM8QR"])),
}


@pytest.mark.parametrize("case", sorted(LEAKS))
def test_raw_worker_id_guard_cannot_be_walked_around(tmp_path, case):
    name, content = LEAKS[case]
    path = tmp_path / name
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        pq.write_table(content, path)
    problems = guard.scan_files(tmp_path, [name], known={REAL_NO_DIGIT})
    assert len(problems) == 1 and problems[0].startswith(f"{name}: "), problems
    assert "WorkerId" in problems[0] and "HDM8QR" not in problems[0] and "TYUIOP" not in problems[0]


def test_raw_worker_id_guard_knows_the_real_ids_and_passes_clean_files(mirror, tmp_path):
    known = guard.raw_worker_ids(mirror)
    assert raw_worker_ids(mirror) <= known  # every id the parser sees (+ the authors' list)
    assert len(raw_worker_ids(mirror)) == 463 and sum(not re.search(r"\d", i) for i in known) >= 4
    (tmp_path / "ok.md").write_text("pseudonyms w0a1b2c3d4e5f, AND ABBREVIATED text, sha256 "
                                    "3f2a...; ACL 2021\n", encoding="utf-8")
    pq.write_table(_table_with(worker_id=["w0a1b2c3d4e5f"], s=["A small dog."]), tmp_path / "ok.parquet")
    (tmp_path / "plot.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    assert guard.scan_files(tmp_path, ["ok.md", "ok.parquet", "plot.png"], known) == []
