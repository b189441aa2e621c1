"""The sparse vector technique: which queries are above a threshold, paying only for the ⊤ answers.

A noisy threshold τ + ρ is compared with noisy answers q_i + ν_i in order; ⊥ answers (below)
cost nothing beyond the threshold noise, and the algorithm stops after ``cutoff`` ⊤ answers
(above). The queries q_i = f_i(D) each have sensitivity Δ; their list is fixed in advance here (a
special case of the adaptive query stream of the papers).

* :func:`above_threshold`: Dwork & Roth 2014, §3.6, Alg. 1 (AboveThreshold, Thm 3.23): ρ ~
  Lap(2Δ/ε), ν_i ~ Lap(4Δ/ε), halt at the first ⊤. Spends ε through an accountant. Its exact
  distribution, where the first ⊤ falls: :func:`above_threshold_probabilities`.
* :func:`sparse_vector`: the c-answers version of Lyu, Su & Li 2017, Alg. 1 (ε = ε1 + ε2, the
  threshold noise drawn once); AboveThreshold is its case c = 1, ε1 = ε2 = ε/2. The feature
  selector :class:`dpexplore.select.stoddard.SparseVectorSelector` runs it.

The published variants that are NOT differentially private, and the audit that refutes them,
are teaching material in :mod:`dpexplore.svt_audit`.

>>> above_threshold([3.0, 9.0, 12.0], 10.0, epsilon=1e6, random_state=0)   # ⊥ ⊥ ⊤ (ε huge)
array([False, False,  True])
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ._validation import (RandomState, check_epsilon, check_finite, check_fraction, check_int, check_positive,
                          check_random_state, check_scores)
from .budget import BudgetAccountant, prepare_accountant
from .mechanisms import laplace, laplace_cdf

__all__ = ["above_threshold", "above_threshold_probabilities", "sparse_vector", "svt_split"]

_QUADRATURE_NODES = 64     # Gauss–Legendre nodes per smooth piece of the integrand
_TAIL_SCALES = 60          # the threshold noise is integrated over ±60 of its scales (e^-60 beyond)


def svt_split(cutoff: int) -> tuple[float, float]:
    """Lyu et al.'s suggested split ε1 : ε2 = 1 : (2c)^{2/3}, as fractions of ε.

    >>> [round(share, 3) for share in svt_split(1)]
    [0.386, 0.614]
    """
    r = (2.0 * check_int(cutoff, "cutoff", minimum=1)) ** (2.0 / 3.0)
    return 1.0 / (1.0 + r), r / (1.0 + r)


def sparse_vector(scores: Any, threshold: float, *, epsilon: float, cutoff: int,
                  sensitivity: float = 1.0, monotone: bool = False,
                  threshold_share: float | None = None,
                  random_state: RandomState = None) -> np.ndarray:
    """Sparse vector technique with a cutoff (Lyu, Su & Li 2017, Alg. 1): the indices answered ⊤.

    ρ ~ Lap(Δ/ε1); for each query in order ν_i ~ Lap(2cΔ/ε2), or cΔ/ε2 for monotone queries (all
    move the same way between neighbours, e.g. counts); answer ⊤ when q_i + ν_i ≥ τ + ρ and stop
    after c ⊤'s. ε = ε1 + ε2 with ε1 = ``threshold_share``·ε (default :func:`svt_split`). The
    caller spends ``epsilon``.

    >>> sparse_vector([1.0, 10, 2, 12, 15], 5.0, epsilon=1e7, cutoff=2, random_state=0)
    array([1, 3])
    """
    q = check_scores(scores)
    tau = check_finite(threshold, "threshold")
    epsilon = check_epsilon(epsilon)
    c = check_int(cutoff, "cutoff", minimum=1)
    frac = svt_split(c)[0] if threshold_share is None else check_fraction(threshold_share, "threshold_share",
                                                                            high_closed=False)
    rng = check_random_state(random_state)
    eps1, eps2 = frac * epsilon, (1 - frac) * epsilon
    rho = laplace(0.0, epsilon=eps1, sensitivity=sensitivity, random_state=rng)
    query_sens = (1 if monotone else 2) * c * sensitivity
    above: list[int] = []
    for i, value in enumerate(q):
        if value + laplace(0.0, epsilon=eps2, sensitivity=query_sens, random_state=rng) >= tau + rho:
            above.append(i)
            if len(above) == c:
                break
    return np.array(above, dtype=int)


def above_threshold(queries: Any, threshold: float, *, epsilon: float, sensitivity: float = 1.0,
                    random_state: RandomState = None, accountant: BudgetAccountant | None = None) -> np.ndarray:
    """AboveThreshold (Dwork & Roth 2014, §3.6, Alg. 1): ε-DP answers ⊥ (False) / ⊤ (True) to the
    queries in order, halting after the first ⊤ (Thm 3.23).

    The threshold noise is Lap(2Δ/ε) (line 1), each query's Lap(4Δ/ε) (line 3): :func:`sparse_vector`
    with c = 1 and ε1 = ε2 = ε/2. Returns one answer per query asked: all False when no query
    is above, else False up to the first ⊤, which is True and last. Spends ``epsilon`` once, on
    ``accountant`` (a fresh one when None), after checking every argument.

    >>> from dpexplore import BudgetAccountant
    >>> acc = BudgetAccountant(1.0)
    >>> answers = above_threshold([40.0, 95.0, 70.0], 90.0, epsilon=0.5, random_state=1, accountant=acc)
    >>> answers.dtype, acc.ledger[["label", "epsilon"]].values.tolist()
    (dtype('bool'), [['sparse vector: AboveThreshold', 0.5]])
    """
    q = check_scores(queries, "queries")
    tau = check_finite(threshold, "threshold")
    epsilon = check_epsilon(epsilon)
    check_positive(sensitivity, "sensitivity")
    rng = check_random_state(random_state)
    prepare_accountant(epsilon, accountant).spend(epsilon, "sparse vector: AboveThreshold")
    above = sparse_vector(q, tau, epsilon=epsilon, cutoff=1, sensitivity=sensitivity, threshold_share=0.5,
                          random_state=rng)
    answers = np.zeros(above[0] + 1 if above.size else q.size, dtype=bool)
    answers[above] = True
    return answers


def above_threshold_probabilities(queries: Any, threshold: float, *, epsilon: float,
                                  sensitivity: float = 1.0) -> np.ndarray:
    """The exact distribution of :func:`above_threshold`'s answers: P(the first ⊤ is query k) for
    k = 0 … n − 1, then P(no ⊤) (n + 1 probabilities that sum to 1).

    Given the threshold noise ρ = r, the answers are independent: query i is ⊥ with probability
    F(τ + r − q_i), F the distribution function of Lap(4Δ/ε) (Dwork & Roth 2014, Alg. 1, line 3), so
    P(first ⊤ at k) = ∫ f(r) Π_{i<k} F(τ + r − q_i) (1 − F(τ + r − q_k)) dr with f the density of
    Lap(2Δ/ε) (line 1). The integral is taken by Gauss–Legendre quadrature between the kinks of the
    integrand (r = 0 and r = q_i − τ), where it is smooth; the cost grows as n².

    >>> above_threshold_probabilities([0.0], 0.0, epsilon=1.0).round(4)   # q = τ: ⊤ or not, evenly
    array([0.5, 0.5])
    >>> above_threshold_probabilities([-10.0, 10.0], 0.0, epsilon=2.0).round(3)
    array([0.004, 0.991, 0.004])
    """
    q = check_scores(queries, "queries")
    tau = check_finite(threshold, "threshold")
    eps = check_epsilon(epsilon)
    delta = check_positive(sensitivity, "sensitivity")
    b_rho = 2 * delta / eps
    reach = _TAIL_SCALES * b_rho
    kinks = np.clip(np.concatenate([[0.0], q - tau]), -reach, reach)
    edges = np.unique(np.concatenate([[-reach, reach], kinks]))
    nodes, weights = np.polynomial.legendre.leggauss(_QUADRATURE_NODES)
    half, mid = np.diff(edges)[:, None] / 2, (edges[:-1] + edges[1:])[:, None] / 2
    r, w = (mid + half * nodes).ravel(), (half * weights).ravel()
    w = w * np.exp(-np.abs(r) / b_rho) / (2 * b_rho)                      # f(r) dr
    below = laplace_cdf(tau + r[:, None] - q[None, :], epsilon=eps / 2, sensitivity=2 * delta)   # Lap(4Δ/ε)
    before = np.cumprod(np.concatenate([np.ones((r.size, 1)), below], axis=1), axis=1)   # all ⊥ before k
    first = before[:, :-1] * (1.0 - below)
    out = np.concatenate([w @ first, [w @ before[:, -1]]])
    return out / out.sum()          # the mass beyond ±60 scales (e^-60) is left out
