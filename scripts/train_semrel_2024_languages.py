"""Fine-tune e5-small for every SemRel-2024 language (Track A) and across languages (Track C),
score test through the official evaluation, and set the figures beside the task's.

**Track A**, each language with a train split (amh arq ary eng esp hau kin mar tel), in
``OUT/track-a/<lang>/``; everything is chosen on the language's dev split, nothing on test:

- a bi- and a cross-encoder on e5-small (``semrel fit --model e5-small``), each at every learning
  rate of :data:`GRID_A`, trained :data:`EPOCHS_A` epochs on the language's train split, evaluated
  on its dev split after each epoch and the best epoch kept (``--eval-dataset semrel-2024 --eval-config
  <lang> --eval-split validation --selection-overlap omit``: the dev pairs also in train, kin's 48, mar's 3
  and tel's 4, are left out and counted); per encoder the learning rate whose kept epoch scores best on dev
  is the member;
- two ensembles of the two members: a rank average (``semrel ensemble --method rank``, fits
  nothing) and a ridge stack of their scores with Dice and the character n-gram ridge fit on the
  language's train split as features (``--method ridge --features dice char-ridge``), fit on dev.
  The stack's dev figure is cross-fitted (:data:`CHOICE_FOLDS` folds of dev, each scored by the
  stack fit on the others); the ensemble with the better dev figure is the language's final model,
  and only it predicts test;
- the character n-gram ridge and Dice on their own, as baselines (they fit nothing on dev).

**Track C**, each target of a ``cross-lingual-<lang>`` config, in ``OUT/track-c/``: the bi- and
the cross-encoder trained on every Track A train set but the target's (:data:`SETTINGS_C`, no
epoch chosen: Track C uses no labelled data of the target, and its dev split would be) and their
rank average, fixed beforehand. The targets without a train split (afr arb hin ind pan) all train
on the nine train sets: those members are trained once on config ``all`` (``train-all/``). The
``all`` ensemble, trained without Czech data, also scores **Czech News STS**'s free test
(``--czech``): Pearson, Spearman and MSE on its 0-6 scale, the model's [0, 1] score times 6
(a linear map of the label scale; nothing fit on Czech).

Every step that trains or predicts is a ``semrel`` command, printed before it runs. Each member's
and ensemble's dev and test predictions are ``PairID,Pred_Score`` files in ``<unit>/predictions/``
scored by ``semrel evaluate`` (test only where its labels are published: not eng, not esp). A
language (target), and Czech, is finished when its ``result.json`` is written, and kept on a rerun; a member
whose folder holds ``metrics.json`` is kept; one cut off resumes from its last checkpoint
(``--resume last``). A finished member's Trainer checkpoints are removed (the model is saved at the
top of its folder). ``--jobs N`` runs N processes at once (a GPU is shared: e5-small leaves most of
it idle): the members' fits, the Track C rank averages, and each unit's scoring once its members
are trained, each with its output in a log beside its folder; the commands and choices are those
of a run without it, but for the Track C members' resume checkpoints, which are not saved.
``OUT/study.json`` gathers every result, ``OUT/tables.md`` the tables of benchmarks/RESULTS.md;
``--write-results`` stores them in benchmarks/results.json, and, once every labelled Track A
language (and Czech) is done, the report's best fine-tuned figures. ``--publish`` copies each Track A
language's final test file (``pred_<lang>.csv``) and Czech's (the rank average's 0-6 scores, as
``PairID,Pred_Score``) under ``benchmarks/predictions/`` and records them in benchmarks/results.json
(:mod:`semrel.publishing.prediction_files`); rerun on a finished study, it only publishes.

    python scripts/train_semrel_2024_languages.py [--track a] [--language kin] [--czech]
    python scripts/train_semrel_2024_languages.py --model e5-small=tiny-bert --max-steps 2 \\
        --language kin --output runs/languages-smoke       # a smoke run with a tiny model
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from semrel import cli
from semrel.dataset_scripts.semrel_2024.files import TRACK_A, TRACK_C
from semrel.dataset_scripts.semrel_2024.official import BEST, LABSE, LABSE_CROSS
from semrel.metrics.output_files import write_whole
from semrel.publishing import prediction_files

MODEL = "e5-small"
GRID_A = {"bi": ("2e-5", "5e-5"), "cross": ("2e-5", "5e-5")}  # learning rates per encoder
EPOCHS_A = 4  # the best epoch of these is kept, on dev
SETTINGS_C = {"bi": "2e-5", "cross": "2e-5"}  # learning rate per encoder, fixed beforehand
EPOCHS_C = 2
SAVE_STEPS_C = 250  # Track C runs keep a checkpoint this often, to resume
CHOICE_FOLDS = 5
SHARED = "all"  # the config the Track C targets without a train split train on
CZECH_SCALE = 6.0  # Czech News STS scores 0-6: prediction = 6 × the model's [0, 1] score
RESULTS_KEY = "semrel_2024_languages"


@dataclass(frozen=True)
class Unit:
    """One Track A language or Track C target: where its members train (``train``: a config of
    semrel-2024) and what it is scored on (``config``'s validation and test)."""

    track: str
    language: str
    folder: Path
    train: str
    members: Path  # the folder its members and ensembles live in

    @property
    def config(self) -> str:
        return self.language if self.track == "A" else f"cross-lingual-{self.language}"


def units(out: Path, tracks, languages) -> list[Unit]:
    chosen = []
    if "a" in tracks:
        chosen += [Unit("A", lang, out / "track-a" / lang, lang, out / "track-a" / lang)
                   for lang in TRACK_A if lang in languages]
    if "c" in tracks:
        for lang in TRACK_C:
            if lang in languages:
                train = f"cross-lingual-{lang}" if lang in TRACK_A else SHARED
                chosen.append(Unit("C", lang, out / "track-c" / lang, train,
                                   out / "track-c" / f"train-{lang if lang in TRACK_A else SHARED}"))
    return chosen


class Study:
    """What every fit of one invocation shares: the model folder, precision and smoke steps."""

    def __init__(self, args):
        self.model = dict(args.model).get(MODEL, MODEL)
        self.precision, self.max_steps = args.precision, args.max_steps

    def fit(self, folder: Path, config: str, encoder: str, learning_rate: str, epochs: int,
            choose_on: str | None) -> float | None:
        """Train one member unless its folder holds a finished run; its wall seconds (None:
        kept). ``choose_on``: the config whose dev split chooses the epoch (None: the last)."""
        if (folder / "metrics.json").is_file():
            print(f"kept: {folder} holds a finished run", flush=True)
            return None
        seconds = cli.run_logged(*self.fit_argv(folder, config, encoder, learning_rate, epochs, choose_on))
        drop_checkpoints(folder)
        return seconds

    def fit_argv(self, folder: Path, config: str, encoder: str, learning_rate: str, epochs: int,
                 choose_on: str | None, resumable: bool = True) -> list[str]:
        """The ``semrel fit`` arguments of one member (``--resume last`` when it was cut off);
        ``resumable``: a member that chooses no epoch saves a checkpoint every
        :data:`SAVE_STEPS_C` steps."""
        argv = ["fit", "--dataset", "semrel-2024", "--config", config, "--model", self.model,
                "--encoder", encoder, "--epochs", str(epochs), "--learning-rate", learning_rate,
                "--precision", self.precision, "--output", str(folder)]
        if choose_on:
            argv += ["--eval-dataset", "semrel-2024", "--eval-config", choose_on, "--eval-split", "validation",
                     "--metric-for-best", "spearman", "--selection-overlap", "omit"]  # train pairs: counted
        elif resumable:
            argv += ["--save-steps", str(SAVE_STEPS_C if self.max_steps is None else 1)]
        if self.max_steps is not None:
            argv += ["--max-steps", str(self.max_steps)] + (["--eval-steps", "1"] if choose_on else [])
        if any((folder / "checkpoints").glob("checkpoint-*/trainer_state.json")):
            argv += ["--resume", "last"]
        return argv


def drop_checkpoints(folder: Path) -> None:
    for checkpoint in (folder / "checkpoints").glob("checkpoint-*"):
        shutil.rmtree(checkpoint)  # the kept model is the folder's own


def load(config: str, dataset: str = "semrel-2024"):
    from semrel.dataset_scripts.pairs import load_pairs

    return load_pairs(dataset, config)


def check_data(ap, todo: list[Unit]) -> None:
    """Load what the unfinished units read (sha256-checked) first: a missing file is one line naming it."""
    from semrel.dataset_scripts.errors import DataValidationError, SourceError

    try:
        for dataset, config in dict.fromkeys(r for u in todo for r in (("semrel-2024", u.train), (
                "czech-news-sts", "free") if u.language == "czech" else ("semrel-2024", u.config))):
            load(config, dataset)
    except (SourceError, DataValidationError) as exc:
        ap.exit(2, f"{ap.prog}: error: {(str(exc).strip().splitlines() or [type(exc).__name__])[0]}\n")


def evaluate(files: dict[str, Path], config: str, split: str) -> dict[str, float]:
    """``semrel evaluate`` of each file against ``config``'s ``split``: Spearman by name."""
    names = list(files)
    argv = ["evaluate", *(str(files[n]) for n in names), "--split", split, "--json"]
    argv += ["--language", config] * len(names)
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        seconds = cli.run_logged(*argv)
    rows = json.loads(buffer.getvalue().split("\n", 1)[1])  # after the echoed command
    print(buffer.getvalue().split("\n", 1)[0] + f"  ({seconds:.1f} s)")
    return {name: round(row["spearman"], 4) for name, row in zip(names, rows, strict=True)}


def predict(unit: Unit, model: Path, split: str, name: str) -> Path:
    path = unit.folder / "predictions" / f"{name}.{split}.csv"
    cli.run_logged("predict", "--dataset", "semrel-2024", "--config", unit.config, "--split", split,
                   "--model", str(model), "--output", str(path))
    return path


def lexical_members(unit: Unit, data) -> dict[str, dict[str, Path]]:
    """Dice and (Track A) the char n-gram ridge fit on train: their dev and test predictions."""
    from semrel.metrics.overlap import dice
    from semrel.trainers.lexical import CharNgramRidge
    from semrel.trainers.prediction import write_submission

    scorers = {"dice": lambda rows: dice(list(rows["sentence1"]), list(rows["sentence2"]))}
    if unit.track == "A":
        train = data.splits["train"]
        ridge = CharNgramRidge.fit(train["sentence1"], train["sentence2"], train["score"])
        scorers["char-ridge"] = lambda rows: ridge.predict(rows["sentence1"], rows["sentence2"])
    files = {}
    for name, score in scorers.items():
        for split in ("validation", "test"):
            rows = data.splits[split]
            path = unit.folder / "predictions" / f"{name}.{split}.csv"
            files.setdefault(name, {})[split] = write_submission(score(rows), path, rows["pair_id"])
    return files


def grid_record(folder: Path, wall: float | None) -> dict:
    metrics = json.loads((folder / "metrics.json").read_text())
    selection = metrics.get("selection") or {}
    kept = selection.get("kept") or {}
    return {"dev_by_evaluation": [e.get("spearman") for e in selection.get("curve", [])],
            "kept_epoch": kept.get("epoch"), "dev_kept": kept.get("spearman"),
            "dev_omitted": selection.get("omitted"), "train_seconds": round(metrics["train_seconds"], 1),
            "epoch_seconds": [round(s, 1) for s in metrics.get("epoch_seconds", [])],
            "wall_seconds": None if wall is None else round(wall, 1)}


@dataclass(frozen=True)
class MemberSpec:
    """One member a unit trains: its folder name under ``unit.members`` and its ``semrel fit``
    settings (``choose_on``: the config whose dev split chooses the epoch; None: the last)."""

    name: str
    encoder: str
    learning_rate: str
    epochs: int
    choose_on: str | None


def member_specs(unit: Unit) -> list[MemberSpec]:
    """Track A: every encoder at every rate of :data:`GRID_A`, the epoch chosen on the language's
    dev; Track C: each encoder at its :data:`SETTINGS_C` rate."""
    if unit.track == "A":
        return [MemberSpec(f"{e}-lr{rate}", e, rate, EPOCHS_A, unit.language) for e, rates in GRID_A.items()
                for rate in rates]
    return [MemberSpec(e, e, rate, EPOCHS_C, None) for e, rate in SETTINGS_C.items()]


def czech_unit(out: Path) -> Unit:
    """Czech News STS, scored by the Track C members trained on config :data:`SHARED`."""
    return Unit("C", "czech", out / "czech", SHARED, out / "track-c" / f"train-{SHARED}")


def remember(unit: Unit, name: str, seconds: float | None) -> float | None:
    """The wall seconds of a member's fit across invocations (a kept member: the recorded ones)."""
    path = unit.members / "seconds.json"
    known = json.loads(path.read_text()) if path.is_file() else {}
    if seconds is not None:
        known[name] = round(seconds, 1)
        write_whole(path, json.dumps(known, indent=1), "output")
    return known.get(name)


def track_a(study: Study, unit: Unit) -> dict:
    from semrel.trainers.combination import spearman
    from semrel.trainers.stacking import cross_fitted, stack_inputs

    grid, chosen = {}, {}
    for m in member_specs(unit):
        folder = unit.members / m.name
        wall = remember(unit, m.name, study.fit(folder, unit.train, m.encoder, m.learning_rate, m.epochs, m.choose_on))
        grid[m.name] = {"encoder": m.encoder, "learning_rate": float(m.learning_rate), "epochs": m.epochs,
                        **grid_record(folder, wall)}
    for encoder in GRID_A:
        tried = [n for n in grid if grid[n]["encoder"] == encoder]
        chosen[encoder] = max(tried, key=lambda n: grid[n]["dev_kept"] if grid[n]["dev_kept"]
                              is not None else -2.0)
    members = [str(unit.members / chosen[e]) for e in GRID_A]
    ensembles = {"rank": ["--method", "rank"],
                 "ridge": ["--method", "ridge", "--features", "dice", "char-ridge"]}
    for name, how in ensembles.items():
        cli.run_logged("ensemble", *how, *(a for m in members for a in ("--member", m)),
                       "--output", str(unit.members / name))
    rows = stack_inputs(members, features=("dice", "char-ridge"))
    stacked = cross_fitted(rows, "ridge", features=("dice", "char-ridge"), folds=CHOICE_FOLDS)
    dev = {"rank": None, "ridge": round(spearman(stacked, rows.labels), 4)}
    return {"grid": grid, "chosen": chosen, "ensemble_dev": dev}


def finish(study: Study, unit: Unit, trained: dict) -> dict:
    """Predict and score a unit whose members are trained (``trained``: what training recorded)."""
    data = load(unit.config)
    files = lexical_members(unit, data)
    members = ({e: unit.members / trained["chosen"][e] for e in GRID_A} if unit.track == "A"
               else {e: unit.members / e for e in SETTINGS_C})
    for name, folder in members.items():
        files[name] = {s: predict(unit, folder, s, name) for s in ("validation", "test")}
    dev_files = {n: f["validation"] for n, f in files.items()}
    dev_files["rank"] = predict(unit, unit.members / "rank", "validation", "rank")
    dev = evaluate(dev_files, unit.config, "validation")
    if unit.track == "A":
        candidates = {"rank": dev["rank"], "ridge": trained["ensemble_dev"]["ridge"]}
        final = max(candidates, key=candidates.get)  # on dev; a tie keeps the rank average
    else:
        candidates, final = {}, "rank"
    files[final] = {"test": predict(unit, unit.members / final, "test", final)}
    labelled = None not in data.splits["test"]["score"]
    test = evaluate({n: f["test"] for n, f in files.items()}, unit.config, "test") if labelled else {}
    official = ({"labse": LABSE.get(unit.language), "best": BEST.get(unit.language)} if unit.track == "A"
                else {"labse_cross": LABSE_CROSS.get(unit.language)})
    return {"track": unit.track, "language": unit.language, "config": unit.config, "trained_on": unit.train,
            "pairs": {s: len(data.splits[s]) for s in data.splits}, "test_labelled": labelled,
            **trained, "dev": dev, "candidates_dev": candidates, "final": final,
            "test": test, "official": official}


def track_c_members(study: Study, unit: Unit) -> dict:
    members = {}
    for m in member_specs(unit):
        folder = unit.members / m.name
        wall = remember(unit, m.name, study.fit(folder, unit.train, m.encoder, m.learning_rate, m.epochs, m.choose_on))
        members[m.name] = {"learning_rate": float(m.learning_rate), "epochs": m.epochs,
                           **grid_record(folder, wall)}
    if not (unit.members / "rank" / "semrel_ensemble.json").is_file():
        cli.run_logged(*rank_argv(unit))
    return {"members": members}


def rank_argv(unit: Unit) -> tuple[str, ...]:
    """The ``semrel ensemble`` arguments of a Track C unit's rank average of its two members."""
    return ("ensemble", "--method", "rank", "--member", str(unit.members / "bi"), "--member",
            str(unit.members / "cross"), "--output", str(unit.members / "rank"))


def run_side_by_side(args, study: Study, chosen: list[Unit], czech: Unit | None) -> None:
    """Every unfinished unit of ``chosen`` as processes, ``args.jobs`` at a time on one GPU: each
    member still to train a ``semrel fit`` (a shared one once, its wall seconds recorded as
    :meth:`Study.fit` records them), each Track C rank average a ``semrel ensemble``, and each unit
    this script for that unit alone, started once its members are there (earlier units first).
    Track C members save no resume checkpoints here (1.4 GB each for e5-small, and minutes of GPU
    to train again); a member that chooses its epoch keeps its best and latest as always.
    ``czech``: the Czech unit, whose members to train too (scored afterwards, in this process)."""
    from semrel.trainers.side_by_side import Task, side_by_side

    semrel = (sys.executable, "-m", "semrel")
    options = ["--output", str(args.output), "--precision", args.precision]
    options += [a for name, folder in args.model for a in ("--model", f"{name}={folder}")]
    options += ["--max-steps", str(args.max_steps)] if args.max_steps is not None else []
    tasks, made, members = [], {}, {}

    def task_for(folder: Path, task: Task) -> int:
        if folder not in made:
            made[folder] = len(tasks)
            tasks.append(task)
        return made[folder]

    for unit in chosen + ([czech] if czech else []):
        if (unit.folder / "result.json").is_file():
            continue
        needs = []
        for m in member_specs(unit):
            folder = unit.members / m.name
            if not (folder / "metrics.json").is_file():
                argv = study.fit_argv(folder, unit.train, m.encoder, m.learning_rate, m.epochs, m.choose_on,
                                      resumable=False)
                needs.append(task_for(folder, Task((*semrel, *argv), folder.with_name(f"{m.name}.log"))))
                members[made[folder]] = (unit, m.name, folder)
        if unit.track == "C" and not (unit.members / "rank" / "semrel_ensemble.json").is_file():
            needs = [task_for(unit.members / "rank", Task((*semrel, *rank_argv(unit)), unit.members / "rank.log",
                                                           tuple(needs)))]
        if unit is not czech:
            argv = (sys.executable, str(Path(__file__).resolve()), "--track", unit.track.lower(),
                    "--language", unit.language, *options)
            task_for(unit.folder, Task(argv, unit.folder / "score.log", tuple(needs), echo=True))

    def member_trained(index: int, seconds: float) -> None:
        if index in members:
            unit, name, folder = members[index]
            drop_checkpoints(folder)
            remember(unit, name, seconds)

    side_by_side(tasks, args.jobs, member_trained, say=lambda line: print(line, flush=True))


def czech(out: Path) -> dict:
    """The ``all`` Track C members and their rank average on Czech News STS's free test."""
    from semrel.dataset_scripts.czech_news_sts.paper import PAPER_FINE_TUNED, PAPER_INTER
    from semrel.metrics.lower_bound import mse_lower_bound
    from semrel.metrics.submission import write_predictions
    from semrel.trainers.ensemble import Ensemble
    from semrel.trainers.models import PairEncoder
    from semrel.trainers.trainer import similarity_scores

    rows = load("free", "czech-news-sts").splits["test"]
    gold = np.asarray(rows["score"], dtype=np.float64)
    folder = out / "track-c" / f"train-{SHARED}"
    scores = {}
    for name in ("bi", "cross", "rank"):
        model = (Ensemble.load(folder / name) if name == "rank"
                 else PairEncoder.from_pretrained(folder / name))
        print(f"czech-news-sts/free/test: {name} ({folder / name})", flush=True)
        predicted = CZECH_SCALE * np.asarray(model.predict(rows["sentence1"], rows["sentence2"]))
        write_predictions(out / "czech" / "predictions" / f"{name}.test.csv", rows["pair_id"], predicted)
        result = similarity_scores(predicted, gold)
        scores[name] = {k: round(float(getattr(result, k)), 4) for k in ("pearson", "spearman", "mse")}
    return {"pairs": len(gold), "scale": f"prediction = {CZECH_SCALE:g} × score in [0, 1]",
            "scores": scores, "final": "rank",
            "paper": {"average_annotator_pearson": PAPER_INTER["pearson"],
                      "fine_tuned": PAPER_FINE_TUNED},
            "mse_lower_bound": round(mse_lower_bound(list(rows["annotations"])).bound, 4)}


def czech_result(study: Study, out: Path) -> dict:
    """:func:`czech`, once: kept in ``OUT/czech/result.json`` like a finished unit's (with its test file)."""
    result_path = out / "czech" / "result.json"
    if result_path.is_file() and (out / "czech" / "predictions" / "rank.test.csv").is_file():
        print(f"kept: {result_path.parent} is finished", flush=True)
        return json.loads(result_path.read_text())
    track_c_members(study, czech_unit(out))
    result = czech(out)
    write_whole(result_path, json.dumps(result, indent=1), "output")
    return result


def run_unit(study: Study, unit: Unit) -> dict:
    result_path = unit.folder / "result.json"
    if result_path.is_file():
        print(f"kept: {unit.folder} is finished", flush=True)
        return json.loads(result_path.read_text())
    trained = track_a(study, unit) if unit.track == "A" else track_c_members(study, unit)
    result = finish(study, unit, trained)
    write_whole(result_path, json.dumps(result, indent=1), "output")
    return result


def model_override(text: str) -> tuple[str, str]:
    """An argparse type: ``NAME=DIR``, NAME the members' model name."""
    name, sep, folder = text.partition("=")
    if not sep or name != MODEL or not folder:
        raise argparse.ArgumentTypeError(f"must be NAME=DIR with NAME {MODEL}, not {text!r}")
    return name, folder


def language(text: str) -> str:
    known = sorted(set(TRACK_A) | set(TRACK_C))
    if text not in known:
        raise argparse.ArgumentTypeError(f"must be one of {', '.join(known)}, not {text!r}")
    return text


def main(argv=None) -> None:
    ap = cli.Parser(prog="train_semrel_2024_languages.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--output", type=Path, default=Path("runs/semrel-2024-languages"))
    ap.add_argument("--track", action="append", choices=("a", "c"),
                    help="Track A (per language) or C (cross-lingual); repeat (default: both)")
    ap.add_argument("--language", action="append", type=language, metavar="LANG",
                    help="only this language or target; repeat (default: all)")
    ap.add_argument("--czech", action="store_true", help="also score Czech News STS with the "
                    f"Track C members trained on config {SHARED} (trains them if need be)")
    ap.add_argument("--model", action="append", default=[], type=model_override, metavar="NAME=DIR",
                    help=f"use this model folder for {MODEL} (smoke runs)")
    ap.add_argument("--precision", choices=("bf16", "fp32", "auto"), default="auto",
                    help="semrel fit --precision (auto: bf16 on a GPU, float32 on a CPU; bf16 on a "
                         "CPU only with AVX512-BF16 or AMX)")
    ap.add_argument("--max-steps", type=cli.at_least(1), help="smoke runs: stop each member after N steps")
    ap.add_argument("--jobs", type=cli.at_least(1), default=1, metavar="N",
                    help="run N processes at once (one GPU shared): members' fits, and each language's "
                         "scoring once its members are trained (default 1: one after another in this "
                         "process)")
    ap.add_argument("--machine", default="2-core CPU", help="the machine class RESULTS.md names "
                    "(--write-results)")
    ap.add_argument("--write-results", action="store_true",
                    help=f"store the tables in benchmarks/results.json under {RESULTS_KEY!r}")
    prediction_files.add_publish_flag(ap, "each Track A language's final test predictions (Czech's: --czech)")
    args = ap.parse_args(argv)
    smoke = args.max_steps is not None or bool(args.model)
    if args.write_results and smoke:
        ap.error("--write-results: a smoke run (--max-steps, --model) measures nothing to store")
    if args.publish and (problem := prediction_files.publish_problem(args.publish, smoke)):
        ap.error(problem)
    tracks = args.track or ["a", "c"]
    study, out = Study(args), args.output
    chosen = units(out, tracks, set(args.language or TRACK_A + TRACK_C))
    if lost := sorted(set(args.language or ()) - {u.language for u in chosen}):  # none of its tracks asked for
        ap.error(f"--language {lost[0]}: {lost[0]} has no Track {tracks[0].upper()} (it is in Track "
                 f"{'A' if lost[0] in TRACK_A else 'C'} only)")
    check_data(ap, [u for u in chosen + [czech_unit(out)] * args.czech if not (u.folder / "result.json").is_file()])
    if args.jobs > 1:
        run_side_by_side(args, study, chosen, czech_unit(out) if args.czech else None)
    results = [run_unit(study, unit) for unit in chosen]
    record = {"command": shlex.join(["python", "scripts/train_semrel_2024_languages.py", *sys.argv[1:]]),
              "machine": f"{platform.node()} ({os.cpu_count()} CPUs)", "precision": args.precision,
              "max_steps": args.max_steps, "grid_a": GRID_A, "epochs_a": EPOCHS_A,
              "settings_c": SETTINGS_C, "epochs_c": EPOCHS_C,
              "track_a": {r["language"]: r for r in results if r["track"] == "A"},
              "track_c": {r["language"]: r for r in results if r["track"] == "C"}}
    if args.czech:
        record["czech"] = czech_result(study, out)
    write_whole(out / "study.json", json.dumps(record, indent=1), "output")
    tables = markdown(record)
    write_whole(out / "tables.md", tables, "output")
    print(tables)
    if args.write_results:
        store(record, args.machine)
    if args.publish:
        publish(record, out, args.machine, args.publish)


def publish(record: dict, out: Path, machine: str, into: Path) -> None:
    """``--publish``: each Track A language's final test file (``pred_<lang>.csv``), Czech's too."""
    files = [prediction_files.Prediction(
        out / "track-a" / lang / "predictions" / f"{r['final']}.test.csv", "semrel-2024", lang, "test",
        "e5-small-per-language", {"spearman": r["test"][r["final"]]} if r["test"] else prediction_files.HELD_BACK,
        f"pred_{lang}.csv") for lang, r in record["track_a"].items()]
    if record.get("czech"):  # 0-6: 6 × the rank average's score
        files.append(prediction_files.Prediction(out / "czech" / "predictions" / "rank.test.csv", "czech-news-sts",
                                                 "free", "test", "e5-small-semrel-2024-track-a",
                                                 record["czech"]["scores"]["rank"], "free-test.csv"))
    for path in prediction_files.publish_or_exit(files, command=record["command"], machine=machine, into=into):
        print(f"published: {path}")


def _cell(value, digits: int = 3) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def _bold(value) -> str:
    return "" if value is None else f"**{value:.3f}**"


def _gap(value, reference) -> str:
    return "" if value is None or reference is None else f"{value - reference:+.3f}"


def markdown(record: dict) -> str:
    """The tables of benchmarks/RESULTS.md: Track A test, Track A dev and choices, Track C, Czech."""
    parts = []
    if record["track_a"]:
        lines = ["| language | test pairs | bi | cross | char-ridge | Dice | **final** | final model | "
                 "LaBSE | best | final − LaBSE | final − best |", "|---" * 12 + "|"]
        for lang, r in record["track_a"].items():
            test, official = r["test"], r["official"]
            final = test.get(r["final"])
            pairs = f"{r['pairs']['test']:,}" if r["test_labelled"] else "no labels"
            lines.append(f"| {lang} | {pairs} | " + " | ".join(_cell(test.get(n)) for n in
                         ("bi", "cross", "char-ridge", "dice")) + f" | {_bold(final)} | {r['final']} | "
                         f"{_cell(official['labse'], 2)} | {_cell(official['best'])} | "
                         f"{_gap(final, official['labse'])} | {_gap(final, official['best'])} |")
        parts.append("\n".join(lines))
        lines = ["| language | train pairs | dev pairs | bi: lr, kept epoch | cross: lr, kept epoch | "
                 "dev: bi / cross / char-ridge / Dice | dev: rank / ridge stack (cross-fitted) | final | "
                 "training s per grid member |", "|---" * 9 + "|"]
        for lang, r in record["track_a"].items():
            grid, dev, chosen = r["grid"], r["dev"], r["chosen"]
            seconds = ", ".join(f"{n} {g['train_seconds']:,.0f}" for n, g in grid.items())
            picked = [f"{grid[chosen[e]]['learning_rate']:g}, {grid[chosen[e]]['kept_epoch']:g}" for e in GRID_A]
            omitted = grid[chosen["bi"]].get("dev_omitted")  # dev pairs in train, left out of the choice of epochs
            lines.append(f"| {lang} | {r['pairs']['train']:,} | {r['pairs']['validation']:,}"
                         f"{'' if omitted is None else f' ({omitted} in train: omitted when choosing)'} | "
                         f"{picked[0]} | {picked[1]} | "
                         + " / ".join(_cell(dev.get(n)) for n in ("bi", "cross", "char-ridge", "dice"))
                         + f" | {_cell(r['candidates_dev']['rank'])} / {_cell(r['candidates_dev']['ridge'])} | "
                         f"{r['final']} | {seconds} |")
        parts.append("\n".join(lines))
    if record["track_c"]:
        lines = ["| target | trained on | test pairs | bi | cross | Dice | **rank average** | "
                 "LaBSE-Cross | rank − LaBSE-Cross | dev: rank | training s: bi / cross |", "|---" * 11 + "|"]
        for lang, r in record["track_c"].items():
            test, final = r["test"], r["test"].get("rank")
            labse = r["official"]["labse_cross"]
            pairs = f"{r['pairs']['test']:,}" if r["test_labelled"] else "no labels"
            lines.append(f"| {lang} | {r['trained_on']} ({r['pairs']['train']:,} pairs) | {pairs} | "
                         + " | ".join(_cell(test.get(n)) for n in ("bi", "cross", "dice"))
                         + f" | {_bold(final)} | {_cell(labse, 2)} | {_gap(final, labse)} | "
                         f"{_cell(r['dev'].get('rank'))} | "
                         + " / ".join(f"{r['members'][e]['train_seconds']:,.0f}" for e in ("bi", "cross")) + " |")
        parts.append("\n".join(lines))
    if record.get("czech"):
        c = record["czech"]
        lines = ["| Czech News STS free test | Pearson | Spearman | MSE (0–6) |", "|---|---|---|---|"]
        for name, s in c["scores"].items():
            label = {"rank": "**rank average**"}.get(name, name)
            lines.append(f"| {label} (trained on SemRel-2024 Track A, no Czech) | {s['pearson']:.3f} | "
                         f"{s['spearman']:.3f} | {s['mse']:.3f} |")
        paper = c["paper"]
        lines.append(f"| average annotator (paper, Table 1) | {paper['average_annotator_pearson']:.3f} | | |")
        tuned = paper["fine_tuned"]
        lines.append(f"| {tuned['model']} fine-tuned on {tuned['train_pairs']:,} Czech pairs (paper, Table 5) | "
                     f"{tuned['pearson']:.3f} | {tuned['spearman']:.3f} | |")
        lines.append("| MSE lower bound (Student-t, scripts/reproduce_czech_news.py) | | | "
                     f"{c['mse_lower_bound']:.3f} |")
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


LABELLED_A = [lang for lang in TRACK_A if lang in BEST and lang not in ("eng", "esp")]  # test labels here


def store(record: dict, machine: str, path: Path | None = None) -> None:
    """The study under :data:`RESULTS_KEY` of benchmarks/results.json (or ``path``); the report's
    best fine-tuned figures once every labelled Track A language (and Czech) is done."""
    from semrel.publishing.results import RESULTS, store_fine_tuned
    from semrel.publishing.results import store as store_key

    path = RESULTS if path is None else path
    stored = {key: value for key, value in record.items() if key != "machine"}
    store_key(RESULTS_KEY, {"machine": machine, **stored}, path)
    command = record["command"]
    if all(lang in record["track_a"] for lang in LABELLED_A):
        finals = [record["track_a"][lang]["test"][record["track_a"][lang]["final"]] for lang in LABELLED_A]
        store_fine_tuned("semrel-2024", {
            "spearman": round(float(np.mean(finals)), 4),
            "model": "e5-small bi + cross per language, rank average or ridge stack (+Dice, char n-gram "
                     "ridge) chosen on dev",
            "protocol": f"Track A test, mean of {len(finals)} languages ({' '.join(LABELLED_A)}); "
                        "every setting chosen on each language's dev", "machine": machine, "command": command},
            path)
    if record.get("czech"):
        final = record["czech"]["scores"][record["czech"]["final"]]
        store_fine_tuned("czech-news-sts", {
            "spearman": final["spearman"],
            "model": "e5-small bi + cross trained on SemRel-2024 Track A (no Czech data), rank average",
            "protocol": f"free test (1,200 pairs), no Czech training data; Pearson {final['pearson']:.3f}, "
                        f"MSE {final['mse']:.3f} (0–6 = 6 × score)", "machine": machine, "command": command},
            path)


if __name__ == "__main__":
    main()
