"""STR-2021 as semrel declares it (:class:`~semrel.dataset_scripts.spec.DatasetSpec`)."""

from ..spec import Benchmarked, DatasetSpec, Licence, MtebFacts
from .builder import SOURCE, SOURCES_IN_DATA, Str2021

CARD = "semrel.publishing.datasets.str_2021"

SPEC = DatasetSpec(
    Str2021,
    pretty_name="STR-2021: Semantic Textual Relatedness",
    licence=Licence("other", name="str-2021-research-use", link=SOURCE.licence_url),  # research use only
    languages=("en",),
    card_body=f"{CARD}:card_body",
    report_section=f"{CARD}:report_section",
    overview=f"{CARD}:overview",
    ceiling="semrel.dataset_scripts.str_2021.ceiling:human_ceiling",
    # all 5,500 pairs, and each source apart; sentences of 7 sources (Formality: Yahoo Answers; Goodreads
    # reviews; ParaNMT; SNLI captions; STS; Stance: tweets; Wikipedia), crowd-scored by Best-Worst
    # Scaling (Abdalla et al.)
    benchmark=Benchmarked((("default", "train"),), MtebFacts(("Written", "Web", "Reviews", "Social", "Encyclopaedic"),
                                                             "found"),
                          subset_column="source", subsets=SOURCES_IN_DATA, order=10),
)
