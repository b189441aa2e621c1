"""The sparse vector technique under audit: published variants that are NOT private, and the test
that refutes them. Teaching material, outside every release path: no module of the package
imports it but the labs and explorers (``tests/test_layering.py`` checks), and each variant warns
:class:`~dpexplore.exceptions.NotDifferentiallyPrivateWarning`.

Lyu, Su & Li (2017, Alg. 3–6) catalogue sparse vector algorithms published as ε-DP that are
not. Three of them, as printed (with c = 1 where there is a cutoff), Δ the queries' sensitivity:

* :func:`svt_without_query_noise` (their Alg. 5, Stoddard et al. 2014): no noise on the queries
  (the same algorithm as :func:`dpexplore.select.stoddard.private_threshold_testing`);
* :func:`svt_without_halting` (Alg. 6, Chen et al. 2015): keeps answering after a ⊤, reusing
  the threshold noise;
* :func:`svt_releasing_values` (Alg. 3, Roth 2011): releases the noisy answer q_k + ν_k of the ⊤.

Each answers a list of queries like :func:`dpexplore.svt.above_threshold` (the sound
AboveThreshold): ``f(queries, threshold, *, epsilon, sensitivity=1.0, random_state=None)``, an
array with one answer per query asked, False (⊥) / True (⊤), or for released values a float
array with NaN for ⊥. :func:`audit_svt` runs any such function on the neighbouring query answers
of :data:`SVT_NEIGHBOURS` through :func:`dpexplore.audit.privacy_loss` and reports a lower
confidence bound on its true ε for each pair: the sound one stays at or below its ε, the
variants go above it.

>>> import warnings
>>> from dpexplore.exceptions import NotDifferentiallyPrivateWarning
>>> with warnings.catch_warnings():       # ⊥⊤ on [τ − 1, τ + 1]; never on its neighbour [τ, τ]
...     warnings.simplefilter("ignore", NotDifferentiallyPrivateWarning)
...     svt_without_query_noise([-1.0, 1.0], 0.0, epsilon=1.0, random_state=0)
array([False,  True])
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pandas as pd

from ._validation import RandomState, check_epsilon, check_finite, check_positive, check_random_state, check_scores
from .audit import privacy_loss
from .exceptions import NotDifferentiallyPrivateWarning

__all__ = ["svt_without_query_noise", "svt_without_halting", "svt_releasing_values", "SVT_NEIGHBOURS",
           "audit_svt"]

_NOT_DP = ("{name} is NOT differentially private (Lyu, Su & Li 2017, Alg. 3–6): it is kept to be refuted by the "
           "audit (dpexplore.svt_audit.audit_svt). Use dpexplore.svt.above_threshold.")


def _start(name: str, queries: Any, threshold: Any, epsilon: Any, sensitivity: Any, random_state: RandomState):
    """Warn, check the arguments and draw the threshold noise ρ ~ Lap(Δ/ε1), ε1 = ε/2: the first
    line of every variant. Returns (queries, τ + ρ, the scale 2Δ/ε, Generator). The variants draw
    with numpy's textbook sampler: they release nothing."""
    warnings.warn(_NOT_DP.format(name=name), NotDifferentiallyPrivateWarning, stacklevel=3)
    q, tau = check_scores(queries, "queries"), check_finite(threshold, "threshold")
    scale = 2 * check_positive(sensitivity, "sensitivity") / check_epsilon(epsilon)
    rng = check_random_state(random_state)
    return q, tau + rng.laplace(0.0, scale), scale, rng


def svt_without_query_noise(queries: Any, threshold: float, *, epsilon: float, sensitivity: float = 1.0,
                            random_state: RandomState = None) -> np.ndarray:
    """Lyu et al. 2017, Alg. 5 (Stoddard et al. 2014): every query compared, without noise, with
    τ + Lap(2Δ/ε). **NOT DP** for any ε: the answers give the order of the queries around the noisy
    threshold, and a neighbour can reverse it (Lyu et al. 2017).

    >>> import warnings
    >>> with warnings.catch_warnings(record=True):
    ...     svt_without_query_noise([5.0, 50.0], 20.0, epsilon=1.0, random_state=0)
    array([False,  True])
    """
    q, noisy_threshold, _, _ = _start("svt_without_query_noise", queries, threshold, epsilon, sensitivity,
                                      random_state)
    return q >= noisy_threshold


def svt_without_halting(queries: Any, threshold: float, *, epsilon: float, sensitivity: float = 1.0,
                        random_state: RandomState = None) -> np.ndarray:
    """Lyu et al. 2017, Alg. 6 (Chen et al. 2015): ρ ~ Lap(2Δ/ε), ν_i ~ Lap(2Δ/ε), and every query
    answered: after a ⊤ it neither halts nor redraws ρ. **NOT DP** for any ε: each ⊤ costs
    privacy, and there is no bound on their number (Lyu et al. 2017).

    >>> import warnings
    >>> with warnings.catch_warnings(record=True):
    ...     svt_without_halting([0.0, 100.0, 100.0], 50.0, epsilon=1.0, random_state=0)
    array([False,  True,  True])
    """
    q, noisy_threshold, scale, rng = _start("svt_without_halting", queries, threshold, epsilon, sensitivity,
                                            random_state)
    return q + rng.laplace(0.0, scale, size=q.size) >= noisy_threshold


def svt_releasing_values(queries: Any, threshold: float, *, epsilon: float, sensitivity: float = 1.0,
                         random_state: RandomState = None) -> np.ndarray:
    """Lyu et al. 2017, Alg. 3 (Roth 2011) with c = 1: ρ ~ Lap(2Δ/ε), ν_i ~ Lap(cΔ/ε2) = Lap(2Δ/ε),
    halt at the first ⊤ and release q_k + ν_k there. Returns NaN for each ⊥, then the released
    value. **NOT DP** for any ε: the value bounds ρ from above, and then each ⊥ answer says more
    about its query (Lyu et al. 2017). The repair (Dwork & Roth 2014, Alg. 3, NumericSparse) releases
    q_k + fresh noise, paid with more ε.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True):
    ...     svt_releasing_values([0.0, 100.0, 0.0], 50.0, epsilon=1.0, random_state=0).round(1)
    array([nan, 95.])
    """
    q, noisy_threshold, scale, rng = _start("svt_releasing_values", queries, threshold, epsilon, sensitivity,
                                            random_state)
    noisy = q + rng.laplace(0.0, scale, size=q.size)
    above = np.flatnonzero(noisy >= noisy_threshold)
    out = np.full(above[0] + 1 if above.size else q.size, np.nan)
    if above.size:
        out[-1] = noisy[above[0]]
    return out


# --------------------------------------------------------------------------- the audit
def _answers(output: Any) -> tuple[np.ndarray, float | None]:
    """(⊤ per answer, the released value of the last ⊤ or None) of one run's output."""
    out = np.asarray(output)
    if out.dtype.kind == "f":
        top = ~np.isnan(out)
        return top, (float(out[top][-1]) if top.any() else None)
    return out.astype(bool), None


def _pattern(top: np.ndarray) -> str:
    return "".join(np.where(top, "⊤", "⊥"))


def _answer_pattern(output: Any) -> str:
    return _pattern(_answers(output)[0])


def _block_difference(output: Any) -> str:
    top = _answers(output)[0]
    half = SVT_NEIGHBOURS["opposite blocks"][0].size // 2
    return f"{int(top[:half].sum()) - int(top[half:].sum()):+d}"


def _pattern_and_value(output: Any) -> str:
    top, value = _answers(output)
    return _pattern(top) + ("" if value is None else (" value ≤ τ" if value <= 0.0 else " value > τ"))


#: Neighbouring query answers (each query moves by at most Δ = 1) chosen against the variants as
#: in Lyu et al. 2017, with τ = 0: name → (answers on D, answers on D', the released event: a
#: public function of one run's output).
SVT_NEIGHBOURS: dict[str, tuple[np.ndarray, np.ndarray, Callable[[Any], str]]] = {
    # the answers ⊥⊤ need τ − 1 < τ + ρ ≤ τ + 1 on D, τ < τ + ρ ≤ τ on D' (impossible without ν)
    "threshold ± 1": (np.array([-1.0, 1.0]), np.array([0.0, 0.0]), _answer_pattern),
    # five ⊥'s then a ⊤, each one likelier on D: AboveThreshold's proof is near tight here
    # (the threshold shift and the ⊤ query each cost ε/2), so too little noise shows
    "below then above": (np.r_[np.full(5, -1.0), 1.0], np.zeros(6), _answer_pattern),
    # 20 queries just above τ then 20 just below, swapped on D': every ⊤ past the first adds loss
    "opposite blocks": (np.r_[np.full(20, 0.5), np.full(20, -0.5)], np.r_[np.full(20, -0.5), np.full(20, 0.5)],
                        _block_difference),
    # five ⊥ queries and a ⊤, all one lower on D (monotone): a low released value caps ρ, and
    # then the five ⊥'s are likelier on D
    "released value": (np.r_[np.full(5, -2.0), 0.0], np.r_[np.full(5, -1.0), 1.0], _pattern_and_value),
}


def audit_svt(mechanism: Callable, *, epsilon: float = 1.0, pairs: Any = None, n_samples: int = 5000,
              confidence: float = 0.95, random_state: RandomState = None) -> pd.DataFrame:
    """Audit a sparse vector function on the neighbours of :data:`SVT_NEIGHBOURS` (τ = 0, Δ = 1).

    ``mechanism(queries, threshold, *, epsilon, random_state)`` answers as
    :func:`dpexplore.svt.above_threshold` does (a student's version, a variant of this module).
    It runs ``n_samples`` times on each side of each pair (plus a pilot) through
    :func:`dpexplore.audit.privacy_loss`, the event being the pair's public summary of the
    output. Returns one row per pair: the claimed ε, the lower confidence bound on the true ε,
    the point estimate, and ``violates`` (the bound exceeds the claim: refuted with the
    audit's confidence). The variants' :class:`NotDifferentiallyPrivateWarning` is silenced here.

    >>> from dpexplore.svt import above_threshold
    >>> audit_svt(above_threshold, pairs=["threshold ± 1"], n_samples=500, random_state=0)[["pair", "violates"]]
                pair  violates
    0  threshold ± 1     False
    """
    eps = check_epsilon(epsilon)
    names = list(SVT_NEIGHBOURS) if pairs is None else [pairs] if isinstance(pairs, str) else list(pairs)
    unknown = [p for p in names if p not in SVT_NEIGHBOURS]
    if unknown:
        raise ValueError(f"unknown pair(s) {unknown}: choose among {list(SVT_NEIGHBOURS)}")
    rng = check_random_state(random_state)
    rows = []
    for name in names:
        data, neighbour, event = SVT_NEIGHBOURS[name]

        def run(queries: np.ndarray, g: np.random.Generator, n: int) -> np.ndarray:
            return np.array([event(mechanism(queries, 0.0, epsilon=eps, random_state=g)) for _ in range(n)])

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotDifferentiallyPrivateWarning)
            result = privacy_loss(run, data, neighbour, n_samples=n_samples, batched=True, confidence=confidence,
                                  random_state=rng)
        rows.append({"pair": name, "claimed_epsilon": eps, "epsilon_lower": result.epsilon_lower,
                     "epsilon_hat": result.epsilon_hat, "violates": result.violates(eps)})
    return pd.DataFrame(rows)
