"""c-sts ``reannotated-original``: the re-annotation joined with the user's original (CSVs or the
encrypted release) on (sentence1, sentence2, condition), both labels and their agreement, keys held
twice left null, and the card and report that measure one against the other."""

from __future__ import annotations

import pytest
from test_c_sts import PASSWORD, ROWS, encrypt_with_openssl, write_csvs
from test_c_sts_reannotated import TRAIN_HEADER, TRAIN_ROWS, reannotation_zip

from project import fixture_copy
from semrel.dataset_scripts import load


def joined_fixture(data_dir, fixture_mirror, cache, **kwargs):
    with pytest.warns(UserWarning) as notes:
        ds = load("c-sts", "reannotated-original", mirror=fixture_mirror, data_dir=data_dir,
                  cache_dir=cache, **kwargs)
    return ds, sorted(str(n.message) for n in notes)


def test_join_with_the_original_gives_both_labels_and_their_agreement(fixture_mirror, tmp_path):
    from semrel.dataset_scripts.c_sts.reannotated import label_agreement

    ds, notes = joined_fixture(fixture_mirror / "c-sts" / "user", fixture_mirror, tmp_path / "cache")
    train = ds["train"]
    assert train["original_score"] == [1.0, 5.0, 2.0, None, 2.0, 4.0, 5.0, 3.0, 2.0, 4.0, None, None]
    assert train["score"][2:4] == [3.0, 3.0]  # re-annotated 3.0 where the original says 2.0
    assert train["condition"][3] == "the weather"  # rewritten (the original's is empty): no match
    assert notes == [
        "c-sts/reannotated-original/train: original_score is null on 3 row(s) without an original "
        "row of the same (sentence1, sentence2, condition) and on 0 row(s) whose key is held twice; 9 matched",
        "c-sts/reannotated-original/validation: original_score is null on 6 row(s) without an original "
        "row of the same (sentence1, sentence2, condition) and on 0 row(s) whose key is held twice; 2 matched"]
    found = label_agreement(train)
    assert (found.n, found.without_original, found.invalid) == (9, 3, 0)
    assert found.spearman.value == pytest.approx(0.97395, abs=1e-5)
    assert found.spearman.interval.method == "bootstrap-bca" and found.spearman.interval.low < found.spearman.value
    with pytest.raises(ValueError, match="2 items"):  # two matched validation rows: no interval
        label_agreement(ds["validation"])
    encrypted = encrypt_with_openssl(fixture_mirror / "c-sts" / "user", tmp_path / "enc")
    again, _ = joined_fixture(encrypted, fixture_mirror, tmp_path / "cache", password=PASSWORD)
    assert {s: d.to_list() for s, d in again.items()} == {s: d.to_list() for s, d in ds.items()}


def test_a_key_held_twice_is_ambiguous_never_guessed(tmp_path, monkeypatch):
    train = TRAIN_HEADER + TRAIN_ROWS.replace("type of animal", "number of animals")  # as 53 real pairs
    mirror = fixture_copy(tmp_path / "mirror", "c-sts", monkeypatch,
                          {"dataset.zip": reannotation_zip(train=train)})
    user = write_csvs(tmp_path / "user", {**ROWS, "train": "A dog runs.,A cat sleeps.,number of animals,2.0\n"
                                                            "A dog runs.,A cat sleeps.,the colour,3.0\n"})
    with pytest.warns(UserWarning) as notes:
        ds = load("c-sts", "reannotated-original", mirror=mirror, data_dir=user, cache_dir=tmp_path / "cache")
    assert ds["train"]["original_score"] == [None, None]
    assert str(notes[0].message).endswith("train: original_score is null on 0 row(s) without an original row "
                                          "of the same (sentence1, sentence2, condition) and on 2 row(s) whose "
                                          "key is held twice; 0 matched")


@pytest.mark.slow
def test_card_and_report_measure_the_original_against_the_reannotation(fixture_mirror, tmp_path):
    from semrel.publishing.export import build_dataset
    from semrel.publishing.report import dataset_section

    user = fixture_mirror / "c-sts" / "user"
    with pytest.warns(UserWarning, match="original_score is null"):
        result = build_dataset("c-sts", tmp_path / "hub", mirror=fixture_mirror, data_dir=user,
                               cache_dir=tmp_path / "cache")
    card = (result.folder / "README.md").read_text()
    assert "| train | 9 | 0.974 [0.785, 1.000] | 0.973 [0.875, 0.995] | 3 |" in card
    assert "| validation | – | not measured: 2 items" in card
    assert "| train | 6 | 1 | 0 | 0 | 0 |" in card  # 6 pairs, one with the same label under both conditions
    assert "| validation_invalid | 1 | 0 | 0 | 0 | 1 |" in card  # the skier pair: -1 on both
    with pytest.warns(UserWarning, match="original_score is null"):
        section = dataset_section("c-sts", result.folder, tmp_path / "images", mirror=fixture_mirror,
                                  data_dir=user, cache_dir=tmp_path / "cache")
    assert "0.974 [0.785, 1.000]" in section.html and "validation_invalid" in section.html
    assert section.summary == "6 config(s); card only (licence forbids redistribution)"
