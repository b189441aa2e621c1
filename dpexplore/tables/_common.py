"""Shared pieces of the own-table workflow: the error type, the ε range, value formatting."""
from __future__ import annotations

import math
from typing import Any, Iterable

import numpy as np

from ..exceptions import FewRecordsWarning, HighCardinalityWarning, InputError
from ..limits import EPSILON_RANGE, FEW_RECORDS

__all__ = ["InputError", "HighCardinalityWarning", "FewRecordsWarning", "EPSILON_RANGE", "HIGH_CARDINALITY",
           "FEW_RECORDS", "show", "show_list", "check_epsilon_range"]

#: a categorical column with more declared values than this gets a warning and a taxonomy hint
HIGH_CARDINALITY = 50


def show(value: Any) -> str:
    """A value as the analyst typed or saw it: ``0`` not ``np.int64(0)``, ``'a'`` for text."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        if math.isnan(value):
            return "missing"
        return f"{value:g}"
    if isinstance(value, str):
        return repr(value)
    return str(value)


def show_list(values: Iterable[Any], limit: int = 5) -> str:
    """At most ``limit`` values, comma-separated, with "… (N in all)" when cut."""
    values = list(values)
    head = ", ".join(show(v) for v in values[:limit])
    return head + (f", … ({len(values)} in all)" if len(values) > limit else "")


def check_epsilon_range(epsilon: Any, low: float = EPSILON_RANGE[0], high: float = EPSILON_RANGE[1]) -> float:
    """ε as a float inside [low, high], else :class:`InputError` (nothing is clamped)."""
    if isinstance(epsilon, (bool, np.bool_)) or not isinstance(epsilon, (int, float, np.integer, np.floating)):
        raise InputError(f"ε must be a number, got {show(epsilon)}: type a value between {low:g} and {high:g}")
    eps = float(epsilon)
    if not (math.isfinite(eps) and low <= eps <= high):
        raise InputError(f"ε = {eps:g} is outside [{low:g}, {high:g}]: type a value in that range "
                         "(nothing was released)")
    return eps
