"""The human ceiling of SemRel-2024, per language and split, from the raw BWS tuples where they exist.

Only Modern Standard Arabic (arb) and Algerian Arabic (arq) have public raw annotations
(``BWS_annotations/<lang>_bws.csv``). Their items are identified as :mod:`.bws` does (both sentences
with all whitespace removed, spelling variants pooled) and matched to the published pairs of the
split. Every tuple's annotations are split in halves (the language's whole file: tuples mix the
splits), each half scored by counting, the halves correlated over the split's matched pairs, and
R = Spearman–Brown with n = h_half / h_gold (h = mean 1/appearances; ≈ 2) gives the ceiling √R
(:mod:`semrel.metrics.ceiling`). The gold of arb is these tuples' counting score (published =
(s + 1)/2); arq's published scores agree with it by rank only roughly (the note gives the Spearman).
The other 12 languages: not available (no raw annotations public); the SemRel2024 paper (Ousidhoum
et al. 2024, arXiv:2402.08638) reports split-half reliability per language, but it is not among the
papers this project quotes from, so no published value is given. A single BWS annotation gives no
item a score of its own: no single annotator.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import spearmanr

from semrel.metrics.bws.counting import tally
from semrel.metrics.ceiling import bws_ceiling

from ..base import file_digest
from ..ceilings import HumanCeiling, check_no_subset, check_split, computed, not_available
from ..kept_ceilings import kept_ceiling
from ..sources import fetch
from .bws import annotations, pair_key, pooled
from .files import BWS, FILES, SPLIT_NAMES, read_split

METHOD = ("√R, R = Spearman–Brown of the split-half Spearman of BWS counting scores (1,000 splits of every "
          "tuple's annotations), correlated over the split's pairs")


def human_ceiling(config: str, split: str, *, subset: str | None = None, mirror=None) -> HumanCeiling:
    """The ceiling of a language's ``validation`` or ``test`` split (module docstring)."""
    from .builder import plan

    check_no_subset("semrel-2024", subset)
    check_split("semrel-2024", split, tuple(plan(config)))
    if config == "all":
        return not_available("all mixes the 14 languages; a ceiling is per language (the language configs)")
    language = config.removeprefix("cross-lingual-")
    if config != language and split == "train":
        return not_available(f"train of {config} is the other languages' train sets")
    if language not in BWS:
        return not_available("raw annotations are public for arb and arq only (BWS_annotations/); the SemRel2024 "
                             "paper reports split-half reliability per language, but it is not among the papers "
                             "semrel quotes from")
    upstream = {ours: theirs for theirs, ours in SPLIT_NAMES.items()}[split]
    files = (BWS[language].source, FILES[(language, upstream)].source)
    return _computed(language, upstream, mirror, *(file_digest(fetch(f, mirror=mirror)) for f in files))


@kept_ceiling
def _computed(language: str, split: str, mirror, *digests: str) -> HumanCeiling:
    ann = pooled(annotations(language, mirror))
    rows = read_split(language, split, mirror=mirror).rows
    index = {item: i for i, item in enumerate(ann.items)}
    matched = [(index[key], row["score"]) for row in rows
               if (key := pair_key(row["sentence1"], row["sentence2"])) in index]
    items = np.array([i for i, _ in matched])
    appearances, n_best, n_worst = tally(ann)
    counting = (n_best[items] - n_worst[items]) / appearances[items]
    agreement = spearmanr(counting, [score for _, score in matched]).statistic
    note = (f"{len(items):,} of the {len(rows):,} published {split} pairs have raw tuples (the others' sentences "
            f"match no raw item); their counting scores against the published: Spearman {agreement:.3f}. "
            "No single annotator for BWS (one annotation gives no item a score).")
    return computed(lambda: bws_ceiling(ann, items), method=METHOD, note=note,
                    source=f"computed from semrel-2024/{BWS[language].path}")
