"""Per-dataset card bodies and report sections, one module per dataset package
(``publishing/datasets/<package>.py``), outside the builders' cache key.

A module defines ``card_body(built, image_dir) -> str`` (markdown; plots saved into image_dir),
optionally ``report_section(built, image_dir, *, mirror=None, cache_dir=None) -> str``,
``LICENSE_NAME``/``LICENSE_LINK`` (cards with ``license: other``) and ``CARD_ONLY = True`` when
the rows must stay in the user's cache (the build then writes the card alone). A dataset
registered from elsewhere (a test fixture) may keep a ``card`` module beside its builder.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType


def card_module(spec) -> ModuleType:
    """``publishing.datasets.<package>`` of the dataset's builder, else ``<package>.card``."""
    package = spec.builder_class.__module__.rsplit(".", 1)[0]
    own = f"{__name__}.{package.rsplit('.', 1)[-1]}"
    if package.startswith("semrel.dataset_scripts.") and importlib.util.find_spec(own) is not None:
        return importlib.import_module(own)
    return importlib.import_module(f"{package}.card")
