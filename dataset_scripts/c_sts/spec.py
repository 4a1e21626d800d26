"""C-STS as semrel declares it (:class:`~semrel.dataset_scripts.spec.DatasetSpec`).

The original release's rows are decrypted with the user's password and never leave the local cache
(its configs are ``local_only``: the build writes their card, no data files); the open
re-annotation (CC-BY-4.0) is exported as Parquet. The card's metadata names the original's terms,
the stricter of the two (no public sharing of the decrypted contents), and its text gives both
licences and the attribution CC-BY asks for; on the Hub the dataset is card-only."""

from ..spec import Benchmarked, DatasetSpec, Licence, MtebFacts
from .builder import SOURCE, CSts

SPEC = DatasetSpec(
    CSts,
    pretty_name="C-STS: Conditional Semantic Textual Similarity",
    licence=Licence("other", name="c-sts-terms", link=SOURCE.licence_url),  # no public redistribution
    languages=("en",),
    card_body="semrel.publishing.datasets.c_sts:card_body",
    report_section="semrel.publishing.datasets.c_sts:report_section",
    size_category="10K<n<100K",  # the re-annotation alone has 14,176 rows
    # the open re-annotation (from the mirror) and the original release (user-supplied); Flickr30k/COCO
    # caption pairs with conditions written by annotators (Deshpande et al. 2023)
    benchmark=Benchmarked(tuple((config, split) for config in ("reannotated", "default")
                                for split in ("train", "validation")),
                          MtebFacts(("Written",), "created"), conditional=True, order=50),
)
