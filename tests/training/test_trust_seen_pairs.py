"""Seen pairs never slip through (issue 48): a run's ``seen_pairs.json`` is honoured whatever
``--model-kind`` reads the folder; a run without it is refused every set holding pairs of its
data (compared by content); pair keys ignore case, Unicode compatibility forms, format
characters and white space, while files hashed with the earlier key keep matching in it; a
checkpoint is never chosen on pairs the run trains on or is scored on, whatever the sets are
called."""

from __future__ import annotations

import json
import shutil

import datasets
import pytest

from semrel.cli import main
from semrel.dataset_scripts.benchmark_sets import BenchmarkSet, select_sets
from semrel.dataset_scripts.pairs import load_pairs
from semrel.metrics.errors import ParameterError
from semrel.trainers.benchmark import load_sets, run_benchmark
from semrel.trainers.benchmark.run import LoadedSet
from semrel.trainers.run_folder import pair_hashes, seen_pairs, seen_part, write_seen_pairs
from semrel.trainers.run_folder.seen import PAIR_HASH, PAIR_HASH_V1
from semrel.trainers.scoring import load_scorer
from semrel.trainers.selection import check_selection, dev_split, load_dev, selection_arguments
from trainer_fixtures import saved_runs, small_args, toy_conditional_pairs, toy_pairs

QUIET = {"n_resamples": 200, "log": lambda line: None}
TRAINS_ON = ("which this run trains on (train_splits={t}): a checkpoint chosen on training pairs is "
             "not chosen; fix the epochs instead (no {e}) or choose on other pairs")
SCORED_ON = ("the split this run is scored on (reported as held out): a checkpoint chosen on it makes "
             "that figure optimistic; choose on other pairs (--eval-dataset, --eval-config, --eval-split)")
UNRECORDED = "trained on {d}, whose pairs the run did not record (written before seen_pairs.json)"
UNTOLD = ": which of these it saw cannot be told"


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """The saved runs with their base model and toy folds (``run``: a bi-encoder run written
    before seen_pairs.json, trained on toy-cv/cv-fold-0)."""
    return saved_runs(tmp_path_factory.mktemp("saved"))


@pytest.fixture
def quiet():
    """No datasets progress bars on stderr while a command's one line is compared."""
    datasets.disable_progress_bars()
    yield
    datasets.enable_progress_bars()


def toy_set(rows, name="toy", dataset="str-2021", options=()) -> LoadedSet:
    return LoadedSet(BenchmarkSet(dataset, name, "test", (0.0, 1.0), ("en",), load_options=options), rows)


def unrecorded_run(root, tmp_path, data: str):
    """A copy of the saved run, its metrics naming ``data``, without seen_pairs.json."""
    run = shutil.copytree(root / "run", tmp_path / "run")
    metrics = json.loads((run / "metrics.json").read_text())
    (run / "metrics.json").write_text(json.dumps({**metrics, "data": data}))
    return run


# -- 1. the record belongs to the folder, whatever kind reads it -------------------------------
FORCED = [  # (run folder, --model-kind): every kind that reads it
    ("semrel-bi", None), ("semrel-bi", "bi-encoder"), ("semrel-bi", "transformer"),
    ("semrel-cross", None), ("semrel-cross", "cross-encoder")]


@pytest.mark.parametrize("folder,kind", FORCED, ids=[f"{f}-as-{k or 'detected'}" for f, k in FORCED])
def test_a_forced_kind_is_refused_the_pairs_its_run_saw(kinds, tmp_path, folder, kind):
    run = shutil.copytree(kinds[folder], tmp_path / folder)
    rows = toy_pairs()
    write_seen_pairs(run, [seen_part("train", "toy-cv/cv-fold-0", "train", rows.select(range(10)))])
    sets = [toy_set(rows.select(range(40)), "seen"), toy_set(rows.select(range(40, 80)), "unseen")]
    result = run_benchmark([load_scorer(str(run), kind=kind, cache_dir=None)], sets, **QUIET)
    assert [(c.status, c.reason) for c in result.cells] == [
        ("refused", "trained on these pairs: 10 of 40 (10 in train toy-cv/cv-fold-0/train)"), ("scored", "")]
    assert result.models[0]["kind"] == (kind or "semrel")
    assert result.models[0]["training_on_record"] is True


@pytest.mark.parametrize("kind", ["bi-encoder", "transformer", "cross-encoder"])
def test_a_model_semrel_did_not_train_is_scored_and_says_so(kinds, kind):
    rows = toy_pairs().select(range(30))
    result = run_benchmark([load_scorer(str(kinds[kind]), cache_dir=None)], [toy_set(rows)], **QUIET)
    assert result.cells[0].status == "scored" and result.models[0]["training_on_record"] is False


@pytest.mark.parametrize("kind", ["bi-encoder", "transformer"])
def test_a_run_without_its_record_read_as_another_kind_is_refused_its_data(root, tmp_path, kind):
    run = unrecorded_run(root, tmp_path, "str-2021/cv-fold-0")
    result = run_benchmark([load_scorer(str(run), kind=kind, cache_dir=None)],
                           [toy_set(toy_pairs().select(range(30)), "x")], **QUIET)
    assert result.cells[0].reason == UNRECORDED.format(d="str-2021/cv-fold-0") + UNTOLD
    assert result.models[0]["training_on_record"] is True


def test_the_command_honours_the_record_under_every_kind(kinds, tmp_path, mirror, cache_dir, capsys):
    """The issue's case: a run that trained on 200 of STR-2021/STS's 250 pairs, forced to be read
    as a bi-encoder, is refused that set (the JSON: training on record); a set it did not see is
    scored."""
    sts = select_sets(["str-2021/default/train/STS"], mirror=mirror, cache_dir=cache_dir)[0].load()
    run = shutil.copytree(kinds["semrel-bi"], tmp_path / "run")
    write_seen_pairs(run, [seen_part("train", "str-2021/x", "train", sts.select(range(200)))])
    for kind in ("bi-encoder", "transformer", "semrel"):
        out = tmp_path / kind
        assert main(["benchmark", "--model", str(run), "--model-kind", kind, "--only",
                     "str-2021/default/train/STS", "--only", "semrel-2024/eng/validation", "--mirror",
                     str(mirror), "--cache-dir", str(cache_dir), "--resamples", "200",
                     "--output", str(out)]) == 0, capsys.readouterr().err
        record = json.loads((out / "benchmark.json").read_text())
        assert [(c["set"], c["status"], c["reason"]) for c in record["cells"]] == [
            ("str-2021/default/train/STS", "refused",
             "trained on these pairs: 200 of 250 (200 in train str-2021/x/train)"),
            ("semrel-2024/eng/validation", "scored", "")]
        assert record["models"][0]["training_on_record"] is True


# -- 2. a run without seen_pairs.json: its dataset, and any set holding its pairs ----------------
def test_a_run_without_its_record_is_refused_sets_holding_its_pairs(root, tmp_path, upstream, cache_dir):
    """SemRel-2024's English train is STR-2021: a set named otherwise but holding its pairs is
    refused; a set of the same dataset (afr) by name; a set with none of them is scored."""
    run = unrecorded_run(root, tmp_path, "semrel-2024/eng")
    options = (("cache_dir", str(cache_dir)), ("mirror", str(upstream)))
    eng = load_pairs("semrel-2024", "eng", mirror=upstream, cache_dir=cache_dir).splits["train"]
    n = min(len(eng), 30)
    held = datasets.Dataset.from_dict({"sentence1": [s.upper() for s in eng["sentence1"][:n]],
                                       "sentence2": eng["sentence2"][:n], "score": eng["score"][:n]})
    sets = [toy_set(held, "default", "str-2021", options),
            toy_set(toy_pairs().select(range(30)), "afr", "semrel-2024", options),
            toy_set(toy_pairs().select(range(30)), "default", "crowd-sts", options)]
    result = run_benchmark([load_scorer(str(run), cache_dir=None)], sets, **QUIET)
    assert [(c.status, c.reason) for c in result.cells] == [
        ("refused", UNRECORDED.format(d="semrel-2024/eng") + f", and {n} of these {n} pairs are pairs of it"
         + UNTOLD),
        ("refused", UNRECORDED.format(d="semrel-2024/eng") + UNTOLD), ("scored", "")]


def test_the_command_refuses_str_2021_to_a_run_of_semrel_2024_english(root, tmp_path, mirror, cache_dir):
    """The issue's case on the real files: every STR-2021 set and SemRel-2024's afr refused."""
    run = unrecorded_run(root, tmp_path, "semrel-2024/eng")
    sets = load_sets(select_sets(["str-2021/default/train", "semrel-2024/afr/test"], mirror=mirror,
                                 cache_dir=cache_dir), mirror=mirror)
    result = run_benchmark([load_scorer(str(run), cache_dir=None)], sets, **QUIET)
    reasons = {c.set: c.reason for c in result.cells}
    assert {c.status for c in result.cells} == {"refused"} and len(reasons) == 9
    assert reasons["str-2021/default/train"] == (UNRECORDED.format(d="semrel-2024/eng")
                                                 + ", and 5500 of these 5500 pairs are pairs of it" + UNTOLD)
    assert reasons["str-2021/default/train/STS"] == (UNRECORDED.format(d="semrel-2024/eng")
                                                     + ", and 250 of these 250 pairs are pairs of it" + UNTOLD)
    assert reasons["semrel-2024/afr/test"] == UNRECORDED.format(d="semrel-2024/eng") + UNTOLD


# -- 3. one key for what a tokenizer sees alike; the earlier key still matches -----------------
ALIKE = [  # (sentence1, sentence2, condition) each the same pair as ("A red circle.", "the blue star", "Colour")
    ("a red circle.", "the blue star", "Colour"),  # lower-cased
    ("A red circle.", "the blue star", "COLOUR"),  # upper-cased condition
    ("A red circle.\u200b", "the blue star", "Colour"),  # trailing zero-width space
    ("A\u00a0red circle.", "the blue  star ", "Colour"),  # NBSP, doubled and trailing spaces
    ("A red cir\u00adcle.", "the blue\u200d star", "Colour"),  # soft hyphen, zero-width joiner
    ("Ａ ｒｅｄ circle．", "the blue star", "Colour"),  # full-width forms (NFKC)
    ("the blue star", "A red circle.", "Colour"),  # swapped
    ("\ufeffA red circle.", "the blue star", "colour\u2060"),  # byte-order mark, word joiner
]
APART = [  # siblings that are other pairs
    ("A red circle", "the blue star", "Colour"),  # no full stop
    ("A red circle.", "the blue star", "Shape"),  # another condition
    ("A red circle.", "the blue star", None),  # no condition
    ("A red circle.", "the bluestar", "Colour"),  # a space is not a format character
]


@pytest.mark.parametrize("s1,s2,c", ALIKE + APART, ids=[f"alike-{i}" for i in range(len(ALIKE))]
                         + [f"apart-{i}" for i in range(len(APART))])
def test_pairs_an_uncased_tokenizer_sees_alike_hash_alike(s1, s2, c):
    original = pair_hashes(["A red circle."], ["the blue star"], ["Colour"])
    other = pair_hashes([s1], [s2], None if c is None else [c])
    assert (other == original) is ((s1, s2, c) in ALIKE)


def test_a_run_is_refused_case_and_format_variants_of_its_pairs(kinds, tmp_path):
    run = shutil.copytree(kinds["semrel-tri"], tmp_path / "tri")
    rows = toy_conditional_pairs().select(range(30))
    write_seen_pairs(run, [seen_part("train", "toy/default", "train", rows.select(range(10)))])
    variants = rows.map(lambda r, i: {"sentence1": r["sentence1"].lower() + ("\u200b" if i % 2 else ""),
                                      "condition": r["condition"].upper()}, with_indices=True)
    result = run_benchmark([load_scorer(str(run), cache_dir=None)],
                           [toy_set(variants, "c", "c-sts"), toy_set(rows.select(range(10, 30)), "d", "c-sts")],
                           **QUIET)
    assert [(c.status, c.reason) for c in result.cells] == [
        ("refused", "trained on these pairs: 10 of 30 (10 in train toy/default/train)"), ("scored", "")]


def test_a_record_hashed_with_the_earlier_key_keeps_matching_in_it(kinds, tmp_path):
    """A seen_pairs.json written before the key changed (white space collapsed only) is compared
    in its own key: its pairs are refused, a case variant (which that key cannot tell) is not."""
    run = shutil.copytree(kinds["semrel-bi"], tmp_path / "run")
    rows = toy_pairs().map(lambda r: {"sentence1": r["sentence1"].title()})  # cased: the keys differ
    old = pair_hashes(rows["sentence1"][:10], rows["sentence2"][:10], None, PAIR_HASH_V1)
    assert old != pair_hashes(rows["sentence1"][:10], rows["sentence2"][:10])  # the key did change
    (run / "seen_pairs.json").write_text(json.dumps({"hash": PAIR_HASH_V1, "parts": [
        {"role": "train", "data": "toy/default", "split": "train", "pairs": old}]}))
    upper = rows.select(range(10)).map(lambda r: {"sentence1": r["sentence1"].upper()})
    result = run_benchmark([load_scorer(str(run), cache_dir=None)],
                           [toy_set(rows.select(range(20)), "a"), toy_set(upper, "b")], **QUIET)
    assert [(c.status, c.reason) for c in result.cells] == [
        ("refused", "trained on these pairs: 10 of 20 (10 in train toy/default/train)"), ("scored", "")]
    assert [p["hash"] for p in seen_pairs(run)] == [PAIR_HASH_V1]


def test_an_ensemble_of_records_in_both_keys_counts_each_pair_once(root, tmp_path):
    """One member's record in the earlier key, the other's in the current one, both of the same
    pairs: each pair refused once, named by the member that hashed it first."""
    ensemble = shutil.copytree(root / "ensemble-rank", tmp_path / "ensemble")
    rows = toy_pairs().map(lambda r: {"sentence1": r["sentence1"].title()})
    first, second = sorted((ensemble / "members").iterdir())
    (first / "seen_pairs.json").write_text(json.dumps({"hash": PAIR_HASH_V1, "parts": [
        {"role": "train", "data": "old/default", "split": "train",
         "pairs": pair_hashes(rows["sentence1"][:10], rows["sentence2"][:10], None, PAIR_HASH_V1)}]}))
    write_seen_pairs(second, [seen_part("train", "new/default", "train", rows.select(range(12)))])
    result = run_benchmark([load_scorer(str(ensemble), cache_dir=None)], [toy_set(rows.select(range(20)))],
                           **QUIET)
    assert result.cells[0].reason == ("trained on these pairs: 12 of 20 (10 in train old/default/train; "
                                      "2 in train new/default/train)")


def test_a_record_in_an_unknown_key_is_one_line(kinds, tmp_path):
    run = shutil.copytree(kinds["semrel-bi"], tmp_path / "run")
    (run / "seen_pairs.json").write_text(json.dumps({"hash": "md5(s1)", "parts": []}))
    with pytest.raises(ParameterError) as raised:
        seen_pairs(run)
    assert str(raised.value) == (f"model={str(run)!r}: seen_pairs.json hashes its pairs as 'md5(s1)', "
                                 f"which semrel does not compute (known: {PAIR_HASH} | {PAIR_HASH_V1})")


# -- 4. a checkpoint is never chosen on pairs trained or scored on, whatever the names -------------
def _variant(rows, how):
    return rows.map(lambda r: {"sentence1": how(r["sentence2"]), "sentence2": how(r["sentence1"])})


def _dev_folder(folder, rows):
    datasets.DatasetDict({"dev": rows}).save_to_disk(folder)
    return str(folder)


CHOSEN = [  # (id, dev rows from fold 0 (train 64, test 16), the line after "--eval-split dev: ")
    ("the scored split, swapped and upper-cased",
     lambda f: _variant(f.splits["test"], str.upper),
     "toy-dev/dev holds 16 of the 16 pairs of toy-cv/cv-fold-0/test, " + SCORED_ON),
    ("half the scored split with a zero-width space",
     lambda f: _variant(f.splits["test"].select(range(8)), lambda t: t + "\u200b"),
     "toy-dev/dev holds 8 of the 16 pairs of toy-cv/cv-fold-0/test, " + SCORED_ON),
    ("training pairs, lower-cased",
     lambda f: _variant(f.splits["train"].select(range(10)), str.lower),
     "toy-dev/dev holds 10 of the 64 pairs of toy-cv/cv-fold-0/train, "
     + TRAINS_ON.format(t="train", e="--eval-dataset")),
]


@pytest.mark.parametrize("make,line", [c[1:] for c in CHOSEN], ids=[c[0] for c in CHOSEN])
def test_fit_refuses_to_choose_on_pairs_it_trains_or_is_scored_on(root, tmp_path, monkeypatch, capsys, quiet,
                                                                 make, line):
    monkeypatch.chdir(root)
    fold0 = load_pairs("toy-cv", "cv-fold-0")
    dev = _dev_folder(tmp_path / "toy-dev", make(fold0))
    argv = ["fit", "--dataset", "toy-cv", "--config", "cv-fold-0", "--model", "base", "--max-steps", "2",
            "--eval-dataset", dev, "--eval-score-range", "0", "1", "--eval-split", "dev",
            "--output", str(tmp_path / "o")]
    assert main(argv) == 2
    assert capsys.readouterr().err == f"semrel fit: error: --eval-split dev: {line.replace('toy-dev', dev)}\n"
    assert not (tmp_path / "o").exists()


def test_other_pairs_may_choose_and_training_on_validation_is_refused_by_content(root, monkeypatch):
    monkeypatch.chdir(root)
    fold0 = load_pairs("toy-cv", "cv-fold-0")
    args = small_args("unused", **selection_arguments())
    other = load_pairs(datasets.DatasetDict({"dev": toy_pairs().select(range(3))}), score_range=(0, 1))
    held_apart = fold0.splits["train"].filter(lambda r: pair_hashes([r["sentence1"]], [r["sentence2"]])[0]
                                             not in set(pair_hashes(other.splits["dev"]["sentence1"],
                                                                    other.splits["dev"]["sentence2"])))
    three = load_pairs(datasets.DatasetDict({"train": held_apart.select(range(20)),
                                             "validation": held_apart.select(range(20, 30)),
                                             "test": held_apart.select(range(30, 40))}), score_range=(0, 1))
    assert check_selection(three, dev_split(other, "dev"), args, "test") is None
    assert check_selection(three, dev_split(other, "dev"), args, None, ("train", "validation")) is None
    chooser = load_pairs(datasets.DatasetDict({"dev": _variant(three.splits["validation"], str.title)}),
                         score_range=(0, 1))
    with pytest.raises(ParameterError) as raised:
        check_selection(three, dev_split(chooser, "dev"), args, None, ("train", "validation"))
    assert str(raised.value) == (f"eval_split='dev': {chooser.name}/dev holds 10 of the 30 pairs of "
                                 f"{three.name}/train+validation, "
                                 + TRAINS_ON.format(t="train+validation", e="eval_dataset"))


REAL = [  # (the issue's commands on the real files, the line after "semrel fit: error: ")
    (["--dataset", "semrel-2024", "--config", "eng", "--train-splits", "train+validation", "--eval-dataset",
      "str-2021", "--eval-config", "cv-fold-0", "--eval-split", "test"],
     "--eval-split test: str-2021/cv-fold-0/test holds 1102 of the 5750 pairs of "
     "semrel-2024/eng/train+validation, " + TRAINS_ON.format(t="train+validation", e="--eval-dataset")),
    (["--dataset", "str-2021", "--config", "cv-fold-0", "--eval-dataset", "semrel-2024", "--eval-config",
      "eng", "--eval-split", "train"],
     "--eval-split train: semrel-2024/eng/train holds 1100 of the 1100 pairs of str-2021/cv-fold-0/test, "
     + SCORED_ON),
    (["--dataset", "str-2021", "--config", "cv-fold-0", "--eval-dataset", "str-2021", "--eval-config",
      "cv-fold-1", "--eval-split", "test"],
     "--eval-split test: str-2021/cv-fold-1/test holds 1 of the 1100 pairs of str-2021/cv-fold-0/test, "
     + SCORED_ON),  # one pair of STR-2021 is in both folds' test (the same two texts, two ids)
]


@pytest.mark.parametrize("flags,line", REAL, ids=["eng-train+validation-on-str", "fold-0-on-eng-train",
                                                  "fold-0-on-fold-1-test"])
def test_the_issues_fits_are_refused_before_training(root, tmp_path, monkeypatch, capsys, quiet, mirror,
                                                     cache_dir, flags, line):
    monkeypatch.chdir(root)
    argv = ["fit", *flags, "--model", "base", "--max-steps", "2", "--mirror", str(mirror),
            "--cache-dir", str(cache_dir), "--output", str(tmp_path / "o")]
    assert main(argv) == 2
    assert capsys.readouterr().err == f"semrel fit: error: {line}\n"
    assert not (tmp_path / "o").exists()


def test_str_2021_may_choose_on_semrel_2024_english_dev(mirror, cache_dir):
    """The documented choice: SemRel-2024's English dev shares no pair with STR-2021."""
    fold0 = load_pairs("str-2021", "cv-fold-0", mirror=mirror, cache_dir=cache_dir)
    dev = load_dev("semrel-2024", "eng", mirror=mirror, cache_dir=cache_dir)
    assert check_selection(fold0, dev, small_args("unused", **selection_arguments()), "test") is None


# -- 5. a run started from another run carries what that run saw --------------------------------
@pytest.mark.parametrize("hashing", [PAIR_HASH, PAIR_HASH_V1])
def test_a_run_started_from_a_run_carries_its_record_in_its_key(kinds, root, tmp_path, hashing):
    """What the start saw goes into the new run's record, in the start's key: the benchmark
    refuses the new run those pairs too."""
    from semrel.trainers.fitting import fit

    start = shutil.copytree(kinds["semrel-bi"], tmp_path / "start")
    earlier = toy_pairs().map(lambda r: {"sentence1": r["sentence1"] + " again"}).select(range(20))
    saw = seen_part("train", "toy/earlier", "train", earlier.select(range(10)), hashing)
    write_seen_pairs(start, [saw], hashing)
    data = load_pairs(str(root / "toy-cv"), "cv-fold-1")
    fit(data, str(start), small_args(tmp_path / "next", encoder="bi"))
    assert json.loads((tmp_path / "next" / "seen_pairs.json").read_text()) == {"hash": hashing, "parts": [
        saw, seen_part("train", data.name, "train", data.splits["train"], hashing)]}
    result = run_benchmark([load_scorer(str(tmp_path / "next"), cache_dir=None)], [toy_set(earlier, "e")], **QUIET)
    assert [(c.status, c.reason) for c in result.cells] == [
        ("refused", "trained on these pairs: 10 of 20 (10 in train toy/earlier/train)")]


def test_a_run_without_its_record_cannot_start_a_run(root, tmp_path):
    from semrel.trainers.fitting import fit

    run = unrecorded_run(root, tmp_path, "semrel-2024/eng")
    with pytest.raises(ParameterError) as refused:
        fit(load_pairs(str(root / "toy-cv"), "cv-fold-1"), str(run), small_args(tmp_path / "next", encoder="bi"))
    assert str(refused.value) == (
        f"model_path={str(run)!r}: was trained on semrel-2024/eng but records no seen_pairs.json (written before "
        "semrel recorded a run's pairs): a run started from it could not say which pairs it saw; start from the "
        "model it was trained from")
    assert not (tmp_path / "next").exists()
