"""The units of work of ``make test`` and ``make test-slow`` (tests/conftest.py): what pytest-xdist
hands a worker whole, and the costliest units, which start first."""

from __future__ import annotations

import importlib.util

import pytest
from test_docs import PAGES

from project import REPO

spec = importlib.util.spec_from_file_location("tests_conftest", REPO / "tests" / "conftest.py")
conftest = importlib.util.module_from_spec(spec)
spec.loader.exec_module(conftest)


@pytest.mark.parametrize("nodeid, unit", [
    ("tests/test_docs.py::test_page_runs[docs/training.md]", "tests/test_docs.py::test_page_runs[docs/training.md]"),
    ("tests/test_docs.py::test_page_runs[README.md]", "tests/test_docs.py::test_page_runs[README.md]"),
    ("tests/test_docs.py::test_readme_stays_short_and_links_resolve", "tests/test_docs.py"),
    ("tests/training/test_ensemble.py::test_x[a::b]", "tests/training/test_ensemble.py"),
    ("tests/training/test_ensemble.py::Class::test_x", "tests/training/test_ensemble.py"),
])
def test_a_unit_is_a_file_but_each_docs_page_is_its_own(nodeid, unit):
    assert conftest.unit(nodeid) == unit


@pytest.mark.parametrize("name", conftest.COSTLIEST)
def test_every_costliest_unit_is_in_the_suite(name):
    path, _, test = name.partition("::")
    assert (REPO / path).is_file(), f"{name}: no such test file"
    if test:
        pages = {f"{path}::test_page_runs[{p.relative_to(REPO)}]" for p in PAGES}
        assert name in pages, f"{name}: no such page of the docs"


class Config:
    """What the scheduler reads of pytest's config."""

    def __init__(self, dist):
        self.values = {"dist": dist, "tx": ["2*popen"]}

    def getvalue(self, name):
        return self.values[name]


def test_loadfile_schedules_the_units_and_other_modes_are_left_to_xdist():
    pytest.importorskip("xdist")
    scheduler = conftest.pytest_xdist_make_scheduler(Config("loadfile"), None)
    page, harness = "tests/test_docs.py::test_page_runs[docs/cli.md]", "tests/test_docs.py::test_the_harness_x"
    assert (scheduler._split_scope(page), scheduler._split_scope(harness)) == (page, "tests/test_docs.py")
    assert conftest.pytest_xdist_make_scheduler(Config("load"), None) is None
