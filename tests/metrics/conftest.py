"""Fixtures of the metric tests."""

from __future__ import annotations

import uuid

import pytest

from project import REPO


@pytest.fixture
def erroring_module():
    """``load(name)``: an evaluate module of ``metrics/<name>`` for a test whose compute raises.

    evaluate 0.4.6 keeps the cache file locked after ``_compute`` raises, until the module is
    garbage-collected (a reference cycle through the traceback); the next compute on that file,
    in any module instance, waits 1 s for the lock. An experiment id of its own keeps one test's
    error from slowing the next."""
    import evaluate

    return lambda name: evaluate.load(str(REPO / "metrics" / name), experiment_id=uuid.uuid4().hex)
