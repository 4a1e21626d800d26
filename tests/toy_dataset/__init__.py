"""A tiny redistributable dataset (32 pairs written for the tests, CC0) to exercise the full-data path.

Every real semrel dataset forbids redistribution (their cards are pushed alone), so the path that
uploads Parquet — build, verify, push, ``load_dataset`` from the Hub — is tested on this one.
It declares its spec in ``spec.py`` like a dataset package of semrel; ``register()`` adds it to
``dataset_scripts.REGISTRY`` (it lives outside ``semrel.dataset_scripts``); the mirror is
``tests/fixtures``.
"""

from contextlib import contextmanager
from pathlib import Path

from .spec import SPEC

MIRROR = Path(__file__).resolve().parents[1] / "fixtures"


def register(registry=None):
    """Add toy-sts to ``registry`` (default: semrel's); returns that registry."""
    from semrel.dataset_scripts import registry as semrel_registry

    if registry is None:
        semrel_registry.register(SPEC)
        return semrel_registry.REGISTRY
    registry[SPEC.dataset_id] = SPEC
    return registry


@contextmanager
def registered():
    """toy-sts in semrel's registry while the block runs (a module fixture's ``with``)."""
    from semrel.dataset_scripts.registry import REGISTRY

    register()
    try:
        yield
    finally:
        REGISTRY.pop(SPEC.dataset_id)
