"""Every doctest of the semrel package runs: each module of every package (those pyproject.toml's
``package-dir`` maps into semrel and every package below them) whose source holds a ``>>>`` prompt
is imported and its docstring examples run (``doctest``, as ``python -m doctest`` would). A failing
example fails its module's test. The examples in the metric folders' ``inputs_description`` are run
by tests/metrics/test_bws_spaces.py."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import io
import pkgutil
import sys
import types

import pytest
import tomllib

from project import REPO


def semrel_packages() -> list[str]:
    """Each package pyproject's ``package-dir`` maps into semrel, and every regular package below it
    (a metric folder has no ``__init__.py``: its examples run in tests/metrics/test_bws_spaces.py)."""
    mapping = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    found = []
    for top in mapping:
        found += [top, *(m.name for m in pkgutil.walk_packages(importlib.import_module(top).__path__, f"{top}.")
                         if m.ispkg)]
    return found


def doctest_modules() -> list[str]:
    """``semrel.*`` modules whose source holds ``>>>`` (others have no examples to run)."""
    found = []
    for package in semrel_packages():
        spec = importlib.util.find_spec(package)
        found += [package] if ">>>" in open(spec.origin, encoding="utf-8").read() else []
        for info in pkgutil.iter_modules(spec.submodule_search_locations):
            path = info.module_finder.path + f"/{info.name}.py"
            if not info.ispkg and ">>>" in open(path, encoding="utf-8").read():
                found.append(f"{package}.{info.name}")
    return sorted(found)


MODULES = doctest_modules()


def run_doctests(module: types.ModuleType) -> tuple[int, int, str]:
    """(examples attempted, failed, the failure report) of one module's docstrings."""
    out = io.StringIO()
    runner = doctest.DocTestRunner()
    for test in doctest.DocTestFinder().find(module):
        runner.run(test, out=out.write)
    return runner.tries, runner.failures, out.getvalue()


def test_the_modules_with_examples_are_found():
    assert {"semrel.trainers.losses", "semrel.metrics.lower_bound",
            "semrel.metrics.bws.counting"} <= set(MODULES), MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name):
    tried, failed, report = run_doctests(importlib.import_module(name))
    assert tried > 0, f"{name}: '>>>' in the source but no example found in a docstring"
    assert failed == 0, report


def test_a_wrong_example_is_a_failure():
    module = types.ModuleType("wrong", '>>> 1 + 1\n3\n')
    sys.modules.pop("wrong", None)
    tried, failed, report = run_doctests(module)
    assert (tried, failed) == (1, 1) and "Expected:\n    3\nGot:\n    2" in report
