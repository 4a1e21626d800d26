"""toy-sts as the tests declare it: its card lives beside it (``card.py``)."""

from semrel.dataset_scripts.spec import DatasetSpec, Licence

from .builder import ToySts

SPEC = DatasetSpec(ToySts, pretty_name="Toy STS", licence=Licence("cc0-1.0"), languages=("en",),
                   card_body="toy_dataset.card:card_body")
