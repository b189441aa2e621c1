"""Empirical privacy-loss audits: run a mechanism many times on two neighbouring inputs.

For an ε-DP mechanism M and neighbours D, D', every output event S satisfies
P[M(D) ∈ S] ≤ e^ε · P[M(D') ∈ S]. We sample M on both inputs, group the outputs into events
(distinct values for discrete outputs, bins for continuous ones), and bound each event's
probability on both sides with exact Clopper–Pearson bounds. The largest log-ratio that is still
positive at the bounds' ends is a *lower confidence bound* on the mechanism's true ε: when it
exceeds the claimed ε, the claim is false with the stated confidence. (Passing an audit is
evidence, not a proof.) This is the idea of statistical DP testing as in Ding et al., "Detecting
Violations of Differential Privacy" (CCS 2018), in its simplest form.

Why the confidence is honest. (1) The events are fixed before the counts that are tested are
drawn: bin edges (unless given) and the pooling of rare events come from a separate *pilot*
sample, as in Ding et al.'s separate event-selection run; choosing events on the same samples
would favour events whose counts happen to differ. (2) Each of the m events uses four one-sided
bounds (lower and upper, on both sides); each fails with probability at most
(1 - confidence) / (4m), so by the union bound all hold together with probability at least
``confidence``, and then the lower bound of every event is below its true log-ratio.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pandas as pd

from ._validation import RandomState, check_fraction, check_int, check_random_state

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


def _event_counts(out: np.ndarray) -> pd.Series:
    """How often each distinct output occurs (unhashable outputs are keyed by their text)."""
    if out.dtype != object and out.ndim == 1:
        return pd.Series(out).value_counts()
    return pd.Series([x if np.isscalar(x) else str(x) for x in out], dtype=object).value_counts()


def privacy_loss(mechanism: Callable, data: Any, neighbour: Any, *, n_samples: int = 100_000,
                 bins: int | np.ndarray | None = None, batched: bool = False,
                 confidence: float = 0.95, min_count: int = 20,
                 random_state: RandomState = None) -> AuditResult:
    """Estimate the privacy loss of ``mechanism`` between ``data`` and ``neighbour``.

    ``mechanism(data, rng)`` returns one output (hashable: a number, a string, a tuple), or with
    ``batched=True`` ``mechanism(data, rng, n)`` returns ``n`` outputs at once. Continuous
    outputs are grouped into ``bins`` (an array: fixed edges; an int: equal-probability bins of
    a pilot sample; default 30) unless they are already discrete. Events expected to hold fewer
    than ``min_count`` of the ``n_samples`` draws on both sides (judged on the pilot sample) are
    pooled into one "(rare events)" event, so tiny counts cannot fake a large ratio.

    ``n_samples`` outputs are drawn on each side for the test, plus a pilot of ``n_samples // 4``
    on each side that only chooses the events (see the module docstring).
    """
    check_fraction(confidence, "confidence", high_closed=False)
    n = check_int(n_samples, "n_samples", minimum=100)
    check_int(min_count, "min_count", minimum=0)
    n_pilot = max(100, n // 4)
    edges = None
    if bins is not None and not np.isscalar(bins):
        edges = np.asarray(bins, dtype=float)
        if edges.ndim != 1 or edges.size < 2 or not np.all(np.isfinite(edges)) or np.any(np.diff(edges) <= 0):
            raise ValueError("bins must be an int or a strictly increasing array of at least two finite edges")
    elif bins is not None and (isinstance(bins, bool) or not isinstance(bins, numbers.Integral) or bins < 1):
        raise ValueError(f"bins must be a positive integer or an array of edges, got {bins!r}")
    rng = check_random_state(random_state)
    pilot_a = _sample(mechanism, data, rng, n_pilot, batched)
    pilot_b = _sample(mechanism, neighbour, rng, n_pilot, batched)
    a = _sample(mechanism, data, rng, n, batched)
    b = _sample(mechanism, neighbour, rng, n, batched)
    pilot = np.concatenate([pilot_a, pilot_b])
    numeric = all(x.dtype != object and x.ndim == 1 for x in (pilot_a, pilot_b, a, b))
    if numeric and (bins is not None or _is_continuous(pilot)):
        if edges is None:  # equal-probability bins of the pilot: chosen without the test samples
            k = 30 if bins is None else int(bins)
            edges = np.unique(np.quantile(pilot.astype(float), np.linspace(0, 1, k + 1)))
            if edges.size < 2:
                edges = np.repeat(edges, 2)
        inner = edges[1:-1]  # the outer bins reach to ±infinity

        def counts(out: np.ndarray) -> np.ndarray:
            return np.bincount(np.searchsorted(inner, out.astype(float), side="right"), minlength=edges.size - 1)

        names = [f"[{lo:.4g}, {hi:.4g})" for lo, hi in zip(edges[:-1], edges[1:])]
        pa, pb, ca, cb = counts(pilot_a), counts(pilot_b), counts(a), counts(b)
        always_pooled = np.zeros(len(names), dtype=bool)
    else:
        va, vb = _event_counts(pilot_a), _event_counts(pilot_b)
        ta, tb = _event_counts(a), _event_counts(b)
        names = sorted(set(va.index) | set(vb.index), key=str)  # the events the pilot produced
        pa = np.array([va.get(k, 0) for k in names] + [0])
        pb = np.array([vb.get(k, 0) for k in names] + [0])
        ca = np.array([ta.get(k, 0) for k in names])
        cb = np.array([tb.get(k, 0) for k in names])
        ca, cb = np.append(ca, n - ca.sum()), np.append(cb, n - cb.sum())  # outputs the pilot never saw
        names = names + ["(rare events)"]
        always_pooled = np.zeros(len(names), dtype=bool)
        always_pooled[-1] = True
    # pool the events that the pilot says are rare on both sides (threshold scaled to its size)
    threshold = min_count * n_pilot / n
    rare = always_pooled | ((pa < threshold) & (pb < threshold))
    if rare.any():
        keep = ~rare
        names = [nm for nm, r in zip(names, keep) if r] + ["(rare events)"]
        ca = np.append(ca[keep], ca[rare].sum())
        cb = np.append(cb[keep], cb[rare].sum())
    alpha = (1 - confidence) / (4 * len(names))  # union bound over 4 one-sided bounds per event
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
    from scipy.stats import beta   # here, not at the top: a page that only imports the audit stays light

    k = np.asarray(k, dtype=float)
    with np.errstate(invalid="ignore"):  # the endpoints k = 0 and k = n are set exactly below
        lo = np.where(k > 0, beta.ppf(alpha, np.maximum(k, 1), n - k + 1), 0.0)
        hi = np.where(k < n, beta.ppf(1 - alpha, k + 1, np.maximum(n - k, 1)), 1.0)
    return lo, hi
