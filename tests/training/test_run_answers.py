"""Runs that would answer wrongly or leave a state behind are refused before anything is written
or trained, in one line naming the flags (the Python API naming its parameters):

* a checkpoint chosen on the split the run is then scored on (by name, or the same pairs);
* ``--resume PATH`` of another run's checkpoint (another fold, seed, or no run beside it);
* ``cv --member`` values outside the flags' rules (ASCII numbers and integers, true/false
  words), and one member alone (an ensemble needs two);
* ``--resume last`` into a new folder, an unlabelled split to evaluate;

and a run that failed on its way (a full disk) leaves a fingerprint marked incomplete, so the
same command runs again while another run still needs ``--overwrite``.
"""

from __future__ import annotations

import shutil

import datasets
import pytest

import semrel.trainers.fitting as fitting
from semrel.cli import main
from semrel.dataset_scripts.pairs import load_pairs
from semrel.metrics.errors import DataValidationError, ParameterError
from semrel.trainers.arguments import recorded_options, stored_options
from semrel.trainers.cross_validation import cross_validate_members, parse_member
from semrel.trainers.fitting import fit, run_fingerprint
from semrel.trainers.run_folder import check_output, finish_run, prepare_output
from semrel.trainers.run_folder.files import read_fingerprint
from semrel.trainers.selection import dev_split, selection_arguments
from trainer_fixtures import saved_runs, small_args, toy_pairs

RUN_ARGS = {"save_strategy": "steps", "save_steps": 1, "seed": 3}  # what saved `run`
TRAIN_FLAGS = ["--dataset", "toy-cv", "--model", "base", "--max-steps", "2", "--batch-size", "8",
               "--learning-rate", "0.003", "--warmup", "0", "--seed", "3"]
RUN_FLAGS = [*TRAIN_FLAGS, "--save-steps", "1"]
CHOSEN_ON_SCORED = ("toy-cv/cv-fold-0/test is the split this run is scored on (reported as held "
                    "out): a checkpoint chosen on it makes that figure optimistic; choose on "
                    "other pairs ({eval_dataset}, {eval_config}, {eval_split})")


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """The saved runs (``run``: toy-cv/cv-fold-0, seed 3, checkpoints 1 and 2), their base model
    and data, and ``unlabelled``: a save_to_disk folder whose test split has no scores."""
    root = saved_runs(tmp_path_factory.mktemp("answers"))
    toy = toy_pairs().shuffle(seed=0)
    test = toy.select(range(64, 80)).map(lambda r: {"score": None}, features=toy.features)
    datasets.DatasetDict({"train": toy.select(range(64)), "test": test}).save_to_disk(
        root / "unlabelled")
    return root


@pytest.fixture
def here(root, monkeypatch, tmp_path):
    monkeypatch.chdir(root)  # the runs name their model and data relative to here
    return root


def _flags(text: str) -> str:
    return text.format(eval_dataset="--eval-dataset", eval_config="--eval-config",
                       eval_split="--eval-split")


def _names(text: str) -> str:
    return text.format(eval_dataset="eval_dataset", eval_config="eval_config",
                       eval_split="eval_split")


CLI_CASES = [  # (id, argv, the one line after "semrel CMD: error: "; {o}: the output folder)
    ("fit: dev split is the scored split",
     ["fit", *TRAIN_FLAGS, "--config", "cv-fold-0", "--eval-dataset", "toy-cv", "--eval-config",
      "cv-fold-0", "--eval-split", "test", "--output", "{o}"],
     "--eval-split test: " + _flags(CHOSEN_ON_SCORED)),
    ("cv: dev split is one fold's scored split",
     ["cv", *TRAIN_FLAGS, "--eval-dataset", "toy-cv", "--eval-config", "cv-fold-0", "--eval-split",
      "test", "--output", "{o}"],
     "--eval-split test: " + _flags(CHOSEN_ON_SCORED)),
    ("fit: resume another fold's checkpoint",
     ["fit", *RUN_FLAGS, "--config", "cv-fold-1", "--output", "{o}", "--resume",
      "run/checkpoints/checkpoint-2"],
     "--resume run/checkpoints/checkpoint-2: is a checkpoint of another run (data "
     "toy-cv/cv-fold-0 vs this run's toy-cv/cv-fold-1); resuming only continues the same run"),
    ("fit: resume another seed's checkpoint",
     ["fit", *RUN_FLAGS, "--config", "cv-fold-0", "--seed", "4", "--output", "{o}", "--resume",
      "run/checkpoints/checkpoint-1"],
     "--resume run/checkpoints/checkpoint-1: is a checkpoint of another run (option seed 3 vs "
     "this run's 4); resuming only continues the same run"),
    ("fit: resume a checkpoint with no run beside it",
     ["fit", *RUN_FLAGS, "--config", "cv-fold-0", "--output", "{o}", "--resume", "{loose}"],
     "--resume {loose}: records no run: no semrel_run.json beside it (resume from a checkpoint "
     "in the checkpoints folder of a run of semrel)"),
    ("fit: resume last into a new folder",
     ["fit", *RUN_FLAGS, "--config", "cv-fold-0", "--output", "{o}", "--resume", "last"],
     "--resume last: no complete checkpoint in {o}/checkpoints"),
    ("fit: an unlabelled split to evaluate",
     ["fit", "--dataset", "unlabelled", "--score-range", "0", "1", "--model", "base",
      "--max-steps", "1", "--output", "{o}"],
     "unlabelled/test: row 1: score is missing (score nan; 16 such row(s) in all)"),
    ("cv: one member",
     ["cv", "--dataset", "toy-cv", "--max-steps", "1", "--member", "bi@base", "--output", "{o}"],
     "--member bi@base: is the only member: an ensemble needs >= 2 (repeat --member); one "
     "model's CV is --model with the training flags"),
    *[(f"cv: member {option}",
       ["cv", "--dataset", "toy-cv", "--max-steps", "1", "--member", f"bi@base,{option}",
        "--member", "cross@base", "--output", "{o}"],
       f"--member bi@base,{option}: {answer}") for option, answer in (
          ("learning_rate=١e-5", "learning_rate='١e-5' is not a float: write a number in ASCII "
                                 "notation, e.g. 2e-5"),
          ("max_steps=1_0", "max_steps='1_0' is not a int: write an integer in ASCII digits, "
                            "e.g. 10"),
          ("group_by_length=ture", "group_by_length='ture' is not a bool: write true or false "
                                   "(or 1/0, yes/no)"),
          ("learning_rate=inf", "learning_rate='inf' is not a float: write a number in ASCII "
                                "notation, e.g. 2e-5"))],
]


@pytest.mark.parametrize("argv,line", [c[1:] for c in CLI_CASES], ids=[c[0] for c in CLI_CASES])
def test_the_command_refuses_before_anything_is_written(here, tmp_path, capsys, argv, line):
    loose = tmp_path / "loose-checkpoint"
    shutil.copytree(here / "run" / "checkpoints" / "checkpoint-2", loose)
    fill = {"o": tmp_path / "o", "loose": loose}
    argv = [a.format(**fill) for a in argv]
    assert main(argv) == 2
    assert capsys.readouterr().err == f"semrel {argv[0]}: error: {line.format(**fill)}\n"
    assert not (tmp_path / "o").exists()


def test_the_python_api_refuses_the_same(here, tmp_path):
    fold0, fold1 = load_pairs("toy-cv", "cv-fold-0"), load_pairs("toy-cv", "cv-fold-1")
    args = small_args(tmp_path / "o", **RUN_ARGS)
    choosing = small_args(tmp_path / "o", **selection_arguments())
    with pytest.raises(ParameterError) as raised:
        fit(fold0, "base", choosing, eval_data=dev_split(fold0, "test"))
    assert str(raised.value) == "eval_split='test': " + _names(CHOSEN_ON_SCORED)
    same_pairs = load_pairs(datasets.DatasetDict({"held": fold0.splits["test"]}), score_range=(0, 1))
    with pytest.raises(ParameterError) as raised:
        fit(fold0, "base", choosing, eval_data=dev_split(same_pairs, "held"))
    assert str(raised.value) == "eval_split='held': " + _names(
        "toy-cv/held holds 16 of the 16 pairs of toy-cv/cv-fold-0/test, the split this run is scored "
        "on (reported as held out): a checkpoint chosen on it makes that figure optimistic; "
        "choose on other pairs ({eval_dataset}, {eval_config}, {eval_split})")
    with pytest.raises(ParameterError) as raised:
        fit(fold1, "base", args, resume_from_checkpoint="run/checkpoints/checkpoint-2")
    assert str(raised.value) == (
        "resume_from_checkpoint='run/checkpoints/checkpoint-2': is a checkpoint of another run "
        "(data toy-cv/cv-fold-0 vs this run's toy-cv/cv-fold-1); resuming only continues the "
        "same run")
    with pytest.raises(ParameterError, match=r"^resume_from_checkpoint='last': no complete "):
        fit(fold0, "base", args, resume_from_checkpoint="last")
    with pytest.raises(DataValidationError, match=r"^unlabelled/test: row 1: score is missing"):
        fit(load_pairs("unlabelled", score_range=(0, 1)), "base", args)
    with pytest.raises(ParameterError) as raised:
        cross_validate_members("toy-cv", "cv", [("bi-base", "base", args)])
    assert str(raised.value) == ("members=['bi-base']: an ensemble needs >= 2 members; one "
                                 "model's CV is cross_validate()")
    assert not (tmp_path / "o").exists()


MEMBER_VALUES = [  # (override, the arguments it sets)
    ("group_by_length=FALSE", {"train_sampling_strategy": "random"}),
    ("group_by_length=Yes", {"train_sampling_strategy": "group_by_length"}),
    ("group_by_length=0", {"train_sampling_strategy": "random"}),
    ("max_steps=10", {"max_steps": 10}),
    ("max_steps=-1", {"max_steps": -1}),
    ("learning_rate=2E-5", {"learning_rate": 2e-5}),
    ("epochs=3", {"num_train_epochs": 3.0}),
    ("pooling=cls", {"pooling": "cls"}),
]


@pytest.mark.parametrize("override,values", MEMBER_VALUES, ids=[m[0] for m in MEMBER_VALUES])
def test_member_values_follow_the_flags_rules(override, values):
    assert parse_member(f"bi@m,{override}")[2] == {"encoder": "bi", **values}


@pytest.mark.parametrize("override,kind", [("max_steps=١٠", "int"), ("max_steps=1.0", "int"),
                                           ("epochs=1_0", "float"), ("epochs=nan", "float"),
                                           ("group_by_length=", "bool"),
                                           ("group_by_length=on", "bool")])
def test_member_values_outside_the_rules_are_refused(override, kind):
    key, _, value = override.partition("=")
    with pytest.raises(ParameterError, match=rf"^member='bi@m,{override}': {key}='{value}' is not "
                                             rf"a {kind}: write "):
        parse_member(f"bi@m,{override}")


def test_an_unfinished_run_is_started_again_by_the_same_run_only(tmp_path):
    """The fingerprint of a run that did not finish is marked incomplete: the same run may
    start afresh (the folder is cleared) or resume; another run needs overwrite; once the run
    finished, the same run needs overwrite too."""
    out = tmp_path / "run"
    run = {"data": "toy/default", "model": "base", "options": recorded_options(small_args(out))}
    other = {**run, "options": recorded_options(small_args(out, seed=4))}
    prepare_output(out, run)
    assert read_fingerprint(out) == {**run, "incomplete": True}
    (out / "checkpoints" / "checkpoint-1").mkdir()  # what the failed run left
    assert check_output(out, run, as_recorded=stored_options) is True  # to be cleared
    assert check_output(out, run, resume="last", as_recorded=stored_options) is False
    with pytest.raises(ParameterError, match=r"^output_dir='.*run': already holds a run: set "
                                             r"overwrite to replace it"):
        check_output(out, other, as_recorded=stored_options)
    with pytest.raises(ParameterError, match=r"holds another run \(option seed 42 vs this run's "
                                             r"4\); resuming only continues the same run$"):
        check_output(out, other, resume="last", as_recorded=stored_options)
    prepare_output(out, run, as_recorded=stored_options)
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == ["semrel_run.json"]
    finish_run(out, run)
    assert read_fingerprint(out) == run
    with pytest.raises(ParameterError, match="already holds a run"):
        check_output(out, run, as_recorded=stored_options)


@pytest.mark.slow  # trains three tiny runs
def test_a_run_failed_on_a_full_disk_runs_again(here, tmp_path, monkeypatch, capsys):
    argv = ["fit", *RUN_FLAGS, "--config", "cv-fold-0", "--output", str(tmp_path / "o")]

    def full_disk(folder, record):
        raise OSError(28, "No space left on device", str(folder / "metrics.json"))

    with monkeypatch.context() as patch:
        patch.setattr(fitting, "write_metrics", full_disk)
        assert main(argv) == 2
    assert capsys.readouterr().err.endswith(f"\nsemrel fit: error: {tmp_path}/o/metrics.json: No "
                                            "space left on device\n")
    assert read_fingerprint(tmp_path / "o")["incomplete"] is True
    assert main(argv) == 0  # the same command again
    assert "incomplete" not in read_fingerprint(tmp_path / "o")
    assert (tmp_path / "o" / "metrics.json").is_file()
    capsys.readouterr()
    assert main([*argv, "--seed", "4"]) == 2
    assert "already holds a run: set --overwrite to replace it" in capsys.readouterr().err


@pytest.mark.slow  # trains one step
def test_a_checkpoint_of_the_same_run_resumes_into_a_new_folder(here, tmp_path):
    fold0 = load_pairs("toy-cv", "cv-fold-0")
    result = fit(fold0, "base", small_args(tmp_path / "o", **RUN_ARGS),
                 resume_from_checkpoint="run/checkpoints/checkpoint-1")
    assert result.spearman is not None
    assert read_fingerprint(tmp_path / "o") == run_fingerprint(fold0, "base", small_args(
        tmp_path / "o", **RUN_ARGS))
