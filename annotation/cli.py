"""The commands of making a dataset, registered on the ``semrel`` command (each in its own function;
the work is done in the room's modules):

    semrel pairs CORPUS... --n N [--seed S] [--draw exponential|uniform] [--by MODEL] --output PAIRS.csv
    semrel annotate potato TUPLES --pairs PAIRS --output DIR [--guide TEXT]
    semrel annotate potato-pull DIR --output ANNOTATIONS [--annotator-key KEY]
    semrel annotate dataset ANNOTATIONS --pairs PAIRS --output DIR [--license L] [--language xx ...]
    semrel annotate status --project ID --tuples T --pairs P [--target R] [--per-tuple K] [--json] [--output DIR]

Imports the standard library only; each handler imports what it needs.
"""

from __future__ import annotations

import logging
from pathlib import Path

from semrel.command_line import UsageError, add_command, add_group, at_least, number

log = logging.getLogger(__name__)


def register(commands) -> None:
    """Add the annotation room's commands to the ``semrel`` command."""
    _register_pairs(commands)
    annotate = _annotate_group(commands)
    _register_label_studio(annotate)
    from .cli_dataset import register_dataset, register_potato
    from .cli_status import register_status

    register_potato(annotate)
    register_dataset(annotate)
    register_status(annotate)


def _annotate_group(commands):
    """``semrel annotate COMMAND``: the annotation tools' subcommands register on what this returns."""
    return add_group(commands, "annotate", "annotation tools: Label Studio, Potato, a crowd CSV",
                     "Send BWS tuples to an annotation tool and read its answers back.")


# ---- semrel pairs ----------------------------------------------------------------------------
PAIRS = """Candidate pairs from a corpus, by the STR-2021 procedure: sentences of --min-tokens to --max-tokens
word tokens; random pairs scored by IDF-weighted Dice (or --by MODEL: the model's score, a
bi-encoder's cosine); --buckets buckets between equally spaced percentiles of the scores;
exponentially more pairs from low to high buckets (--growth: the weight ratio of neighbouring
buckets) or --draw uniform. N pairs from each source (--source-column), or from the whole corpus.
Several CORPUS files are read as shards of one corpus, in the order given. Writes
pair_id,sentence1,sentence2,sampling_score,sampled_by,bucket,source to --output."""


def _register_pairs(commands) -> None:
    sub = add_command(commands, "pairs", pairs, "candidate pairs from a corpus (IDF-Dice or model buckets)",
                      description=PAIRS)
    sub.add_argument("corpus", nargs="+", type=Path, metavar="CORPUS",
                     help="sentences: .txt (one a line), .csv, .tsv or .jsonl (a text column)")
    sub.add_argument("--n", type=at_least(1), required=True, help="pairs to draw (from each source)")
    sub.add_argument("--output", type=Path, required=True, metavar="PAIRS.csv", help="the pairs file to write")
    sub.add_argument("--seed", type=at_least(0), default=0, help="seed of every random draw")
    sub.add_argument("--draw", choices=("exponential", "uniform"), default="exponential",
                     help="exponential: bucket b weighs growth**b; uniform: the same number per bucket")
    sub.add_argument("--growth", type=number, default=None,
                     help="weight ratio of neighbouring buckets in the exponential draw (default 1.3)")
    sub.add_argument("--buckets", type=at_least(1), default=50, help="percentile buckets of the sampling score")
    sub.add_argument("--candidates", type=at_least(1), default=None,
                     help="random pairs scored per source (default max(20 N, 10000), at most all pairs)")
    sub.add_argument("--min-tokens", type=at_least(1), default=5, help="fewest word tokens of a sentence")
    sub.add_argument("--max-tokens", type=at_least(1), default=25, help="most word tokens of a sentence")
    sub.add_argument("--by", metavar="MODEL", default=None,
                     help="score candidates by this model (any model semrel loads) instead of IDF-weighted Dice")
    sub.add_argument("--format", choices=("auto", "lines", "csv", "tsv", "jsonl"), default="auto",
                     help="corpus format; auto: by suffix (.txt lines, .csv, .tsv, .jsonl)")
    sub.add_argument("--text-column", default="text", help="the text column (field) of a csv/tsv/jsonl corpus")
    sub.add_argument("--source-column", default=None, help="a source column: pairs are drawn within each source")
    sub.add_argument("--on-invalid", choices=("raise", "omit"), default="raise",
                     help="rows with an empty text or source: raise stops at the first, omit skips and counts them")


FLAGS = {"n": "--n", "seed": "--seed", "draw": "--draw", "growth": "--growth", "buckets": "--buckets",
         "candidates": "--candidates", "min_tokens": "--min-tokens", "max_tokens": "--max-tokens",
         "format": "--format", "text_column": "--text-column", "source_column": "--source-column", "by": "--by"}


def pairs(args) -> int:
    import sys

    from semrel.metrics.errors import ParameterError
    from semrel.metrics.output_files import check_output, written_whole

    from .pairs import GROWTH, sample_pairs

    try:
        check_output(args.output, "--output", {"CORPUS": args.corpus})
        for path in args.corpus:
            if not path.is_file():
                raise UsageError(f"{path}: no such file (a corpus: .txt, .csv, .tsv or .jsonl)")
        sample = sample_pairs(args.corpus, args.n, seed=args.seed, draw=args.draw,
                              growth=GROWTH if args.growth is None else args.growth, buckets=args.buckets,
                              candidates=args.candidates, min_tokens=args.min_tokens, max_tokens=args.max_tokens,
                              by=args.by, source_column=args.source_column, format=args.format,
                              text_column=args.text_column, on_invalid=args.on_invalid,
                              progress=not args.quiet and sys.stderr.isatty())
    except ParameterError as exc:
        raise UsageError(exc.worded(name=lambda p: FLAGS.get(p, p), show=str, sep=" ")) from None
    with written_whole(args.output, "--output", newline="") as file:
        sample.pairs.to_csv(file, index=False)
    for line in sample.summary():
        log.info("%s", line)
    log.info("%d pairs written to %s", len(sample.pairs), args.output)
    return 0


# ---- semrel annotate push | pull | crowd ------------------------------------------------------
SERVER = """The server: --url (else $LABEL_STUDIO_URL) and --token (else $LABEL_STUDIO_API_KEY), a personal
access token (Label Studio: Account & Settings > Personal Access Token) or, where the organisation
allows them, a legacy API token."""


def _server_args(sub) -> None:
    sub.add_argument("--url", default=None, help="the Label Studio server (default $LABEL_STUDIO_URL)")
    sub.add_argument("--token", default=None, help="its access token (default $LABEL_STUDIO_API_KEY)")


def _design_args(sub, role: str) -> None:
    sub.add_argument("--pairs", type=Path, required=True, metavar="PAIRS", help=f"the pairs file {role}")


def _register_label_studio(annotate) -> None:
    push_ = add_command(annotate, "push", annotate_push, "a Label Studio project of BWS tuples",
                        description="Create a Label Studio project with a best-worst interface (four pairs, "
                                    "'most related' and 'least related') and import the tuples.\n\n" + SERVER)
    push_.add_argument("tuples", type=Path, metavar="TUPLES", help="tuples file (semrel bws design --pairs)")
    _design_args(push_, "the tuples name")
    push_.add_argument("--project", required=True, metavar="NAME", help="title of the new project")
    push_.add_argument("--guide", default=None, metavar="TEXT",
                       help="the annotation guide shown above each task (default: STR-2021's wording)")
    _server_args(push_)
    pull_ = add_command(annotate, "pull", annotate_pull, "a Label Studio project's answers as a BWS file",
                        description="Export every annotation of a project pushed by semrel annotate push into "
                                    "the BWS annotation file semrel bws score reads.\n\n" + SERVER)
    pull_.add_argument("--project", required=True, type=at_least(1), metavar="ID", help="the project id")
    pull_.add_argument("--tuples", type=Path, required=True, metavar="TUPLES", help="the tuples file pushed")
    _design_args(pull_, "the tuples name")
    pull_.add_argument("--output", type=Path, required=True, metavar="ANNOTATIONS", help="the BWS file to write")
    pull_.add_argument("--annotator-key", default=None, metavar="KEY",
                       help="key of the annotator pseudonyms (default $SEMREL_ANNOTATOR_KEY, else public)")
    _server_args(pull_)
    crowd_ = add_command(annotate, "crowd", annotate_crowd, "a crowd platform's results CSV as a BWS file",
                         description="Read a crowd platform's results CSV (one row per assignment, MTurk batch "
                                     "results columns) into the BWS annotation file semrel bws score reads.")
    crowd_.add_argument("results", type=Path, metavar="RESULTS", help="the results CSV")
    crowd_.add_argument("--tuples", type=Path, required=True, metavar="TUPLES", help="the tuples file posted")
    _design_args(crowd_, "the tuples name")
    crowd_.add_argument("--output", type=Path, required=True, metavar="ANNOTATIONS", help="the BWS file to write")
    crowd_.add_argument("--annotator-key", default=None, metavar="KEY",
                        help="key of the annotator pseudonyms (default $SEMREL_ANNOTATOR_KEY, else public)")


def annotate_push(args) -> int:
    from .label_studio import push_files

    pushed = push_files(args.tuples, args.pairs, title=args.project, guide=args.guide, url=args.url,
                        token=args.token)
    log.info("project %d %r: %d tuples imported; label them at %s", pushed.id, pushed.title, pushed.n_tasks,
             pushed.page)
    return 0


def annotate_pull(args) -> int:
    from .answers import annotator_key
    from .label_studio import pull_file

    _check_output(args, {"--tuples": [args.tuples], "--pairs": [args.pairs]})
    pulled = pull_file(args.project, args.tuples, args.pairs, args.output, url=args.url, token=args.token,
                       key=annotator_key(args.annotator_key))
    log.info("%s", pulled.summary())
    log.info("%d annotations written to %s", len(pulled.rows.rows), args.output)
    return 0


def annotate_crowd(args) -> int:
    from .answers import annotator_key
    from .bws_file import read_design, write_rows
    from .crowd_csv import read_crowd_csv

    _check_output(args, {"RESULTS": [args.results], "--tuples": [args.tuples], "--pairs": [args.pairs]})
    read = read_crowd_csv(args.results, read_design(args.tuples, args.pairs)[0], salt=annotator_key(args.annotator_key))
    write_rows(args.output, read.rows)
    log.info("%s", read.summary())
    log.info("%d annotations written to %s", len(read.rows.rows), args.output)
    return 0


def _check_output(args, inputs: dict) -> None:
    """``--output`` can be written and is none of ``inputs``, checked before any work."""
    from semrel.metrics.errors import ParameterError
    from semrel.metrics.output_files import check_output

    try:
        check_output(args.output, "--output", inputs)
    except ParameterError as exc:
        raise UsageError(exc.worded(show=str, sep=" ")) from None
