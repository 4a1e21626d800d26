"""semrel-2024: counts (on the real mirrored files), quirks, the STR-2021 link, the held-back English
test (a fixture in a temporary mirror) and the export; bad input is in test_semrel_2024_bad_rows.py,
the raw BWS re-scoring in test_semrel_2024_bws.py."""

import csv
import hashlib
import io
import os
import warnings

import numpy as np
import pytest

from project import needs_mirror
from semrel.dataset_scripts import load
from semrel.dataset_scripts.errors import DataValidationError, SourceError
from semrel.dataset_scripts.semrel_2024 import FILES, LANGUAGES, TRACK_A, TRACK_C, ReleaseFile, plan, read_split
from semrel.dataset_scripts.semrel_2024 import builder as semrel_builder
from semrel.dataset_scripts.semrel_2024 import files as semrel_files
from semrel.dataset_scripts.semrel_2024.files import AFR_PILOT, read_file
from semrel.dataset_scripts.semrel_2024.str_link import link_str_2021
from semrel.dataset_scripts.str_2021 import read_pairs as read_str_2021

# pairs per language and upstream split, as published (measured on the release files)
COUNTS = {
    "afr": {"dev": 375, "test": 375},
    "amh": {"train": 992, "dev": 95, "test": 171},
    "arb": {"dev": 32, "test": 595},
    "arq": {"train": 1261, "dev": 97, "test": 583},
    "ary": {"train": 924, "dev": 71, "test": 426},
    "eng": {"train": 5500, "dev": 250, "test": 2600},
    "esp": {"train": 1562, "dev": 140, "test": 600},
    "hau": {"train": 1736, "dev": 212, "test": 603},
    "hin": {"dev": 288, "test": 968},
    "ind": {"dev": 144, "test": 360},
    "kin": {"train": 778, "dev": 102, "test": 222},
    "mar": {"train": 1200, "dev": 293, "test": 298},
    "pan": {"dev": 242, "test": 634},
    "tel": {"train": 1170, "dev": 130, "test": 297},
}
OURS = {"train": "train", "dev": "validation", "test": "test"}
HELD_BACK = FILES[("eng", "test")]


def _data_rows(path) -> int:
    with open(path, newline="", encoding="utf-8") as f:
        return sum(1 for _ in csv.reader(f)) - 1


@pytest.fixture(scope="module")
def release(upstream):
    """Every (language, split) read once from the upstream files."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {key: read_split(*key, mirror=upstream) for key in FILES}


@pytest.fixture(scope="module")
def built_eng(mirror, cache_dir):
    with pytest.warns(UserWarning, match=r"eng_test_with_labels.csv .*was not available.*"
                      r"built from Track A/eng/eng_test.csv: 2600 pairs with null scores"):
        return load("semrel-2024", "eng", mirror=mirror, cache_dir=cache_dir)


@pytest.fixture(scope="module")
def frames(mirror, cache_dir):
    """The splits of config ``all`` as pandas frames (fast column access)."""
    with pytest.warns(UserWarning, match="eng_test_with_labels.csv .*was not available"):
        built = load("semrel-2024", "all", mirror=mirror, cache_dir=cache_dir)
    assert built["train"].features["score"].dtype == "float32"
    return {split: ds.to_pandas() for split, ds in built.items()}


def test_counts_per_language_and_split_match_the_files(release, mirror):
    assert {lang: {s: len(release[(lang, s)].rows) for s in COUNTS[lang]} for lang in COUNTS} == COUNTS
    assert sorted(COUNTS) == sorted(LANGUAGES) and set(FILES) == {(lang, s) for lang in COUNTS for s in COUNTS[lang]}
    for key, read in release.items():  # every file read is counted independently by csv
        assert _data_rows(mirror / "semrel-2024" / read.file.path) == COUNTS[key[0]][key[1]], key


@pytest.mark.slow  # builds all 26,326 pairs (2.5 s); the per-file counts above are fast
def test_all_config_holds_every_language_and_split(frames):
    assert set(frames) == {"train", "validation", "test"}
    for split, df in frames.items():
        expected = {lang: n[s] for lang, n in COUNTS.items() for s in n if OURS[s] == split}
        assert df["language"].value_counts().to_dict() == expected
        assert df["pair_id"].is_unique
    assert sorted(set(frames["train"]["language"])) == sorted(TRACK_A)
    test = frames["test"]
    assert test.loc[test["language"] == "esp", "score"].isna().all()
    assert test["score"].isna().sum() == 600 + 2600  # esp, and eng without its labelled file
    train = frames["train"]
    assert train.loc[train["language"] != "eng", "str_2021_pair_id"].isna().all()
    assert train.loc[train["language"] == "eng", "str_2021_pair_id"].notna().all()


def test_pair_ids_are_upstream_and_name_language_and_split(release):
    for (lang, split), read in release.items():
        ids = [r["pair_id"] for r in read.rows]
        assert len(set(ids)) == len(ids)
        assert all(split in i.lower() and lang in i.lower() for i in ids), (lang, split, ids[:2])


def test_pan_columns_in_another_order(release, upstream):
    path = upstream / "semrel-2024" / release[("pan", "test")].file.path
    with open(path, newline="", encoding="utf-8") as f:
        header, first = next(csv.reader(f)), next(csv.DictReader(open(path, newline="", encoding="utf-8")))
    assert header == ["Text", "Score", "PairID"]
    row = release[("pan", "test")].rows[0]
    assert row["pair_id"] == first["PairID"] == "pan_test_00001"
    assert row["score"] == float(first["Score"])
    assert row["sentence1"] + "\n" + row["sentence2"] == first["Text"]


@needs_mirror
def test_spanish_test_scores_are_null_and_dev_scores_are_not(release):
    test = release[("esp", "test")].rows
    assert len(test) == 600 and {r["score"] for r in test} == {None}
    assert None not in {r["score"] for r in release[("esp", "dev")].rows}
    assert release[("esp", "test")].file.path == "Track A/esp/esp_test.csv"


def test_score_headers_and_separators_as_measured(release):
    """afr dev has header `score` (lower case); afr's labelled test splits Text by a tab."""
    assert all(0.0 <= r["score"] <= 1.0 for key, read in release.items() if key != ("esp", "test")
               and key != ("eng", "test") for r in read.rows)
    afr = release[("afr", "test")].rows[0]
    assert "\t" not in afr["sentence1"] + afr["sentence2"] and "\n" not in afr["sentence1"]


def test_track_b_and_c_copies_are_the_same_bytes(mirror):
    """Each distinct file is read once: every Track B/C copy of a file the builder reads (same
    name) holds the same bytes. The only names whose copies differ are unlabelled dev files the
    builder never reads (esp_dev.csv: line endings)."""
    root = mirror / "semrel-2024"
    read = {f.path.rsplit("/", 1)[1]: f.sha256 for f in FILES.values()}
    read[AFR_PILOT.path.rsplit("/", 1)[1]] = AFR_PILOT.sha256
    copies = 0
    for track in ("Track A", "Track B", "Track C"):
        for path in sorted((root / track).glob("*/*.csv")):
            if path.name in read:
                assert hashlib.sha256(path.read_bytes()).hexdigest() == read[path.name], path
                copies += 1
    assert copies == 26 + 24 + 24  # the files read, counted in Track A, B and C
    esp = {t: hashlib.sha256((root / t / "esp" / "esp_dev.csv").read_bytes()).hexdigest()
           for t in ("Track A", "Track B", "Track C")}
    assert len(set(esp.values())) == 3 and "esp_dev.csv" not in read


def test_afr_pilot_repeats_the_first_20_dev_pairs(release, mirror):
    path = mirror / "semrel-2024" / AFR_PILOT.path
    pilot = read_file(str(path), path.read_bytes(), language="afr", split="dev")
    assert [r | {"row": 0} for r in pilot] == [r | {"row": 0} for r in release[("afr", "dev")].rows[:20]]


def test_cross_lingual_configs_train_on_every_other_track_a_language():
    for lang in TRACK_C:
        p = plan(f"cross-lingual-{lang}")
        assert p["train"] == [(t, "train") for t in TRACK_A if t != lang]
        assert p["validation"] == [(lang, "dev")] and p["test"] == [(lang, "test")]
    assert "train" not in plan("afr") and list(plan("eng")) == ["train", "validation", "test"]
    assert len(semrel_builder.SemRel2024.BUILDER_CONFIGS) == 1 + 14 + 12


# ---- English train is STR-2021 ----

def test_english_train_is_str_2021_one_to_one(built_eng, mirror):
    import pandas as pd

    from semrel.dataset_scripts.sources import fetch
    from semrel.dataset_scripts.str_2021 import SOURCE

    eng = built_eng["train"].to_pandas()
    assert len(eng) == 5500 and eng["str_2021_pair_id"].is_unique
    str_pairs = pd.DataFrame(read_str_2021(fetch(SOURCE, mirror=mirror))).set_index("pair_id")
    assert set(eng["str_2021_pair_id"]) == set(str_pairs.index)
    linked = str_pairs.loc[eng["str_2021_pair_id"]]
    diff = np.abs(eng["score"].to_numpy(float) - linked["score"].to_numpy(float))
    assert diff.max() <= 0.005 + 1e-6  # float32 scores; published to 2 decimals of STR's 3
    assert (eng["str_2021_source"].to_numpy() == linked["source"].to_numpy()).all()
    assert (eng["sentence1"].to_numpy() == linked["sentence1"].to_numpy()).all()


@pytest.mark.parametrize("change, rule", [
    (lambda rows, s: rows[3].update(sentence1=rows[3]["sentence1"] + " x"), "no STR-2021 pair"),
    (lambda rows, s: rows[3].update(score=rows[3]["score"] + 0.02 if rows[3]["score"] < 0.5
                                    else rows[3]["score"] - 0.02), "more than the rounding"),
    (lambda rows, s: rows.__setitem__(4, dict(rows[3], row=rows[4]["row"])), "two English train pairs"),
])
def test_str_link_refuses_what_is_not_one_to_one(release, upstream, change, rule):
    from semrel.dataset_scripts.sources import fetch
    from semrel.dataset_scripts.str_2021 import SOURCE

    rows = [dict(r) for r in release[("eng", "train")].rows]
    str_pairs = read_str_2021(fetch(SOURCE, mirror=upstream))
    change(rows, str_pairs)
    with pytest.raises(DataValidationError, match=rule) as err:
        link_str_2021(rows, str_pairs, "eng_train.csv")
    assert err.value.row in (4, 5) and "eng_train.csv" in str(err.value)


# ---- the held-back labelled English test ----

FIXTURE_ROWS = [("ENG-test-0000", "A cat sat on the mat.\nThe cat was on the mat.", "0.81"),
                ("ENG-test-0001", "It rained all day.\nStocks fell in Tokyo.", "0.06"),
                ("ENG-test-0002", "He plays the violin.\nShe studies music.", "0.42")]


def _fixture_mirror(tmp_path) -> tuple[str, str]:
    """A temporary mirror holding only a labelled English test fixture of the upstream format;
    returns (its path, its sha256)."""
    path = tmp_path / "mirror" / "semrel-2024" / HELD_BACK.path
    path.parent.mkdir(parents=True)
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([("PairID", "Text", "Score"), *FIXTURE_ROWS])
    path.write_bytes(out.getvalue().encode())
    return str(tmp_path / "mirror"), hashlib.sha256(path.read_bytes()).hexdigest()


def test_default_mirror_builds_english_test_without_labels_and_says_so(built_eng, mirror, cache_dir):
    eng = built_eng  # its fixture checks the warning of the build; a cached load warns again:
    with pytest.warns(UserWarning, match="eng_test_with_labels.csv .*was not available"):
        load("semrel-2024", "eng", mirror=mirror, cache_dir=cache_dir)
    assert len(eng["test"]) == 2600 and set(eng["test"]["score"]) == {None}
    assert eng["test"][0]["pair_id"] == "ENG-test-0000"


def test_labelled_english_test_is_read_when_present(tmp_path, mirror, monkeypatch):
    """The documented override: a fixture's checksum replaces the held-back entry of FILES."""
    fixture, sha = _fixture_mirror(tmp_path)
    monkeypatch.setitem(semrel_files.FILES, ("eng", "test"), ReleaseFile(HELD_BACK.path, sha))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "not available" note
        eng = load("semrel-2024", "eng", mirror=f"{fixture}{os.pathsep}{mirror}",
                   cache_dir=tmp_path / "cache")
    assert eng["test"]["pair_id"] == [r[0] for r in FIXTURE_ROWS]
    np.testing.assert_allclose(eng["test"]["score"], [float(r[2]) for r in FIXTURE_ROWS], rtol=1e-6)
    assert eng["test"][1]["sentence2"] == "Stocks fell in Tokyo."
    assert len(eng["train"]) == 5500  # the rest from the real mirror


def test_a_held_back_file_with_another_checksum_is_an_error_not_a_fallback(tmp_path, upstream):
    fixture, _ = _fixture_mirror(tmp_path)  # the real checksum stays in FILES
    with pytest.raises(SourceError, match="sha256 mismatch") as err:
        read_split("eng", "test", mirror=f"{fixture}{os.pathsep}{upstream}")
    assert HELD_BACK.sha256 in str(err.value)


def test_held_back_file_is_part_of_the_cache_key(tmp_path, upstream):
    fixture, sha = _fixture_mirror(tmp_path)
    from semrel.dataset_scripts import builder

    without = builder("semrel-2024", "eng", mirror=upstream).hash
    with_file = builder("semrel-2024", "eng", mirror=f"{fixture}{os.pathsep}{upstream}").hash
    assert without != with_file
    assert builder("semrel-2024", "afr", mirror=upstream).hash == builder(
        "semrel-2024", "afr", mirror=f"{fixture}{os.pathsep}{upstream}").hash


# ---- export: Parquet + YAML that stock load_dataset reads, a card that passes check_card ----

@pytest.mark.slow
def test_export_loads_every_config_with_stock_load_dataset(mirror, cache_dir, tmp_path):
    import datasets

    from semrel.dataset_scripts.registry import get_spec
    from semrel.publishing.export import build_dataset
    from semrel.publishing.hub_vocabulary import check_card

    with pytest.warns(UserWarning, match="was not available"):
        result = build_dataset("semrel-2024", tmp_path / "hub", mirror=mirror, cache_dir=cache_dir)
    assert sorted(result.rows) == sorted(get_spec("semrel-2024").configs)
    card = (result.folder / "README.md").read_text(encoding="utf-8")
    assert check_card(result.folder / "README.md") == []
    assert "labelled English test file was not available" in card and "| arq | Algerian Arabic | ABC |" in card
    assert "do not train on one and test on the other" in card
    for config, splits in result.rows.items():
        hub = datasets.load_dataset(str(result.folder), config, cache_dir=str(tmp_path / "hf"))
        assert {s: len(ds) for s, ds in hub.items()} == splits, config
        ref = load("semrel-2024", config, mirror=mirror, cache_dir=cache_dir)
        assert hub["test"].features == ref["test"].features
        assert hub["test"]["pair_id"] == ref["test"]["pair_id"], config
    eng = datasets.load_dataset(str(result.folder), "eng", cache_dir=str(tmp_path / "hf"))
    assert eng["train"][0]["str_2021_pair_id"] and eng["test"][0]["score"] is None


def test_unlabelled_copies_hold_the_same_pairs_as_the_labelled_files_read(release, upstream):
    """Nothing is lost by reading the labelled file: every `<lang>_<split>.csv` beside it holds
    the same PairIDs and sentences (afr's files swap newline and tab between the two)."""
    root = upstream / "semrel-2024"
    checked = 0
    for (lang, split), read in release.items():
        if split == "train" or read.file.path.endswith(f"{lang}_{split}.csv"):
            continue  # train has no unlabelled copy; esp/eng test are the unlabelled file
        folder = (root / read.file.path).parent
        plain = folder / f"{lang}_{split}.csv"
        separator = "\t" if (lang, split) == ("afr", "dev") else "\n"
        rows = read_file(str(plain), plain.read_bytes(), language=lang, split=split, separator=separator)
        assert [(r["pair_id"], r["sentence1"], r["sentence2"]) for r in rows] == [
            (r["pair_id"], r["sentence1"], r["sentence2"]) for r in read.rows], plain
        checked += 1
    assert checked == 14 + 12  # dev of every language, test of the 12 with published labels


def test_a_configs_languages_are_those_of_its_rows(upstream, cache_dir):
    """What a model trained on a config (its card) and a benchmark cell say it covers."""
    from semrel.dataset_scripts.pairs import load_pairs

    for config in ("eng", "cross-lingual-eng", "all"):
        data = load_pairs("semrel-2024", config, mirror=upstream, cache_dir=cache_dir)
        codes = set().union(*(split.unique("language") for split in data.splits.values()))
        assert data.language == tuple(tag for code, (_, tag) in LANGUAGES.items() if code in codes)
    assert data.language == tuple(tag for _, tag in LANGUAGES.values())  # all: the 14
    eng = load_pairs("semrel-2024", "eng", mirror=upstream, cache_dir=cache_dir)
    assert eng.language == ("en",)


def test_config_languages_must_name_a_config_and_some_of_the_datasets_languages():
    from semrel.dataset_scripts.registry import REGISTRY
    from semrel.dataset_scripts.spec import DatasetSpec, Licence
    from semrel.dataset_scripts.str_2021.builder import Str2021

    assert REGISTRY["semrel-2024"].languages_of("hau") == ("ha",)
    assert REGISTRY["str-2021"].languages_of("default") == ("en",)
    for config, tags in (("nope", ("en",)), ("default", ("fr",)), ("default", ())):
        with pytest.raises(ValueError, match=f"config_languages of '{config}'"):
            DatasetSpec(Str2021, pretty_name="x", licence=Licence("cc0-1.0"), languages=("en",),
                        card_body="m:f", config_languages=((config, tags),))
