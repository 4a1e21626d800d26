"""Train STR-2021's best fine-tuned figure again and write its out-of-fold predictions: bi@mpnet
and cross@mpnet (lr 4e-5) on each of the paper's five CV folds (``cv-fold-K``: trained on 4,400
pairs, scored on the other 1,100; Abdalla et al., EACL 2023), and per fold their rank average,
its scores ranked against the other folds' out-of-fold predictions
(:func:`~semrel.trainers.combination.cv_ensemble`, as ``semrel cv --member`` and
benchmarks/bench_str_finetune.py combine them; nothing is chosen on a test fold). The figure is
the mean over the folds of the rank average's Spearman ρ on the fold's test pairs.

Each (member, fold) is one ``semrel fit`` with the flags' defaults (4 epochs, batch 16, lr 2e-5,
warmup 0.1, weight decay 0.01, seed 42) but those of :data:`MEMBERS`, printed before it runs,
into ``OUT/<member>/cv-fold-K``. A fold whose folder holds ``metrics.json`` is kept; one cut off
resumes from its last checkpoint (one every :data:`SAVE_STEPS` steps, removed once the fold is
finished). ``OUT/predictions/cv-fold-K.csv`` holds fold K's rank average as ``PairID,Pred_Score``,
``OUT/study.json`` the figures, ``OUT/table.md`` their table. ``--publish`` copies the five files
to ``benchmarks/predictions/str-2021/mpnet-bi-cross-rank-cv/`` and records them in
benchmarks/results.json (:mod:`semrel.publishing.prediction_files`), and each member's file per fold
(``PairID,Pred_Score`` of its fold's test pairs) to ``.../str-2021/<MEMBER_RECIPES>/`` as soon as that
fold is trained; ``--write-results`` stores the mean as STR-2021's best fine-tuned figure there.

Ten mpnet trainings outlast a session on a 2-core CPU, and a fresh machine starts without ``OUT``:
with ``--reuse-published`` a (member, fold) whose file ``--publish`` already recorded (its sha256 as
``results.json`` has it) is not trained again; the file stands for the run, the fold's test labels
read from the loader and scaled as ``semrel fit`` scales them. Commit the published files between
sessions and the same command goes on where the last one stopped.

    python scripts/train_str_2021.py [--output runs/str-2021-cv] [--publish [--reuse-published]] [--write-results]
    python scripts/train_str_2021.py --model mpnet=tiny-bert --max-steps 2 \\
        --output runs/str-2021-smoke                        # a smoke run with a tiny model
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import sys
from pathlib import Path

from semrel import cli
from semrel.metrics.output_files import write_whole
from semrel.publishing import prediction_files

MODEL = "mpnet"
MEMBERS = {  # folder: semrel fit flags; the members of STR-2021's figure in benchmarks/results/str-2021.md
    "bi-mpnet": ["--encoder", "bi"],
    "cross-mpnet": ["--encoder", "cross", "--learning-rate", "4e-5"],
}
FOLDS = tuple(f"cv-fold-{k}" for k in range(5))
SAVE_STEPS = 100  # a checkpoint this often, to resume a fold cut off (1,100 steps per fold)
RECIPE = "mpnet-bi-cross-rank-cv"
MEMBER_RECIPES = {"bi-mpnet": "mpnet-bi-cv", "cross-mpnet": "mpnet-cross-lr4e-5-cv"}  # each member's files


def fit_argv(folder: Path, fold: str, model: str, flags: list[str], precision: str,
             max_steps: int | None) -> list[str]:
    """The ``semrel fit`` arguments of one member on one fold (``--resume last`` when cut off)."""
    argv = ["fit", "--dataset", "str-2021", "--config", fold, "--model", model, *flags,
            "--precision", precision, "--save-steps", str(SAVE_STEPS if max_steps is None else 1),
            "--output", str(folder)]
    if max_steps is not None:
        argv += ["--max-steps", str(max_steps)]
    return argv + cli.resume_flags(folder)


def member_file(out: Path, name: str, fold: str, figure: dict | None = None) -> prediction_files.Prediction:
    """The file of member ``name`` on ``fold`` to publish: the run's ``test.csv``."""
    return prediction_files.Prediction(out / name / fold / "test.csv", "str-2021", fold, "test",
                                       MEMBER_RECIPES[name], figure or {}, name=f"{fold}.csv")


def publish_member(out: Path, name: str, fold: str, into: Path, command: str, machine: str) -> None:
    """Member ``name``'s predictions of ``fold``'s test pairs as ``PairID,Pred_Score``, published."""
    from semrel.metrics.submission import write_predictions
    from semrel.trainers.run_folder import load_run

    folder = out / name / fold
    run = load_run(folder)
    write_predictions(folder / "test.csv", [str(i) for i in run.ids], run.predictions)
    spearman = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))["spearman"]
    file = member_file(out, name, fold, {"spearman": round(spearman, 4)})
    for path in prediction_files.publish_or_exit([file], command=command, machine=machine, into=into):
        print(f"published: {path}", flush=True)


def reused(name: str, fold: str, into: Path | None) -> Path | None:
    """The published file that stands for member ``name`` on ``fold`` (``--reuse-published``), if any."""
    if into is None:
        return None
    try:
        return prediction_files.published(member_file(Path(), name, fold).relative(), into)
    except ValueError as exc:
        raise SystemExit(f"--reuse-published: {exc}") from None


def train(out: Path, model: str, precision: str, max_steps: int | None, *, publish: Path | None = None,
          reuse: bool = False, command: str = "", machine: str = ""
          ) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, Path]]]:
    """Every (member, fold) trained, kept, or (``reuse``) stood for by its published file. Returns
    the wall seconds of each trained here, across invocations, and ``standing[member][fold]``: the
    published file of each reused one. With ``publish``, each member's file of each fold trained or
    kept is published."""
    path = out / "seconds.json"
    seconds = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    standing: dict[str, dict[str, Path]] = {}
    for name, flags in MEMBERS.items():
        for fold in FOLDS:
            folder = out / name / fold
            if (folder / "metrics.json").is_file():
                print(f"kept: {folder} holds a finished run", flush=True)
            elif reuse and (file := reused(name, fold, publish)) is not None:
                print(f"kept: {file} is published and stands for {name} on {fold}", flush=True)
                standing.setdefault(name, {})[fold] = file
                continue
            else:
                took = cli.run_logged(*fit_argv(folder, fold, model, flags, precision, max_steps))
                cli.drop_checkpoints(folder)
                seconds.setdefault(name, {})[fold] = round(took, 1)
                write_whole(path, json.dumps(seconds, indent=1), "output")
            if publish is not None:
                publish_member(out, name, fold, publish, command, machine)
    return seconds, standing


def member_runs(out: Path, standing: dict[str, dict[str, Path]]) -> dict:
    """``runs[member][fold]``: the published file's predictions where ``standing`` names one, else
    the run folder's."""
    from semrel.trainers.run_folder import load_run

    runs: dict = {}
    for name in MEMBERS:
        for fold in FOLDS:
            file = standing.get(name, {}).get(fold)
            runs.setdefault(name, {})[fold] = (load_run(out / name / fold) if file is None
                                               else run_from_file(file, fold, MEMBERS[name][1]))
    return runs


def run_from_file(path: Path, fold: str, encoder: str):
    """A published member file as the run it stands for: its scores, and the labels of ``fold``'s
    test pairs as ``semrel fit`` records them (score range mapped to [0, 1], float32)."""
    import numpy as np

    from semrel.dataset_scripts.pairs import load_pairs
    from semrel.metrics.submission import read_predictions
    from semrel.trainers.data import scale_scores
    from semrel.trainers.run_folder import RunPredictions

    data = load_pairs("str-2021", fold)
    test = data.splits["test"]
    found, ids = read_predictions(path), [str(i) for i in test["pair_id"]]
    if list(found.ids) != ids:
        raise SystemExit(f"{path}: its PairIDs are not str-2021/{fold}/test's, in the split's order")
    labels = scale_scores(np.asarray(test["score"], dtype=np.float64), data.score_range, where=f"str-2021/{fold}")
    return RunPredictions(path=str(path), data=data.name, split="test", score_range=data.score_range,
                          encoder=encoder, conditional=False, ids=ids,
                          predictions=np.asarray(found.scores, dtype=np.float64),
                          labels=labels.astype(np.float64), sources=list(test["source"]))


def combine(out: Path, runs: dict) -> dict:
    """Each fold's rank average (and out-of-fold stack) of the members' ``runs[member][fold]``,
    written as ``OUT/predictions/<fold>.csv``; the figures per fold, their mean and the paired tests."""
    from semrel.metrics.submission import write_predictions
    from semrel.trainers.combination import cv_ensemble

    ensemble = cv_ensemble(runs)
    for fold, (ids, scored) in ensemble.predictions.items():
        write_predictions(out / "predictions" / f"{fold}.csv", [str(i) for i in ids], scored["rank"])
    return {"folds": {fold: {k: round(v, 4) for k, v in scores.items()} for fold, scores in ensemble.folds.items()},
            "mean": {k: round(v, 4) for k, v in ensemble.mean().items()},
            "comparisons": ensemble.comparisons}


def table(record: dict) -> str:
    """The figures as a Markdown table: Spearman per fold and their mean."""
    columns = [*MEMBERS, "rank", "stack"]
    lines = ["| fold | " + " | ".join(c if c != "rank" else "**rank average**" for c in columns) + " |",
             "|---" * (len(columns) + 1) + "|"]
    for fold, scores in [*record["folds"].items(), ("mean", record["mean"])]:
        cells = [f"**{scores[c]:.4f}**" if c == "rank" else f"{scores[c]:.4f}" for c in columns]
        lines.append(f"| {fold} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    ap = cli.Parser(prog="train_str_2021.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--output", type=Path, default=Path("runs/str-2021-cv"))
    ap.add_argument("--model", type=cli.model_folder(MODEL), metavar="NAME=DIR",
                    help=f"use this model folder for {MODEL} (smoke runs)")
    ap.add_argument("--precision", choices=("bf16", "fp32", "auto"), default="auto",
                    help="semrel fit --precision (auto: bf16 on a GPU, float32 on a CPU; bf16 on a "
                         "CPU only with AVX512-BF16 or AMX)")
    ap.add_argument("--max-steps", type=cli.at_least(1), help="smoke runs: stop each fold after N steps")
    ap.add_argument("--machine", help="the machine results.json names (default: this one, e.g. 2-core CPU)")
    ap.add_argument("--write-results", action="store_true",
                    help="store the mean as STR-2021's best fine-tuned figure in benchmarks/results.json")
    prediction_files.add_publish_flag(ap, "the rank average's five test-fold files and each member's")
    ap.add_argument("--reuse-published", action="store_true",
                    help="a (member, fold) whose file --publish DIR already records is not trained "
                         "again: the file stands for it (a run that spans fresh machines)")
    args = ap.parse_args(argv)
    smoke = args.max_steps is not None or args.model is not None
    if args.write_results and smoke:
        ap.error("--write-results: a smoke run (--max-steps, --model) measures nothing to store")
    if args.publish and (problem := prediction_files.publish_problem(args.publish, smoke)):
        ap.error(problem)
    if args.reuse_published and not args.publish:
        ap.error("--reuse-published: reuses the files --publish DIR records; give --publish")
    out = args.output
    command = shlex.join(["python", "scripts/train_str_2021.py", *(sys.argv[1:] if argv is None else argv)])
    machine = args.machine or prediction_files.this_machine()
    seconds, standing = train(out, args.model[1] if args.model else MODEL, args.precision, args.max_steps,
                              publish=args.publish, reuse=args.reuse_published, command=command, machine=machine)
    runs = member_runs(out, standing)
    record = {"command": command, "machine": f"{platform.node()} ({os.cpu_count()} CPUs)",
              "precision": args.precision, "max_steps": args.max_steps, "members": MEMBERS,
              "seconds": seconds, "published_members": {name: [f for f in FOLDS if f in standing.get(name, {})]
                                                        for name in MEMBERS},
              **combine(out, runs)}
    write_whole(out / "study.json", json.dumps(record, indent=1), "output")
    write_whole(out / "table.md", table(record), "output")
    print(table(record) + f"rank average per fold: {out / 'predictions'}/cv-fold-K.csv")
    if args.publish:
        files = [prediction_files.Prediction(out / "predictions" / f"{fold}.csv", "str-2021", fold, "test",
                                             RECIPE, {"spearman": record["folds"][fold]["rank"]})
                 for fold in FOLDS]
        for path in prediction_files.publish_or_exit(files, command=command, machine=machine, into=args.publish):
            print(f"published: {path}")
    if args.write_results:
        from semrel.publishing.results import store_fine_tuned

        store_fine_tuned("str-2021", {
            "spearman": record["mean"]["rank"], "model": "bi@mpnet + cross@mpnet, rank average",
            "protocol": "5-fold CV mean", "machine": machine, "command": command})
        print("stored: STR-2021's best fine-tuned figure in benchmarks/results.json")


if __name__ == "__main__":
    main()
