"""czech-news-sts: the free test (its real figures need the mirror), user-supplied fixtures, the sig
t-test, bad input."""

from __future__ import annotations

from collections import Counter
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from project import REPO, needs_mirror
from semrel.dataset_scripts import load
from semrel.dataset_scripts.czech_news_sts import USER_FILES
from semrel.dataset_scripts.czech_news_sts.formats import read_dep, read_test, read_train
from semrel.dataset_scripts.czech_news_sts.significance import context_shift_ttest
from semrel.dataset_scripts.errors import DataValidationError

FIXTURES = REPO / "tests" / "fixtures" / "czech-news-sts"
# dep-test fixture: free row -> its context-dependent annotations (rows 1-3 shift strongly;
# row 6 has one annotation, too few for the t-test). Means are written rounded to 2 decimals.
DEP_ROWS = {1: [6] * 9, 2: [6, 6, 6, 5, 6, 6, 6], 3: [5, 6, 6, 6, 5, 6, 6, 6, 6],
            4: [3, 2, 2, 4, 3, 1, 3, 2, 2], 5: [3, 4, 3, 3, 4, 4, 3, 4], 6: [1]}


@pytest.fixture(scope="session")
def free(upstream, cache_dir):
    return load("czech-news-sts", "free", mirror=upstream, cache_dir=cache_dir)["test"]


@pytest.fixture(scope="session")
def user_dir(upstream, tmp_path_factory) -> Path:
    """The committed train fixtures plus a dep-test.tsv built from the free test rows."""
    out = tmp_path_factory.mktemp("czech_user")
    for name in ("train-raw.tsv", "train-n2.tsv", "train-n1.tsv"):
        (out / name).write_bytes((FIXTURES / "user" / name).read_bytes())
    free_rows = (upstream / "czech-news-sts" / "free-test.tsv").read_bytes().split(b"\r\n")
    lines = []
    for row, dep in DEP_ROWS.items():
        s1, s2, _, _, r1 = free_rows[row - 1].decode("utf-8").split("\t")
        context1 = f"Úvodní věta shrnutí. <sent>{s1}</sent> Závěr."
        context2 = f"<sent>{s2}</sent> Další věta \"zprávy\"."
        lines.append(f"{context1}\t{context2}\t{np.mean(dep):.2f}\t{','.join(map(str, dep))}\t{r1}")
    (out / "dep-test.tsv").write_bytes(("\r\n".join(lines) + "\r\n").encode("utf-8"))
    return out


def _build(config, mirror, cache_dir, user_dir):
    return load("czech-news-sts", config, mirror=mirror, cache_dir=cache_dir, data_dir=user_dir)


# --- the real free test ------------------------------------------------------------------------

@needs_mirror
def test_free_has_1200_pairs_with_9_annotations_each(free):
    assert free.num_rows == 1200
    annotations = np.array(free["annotations"])
    assert annotations.shape == (1200, 9)
    assert annotations.min() == 0 and annotations.max() == 6
    np.testing.assert_allclose(free["score"], annotations.mean(axis=1), atol=1e-6)
    assert free.features["score"].dtype == "float32"


@needs_mirror
def test_free_pair_ids_are_row_based_and_unique(free):
    ids = list(free["pair_id"])
    assert ids[:3] == ["test-0001", "test-0002", "test-0003"] and ids[-1] == "test-1200"
    assert len(set(ids)) == 1200


@needs_mirror
def test_free_keeps_the_minus_4_r1_score_visible(free):
    invalid = [r for r in free if not r["r1_score_valid"]]
    assert [(r["pair_id"], r["r1_score"], r["r1_score_raw"]) for r in invalid] == [("test-0004", None, -4)]
    valid = [r["r1_score"] for r in free if r["r1_score_valid"]]
    assert len(valid) == 1199 and set(valid) <= set(range(7))
    assert all(r["r1_score"] == r["r1_score_raw"] for r in free if r["r1_score_valid"])


@needs_mirror
def test_free_parses_quotes_and_crlf(free):
    texts = list(free["sentence1"]) + list(free["sentence2"])
    assert sum('"' in t for t in texts) > 0
    assert not any(("\r" in t) or ("\t" in t) or ("\n" in t) for t in texts)
    assert sum(a == b for a, b in zip(free["sentence1"], free["sentence2"], strict=True)) == 127
    assert set(Counter(free["sentence2"]).values()) == {3}


# --- user-supplied files -----------------------------------------------------------------------

@pytest.mark.parametrize("config", sorted(USER_FILES))
def test_missing_user_file_names_file_and_place(config, upstream, cache_dir, tmp_path):
    with pytest.raises(FileNotFoundError, match=USER_FILES[config]) as err:
        load("czech-news-sts", config, mirror=upstream, cache_dir=cache_dir, data_dir=tmp_path)
    assert str(tmp_path / USER_FILES[config]) in str(err.value)
    with pytest.raises(FileNotFoundError, match=f"<data_dir>/{USER_FILES[config]}"):
        load("czech-news-sts", config, mirror=upstream, cache_dir=cache_dir)


def test_sig_without_dep_file_names_dep_file(upstream, cache_dir, tmp_path):
    with pytest.raises(FileNotFoundError, match="dep-test.tsv"):
        load("czech-news-sts", "sig", mirror=upstream, cache_dir=cache_dir, data_dir=tmp_path)


@pytest.mark.parametrize("config, rows", [("train-raw", 6), ("train-n2", 5), ("train-n1", 3)])
def test_train_configs_from_fixtures(config, rows, upstream, cache_dir, user_dir):
    train = _build(config, upstream, cache_dir, user_dir)["train"]
    assert train.num_rows == rows
    assert train.column_names == ["pair_id", "sentence1", "sentence2", "score"]
    assert train[0]["pair_id"] == f"{config}-000001"
    assert all(0 <= s <= 6 for s in train["score"])
    if config == "train-raw":
        assert train[1]["sentence1"] == '"Nejde o žádnou krizi," řekl dnes novinářům premiér.'
        assert train[2]["sentence2"].endswith('mluvčí "ČHMÚ".') and train[2]["score"] == 0.0


@pytest.fixture(scope="session")
def dep(upstream, cache_dir, user_dir):
    return _build("dep", upstream, cache_dir, user_dir)["test"]


def test_dep_aligns_with_free_and_extracts_key_sentences(dep, free):
    assert list(dep["pair_id"]) == [f"test-{r:04d}" for r in DEP_ROWS]
    for row in dep:
        f = free[int(row["pair_id"][5:]) - 1]
        assert (row["sentence1"], row["sentence2"]) == (f["sentence1"], f["sentence2"])
        assert row["context1"] == f"Úvodní věta shrnutí. <sent>{f['sentence1']}</sent> Závěr."
        assert row["annotations"] == DEP_ROWS[int(row["pair_id"][5:])]
    assert dep[3]["r1_score"] is None and dep[3]["r1_score_raw"] == -4


@pytest.mark.filterwarnings("ignore:Precision loss:RuntimeWarning")  # scipy on constant samples
def test_sig_is_the_per_pair_t_test_at_095(upstream, tmp_path, user_dir, free):
    with pytest.warns(UserWarning, match=f"{free.num_rows - 5} of {free.num_rows} free pairs not tested"):
        sig = _build("sig", upstream, tmp_path, user_dir)["test"]  # own cache: warns when built
    expected = {}
    for row, dep_ann in DEP_ROWS.items():
        if len(dep_ann) >= 2:
            result = stats.ttest_ind(free[row - 1]["annotations"], dep_ann)
            if result.pvalue < 0.05:
                expected[f"test-{row:04d}"] = result
    assert sorted(sig["pair_id"]) == sorted(expected) == ["test-0001", "test-0002", "test-0003"]
    for row in sig:
        ref = expected[row["pair_id"]]
        assert row["p_value"] == pytest.approx(ref.pvalue, rel=1e-10)
        assert row["t_statistic"] == pytest.approx(ref.statistic, rel=1e-10)
        assert row["score"] == pytest.approx(np.mean(row["annotations"]))
        assert row["score_free"] == pytest.approx(np.mean(row["annotations_free"]))


@pytest.mark.filterwarnings("ignore:Precision loss:RuntimeWarning")  # scipy on constant samples
def test_shift_ttest_matches_scipy_and_handles_constant_samples():
    rng = np.random.default_rng(0)
    free = [rng.integers(0, 7, 9).tolist() for _ in range(50)]
    dep = [rng.integers(0, 7, int(rng.integers(2, 10))).tolist() for _ in range(50)]
    ours = context_shift_ttest(free, dep)
    ref = [stats.ttest_ind(a, b) for a, b in zip(free, dep, strict=True)]
    np.testing.assert_allclose(ours.pvalue, [r.pvalue for r in ref], rtol=1e-10)
    np.testing.assert_allclose(ours.statistic, [r.statistic for r in ref], rtol=1e-10)
    const = context_shift_ttest([[2, 2, 2], [0, 0]], [[2, 2], [6, 6, 6]])
    assert const.pvalue.tolist() == [1.0, 0.0] and const.statistic[1] == -np.inf
    with pytest.raises(ValueError, match="pair 0 has 1"):
        context_shift_ttest([[1]], [[1, 2]])


# --- bad input ---------------------------------------------------------------------------------

GOOD_TEST = "Věta jedna.\tVěta \"dvě\".\t2.0\t2,2,1,3,2,2,2,2,2\t3"
GOOD_TRAIN = "A.\tB.\t1"
GOOD_DEP = "<sent>A.</sent>\tB.\t2.0\t2,2\t3"
read_free = partial(read_test, n_annotations=9)


@pytest.mark.parametrize("reader, good, line, rule", [
    (read_free, GOOD_TEST, "Věta jedna.\tVěta dvě.\t2.0\t2,2,1,3,2,2,2,2,2", "wrong field count"),
    (read_free, GOOD_TEST, "Věta jedna.\tVěta dvě.\t2.0\t2,2,1,3,2,2,2,2,2\t3\tx", "wrong field count"),
    (read_free, GOOD_TEST, "Věta jedna.\tVěta dvě.\t2.0\t2,2,1.5,3,2,2,2,2,2\t3", "annotation must be an integer"),
    (read_free, GOOD_TEST, "Věta jedna.\tVěta dvě.\t2.0\t2,2,1,3,7,2,1,2,2\t3", "annotation out of range 0–6"),
    (read_free, GOOD_TEST, "Věta jedna.\tVěta dvě.\t2.0\t2,2,1,3,2,2,-1,2,5\t3", "annotation out of range 0–6"),
    (read_free, GOOD_TEST, "Věta jedna.\tVěta dvě.\t2.5\t2,2,1,3,2,2,2,2,2\t3", "mean disagrees with its annotations"),
    (read_free, GOOD_TEST, "Věta jedna.\tVěta dvě.\tnan\t2,2,1,3,2,2,2,2,2\t3", "mean score must be a number"),
    (read_free, GOOD_TEST, "Věta jedna.\tVěta dvě.\tdva\t2,2,1,3,2,2,2,2,2\t3", "mean score must be a number"),
    (read_free, GOOD_TEST, "Věta jedna.\tVěta dvě.\t2.0\t2,2,1,3,2,2,2,2\t3", "expected exactly 9 annotations"),
    (read_free, GOOD_TEST, "Věta jedna.\tVěta dvě.\t2.0\t2,2,1,3,2,2,2,2,2\t3.5", "R1 score must be an integer"),
    (read_free, GOOD_TEST, " \tVěta dvě.\t2.0\t2,2,1,3,2,2,2,2,2\t3", "empty sentence1"),
    (read_train, GOOD_TRAIN, "Věta.\tVěta dvě.\t7", "R1 score out of range 0–6"),
    (read_train, GOOD_TRAIN, "Věta.\tVěta dvě.\t-4", "R1 score out of range 0–6"),
    (read_train, GOOD_TRAIN, "Věta.\tVěta dvě.\t4.0", "R1 score must be an integer"),
    (read_train, GOOD_TRAIN, "Věta.\tVěta dvě.", "wrong field count"),
    (read_dep, GOOD_DEP, "Kontext věta.\tJiná věta.\t2.0\t2,2\t3", "no <sent>…</sent> key sentence"),
    (read_dep, GOOD_DEP, "<sent>A.</sent> <sent>B.</sent>\tJiná věta.\t2.0\t2,2\t3", "exactly one non-empty"),
    (read_dep, GOOD_DEP, "<sent>A.\tJiná věta.\t2.0\t2,2\t3", "exactly one non-empty"),
    (read_dep, GOOD_DEP, "<sent> </sent> x\tJiná věta.\t2.0\t2,2\t3", "exactly one non-empty"),
])
def test_bad_rows_name_file_row_and_rule_or_are_omitted_and_counted(reader, good, line, rule, tmp_path):
    path = tmp_path / "input.tsv"
    path.write_bytes(f"{good}\r\n{line}\r\n{good}\r\n".encode())
    with pytest.raises(DataValidationError, match=rule) as err:
        reader(path)
    assert (err.value.file, err.value.row) == (str(path), 2)
    assert f"{path}: row 2: " in str(err.value)
    rows, omitted = reader(path, on_invalid="omit")
    assert [r["row"] for r in rows] == [1, 3] and omitted == Counter({err.value.rule: 1})


def test_out_of_range_r1_in_test_is_kept_not_an_error(tmp_path):
    path = tmp_path / "free-test.tsv"
    path.write_text(GOOD_TEST[:-1] + "-4\n", encoding="utf-8")
    rows, omitted = read_test(path)
    assert rows[0]["r1_score_raw"] == -4 and not omitted


def test_on_invalid_omit_through_load_warns_with_counts_even_when_cached(upstream, cache_dir,
                                                                           tmp_path):
    (tmp_path / "train-raw.tsv").write_text("A.\tB.\t1\nA.\tB.\t9\nA.\tB.\tx\nC.\tD.\t6\n",
                                            encoding="utf-8")
    for _ in range(2):  # built, then answered from the cache: the counts are warned both times
        with pytest.warns(UserWarning, match=r"omitted 2 invalid rows \(R1 score must be an "
                                             r"integer \(ASCII digits\): 1, R1 score out of "
                                             r"range 0–6: 1\)"):
            train = load("czech-news-sts", "train-raw", mirror=upstream, cache_dir=cache_dir,
                         data_dir=tmp_path, on_invalid="omit")["train"]
        assert list(train["pair_id"]) == ["train-raw-000001", "train-raw-000004"]
    with pytest.raises(ValueError, match="on_invalid must be 'raise' or 'omit', got 'skip'"):
        load("czech-news-sts", "train-raw", data_dir=tmp_path, on_invalid="skip")
    with pytest.raises(DataValidationError, match="row 2: R1 score out of range"):
        load("czech-news-sts", "train-raw", mirror=upstream, cache_dir=tmp_path / "c2", data_dir=tmp_path)


def test_dep_row_without_free_counterpart(upstream, cache_dir, tmp_path):
    (tmp_path / "dep-test.tsv").write_text("x <sent>Neexistující věta.</sent>\tJiná.\t1.0\t1,1\t1\n",
                                           encoding="utf-8")
    with pytest.raises(DataValidationError, match="row 1: context-dependent pair has no context-free"):
        load("czech-news-sts", "dep", mirror=upstream, cache_dir=cache_dir, data_dir=tmp_path)


def test_invalid_utf8_names_the_row(tmp_path):
    path = tmp_path / "train-n1.tsv"
    path.write_bytes(b"A.\tB.\t1\r\n\xff\tB.\t1\r\n")
    with pytest.raises(DataValidationError, match="row 2: not valid UTF-8"):
        read_train(path)


# --- card and Hub export -----------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore:sig.*not tested:UserWarning")  # warned only if built here
def test_export_with_user_files_writes_card_plots_and_verifies(mirror, cache_dir, user_dir,
                                                               tmp_path_factory):
    from huggingface_hub import DatasetCard

    from semrel.publishing.export import build_dataset, verify_folder

    out = tmp_path_factory.mktemp("czech_hub")
    result = build_dataset("czech-news-sts", out, mirror=mirror, data_dir=user_dir,
                           cache_dir=cache_dir)
    assert result.rows == {"free": {"test": 1200}, "dep": {"test": 6}, "sig": {"test": 3},
                           "train-raw": {"train": 6}, "train-n2": {"train": 5},
                           "train-n1": {"train": 3}}
    card = DatasetCard.load(result.folder / "README.md")
    assert card.data.license == "unknown" and card.data.language == ["cs"]
    assert "do not republish" in card.text and "dep-test.tsv" in card.text
    assert "| MSE lower bound, t model (paper §6: ≈0.1731) | 0.158 |" in card.text
    for image in ("score_hist.png", "annotation_spread.png"):
        assert (result.folder / "images" / image).stat().st_size > 10_000
    assert verify_folder(result.folder, "czech-news-sts", mirror=mirror, data_dir=user_dir,
                         cache_dir=cache_dir) == []


def test_align_dep_matches_repeated_pairs_in_order():
    from semrel.dataset_scripts.czech_news_sts.builder import align_dep

    free = [{"pair_id": f"test-{i}", "sentence1": s1, "sentence2": "B."}
            for i, s1 in enumerate(["A.", "C.", "A.", "A."], start=1)]
    dep = [{"row": r, "sentence1": s1, "sentence2": " B. "} for r, s1 in enumerate(["A.", "A.  ", "C."], 1)]
    assert [d["pair_id"] for d in align_dep(free, dep, "dep-test.tsv")] == ["test-1", "test-3", "test-2"]
    extra = dep + [{"row": 4, "sentence1": "A.", "sentence2": "B."}, {"row": 5, "sentence1": "A.", "sentence2": "B."}]
    with pytest.raises(DataValidationError, match="dep-test.tsv: row 5: context-dependent pair occurs more often than"):
        align_dep(free, extra, "dep-test.tsv")
