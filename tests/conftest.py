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


# Under pytest-xdist (`make test`, `make test-slow`: --dist loadfile) a unit of work is a file: its
# tests run in one worker, in order, so a module-scoped fixture (a build, a trained model, a fresh
# venv, a server) is made once. A page of the docs shares nothing with the other pages but the
# datasets cache, so each page is a unit of its own, and the two workers share the pages.
OWN_UNITS = ("tests/test_docs.py::test_page_runs[",)
# The costliest units, costliest first, start first, so that none starts late and runs alone at
# the end; the rest keep the order collected. Measured on 2 cores that other work kept busy
# (`pytest --durations=15 FILE`), in seconds: card recipes 1480, Label Studio 920, Spaces 680,
# README 590, publishing 470, benchmark 340, making a dataset 210, the training page 200, the
# training studies page 116, the ensembles page 88.
COSTLIEST = (
    "tests/publishing/test_card_recipes.py",
    "tests/annotation/test_label_studio.py",
    "tests/publishing/test_publish_spaces.py",
    "tests/test_docs.py::test_page_runs[README.md]",
    "tests/test_docs.py::test_page_runs[docs/publishing.md]",
    "tests/test_docs.py::test_page_runs[docs/benchmark.md]",
    "tests/test_docs.py::test_page_runs[docs/making-a-dataset.md]",
    "tests/test_docs.py::test_page_runs[docs/training.md]",
    "tests/test_docs.py::test_page_runs[docs/studies.md]",
    "tests/test_docs.py::test_page_runs[docs/ensembles.md]",
)


def unit(nodeid: str) -> str:
    """The unit of work of a test under pytest-xdist: its file, or itself where :data:`OWN_UNITS`
    says so."""
    return nodeid if nodeid.startswith(OWN_UNITS) else nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(items):
    """:data:`COSTLIEST` first (a stable sort: the order within a unit is kept)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):  # the workers collect, and must agree on the order
        rank = {name: i for i, name in enumerate(COSTLIEST)}
        items.sort(key=lambda item: rank.get(unit(item.nodeid), len(COSTLIEST)))


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: without pytest-xdist, never called
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` with the units of :func:`unit`; any other mode as pytest-xdist makes it."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class Units(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit(nodeid)

    return Units(config, log)
