import datasets
import pyarrow.parquet as pq
import pytest
from huggingface_hub import DatasetCard

import upload
from dataset_scripts import load
from publishing.export import build_dataset, verify_folder


@pytest.fixture(scope="module")
def built(mirror, cache_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    return build_dataset("str-2021", out / "hub", mirror=mirror, cache_dir=cache_dir)


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


def test_exported_folder_loads_with_load_dataset(built, mirror, cache_dir):
    hub = datasets.load_dataset(str(built.folder), "cv-fold-3", cache_dir=str(cache_dir))
    ref = load("str-2021", "cv-fold-3", mirror=mirror, cache_dir=cache_dir)
    assert hub["test"].features["score"].dtype == "float32"
    for split in ("train", "test"):
        assert hub[split].to_list() == ref[split].to_list()


def test_verify_passes_then_catches_a_tampered_file(built, mirror, cache_dir, tmp_path):
    assert verify_folder(built.folder, "str-2021", mirror=mirror, cache_dir=cache_dir) == []
    path = built.folder / "lodo-sts" / "test-00000-of-00001.parquet"
    table = pq.read_table(path)
    pq.write_table(table.slice(1), path)
    try:
        problems = verify_folder(built.folder, "str-2021", mirror=mirror,
                                 cache_dir=tmp_path / "fresh")
        assert problems == ["lodo-sts/test: rows differ"]
    finally:
        pq.write_table(table, path)


def test_cli_build_prints_summary(mirror, cache_dir, tmp_path, capsys):
    assert upload.main(["build", "--only", "str-2021", "--mirror", str(mirror),
                        "--out", str(tmp_path), "--cache-dir", str(cache_dir)]) == 0
    out = capsys.readouterr().out
    assert "str-2021         cv-fold-0                    test         1,100" in out
    assert f"13 config(s) in {tmp_path}/hub/datasets/str-2021" in out
    with pytest.raises(SystemExit, match="unknown dataset"):
        upload.main(["build", "--only", "nope"])
