"""Answers of an annotation tool as BWS annotation rows, every odd one counted under a stated rule.

Every tool adapter (Label Studio, Potato, a crowd platform's CSV) reads its export into
:class:`RawAnswer` records, in the order they were given, and hands them to :func:`bws_rows`.
The rules (:data:`RULES`), applied in this order, are the same for every tool:

- ``skipped``: the annotator skipped the tuple (Potato: left it unanswered after opening it;
  a crowd row marked skipped) -- no annotation;
- ``cancelled``: the tool records the answer as cancelled (Label Studio's ``was_cancelled``) --
  no annotation;
- ``incomplete``: best without worst, or worst without best -- no annotation;
- ``contradictory``: the same pair chosen best and worst -- no annotation;
- ``repeated``: the annotator answered the same tuple again -- the last answer counts, each
  earlier one is counted here.

An answer naming a tuple the design does not hold, or a best/worst that is not one of its
tuple's pairs, is an error naming the answer (``DataValidationError``), never dropped.
Annotator ids are pseudonymised (:func:`pseudonym`): a keyed BLAKE2b hash, so the same person
keeps one id across pulls of a project and the raw id never reaches a written file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from semrel.metrics.errors import DataValidationError

STATUSES = ("answered", "skipped", "cancelled")
RULES = {
    "skipped": "skipped by the annotator: no annotation",
    "cancelled": "cancelled in the tool: no annotation",
    "incomplete": "best without worst (or worst without best): no annotation",
    "contradictory": "the same pair chosen best and worst: no annotation",
    "repeated": "the same annotator answered the tuple again: the last answer counts",
}


@dataclass(frozen=True)
class RawAnswer:
    """One answer as a tool exports it: ``best``/``worst`` are pair ids (None or "" where not
    given); ``status`` one of :data:`STATUSES`; ``where`` names it in errors (file and row, or the
    tool's annotation id)."""

    annotator: str
    tuple_id: str
    best: str | None
    worst: str | None
    status: str = "answered"
    where: str = ""


@dataclass(frozen=True)
class AnswerRows:
    """The BWS annotation rows (``header`` + ``rows``: annotator pseudonym, tuple id, the k pair ids,
    best, worst -- the NRC layout ``semrel bws score`` reads) and the answers counted per rule."""

    header: list[str]
    rows: list[list[str]]
    counts: dict[str, int] = field(default_factory=dict)
    n_answers: int = 0
    n_annotators: int = 0

    def summary(self) -> str:
        """One line: answers read, annotations kept, and each rule's count with the rule."""
        parts = [f"{self.counts.get(rule, 0)} {rule} ({text})" for rule, text in RULES.items()]
        return (f"{self.n_answers} answers from {self.n_annotators} annotators -> {len(self.rows)} "
                f"annotations; " + "; ".join(parts))


def pseudonym(annotator: str, salt: str) -> str:
    """``ann-`` and 12 hex digits of BLAKE2b(annotator, key=salt): stable for one salt, and the raw
    id cannot be read back without it.

    >>> pseudonym("worker-17", "project-a") == pseudonym("worker-17", "project-a")
    True
    >>> pseudonym("worker-17", "project-a") != pseudonym("worker-17", "project-b")
    True
    """
    key = hashlib.sha256(salt.encode("utf-8")).digest()  # any salt length -> a 32-byte key
    return "ann-" + hashlib.blake2b(str(annotator).encode("utf-8"), key=key, digest_size=6).hexdigest()


def bws_rows(answers: Iterable[RawAnswer], tuples: Mapping[str, Sequence[str]], *, salt: str,
             source: str = "<answers>") -> AnswerRows:
    """The annotation rows of ``answers`` under :data:`RULES` (module docstring); ``tuples`` maps each
    tuple id to its pair ids; ``salt`` keys the annotator pseudonyms; ``source`` names the export in
    errors.

    >>> t = {"t1": ["p1", "p2", "p3", "p4"]}
    >>> out = bws_rows([RawAnswer("w1", "t1", "p1", "p4"), RawAnswer("w1", "t1", "p2", "p4"),
    ...                 RawAnswer("w2", "t1", "p3", None), RawAnswer("w3", "t1", "p3", "p3")], t, salt="s")
    >>> [row[-2:] for row in out.rows], out.counts
    ([['p2', 'p4']], {'skipped': 0, 'cancelled': 0, 'incomplete': 1, 'contradictory': 1, 'repeated': 1})
    """
    counts = dict.fromkeys(RULES, 0)
    kept: dict[tuple[str, str], RawAnswer] = {}  # (annotator, tuple) -> the last answer, in first-answer order
    annotators, n = set(), 0
    k = max((len(items) for items in tuples.values()), default=0)
    for n, answer in enumerate(answers, 1):
        where = answer.where or f"answer {n}"
        annotators.add(answer.annotator)
        if answer.status not in STATUSES:
            raise DataValidationError(source, None, "unknown answer status",
                                      f"{where}: {answer.status!r}, not one of {', '.join(STATUSES)}")
        if answer.tuple_id not in tuples:
            raise DataValidationError(source, None, "answer to a tuple the design does not hold",
                                      f"{where}: tuple {answer.tuple_id!r}")
        if answer.status != "answered":
            counts[answer.status] += 1
            continue
        best, worst = answer.best or None, answer.worst or None
        for role, value in (("best", best), ("worst", worst)):
            if value is not None and value not in tuples[answer.tuple_id]:
                raise DataValidationError(source, None, f"{role} is not a pair of its tuple",
                                          f"{where}: {value!r} not in tuple {answer.tuple_id!r} "
                                          f"({', '.join(tuples[answer.tuple_id])})")
        if best is None or worst is None:
            counts["incomplete"] += 1
            continue
        if best == worst:
            counts["contradictory"] += 1
            continue
        key = (answer.annotator, answer.tuple_id)
        if key in kept:
            counts["repeated"] += 1
        kept[key] = answer
    header = ["annotator", "tuple_id", *(f"Item{i + 1}" for i in range(k)), "BestItem", "WorstItem"]
    rows = [[pseudonym(a.annotator, salt), a.tuple_id, *tuples[a.tuple_id], a.best, a.worst]
            for a in kept.values()]
    return AnswerRows(header, rows, counts, n, len(annotators))


def annotator_key(given: str | None) -> str:
    """The key of the annotator pseudonyms: ``given`` (a command's ``--annotator-key``), else
    ``$SEMREL_ANNOTATOR_KEY``, else the empty key (pseudonyms anyone holding a raw id can recompute:
    keep a key of your own where raw ids must stay private)."""
    import os

    return given if given is not None else os.environ.get("SEMREL_ANNOTATOR_KEY", "")
