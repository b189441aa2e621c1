"""The stored results the notebooks read (``notebooks/results/``), for checks that interpret a chart.

A notebook reads ``results/<file>`` relative to its own folder; a check reads the same file: from
the ``results`` folder of the working directory (the running notebook's), else from the source
checkout's ``notebooks/results``.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

__all__ = ["results_path", "read_results"]

_CHECKOUT_RESULTS = Path(__file__).resolve().parents[2] / "notebooks" / "results"


def results_path(name: str) -> Path:
    """Path of the stored result file ``name`` (e.g. ``"04_accuracy_epsilon.csv"``)."""
    for folder in (Path.cwd() / "results", _CHECKOUT_RESULTS):
        if (folder / name).is_file():
            return folder / name
    raise FileNotFoundError(f"stored result {name!r} not found in ./results or {_CHECKOUT_RESULTS}; "
                            "run the notebooks from a checkout of dpexplore")


def read_results(name: str) -> pd.DataFrame:
    """The stored CSV ``name`` as a DataFrame."""
    return pd.read_csv(results_path(name))
