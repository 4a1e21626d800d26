"""Held-out prediction files in the repository (semrel.publishing.prediction_files): every file
results.json lists is there, unchanged, and predicts exactly its split's ids; the checker refuses
a bad file in one line naming file, row and rule, in each format, without reading a label."""

from __future__ import annotations

import hashlib
import json

import pytest

from project import HAS_MIRROR, MIRROR, NEEDS_MIRROR
from semrel.metrics.errors import DataValidationError, ParameterError
from semrel.publishing.prediction_files import KEY, RESULTS, Prediction, check, check_entries, publish, publish_or_exit

ENG = ("semrel-2024", "eng", "test")  # the fixture mirror's 10 ids ENG-test-0000 ... 0009, labels held back
CSTS = ("c-sts", "reannotated-dev", "validation")  # 6 rows: keys "0" ... "5"
HEADER = "PairID,Pred_Score\n"


def eng_rows(n: int = 10) -> str:
    return "".join(f"ENG-test-{i:04d},0.{i}\n" for i in range(n))


def test_every_prediction_file_results_json_lists_matches_its_split(cache_dir):
    """benchmarks/results.json's prediction files: there, sha256 and rows as recorded, the ids of
    their splits (none listed is a pass; the real mirror gives the splits)."""
    entries = json.loads(RESULTS.read_text(encoding="utf-8")).get(KEY, {})
    if entries and not HAS_MIRROR:
        pytest.skip(NEEDS_MIRROR)
    assert check_entries(RESULTS, mirror=MIRROR, cache_dir=cache_dir) == len(entries)


@pytest.mark.parametrize("name, text, split, message", [
    ("eng.csv", HEADER + eng_rows(9), ENG,
     "every PairID of semrel-2024/eng/test must be predicted: 1 missing (first ENG-test-0009, row 10 of 10)"),
    ("eng.csv", HEADER + eng_rows() + "ENG-test-9999,0.5\n", ENG,
     "row 11: PairID not in semrel-2024/eng/test (ENG-test-9999)"),
    ("eng.csv", HEADER + eng_rows() + "ENG-test-0003,0.5\n", ENG,
     "row 11: repeated PairID (first at row 4) (ENG-test-0003)"),
    ("eng.csv", "PairID,Score\n" + eng_rows(), ENG, "header must be PairID,Pred_Score (got PairID,Score)"),
    ("eng.csv", HEADER + eng_rows(9) + "ENG-test-0009,inf\n", ENG,
     "row 10: Pred_Score must be a finite number (ENG-test-0009: 'inf')"),
    ("eng.csv", "", ENG, "empty file (no header)"),
    ("eng.csv", HEADER, ENG, "no predictions (a header only)"),
    ("v.json", json.dumps({str(i): 0.1 for i in range(5)}), CSTS,
     "every key of c-sts/reannotated-dev/validation must be predicted: 1 missing (first 5, row 6 of 6)"),
    ("v.json", json.dumps({str(i): 0.1 for i in range(7)}), CSTS,
     "row 7: key not in c-sts/reannotated-dev/validation (6)"),
    ("v.json", '{"0": 1, "1": 2, "2": 3, "3": 4, "4": 5, "5": 1, "0": 2}', CSTS,
     "row 7: key repeated (first at row 1) (0)"),
    ("v.json", "[1, 2, 3, 4, 5, 1]", CSTS, 'must hold one JSON object {"0": score, ...} (got a JSON list)'),
    ("v.json", '{"0": 1, "1": NaN}', CSTS, "row 2: score must be a finite number (1: nan)"),
    ("v.json", '{"0": 1, "1": "2"}', CSTS, "row 2: score is not a number (1: '2')"),
    ("v.json", '{"0": 1, "1": true}', CSTS, "row 2: score is not a number (1: True)"),
    ("v.json", "", CSTS, 'empty file (no JSON object {"0": score, ...})'),
    ("v.json", "{}", CSTS, "no predictions (an empty object)"),
    ("v.json", '{"0": 1,', CSTS, "not JSON (line 1 column 9: Expecting property name enclosed in double quotes)"),
])
def test_a_bad_file_is_refused_in_one_line(name, text, split, message, tmp_path, fixture_mirror, cache_dir):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataValidationError) as refused:
        check(path, *split, mirror=fixture_mirror, cache_dir=cache_dir)
    assert str(refused.value) == f"{path}: {message}"


@pytest.mark.parametrize("name, split, message", [
    ("v.csv", CSTS, "path='{path}': is a PairID,Pred_Score file, but c-sts/reannotated-dev/validation has no "
                    'pair_id column: its file is the JSON {{"0": score, ...}} by row'),
    ("p.tsv", ENG, "path='{path}': must end in .csv or .json (a file of PairID,Pred_Score (SemEval-2024 Task 1) or "
                   'C-STS {{"row": score}})'),
    ("eng.csv", ("semrel-2024", "eng", "dev"), "split='dev': must be a split of semrel-2024/eng: train, validation, "
                                               "test"),
])
def test_a_file_of_another_format_or_split_is_refused(name, split, message, tmp_path, fixture_mirror, cache_dir):
    path = tmp_path / name
    path.write_text(HEADER + eng_rows(), encoding="utf-8")
    with pytest.raises(ParameterError) as refused:
        check(path, *split, mirror=fixture_mirror, cache_dir=cache_dir)
    assert str(refused.value) == message.format(path=path)


def test_each_format_passes_with_every_id_once(tmp_path, fixture_mirror, cache_dir):
    eng, csts, czech = tmp_path / "pred_eng.csv", tmp_path / "validation.json", tmp_path / "czech.csv"
    eng.write_text(HEADER + "".join(reversed(eng_rows().splitlines(keepends=True))), encoding="utf-8")  # any order
    csts.write_text(json.dumps({str(i): i for i in reversed(range(6))}), encoding="utf-8")
    czech.write_text(HEADER + "".join(f"test-{i:04d},{i}\n" for i in range(1, 25)), encoding="utf-8")
    assert check(eng, *ENG, mirror=fixture_mirror, cache_dir=cache_dir) == 10
    assert check(csts, *CSTS, mirror=fixture_mirror, cache_dir=cache_dir) == 6
    assert check(czech, "czech-news-sts", "free", "test", mirror=fixture_mirror, cache_dir=cache_dir) == 24


@pytest.fixture
def published(tmp_path, fixture_mirror, cache_dir):
    """A benchmarks folder holding one published file of the fixture mirror's eng test."""
    source = tmp_path / "eng_test.csv"
    source.write_text(HEADER + eng_rows(), encoding="utf-8")
    into = tmp_path / "benchmarks"
    publish([Prediction(source, *ENG, "english-recipe-final-2-member", "labels held back", "pred_eng.csv")],
            command="python scripts/train_semrel_2024_recipe.py --final --publish", machine="2-core CPU",
            into=into, mirror=fixture_mirror, cache_dir=cache_dir)
    return into


def test_publish_copies_the_file_and_records_it(published, tmp_path):
    name = "predictions/semrel-2024/english-recipe-final-2-member/pred_eng.csv"
    assert (published / name).read_bytes() == (tmp_path / "eng_test.csv").read_bytes()
    assert json.loads((published / "results.json").read_text()) == {KEY: {name: {
        "sha256": hashlib.sha256((tmp_path / "eng_test.csv").read_bytes()).hexdigest(), "rows": 10,
        "dataset": "semrel-2024", "config": "eng", "split": "test", "format": "PairID,Pred_Score (SemEval-2024 Task 1)",
        "command": "python scripts/train_semrel_2024_recipe.py --final --publish", "machine": "2-core CPU",
        "figure": "labels held back"}}}


def test_a_bad_file_is_not_published(tmp_path, fixture_mirror, cache_dir):
    """Checked before anything is copied: nothing is written."""
    source = tmp_path / "eng_test.csv"
    source.write_text(HEADER + eng_rows(9), encoding="utf-8")
    with pytest.raises(DataValidationError, match="1 missing"):
        publish([Prediction(source, *ENG, "r", "labels held back")], command="c", machine="m",
                into=tmp_path / "benchmarks", mirror=fixture_mirror, cache_dir=cache_dir)
    assert not (tmp_path / "benchmarks").exists()
    with pytest.raises(ValueError, match="^no prediction file to publish$"):
        publish([], command="c", machine="m", into=tmp_path)
    with pytest.raises(ParameterError, match="recipe='Final Two': must be a short slug"):
        publish([Prediction(source, *ENG, "Final Two", "")], command="c", machine="m", into=tmp_path)


@pytest.mark.parametrize("text, message", [
    (None, "--publish: {source}: no such file"),
    (HEADER + eng_rows(10) + "ENG-test-0001,2\n", "--publish: {source}: row 11: repeated PairID (first at row 2) "
                                                  "(ENG-test-0001)"),
])
def test_a_script_that_cannot_publish_ends_in_one_line(text, message, tmp_path):
    """A script's --publish: the file's failure in one line, nothing copied (checked before the split loads)."""
    source = tmp_path / "eng_test.csv"
    if text is not None:
        source.write_text(text, encoding="utf-8")
    with pytest.raises(SystemExit) as ended:
        publish_or_exit([Prediction(source, *ENG, "r", "")], command="c", machine="m", into=tmp_path / "benchmarks")
    assert str(ended.value) == message.format(source=source)
    assert not (tmp_path / "benchmarks").exists()


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize("change, message", [
    (lambda e, f: f.write_text(HEADER + eng_rows(9)),
     "{results}: prediction_files {name}: sha256 " + _sha(HEADER + eng_rows(9)) + ", but the entry says {sha}"),
    (lambda e, f: f.unlink(), "{results}: prediction_files {name}: no such file"),
    (lambda e, f: e.update(rows=11), "{results}: prediction_files {name}: 10 rows, but the entry says 11"),
    (lambda e, f: e.pop("machine") and e.pop("figure"), "{results}: prediction_files {name}: the entry lacks machine, "
                                                        "figure"),
    (lambda e, f: e.update(format='C-STS {"row": score}'), "{results}: prediction_files {name}: a PairID,Pred_Score "
                                                            "(SemEval-2024 Task 1) file, but the entry says C-STS "
                                                            '{{"row": score}}'),
    (lambda e, f: (f.write_text(HEADER + eng_rows(9) + "ENG-test-0042,1\n"),
                   e.update(sha256=_sha(HEADER + eng_rows(9) + "ENG-test-0042,1\n"))),
     "{file}: row 10: PairID not in semrel-2024/eng/test (ENG-test-0042)"),
])
def test_a_wrong_entry_fails_loudly(change, message, published, fixture_mirror, cache_dir):
    results = published / "results.json"
    assert check_entries(results, mirror=fixture_mirror, cache_dir=cache_dir) == 1
    stored = json.loads(results.read_text())
    [(name, entry)] = stored[KEY].items()
    sha, file = entry["sha256"], published / name
    change(entry, file)
    results.write_text(json.dumps(stored))
    with pytest.raises(ValueError) as failed:
        check_entries(results, mirror=fixture_mirror, cache_dir=cache_dir)
    assert str(failed.value) == message.format(results=results, name=name, sha=sha, file=file)
