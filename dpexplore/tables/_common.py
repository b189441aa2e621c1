"""Shared pieces of the own-table workflow: the error type, the ε range, value formatting."""
from __future__ import annotations

import math
from typing import Any, Iterable

import numpy as np

__all__ = ["InputError", "HighCardinalityWarning", "FewRecordsWarning", "EPSILON_RANGE", "HIGH_CARDINALITY",
           "FEW_RECORDS", "show", "show_list", "check_epsilon_range"]

#: the ε an analyst may ask for (the app's range): outside it is an error, never a clamp.
#: Below 0.01 a release is noise; above 10 the guarantee means little.
EPSILON_RANGE = (0.01, 10.0)
#: a categorical column with more declared values than this gets a warning and a taxonomy hint
HIGH_CARDINALITY = 50
#: a release with fewer synthetic rows than this (a released, noisy size) warns that it is mostly
#: noise; the private row count is never compared with anything
FEW_RECORDS = 30


class InputError(ValueError):
    """A problem with the analyst's input, explained in one line with what to do."""


class HighCardinalityWarning(UserWarning):
    """A categorical column with so many values that most methods spread ε too thin over them."""


class FewRecordsWarning(UserWarning):
    """The release is small (judged on its released synthetic rows): most of it is noise."""


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
