"""Self-checking exercises for the notebooks: ``from dpexplore import lab``; ``lab.check(id)``.

Each notebook's checks live in their own module (``nb00`` … ``nb14``), registered with
:func:`exercise`; every module that exists is imported on first use (so a notebook's checks
are available whichever notebook is opened). See :mod:`dpexplore.lab._core` for the messages.
"""
from __future__ import annotations

import importlib
import importlib.util

from ._core import EXERCISES, CheckResult, Exercise, Verdict, check, evaluate, exercise, not_yet, right_if

__all__ = ["CheckResult", "Exercise", "EXERCISES", "Verdict", "check", "evaluate", "exercise", "right_if",
           "not_yet", "load_all", "NOTEBOOK_MODULES"]

NOTEBOOK_MODULES = tuple(f"nb{n:02d}" for n in range(15))
"""The per-notebook check modules, imported when present."""

_loaded = False


def load_all() -> None:
    """Import every per-notebook check module that exists (once)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for name in NOTEBOOK_MODULES:
        if importlib.util.find_spec(f"{__name__}.{name}") is not None:
            importlib.import_module(f"{__name__}.{name}")


load_all()
