"""C-STS as semrel declares it (:class:`~semrel.dataset_scripts.spec.DatasetSpec`): its rows are
decrypted with the user's password and never leave the local cache, so its build is the card alone."""

from ..spec import DatasetSpec, Licence
from .builder import SOURCE, CSts

SPEC = DatasetSpec(
    CSts,
    pretty_name="C-STS: Conditional Semantic Textual Similarity",
    licence=Licence("other", name="c-sts-terms", link=SOURCE.licence_url),  # no public redistribution
    languages=("en",),
    card_body="semrel.publishing.datasets.c_sts:card_body",
    size_category="10K<n<100K",  # a card built without the files: the test split alone has 4,732 rows
    card_only=True,
)
