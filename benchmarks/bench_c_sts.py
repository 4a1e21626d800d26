"""C-STS on the open re-annotation: the paper's encoders (Deshpande et al. 2023, §4.1: cross-,
bi- and tri-encoder; objectives MSE, quadruplet, quadruplet + MSE) trained on the re-annotated
train split, each run's epoch kept on a dev split carved from train, then scored on the
re-annotated validation split (Tu et al. 2024's human labels, 2,620 rows; the 214 rows labelled
-1, ``validation_invalid``, are never scored).

Data: c-sts config ``reannotated-dev`` (docs/c-sts.md): ``train`` 10,206 rows, ``dev`` 1,136
rows (568 sentence pairs, both conditions of a pair on one side), ``validation`` as in
``reannotated``. Nothing is chosen on validation: epochs on dev (``--eval-split dev``), the
ensembles' members and method on dev.

A candidate is one of

- ``zeroshot@MODEL``: the pretrained encoder's cosine of the two sentences, the condition ignored;
- ``zeroshot-prefix@MODEL``: the same with the condition prefixed to each sentence
  (``"<condition>: <sentence>"``);
- ``zeroshot-pair@MODEL``: each sentence paired with the condition as a text pair, the input of
  the conditional bi-encoder (C-STS §4.1) before any training;
- ``ENCODER@MODEL[,option=value...]`` (the ``semrel cv --member`` syntax, e.g.
  ``bi@minilm,epochs=2,objective=quad+mse,on_invalid=omit``): one ``semrel fit`` on
  ``reannotated-dev`` train, evaluated on dev after each epoch, the best epoch by dev Spearman
  kept, then scored on validation.

Zero-shot candidates are scored here with the trainers' encoder classes (no command scores an
untrained model); every training is a ``semrel fit`` command, printed before it runs, and leaves
its kept model's dev and validation scores as ``dev.json`` and ``validation.json`` beside its
run. Ensembles over the finished trained members are made from those files, as ``semrel ensemble``
combines the runs: the member set whose rank average scores best on dev, then its rank average
(each member's quantile among its own validation scores) and ridge stack (fit on the members' dev
scores; its dev figure is out-of-fold, 5 folds by sentence pair), each scored on validation.

Per run the record holds dev Spearman by epoch, the kept epoch, validation Spearman and Pearson
with 95 % intervals (:func:`semrel.metrics.correlation_intervals.correlation_intervals`: paired
bootstrap, 1,000 resamples, seed 0; Fisher z) and training seconds. Resumable: each finished
candidate is stored in ``OUT/results.json`` under a key of its settings and kept next time; a
run cut off mid-way resumes from its last complete checkpoint (``--resume last``).
``--record FILE`` writes the study's entry (:data:`KEY`) into a results file
(``benchmarks/results.json``) after each candidate; :func:`markdown` renders that entry as the
table of benchmarks/results/c-sts.md. ``--publish``: each trained candidate's two files as it
finishes (:mod:`c_sts_study.published`), then the best ensemble's (:func:`publish`; ``--report
--publish``: the stored study's file, nothing run). ``--reuse-published``: a trained candidate
whose files are published is not trained again, its files stand for it (a study that spans fresh
machines, a candidate at a time). ``--write-results``: the best ensemble's validation figure as
C-STS's best fine-tuned figure (RESULTS' cell) in ``DIR/results.json``. Not part of the test suite.

    nice -n 5 python benchmarks/bench_c_sts.py --group screen --record benchmarks/results.json
    python benchmarks/bench_c_sts.py --group screen --report          # the stored table
    python benchmarks/bench_c_sts.py --only zeroshot@minilm --model minilm=tiny-bert --max-steps 2
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from c_sts_study.candidates import GROUPS, ZERO_SHOT, canonical, fit_flags
from c_sts_study.runs import Study
from c_sts_study.tables import KEY, entry, fine_tuned_cell, markdown, publish

from semrel import cli
from semrel.publishing.prediction_files import add_publish_flag, publish_problem, this_machine
from semrel.publishing.results import store, store_fine_tuned


def model_override(text: str) -> tuple[str, str]:
    """An argparse type: ``NAME=DIR``."""
    name, sep, folder = text.partition("=")
    if not sep or not name or not folder:
        raise argparse.ArgumentTypeError(f"must be NAME=DIR (e.g. minilm=tiny-bert), not {text!r}")
    return name, folder


def study_command(groups: list[str], only: list[str], eval_steps: int | None, precision: str = "auto") -> str:
    """The command that reruns the study's candidates (what an entry records)."""
    flags = [a for s in only for a in ("--only", s)] or [a for g in groups for a in ("--group", g)]
    flags += ["--eval-steps", str(eval_steps)] if eval_steps else []
    flags += ["--precision", precision] if precision != "auto" else []
    return "python benchmarks/bench_c_sts.py " + shlex.join(flags)


def main(argv=None) -> None:
    ap = cli.Parser(prog="bench_c_sts.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--group", action="append", choices=sorted(GROUPS), default=[],
                    help="named candidate lists (repeat; default: screen)")
    ap.add_argument("--only", action="append", default=[], metavar="CANDIDATE",
                    help="run only these candidates (repeat; any candidate, see the docstring)")
    ap.add_argument("--out", type=Path, default=Path("build/bench/c-sts"))
    ap.add_argument("--model", action="append", default=[], type=model_override, metavar="NAME=DIR",
                    help="use this model folder for a model name (smoke runs)")
    ap.add_argument("--precision", choices=("bf16", "fp32", "auto"), default="auto",
                    help="semrel fit --precision (auto: bf16 on a GPU, float32 on a CPU; bf16 on "
                         "a CPU only where it has AVX512-BF16 or AMX, else it is emulated, slowly)")
    ap.add_argument("--max-steps", type=cli.at_least(1), help="smoke runs: stop each fit after N "
                                                              "steps, evaluating every step")
    ap.add_argument("--eval-steps", type=cli.at_least(1),
                    help="evaluate on dev (and checkpoint) every N steps instead of each epoch: "
                         "a finer choice, and a cut-off fit loses at most N steps")
    ap.add_argument("--no-ensembles", action="store_true", help="members only")
    ap.add_argument("--report", action="store_true", help="print the stored results, run nothing")
    ap.add_argument("--record", type=Path, metavar="FILE",
                    help=f"write the study's entry ({KEY}) into this results file after each "
                         "candidate (benchmarks/results.json)")
    add_publish_flag(ap, "each trained candidate's dev and validation predictions and those of the "
                         "ensemble best on dev")
    ap.add_argument("--reuse-published", action="store_true",
                    help="a trained candidate whose files --publish DIR records is not trained again: "
                         "they stand for it (a study that spans fresh machines)")
    ap.add_argument("--machine", help="the machine results.json names for --publish and --write-results "
                                      "(default: this one)")
    ap.add_argument("--write-results", action="store_true",
                    help="store the ensemble best on dev as C-STS's best fine-tuned figure (RESULTS' "
                         "c-sts cell) in --publish DIR's results.json")
    args = ap.parse_args(argv)
    if args.publish and (problem := "--publish: drop --no-ensembles (an ensemble's file is published)"
                         if args.no_ensembles else publish_problem(args.publish, bool(args.max_steps or args.model))):
        ap.error(problem)
    if args.reuse_published and not args.publish:
        ap.error("--reuse-published: reuses the files --publish DIR records; give --publish")
    if args.write_results and not args.publish:
        ap.error("--write-results: the cell names the published file's figure; give --publish")
    specs = args.only or [s for g in (args.group or ["screen"]) for s in GROUPS[g]]
    for spec in specs:
        if not spec.startswith("zeroshot"):
            try:
                fit_flags(spec)
            except Exception as exc:  # ParameterError: the member syntax's own words
                ap.error(f"argument --only: {exc}")
        elif spec.split("@", 1)[0] not in ZERO_SHOT or "@" not in spec:
            ap.error(f"argument --only: {spec!r} is not one of "
                     f"{', '.join(f'{h}@MODEL' for h in ZERO_SHOT)}")
    command = study_command(args.group or ["screen"], args.only, args.eval_steps, args.precision)
    study = Study(args.out, args.precision, args.max_steps, dict(args.model), args.eval_steps,
                  publish=None if args.report else args.publish, reuse=args.reuse_published,
                  command=command, machine=args.machine or this_machine())
    records, not_run = [], []
    for n, spec in enumerate(specs):
        stored = study.cache.get(study.key(spec))
        if args.report:
            records += [stored] if stored else []
            not_run += [] if stored else [canonical(spec)]
            continue
        records.append(study.run(spec))
        if args.record:
            store(KEY, entry(records, [], command, args.precision, [canonical(s) for s in specs[n + 1:]]), args.record)
    ensembles = [] if args.no_ensembles else study.ensembles(records, build=not args.report)
    result = entry(records, ensembles, command, args.precision, not_run)
    if args.record:
        store(KEY, result, args.record)
    print(markdown(result))
    if args.publish:
        publish(ensembles, command, study.machine, args.publish)
    if args.write_results:
        results = Path(args.publish) / "results.json"
        store_fine_tuned("c-sts", fine_tuned_cell(ensembles, command, study.machine), results)
        print(f"stored: C-STS's best fine-tuned figure in {results}")


if __name__ == "__main__":
    main()
