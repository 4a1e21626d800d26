"""The human ceiling of Czech News STS, from the 9 annotations of every pair of the free test.

Gold = the mean of 9 ratings (0–6) per pair; R from split-half reliability of the ratings (halves of
4 and 5, lengthening n = mean(1/4, 1/5) / (1/9) = 2.025) and the ceiling √R
(:mod:`semrel.metrics.ceiling`). The average single annotator: each annotation against the mean of
the pair's 8 others, pooled. The paper's anchor (Sido et al. 2021, Table 1 "inter", and the
abstract's "average annotator" 0.86 Pearson) compares each annotation with the mean of its stack
*including itself*, which the note reports beside it: the public file's annotations give 0.878 that
way and 0.843 leave-one-out, around the paper's 0.861 (the released file is the cleaned one, §1, and
has no annotator ids; ``scripts/reproduce_czech_news.py`` says more). ``dep`` and ``sig`` need the
user-supplied context-dependent file and the train configs hold one annotation per pair: not
available.
"""

from __future__ import annotations

from semrel.metrics.ceiling import ratings_ceiling, single_annotator

from ..base import file_digest
from ..ceilings import HumanCeiling, check_no_subset, check_split, computed, not_available
from ..kept_ceilings import kept_ceiling
from ..sources import fetch
from .builder import FREE_ANNOTATIONS, SOURCE
from .formats import read_test
from .paper import PAPER_INTER, agreement_of

METHOD = ("√R, R = Spearman–Brown of the split-half correlation of the 9 ratings per pair (1,000 splits); "
          "single annotator: each rating against the mean of the pair's other 8, pooled")


def human_ceiling(config: str, split: str, *, subset: str | None = None, mirror=None) -> HumanCeiling:
    """The ceiling of ``free``/``test`` (module docstring); not available for the other configs."""
    check_no_subset("czech-news-sts", subset)
    if config in ("dep", "sig"):
        return not_available(f"{config} is built from the user-supplied dep-test.tsv, which the ceiling does "
                             "not read (the public free test gives the ceiling of the context-free annotations)")
    if config != "free":
        return not_available(f"{config} holds one annotation (the R1 score) per pair: no repeated judgements")
    check_split("czech-news-sts", split, ("test",))
    return _free(file_digest(fetch(SOURCE, mirror=mirror)), mirror)


@kept_ceiling
def _free(digest: str, mirror) -> HumanCeiling:
    pairs, _ = read_test(fetch(SOURCE, mirror=mirror), n_annotations=FREE_ANNOTATIONS)
    annotations = [p["annotations"] for p in pairs]
    agreement = agreement_of(annotations)
    note = (f"paper anchor (Sido et al. 2021, Table 1 inter / abstract): average annotator Pearson "
            f"{PAPER_INTER['pearson']}, each annotation against its stack's mean including itself; the same "
            f"on this file: {agreement.inter.pearson:.3f}; leave-one-out (reported): {agreement.inter_loo.pearson:.3f}")
    return computed(lambda: ratings_ceiling(annotations), lambda: single_annotator(annotations)[0], method=METHOD,
                    note=note, source=f"computed from czech-news-sts/{SOURCE.file_name}")
