"""``semrel benchmark``: the flags handed to :func:`~trainers.benchmark.api.benchmark`; the table
on stdout, then the files written. No set scored: exit 1 (the table says why, nothing is
written); interrupted: exit 130."""

from __future__ import annotations

import argparse
import sys

from .cli_flags import data_dirs


def run_benchmark(args: argparse.Namespace) -> int:
    """``semrel benchmark``: every ``--model`` on every labelled set; the table on stdout,
    ``--output`` files, ``--card`` section."""
    from .benchmark.api import NothingScored, benchmark
    from .benchmark.report import table

    score_cache = False if args.no_score_cache else args.score_cache or True  # True: the default folder
    try:
        result = benchmark(args.model, args.only, model_kind=args.model_kind, output=args.output, card=args.card,
                           mirror=args.mirror, data_dirs=data_dirs(args.data_dir), password=args.password,
                           cache_dir=args.cache_dir, score_cache=score_cache, batch_size=args.batch_size,
                           max_length=args.max_length, n_resamples=args.resamples, progress=args.progress,
                           backend=args.backend, quantize=args.quantize)
    except KeyboardInterrupt:
        print("semrel benchmark: interrupted; the score cache keeps every batch it finished (a "
              "second run encodes the rest only)", file=sys.stderr)
        return 130
    except NothingScored as exc:
        print(table(exc.result))
        print(f"{args.prog}: error: {exc}", file=sys.stderr)
        return 1
    print(table(result))
    for path in result.written:
        print(f"-> {path}")
    return 0
