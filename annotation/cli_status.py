"""``semrel annotate status``: where a running Label Studio project stands (registered from
:mod:`semrel.annotation.cli`; the pull is :mod:`.label_studio`'s, the plan and its printing
``semrel bws plan``'s, :mod:`semrel.metrics.bws.cli_plan`).

    semrel annotate status --project ID --tuples T --pairs P [--target R] [--per-tuple K] [--json] [--output DIR]

Imports the standard library only; the handler imports what it needs.
"""

from __future__ import annotations

import logging
from pathlib import Path

from semrel.command_line import UsageError, add_command, at_least

log = logging.getLogger(__name__)

STATUS = """The project's answers are pulled into memory, as semrel annotate pull reads them (the same
rules for skipped, cancelled, incomplete, contradictory and repeated answers), and planned as
semrel bws plan plans the file that pull writes: the progress (tasks answered of all, each rule's
count), then SHR now with its interval, the projection to --per-tuple K annotations per tuple and
to --target, the least certain items and the checks of each (pseudonymised) annotator. --output DIR:
the plan's pictures and item intervals, and the answers as a BWS file, project-ID-annotations.csv.
The server: --url (else $LABEL_STUDIO_URL) and --token (else $LABEL_STUDIO_API_KEY)."""


def register_status(annotate) -> None:
    """Add ``annotate status`` to the ``annotate`` subcommands."""
    from semrel.metrics.bws.cli_plan import plan_arguments

    sub = add_command(annotate, "status", annotate_status, "where a running Label Studio project stands",
                      description=STATUS)
    sub.add_argument("--project", required=True, type=at_least(1), metavar="ID", help="the project id")
    sub.add_argument("--tuples", type=Path, required=True, metavar="TUPLES", help="the tuples file pushed")
    sub.add_argument("--pairs", type=Path, required=True, metavar="PAIRS", help="the pairs file the tuples name")
    sub.add_argument("--annotator-key", default=None, metavar="KEY",
                     help="key of the annotator pseudonyms (default $SEMREL_ANNOTATOR_KEY, else public)")
    sub.add_argument("--url", default=None, help="the Label Studio server (default $LABEL_STUDIO_URL)")
    sub.add_argument("--token", default=None, help="its access token (default $LABEL_STUDIO_API_KEY)")
    plan_arguments(sub, "the project's")


def annotate_status(args) -> int:
    import json

    from semrel.metrics.bws.cli_plan import plan_one
    from semrel.metrics.errors import ParameterError
    from semrel.metrics.output_files import check_output

    from .answers import annotator_key
    from .bws_file import write_rows
    from .label_studio import pull_files
    from .status import annotations, progress

    if args.output is not None:
        try:
            check_output(args.output, "--output", {"--tuples": [args.tuples], "--pairs": [args.pairs]}, folder=True)
        except ParameterError as exc:
            raise UsageError(exc.worded(show=str, sep=" ")) from None
    label = Path(f"project-{args.project}")
    pulled = pull_files(args.project, args.tuples, args.pairs, url=args.url, token=args.token,
                        key=annotator_key(args.annotator_key))
    done = progress(pulled)
    if not args.json:
        print(f"{label}: {done['answered']} of {done['tasks']} tasks answered; {pulled.rows.summary()}")
    doc = plan_one(label, *annotations(pulled.rows, str(label)), None, args)
    if args.output is not None:
        written = args.output / f"{label}-annotations.csv"
        write_rows(written, pulled.rows)
        doc["files_written"].append(str(written))
        if not args.json:
            print(f"  wrote {written} (the answers: semrel bws plan and semrel bws score read it)")
    if args.json:
        print(json.dumps({"project": args.project, "progress": done, "plan": doc}, indent=2, ensure_ascii=False,
                         allow_nan=False))
    return 0
