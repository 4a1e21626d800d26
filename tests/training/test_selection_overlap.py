"""A dev split that shares pairs with the training splits (SemRel-2024 kin: 48 of its 102 validation
pairs are train pairs) is refused by default, the refusal naming ``--selection-overlap omit``; with
it the checkpoint is chosen on the dev split's other pairs and the omitted ones are counted in the
output, ``metrics.json``, the card, ``seen_pairs.json`` and ``selection_predictions.json``. Pairs of
the split the run is scored on are refused either way, and so is a dev split with fewer than 3
pairs left."""

from __future__ import annotations

import json

import datasets
import pytest

from semrel.cli import main
from semrel.dataset_scripts.pairs import load_pairs
from semrel.metrics.errors import ParameterError
from semrel.trainers.run_folder import pair_hashes
from semrel.trainers.selection import check_selection, chosen_on, dev_split, load_dev, selection_arguments
from trainer_fixtures import small_args, toy_cv, toy_pairs

TOY = toy_pairs().shuffle(seed=0)
TRAIN, TEST, NEW = TOY.select(range(64)), TOY.select(range(64, 96)), TOY.select(range(96, 120))


def swapped(rows):
    """``rows`` with the sentences swapped and upper-cased: the same pairs by content."""
    return rows.map(lambda r: {"sentence1": r["sentence2"].upper(), "sentence2": r["sentence1"].upper()})


DEVS = {  # dev split name -> its rows: train pairs (swapped), scored-on test pairs, new pairs
    "some": lambda: datasets.concatenate_datasets([swapped(TRAIN.select(range(4))), NEW.select(range(8))]),
    "none": lambda: NEW.select(range(8)),
    "all": lambda: swapped(TRAIN.select(range(10))),
    "two-left": lambda: datasets.concatenate_datasets([TRAIN.select(range(10)), NEW.select(range(2))]),
    "test": lambda: datasets.concatenate_datasets([TEST.select(range(3)), TRAIN.select(range(3)),
                                                   NEW.select(range(6))]),
}


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """``train`` (train 64, test 32 toy pairs on [0, 1]) and ``dev`` (one split per :data:`DEVS`),
    save_to_disk folders."""
    root = tmp_path_factory.mktemp("data")
    datasets.DatasetDict({"train": TRAIN, "test": TEST}).save_to_disk(root / "train")
    datasets.DatasetDict({name: make() for name, make in DEVS.items()}).save_to_disk(root / "dev")
    return root


def fit_argv(folders, encoder, out, dev: str | None, *flags) -> list[str]:
    chooses = ["--eval-dataset", str(folders / "dev"), "--eval-score-range", "0", "1", "--eval-split", dev,
               "--eval-steps", "1"] if dev else []
    return ["fit", "--dataset", str(folders / "train"), "--score-range", "0", "1", "--model", str(encoder),
            "--max-steps", "2", "--output", str(out), *chooses, *flags]


TRAINS_ON = ("{D}/{s} holds {n} of the 64 pairs of {T}/train, which this run trains on (train_splits=train): "
             "a checkpoint chosen on training pairs is not chosen; fix the epochs instead (no --eval-dataset)")
LEFT = ("--selection-overlap omit: {D}/{s} has {n} of its {m} pairs left once those {T}/train holds are "
        "omitted: correlations need >= 3; choose on other pairs or fix the epochs instead (no --eval-dataset)")
SCORED_ON = ("--eval-split test: {D}/test holds 3 of the 32 pairs of {T}/test, the split this run is scored on "
             "(reported as held out): a checkpoint chosen on it makes that figure optimistic; choose on other "
             "pairs (--eval-dataset, --eval-config, --eval-split)")
REFUSED = [  # (id, dev split, flags, the one line after "semrel fit: error: ")
    ("shared pairs refused by default, the flag named", "some", [],
     "--eval-split some: " + TRAINS_ON.format(s="some", n=4, D="{D}", T="{T}")
     + ", choose on other pairs, or on its other 8 (--selection-overlap omit)"),
    ("refused with --selection-overlap refuse", "some", ["--selection-overlap", "refuse"],
     "--eval-split some: " + TRAINS_ON.format(s="some", n=4, D="{D}", T="{T}")
     + ", choose on other pairs, or on its other 8 (--selection-overlap omit)"),
    ("a dev split of train pairs only: no flag offered", "all", [],
     "--eval-split all: " + TRAINS_ON.format(s="all", n=10, D="{D}", T="{T}") + " or choose on other pairs"),
    ("omitting all of it leaves nothing", "all", ["--selection-overlap", "omit"],
     LEFT.format(s="all", n=0, m=10, D="{D}", T="{T}")),
    ("omitting leaves 2 of 12", "two-left", ["--selection-overlap", "omit"],
     LEFT.format(s="two-left", n=2, m=12, D="{D}", T="{T}")),
    ("test pairs refused with the flag", "test", ["--selection-overlap", "omit"], SCORED_ON),
    ("test pairs refused without it", "test", [], SCORED_ON),
    ("the flag without a dev split", None, ["--selection-overlap", "omit"],
     "--selection-overlap omit: needs --eval-dataset"),
    ("an unknown value", "some", ["--selection-overlap", "drop"],
     "argument --selection-overlap: invalid choice: 'drop' (choose from 'refuse', 'omit') "
     "(see semrel fit --help)"),
]


@pytest.mark.parametrize("dev,flags,line", [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_fit_refuses_in_one_line_before_anything_is_written(encoder, folders, tmp_path, capsys, dev, flags,
                                                            line):
    out = tmp_path / "out"
    try:
        status = main(fit_argv(folders, encoder, out, dev, *flags))
    except SystemExit as exc:  # argparse's own refusal (a value outside the flag's choices)
        status = exc.code
    assert status == 2
    err = capsys.readouterr().err
    assert err == f"semrel fit: error: {line.format(D=folders / 'dev', T=folders / 'train')}\n"
    assert not out.exists()


PYTHON = [  # (id, dev split or None, selection_overlap, str() of the ParameterError, or None: accepted)
    ("refused, the argument named", "some", "refuse",
     "eval_split='some': {D}/some holds 4 of the 64 pairs of {T}/train, which this run trains on "
     "(train_splits=train): a checkpoint chosen on training pairs is not chosen; fix the epochs instead "
     "(no eval_dataset), choose on other pairs, or on its other 8 (selection_overlap omit)"),
    ("omitted", "some", "omit", None),
    ("nothing to omit", "none", "omit", None),
    ("nothing left", "all", "omit",
     "selection_overlap='omit': {D}/all has 0 of its 10 pairs left once those {T}/train holds are omitted: "
     "correlations need >= 3; choose on other pairs or fix the epochs instead (no eval_dataset)"),
    ("test pairs", "test", "omit",
     "eval_split='test': {D}/test holds 3 of the 32 pairs of {T}/test, the split this run is scored on "
     "(reported as held out): a checkpoint chosen on it makes that figure optimistic; choose on other pairs "
     "(eval_dataset, eval_config, eval_split)"),
    ("no dev split", None, "omit",
     "selection_overlap='omit': needs eval_data (the dev split a checkpoint is chosen on)"),
]


@pytest.mark.parametrize("dev,overlap,message", [c[1:] for c in PYTHON], ids=[c[0] for c in PYTHON])
def test_check_selection_words_it_in_the_api_names(folders, dev, overlap, message):
    data = load_pairs(str(folders / "train"), score_range=(0, 1))
    split = None if dev is None else load_dev(str(folders / "dev"), split=dev, score_range=(0, 1))
    args = small_args("unused", selection_overlap=overlap,
                      **(selection_arguments() if dev else {}))
    if message is None:
        assert check_selection(data, split, args, "test") is None
        return
    with pytest.raises(ParameterError) as raised:
        check_selection(data, split, args, "test")
    assert str(raised.value) == message.format(D=folders / "dev", T=folders / "train")


@pytest.mark.parametrize("overlap,kept", [("refuse", 12), ("omit", 8)])
def test_chosen_on_leaves_out_exactly_the_shared_pairs(folders, overlap, kept):
    data = load_pairs(str(folders / "train"), score_range=(0, 1))
    dev = dev_split(load_pairs(str(folders / "dev"), score_range=(0, 1)), "some")
    chosen = chosen_on(data, dev, ("train",), small_args("unused", selection_overlap=overlap))
    assert len(chosen.rows) == kept and chosen.omitted == (4 if overlap == "omit" else None)
    assert chosen.name == dev.name and len(dev.rows) == 12  # the loaded split is left as it was
    if overlap == "omit":
        assert list(chosen.rows["sentence1"]) == list(NEW.select(range(8))["sentence1"])


OMITTED = [  # (dev split, pairs chosen on, of, omitted)
    ("some", 8, 12, 4),
    ("none", 8, 8, 0),  # nothing shared: it says so
]


@pytest.mark.slow
@pytest.mark.parametrize("dev,pairs,of,omitted", OMITTED, ids=[c[0] for c in OMITTED])
def test_fit_omits_the_shared_pairs_and_counts_them(encoder, folders, tmp_path, capsys, dev, pairs, of,
                                                    omitted):
    out = tmp_path / "run"
    assert main(fit_argv(folders, encoder, out, dev, "--selection-overlap", "omit")) == 0
    note = f"chosen on {pairs} of {of} {dev} pairs; {omitted} shared with train omitted"
    printed = capsys.readouterr().out
    assert f"); {note}\n" in printed, printed
    metrics = json.loads((out / "metrics.json").read_text())
    assert (metrics["selection"]["pairs"], metrics["selection"]["omitted"]) == (pairs, omitted)
    assert metrics["options"]["selection_overlap"] == "omit"
    kept = NEW.select(range(pairs))  # the dev pairs that are no train pairs
    seen = json.loads((out / "seen_pairs.json").read_text())["parts"]
    [selection] = [p for p in seen if p["role"] == "selection"]
    assert (selection["split"], selection["pairs"]) == (dev, pair_hashes(kept["sentence1"], kept["sentence2"]))
    predictions = json.loads((out / "selection_predictions.json").read_text())
    assert predictions["sentence1"] == list(kept["sentence1"]) and len(predictions["predictions"]) == pairs
    card = (out / "README.md").read_text()
    assert f"The checkpoint was {note} (`selection_overlap: omit`)." in card


@pytest.fixture
def quiet():
    """No datasets progress bars on stderr while a command's one line is compared."""
    datasets.disable_progress_bars()
    yield
    datasets.enable_progress_bars()


@pytest.mark.slow
def test_cv_omits_per_fold_and_refuses_a_folds_test_pairs(encoder, tmp_path, capsys, quiet):
    """Every fold of ``toy-cv`` trains on rows 32-80 of the toy pairs: 4 of them in dev are omitted
    in each fold; a dev split holding fold 0's test pairs is refused, flag or not."""
    data = toy_cv(tmp_path / "toy-cv")
    toy = toy_pairs().shuffle(seed=0)
    splits = {"dev": datasets.concatenate_datasets([toy.select(range(32, 36)), toy.select(range(80, 88))]),
              "scored": datasets.concatenate_datasets([toy.select(range(0, 2)), toy.select(range(80, 88))])}
    datasets.DatasetDict(splits).save_to_disk(tmp_path / "dev")
    argv = ["cv", "--dataset", str(data), "--model", str(encoder), "--max-steps", "1", "--eval-dataset",
            str(tmp_path / "dev"), "--eval-score-range", "0", "1", "--eval-steps", "1"]
    assert main([*argv, "--eval-split", "scored", "--selection-overlap", "omit", "--output",
                 str(tmp_path / "refused")]) == 2
    assert capsys.readouterr().err == (
        f"semrel cv: error: --eval-split scored: {tmp_path / 'dev'}/scored holds 2 of the 16 pairs of "
        f"{data}/cv-fold-0/test, the split this run is scored on (reported as held out): a checkpoint chosen "
        "on it makes that figure optimistic; choose on other pairs (--eval-dataset, --eval-config, --eval-split)\n")
    assert not (tmp_path / "refused").exists()
    assert main([*argv, "--eval-split", "dev", "--selection-overlap", "omit", "--output", str(tmp_path / "cv")]) == 0
    printed = capsys.readouterr().out
    assert printed.count("; chosen on 8 of 12 dev pairs; 4 shared with train omitted\n") == 2, printed
    for fold in ("cv-fold-0", "cv-fold-1"):
        selection = json.loads((tmp_path / "cv" / fold / "metrics.json").read_text())["selection"]
        assert (selection["pairs"], selection["omitted"]) == (8, 4)


SEMREL_2024 = [  # (language, validation pairs shared with train, validation pairs): measured, docs/datasets.md
    ("kin", 48, 102), ("mar", 3, 293), ("tel", 4, 130), ("arq", 0, 97),
]


@pytest.mark.parametrize("language,shared,pairs", SEMREL_2024, ids=[c[0] for c in SEMREL_2024])
def test_semrel_2024_dev_splits_share_the_documented_pairs_with_train(mirror, cache_dir, language, shared,
                                                                      pairs):
    data = load_pairs("semrel-2024", language, mirror=mirror, cache_dir=cache_dir)
    dev = load_dev("semrel-2024", language, mirror=mirror, cache_dir=cache_dir)
    chosen = chosen_on(data, dev)
    assert (chosen.omitted, len(dev.rows), len(chosen.rows)) == (shared, pairs, pairs - shared)
