"""crowd-sts as semrel declares it (:class:`~semrel.dataset_scripts.spec.DatasetSpec`)."""

from ..spec import Benchmarked, DatasetSpec, Licence, MtebFacts
from .builder import FILTERED, CrowdSts

CARD = "semrel.publishing.datasets.crowd_sts"

SPEC = DatasetSpec(
    CrowdSts,
    pretty_name="crowd-sts: crowd-sourced STS labels with annotator metadata",
    licence=Licence("unknown"),
    languages=("en",),
    card_body=f"{CARD}:card_body",
    report_section=f"{CARD}:report_section",
    overview=f"{CARD}:overview",
    extras=("crowd",),  # its filters' measures (BLEU-1, VADER, ROUGE)
    ceiling="semrel.dataset_scripts.crowd_sts.ceiling:human_ceiling",
    # the pair means and each filtered config; paraphrase and style-transfer pairs (English Bibles,
    # Paralex, Paraphrase, GYAFC, Yelp reviews) and random pairs of them, scored by Mechanical Turk
    # workers (Solomon et al. 2021)
    benchmark=Benchmarked(tuple((config, split) for config in ("pairs", *(f"pairs-filtered-{s}" for s in FILTERED))
                                for split in ("train", "test")),
                          MtebFacts(("Religious", "Web", "Reviews", "Written"), "found"), order=30),
)
