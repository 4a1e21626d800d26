"""The augment gain on SemRel-2024 English: a member trained on eng train plus nearest-neighbour
pairs (``semrel augment``, :mod:`semrel.trainers.neighbour_pairs`) against the same member trained
on eng train alone, both scored on eng dev (250 pairs).

1. ``plain``: ``semrel fit`` on eng train for a fixed number of epochs. Nothing is chosen on dev:
   this member is also the teacher, and a teacher that chose its checkpoint on dev is refused.
2. ``semrel augment --neighbours K --teacher plain``: each train sentence's K nearest other train
   sentences by MiniLM cosine become new pairs, each labelled by the teacher's score. Nobody
   annotated these pairs, and the objective needs a target for every pair, so the label comes from
   a model, as PEAR (SemEval-2024 Task 1) and Augmented SBERT (Thakur et al. 2021) do.
3. ``augmented``: the same ``semrel fit`` on the augmented folder (train, then the new pairs; dev
   and test unchanged).
4. Both predict eng dev (``semrel predict``). Spearman comes from ``semrel evaluate``'s functions.
   The paired comparison (:func:`semrel.metrics.compare.compare_correlations`) gives augmented −
   plain with its paired-bootstrap 95 % interval (1,000 resamples, seed 0) and Williams' test of
   the Pearson difference.

Every step is a ``semrel`` command, printed before it runs. A step whose output is there is kept.
``--teacher DIR`` labels with another model (it must have seen no dev or test pair). ``--record
FILE`` writes the entry :data:`KEY` into a results file. Not part of the test suite's timing.

    python benchmarks/bench_augment_gain.py --record benchmarks/results.json
    python benchmarks/bench_augment_gain.py --model tiny-bert --max-steps 2 --output build/bench/augment-smoke
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import sys
from pathlib import Path

from semrel import cli

KEY = "semrel_2024_augment_gain"
DATA = ["--dataset", "semrel-2024", "--config", "eng"]


def fit(folder: Path, dataset: list[str], args) -> float | None:
    """One ``semrel fit`` of the member unless ``folder`` holds a finished run; its seconds."""
    if (folder / "metrics.json").is_file():
        print(f"kept: {folder} holds a finished run", flush=True)
        return None
    argv = ["fit", *dataset, "--model", args.model, "--encoder", args.encoder, "--epochs", str(args.epochs),
            "--learning-rate", args.learning_rate, "--precision", args.precision, "--output", str(folder)]
    if args.max_steps is not None:
        argv += ["--max-steps", str(args.max_steps)]
    return cli.run_logged(*argv)


def dev_predictions(model: Path, path: Path) -> Path:
    if not path.is_file():
        cli.run_logged("predict", *DATA, "--split", "validation", "--model", str(model), "--output", str(path))
    return path


def compare(augmented: Path, plain: Path) -> dict:
    """Spearman of each file on eng dev (the official alignment: every dev pair once, no other)
    and the paired comparison, augmented − plain."""
    from semrel.dataset_scripts.semrel_2024.evaluation import gold
    from semrel.metrics.compare import compare_correlations
    from semrel.metrics.submission import align, read_predictions

    reference, _ = gold("eng", "validation")
    c = compare_correlations(*(align(read_predictions(p), reference) for p in (augmented, plain)),
                             reference.scores)
    d = c.spearman_difference
    return {"dev_spearman": {"augmented": round(c.spearman1, 4), "plain": round(c.spearman2, 4)},
            "difference": round(d.value, 4), "difference_ci": [round(d.interval.low, 4), round(d.interval.high, 4)],
            "bootstrap_p": round(c.spearman_p_value, 4), "williams_p": round(c.williams.p_value, 4), "n": c.n}


def main(argv=None) -> None:
    ap = cli.Parser(prog="bench_augment_gain.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--output", type=Path, default=Path("build/bench/augment-gain"))
    ap.add_argument("--model", default="minilm", help="the member's starting model (default: minilm)")
    ap.add_argument("--encoder", default="bi", help="semrel fit --encoder (default: bi)")
    ap.add_argument("--epochs", type=float, default=1.0, help="fixed epochs of both fits (default: 1)")
    ap.add_argument("--learning-rate", default="1e-5", help="both fits' rate (default: 1e-5, the "
                                                             "English recipe's bi@minilm)")
    ap.add_argument("--neighbours", type=cli.at_least(1), default=2, metavar="K",
                    help="new pairs per train sentence (default: 2)")
    ap.add_argument("--teacher", type=Path, help="label the new pairs with this model (default: the "
                                                 "plain member)")
    ap.add_argument("--embed-model", help="semrel augment --embed-model (default: its own, minilm)")
    ap.add_argument("--precision", choices=("bf16", "fp32", "auto"), default="auto")
    ap.add_argument("--max-steps", type=cli.at_least(1), help="smoke runs: stop each fit after N steps")
    ap.add_argument("--record", type=Path, metavar="FILE", help=f"write the {KEY!r} entry into FILE")
    args = ap.parse_args(argv)
    out = args.output
    seconds = {"plain": fit(out / "plain", DATA, args)}
    teacher = args.teacher or out / "plain"
    folder = out / "augmented-data"
    if not (folder / "neighbour_pairs.json").is_file():
        embed = ["--embed-model", args.embed_model] if args.embed_model else []
        seconds["augment"] = cli.run_logged("augment", *DATA, "--neighbours", str(args.neighbours), *embed,
                                            "--teacher", str(teacher), "--output", str(folder))
    seconds["augmented"] = fit(out / "augmented", ["--dataset", str(folder)], args)
    result = compare(dev_predictions(out / "augmented", out / "augmented.dev.csv"),
                     dev_predictions(out / "plain", out / "plain.dev.csv"))
    rows = json.loads((folder / "neighbour_pairs.json").read_text(encoding="utf-8"))["train_rows"]
    pairs = {origin: end - start for origin, (start, end) in rows.items()}
    record = {"command": shlex.join(["python", "benchmarks/bench_augment_gain.py", *(argv or sys.argv[1:])]),
              "machine": f"{platform.node()} ({os.cpu_count()} CPUs)", "model": args.model,
              "encoder": args.encoder, "epochs": args.epochs, "learning_rate": args.learning_rate,
              "neighbours": args.neighbours, "teacher": "the plain member" if args.teacher is None else str(teacher),
              "precision": args.precision, "max_steps": args.max_steps, "train_rows": pairs,
              "seconds": {k: round(v, 1) for k, v in seconds.items() if v is not None}, **result}
    (out / "augment_gain.json").write_text(json.dumps(record, indent=1), encoding="utf-8")
    print(json.dumps(record, indent=1))
    if args.record:
        from semrel.publishing.results import store

        store(KEY, record, args.record)


if __name__ == "__main__":
    main()
