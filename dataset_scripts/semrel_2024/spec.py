"""SemRel-2024 as semrel declares it (:class:`~semrel.dataset_scripts.spec.DatasetSpec`)."""

from ..spec import DatasetSpec, Licence
from .builder import SemRel2024, config_languages
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
    config_languages=tuple((config.name, tuple(LANGUAGES[code][1] for code in config_languages(config.name)))
                           for config in SemRel2024.BUILDER_CONFIGS if config.name != "all"),
)
