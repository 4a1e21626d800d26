"""Fixtures the publishing tests share; module scope: made once for each test file that asks."""

from __future__ import annotations

import pytest

import toy_dataset


@pytest.fixture(scope="module")
def toy_registered():
    """The toy dataset (tests/toy_dataset, redistributable) in semrel's registry."""
    with toy_dataset.registered():
        yield
