"""STR-2021 as semrel declares it (:class:`~semrel.dataset_scripts.spec.DatasetSpec`)."""

from ..spec import DatasetSpec, Licence
from .builder import SOURCE, Str2021

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
)
