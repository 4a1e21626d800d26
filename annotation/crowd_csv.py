"""A crowd platform's results CSV (one row per assignment) as a BWS annotation file.

The columns are those of an MTurk batch results file (Prolific and other platforms' exports are
renamed to them): ``WorkerId``, ``AssignmentStatus``, ``Input.tuple_id`` (the tuple posted, as
``semrel bws design --pairs`` names it), ``Answer.best`` and ``Answer.worst`` (the pair ids
chosen); other columns (``WorkTimeInSeconds``, ``HITId``, ...) are ignored, except
``Input.Item1..Input.Itemk``: where the batch carried them, they must be the tuple's pair ids.
Rows are read in file order and handed to :func:`semrel.annotation.answers.bws_rows`, which states
and counts the rules (skipped, cancelled, incomplete, contradictory, repeated). Besides them:

- ``rejected``: ``AssignmentStatus`` ``Rejected`` -- no annotation, counted;
- a row with neither best nor worst is ``skipped``; ``Submitted`` and ``Approved`` rows are answers;
  any other status is an error naming the row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from semrel.metrics.bws.readers import ITEM_COLUMN, read_table
from semrel.metrics.errors import DataValidationError

from .answers import AnswerRows, RawAnswer, bws_rows

REQUIRED = ("WorkerId", "AssignmentStatus", "Input.tuple_id", "Answer.best", "Answer.worst")
ANSWERED = ("Submitted", "Approved")
REJECTED = "Rejected"
REJECTED_RULE = "rejected on the platform: no annotation"


@dataclass(frozen=True)
class CrowdAnswers:
    """The BWS rows of a results file and the assignments rejected on the platform."""

    rows: AnswerRows
    rejected: int

    def summary(self) -> str:
        return f"{self.rows.summary()}; {self.rejected} rejected ({REJECTED_RULE})"


def read_crowd_csv(path, tuples: Mapping[str, Sequence[str]], *, salt: str) -> CrowdAnswers:
    """The answers of the results CSV ``path`` to the design ``tuples`` (tuple id -> pair ids), rules
    as in the module docstring; ``salt`` keys the annotator pseudonyms.

    >>> import tempfile, os
    >>> f = os.path.join(tempfile.mkdtemp(), "results.csv")
    >>> _ = open(f, "w").write("WorkerId,AssignmentStatus,Input.tuple_id,Answer.best,Answer.worst\\n"
    ...                        "W1,Approved,t1,p1,p4\\nW2,Rejected,t1,p2,p3\\nW3,Submitted,t1,,\\n")
    >>> read_crowd_csv(f, {"t1": ["p1", "p2", "p3", "p4"]}, salt="k").summary()  # doctest: +ELLIPSIS
    '2 answers from 2 annotators -> 1 annotations; 1 skipped (...); 1 rejected (rejected on the platform: ...)'
    """
    path = Path(path)
    columns, table = read_table(path)
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        raise DataValidationError(str(path), None, "missing columns",
                                  f"a results file needs {', '.join(REQUIRED)}; missing {', '.join(missing)}")
    at = {c: columns.index(c) for c in columns}
    inputs = sorted((c for c in columns if c.startswith("Input.") and ITEM_COLUMN.fullmatch(c[6:])),
                    key=lambda c: int(c[10:]))
    answers, rejected = [], 0
    for number, values in enumerate(table.tolist(), 1):
        status, tuple_id = values[at["AssignmentStatus"]].strip(), values[at["Input.tuple_id"]].strip()
        best, worst = values[at["Answer.best"]].strip(), values[at["Answer.worst"]].strip()
        if status == REJECTED:
            rejected += 1
            continue
        if status not in ANSWERED:
            raise DataValidationError(str(path), number, "unknown AssignmentStatus",
                                      f"{status!r}, not one of {', '.join([*ANSWERED, REJECTED])}")
        posted = [values[at[c]].strip() for c in inputs]
        if posted and tuple_id in tuples and posted != list(tuples[tuple_id]):
            raise DataValidationError(str(path), number, "the posted items are not the tuple's pair ids",
                                      f"tuple {tuple_id!r}: {', '.join(posted)} posted, the tuples file has "
                                      f"{', '.join(tuples[tuple_id])}")
        answers.append(RawAnswer(values[at["WorkerId"]].strip(), tuple_id, best or None, worst or None,
                                 "answered" if best or worst else "skipped", f"row {number}"))
    return CrowdAnswers(bws_rows(answers, tuples, salt=salt, source=str(path)), rejected)
