"""Empirical privacy-loss audits: run a mechanism many times on two neighbouring inputs.

For an ε-DP mechanism M and neighbours D, D', every output event S satisfies
P[M(D) ∈ S] ≤ e^ε · P[M(D') ∈ S]. We sample M on both inputs, group the outputs into events
(distinct values for discrete outputs, bins for continuous ones), and bound each event's
probability on both sides with exact Clopper–Pearson intervals (Bonferroni-corrected over all
events). The largest log-ratio that is still positive at the interval ends is a *lower
confidence bound* on the mechanism's true ε: when it exceeds the claimed ε, the claim is false
with the stated confidence. (Passing an audit is evidence, not a proof.) This is the idea of
statistical DP testing as in Ding et al., "Detecting Violations of Differential Privacy" (CCS
2018), in its simplest form.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pandas as pd
from scipy.stats import beta

from ._validation import RandomState, check_random_state

__all__ = ["AuditResult", "privacy_loss"]


@dataclass
class AuditResult:
    """Outcome of :func:`privacy_loss`.

    epsilon_hat: largest observed |log p/q| over events seen on both sides (a point estimate).
    epsilon_lower: lower confidence bound on the true privacy loss (evidence of a violation when
    it exceeds the claimed ε). table: one row per event with counts, probabilities, log-ratio
    and its confidence interval.
    """

    epsilon_hat: float
    epsilon_lower: float
    confidence: float
    n_samples: int
    table: pd.DataFrame

    def violates(self, claimed_epsilon: float) -> bool:
        """True when the data show, with the audit's confidence, a loss above ``claimed_epsilon``."""
        return bool(self.epsilon_lower > claimed_epsilon)


def _sample(mechanism: Callable, data: Any, rng: np.random.Generator, n: int, batched: bool) -> np.ndarray:
    if batched:
        out = np.asarray(mechanism(data, rng, n))
        if len(out) != n:
            raise ValueError(f"a batched mechanism must return {n} outputs, got {len(out)}")
        return out
    return np.asarray([mechanism(data, rng) for _ in range(n)], dtype=object)


def _is_continuous(a: np.ndarray) -> bool:
    if a.dtype.kind == "f":
        return not np.all(a == np.round(a))
    return False


def privacy_loss(mechanism: Callable, data: Any, neighbour: Any, *, n_samples: int = 100_000,
                 bins: int | np.ndarray | None = None, batched: bool = False,
                 confidence: float = 0.95, min_count: int = 20,
                 random_state: RandomState = None) -> AuditResult:
    """Estimate the privacy loss of ``mechanism`` between ``data`` and ``neighbour``.

    ``mechanism(data, rng)`` returns one output (hashable: a number, a string, a tuple), or with
    ``batched=True`` ``mechanism(data, rng, n)`` returns ``n`` outputs at once. Continuous
    outputs are grouped into ``bins`` (an int: equal-probability bins of the pooled samples;
    default 30) unless they are already discrete. Events with fewer than ``min_count`` samples
    on both sides are pooled into one "rare" event so they cannot fake a large ratio.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if int(n_samples) < 100:
        raise ValueError("n_samples must be at least 100")
    n = int(n_samples)
    rng = check_random_state(random_state)
    a = _sample(mechanism, data, rng, n, batched)
    b = _sample(mechanism, neighbour, rng, n, batched)
    if a.dtype != object and a.ndim == 1 and (bins is not None or _is_continuous(np.concatenate([a, b]))):
        pooled = np.concatenate([a, b]).astype(float)
        if bins is None or np.isscalar(bins):
            k = 30 if bins is None else int(bins)
            edges = np.unique(np.quantile(pooled, np.linspace(0, 1, k + 1)))
        else:
            edges = np.asarray(bins, dtype=float)
        inner = edges[1:-1]
        ka = np.searchsorted(inner, a.astype(float), side="right")
        kb = np.searchsorted(inner, b.astype(float), side="right")
        names = [f"[{lo:.4g}, {hi:.4g})" for lo, hi in zip(edges[:-1], edges[1:])]
        ca = np.bincount(ka, minlength=len(names))
        cb = np.bincount(kb, minlength=len(names))
    else:
        keys_a = pd.Series([str(x) if not np.isscalar(x) else x for x in a])
        keys_b = pd.Series([str(x) if not np.isscalar(x) else x for x in b])
        va, vb = keys_a.value_counts(), keys_b.value_counts()
        names = sorted(set(va.index) | set(vb.index), key=str)
        ca = np.array([va.get(k, 0) for k in names])
        cb = np.array([vb.get(k, 0) for k in names])
    # pool rare events so that tiny counts cannot produce large ratios by chance alone
    rare = (ca < min_count) & (cb < min_count)
    if rare.any():
        names = [nm for nm, r in zip(names, rare) if not r] + ["(rare events)"]
        ca = np.append(ca[~rare], ca[rare].sum())
        cb = np.append(cb[~rare], cb[rare].sum())
    alpha = (1 - confidence) / (2 * len(names))  # Bonferroni over both sides of every event
    p_lo, p_hi = _clopper_pearson(ca, n, alpha)
    q_lo, q_hi = _clopper_pearson(cb, n, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        point = np.abs(np.log(ca / n) - np.log(cb / n))
        lower = np.maximum.reduce([np.log(p_lo / q_hi), np.log(q_lo / p_hi), np.zeros(len(ca))])
    lower = np.nan_to_num(lower, nan=0.0, neginf=0.0)
    seen = (ca > 0) & (cb > 0)
    table = pd.DataFrame({"event": names, "count": ca, "count_neighbour": cb, "p": ca / n, "q": cb / n,
                          "log_ratio": np.where(seen, np.log(np.where(seen, ca, 1) / np.where(seen, cb, 1)), np.nan),
                          "lower_bound": lower})
    eps_hat = float(point[seen].max()) if seen.any() else float("inf")
    return AuditResult(eps_hat, float(lower.max()), confidence, n, table)


def _clopper_pearson(k: np.ndarray, n: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact two-sided (1 - 2·alpha) binomial interval for k successes out of n."""
    k = np.asarray(k, dtype=float)
    lo = np.where(k > 0, beta.ppf(alpha, k, n - k + 1), 0.0)
    hi = np.where(k < n, beta.ppf(1 - alpha, k + 1, n - k), 1.0)
    return lo, hi
