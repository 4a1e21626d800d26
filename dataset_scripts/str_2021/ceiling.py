"""The human ceiling of STR-2021: the published split-half reliability, not recomputed.

Abdalla, Vishnubhotla & Mohammad (2023), §4 and Table 3: the annotations of each 4-tuple split at
random into two halves, each half scored by counting, the Spearman correlation of the two halves'
scores averaged over 1,000 splits: SHR = 0.84, over 5,500 pairs, 21,936 annotations. The paper's
procedure is the NRC script ``SHR-BWS.pl``, which reports the halves' correlation without the
Spearman–Brown step; so 0.84 is r of :mod:`semrel.metrics.ceiling`, R = 2r/(1 + r) = 0.913 and the
ceiling √R = 0.956 (halves of half the annotations: n = 2). The raw annotations
(``mturk_data/bws_annotations.csv``) are not public: no interval, and no ceiling of a source of
its own (a source spans a narrower range of relatedness, so its own ceiling would in general be
lower); every config, split and source answers with the whole dataset's figure.
"""

from __future__ import annotations

from semrel.metrics.ceiling import ceiling_of
from semrel.metrics.errors import ParameterError

from ..ceilings import HumanCeiling, check_split
from .builder import SOURCES_IN_DATA

PUBLISHED_SHR = 0.84  # Table 3 / §4: mean Spearman of the two halves over 1,000 splits (no Spearman–Brown)
PAIRS, ANNOTATIONS = 5500, 21936  # Table 3
REFERENCE = "Abdalla, Vishnubhotla & Mohammad (2023), §4, Table 3"


def human_ceiling(config: str, split: str, *, subset: str | None = None, mirror=None) -> HumanCeiling:
    """The published ceiling (module docstring), for any config and split."""
    check_split("str-2021", split, ("train",) if config == "default" else ("train", "test"))
    if subset is not None and subset.lower() not in {s.lower() for s in SOURCES_IN_DATA}:
        raise ParameterError("subset", subset, f"is no source of str-2021 (it has {', '.join(SOURCES_IN_DATA)})")
    reliability, value = ceiling_of(PUBLISHED_SHR)
    part = "" if config == "default" and subset is None else (
        " The figure is the whole dataset's: the paper gives none per source or split, and a narrower "
        "part (one source, a leave-one-source-out test) has in general a lower ceiling of its own.")
    return HumanCeiling(
        value, method="√(2r/(1+r)) of the published split-half Spearman r (BWS counting, 1,000 splits)",
        note=f"published SHR r = {PUBLISHED_SHR} ({REFERENCE}), not recomputed: the raw BWS annotations are "
        f"not public, so no interval; no single annotator for BWS (one annotation gives no item a score).{part}",
        reliability=reliability, split_half=PUBLISHED_SHR, n_items=PAIRS, n_annotations=ANNOTATIONS,
        source=f"published: {REFERENCE}")
