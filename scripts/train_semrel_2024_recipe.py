"""Train the SemRel-2024 English recipe's final models and combine them into one ensemble folder
(the transfer study of benchmarks/results/english-recipe.md chose bi@minilm and cross@mpnet on STR-2021 fold 0
and on eng dev; bi@mpnet on the SemEval-2024 winner's 32-epoch schedule joined them later).

Each member is fit on SemRel-2024 eng train (the 5,500 STR-2021 pairs; dev is kept for choosing
and measuring, never trained on), evaluated on eng dev (250 pairs) after each epoch, and the best
epoch by dev Spearman is kept (``--eval-dataset``, :mod:`semrel.trainers.selection`). The members
are combined by a rank average (``semrel ensemble --method rank``), which fits nothing. Then the
ensemble predicts eng dev (scored by ``semrel evaluate``) and eng test (``eng_test.csv``, the
task's ``PairID,Pred_Score``: its labels are held back, so it is scored outside the project).

``--cross-seeds 42 43`` trains the cross-encoder once per seed (folders ``cross-mpnet``,
``cross-mpnet-seed43``), and every one of them is a member of the rank average. ``--final``
then trains each member once more on eng train + dev (``--train-splits train+validation``) for
the epochs it kept on dev, fixed (nothing is chosen: dev is training data now), and writes their
rank average's ``final/eng_test.csv``; its dev figure would be measured on training pairs, so
none is reported, and the test file is the one to score on the held-out labels.

Every step is a ``semrel`` command, printed before it runs, so the script is the recipe written
out; ``OUT/recipe.json`` records the commands, each step's seconds and the dev figures. A member
whose folder already holds ``metrics.json`` is kept; one cut off mid-way resumes from its last
checkpoint (``--resume last``). ``--publish`` copies the English test file (``final/eng_test.csv``
with ``--final``) to ``benchmarks/predictions/semrel-2024/english-recipe[-final]-<N>-member/pred_eng.csv``
and records it in ``benchmarks/results.json`` (:mod:`semrel.publishing.prediction_files`).

    python scripts/train_semrel_2024_recipe.py [--output runs/semrel-2024-recipe] [--members NAME ...] \\
        [--cross-seeds 42 43] [--final]
    python scripts/train_semrel_2024_recipe.py --model minilm=tiny-bert --model mpnet=tiny-bert \\
        --max-steps 2 --output runs/recipe-smoke          # a smoke run with a tiny model
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import sys
from pathlib import Path

from semrel import cli
from semrel.publishing import prediction_files

DATA = ["--dataset", "semrel-2024", "--config", "eng"]
CHOOSE = ["--eval-dataset", "semrel-2024", "--eval-config", "eng", "--eval-split", "validation",
          "--metric-for-best", "spearman"]
MEMBERS = {  # folder: (model name, semrel fit flags); the study's finalists
    "bi-minilm": ("minilm", ["--encoder", "bi", "--epochs", "1", "--learning-rate", "1e-5"]),
    "cross-mpnet": ("mpnet", ["--encoder", "cross", "--epochs", "4", "--learning-rate", "4e-5"]),
    # UAlberta's bi-encoder schedule (SemEval-2024 Task 1 winner): cosine loss, 32 epochs
    "bi-mpnet": ("mpnet", ["--encoder", "bi", "--epochs", "32", "--learning-rate", "5e-5",
                           "--batch-size", "32"]),
}
MODELS = sorted({model for model, _ in MEMBERS.values()})  # what --model NAME=DIR may replace
SEEDED = "cross-mpnet"  # the member --cross-seeds repeats
DEFAULT_SEED = 42  # semrel fit's
FINAL = ["--train-splits", "train+validation"]


def members(cross_seeds: list[int], names: list[str] | None = None) -> dict[str, tuple[str, list[str]]]:
    """The members: :data:`MEMBERS` (those in ``names``, all by default), the seeded one once per
    seed (``NAME-seedS`` but for the default seed)."""
    out = {}
    for name, (model, flags) in MEMBERS.items():
        if names is not None and name not in names:
            continue
        for seed in cross_seeds if name == SEEDED else [DEFAULT_SEED]:
            seeded = seed != DEFAULT_SEED
            out[f"{name}-seed{seed}" if seeded else name] = (model, flags + (["--seed", str(seed)] if seeded else []))
    return out


def kept_epochs(folder: Path) -> float:
    """The epoch a member kept on dev (its ``metrics.json``)."""
    from semrel.trainers.run_folder import read_metrics

    return float(read_metrics(folder)["selection"]["kept"]["epoch"])


def final_flags(flags: list[str], epochs: float) -> list[str]:
    """A member's flags for the final run: its own, with ``--epochs`` the epochs it kept."""
    at = flags.index("--epochs")
    return [*flags[:at], "--epochs", f"{epochs:g}", *flags[at + 2:]]


def train_member(folder: Path, model: str, flags: list[str], precision: str,
                 max_steps: int | None, choose: bool = True) -> float | None:
    """Fit one member unless its folder holds a finished run; its training seconds (None: kept).
    ``choose``: evaluate on eng dev and keep the best epoch (else train the epochs given)."""
    if (folder / "metrics.json").is_file():
        print(f"kept: {folder} holds a finished run", flush=True)
        return None
    argv = ["fit", *DATA, "--model", model, *flags, *(CHOOSE if choose else []), "--precision",
            precision, "--output", str(folder)]
    if max_steps is not None:
        argv += ["--max-steps", str(max_steps)] + (["--eval-steps", "1"] if choose else [])
    return cli.run_logged(*argv, *cli.resume_flags(folder))


def main(argv=None) -> None:
    ap = cli.Parser(prog="train_semrel_2024_recipe.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--output", type=Path, default=Path("runs/semrel-2024-recipe"))
    ap.add_argument("--model", action="append", default=[], type=cli.model_folder(*MODELS), metavar="NAME=DIR",
                    help="use this model folder for a member's model name (smoke runs)")
    ap.add_argument("--precision", choices=("bf16", "fp32", "auto"), default="auto",
                    help="semrel fit --precision (auto: fp32 on a CPU; bf16 autocast pays only on "
                         "CPUs with AVX512-BF16 or AMX)")
    ap.add_argument("--max-steps", type=cli.at_least(1), help="smoke runs: stop each member "
                                                              "after N steps")
    ap.add_argument("--cross-seeds", type=cli.integer, nargs="+", default=[DEFAULT_SEED], metavar="SEED",
                    help="train the cross-encoder once per seed, each a member")
    ap.add_argument("--final", action="store_true",
                    help="then retrain every member on eng train + dev for the epochs it kept, and "
                         "write final/eng_test.csv (no dev figure: dev is trained on)")
    ap.add_argument("--members", nargs="+", choices=list(MEMBERS), metavar="NAME",
                    help=f"train and combine only these members (default: all of {', '.join(MEMBERS)}; "
                         "bi-minilm cross-mpnet is the CPU-feasible pair)")
    prediction_files.add_publish_flag(ap, "the eng test predictions (final/eng_test.csv with --final)")
    ap.add_argument("--machine", help="the machine results.json names for --publish (default: this one, "
                                      "e.g. 2-core CPU)")
    args = ap.parse_args(argv)
    if len(set(args.cross_seeds)) != len(args.cross_seeds):
        ap.error(f"argument --cross-seeds: each seed once, not {' '.join(map(str, args.cross_seeds))}")
    smoke = args.max_steps is not None or bool(args.model)
    if args.publish and (problem := prediction_files.publish_problem(args.publish, smoke)):
        ap.error(problem)
    models, out, chosen = dict(args.model), args.output, members(args.cross_seeds, args.members)
    seconds = {}
    for name, (model, flags) in chosen.items():
        seconds[name] = train_member(out / name, models.get(model, model), flags, args.precision,
                                     args.max_steps)
    seconds |= combine(out, list(chosen), splits=("validation", "test"))
    scores = {}
    for source in [*(out / n / "selection_predictions.json" for n in chosen), out / "eng_dev.csv"]:
        scores[str(source.relative_to(out))] = dev_spearman(source)
    record = {"members": {n: {"model": m, "flags": f} for n, (m, f) in chosen.items()},
              "models": models, "precision": args.precision, "max_steps": args.max_steps, "seconds": seconds,
              "eng_dev_spearman": scores,
              "machine": f"{platform.node()} ({os.cpu_count()} CPUs)"}
    if args.final:
        record["final"] = final(out / "final", out, chosen, models, args.precision, args.max_steps)
    (out / "recipe.json").write_text(json.dumps(record, indent=1))
    print(json.dumps({"eng dev Spearman": scores, "seconds": seconds}, indent=1))
    print(f"ensemble folder: {out / 'ensemble'}; eng test predictions: {out / 'eng_test.csv'}")
    if args.final:
        print(f"final (trained on eng train + dev): {out / 'final' / 'ensemble'}; eng test "
              f"predictions: {out / 'final' / 'eng_test.csv'}")
    if args.publish:
        recipe = f"english-recipe{'-final' if args.final else ''}-{len(chosen)}-member"
        test = out / "final" / "eng_test.csv" if args.final else out / "eng_test.csv"
        command = shlex.join(["python", "scripts/train_semrel_2024_recipe.py", *(sys.argv[1:] if argv is None
                                                                                 else argv)])
        [path] = prediction_files.publish_or_exit(
            [prediction_files.Prediction(test, "semrel-2024", "eng", "test", recipe, prediction_files.HELD_BACK,
                                         "pred_eng.csv")],
            command=command, machine=args.machine or prediction_files.this_machine(), into=args.publish)
        print(f"published: {test} -> {path}")


def combine(out: Path, names: list[str], splits: tuple[str, ...]) -> dict[str, float]:
    """The members' rank average (``out/ensemble``) and its predictions of ``splits``
    (``eng_dev.csv``, ``eng_test.csv``); each step's seconds."""
    argv = [a for name in names for a in ("--member", str(out / name))]
    seconds = {"ensemble": cli.run_logged("ensemble", "--method", "rank", *argv,
                                          "--output", str(out / "ensemble"))}
    for split in splits:
        file = out / {"validation": "eng_dev.csv", "test": "eng_test.csv"}[split]
        seconds[f"predict {split}"] = cli.run_logged("predict", *DATA, "--split", split, "--model",
                                                     str(out / "ensemble"), "--output", str(file))
    return seconds


def final(out: Path, chosen_in: Path, chosen: dict, models: dict, precision: str,
          max_steps: int | None) -> dict:
    """Each member of ``chosen`` retrained on eng train + dev for the epochs it kept (read from
    its run in ``chosen_in``) in ``out``, and their rank average over eng test; what ran (epochs,
    flags, seconds). A final member has no held-out rows whose scores a ``semrel ensemble`` rank
    average would rank against (it trained on dev), so each member's test scores are ranked
    among the 2,600 test pairs themselves (:func:`~semrel.trainers.combination.rank_average`
    without a reference): a file for the whole test set, as the task scores it."""
    record = {"members": {}, "seconds": {}}
    for name, (model, flags) in chosen.items():
        flags = final_flags(flags, kept_epochs(chosen_in / name)) + FINAL
        record["members"][name] = {"model": model, "flags": flags}
        record["seconds"][name] = train_member(out / name, models.get(model, model), flags,
                                               precision, max_steps, choose=False)
    record["seconds"]["predict test"] = 0.0
    files = [out / f"eng_test-{name}.csv" for name in chosen]  # beside, never inside, a model
    for name, file in zip(chosen, files, strict=True):
        record["seconds"]["predict test"] += cli.run_logged(
            "predict", *DATA, "--split", "test", "--model", str(out / name), "--output", str(file))
    write_rank_average(files, out / "eng_test.csv")
    return record


def write_rank_average(files: list[Path], output: Path) -> None:
    """The rank average of ``PairID,Pred_Score`` files over the pairs they score (each file's
    scores ranked among those pairs, :func:`~semrel.trainers.combination.rank_average` without a
    reference) as one such file, in the first file's order; every file must score the same pairs."""
    import numpy as np

    from semrel.metrics.submission import align, read_predictions, write_predictions
    from semrel.trainers.combination import rank_average

    first = read_predictions(files[0])
    columns = [align(read_predictions(file), first) for file in files]  # in the first's id order
    write_predictions(output, first.ids, rank_average(np.column_stack(columns)))
    print(f"rank average of {len(files)} files among the {len(first.ids)} pairs -> {output}", flush=True)


def dev_spearman(path: Path) -> float:
    """Spearman on eng dev: of a member's kept-epoch dev predictions, or of the ensemble's
    ``PairID,Pred_Score`` file through ``semrel evaluate``'s own functions."""
    if path.suffix == ".json":
        from semrel.trainers.combination import spearman
        from semrel.trainers.run_folder import load_run

        run = load_run(path.parent, path.name)
        return spearman(run.predictions, run.labels)
    from semrel.dataset_scripts.semrel_2024.evaluation import evaluate_file

    return evaluate_file(path, "eng", "validation")["eng"].spearman

if __name__ == "__main__":
    main()
