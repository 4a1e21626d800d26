"""Czech News STS as semrel declares it (:class:`~semrel.dataset_scripts.spec.DatasetSpec`)."""

from ..spec import DatasetSpec, Licence
from .builder import CzechNewsSts

CARD = "semrel.publishing.datasets.czech_news_sts"

SPEC = DatasetSpec(
    CzechNewsSts,
    pretty_name="Czech News STS",
    licence=Licence("unknown"),
    languages=("cs",),
    card_body=f"{CARD}:card_body",
    overview=f"{CARD}:overview",
    ceiling="semrel.dataset_scripts.czech_news_sts.ceiling:human_ceiling",
)
