"""Every folder and file argument of ``semrel fit | cv | predict | ensemble`` answers
a fault in one line naming the flag and the path, with exit status 2, before anything is loaded
or trained; ``predict`` keeps to the score range its run was trained on; a submission file is
written beside and renamed in.

The sweep: each output argument of the parsers (``--output`` of fit, cv, predict and ensemble,
``--cache-dir``) x {parent is a file, read-only, a folder where a file is written / a file where
a folder is}, a missing parent being created; each model or run input (``--model`` of fit, cv
and predict, cv's ``--member ENCODER@PATH``, ensemble's ``--member`` and ``--cv-dir``) x
{missing, empty folder, truncated config.json, no weights, truncated weights} and the run files
(``semrel_encoder.json`` without ``kind``, with an unknown one, not JSON; a corrupt ensemble).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from project import REPO
from semrel.cli import build_parser, main
from trainer_fixtures import small_args, tiny_encoder
from trainer_fixtures import toy_folder as save_toy_folder

READ_ONLY = Path("/sys")  # no file can be created there, not even by root
ENV = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1",
       "TOKENIZERS_PARALLELISM": "false"}


def _truncate(file: Path) -> None:
    raw = file.read_bytes()
    file.write_bytes(raw[:len(raw) // 2])


def _variants(source: Path, root: Path) -> dict[str, Path]:
    """``source`` (a model folder) and its broken copies under ``root``."""
    out = {"missing": root / "missing", "empty": root / "empty"}
    out["empty"].mkdir(parents=True)
    for name, damage in {
        "truncated-config": lambda f: _truncate(f / "config.json"),
        "no-weights": lambda f: (f / "model.safetensors").unlink(),
        "truncated-weights": lambda f: _truncate(f / "model.safetensors"),
    }.items():
        out[name] = root / name
        shutil.copytree(source, out[name])
        damage(out[name])
    return out


@pytest.fixture(scope="module")
def paths(tmp_path_factory, upstream, cache_dir):
    """Every path the cases name: a tiny BERT and broken copies, a saved cross-encoder run (not
    trained: its weights are the fresh model's; its metrics.json records [0, 1]) and broken
    copies, an ensemble folder, a [0, 1] toy dataset, a file, a CV folder."""
    from semrel.trainers.ensemble import Ensemble
    from semrel.trainers.models import build_model

    root = tmp_path_factory.mktemp("cli-paths")
    base = tiny_encoder(root / "base")
    data = save_toy_folder(root / "data", 32, 16)
    run = build_model("cross", base).save_pretrained(root / "run")
    (run / "metrics.json").write_text(json.dumps({"data": str(data), "score_range": [0.0, 1.0]}))
    (run / "eval_predictions.json").write_text(json.dumps({
        "data": str(data), "split": "test", "score_range": [0.0, 1.0], "encoder": "cross",
        "conditional": False, "ids": [0, 1, 2], "predictions": [0.1, 0.5, 0.9],
        "labels": [0.0, 0.5, 1.0], "sources": None}))
    shutil.copytree(run, root / "run2")
    ensemble = Ensemble.build([run, root / "run2"]).save(root / "ensemble")
    p = {"base": base, "data": data, "run": run, "run2": root / "run2", "ensemble": ensemble}
    for name, path in _variants(base, root / "bases").items():
        p[f"base-{name}"] = path
    (root / "runs").mkdir()
    for name, path in _variants(run, root / "runs").items():
        p[f"run-{name}"] = path
    for name, text in {"config-not-json": None, "no-kind": {"conditional": False},
                       "unknown-kind": {"kind": "quad"}, "encoder-not-json": "{kind: cross"}.items():
        p[f"run-{name}"] = root / "runs" / name
        shutil.copytree(run, p[f"run-{name}"])
        if text is None:
            (p[f"run-{name}"] / "config.json").write_text("<html>not json</html>")
        else:
            (p[f"run-{name}"] / "semrel_encoder.json").write_text(
                text if isinstance(text, str) else json.dumps(text))
    p["ensemble-corrupt"] = root / "ensemble-corrupt"
    shutil.copytree(ensemble, p["ensemble-corrupt"])
    _truncate(p["ensemble-corrupt"] / "semrel_ensemble.json")
    p["ensemble-broken-member"] = root / "ensemble-broken-member"
    shutil.copytree(ensemble, p["ensemble-broken-member"])
    member = sorted((p["ensemble-broken-member"] / "members").iterdir())[0]
    (member / "model.safetensors").unlink()
    p["file"] = root / "a-file"
    p["file"].write_text("not a folder\n")
    p["cv"] = root / "cv"
    for fold in ("cv-fold-0", "cv-fold-1"):
        (p["cv"] / fold).mkdir(parents=True)
        shutil.copy(run / "eval_predictions.json", p["cv"] / fold)
    p["cv-corrupt"] = root / "cv-corrupt"
    shutil.copytree(p["cv"], p["cv-corrupt"])
    (p["cv-corrupt"] / "cv-fold-1" / "eval_predictions.json").write_text('{"data": "toy", "spl')
    p["cv-empty"] = root / "cv-empty"
    p["cv-empty"].mkdir()
    p["checkpoint-torn"] = root / "checkpoint-torn"  # transformers writes trainer_state.json last
    p["checkpoint-torn"].mkdir()
    (p["checkpoint-torn"] / "trainer_state.json").write_text('{"global_step": 1}')
    shutil.copy(base / "model.safetensors", p["checkpoint-torn"])
    _truncate(p["checkpoint-torn"] / "model.safetensors")
    p.update(tmp=root, mirror=upstream, cache=cache_dir)
    return p


FIT = ["fit", "--dataset", "{data}", "--score-range", "0", "1", "--max-steps", "1"]
CV = ["cv", "--dataset", "str-2021", "--mirror", "{mirror}", "--cache-dir", "{cache}",
      "--max-steps", "1"]
PREDICT = ["predict", "--dataset", "{data}", "--score-range", "0", "1"]
ENSEMBLE = ["ensemble", "--member", "{run}"]
BASE_FAULTS = {  # model input fault -> what the one line says after "--model PATH: "
    "missing": "no such model folder, and neither a packaged model name (e5-small, minilm, mpnet) "
               "nor a Hub model id (namespace/name[@revision])",
    "empty": "is an empty folder, not a model folder",
    "truncated-config": "config.json is not valid JSON (truncated or corrupt: Unterminated "
                        "string starting at, line 15 column 3)",
    "no-weights": "holds no weights (model.safetensors or pytorch_model.bin) beside its "
                  "config.json",
    "truncated-weights": "model.safetensors is not a whole safetensors file (truncated or "
                         "corrupt: incomplete metadata, file not fully covered)",
}
RUN_FAULTS = {**BASE_FAULTS,
              "truncated-config": "config.json is not valid JSON (truncated or corrupt: "
                                  "Expecting value, line 19 column 17)",
              "config-not-json": "config.json is not valid JSON (truncated or corrupt: Expecting "
                                 "value, line 1 column 1)",
              "no-kind": "semrel_encoder.json has no 'kind'; it must be one of cross, bi, tri",
              "unknown-kind": "semrel_encoder.json has kind 'quad'; it must be one of cross, "
                              "bi, tri",
              "encoder-not-json": "semrel_encoder.json is not valid JSON (truncated or corrupt: "
                                  "Expecting property name enclosed in double quotes, line 1 "
                                  "column 2)"}
PREDICT_FAULTS = {**RUN_FAULTS,  # predict takes any model: a folder is read by its kind
                  "missing": BASE_FAULTS["missing"],
                  "empty": "is an empty folder, not a model folder"}

CV_DIR_FAULTS = [  # (case, the two --cv-dir of an ensemble, the one line after "semrel ensemble: error: ")
    ("missing", ("{cv}", "{tmp}/nope"), "--cv-dir {tmp}/nope: no such CV folder"),
    ("empty", ("{cv-empty}", "{cv}"), "--cv-dir {cv-empty}: is an empty folder, not a CV folder"),
    ("a file", ("{file}", "{cv}"), "--cv-dir {file}: is a file, not a CV folder"),
    ("corrupt fold", ("{cv}", "{cv-corrupt}"), "--cv-dir {cv-corrupt}: cv-fold-1/eval_predictions.json is not "
     "valid JSON (truncated or corrupt: Unterminated string starting at, line 1 column 17)"),
]
CASES = [  # (case id, argv, the one line on stderr after "semrel COMMAND: error: ")
    *[(f"fit --model {f}", [*FIT, "--model", f"{{base-{f}}}", "--output", "{tmp}/o"],
       f"--model {{base-{f}}}: {m}") for f, m in BASE_FAULTS.items()],
    *[(f"fit --resume {f}", [*FIT, "--model", "{base}", "--output", "{tmp}/o", "--resume", where],
       f"--resume {where}: {m}") for f, where, m in (
          ("missing", "{tmp}/nope", "no such checkpoint folder"),
          ("empty", "{cv-empty}", "is an empty folder, not a checkpoint folder"),
          ("a file", "{file}", "is a file, not a checkpoint folder"),
          ("no trainer state", "{base}", "is not a complete checkpoint (no trainer_state.json)"),
          ("truncated weights", "{checkpoint-torn}", "model.safetensors is not a whole "
           "safetensors file (truncated or corrupt: incomplete metadata, file not fully "
           "covered)"))],
    *[(f"cv --model {f}", [*CV, "--model", f"{{base-{f}}}", "--output", "{tmp}/o"],
       f"--model {{base-{f}}}: {m}") for f, m in BASE_FAULTS.items()],
    *[(f"cv --member {f}", [*CV, "--member", f"bi@{{base-{f}}}", "--output", "{tmp}/o"],
       f"--member bi@{{base-{f}}}: {m}") for f, m in BASE_FAULTS.items()],
    *[(f"predict --model {f}", [*PREDICT, "--model", f"{{run-{f}}}", "--output", "{tmp}/p.json"],
       f"--model {{run-{f}}}: {m}") for f, m in PREDICT_FAULTS.items()],
    ("predict --model ensemble corrupt", [*PREDICT, "--model", "{ensemble-corrupt}", "--output",
                                          "{tmp}/p.json"],
     "--model {ensemble-corrupt}: semrel_ensemble.json is not valid JSON (truncated or corrupt: "
     "Expecting ':' delimiter, line 11 column 15)"),
    ("predict --model ensemble member", [*PREDICT, "--model", "{ensemble-broken-member}",
                                         "--output", "{tmp}/p.json"],
     "--model {ensemble-broken-member}: its member members/0-run holds no weights "
     "(model.safetensors or pytorch_model.bin) beside its config.json"),
    *[(f"ensemble --member {f}", [*ENSEMBLE, "--member", f"{{run-{f}}}", "--output", "{tmp}/e"],
       f"--member {{run-{f}}}: {m}") for f, m in RUN_FAULTS.items()],
    # a model semrel saved without its run record is scored on the rows the run scored, which
    # here (3 made-up ids) are not the data's
    ("ensemble --member without metrics", [*ENSEMBLE, "--member", "{run-nometrics}", "--output",
                                           "{tmp}/e"],
     "the rows of {data}/test are not the ones {run} scored (pair ids differ): the data changed "
     "since the run"),
    *[(f"ensemble --cv-dir {case}", [*ENSEMBLE, "--member", "{run2}", "--cv-dir", first, "--cv-dir", second,
                                      "--output", "{tmp}/e"], said) for case, (first, second), said in CV_DIR_FAULTS],
    # outputs: a folder where a file is written, a file where a folder is, a file as parent,
    # a read-only place (nothing can be created in /sys, not even by root)
    ("predict --output a folder", [*PREDICT, "--model", "{run}", "--output", "{tmp}"],
     "--output {tmp}: is a folder; give the name of the file to write"),
    ("predict --output under a file", [*PREDICT, "--model", "{run}", "--output",
                                       "{file}/p.json"],
     "--output {file}/p.json: cannot be created: {file} is a file, not a folder"),
    ("predict --output read-only", [*PREDICT, "--model", "{run}", "--output", "/sys/p.json"],
     "--output /sys/p.json: cannot be written: no file can be created in /sys (Permission "
     "denied)"),
    ("predict --output read-only, missing parent", [*PREDICT, "--model", "{run}", "--output",
                                                    "/sys/new/p.json"],
     "--output /sys/new/p.json: cannot be written: no file can be created in /sys (Permission "
     "denied)"),
    *[(f"{cmd} --output a file", [*args, "--output", "{file}"], "--output {file}: is a file, "
       "not a folder") for cmd, args in (("fit", [*FIT, "--model", "{base}"]),
                                         ("cv", [*CV, "--model", "{base}"]),
                                         ("ensemble", [*ENSEMBLE, "--member", "{run2}"]))],
    *[(f"{cmd} --output under a file", [*args, "--output", "{file}/o"],
       "--output {file}/o: cannot be created: {file} is a file, not a folder")
      for cmd, args in (("fit", [*FIT, "--model", "{base}"]), ("cv", [*CV, "--model", "{base}"]),
                        ("ensemble", [*ENSEMBLE, "--member", "{run2}"]))],
    *[(f"{cmd} --output read-only", [*args, "--output", "/sys/o"],
       "--output /sys/o: cannot be written: no file can be created in /sys (Permission denied)")
      for cmd, args in (("fit", [*FIT, "--model", "{base}"]), ("cv", [*CV, "--model", "{base}"]),
                        ("ensemble", [*ENSEMBLE, "--member", "{run2}"]))],
    *[(f"{cmd} --cache-dir {what}", [*args, "--cache-dir", where],
       f"--cache-dir {where}: {message}")
      for cmd, args in (("fit", [*FIT, "--model", "{base}", "--output", "{tmp}/o"]),
                        ("cv", [*CV, "--model", "{base}", "--output", "{tmp}/o"]),
                        ("predict", [*PREDICT, "--model", "{run}", "--output", "{tmp}/p.json"]))
      for what, where, message in (
          ("a file", "{file}", "is a file, not a folder"),
          ("under a file", "{file}/c", "cannot be created: {file} is a file, not a folder"),
          ("read-only", "/sys/c", "cannot be written: no file can be created in /sys "
                                  "(Permission denied)"))],
    # the score range: a run trained on [0, 1] predicts on [0, 1], never rescaled to another
    ("predict --score-range other than the run's", ["predict", "--dataset", "{data}",
                                                     "--score-range", "0", "5", "--model", "{run}",
                                                     "--output", "{tmp}/p.json"],
     "--score-range 0 5: differs from the score range [0, 1] that --model {run} was trained "
     "on (its metrics.json); predictions are on that scale: leave --score-range out"),
]


def _fill(text: str, paths: dict) -> str:
    return text.format_map({k: str(v) for k, v in paths.items()})


@pytest.fixture(scope="module")
def no_metrics(paths):
    paths["run-nometrics"] = paths["tmp"] / "run-nometrics"
    shutil.copytree(paths["run"], paths["run-nometrics"], ignore=shutil.ignore_patterns("metrics*"))
    return paths


@pytest.mark.parametrize("argv,line", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_faulty_path_argument_is_one_line_naming_it(no_metrics, argv, line, capsys):
    paths = no_metrics
    argv = [_fill(a, paths) for a in argv]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err == f"semrel {argv[0]}: error: {_fill(line, paths)}\n"
    assert not (paths["tmp"] / "o").exists() and not (paths["tmp"] / "e").exists()
    assert not (paths["tmp"] / "p.json").exists()


def test_every_path_argument_of_the_parsers_is_in_the_sweep():
    """The sweep covers every flag of the training commands that names a folder or file to
    read a model from or to write to (a new one must join the table)."""
    commands = build_parser()._subparsers._group_actions[0].choices
    swept = {(c[1][0], a) for c in CASES for a in c[1] if a.startswith("--")}
    for command in ("fit", "cv", "predict", "ensemble"):
        flags = {o for a in commands[command]._actions for o in a.option_strings}
        swept_flags = {"--output", "--model", "--member", "--cv-dir", "--cache-dir", "--resume"}
        paths = flags & swept_flags
        assert paths == flags & (swept_flags | {"--output-dir", "--submission"})
        assert {(command, f) for f in paths} <= swept, command


def test_predict_takes_the_run_s_range_and_writes_its_file_whole(paths, capsys):
    """A dataset folder without a score range takes the run's ([0, 1]); the same range given
    is fine; a missing parent is created; an existing file is replaced whole."""
    out = paths["tmp"] / "new" / "deeper" / "p.json"
    argv = ["predict", "--dataset", str(paths["data"]), "--model", str(paths["run"]),
            "--output", str(out)]
    assert main(argv) == 0
    written = json.loads(out.read_text())
    assert list(written) == [str(i) for i in range(16)]
    assert all(0.0 <= v <= 1.0 for v in written.values())
    assert sorted(p.name for p in out.parent.iterdir()) == ["p.json"]  # nothing staged is left
    assert main([*argv, "--score-range", "0", "1"]) == 0
    assert json.loads(out.read_text()) == written
    capsys.readouterr()


def test_a_failed_write_leaves_the_previous_file(tmp_path, monkeypatch):
    from semrel.trainers.prediction import write_submission

    out = write_submission([0.5, 0.25], tmp_path / "p.json")
    before = out.read_text()

    def full_disk(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(ValueError, match=r"path='.*p.json': could not be written \(No space "
                                         r"left on device\); whatever was there is unchanged"):
        write_submission([0.1, 0.2, 0.3], out)
    assert out.read_text() == before and sorted(p.name for p in tmp_path.iterdir()) == ["p.json"]


@pytest.mark.slow  # trains
def test_a_trained_run_predicts_on_its_own_range_only(paths, tmp_path, capsys):
    """fit on [0, 1] then predict: scores stay on [0, 1]; data declared on [0, 5] is refused
    (its predictions would be rescaled to a range the run never learnt)."""
    import datasets

    from semrel.dataset_scripts.pairs import load_pairs
    from semrel.trainers.fitting import fit
    from semrel.trainers.prediction import predict

    run = fit(load_pairs(str(paths["data"]), score_range=(0, 1)), paths["base"],
              small_args(tmp_path / "run", encoder="bi"))
    data = load_pairs(str(paths["data"]), score_range=(0, 1))
    scores = predict(run.output_dir, data)
    assert scores.min() >= -1.0 and scores.max() <= 1.0
    five = datasets.DatasetDict({k: v.map(lambda r: {"score": r["score"] * 5})
                                 for k, v in data.splits.items()})
    five.save_to_disk(tmp_path / "five")
    with pytest.raises(ValueError, match=r"model_path='.*run': was trained on scores in "
                                         r"\[0.0, 1.0\] \(its metrics.json\), but .*five is on "
                                         r"\[0.0, 5.0\]"):
        predict(run.output_dir, load_pairs(str(tmp_path / "five"), score_range=(0, 5)))
    argv = ["predict", "--dataset", str(paths["data"]), "--model", run.output_dir, "--output",
            str(tmp_path / "p.json")]
    assert main([*argv, "--score-range", "0", "5"]) == 2  # never every score silently times 5
    assert capsys.readouterr().err.endswith(
        f"semrel predict: error: --score-range 0 5: differs from the score range [0, 1] that "
        f"--model {run.output_dir} was trained on (its metrics.json); predictions are on that "
        "scale: leave --score-range out\n")
    assert not (tmp_path / "p.json").exists()
    assert main(argv) == 0
    assert list(json.loads((tmp_path / "p.json").read_text()).values()) == pytest.approx(
        scores.tolist())


@pytest.mark.slow  # a subprocess per case
@pytest.mark.parametrize("case", ["predict --model no-kind", "predict --output a folder",
                                  "fit --model truncated-weights"])
def test_the_installed_command_answers_in_one_line(no_metrics, case):
    argv, line = {c[0]: c[1:] for c in CASES}[case]
    argv = [_fill(a, no_metrics) for a in argv]
    done = subprocess.run([sys.executable, "-m", "semrel", *argv], capture_output=True,
                          text=True, env=ENV, timeout=300)
    assert done.returncode == 2
    assert done.stderr == f"semrel {argv[0]}: error: {_fill(line, no_metrics)}\n"


def test_the_python_api_refuses_the_same_folders(paths):
    """``Ensemble.build``, ``PairEncoder.from_pretrained`` and ``predict`` check as the CLI does,
    naming their own parameters."""
    from semrel.dataset_scripts.pairs import load_pairs
    from semrel.metrics.errors import ParameterError
    from semrel.trainers.ensemble import Ensemble
    from semrel.trainers.models import PairEncoder
    from semrel.trainers.prediction import predict

    with pytest.raises(ParameterError, match=r"^members='.*no-weights': holds no weights"):
        Ensemble.build([paths["run"], paths["run-no-weights"]])
    with pytest.raises(ParameterError, match=r"^path='.*no-kind': semrel_encoder.json has no "
                                             r"'kind'; it must be one of cross, bi, tri$"):
        PairEncoder.from_pretrained(paths["run-no-kind"])
    data = load_pairs(str(paths["data"]), score_range=(0, 5))
    with pytest.raises(ParameterError, match=r"^model_path='.*truncated-weights': "
                                             r"model.safetensors is not a whole"):
        predict(paths["run-truncated-weights"], data)
    with pytest.raises(ParameterError, match=r"^model_path='.*run': was trained on scores in "
                                             r"\[0.0, 1.0\] \(its metrics.json\), but .*data is "
                                             r"on \[0.0, 5.0\]"):
        predict(paths["run"], data)


def test_an_os_error_mid_run_is_one_line(paths, monkeypatch, capsys):
    """What no check up front can foresee (the disk filling while a run writes) is answered in
    one line naming the path, exit 2."""
    import semrel.trainers.prediction as prediction

    def full_disk(predictions, path, **kwargs):
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(prediction, "write_submission", full_disk)
    monkeypatch.setattr(prediction, "predict", lambda *args, **kwargs: [0.5] * 16)
    out = paths["tmp"] / "full.json"
    assert main(["predict", "--dataset", str(paths["data"]), "--model", str(paths["run"]),
                 "--output", str(out)]) == 2
    assert capsys.readouterr().err == f"semrel predict: error: {out}: No space left on device\n"
