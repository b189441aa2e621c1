"""The docstring examples of every module in dpexplore/ run and print what they show.

The same check as ``pytest --doctest-modules dpexplore``, as a test of ``tests/`` so that the
README's test command runs it (``--doctest-modules`` over ``tests`` and ``notebooks`` would import
their scripts). A module whose optional dependency is missing is skipped, not failed; no example
needs Java or a browser.
"""
from __future__ import annotations

import doctest
import importlib
import io
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "dpexplore"
MODULES = sorted(
    ".".join(("dpexplore",) + p.relative_to(PACKAGE).with_suffix("").parts).removesuffix(".__init__")
    for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as error:        # an optional extra that is not installed
        if error.name and error.name.split(".")[0] != "dpexplore":
            pytest.skip(f"{name} needs {error.name}")
        raise
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    report = io.StringIO()
    for test in doctest.DocTestFinder(exclude_empty=True).find(module, name):
        runner.run(test, out=report.write)
    assert runner.failures == 0, report.getvalue()


def test_every_module_is_checked():
    assert "dpexplore.budget" in MODULES and "dpexplore" in MODULES and len(MODULES) > 50
