"""Shared fixtures: the upstream files (the real mirror, ../shared/upstream, or the fixture mirror
tests/fixtures) and an isolated datasets cache.

Tests never touch the network: the Hub is switched off before any HF library is imported. Under
pytest-xdist (a worker per core) torch and the commands a test starts use one thread each. The
fixture mirror is named in ``$SEMREL_FIXTURE_MIRROR``, so its files are checked against its own
SHA256SUMS (``semrel.dataset_scripts.sources``); every other file keeps the upstream checksum.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
if os.environ.get("PYTEST_XDIST_WORKER"):  # a worker per core: torch's threads would spin against each other's
    os.environ.setdefault("OMP_NUM_THREADS", "1")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from project import FIXTURES, HAS_MIRROR, MIRROR, NEEDS_MIRROR  # noqa: E402

os.environ["SEMREL_FIXTURE_MIRROR"] = str(FIXTURES)


@pytest.fixture(scope="session")
def mirror() -> Path:
    """The mirror of the real upstream files, for tests of real-data figures; skipped without it."""
    if not HAS_MIRROR:
        pytest.skip(NEEDS_MIRROR)
    return MIRROR


@pytest.fixture(scope="session")
def upstream() -> Path:
    """The upstream files for tests of behaviour: the real mirror, else the fixture mirror."""
    return MIRROR if HAS_MIRROR else FIXTURES


@pytest.fixture(scope="session")
def fixture_mirror() -> Path:
    """The fixture mirror, whether or not the real one is there."""
    return FIXTURES


@pytest.fixture(scope="session", autouse=True)
def score_cache(tmp_path_factory) -> Path:
    """semrel's score cache (``$SEMREL_CACHE/scores``) in the session's temporary folder, for this
    process and the commands it starts: no test reads or writes the user's ~/.cache/semrel."""
    root = tmp_path_factory.mktemp("semrel_cache")
    os.environ["SEMREL_CACHE"] = str(root)
    return root / "scores"


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory) -> Path:
    """One datasets cache for the whole session (under pytest-xdist, for each worker), so each
    config is built once."""
    return tmp_path_factory.mktemp("hf_cache")


# Started first under pytest-xdist: the longest file (each page of the docs runs its commands).
FIRST = "tests/test_docs.py"


def pytest_collection_modifyitems(items):
    """Under pytest-xdist (``make test``: ``--dist loadfile``) the tests of one file run in one
    worker, in order, so a module-scoped fixture (a build, a trained model, a fresh venv, a server)
    is made once; :data:`FIRST` goes first so that it does not run alone at the end."""
    if os.environ.get("PYTEST_XDIST_WORKER"):  # the workers collect, and must agree on the order
        items.sort(key=lambda item: item.nodeid.split("::")[0] != FIRST)  # stable: order kept
