"""The files on either side of an annotation tool: the design it was given (a tuples file and the
pairs file it names) and the BWS annotation file its answers become.

The annotation file is the NRC layout that ``semrel bws score`` reads (``Item1..Itemk``,
``BestItem``, ``WorstItem``, items and choices as pair ids) with an ``annotator`` (pseudonym) and a
``tuple_id`` column before them (:class:`~semrel.annotation.answers.AnswerRows`), written whole.
"""

from __future__ import annotations

import csv

from .answers import AnswerRows


def read_design(tuples_file, pairs_file) -> tuple[dict[str, list[str]], dict[str, dict[str, str]]]:
    """(tuple id -> pair ids, pair id -> its pairs-file row) of a tuples file and its pairs file, each
    checked by :mod:`semrel.metrics.bws.pairs_file`'s rules."""
    from semrel.metrics.bws.pairs_file import read_pairs, read_tuples

    pairs = read_pairs(pairs_file)
    return read_tuples(tuples_file, pairs), pairs.by_id()


def write_rows(path, rows: AnswerRows, argument: str = "--output") -> None:
    """``rows`` as a CSV written whole to ``path`` (an interruption leaves a previous file as it was)."""
    from semrel.metrics.output_files import written_whole

    with written_whole(path, argument, newline="") as file:
        writer = csv.writer(file)
        writer.writerow(rows.header)
        writer.writerows(rows.rows)
