"""Train the SemRel-2024 English recipe's final models and combine them into one ensemble folder
(the transfer study of benchmarks/RESULTS.md chose it on STR-2021 fold 0 and on eng dev).

Each member is fit on SemRel-2024 eng train (the 5,500 STR-2021 pairs; dev is kept for choosing
and measuring, never trained on), evaluated on eng dev (250 pairs) after each epoch, and the best
epoch by dev Spearman is kept (``--eval-dataset``, :mod:`semrel.trainers.selection`). The members
are combined by a rank average (``semrel ensemble --method rank``), which fits nothing. Then the
ensemble predicts eng dev (scored by ``semrel evaluate``) and eng test (``eng_test.csv``, the
task's ``PairID,Pred_Score``: its labels are held back, so it is scored outside the project).

Every step is a ``semrel`` command, printed before it runs, so the script is the recipe written
out; ``OUT/recipe.json`` records the commands, each step's seconds and the dev figures. A member
whose folder already holds ``metrics.json`` is kept; one cut off mid-way resumes from its last
checkpoint (``--resume last``).

    python scripts/train_semrel_2024_recipe.py [--output runs/semrel-2024-recipe]
    python scripts/train_semrel_2024_recipe.py --model minilm=tiny-bert --model mpnet=tiny-bert \\
        --max-steps 2 --output runs/recipe-smoke          # a smoke run with a tiny model
"""

from __future__ import annotations

import argparse
import json
import os
import platform
from pathlib import Path

from semrel import cli

DATA = ["--dataset", "semrel-2024", "--config", "eng"]
CHOOSE = ["--eval-dataset", "semrel-2024", "--eval-config", "eng", "--eval-split", "validation",
          "--metric-for-best", "spearman"]
MEMBERS = {  # folder: (model name, semrel fit flags); the study's finalists
    "bi-minilm": ("minilm", ["--encoder", "bi", "--epochs", "1", "--learning-rate", "1e-5"]),
    "cross-mpnet": ("mpnet", ["--encoder", "cross", "--epochs", "4", "--learning-rate", "4e-5"]),
}


def train_member(folder: Path, model: str, flags: list[str], precision: str,
                 max_steps: int | None) -> float | None:
    """Fit one member unless its folder holds a finished run; its training seconds (None: kept)."""
    if (folder / "metrics.json").is_file():
        print(f"kept: {folder} holds a finished run", flush=True)
        return None
    argv = ["fit", *DATA, "--model", model, *flags, *CHOOSE, "--precision", precision,
            "--output", str(folder)]
    if max_steps is not None:
        argv += ["--max-steps", str(max_steps), "--eval-steps", "1"]
    if any((folder / "checkpoints").glob("checkpoint-*/trainer_state.json")):
        argv += ["--resume", "last"]
    return cli.run_logged(*argv)


def model_override(text: str) -> tuple[str, str]:
    """An argparse type: ``NAME=DIR``, NAME one of the members' model names."""
    name, sep, folder = text.partition("=")
    names = sorted({model for model, _ in MEMBERS.values()})
    if not sep or name not in names or not folder:
        raise argparse.ArgumentTypeError(f"must be NAME=DIR with NAME one of {', '.join(names)}, "
                                         f"not {text!r}")
    return name, folder


def main(argv=None) -> None:
    ap = cli.Parser(prog="train_semrel_2024_recipe.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--output", type=Path, default=Path("runs/semrel-2024-recipe"))
    ap.add_argument("--model", action="append", default=[], type=model_override, metavar="NAME=DIR",
                    help="use this model folder for a member's model name (smoke runs)")
    ap.add_argument("--precision", choices=("bf16", "fp32", "auto"), default="auto",
                    help="semrel fit --precision (auto: fp32 on a CPU; bf16 autocast pays only on "
                         "CPUs with AVX512-BF16 or AMX)")
    ap.add_argument("--max-steps", type=cli.at_least(1), help="smoke runs: stop each member "
                                                              "after N steps")
    args = ap.parse_args(argv)
    models = dict(args.model)
    out = args.output
    seconds = {}
    for name, (model, flags) in MEMBERS.items():
        seconds[name] = train_member(out / name, models.get(model, model), flags, args.precision,
                                     args.max_steps)
    members = [a for name in MEMBERS for a in ("--member", str(out / name))]
    seconds["ensemble"] = cli.run_logged("ensemble", "--method", "rank", *members,
                                         "--output", str(out / "ensemble"))
    for split, file in (("validation", "eng_dev.csv"), ("test", "eng_test.csv")):
        seconds[f"predict {split}"] = cli.run_logged("predict", *DATA, "--split", split, "--model",
                                                     str(out / "ensemble"), "--output", str(out / file))
    scores = {}
    for source in [*(out / n / "selection_predictions.json" for n in MEMBERS), out / "eng_dev.csv"]:
        scores[str(source.relative_to(out))] = dev_spearman(source)
    record = {"members": {n: {"model": m, "flags": f} for n, (m, f) in MEMBERS.items()},
              "models": models, "precision": args.precision, "max_steps": args.max_steps, "seconds": seconds,
              "eng_dev_spearman": scores,
              "machine": f"{platform.node()} ({os.cpu_count()} CPUs)"}
    (out / "recipe.json").write_text(json.dumps(record, indent=1))
    print(json.dumps({"eng dev Spearman": scores, "seconds": seconds}, indent=1))
    print(f"ensemble folder: {out / 'ensemble'}; eng test predictions: {out / 'eng_test.csv'}")


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
