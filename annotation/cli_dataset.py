"""``semrel annotate potato | potato-pull | dataset``: Potato's task folder out and its answers back,
and scored pairs as a dataset folder (registered from :mod:`semrel.annotation.cli`; the work is done
in :mod:`.potato` and :mod:`.dataset_out`).

    semrel annotate potato TUPLES --pairs PAIRS --output DIR [--guide TEXT]
    semrel annotate potato-pull DIR --output ANNOTATIONS [--annotator-key KEY]
    semrel annotate dataset ANNOTATIONS... --pairs PAIRS --output DIR --license L --language xx [...]

Imports the standard library only; each handler imports what it needs.
"""

from __future__ import annotations

import logging
from pathlib import Path

from semrel.command_line import UsageError, add_command, at_least

log = logging.getLogger(__name__)


def register_potato(annotate) -> None:
    task = add_command(annotate, "potato", annotate_potato, "a Potato best-worst task folder of BWS tuples",
                       description="Write Potato's task folder (config.yaml with its bws scheme, the data file, "
                                   "semrel-task.json) that shows the tuples as designed; start it with "
                                   "`potato start DIR/config.yaml`.")
    task.add_argument("tuples", type=Path, metavar="TUPLES", help="tuples file (semrel bws design --pairs)")
    task.add_argument("--pairs", type=Path, required=True, metavar="PAIRS", help="the pairs file the tuples name")
    task.add_argument("--output", type=Path, required=True, metavar="DIR", help="the new task folder")
    task.add_argument("--guide", default=None, metavar="TEXT", help="the annotation guide shown above each tuple")
    pull = add_command(annotate, "potato-pull", annotate_potato_pull, "a Potato task's answers as a BWS file",
                       description="Read every annotator's answers of a task folder written by semrel annotate "
                                   "potato into the BWS annotation file semrel bws score reads.")
    pull.add_argument("task", type=Path, metavar="DIR", help="the task folder")
    pull.add_argument("--output", type=Path, required=True, metavar="ANNOTATIONS", help="the BWS file to write")
    pull.add_argument("--annotator-key", default=None, metavar="KEY",
                      help="key of the annotator pseudonyms (default $SEMREL_ANNOTATOR_KEY, else public)")


def annotate_potato(args) -> int:
    from .bws_file import read_design
    from .potato import GUIDE, write_task

    for path in (args.tuples, args.pairs):
        if not path.is_file():
            raise UsageError(f"{path}: no such file")
    _check_output(args.output, {"TUPLES": [args.tuples], "--pairs": [args.pairs]}, folder=True)
    tuples, pairs = read_design(args.tuples, args.pairs)
    for path in write_task(tuples, pairs, args.output, guide=args.guide or GUIDE):
        print(f"-> {path}")
    print(f"{len(tuples)} tuples of {len(pairs)} pairs; start Potato with: potato start {args.output / 'config.yaml'}")
    return 0


def annotate_potato_pull(args) -> int:
    from .answers import annotator_key
    from .bws_file import write_rows
    from .potato import read_answers

    if not args.task.is_dir():
        raise UsageError(f"{args.task}: no such folder (a task folder of semrel annotate potato)")
    _check_output(args.output, {"DIR": [args.task]})
    answers = read_answers(args.task, salt=annotator_key(args.annotator_key))
    write_rows(args.output, answers)
    print(answers.summary())
    print(f"-> {args.output}")
    return 0


def _check_output(output, inputs: dict, *, folder: bool = False) -> None:
    """``--output`` (``folder``: an output folder) can be written and replaces none of ``inputs``, checked
    before any work (:func:`semrel.metrics.output_files.check_output`)."""
    from semrel.metrics.errors import ParameterError
    from semrel.metrics.output_files import check_output

    try:
        check_output(output, "--output", inputs, folder=folder)
    except ParameterError as exc:
        raise UsageError(exc.worded(show=str, sep=" ")) from None


def register_dataset(annotate) -> None:
    sub = add_command(annotate, "dataset", annotate_dataset, "scored pairs as a dataset folder (Parquet + card)",
                      description="Score BWS annotations of pairs (counting), compute their split-half "
                                  "reliability, and write a Hub-layout dataset folder (Parquet + README card) "
                                  "that datasets.load_dataset, semrel fit and semrel benchmark take.")
    sub.add_argument("annotations", type=Path, nargs="+", metavar="ANNOTATIONS",
                     help="BWS annotation files whose items are pair ids (semrel annotate pull | potato-pull)")
    sub.add_argument("--pairs", type=Path, required=True, metavar="PAIRS", help="the pairs file the annotations name")
    sub.add_argument("--output", type=Path, required=True, metavar="DIR", help="the dataset folder to write")
    sub.add_argument("--name", default=None, help="the dataset's pretty name (default: the folder's name)")
    sub.add_argument("--license", required=True,
                     help="the data's licence, a Hub licence id: cc0-1.0, cc-by-4.0, cc-by-sa-4.0, cc-by-nc-4.0, "
                          "cc-by-nc-sa-4.0, apache-2.0 or mit")
    sub.add_argument("--language", action="append", required=True, metavar="LANG",
                     help="a language of the sentences (repeat): an ISO 639-1, 639-2 or 639-3 code (en, deu, gsw)")
    sub.add_argument("--trials", type=at_least(1), default=1000, help="random half splits of the SHR")
    sub.add_argument("--seed", type=at_least(0), default=0, help="seed of the half splits and their bootstrap")


def annotate_dataset(args) -> int:
    """The checked arguments to :func:`~semrel.annotation.dataset_out.write_dataset`; prints what it wrote."""
    from semrel.metrics.bws.pairs_file import read_pairs
    from semrel.metrics.errors import ParameterError
    from semrel.metrics.output_files import check_output

    from .dataset_out import check_card_values, write_dataset

    for path in [*args.annotations, args.pairs]:
        if not path.is_file():
            raise UsageError(f"{path}: no such file")
    try:
        check_card_values(args.license, args.language)
        check_output(args.output, "--output", {"ANNOTATIONS": args.annotations, "--pairs": [args.pairs]},
                     folder=True)
    except ParameterError as exc:
        raise UsageError(exc.worded(name=lambda p: p if p.startswith("-") or p.isupper() else f"--{p}", show=str,
                                    sep=" ")) from None
    written = write_dataset(args.annotations, read_pairs(args.pairs), args.output, license=args.license,
                            languages=args.language, name=args.name, trials=args.trials, seed=args.seed)
    rel = written.reliability
    interval = ", ".join(f"{x:.4f}" for x in rel["split_half_interval"] or [])
    print(f"{written.n_pairs} pairs, {rel['annotations']} annotations; SHR {rel['split_half']:.4f} [{interval}], "
          f"human ceiling {rel['ceiling']:.4f}")
    print(f"-> {written.folder / written.data_file}")
    print(f"-> {written.folder / 'README.md'}")
    return 0
