"""Shared fixtures: the real upstream mirror (../shared/upstream) and an isolated datasets cache.

Tests never touch the network: the Hub is switched off before any HF library is imported.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from project import MIRROR  # noqa: E402


@pytest.fixture(scope="session")
def mirror() -> Path:
    """The mirror of the real upstream files; its absence is an error, never a skip."""
    if not (MIRROR / "str-2021").is_dir():
        raise RuntimeError(f"upstream mirror not found at {MIRROR}; set SEMREL_MIRROR")
    return MIRROR


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory) -> Path:
    """One datasets cache for the whole session, so each config is built once."""
    return tmp_path_factory.mktemp("hf_cache")
