"""Every JSON file of a run or an ensemble folder is checked against its schema when it is read:
a folder that passes the folder checks but holds a corrupt file is answered in one line naming
the folder, the file, the key and the rule, through the commands (``semrel predict``,
``ensemble``, ``fit --resume``) and the Python API alike, before anything is loaded or trained.

The table: each file x {a required key missing, a value of the wrong type, an unknown key,
truncated}, damaged in a copy of the saved runs (``tests/fixtures/saved_runs``, which hold what
earlier versions wrote and so pass by construction), plus the rules across keys (one entry per
row, the keys of an encoder kind, the parts an ensemble method needs).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from semrel.cli import main
from semrel.dataset_scripts.pairs import load_pairs
from semrel.metrics.errors import ParameterError
from semrel.trainers.ensemble import Ensemble
from semrel.trainers.fitting import fit
from semrel.trainers.models import PairEncoder
from semrel.trainers.prediction import predict
from semrel.trainers.run_folder import SELECTION, check_checkpoint_folder, load_run
from semrel.trainers.run_folder.files import checkpoint_step
from trainer_fixtures import saved_runs, small_args

RUN_ARGS = {"save_strategy": "steps", "save_steps": 1, "seed": 3}  # what saved `run`
RUN_FLAGS = ["--dataset", "toy-cv", "--config", "cv-fold-0", "--model", "base", "--max-steps", "2",
             "--batch-size", "8", "--learning-rate", "0.003", "--warmup", "0", "--seed", "3",
             "--save-steps", "1"]
CHECKPOINT = "checkpoints/checkpoint-2"


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """The saved runs with their base model, data and weights, and ``run-dev``: ``run`` with
    dev predictions (``selection_predictions.json``, the pairs' texts beside the scores)."""
    root = saved_runs(tmp_path_factory.mktemp("schema"))
    shutil.copytree(root / "run", root / "run-dev")
    record = json.loads((root / "run" / "eval_predictions.json").read_text())
    n = len(record["ids"])
    record.update(sentence1=[f"a {i}" for i in range(n)], sentence2=[f"the {i}" for i in range(n)])
    (root / "run-dev" / SELECTION).write_text(json.dumps(record))
    return root


@pytest.fixture
def here(root, monkeypatch):
    monkeypatch.chdir(root)  # the runs name their model and data relative to here
    return root


# file -> (the folder it is damaged in, its path there, the command line that reads it, the
# flag that names the folder in the answer, the Python call that reads it, its parameter)
DOORS = {
    "semrel_encoder.json": (
        "run", "semrel_encoder.json",
        ["predict", "--dataset", "toy-cv", "--config", "cv-fold-1", "--model", "{f}", "--output",
         "{tmp}/p.json"], "--model {f}", lambda f: PairEncoder.from_pretrained(f), "path"),
    "metrics.json": (
        "run", "metrics.json",
        ["predict", "--dataset", "toy-cv", "--config", "cv-fold-1", "--model", "{f}", "--output",
         "{tmp}/p.json"], "--model {f}",
        lambda f: predict(f, load_pairs("toy-cv", "cv-fold-1"), "test"), "model_path"),
    "eval_predictions.json": (
        "run", "eval_predictions.json",
        ["ensemble", "--member", "{f}", "--member", "run", "--output", "{tmp}/e"], "--member {f}",
        lambda f: load_run(f), "path"),
    "selection_predictions.json": (
        "run-dev", SELECTION,
        ["ensemble", "--method", "ridge", "--member", "{f}", "--member", "run-dev", "--output",
         "{tmp}/e"], "--member {f}", lambda f: load_run(f, SELECTION), "path"),
    "semrel_run.json": (
        "run", "checkpoints/semrel_run.json",
        ["fit", *RUN_FLAGS, "--output", "{f}", "--resume", "last"], "--output {f}",
        lambda f: fit(load_pairs("toy-cv", "cv-fold-0"), "base", small_args(f, **RUN_ARGS),
                      resume_from_checkpoint="last"), "output_dir"),
    "trainer_state.json": (
        "run", f"{CHECKPOINT}/trainer_state.json",
        ["fit", *RUN_FLAGS, "--output", "{tmp}/o", "--resume", f"{{f}}/{CHECKPOINT}"],
        f"--resume {{f}}/{CHECKPOINT}",
        lambda f: fit(load_pairs("toy-cv", "cv-fold-0"), "base", small_args(
            Path(f).parent / "o", **RUN_ARGS), resume_from_checkpoint=f"{f}/{CHECKPOINT}"),
        f"resume_from_checkpoint:{CHECKPOINT}"),
    "semrel_ensemble.json": (
        "ensemble-rank", "semrel_ensemble.json",
        ["predict", "--dataset", "toy-cv", "--config", "cv-fold-1", "--model", "{f}", "--output",
         "{tmp}/p.json"], "--model {f}", lambda f: Ensemble.load(f), "path"),
}
STACK = ("ensemble-stack", "semrel_ensemble.json", *DOORS["semrel_ensemble.json"][2:])
RIDGE = ("ensemble-ridge", "semrel_ensemble.json", *DOORS["semrel_ensemble.json"][2:])
ROWS = "ids, predictions, labels, sources, sentence1, sentence2 hold one entry per row"


def _drop(key):
    return lambda r: {k: v for k, v in r.items() if k != key}


def _set(key, value):
    return lambda r: {**r, key: value}


def _truncate(text: str) -> str:
    return text[:len(text) // 2]


def _faults(what, file, missing, wrong, unknown, truncated) -> list[tuple]:
    """The rows of the four faults every file is checked for: a required key missing (key, rule),
    a value of the wrong type (key, value, rule), an unknown key (key, value, the file's keys;
    None for another library's file) and the file truncated (json's words for it)."""
    shown = f"checkpoints/{file}" if file == "semrel_run.json" else file
    (key, rule), (typed, value, must) = missing, wrong
    rows = [(f"{what}: no {key}", "missing", file, _drop(key), f"{shown} has no '{key}'; it must be {rule}"),
            (f"{what}: {typed} {value!r}", "type", file, _set(typed, value),
             f"{shown} has {typed} {value!r}; it must be {must}"),
            (f"{what}: truncated", "truncated", file, _truncate,
             f"{shown} is not valid JSON (truncated or corrupt: {truncated})")]
    if unknown:
        extra, extra_value, keys = unknown
        rows.append((f"{what}: unknown key", "unknown", file, _set(extra, extra_value),
                     f"{shown} has an unknown key '{extra}'; its keys are {keys}"))
    return rows


PREDICTION_KEYS = ("data, split, score_range, encoder, conditional, ids, predictions, labels, sources, sentence1, "
                   "sentence2")
CASES = [  # (id, fault, file, damage: record -> record or text -> text, the answer after the folder)
    # semrel_encoder.json: the model's kind and the options its class takes
    *_faults("encoder", "semrel_encoder.json", ("kind", "one of cross, bi, tri"),
             ("max_length", "abc", "an integer >= 1"),
             ("pooler", "mean", "kind, pooling, conditional, max_length, combine, prompt"),
             "Expecting property name enclosed in double quotes, line 4 column 3"),
    ("encoder: a key of another kind", "rule", "semrel_encoder.json", _set("combine", "concat"),
     "semrel_encoder.json has an unknown key 'combine' for a bi-encoder; its keys are kind, "
     "pooling, conditional, max_length, prompt"),
    ("encoder: conditional 'no'", "type", "semrel_encoder.json", _set("conditional", "no"),
     "semrel_encoder.json has conditional 'no'; it must be true or false"),
    # metrics.json: what fit measured
    *_faults("metrics", "metrics.json", ("score_range", "two numbers [lo, hi]"),
             ("spearman", "0.75", "null or a number"),
             ("spearmann", 0.75, "output_dir, eval_split, pearson, spearman, mse, per_source, per_language, "
              "train_pairs, train_seconds, pairs_per_second, n_omitted_groups, n_skipped_ties, data, score_range, "
              "precision, epoch_seconds, options, selection, spearman_ci, pearson_ci, start_model"),
             "Unterminated string starting at, line 26 column 5"),
    ("metrics: an option of the wrong type", "type", "metrics.json",
     lambda r: {**r, "options": {**r["options"], "seed": "3"}},
     "metrics.json has options.seed '3'; it must be an integer"),
    ("metrics: score_range of three", "type", "metrics.json", _set("score_range", [0, 1, 2]),
     "metrics.json has score_range [0, 1, 2]; it must be two numbers [lo, hi]"),
    ("metrics: train_pairs negative", "type", "metrics.json", _set("train_pairs", -1),
     "metrics.json has train_pairs -1; it must be an integer >= 0"),
    ("metrics: a per-source figure as text", "type", "metrics.json", _set("per_source", {"a": "x"}),
     "metrics.json has per_source.a 'x'; it must be null or a number"),
    # eval_predictions.json: scores on the evaluated split
    *_faults("predictions", "eval_predictions.json", ("labels", "a list of numbers"),
             ("predictions", {}, "a list of numbers"), ("label", [], PREDICTION_KEYS),
             "Expecting ',' delimiter, line 1 column 333"),
    ("predictions: one prediction short", "rule", "eval_predictions.json",
     lambda r: {**r, "predictions": r["predictions"][:-1]},
     f"eval_predictions.json has 15 predictions for 16 ids; {ROWS}"),
    ("predictions: a label as text", "type", "eval_predictions.json",
     lambda r: {**r, "labels": [*r["labels"][:3], "0.5", *r["labels"][4:]]},
     "eval_predictions.json has labels[3] '0.5'; it must be a number"),
    ("predictions: an encoder of no kind", "type", "eval_predictions.json", _set("encoder", "quad"),
     "eval_predictions.json has encoder 'quad'; it must be one of cross, bi, tri"),
    # selection_predictions.json: the kept model's dev predictions, with the pairs' texts
    *_faults("dev predictions", "selection_predictions.json", ("ids", "a list of row ids (strings or integers)"),
             ("split", 0, "a string"), ("sentence3", [], PREDICTION_KEYS),
             "Expecting ',' delimiter, line 1 column 482"),
    ("dev predictions: one sentence short", "rule", "selection_predictions.json",
     lambda r: {**r, "sentence2": r["sentence2"][1:]},
     f"selection_predictions.json has 15 sentence2 for 16 ids; {ROWS}"),
    # checkpoints/semrel_run.json: the run's fingerprint
    *_faults("fingerprint", "semrel_run.json", ("options", "an object of the run's options"),
             ("model", ["base"], "a string"), ("dataset", "toy-cv", "cv, data, model, options, eval_data, incomplete"),
             "Expecting property name enclosed in double quotes, line 13 column 4"),
    ("fingerprint: a family of none", "type", "semrel_run.json", _set("cv", "kfold"),
     "checkpoints/semrel_run.json has cv 'kfold'; it must be one of cv, lodo"),
    # a checkpoint's trainer_state.json (transformers' file: semrel reads global_step; its other keys are its own)
    *_faults("trainer state", "trainer_state.json", ("global_step", "an integer >= 0"),
             ("global_step", "2", "an integer >= 0"), None, "Unterminated string starting at, line 16 column 3"),
    # semrel_ensemble.json: method, members, weights / stack / references
    *_faults("ensemble", "semrel_ensemble.json", ("method", "one of rank, stack, ridge, gbm"),
             ("conditional", "no", "true or false"),
             ("weight", [1, 1], "method, members, score_range, conditional, weights, stack, reference, learned, "
              "models"), "Expecting ',' delimiter, line 44 column 7"),
    ("ensemble: no members", "type", "semrel_ensemble.json", _set("members", []),
     "semrel_ensemble.json has members []; it must be a list of member folders (strings), at "
     "least one"),
    ("ensemble: one weight for two members", "rule", "semrel_ensemble.json", _set("weights", [1.0]),
     "semrel_ensemble.json has 1 weights for 2 members; one per member"),
    ("ensemble: one member model for two members", "rule", "semrel_ensemble.json", _set("models", [None]),
     "semrel_ensemble.json has 1 models for 2 members; one per member"),
    ("ensemble: a Hub member without its commit", "rule", "semrel_ensemble.json",
     _set("models", [None, {"spec": "ns/m", "kind": "bi-encoder", "source": "hub", "hub_id": "ns/m"}]),
     "semrel_ensemble.json has models[1].source 'hub' with hub_id 'ns/m' and revision None; a Hub "
     "member (and only one) records both"),
    ("ensemble: one reference for two members", "rule", "semrel_ensemble.json",
     lambda r: {**r, "reference": r["reference"][:1]},
     "semrel_ensemble.json has 1 reference for 2 members; one per member"),
    ("ensemble: a stack without its stack", "rule", STACK, _set("stack", None),
     "semrel_ensemble.json has method 'stack' and no stack; a stack ensemble records its stack"),
    ("ensemble: a stack weight as text", "type", STACK,
     lambda r: {**r, "stack": {**r["stack"], "weights": ["a", 1.0]}},
     "semrel_ensemble.json has stack.weights[0] 'a'; it must be a number"),
    ("ensemble: a stack without its intercept", "missing", STACK,
     lambda r: {**r, "stack": {k: v for k, v in r["stack"].items() if k != "intercept"}},
     "semrel_ensemble.json has no 'stack.intercept'; it must be a number"),
    ("ensemble: a learned stack without its rows", "missing", RIDGE,
     lambda r: {**r, "learned": {k: v for k, v in r["learned"].items() if k != "fit_on"}},
     "semrel_ensemble.json has no 'learned.fit_on'; it must be a list of the rows it was fit on"),
    ("ensemble: a ridge state without coef", "missing", RIDGE,
     lambda r: {**r, "learned": {**r["learned"], "state": {"intercept": 0.0, "alpha": 1.0}}},
     "semrel_ensemble.json has no 'learned.state.coef'; it must be a list of numbers"),
    ("ensemble: a fit row id as a number", "type", RIDGE,
     lambda r: {**r, "learned": {**r["learned"], "fit_on": [
         {**r["learned"]["fit_on"][0], "ids": [1, *r["learned"]["fit_on"][0]["ids"][1:]]}]}},
     "semrel_ensemble.json has learned.fit_on[0].ids[0] 1; it must be a string"),
    ("ensemble: a gbm learner with a ridge state", "rule", RIDGE,
     lambda r: {**r, "learned": {**r["learned"], "learner": "gbm"}},
     "semrel_ensemble.json has no 'learned.state.model'; it must be a string"),
    ("ensemble: method ridge, a gbm stack", "rule", RIDGE,
     lambda r: {**r, "learned": {**r["learned"], "learner": "gbm", "state": {"model": "{}"}}},
     "semrel_ensemble.json has method 'ridge' and a learned 'gbm' stack"),
    ("ensemble: the char-ridge feature without its model", "rule", RIDGE,
     lambda r: {**r, "learned": {**r["learned"], "features": ["char-ridge"]}},
     "semrel_ensemble.json has learned.features ['char-ridge'] and no learned.char_ridge; the "
     "char-ridge feature and its fitted model go together"),
    ("ensemble: a char ridge short of coefficients", "rule", RIDGE,
     lambda r: {**r, "learned": {**r["learned"], "features": ["char-ridge"], "char_ridge": {
         "data": "d/default", "split": "train", "pairs": 9, "ngrams": ["ab", "bc"], "idf": [1.0, 2.0],
         "coef": [0.1] * 5, "intercept": 0.0}}},
     "semrel_ensemble.json has 2 learned.char_ridge.ngrams, 2 idf and 5 coef; one idf per n-gram "
     "and 2 × n-grams + 2 coefficients (u∘v, |u − v|, cosine, Dice)"),
]


def _door(file):
    return file if isinstance(file, tuple) else DOORS[file]


def _damaged(root: Path, tmp: Path, file, damage) -> Path:
    """A copy of the folder ``file`` lives in, with ``file`` damaged."""
    folder, path, *_ = _door(file)
    copy = tmp / f"damaged-{folder}"
    shutil.copytree(root / folder, copy)
    target = copy / path
    text = target.read_text()
    if damage is _truncate:
        target.write_text(_truncate(text))
    else:
        target.write_text(json.dumps(damage(json.loads(text)), indent=2))
    return copy


def _fill(text: str, **values) -> str:
    return text.format_map({k: str(v) for k, v in values.items()})


@pytest.mark.parametrize("file,damage,answer", [c[2:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_corrupt_run_file_is_one_line_through_the_command(here, tmp_path, capsys, file, damage,
                                                            answer):
    folder = _damaged(here, tmp_path, file, damage)
    _, _, argv, where, _, _ = _door(file)
    argv = [_fill(a, f=folder, tmp=tmp_path) for a in argv]
    assert main(argv) == 2
    assert capsys.readouterr().err == (f"semrel {argv[0]}: error: "
                                       f"{_fill(where, f=folder)}: {answer}\n")
    assert not {"p.json", "e", "o"} & {p.name for p in tmp_path.iterdir()}


@pytest.mark.parametrize("file,damage,answer", [c[2:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_corrupt_run_file_is_a_parameter_error_in_python(here, tmp_path, file, damage, answer):
    folder = _damaged(here, tmp_path, file, damage)
    _, _, _, _, call, parameter = _door(file)
    parameter, _, below = parameter.partition(":")
    value = f"{folder}/{below}" if below else str(folder)
    with pytest.raises(ParameterError) as raised:
        call(str(folder))
    assert str(raised.value) == f"{parameter}={value!r}: {answer}"


def test_another_library_s_file_may_hold_keys_semrel_does_not_read(here, tmp_path):
    """trainer_state.json is transformers': an unknown key is its own, not a fault."""
    folder = _damaged(here, tmp_path, "trainer_state.json", _set("new_in_transformers_9", 1))
    assert checkpoint_step(folder / CHECKPOINT) == 2
    check_checkpoint_folder(folder / CHECKPOINT)


def test_every_file_of_the_saved_runs_passes_its_schema(root):
    """What earlier versions wrote is valid: every run and ensemble folder of the saved runs
    loads through the checking readers."""
    from semrel.trainers.run_folder import check_cv_folder, check_run_folder
    from semrel.trainers.run_folder.files import read_fingerprint

    for config in root.rglob("semrel_encoder.json"):
        check_run_folder(config.parent, written_by_fit=(config.parent / "metrics.json").is_file())
    for fingerprint in root.rglob("semrel_run.json"):
        assert read_fingerprint(fingerprint.parent.parent)["options"]
    for state in root.rglob("trainer_state.json"):
        assert checkpoint_step(state.parent) in (1, 2)
    for kind in ("rank", "stack", "ridge"):
        assert Ensemble.load(root / f"ensemble-{kind}").method == kind
    for member in ("bi", "cross"):
        check_cv_folder(root / "cv" / member)
    assert len(load_run(root / "run-dev", SELECTION).sentence1) == 16


def test_the_table_covers_every_file_and_fault():
    """Each file of a run and an ensemble folder meets each fault (an open file, transformers'
    trainer_state.json, takes unknown keys: tested above)."""
    for file in DOORS:
        faults = {c[1] for c in CASES if (c[2] if isinstance(c[2], str) else c[2][1].split("/")[-1])
                  == file}
        expected = {"missing", "type", "truncated"} | ({"unknown"} if file != "trainer_state.json"
                                                       else set())
        assert expected <= faults, (file, expected - faults)
