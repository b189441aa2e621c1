"""The basic differentially private mechanisms, with their exact distributions beside them.

Every sampler takes keyword-only ``epsilon``, ``sensitivity`` and ``random_state`` (an int seed,
a ``numpy.random.Generator`` or None) and is vectorised over arrays. Next to each sampler sits a
closed-form helper (density, pmf, variance or selection probabilities) so that notebooks can
draw theory next to samples and tests can compare the two.

References
----------
Dwork & Roth, *The Algorithmic Foundations of Differential Privacy* (2014): Laplace mechanism
(Thm 3.6), exponential mechanism (Thm 3.10, utility scaled by ε/(2Δu)).
Ghosh, Roughgarden & Sundararajan (2009): the two-sided geometric mechanism for integer counts.
McSherry & Talwar (2007): the exponential mechanism over a base measure, used for intervals
(DiffMulti, Al-Hussaeni et al., Eq. 11–12).
Mironov (2012), "On significance of the least significant bits for differential privacy": the
textbook floating-point Laplace sampler leaks through the low bits of its output.
Canonne, Kamath & Steinke (2020), "The discrete Gaussian for differential privacy", Alg. 1–2:
exact discrete-Laplace sampling with integer arithmetic, used by the hardened samplers here.

Hardened noise
--------------
``laplace(..., hardened=True)`` and ``geometric(..., hardened=True)`` (or every call inside a
``with hardened_noise():`` block) use exact discrete noise on a power-of-two grid instead of the
textbook floating-point sampler; see :func:`hardened_laplace_parameters` for the guarantee.
The teaching plots keep the textbook sampler (its density is the one drawn next to it).
"""
from __future__ import annotations

import contextvars
import math
import numbers
from contextlib import contextmanager
from fractions import Fraction
from typing import Any, Iterator

import numpy as np
from scipy.special import logsumexp

from ._validation import RandomState, check_epsilon, check_positive, check_random_state

__all__ = [
    "laplace", "laplace_scale", "hardened_noise", "hardened_laplace_parameters", "discrete_laplace",
    "discrete_laplace_pmf", "laplace_variance", "laplace_pdf", "laplace_cdf", "laplace_tail",
    "geometric", "geometric_pmf", "geometric_variance",
    "exponential", "exponential_log_weights", "exponential_probabilities",
    "exponential_interval", "exponential_interval_probabilities",
    "exponential_subset", "exponential_subset_inclusion",
]


def _as_output(x: np.ndarray, like: Any) -> Any:
    """Return a Python scalar for scalar input, an array otherwise."""
    return x.item() if np.ndim(like) == 0 else x


def _as_float_array(value: Any, name: str = "value") -> np.ndarray:
    """``value`` as a float array (a new array: the caller's input is never written to)."""
    try:
        v = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be numeric (a number or an array of numbers)") from None
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must be finite (no NaN or infinity)")
    return v


# --------------------------------------------------------------------------- Laplace
def laplace_scale(*, epsilon: float, sensitivity: float = 1.0) -> float:
    """Scale b = Δ/ε of the Laplace noise that makes a query with L1 sensitivity Δ ε-DP."""
    return check_positive(sensitivity, "sensitivity") / check_epsilon(epsilon)


def laplace(value: Any, *, epsilon: float, sensitivity: float = 1.0,
            random_state: RandomState = None, hardened: bool | None = None) -> Any:
    """Add Laplace(Δ/ε) noise independently to each entry of ``value`` (Dwork–Roth Thm 3.6).

    ``sensitivity`` is the L1 sensitivity of the whole vector ``value``; each entry gets noise of
    that scale. Returns a float for scalar input, a float array otherwise.

    ``hardened``: True → exact discrete noise on a power-of-two grid (immune to the Mironov 2012
    floating-point attack; :func:`hardened_laplace_parameters` states the guarantee); False → the
    textbook ``Generator.laplace`` draw; None (default) → hardened inside a
    :func:`hardened_noise` block, textbook otherwise.
    """
    b = laplace_scale(epsilon=epsilon, sensitivity=sensitivity)
    v = _as_float_array(value)
    rng = check_random_state(random_state)
    if _use_hardened(hardened):
        grid, t, s, _ = hardened_laplace_parameters(epsilon=epsilon, sensitivity=sensitivity, size=v.size)
        if v.size and np.max(np.abs(v)) / grid >= 2.0 ** 52:
            raise ValueError("value is too large for the hardened sampler's grid (|value|/grid ≥ 2**52): "
                             "rescale it or use a smaller size")
        k = np.rint(v / grid).astype(np.int64) + discrete_laplace(t, s, size=v.shape, random_state=rng)
        return _as_output(k.astype(float) * grid, value)
    return _as_output(v + rng.laplace(0.0, b, size=v.shape), value)


def laplace_variance(*, epsilon: float, sensitivity: float = 1.0) -> float:
    """Variance 2b² of Laplace(b) noise with b = Δ/ε."""
    return 2.0 * laplace_scale(epsilon=epsilon, sensitivity=sensitivity) ** 2


def laplace_pdf(x: Any, *, epsilon: float, sensitivity: float = 1.0) -> Any:
    """Density of the Laplace(Δ/ε) noise at ``x``: exp(-|x|/b) / 2b."""
    b = laplace_scale(epsilon=epsilon, sensitivity=sensitivity)
    xx = np.asarray(x, dtype=float)
    return _as_output(np.exp(-np.abs(xx) / b) / (2 * b), x)


def laplace_cdf(x: Any, *, epsilon: float, sensitivity: float = 1.0) -> Any:
    """Distribution function of the Laplace(Δ/ε) noise."""
    b = laplace_scale(epsilon=epsilon, sensitivity=sensitivity)
    xx = np.asarray(x, dtype=float)
    half = 0.5 * np.exp(-np.abs(xx) / b)
    return _as_output(np.where(xx < 0, half, 1.0 - half), x)


def laplace_tail(t: Any, *, epsilon: float, sensitivity: float = 1.0) -> Any:
    """P[Z > t] for Z ~ Laplace(Δ/ε), accurate in the far tail (no 1 - cdf cancellation)."""
    b = laplace_scale(epsilon=epsilon, sensitivity=sensitivity)
    tt = np.asarray(t, dtype=float)
    half = 0.5 * np.exp(-np.abs(tt) / b)
    return _as_output(np.where(tt >= 0, half, 1.0 - half), t)


# --------------------------------------------------------------------------- hardened (exact) noise
_HARDENED = contextvars.ContextVar("dpexplore_hardened_noise", default=False)
#: denominator of the rational noise scale t/s (in grid units) of the exact sampler
_SCALE_DENOMINATOR = 1 << 10
#: the grid is at most Δ / (2**_GRID_SHIFT · size): the rounding costs ≤ 2**-_GRID_SHIFT of ε
_GRID_SHIFT = 10


@contextmanager
def hardened_noise(enabled: bool = True) -> Iterator[None]:
    """Within the block, :func:`laplace` and :func:`geometric` calls that do not pass
    ``hardened=`` draw exact discrete noise (see :func:`hardened_laplace_parameters`).

    Every publisher, model and selector that calls them is hardened without changes to its code:
    ``with hardened_noise(): est.fit(X, y)``. Blocks nest (``hardened_noise(False)`` switches
    back); the setting is per thread / asyncio task (a context variable).
    """
    token = _HARDENED.set(bool(enabled))
    try:
        yield
    finally:
        _HARDENED.reset(token)


def _use_hardened(hardened: bool | None) -> bool:
    if hardened is None:
        return _HARDENED.get()
    if not isinstance(hardened, (bool, np.bool_)):
        raise TypeError(f"hardened must be True, False or None, got {hardened!r}")
    return bool(hardened)


def hardened_laplace_parameters(*, epsilon: float, sensitivity: float = 1.0, size: int = 1
                                ) -> tuple[float, int, int, float]:
    """Grid and exact noise scale of the hardened Laplace sampler: ``(g, t, s, ε_effective)``.

    Each of the ``size`` entries is rounded to the nearest multiple of the grid g (a power of two,
    the largest ≤ Δ / (1024·size)), and exact discrete-Laplace noise with P[k] ∝ exp(-|k|·s/t)
    (t/s grid units, sampled with integer arithmetic: Canonne, Kamath & Steinke 2020, Alg. 2) is
    added; the output is g·(round(v/g) + k), a float that is exactly a grid point.

    Guarantee (the ε correction for rounding): rounding moves each entry by at most g/2, so two
    inputs at L1 distance ≤ Δ round to grid points at L1 distance ≤ Δ + size·g (in grid units
    (Δ + size·g)/g). The scale t/s = ⌈s·(Δ + size·g)/(ε·g)⌉/s is rounded *up* in exact rational
    arithmetic, so the release is ε_effective-DP with ε_effective = (Δ + size·g)·s/(g·t) ≤ ε,
    exactly: no floating-point operation touches the noise (the approach of the OpenDP library;
    Mironov 2012 shows why the textbook float sampler is not ε-DP). The noise is at most
    (1 + 2/1024) times the textbook scale Δ/ε.
    """
    eps = check_epsilon(epsilon)
    delta = check_positive(sensitivity, "sensitivity")
    if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 0:
        raise ValueError(f"size must be a non-negative integer, got {size!r}")
    m = max(int(size), 1)
    grid = 2.0 ** math.floor(math.log2(delta / (2 ** _GRID_SHIFT * m)))
    eff_delta = Fraction(delta) + m * Fraction(grid)
    s = _SCALE_DENOMINATOR
    t = math.ceil(eff_delta * s / (Fraction(eps) * Fraction(grid)))
    eps_eff = float(eff_delta * s / (Fraction(grid) * t))
    return grid, int(t), s, eps_eff


def _uniform_below(high: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Uniform integers in [0, high) (exact; ``high`` an int64 array ≥ 1)."""
    return rng.integers(0, high, dtype=np.int64)


def _bernoulli_exp(num: np.ndarray, den: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Exact Bernoulli(exp(-num/den)) for 0 ≤ num/den ≤ 1, elementwise (CKS 2020, Alg. 1):
    K = first k with Bernoulli(γ/k) = 0; return K odd. Integer arithmetic only."""
    num = np.asarray(num, dtype=np.int64)
    den = np.broadcast_to(np.asarray(den, dtype=np.int64), num.shape)
    result = np.zeros(num.shape, dtype=bool)
    active = np.ones(num.shape, dtype=bool)
    k = 1
    while active.any():
        idx = np.flatnonzero(active)
        a = _uniform_below(den[idx] * k, rng) < num[idx]  # Bernoulli(num / (den·k))
        stop = idx[~a]
        result[stop] = (k % 2) == 1
        active[stop] = False
        k += 1
    return result


def discrete_laplace(t: int, s: int = 1, *, size: Any = None, random_state: RandomState = None) -> Any:
    """Exact samples with P[k] ∝ exp(-|k|·s/t) on the integers (scale t/s), CKS 2020, Alg. 2.

    Integer arithmetic and uniform integer draws only (no logarithms, no floats), so every
    probability is exactly the discrete-Laplace pmf (:func:`discrete_laplace_pmf`).
    """
    for name, v in (("t", t), ("s", s)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    if t >= 2 ** 50 or s >= 2 ** 20:
        raise ValueError("the noise scale t/s is too large for the exact sampler (t < 2**50, s < 2**20)")
    rng = check_random_state(random_state)
    shape = () if size is None else size
    n = int(np.prod(shape, dtype=np.int64))
    out = np.zeros(n, dtype=np.int64)
    todo = np.arange(n)
    while todo.size:
        m = todo.size
        u = _uniform_below(np.full(m, t, dtype=np.int64), rng)
        d = _bernoulli_exp(u, np.int64(t), rng)                     # accept U w.p. exp(-U/t)
        v = np.zeros(m, dtype=np.int64)
        going = np.ones(m, dtype=bool)
        while going.any():                                          # V ~ Geometric(1 - 1/e)
            idx = np.flatnonzero(going)
            b = _bernoulli_exp(np.ones(idx.size, dtype=np.int64), np.int64(1), rng)
            v[idx[b]] += 1
            going[idx[~b]] = False
        y = (u + t * v) // s                                        # ⌊X/s⌋, X = U + t·V
        sign = rng.integers(0, 2, size=m, dtype=np.int64)
        ok = d & ~((sign == 1) & (y == 0))                          # reject "-0"
        out[todo[ok]] = np.where(sign[ok] == 1, -y[ok], y[ok])
        todo = todo[~ok]
    return int(out[0]) if size is None else out.reshape(shape)


def discrete_laplace_pmf(k: Any, t: int, s: int = 1) -> Any:
    """P[K = k] = (1-α)/(1+α)·α^|k| with α = exp(-s/t) (0 off the integers)."""
    rate = s / t
    alpha, one_minus = np.exp(-rate), -np.expm1(-rate)
    kk = np.asarray(k, dtype=float)
    pmf = np.where(kk == np.round(kk), one_minus / (1 + alpha) * np.exp(-rate * np.abs(kk)), 0.0)
    return _as_output(pmf, k)


# --------------------------------------------------------------------------- geometric
def _check_integer_sensitivity(sensitivity: Any) -> int:
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, numbers.Real):
        raise TypeError(f"sensitivity must be a positive integer, got {type(sensitivity).__name__}")
    s = float(sensitivity)
    if not np.isfinite(s) or s != np.floor(s) or s < 1:
        raise ValueError(f"sensitivity must be a positive integer for integer data, got {sensitivity!r}")
    return int(s)


def _geometric_rate(epsilon: float, sensitivity: Any) -> float:
    """ε/Δ, checked: α = exp(-ε/Δ) and 1 - α = -expm1(-ε/Δ) (accurate for tiny ε)."""
    return check_epsilon(epsilon) / _check_integer_sensitivity(sensitivity)


def _geometric_alpha(epsilon: float, sensitivity: Any) -> float:
    return float(np.exp(-_geometric_rate(epsilon, sensitivity)))


def geometric(value: Any, *, epsilon: float, sensitivity: int = 1,
              random_state: RandomState = None, hardened: bool | None = None) -> Any:
    """Add two-sided geometric noise, P[Z = z] ∝ α^|z| with α = exp(-ε/Δ), to integer values.

    The discrete analogue of Laplace: outputs stay integers, so a noisy count is still a count
    (Ghosh et al. 2009). Sampled as the difference of two iid geometric variables.
    ``hardened`` (True, or None inside :func:`hardened_noise`): exact integer-arithmetic
    sampling (:func:`discrete_laplace`) with the scale Δ/ε rounded up to a multiple of 1/1024,
    so the release is exactly ε'-DP for some ε' ≤ ε (at most 0.1 % more noise for ε ≤ 1).
    """
    rate = _geometric_rate(epsilon, sensitivity)
    v = np.asarray(value)
    if v.dtype.kind not in "iu":
        if v.dtype.kind == "f" and np.all(np.isfinite(v)) and np.all(v == np.round(v)):
            v = v.astype(np.int64)
        else:
            raise ValueError("value must hold finite integers (counts) for the geometric mechanism")
    rng = check_random_state(random_state)
    if _use_hardened(hardened):
        s = _SCALE_DENOMINATOR
        t = math.ceil(Fraction(_check_integer_sensitivity(sensitivity)) * s / Fraction(check_epsilon(epsilon)))
        noise = discrete_laplace(int(t), s, size=v.shape, random_state=rng)
        return _as_output(v.astype(np.int64) + noise, value)
    p = float(-np.expm1(-rate))  # success probability 1 - α, without cancellation for small ε
    noise = rng.geometric(p, size=v.shape).astype(np.int64) - rng.geometric(p, size=v.shape)
    return _as_output(v.astype(np.int64) + noise, value)


def geometric_pmf(k: Any, *, epsilon: float, sensitivity: int = 1) -> Any:
    """P[Z = k] = (1-α)/(1+α) · α^|k| of the two-sided geometric noise (0 off the integers)."""
    rate = _geometric_rate(epsilon, sensitivity)
    alpha, one_minus = np.exp(-rate), -np.expm1(-rate)
    kk = np.asarray(k, dtype=float)
    pmf = np.where(kk == np.round(kk), one_minus / (1 + alpha) * np.exp(-rate * np.abs(kk)), 0.0)
    return _as_output(pmf, k)


def geometric_variance(*, epsilon: float, sensitivity: int = 1) -> float:
    """Variance 2α/(1-α)² of the two-sided geometric noise (each one-sided part has α/(1-α)²)."""
    rate = _geometric_rate(epsilon, sensitivity)
    return float(2 * np.exp(-rate) / np.expm1(-rate) ** 2)


# --------------------------------------------------------------------------- exponential
def _check_utilities(utilities: Any, name: str = "utilities") -> np.ndarray:
    u = np.asarray(utilities, dtype=float)
    if u.ndim != 1 or u.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array of scores")
    if np.any(np.isnan(u)) or np.any(u == np.inf):
        raise ValueError(f"{name} must not contain NaN or +inf (use -inf to exclude a candidate)")
    if np.all(u == -np.inf):
        raise ValueError(f"{name}: every candidate has utility -inf, nothing can be selected")
    return u


def exponential_log_weights(utilities: Any, *, epsilon: float, sensitivity: float) -> np.ndarray:
    """Log-weights ε·u/(2Δu) of the exponential mechanism (unnormalised)."""
    u = _check_utilities(utilities)
    with np.errstate(over="ignore"):
        logw = check_epsilon(epsilon) * u / (2.0 * check_positive(sensitivity, "sensitivity"))
    if np.any(logw == np.inf):
        raise ValueError("utilities are too large for this ε/sensitivity (ε·u/2Δ overflows): "
                         "subtract a constant from them (that does not change the probabilities)")
    return logw


def exponential_probabilities(utilities: Any, *, epsilon: float, sensitivity: float) -> np.ndarray:
    """Exact selection probabilities P[i] ∝ exp(ε·u_i/(2Δu)) (computed with log-sum-exp)."""
    logw = exponential_log_weights(utilities, epsilon=epsilon, sensitivity=sensitivity)
    return np.exp(logw - logsumexp(logw))


def exponential(utilities: Any, *, epsilon: float, sensitivity: float,
                random_state: RandomState = None, return_probabilities: bool = False) -> Any:
    """Pick one candidate index with P[i] ∝ exp(ε·u_i/(2Δu)) (McSherry–Talwar; Dwork–Roth 3.10).

    Keeps the factor 2 of the general mechanism (no monotonicity is assumed). Candidates with
    utility -inf are never selected.
    """
    probs = exponential_probabilities(utilities, epsilon=epsilon, sensitivity=sensitivity)
    rng = check_random_state(random_state)
    index = int(rng.choice(probs.size, p=probs))
    return (index, probs) if return_probabilities else index


def _interval_log_weights(edges: Any, utilities: Any, epsilon: float, sensitivity: float):
    e = np.asarray(edges, dtype=float)
    u = _check_utilities(utilities)
    if e.ndim != 1 or e.size != u.size + 1:
        raise ValueError("edges must have exactly one more entry than utilities")
    if not np.all(np.isfinite(e)):
        raise ValueError("edges must be finite")
    lengths = np.diff(e)
    if np.any(lengths < 0):
        raise ValueError("edges must be sorted in increasing order")
    if not np.any(lengths > 0):
        raise ValueError("the intervals have zero total length")
    if not np.any((lengths > 0) & (u > -np.inf)):
        raise ValueError("no interval has both a positive length and a finite utility: nothing can be drawn")
    with np.errstate(divide="ignore"):
        logw = np.log(lengths) + exponential_log_weights(u, epsilon=epsilon, sensitivity=sensitivity)
    return e, logw


def exponential_interval_probabilities(edges: Any, utilities: Any, *, epsilon: float,
                                       sensitivity: float) -> np.ndarray:
    """Probability of each interval [edges[i], edges[i+1]) under the continuous EM.

    P[i] ∝ (edges[i+1] - edges[i]) · exp(ε·u_i/(2Δu)): the exponential mechanism with the length
    (Lebesgue measure) as base measure, DiffMulti Eq. 12.
    """
    _, logw = _interval_log_weights(edges, utilities, epsilon, sensitivity)
    return np.exp(logw - logsumexp(logw))


def exponential_interval(edges: Any, utilities: Any, *, epsilon: float, sensitivity: float,
                         random_state: RandomState = None,
                         return_probabilities: bool = False) -> Any:
    """Draw a point from the continuous exponential mechanism over a piecewise-constant utility.

    The utility is constant on each [edges[i], edges[i+1]); an interval is chosen with probability
    ∝ length · exp(ε·u/(2Δu)) and a point is drawn uniformly inside it (DiffMulti §4.3, Eq. 12).
    The edges may depend on the data: the base measure (length) does not, so the draw is ε-DP.
    """
    e, logw = _interval_log_weights(edges, utilities, epsilon, sensitivity)
    probs = np.exp(logw - logsumexp(logw))
    rng = check_random_state(random_state)
    i = int(rng.choice(probs.size, p=probs))
    point = float(rng.uniform(e[i], e[i + 1]))
    return (point, probs) if return_probabilities else point


# --------------------------------------------------------------------------- k-subsets
def _subset_log_weights(scores: Any, k: Any, epsilon: float, sensitivity: float):
    q = np.asarray(scores, dtype=float)
    if q.ndim != 1 or q.size == 0 or not np.all(np.isfinite(q)):
        raise ValueError("scores must be a non-empty 1-D array of finite numbers")
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= k <= q.size:
        raise ValueError(f"k must be an integer between 1 and {q.size}, got {k!r}")
    return exponential_log_weights(q, epsilon=epsilon, sensitivity=sensitivity), int(k)


def _forward_table(w: np.ndarray, k: int) -> np.ndarray:
    """S[t, d] = log e_t(exp(w_0), ..., exp(w_{d-1})): log elementary symmetric polynomials."""
    D = w.size
    S = np.full((k + 1, D + 1), -np.inf)
    S[0, :] = 0.0
    for d in range(1, D + 1):
        S[1:, d] = np.logaddexp(S[1:, d - 1], S[:-1, d - 1] + w[d - 1])
    return S


def exponential_subset(scores: Any, k: int, *, epsilon: float, sensitivity: float,
                       random_state: RandomState = None) -> np.ndarray:
    """One-shot exponential mechanism over all k-subsets with additive utility U(S) = Σ q_d.

    P(S) ∝ exp(ε·U(S)/(2Δ)), where ``sensitivity`` Δ bounds the change of U (k·Δq when each
    score moves by at most Δq). Sampled exactly in O(k·D) with the log-domain recurrence of
    elementary symmetric polynomials: the thesis's Algorithm 5 ("privacy-efficient sampling"),
    with the corrections of specs/feature-selection-nb-lr.md §4.5 (the q_d factor in the
    weights; S(0, d) = log 1 = 0). Returns the selected indices in increasing order.
    """
    w, k = _subset_log_weights(scores, k, epsilon, sensitivity)
    rng = check_random_state(random_state)
    S = _forward_table(w, k)
    chosen = []
    t = k
    for d in range(w.size, 0, -1):  # backward sampling: include item d-1 or not
        if t == 0:
            break
        log_p = S[t - 1, d - 1] + w[d - 1] - S[t, d]
        if rng.random() < np.exp(min(0.0, log_p)):
            chosen.append(d - 1)
            t -= 1
    return np.array(sorted(chosen), dtype=int)


def exponential_subset_inclusion(scores: Any, k: int, *, epsilon: float,
                                 sensitivity: float) -> np.ndarray:
    """Exact P(d ∈ S) for each item under :func:`exponential_subset` (sums to k).

    Combines the forward table over items before d with a backward table over items after d.
    """
    w, k = _subset_log_weights(scores, k, epsilon, sensitivity)
    D = w.size
    F = _forward_table(w, k)                 # items 0..d-1
    B = _forward_table(w[::-1], k)[:, ::-1]  # B[t, d] = log e_t over items d..D-1
    log_without = np.full(D, -np.inf)        # log e_{k-1} of all items except d
    for t in range(k):
        log_without = np.logaddexp(log_without, F[t, :D] + B[k - 1 - t, 1:D + 1])
    return np.exp(w + log_without - F[k, D])
