"""crowd-sts on the real mirrored MTurk files: counts, pseudonyms, filtered configs, split, card,
reproduction script. Every config is built once per session (shared cache): a whole-dataset build,
so the module is slow; the reading and filter logic is tested fast on fixtures (test_crowd_*.py)."""

import csv
import re

import datasets
import numpy as np
import pyarrow.parquet as pq
import pytest

from scripts import reproduce_crowd_sts
from semrel.dataset_scripts import REGISTRY, builder, load
from semrel.dataset_scripts.crowd_sts import FILTERED, SOURCES, CrowdSts
from semrel.dataset_scripts.crowd_sts.filters import PAPER_NUMBER, run_filters
from semrel.dataset_scripts.crowd_sts.report import frame
from semrel.dataset_scripts.crowd_sts.study import filter_study, flagged_sets, pair_measures
from semrel.dataset_scripts.crowd_sts.tables import aggregate_pairs
from semrel.publishing.export import build_dataset

pytestmark = pytest.mark.slow
MTURK_ID = re.compile(r"\bA[A-Z0-9]{8,20}\b")


@pytest.fixture(scope="module")
def raw_ids(mirror):
    """Every raw WorkerId of the upstream files and of the authors' list."""
    ids = set()
    for source in SOURCES:
        with open(mirror / "crowd-sts" / source.file_name, newline="", encoding="utf-8") as f:
            ids |= {row["WorkerId"] for row in csv.DictReader(f)}
    listed = (mirror / "crowd-sts" / "bad_annotators_all.txt").read_text().splitlines()
    assert len(ids) == 463 and set(listed) <= ids
    return ids


def assert_no_raw_id(text: str, raw_ids: set) -> None:
    leaked = set(MTURK_ID.findall(text)) & raw_ids
    assert not leaked, f"raw MTurk ids in output: {sorted(leaked)[:3]}"


@pytest.fixture(scope="module")
def built(mirror, cache_dir):
    return {c: load("crowd-sts", c, mirror=mirror, cache_dir=cache_dir)
            for c in REGISTRY["crowd-sts"].configs}


@pytest.fixture(scope="module")
def frames(built):
    return {c: frame(d) for c, d in built.items()}


def test_counts_on_real_files(frames):
    ann, pairs, annotators = frames["annotations"], frames["pairs"], frames["annotators"]
    assert len(ann) == 39_660 and len(pairs) == 13_225 and len(annotators) == 463
    assert ann["pair_id"].nunique() == 13_225 and ann["worker_id"].nunique() == 463
    per_pair = ann.groupby("pair_id").size()
    assert per_pair.value_counts().to_dict() == {3: 13_210, 2: 15}
    two = pairs[pairs["n_annotations"] == 2]
    assert len(two) == 15 and set(two["source"]) == {"Paralex"} and not two["is_random"].any()
    assert ann["label"].value_counts().to_dict() == {1: 11053, 3: 8828, 4: 7581, 2: 6192, 5: 6006}
    assert ann["seconds"].min() == 1 and ann["seconds"].max() == 14_079
    assert ann["seconds"].median() == 12
    assert int(pairs["n_annotations"].sum()) == 39_660 and annotators["n_annotations"].sum() == 39_660
    assert pairs.groupby("is_random").size().to_dict() == {False: 6764, True: 6461}


def test_features(built):
    assert built["pairs"]["train"].features["score"].dtype == "float32"
    assert built["annotations"]["train"].features["label"].dtype == "int8"
    assert REGISTRY["crowd-sts"].score_range == (1.0, 5.0)
    assert not REGISTRY["crowd-sts"].redistributable
    assert REGISTRY["crowd-sts"].configs[0] == "pairs"


def test_no_raw_worker_id_in_any_config(built, raw_ids):
    for config, splits in built.items():
        for split, ds in splits.items():
            table = ds.data.table
            for name in table.column_names:
                if table.schema.field(name).type == "string":
                    values = set(table.column(name).to_pylist())
                    assert not values & raw_ids, (config, split, name)
                    assert_no_raw_id("\n".join(v for v in values if v), raw_ids)


def test_pairs_are_the_mean_of_their_annotations(frames):
    ann, pairs = frames["annotations"], frames["pairs"].set_index("pair_id")
    again = aggregate_pairs(ann).set_index("pair_id").loc[pairs.index]
    np.testing.assert_allclose(pairs["score"], again["score"], rtol=1e-6)
    np.testing.assert_allclose(pairs["label_std"], again["label_std"], rtol=1e-5)
    assert (pairs["n_annotations"] == again["n_annotations"]).all()
    first = ann.drop_duplicates("pair_id").set_index("pair_id").loc[pairs.index]
    assert (first["sentence1"] == pairs["sentence1"]).all()
    assert (first["is_random"] == pairs["is_random"]).all()


def test_mojibake_repaired_raw_kept(frames):
    ann = frames["annotations"]
    broken = ann["sentence1_raw"].str.contains("вЂ") | ann["sentence2_raw"].str.contains("вЂ")
    assert ann.loc[broken, "pair_id"].nunique() == 20 and set(ann.loc[broken, "source"]) == {"Bible"}
    fixed = ann[broken]
    assert not (fixed["sentence1"].str.contains("вЂ") | fixed["sentence2"].str.contains("вЂ")).any()
    assert (fixed["sentence1"].str.contains("—") | fixed["sentence2"].str.contains("—")).all()
    same = ~broken
    assert (ann.loc[same, "sentence1"] == ann.loc[same, "sentence1_raw"]).all()


def test_split_is_leak_free_and_grouped(built):
    train, test = built["pairs"]["train"], built["pairs"]["test"]
    assert not set(train["pair_id"]) & set(test["pair_id"])
    assert len(train) + len(test) == 13_225 and 0.18 <= len(test) / 13_225 <= 0.24
    norm = lambda ds: {" ".join(s.split()).lower()  # noqa: E731
                       for s in list(ds["sentence1"]) + list(ds["sentence2"])}
    assert not norm(train) & norm(test)
    assert not set(train["split_group"]) & set(test["split_group"])


def test_annotators_flags_match_the_filter_functions(frames):
    ann, annotators = frames["annotations"], frames["annotators"].set_index("worker_id")
    results = run_filters(ann)
    for name, result in results.items():
        assert set(annotators.index[annotators[f"flagged_{name}"]]) == result.flagged, name
    counts = {n: int(annotators[f"flagged_{n}"].sum()) for n in results}
    assert counts == {"slow": 37, "low_variance": 134, "high_random": 27, "disagreeable": 103,
                      "sentiment": 0}
    assert int(annotators["flagged_any"].sum()) == 202
    assert int(annotators["in_authors_list"].sum()) == 160
    assert int((annotators["in_authors_list"] & annotators["flagged_any"]).sum()) == 100
    assert annotators["label_class"].value_counts().to_dict() == {
        "unclassified": 223, "radical": 185, "centrist": 55}


def test_filtered_configs_consistent_with_annotators_table(frames):
    ann, annotators, pairs = frames["annotations"], frames["annotators"], frames["pairs"]
    split_of = pairs.set_index("pair_id")["split_group"]
    for suffix, names in FILTERED.items():
        flagged = annotators.loc[annotators[[f"flagged_{n}" for n in names]].any(axis=1), "worker_id"]
        expected = aggregate_pairs(ann[~ann["worker_id"].isin(set(flagged))]).set_index("pair_id")
        got = frames[f"pairs-filtered-{suffix}"].set_index("pair_id").sort_index()
        assert list(got.index) == list(expected.index), suffix
        np.testing.assert_allclose(got["score"], expected["score"], rtol=1e-6)
        assert (got["n_annotations"] == expected["n_annotations"]).all()
        assert (got["split_group"] == split_of.loc[got.index]).all()
    assert len(frames["pairs-filtered-all"]) == 11_495
    assert len(frames["pairs-filtered-low-variance-high-random"]) == 12_523


def test_private_key_changes_pseudonyms_not_content(mirror, cache_dir, frames, monkeypatch):
    key = "a private key used only by this test"
    other = frame(load("crowd-sts", "annotators", mirror=mirror, cache_dir=cache_dir,
                       pseudonym_key=key))
    assert not set(other["worker_id"]) & set(frames["annotators"]["worker_id"])
    for column in ("n_annotations", "flagged_any", "label_class"):
        assert sorted(other[column]) == sorted(frames["annotators"][column])
    b = builder("crowd-sts", "annotators", cache_dir=cache_dir, pseudonym_key=key)
    assert key not in b.cache_dir and b.config.key_fingerprint in b.cache_dir
    monkeypatch.setenv("SEMREL_CROWD_STS_KEY", key)
    assert builder("crowd-sts", "annotators", cache_dir=cache_dir).cache_dir == b.cache_dir
    assert isinstance(b, CrowdSts)


def test_filter_study_reproduces_the_paper_direction(frames):
    measures = pair_measures(frames["pairs"], minilm=False)
    flagged = flagged_sets(frames["annotators"], FILTERED["all"])
    study = filter_study(frames["annotations"], measures, flagged)
    assert study.r.shape == (32, 7) and study.n_pairs["baseline"] == 13_225
    assert (study.r.loc["baseline"].drop("bleu") - 0.58).abs().max() < 0.1  # paper: 0.53-0.61
    assert (study.change.loc["[1]"] < 0).all()            # slow annotators: paper −3.5 to −4.3 %
    assert study.change.loc["[2]"].between(5, 9).all()    # low variance: paper +7.2 to +7.6 %
    assert study.change.loc["[3]"].between(3, 5).all()    # high random: paper +3.8 to +4.1 %
    assert (study.change.loc["[2, 3]"] > study.change.loc["[2]"]).all()
    assert [PAPER_NUMBER[n] for n in FILTERED["low-variance-high-random"]] == [2, 3]


def test_script_and_card_run_end_to_end(mirror, cache_dir, tmp_path, capsys, raw_ids):
    reproduce_crowd_sts.main(["--mirror", str(mirror), "--cache-dir", str(cache_dir),
                              "--no-minilm"])
    out = capsys.readouterr().out
    assert "Table 1." in out and "Table 2." in out and "Table 3." in out and "Table 4." in out
    assert "[1, 2, 3, 4, 5]" in out and "ROUGE-L" in out
    assert_no_raw_id(out, raw_ids)
    result = build_dataset("crowd-sts", tmp_path / "hub", mirror=mirror, cache_dir=cache_dir)
    readme = (result.folder / "README.md").read_text()
    assert "Pseudonymisation" in readme and "**public**" in readme and "Not redistributable" in readme
    assert "Table 1." in readme and "@article{solomon2021rethinking" in readme
    for png in ("label_distribution", "annotator_seconds", "annotator_label_std"):
        assert (result.folder / "images" / f"{png}.png").stat().st_size > 5_000
    assert_no_raw_id(readme, raw_ids)
    for parquet in result.folder.rglob("*.parquet"):
        table = pq.read_table(parquet)
        for name in table.column_names:
            if table.schema.field(name).type == "string":
                assert not set(table.column(name).to_pylist()) & raw_ids, (parquet, name)
    hub = datasets.load_dataset(str(result.folder), "pairs-filtered-all", cache_dir=str(tmp_path / "c"))
    ref = load("crowd-sts", "pairs-filtered-all", mirror=mirror, cache_dir=cache_dir)
    assert hub["test"].to_list() == ref["test"].to_list()
