"""Czech News STS as semrel declares it (:class:`~semrel.dataset_scripts.spec.DatasetSpec`)."""

from ..spec import Benchmarked, DatasetSpec, Licence, MtebFacts
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
    # the free test; sentences of Czech news articles scored by students under journalists (Sido et al. 2021)
    benchmark=Benchmarked((("free", "test"),), MtebFacts(("News", "Written"), "found"), order=40),
)
