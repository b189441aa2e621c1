"""Composition: the total privacy loss of k mechanisms run on the same data.

Three theorems, from the loosest to the tightest for many small steps:

* basic composition (Dwork & Roth 2014, Thm 3.16): k (ε, δ)-DP steps are (kε, kδ)-DP;
* advanced composition (Dwork, Rothblum & Vadhan 2010; Dwork & Roth 2014, Thm 3.20): for any
  δ' > 0 they are (√(2k ln(1/δ'))·ε + kε(e^ε − 1), kδ + δ')-DP, which grows like √k;
* zero-concentrated DP (Bun & Steinke 2016): ε-DP is ε²/2-zCDP (Prop 1.4), the Gaussian
  mechanism Δ²/(2σ²)-zCDP (Prop 1.6), ρ's add up under composition (Lemma 1.7), and ρ-zCDP is
  (ρ + 2√(ρ ln(1/δ)), δ)-DP for every δ > 0 (Prop 1.3).

The accountant (:mod:`dpexplore.budget`) adds ε's (basic composition): these functions say what
the same steps cost under the other two. :func:`composed_epsilon` gives the three totals side by
side (one chart).

>>> composed_epsilon(0.1, [1, 100], delta=1e-6).round(3)
     k  basic  advanced   zcdp
0    1    0.1     0.536  0.531
1  100   10.0     6.308  5.757
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ._validation import check_epsilon, check_fraction, check_int, check_positive

__all__ = ["basic_composition", "advanced_composition", "zcdp_of_pure", "zcdp_of_gaussian", "zcdp_to_dp",
           "dp_to_zcdp", "composed_epsilon"]


def _check_delta(delta: Any, name: str = "delta", zero: bool = False) -> float:
    if zero and delta == 0:
        return 0.0
    return check_fraction(delta, name, high_closed=False)


def basic_composition(epsilon: float, k: int, delta: float = 0.0) -> tuple[float, float]:
    """(kε, kδ): k steps that are each (ε, δ)-DP (Dwork & Roth 2014, Thm 3.16).

    >>> basic_composition(0.5, 4)
    (2.0, 0.0)
    """
    k = check_int(k, "k", minimum=1)
    return k * check_epsilon(epsilon), k * _check_delta(delta, zero=True)


def advanced_composition(epsilon: float, k: int, *, delta_prime: float,
                         delta: float = 0.0) -> tuple[float, float]:
    """(ε', kδ + δ') with ε' = √(2k ln(1/δ'))·ε + kε(e^ε − 1): k adaptively chosen (ε, δ)-DP
    steps (Dwork, Rothblum & Vadhan 2010; Dwork & Roth 2014, Thm 3.20). Below kε only for many
    small steps: then it grows like √k.

    >>> eps, delta = advanced_composition(0.1, 100, delta_prime=1e-5)
    >>> round(eps, 3), delta
    (5.85, 1e-05)
    """
    eps = check_epsilon(epsilon)
    k = check_int(k, "k", minimum=1)
    dp = _check_delta(delta_prime, "delta_prime")
    return (math.sqrt(2 * k * math.log(1 / dp)) * eps + k * eps * math.expm1(eps),
            k * _check_delta(delta, zero=True) + dp)


def zcdp_of_pure(epsilon: float) -> float:
    """ρ = ε²/2: an ε-DP step is ρ-zCDP (Bun & Steinke 2016, Prop 1.4).

    >>> zcdp_of_pure(0.5)
    0.125
    """
    return check_epsilon(epsilon) ** 2 / 2


def zcdp_of_gaussian(*, sigma: float, sensitivity: float = 1.0) -> float:
    """ρ = Δ²/(2σ²): Gaussian noise N(0, σ²) on a query of L2 sensitivity Δ is ρ-zCDP (Bun &
    Steinke 2016, Prop 1.6); the mean μ of its privacy loss (:func:`dpexplore.mechanisms.gaussian_privacy_loss`).

    >>> zcdp_of_gaussian(sigma=2.0)
    0.125
    """
    return check_positive(sensitivity, "sensitivity") ** 2 / (2 * check_positive(sigma, "sigma") ** 2)


def zcdp_to_dp(rho: float, *, delta: float) -> float:
    """ε = ρ + 2√(ρ ln(1/δ)): ρ-zCDP is (ε, δ)-DP for every δ > 0 (Bun & Steinke 2016, Prop 1.3).

    >>> round(zcdp_to_dp(0.5, delta=1e-5), 4)
    5.2985
    """
    rho = check_positive(rho, "rho")
    return rho + 2 * math.sqrt(rho * math.log(1 / _check_delta(delta)))


def dp_to_zcdp(epsilon: float, *, delta: float) -> float:
    """The largest ρ whose (ε, δ) guarantee by :func:`zcdp_to_dp` is ``epsilon``: ρ + 2√(ρ ln(1/δ)) = ε
    gives ρ = (√(ε + ln(1/δ)) − √(ln(1/δ)))² (Bun & Steinke 2016, Prop 1.3, solved for ρ). The budget
    an (ε, δ) target leaves to a zCDP method such as MST.

    >>> rho = dp_to_zcdp(1.0, delta=1e-6)
    >>> round(rho, 5), round(zcdp_to_dp(rho, delta=1e-6), 12)
    (0.01747, 1.0)
    """
    eps = check_epsilon(epsilon)
    log_term = math.log(1 / _check_delta(delta))
    return (math.sqrt(eps + log_term) - math.sqrt(log_term)) ** 2


def composed_epsilon(epsilon: float, k: Any, *, delta: float) -> pd.DataFrame:
    """Total ε after k ε-DP steps, one row per k: ``basic`` kε (with δ = 0), ``advanced``
    (Thm 3.20 with δ' = ``delta``) and ``zcdp`` (k·ε²/2 converted with ``delta``). The last two
    are (total, ``delta``)-DP; each is a valid bound, so the smallest applies (the module docstring
    has the theorems).

    >>> composed_epsilon(1.0, 10, delta=1e-5).round(2)
        k  basic  advanced   zcdp
    0  10   10.0     32.36  20.17
    """
    eps = check_epsilon(epsilon)
    ks = [check_int(int(x) if isinstance(x, np.integer) else x, "k", minimum=1) for x in np.atleast_1d(k).tolist()]
    delta = _check_delta(delta)
    return pd.DataFrame({
        "k": ks,
        "basic": [basic_composition(eps, n)[0] for n in ks],
        "advanced": [advanced_composition(eps, n, delta_prime=delta)[0] for n in ks],
        "zcdp": [zcdp_to_dp(n * zcdp_of_pure(eps), delta=delta) for n in ks],
    })
