"""A tiny redistributable dataset (32 pairs written for the tests, CC0) to exercise the full-data path.

Every real semrel dataset forbids redistribution (their cards are pushed alone), so the path that
uploads Parquet — build, verify, push, ``load_dataset`` from the Hub — is tested on this one.
``register()`` adds it to ``dataset_scripts.REGISTRY``; the mirror is ``tests/fixtures``.
"""

from pathlib import Path

from .builder import ToySts

MIRROR = Path(__file__).resolve().parents[1] / "fixtures"


def register(registry=None):
    from semrel.dataset_scripts.registry import REGISTRY, DatasetSpec

    registry = REGISTRY if registry is None else registry
    registry[ToySts.DATASET_ID] = DatasetSpec(ToySts)
    return registry
