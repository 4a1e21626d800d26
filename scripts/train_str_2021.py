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
benchmarks/results.json (:mod:`semrel.publishing.prediction_files`); ``--write-results`` stores the
mean as STR-2021's best fine-tuned figure there.

    python scripts/train_str_2021.py [--output runs/str-2021-cv] [--publish] [--write-results]
    python scripts/train_str_2021.py --model mpnet=tiny-bert --max-steps 2 \\
        --output runs/str-2021-smoke                        # a smoke run with a tiny model
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
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


def fit_argv(folder: Path, fold: str, model: str, flags: list[str], precision: str,
             max_steps: int | None) -> list[str]:
    """The ``semrel fit`` arguments of one member on one fold (``--resume last`` when cut off)."""
    argv = ["fit", "--dataset", "str-2021", "--config", fold, "--model", model, *flags,
            "--precision", precision, "--save-steps", str(SAVE_STEPS if max_steps is None else 1),
            "--output", str(folder)]
    if max_steps is not None:
        argv += ["--max-steps", str(max_steps)]
    if any((folder / "checkpoints").glob("checkpoint-*/trainer_state.json")):
        argv += ["--resume", "last"]
    return argv


def train(out: Path, model: str, precision: str, max_steps: int | None) -> dict[str, dict[str, float]]:
    """Every (member, fold) trained or kept; the wall seconds of each, across invocations."""
    path = out / "seconds.json"
    seconds = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    for name, flags in MEMBERS.items():
        for fold in FOLDS:
            folder = out / name / fold
            if (folder / "metrics.json").is_file():
                print(f"kept: {folder} holds a finished run", flush=True)
                continue
            took = cli.run_logged(*fit_argv(folder, fold, model, flags, precision, max_steps))
            for checkpoint in (folder / "checkpoints").glob("checkpoint-*"):
                shutil.rmtree(checkpoint)  # the model is the folder's own
            seconds.setdefault(name, {})[fold] = round(took, 1)
            write_whole(path, json.dumps(seconds, indent=1), "output")
    return seconds


def combine(out: Path) -> dict:
    """Each fold's rank average (and out-of-fold stack) of the members, written as
    ``OUT/predictions/<fold>.csv``; the figures per fold, their mean and the paired tests."""
    from semrel.metrics.submission import write_predictions
    from semrel.trainers.combination import cv_ensemble
    from semrel.trainers.run_folder import read_cvs

    members, names, folds = read_cvs([out / name for name in MEMBERS])
    if list(folds) != list(FOLDS):
        raise SystemExit(f"{out}: the members share folds {', '.join(folds)}, not {', '.join(FOLDS)}")
    ensemble = cv_ensemble(members)
    short = dict(zip(names, MEMBERS, strict=True))  # a member's folder -> its name
    for fold, (ids, scored) in ensemble.predictions.items():
        write_predictions(out / "predictions" / f"{fold}.csv", [str(i) for i in ids], scored["rank"])
    rounded = {fold: {short.get(k, k): round(v, 4) for k, v in scores.items()}
               for fold, scores in ensemble.folds.items()}
    return {"folds": rounded, "mean": {short.get(k, k): round(v, 4) for k, v in ensemble.mean().items()},
            "comparisons": {method: {short[n]: c for n, c in by_member.items()}
                            for method, by_member in ensemble.comparisons.items()}}


def table(record: dict) -> str:
    """The figures as a Markdown table: Spearman per fold and their mean."""
    columns = [*MEMBERS, "rank", "stack"]
    lines = ["| fold | " + " | ".join(c if c != "rank" else "**rank average**" for c in columns) + " |",
             "|---" * (len(columns) + 1) + "|"]
    for fold, scores in [*record["folds"].items(), ("mean", record["mean"])]:
        cells = [f"**{scores[c]:.4f}**" if c == "rank" else f"{scores[c]:.4f}" for c in columns]
        lines.append(f"| {fold} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def model_override(text: str) -> tuple[str, str]:
    """An argparse type: ``NAME=DIR``, NAME the members' model name."""
    name, sep, folder = text.partition("=")
    if not sep or name != MODEL or not folder:
        raise argparse.ArgumentTypeError(f"must be NAME=DIR with NAME {MODEL}, not {text!r}")
    return name, folder


def main(argv=None) -> None:
    ap = cli.Parser(prog="train_str_2021.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--output", type=Path, default=Path("runs/str-2021-cv"))
    ap.add_argument("--model", type=model_override, metavar="NAME=DIR",
                    help=f"use this model folder for {MODEL} (smoke runs)")
    ap.add_argument("--precision", choices=("bf16", "fp32", "auto"), default="auto",
                    help="semrel fit --precision (auto: bf16 on a GPU, float32 on a CPU; bf16 on a "
                         "CPU only with AVX512-BF16 or AMX)")
    ap.add_argument("--max-steps", type=cli.at_least(1), help="smoke runs: stop each fold after N steps")
    ap.add_argument("--machine", help="the machine results.json names (default: this one, e.g. 2-core CPU)")
    ap.add_argument("--write-results", action="store_true",
                    help="store the mean as STR-2021's best fine-tuned figure in benchmarks/results.json")
    prediction_files.add_publish_flag(ap, "the rank average's five test-fold files")
    args = ap.parse_args(argv)
    smoke = args.max_steps is not None or args.model is not None
    if args.write_results and smoke:
        ap.error("--write-results: a smoke run (--max-steps, --model) measures nothing to store")
    if args.publish and (problem := prediction_files.publish_problem(args.publish, smoke)):
        ap.error(problem)
    out = args.output
    command = shlex.join(["python", "scripts/train_str_2021.py", *(sys.argv[1:] if argv is None else argv)])
    seconds = train(out, args.model[1] if args.model else MODEL, args.precision, args.max_steps)
    record = {"command": command, "machine": f"{platform.node()} ({os.cpu_count()} CPUs)",
              "precision": args.precision, "max_steps": args.max_steps, "members": MEMBERS,
              "seconds": seconds, **combine(out)}
    write_whole(out / "study.json", json.dumps(record, indent=1), "output")
    write_whole(out / "table.md", table(record), "output")
    print(table(record) + f"rank average per fold: {out / 'predictions'}/cv-fold-K.csv")
    machine = args.machine or prediction_files.this_machine()
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
