"""SemRel-2024 as semrel declares it (:class:`~semrel.dataset_scripts.spec.DatasetSpec`)."""

from ..spec import Benchmarked, DatasetSpec, Licence, MtebFacts
from .builder import SemRel2024, config_languages, plan
from .files import FILES, LANGUAGES, REPOSITORY

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
    # per language, validation (upstream "dev") and test (English train is STR-2021's); MTEB's facts as
    # its own SemRel24STS records them (Ousidhoum et al. 2024: native-speaker annotators)
    benchmark=Benchmarked(
        tuple((code, split) for code in LANGUAGES for split in plan(code) if split != "train"),
        MtebFacts(("Spoken", "Written"), "created", iso639_3=(("ar", "arb"),)),  # arb: Modern Standard Arabic
        unlabelled=(("esp", "test", "Spanish test scores were never published"),
                    ("eng", "test", f"the labelled English test file ({FILES['eng', 'test'].path}) is held back "
                                    "from the mirror")),
        order=20),
)
