"""Where a running annotation project stands: its answers, pulled into memory, as the BWS
annotations that :func:`semrel.metrics.bws.plan.bws_plan` plans from, and its progress.

The annotations are those ``semrel bws plan`` reads from the file the same pull writes
(:func:`semrel.annotation.bws_file.write_rows`): rows numbered from 1 in the order pulled, items
the whitespace-normalised pair ids (:func:`semrel.metrics.bws.readers.normalised`), the
annotator pseudonym of each row beside them; so both give the same plan.
"""

from __future__ import annotations

from semrel.metrics.errors import DataValidationError

from .answers import AnswerRows


def annotations(rows: AnswerRows, source: str):
    """(``Annotations`` of ``rows``, the annotator pseudonym of each); ``source`` names the project
    in errors. No annotation yet is a ``DataValidationError``: there is nothing to plan from."""
    import numpy as np

    from semrel.metrics.bws.counting import encode_annotations, factorize
    from semrel.metrics.bws.readers import normalised

    if not rows.rows:
        raise DataValidationError(source, None, "no annotations yet",
                                  f"{rows.n_answers} answers read, none kept; nothing to plan from")
    table = np.empty((len(rows.rows), len(rows.header)), dtype=object)
    table[:] = rows.rows
    codes, distinct = factorize(table[:, 2:])  # the k items, best, worst: each distinct text normalised once
    cells = np.array([normalised(text) for text in distinct], dtype=object)[codes].reshape(len(table), -1)
    ann = encode_annotations(cells[:, :-2], cells[:, -2], cells[:, -1], choice="item",
                             rows=np.arange(1, len(table) + 1), source=source)
    return ann, table[:, 0]


def progress(pulled) -> dict:
    """Tasks (all, answered), answers read, annotators, annotations kept and each rule's count of a
    :class:`semrel.annotation.label_studio.Pulled`."""
    rows = pulled.rows
    return {"tasks": pulled.n_tasks, "answered": pulled.n_tasks - pulled.unanswered, "answers": rows.n_answers,
            "annotators": rows.n_annotators, "annotations": len(rows.rows), "rules": dict(rows.counts)}
