"""SemRel-2024 as semrel declares it (:class:`~semrel.dataset_scripts.spec.DatasetSpec`)."""

from ..spec import DatasetSpec, Licence
from .builder import SemRel2024
from .files import LANGUAGES, REPOSITORY

CARD = "semrel.publishing.datasets.semrel_2024"

SPEC = DatasetSpec(
    SemRel2024,
    pretty_name="SemRel-2024: Semantic Textual Relatedness in 14 languages",
    licence=Licence("other", name="semrel-2024-research-use", link=REPOSITORY),  # research use only
    languages=tuple(tag for _, tag in LANGUAGES.values()),
    card_body=f"{CARD}:card_body",
    report_section=f"{CARD}:report_section",
    overview=f"{CARD}:overview",
    ceiling="semrel.dataset_scripts.semrel_2024.ceiling:human_ceiling",
)
