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

**All languages at once** (``--all-languages``), each Track A language in ``OUT/all-languages/<lang>/``:
its final model chosen on its dev among three families (``semrel_2024_languages/from_all.py``): the
members above; the ``all`` members as they are (their rank average); those members trained further on
the language's train split (``semrel fit --model OUT/track-c/train-all/<encoder>``) at every rate of
:data:`GRID_FROM_ALL`, :data:`EPOCHS_FROM_ALL` epochs, the epoch and rate chosen on dev, with their rank
average and ridge stack. A member chosen on dev whose kept epoch is its last gets a sibling with
:data:`LONGER` × its epochs at the same rate, kept where it scores higher on dev. Only the final predicts
test; its paired bootstrap difference to the per-language final (``compare_correlations``) and the goals
(every language at or above LaBSE, the mean above 0.80, one at or above its best submission) make a
table of their own (``--write-results``: its own key of benchmarks/results.json).

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
``OUT/study.json`` gathers every result, ``OUT/tables.md`` the tables of benchmarks/results/semrel-2024-languages.md;
``--write-results`` stores them in benchmarks/results.json, and, once every labelled Track A
language (and Czech) is done, the report's best fine-tuned figures. ``--publish`` copies each Track A
language's final test file (``pred_<lang>.csv``) and Czech's (the rank average's 0-6 scores, as
``PairID,Pred_Score``) under ``benchmarks/predictions/`` and records them in benchmarks/results.json
(:mod:`semrel.publishing.prediction_files`); rerun on a finished study, it only publishes.

    python scripts/train_semrel_2024_languages.py [--track a] [--language kin] [--czech] [--all-languages]
    python scripts/train_semrel_2024_languages.py --model e5-small=tiny-bert --max-steps 2 \\
        --language kin --output runs/languages-smoke       # a smoke run with a tiny model
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import sys
from pathlib import Path

from semrel_2024_languages.all_table import markdown_all, store_all
from semrel_2024_languages.czech import czech_result
from semrel_2024_languages.from_all import all_languages, from_all_units, unfinished_from_all
from semrel_2024_languages.jobs import run_side_by_side
from semrel_2024_languages.members import Study
from semrel_2024_languages.tables import RESULTS_KEY, markdown, publish, store
from semrel_2024_languages.tracks import check_data, run_unit
from semrel_2024_languages.units import EPOCHS_A, EPOCHS_C, GRID_A, MODEL, SETTINGS_C, SHARED, czech_unit, units

from semrel import cli
from semrel.dataset_scripts.semrel_2024.files import TRACK_A, TRACK_C
from semrel.metrics.output_files import write_whole
from semrel.publishing import prediction_files


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
    ap.add_argument("--all-languages", action="store_true", help="per Track A language, also the "
                    f"members trained on config {SHARED} as they are and trained further on the language, "
                    "longer schedules where the kept epoch was the last, the final chosen on dev among "
                    "them all, and its paired test difference to the per-language final")
    ap.add_argument("--model", action="append", default=[], type=cli.model_folder(MODEL), metavar="NAME=DIR",
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
    if args.all_languages and "a" not in tracks:
        ap.error("--all-languages: builds on Track A (add --track a, or leave --track out)")
    from_all = from_all_units(out, chosen) if args.all_languages else []
    unfinished = [u for u in chosen + [czech_unit(out)] * args.czech if not (u.folder / "result.json").is_file()]
    check_data(ap, unfinished + unfinished_from_all(out, from_all))
    if args.jobs > 1:
        run_side_by_side(Path(__file__).resolve(), args, study, chosen, czech_unit(out) if args.czech else None,
                         from_all)
    results = [run_unit(study, unit) for unit in chosen]
    record = {"command": shlex.join(["python", "scripts/train_semrel_2024_languages.py", *sys.argv[1:]]),
              "machine": f"{platform.node()} ({os.cpu_count()} CPUs)", "precision": args.precision,
              "max_steps": args.max_steps, "grid_a": GRID_A, "epochs_a": EPOCHS_A,
              "settings_c": SETTINGS_C, "epochs_c": EPOCHS_C,
              "track_a": {r["language"]: r for r in results if r["track"] == "A"},
              "track_c": {r["language"]: r for r in results if r["track"] == "C"}}
    if args.czech:
        record["czech"] = czech_result(study, out)
    if from_all:
        record["all_languages"] = all_languages(study, out, list(zip(chosen, results, strict=True)))
    write_whole(out / "study.json", json.dumps(record, indent=1), "output")
    tables = markdown(record) + ("\n" + markdown_all(record["all_languages"]["languages"]) if from_all else "")
    write_whole(out / "tables.md", tables, "output")
    print(tables)
    if args.write_results:
        store(record, args.machine)
        if from_all:
            store_all(record, args.machine)
    if args.publish:
        publish(record, out, args.machine, args.publish)


if __name__ == "__main__":
    main()
