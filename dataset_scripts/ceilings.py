"""The human ceiling of a labelled split: what a perfect system can expect against gold scores that
are a finite mean of noisy judgements, and the average single annotator scored like a model.

:func:`human_ceiling` answers for any dataset, config and split; "not available" (``value`` None,
with the reason in ``note``) where no raw annotations exist, never an invented number.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HumanCeiling:
    """``value``: the expected correlation of a perfect system with the gold scores (None: not
    available); ``interval``: its 95% interval where it can be bootstrapped; ``single_annotator``:
    the average single annotator's correlation with the gold scores of the others, scored like a
    model (None: not available); ``method``: how it was computed, in words; ``note``: why a value
    is missing, or its source."""

    value: float | None
    interval: tuple[float, float] | None = None
    single_annotator: float | None = None
    method: str = ""
    note: str = ""


def human_ceiling(dataset_id: str, config: str, split: str, *, mirror=None) -> HumanCeiling:
    """The :class:`HumanCeiling` of ``dataset_id``/``config``/``split``."""
    return HumanCeiling(None, note="not available: no raw annotations are read for this split yet")
