"""The notebook sources and ``notebooks/_versions.py`` (which makes the student and instructor
versions of a notebook from one source), loaded once for the tests that check notebooks."""
from __future__ import annotations

from pathlib import Path

from _benchmarks import load_script

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
SOURCES = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.py"))      # the jupytext sources NN_name.py

versions = load_script(NOTEBOOKS / "_versions.py", "notebooks_versions")
