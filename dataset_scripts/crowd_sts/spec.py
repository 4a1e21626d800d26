"""crowd-sts as semrel declares it (:class:`~semrel.dataset_scripts.spec.DatasetSpec`)."""

from ..spec import DatasetSpec, Licence
from .builder import CrowdSts

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
)
