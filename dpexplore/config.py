"""Run-time switches read from the environment (public: notebooks and benchmarks read them)."""
from __future__ import annotations

import os

__all__ = ["quick", "repetitions"]


def quick() -> bool:
    """True when ``DPEXPLORE_QUICK`` is set (CI): notebooks shrink their repetition counts.

    Stored notebook outputs come from full runs; the quick mode only keeps CI within its time.
    """
    return os.environ.get("DPEXPLORE_QUICK", "").strip().lower() not in ("", "0", "false", "no")


def repetitions(full: int, quick_value: int = 2) -> int:
    """Number of repetitions for a sweep: ``full`` normally, ``quick_value`` in quick mode."""
    return quick_value if quick() else full
