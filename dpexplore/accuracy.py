"""Accuracy before release: how far the Laplace mechanism's answer can be from the truth.

The noise of the Laplace mechanism has a known distribution, so its error can be stated before
anything is released — and without looking at the data: the bound depends only on ε, the
sensitivity Δ and the confidence level. With b = Δ/ε, a Laplace(b) draw Y has
P[|Y| ≥ t·b] = exp(−t) (Dwork & Roth 2014, Fact 3.7), so with probability 1 − α

    |released − true| < b·ln(1/α)        (Dwork & Roth 2014, Theorem 3.8 with k = 1)

and the bound is reached or exceeded with probability exactly α. Read backwards: to be within
``accuracy`` with probability 1 − α, spend ε = Δ·ln(1/α) / accuracy. OpenDP's accuracy
utilities (``laplacian_scale_to_accuracy`` and ``accuracy_to_laplacian_scale``) teach the same
two directions.

>>> round(laplace_accuracy(epsilon=1.0, sensitivity=1.0, alpha=0.05), 3)   # ln 20
2.996
>>> round(epsilon_for_accuracy(accuracy=3.0, sensitivity=1.0, alpha=0.05), 4)
0.9986
"""
from __future__ import annotations

import math
import numbers
from typing import Any

from ._validation import check_epsilon, check_positive
from .mechanisms import laplace_scale

__all__ = ["laplace_accuracy", "epsilon_for_accuracy", "exceedance_probability"]


def _check_alpha(alpha: Any) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
        raise TypeError(f"alpha must be a real number, got {type(alpha).__name__}")
    alpha = float(alpha)
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie strictly between 0 and 1 (the chance the error exceeds the "
                         f"bound), got {alpha!r}")
    return alpha


def laplace_accuracy(epsilon: float, sensitivity: float = 1.0, alpha: float = 0.05) -> float:
    """The (1 − α) error bound b·ln(1/α) of the Laplace mechanism, b = Δ/ε (Dwork & Roth 2014,
    Theorem 3.8 with one query): the noise stays below it with probability 1 − α.

    >>> laplace_accuracy(epsilon=0.5, sensitivity=1.0, alpha=math.exp(-1))   # b·1, b = 2
    2.0
    >>> round(laplace_accuracy(epsilon=1.0, sensitivity=2.0, alpha=0.01), 3)  # 2·ln 100
    9.21
    >>> laplace_accuracy(epsilon=1.0, alpha=1.0)
    Traceback (most recent call last):
    ...
    ValueError: alpha must lie strictly between 0 and 1 (the chance the error exceeds the bound), got 1.0
    """
    alpha = _check_alpha(alpha)
    return laplace_scale(epsilon=epsilon, sensitivity=sensitivity) * math.log(1.0 / alpha)


def epsilon_for_accuracy(accuracy: float, sensitivity: float = 1.0, alpha: float = 0.05) -> float:
    """The ε that makes :func:`laplace_accuracy` equal ``accuracy``: ε = Δ·ln(1/α) / accuracy.

    Smaller errors or more confidence cost more ε; the answer involves no data.

    >>> epsilon_for_accuracy(accuracy=10.0, sensitivity=1.0, alpha=math.exp(-2))
    0.2
    >>> e = epsilon_for_accuracy(accuracy=5.0, sensitivity=3.0, alpha=0.1)
    >>> round(laplace_accuracy(epsilon=e, sensitivity=3.0, alpha=0.1), 12)
    5.0
    >>> epsilon_for_accuracy(accuracy=0.0)
    Traceback (most recent call last):
    ...
    ValueError: accuracy must be a finite number > 0, got 0.0
    """
    accuracy = check_positive(accuracy, "accuracy")
    sensitivity = check_positive(sensitivity, "sensitivity")
    return sensitivity * math.log(1.0 / _check_alpha(alpha)) / accuracy


def exceedance_probability(error: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """P[|Laplace(Δ/ε) noise| ≥ ``error``] = exp(−error·ε/Δ) (Dwork & Roth 2014, Fact 3.7): the α
    at which ``error`` is the bound.

    >>> round(exceedance_probability(error=laplace_accuracy(epsilon=1.0, alpha=0.05), epsilon=1.0), 12)
    0.05
    """
    error = check_positive(error, "error")
    return math.exp(-error * check_epsilon(epsilon) / check_positive(sensitivity, "sensitivity"))
