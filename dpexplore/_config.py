"""The former home of :mod:`dpexplore.config` (the same functions)."""
from __future__ import annotations

from .config import quick, repetitions

__all__ = ["quick", "repetitions"]
