"""The human ceiling of crowd-sts, from its per-annotator labels, per pair config and split.

Gold = the mean label (1–5) of a pair's annotations: 3 per pair (15 Paralex pairs have 2) in
``pairs``; in ``pairs-filtered-*`` the labels of the flagged workers are dropped first, so a pair
keeps 1, 2 or 3 (the filter changes both the panel and its size, hence the ceiling: computed per
config). R from split-half reliability over the pairs with >= 2 labels (halves of 1 and 2 labels for
3, lengthening n = h_half / h_gold with h = mean 1/labels, the pairs left with one label counted in
h_gold) and the ceiling √R (:mod:`semrel.metrics.ceiling`). The average single annotator: each
label against the mean of the pair's other labels, pooled over the pairs with >= 2. Pairs are read
through the builder's own study (:meth:`.builder.CrowdSts.study`: files, pseudonyms, filters).
"""

from __future__ import annotations

from semrel.metrics.ceiling import ratings_ceiling, single_annotator

from ..base import file_digest
from ..ceilings import HumanCeiling, check_no_subset, check_split, computed, not_available
from ..kept_ceilings import kept_ceiling
from .builder import AUTHORS_LIST, SOURCES, CrowdSts
from .filters import drop_workers, flagged_by

METHOD = ("√R, R = Spearman–Brown of the split-half correlation of each pair's labels (1,000 splits; "
          "n = h_half/h_gold for uneven halves and single-label pairs); single annotator: each label "
          "against the mean of the pair's other labels, pooled")


def human_ceiling(config: str, split: str, *, subset: str | None = None, mirror=None) -> HumanCeiling:
    """The ceiling of a pair config's ``train`` or ``test`` split (module docstring)."""
    check_no_subset("crowd-sts", subset)
    if not config.startswith("pairs"):
        return not_available(f"{config} is no pair config (no gold score to correlate with)")
    check_split("crowd-sts", split, ("train", "test"))
    builder = CrowdSts(config_name=config, mirror=mirror)
    digests = tuple(file_digest(builder.fetch(s)) for s in (*SOURCES, AUTHORS_LIST))
    return _ceiling(config, split, mirror, digests)


@kept_ceiling
def _ceiling(config: str, split: str, mirror, digests: tuple[str, ...]) -> HumanCeiling:
    builder = CrowdSts(config_name=config, mirror=mirror)
    study = builder.study()
    filters = builder.config.filters
    flagged = flagged_by(study.results, filters)
    kept = drop_workers(study.annotations, flagged)
    test = set(study.pairs.loc[study.pairs["is_test"], "pair_id"])
    kept = kept[kept["pair_id"].isin(test) == (split == "test")]
    labels = kept.groupby("pair_id", sort=True)["label"].apply(lambda s: s.to_numpy(dtype=float)).tolist()
    single = sum(len(a) == 1 for a in labels)
    dropped = f"the {len(flagged)} workers flagged by {' + '.join(filters)} dropped; " if filters else ""
    note = (f"{dropped}{len(labels):,} pairs, {single:,} of them with a single label (counted in the gold's "
            "reliability, left out of the split-half and the single annotator)")
    return computed(lambda: ratings_ceiling(labels), lambda: single_annotator(labels)[0], method=METHOD, note=note,
                    source="computed from the 14 crowd-sts/*_human.csv files")
