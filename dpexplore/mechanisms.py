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
Warner (1965), "Randomized response": the local mechanism for one bit and its estimator (Dwork &
Roth §3.2). Dwork & Roth Thm A.1 and Balle & Wang (2018), "Improving the Gaussian mechanism for
differential privacy: analytical calibration and optimal denoising", Thm 8: the Gaussian
mechanism's classical and exact (ε, δ) calibrations; its privacy-loss distribution (§3).

Hardened noise
--------------
``laplace(..., hardened=True)`` and ``geometric(..., hardened=True)`` (or every call inside a
``with hardened_noise():`` block) draw exact discrete noise instead of the textbook
floating-point sampler. Precisely:

* :func:`laplace` returns g·(k + K): g is a power of two fixed by ε, the sensitivity and a
  PUBLIC size (``size=``: the declared number of entries, never the length of a data-dependent
  part of them), or, for integer inputs (``integer=True``, counts), by ε and the sensitivity
  alone; k is the entry rounded to the grid and K exact discrete-Laplace noise drawn with
  integer arithmetic (Canonne, Kamath & Steinke 2020, Alg. 1-2). The float returned is a fixed
  function of the exact integer k + K, so every released value lies on the public lattice gℤ
  and the release is exactly ε'-DP with ε' ≤ ε (:func:`hardened_laplace_parameters`), for any
  finite input: nothing can fail once the noise is drawn.
* :func:`geometric` adds exact discrete-Laplace noise on the integers.
* :func:`discrete_laplace_tail` draws that noise conditioned on a public lower bound, exactly:
  the kept empty cells of a thresholded histogram, on the same lattice as the other cells.

Hardened or not, the exponential mechanism over intervals (:func:`exponential_interval`) returns
a point of a public lattice (the attribute's declared resolution), never a + (b − a)·U with data
values a, b; continuous medians and logistic-regression output perturbation are snapped to
public grids likewise. Not covered: the exponential mechanisms' selection probabilities
(computed in floating point) and the binomial and uniform draws a caller makes with float probabilities (e.g. how many empty
cells survive a threshold). The textbook path adds ``Generator.laplace`` noise in floating
point: the low bits of fl(c + L) depend on c (Mironov 2012), and a value built another way
(a threshold plus an exponential draw) has a floating-point support of its own, which shows how
it was built. The teaching plots keep the textbook sampler (its density is the one drawn next
to it); releases that leave the analyst's hands are hardened (:func:`dpexplore.tables.release`).

Examples
--------
>>> from dpexplore import mechanisms
>>> mechanisms.laplace_scale(epsilon=0.5, sensitivity=1.0)        # b = Δ/ε
2.0
>>> noisy = mechanisms.laplace(np.array([120.0, 80.0]), epsilon=1.0, random_state=0)
>>> noisy.shape
(2,)
>>> mechanisms.exponential_probabilities([0.0, 1.0], epsilon=2.0, sensitivity=1.0).round(3)
array([0.269, 0.731])
"""
from __future__ import annotations

import contextvars
import math
import numbers
from contextlib import contextmanager
from fractions import Fraction
from typing import Any, Iterator

import numpy as np
from scipy.special import expit, log_ndtr, logit, logsumexp, ndtr

from ._validation import (RandomState, check_bits, check_epsilon, check_flag, check_fraction, check_int,
                          check_positive, check_random_state)
from .limits import MAX_LATTICE_STEPS

__all__ = [
    "laplace", "laplace_scale", "hardened_noise", "is_hardened", "hardened_laplace_parameters",
    "discrete_laplace", "discrete_laplace_pmf", "discrete_laplace_tail", "discrete_laplace_tail_probability",
    "laplace_variance", "laplace_pdf", "laplace_cdf", "laplace_tail",
    "geometric", "geometric_pmf", "geometric_variance",
    "exponential", "exponential_probabilities", "permute_and_flip", "permute_and_flip_probabilities",
    "exponential_interval", "exponential_interval_probabilities",
    "lattice_resolution", "check_lattice", "lattice_value", "lattice_index", "snap_to_lattice",
    "exponential_subset", "exponential_subset_inclusion",
    "randomized_response", "randomized_response_probability", "randomized_response_epsilon",
    "randomized_response_estimate", "randomized_response_variance",
    "gaussian", "gaussian_scale", "gaussian_delta", "gaussian_privacy_loss",
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
            random_state: RandomState = None, hardened: bool | None = None,
            size: int | None = None, integer: bool = False) -> Any:
    """Add Laplace(Δ/ε) noise independently to each entry of ``value`` (Dwork–Roth Thm 3.6).

    ``sensitivity`` is the L1 sensitivity of the whole vector ``value``; each entry gets noise of
    that scale. Returns a float for scalar input, a float array otherwise.

    ``hardened``: True → exact discrete noise on a public power-of-two lattice (immune to the
    Mironov 2012 floating-point attack; :func:`hardened_laplace_parameters` states the
    guarantee); False → the textbook ``Generator.laplace`` draw; None (default) → hardened
    inside a :func:`hardened_noise` block, textbook otherwise. The lattice depends on ε, Δ and
    ``size``: the PUBLIC number of entries (default: the length of ``value``, right when that
    length is public; pass the declared length when ``value`` is a data-dependent part of a
    public vector). ``integer=True`` declares integer entries (counts): the lattice is then the
    same for every size (rounding integers to it is exact) and ``size`` is not used.
    """
    b = laplace_scale(epsilon=epsilon, sensitivity=sensitivity)
    v = _as_float_array(value)
    check_flag(integer, "integer")
    if integer and not np.all(v == np.rint(v)):
        raise ValueError("value must hold integers (counts) when integer=True")
    n = v.size if size is None else _check_size(size, "size")
    if n < v.size:
        raise ValueError(f"size (the public number of entries, {n}) is smaller than the {v.size} entries of value")
    rng = check_random_state(random_state)
    if _use_hardened(hardened):
        grid, t, s, _ = hardened_laplace_parameters(epsilon=epsilon, sensitivity=sensitivity, size=n,
                                                    integer=bool(integer))
        noise = discrete_laplace(t, s, size=v.shape, random_state=rng)
        return _as_output(_on_lattice(v, noise, grid), value)
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
#: the exact sampler needs t < 2**50: every int64 product of CKS 2020, Alg. 1-2 is then exact
_MAX_NUMERATOR = 1 << 50
#: public clamp on |entry|/grid before rounding (1-Lipschitz: the sensitivity is unchanged); far
#: beyond any real input, it keeps g·(k + K) finite for every finite entry
_MAX_UNITS = 2.0 ** 1000


@contextmanager
def hardened_noise(enabled: bool = True) -> Iterator[None]:
    """Within the block, :func:`laplace` and :func:`geometric` calls that do not pass
    ``hardened=`` draw exact discrete noise (see :func:`hardened_laplace_parameters`).

    Every publisher, model and selector that calls them is hardened without changes to its code:
    ``with hardened_noise(): est.fit(X, y)``. Blocks nest (``hardened_noise(False)`` switches
    back); the setting is per thread / asyncio task (a context variable).

    What it covers: every Laplace and geometric release inside the block is exact. Its values
    lie on a public lattice (fixed by ε, the sensitivity and public sizes, never by the data),
    it is ε'-DP with ε' ≤ ε exactly, and it cannot fail once drawn; a thresholded histogram
    draws its kept empty cells on the same lattice (:func:`discrete_laplace_tail`). Not covered:
    the exponential mechanisms and the float-probability binomial or uniform draws of callers
    (module docstring). Outside a block the textbook sampler's low bits depend on the data
    (Mironov 2012).
    """
    token = _HARDENED.set(bool(enabled))
    try:
        yield
    finally:
        _HARDENED.reset(token)


def is_hardened(hardened: bool | None = None) -> bool:
    """Whether a sampler called with ``hardened=`` this value draws exact noise: the value
    itself, or (None) whether the call runs inside a :func:`hardened_noise` block."""
    if hardened is None:
        return _HARDENED.get()
    if not isinstance(hardened, (bool, np.bool_)):
        raise TypeError(f"hardened must be True, False or None, got {hardened!r}")
    return bool(hardened)


_use_hardened = is_hardened  # the name the samplers of this module call it by


def _check_size(size: Any, name: str) -> int:
    if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {size!r}")
    return int(size)


def _exact_scale(units: Fraction, epsilon: float) -> tuple[int, int] | None:
    """The noise scale units/ε (in grid units) rounded UP to t/s in exact arithmetic: s = 1024,
    or, for scales beyond 2**40 grid units, the largest smaller power of two with t < 2**50 (1/s
    is then a negligible share of the scale); None when even s = 1 gives t ≥ 2**50."""
    s = _SCALE_DENOMINATOR
    t = math.ceil(units * s / Fraction(epsilon))
    while t >= _MAX_NUMERATOR and s > 1:
        s //= 2
        t = math.ceil(units * s / Fraction(epsilon))
    return (int(t), s) if t < _MAX_NUMERATOR else None


def hardened_laplace_parameters(*, epsilon: float, sensitivity: float = 1.0, size: int = 1,
                                integer: bool = False) -> tuple[float, int, int, float]:
    """Lattice and exact noise scale of the hardened Laplace sampler: ``(g, t, s, ε_effective)``.

    Each entry is rounded to the nearest multiple of the grid g (a power of two) and exact
    discrete-Laplace noise with P[k] ∝ exp(-|k|·s/t) (t/s grid units, sampled with integer
    arithmetic: Canonne, Kamath & Steinke 2020, Alg. 2) is added; the output is g·(round(v/g) + k),
    exactly a lattice point (beyond 2**53 grid units, the float nearest it: a fixed function of
    the exact integer, i.e. post-processing).

    ``size`` is the PUBLIC number of entries (a declared size, never a count read from the
    data): g is the largest power of two ≤ Δ / (1024·size). Rounding moves each entry by at most
    g/2, so two inputs at L1 distance ≤ Δ round to lattice points at L1 distance ≤ Δ' = Δ + size·g.
    ``integer=True`` (integer entries, e.g. counts): g is the largest power of two ≤ min(1, Δ/1024),
    integers are lattice points, rounding moves nothing, Δ' = Δ, and ``size`` is not used.

    Guarantee: the scale t/s = ⌈s·Δ'/(ε·g)⌉/s is rounded *up* in exact rational arithmetic, so the
    release is ε_effective-DP with ε_effective = Δ'·s/(g·t) ≤ ε, exactly: no floating-point
    operation touches the noise (the approach of the OpenDP library; Mironov 2012 shows why the
    textbook float sampler is not ε-DP). The noise is at most (1 + 2/1024) times the textbook
    scale Δ/ε. For scales beyond 2**40 grid units (tiny ε) s shrinks and, if need be, g grows,
    keeping t < 2**50; a ValueError (public inputs only) when no lattice can: size/ε ≥ 2**49,
    or Δ/ε ≥ 2**50 with ``integer=True``.
    """
    eps = check_epsilon(epsilon)
    delta = check_positive(sensitivity, "sensitivity")
    m = max(_check_size(size, "size"), 1)
    check_flag(integer, "integer")
    slack = 0 if integer else m                      # lattice units the rounding can add
    grid = 2.0 ** math.floor(math.log2(delta / (2 ** _GRID_SHIFT * (1 if integer else m))))
    grid = min(grid, 1.0) if integer else grid
    feasible = integer or Fraction(m) / Fraction(eps) < _MAX_NUMERATOR // 2   # else t ≥ size/ε is too large
    scale = _exact_scale(Fraction(delta) / Fraction(grid) + slack, eps) if feasible else None
    while scale is None and feasible and not (integer and grid >= 1.0):
        grid *= 2.0                                  # a coarser lattice (tiny ε only)
        scale = _exact_scale(Fraction(delta) / Fraction(grid) + slack, eps)
    if scale is None:
        raise ValueError(f"epsilon = {eps!r} is too small for the hardened sampler at sensitivity {delta!r}"
                         f"{'' if integer else f' and size {m}'}: its noise scale would exceed 2**50 lattice "
                         "units; use a larger epsilon or the textbook sampler (hardened=False)")
    t, s = scale
    units = Fraction(delta) / Fraction(grid) + slack
    return grid, t, s, float(units * s / t)


def _on_lattice(v: np.ndarray, noise: np.ndarray, grid: float) -> np.ndarray:
    """g·(k + K) with k = round(v/g): a fixed function of the exact integer k + K.

    v/g is exact (g a power of two); k, clamped to the public ±2**1000, is an exact integer in
    float; IEEE addition of the exact floats k and K is correctly rounded, so the sum depends on
    k + K only (exact below 2**53); the rare |K| > 2**53 (inexact as floats) are added as Python
    integers, rounded the same way. Scaling by g is exact."""
    k = np.rint(np.clip(v / grid, -_MAX_UNITS, _MAX_UNITS))
    out = (k + noise.astype(float)).reshape(-1)
    flat_k, flat_noise = k.reshape(-1), noise.reshape(-1)
    for i in np.flatnonzero(np.abs(flat_noise) > 2 ** 53):
        out[i] = float(int(flat_k[i]) + int(flat_noise[i]))
    return out.reshape(v.shape) * grid


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


def _check_scale(t: Any, s: Any) -> tuple[int, int]:
    for name, v in (("t", t), ("s", s)):
        check_int(v, name, minimum=1)
    if t >= _MAX_NUMERATOR or s >= 2 ** 20:
        raise ValueError("the noise scale t/s is too large for the exact sampler (t < 2**50, s < 2**20)")
    return int(t), int(s)


def _geometric_attempt(t: int, s: int, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One round of CKS 2020, Alg. 2 before the sign, for n draws: (Y, accepted). The accepted Y
    are exact geometric draws, P[Y = y] ∝ exp(-y·s/t) on y ≥ 0."""
    u = _uniform_below(np.full(n, t, dtype=np.int64), rng)
    d = _bernoulli_exp(u, np.int64(t), rng)                     # accept U w.p. exp(-U/t)
    v = np.zeros(n, dtype=np.int64)
    going = np.ones(n, dtype=bool)
    while going.any():                                          # V ~ Geometric(1 - 1/e)
        idx = np.flatnonzero(going)
        b = _bernoulli_exp(np.ones(idx.size, dtype=np.int64), np.int64(1), rng)
        v[idx[b]] += 1
        going[idx[~b]] = False
    return (u + t * v) // s, d                                  # ⌊X/s⌋, X = U + t·V


def discrete_laplace(t: int, s: int = 1, *, size: Any = None, random_state: RandomState = None) -> Any:
    """Exact samples with P[k] ∝ exp(-|k|·s/t) on the integers (scale t/s), CKS 2020, Alg. 2.

    Integer arithmetic and uniform integer draws only (no logarithms, no floats), so every
    probability is exactly the discrete-Laplace pmf (:func:`discrete_laplace_pmf`).
    """
    t, s = _check_scale(t, s)
    rng = check_random_state(random_state)
    shape = () if size is None else size
    n = int(np.prod(shape, dtype=np.int64))
    out = np.zeros(n, dtype=np.int64)
    todo = np.arange(n)
    while todo.size:
        m = todo.size
        y, d = _geometric_attempt(t, s, m, rng)
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


def discrete_laplace_tail(lower: int, t: int, s: int = 1, *, size: Any = None,
                          random_state: RandomState = None) -> Any:
    """Exact samples of the discrete Laplace K of :func:`discrete_laplace` conditioned on
    K ≥ ``lower`` (an integer ≥ 0).

    On k ≥ 0 the pmf is ∝ exp(-k·s/t), so the conditioned law is lower + Y with Y geometric,
    P[Y = y] ∝ exp(-y·s/t): CKS 2020, Alg. 2 without the sign, integer arithmetic only. Its
    probability P[K ≥ lower] is :func:`discrete_laplace_tail_probability`.
    """
    t, s = _check_scale(t, s)
    if isinstance(lower, bool) or not isinstance(lower, numbers.Integral) or not 0 <= lower < 2 ** 62:
        raise ValueError(f"lower must be an integer in [0, 2**62), got {lower!r}")
    rng = check_random_state(random_state)
    shape = () if size is None else size
    n = int(np.prod(shape, dtype=np.int64))
    out = np.zeros(n, dtype=np.int64)
    todo = np.arange(n)
    while todo.size:
        y, ok = _geometric_attempt(t, s, todo.size, rng)
        out[todo[ok]] = y[ok]
        todo = todo[~ok]
    out += int(lower)
    return int(out[0]) if size is None else out.reshape(shape)


def discrete_laplace_tail_probability(lower: Any, t: int, s: int = 1) -> Any:
    """P[K ≥ lower] for the discrete Laplace K of :func:`discrete_laplace` (``lower`` integers):
    α^lower/(1+α) for lower ≥ 0 and 1 - α^(1-lower)/(1+α) below, with α = exp(-s/t)."""
    t, s = _check_scale(t, s)
    rate = s / t
    k = np.asarray(lower, dtype=float)
    one_plus_alpha = 1.0 + np.exp(-rate)
    with np.errstate(over="ignore"):
        p = np.where(k >= 0, np.exp(-rate * np.abs(k)) / one_plus_alpha,
                     1.0 - np.exp(-rate * (1.0 - k)) / one_plus_alpha)
    return _as_output(p, lower)


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


def geometric(value: Any, *, epsilon: float, sensitivity: int = 1,
              random_state: RandomState = None, hardened: bool | None = None) -> Any:
    """Add two-sided geometric noise, P[Z = z] ∝ α^|z| with α = exp(-ε/Δ), to integer values.

    The discrete analogue of Laplace: outputs stay integers, so a noisy count is still a count
    (Ghosh et al. 2009). Sampled as the difference of two iid geometric variables.
    ``hardened`` (True, or None inside :func:`hardened_noise`): exact integer-arithmetic
    sampling (:func:`discrete_laplace`) with the scale Δ/ε rounded up to a multiple of 1/1024
    (of a coarser 1/s beyond 2**40), so the release is exactly ε'-DP for some ε' ≤ ε (at most
    0.1 % more noise for ε ≤ 1); a ValueError (public inputs only) when Δ/ε ≥ 2**50.
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
        scale = _exact_scale(Fraction(_check_integer_sensitivity(sensitivity)), check_epsilon(epsilon))
        if scale is None:
            raise ValueError(f"epsilon = {epsilon!r} is too small for the hardened geometric sampler "
                             "(Δ/ε ≥ 2**50): use a larger epsilon or the textbook sampler (hardened=False)")
        noise = discrete_laplace(*scale, size=v.shape, random_state=rng)
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


def exponential_log_weights(utilities: Any, *, epsilon: float, sensitivity: float,
                            monotone: bool = False) -> np.ndarray:
    """Log-weights ε·u/(2Δu) of the exponential mechanism (unnormalised); ε·u/Δu for a
    ``monotone`` utility (see :func:`exponential`)."""
    u = _check_utilities(utilities)
    halves = 1.0 if check_flag(monotone, "monotone") else 2.0
    with np.errstate(over="ignore"):
        logw = check_epsilon(epsilon) * u / (halves * check_positive(sensitivity, "sensitivity"))
    if np.any(logw == np.inf):
        raise ValueError("utilities are too large for this ε/sensitivity (ε·u/2Δ overflows): "
                         "subtract a constant from them (that does not change the probabilities)")
    return logw


def exponential_probabilities(utilities: Any, *, epsilon: float, sensitivity: float,
                              monotone: bool = False) -> np.ndarray:
    """Exact selection probabilities P[i] ∝ exp(ε·u_i/(2Δu)), or exp(ε·u_i/Δu) for a ``monotone``
    utility (computed with log-sum-exp)."""
    logw = exponential_log_weights(utilities, epsilon=epsilon, sensitivity=sensitivity, monotone=monotone)
    return np.exp(logw - logsumexp(logw))


def exponential(utilities: Any, *, epsilon: float, sensitivity: float,
                random_state: RandomState = None, return_probabilities: bool = False,
                monotone: bool = False) -> Any:
    """Pick one candidate index with P[i] ∝ exp(ε·u_i/(2Δu)) (McSherry–Talwar; Dwork–Roth 3.10).

    Keeps the factor 2 of the general mechanism unless ``monotone``: a utility that a neighbouring
    dataset moves in the same direction for every candidate (adding a record raises each by
    between 0 and Δu: add/remove neighbours and a count-like score; a substitution moves scores
    both ways, so it is not) is ε-DP with P[i] ∝ exp(ε·u_i/Δu) (McSherry & Talwar 2007, §2; Dwork
    & Roth 2014, the remark after Thm 3.10). Candidates with utility -inf are never selected.

    >>> exponential_probabilities([0.0, 1.0], epsilon=2.0, sensitivity=1.0, monotone=True).round(3).tolist()
    [0.119, 0.881]
    """
    probs = exponential_probabilities(utilities, epsilon=epsilon, sensitivity=sensitivity, monotone=monotone)
    rng = check_random_state(random_state)
    index = int(rng.choice(probs.size, p=probs))
    return (index, probs) if return_probabilities else index


def permute_and_flip_probabilities(utilities: Any, *, epsilon: float, sensitivity: float,
                                   monotone: bool = False) -> np.ndarray:
    """Exact selection probabilities of :func:`permute_and_flip`. With a_j = exp(w_j − max w)
    (w the exponential mechanism's log-weights), P[i] = a_i·∫₀¹ Π_{j≠i} (1 − a_j·z) dz: the noisy
    max of w_j + Exp(1) written with z = exp(w_max − y); a polynomial of degree m − 1 in z,
    integrated exactly by Gauss–Legendre quadrature.

    >>> permute_and_flip_probabilities([0.0, 1.0], epsilon=2.0, sensitivity=1.0, monotone=True).round(3).tolist()
    [0.068, 0.932]
    """
    logw = exponential_log_weights(utilities, epsilon=epsilon, sensitivity=sensitivity, monotone=monotone)
    a = np.exp(logw - logw.max())
    z, weights = np.polynomial.legendre.leggauss(a.size // 2 + 1)
    z = (z + 1.0) / 2.0                                      # nodes on [0, 1]
    log_factors = np.log1p(-np.outer(a, z))                  # (candidate, node); z < 1, a ≤ 1
    all_but = np.exp(log_factors.sum(axis=0)[None, :] - log_factors)
    probs = a * (all_but @ weights) / 2.0
    return probs / probs.sum()


def permute_and_flip(utilities: Any, *, epsilon: float, sensitivity: float,
                     random_state: RandomState = None, monotone: bool = False) -> int:
    """Pick one candidate index by permute-and-flip (McKenna & Sheldon 2020, Alg. 1): visit the
    candidates in a random order and stop at candidate i with probability exp(ε·(u_i − u*)/(2Δu))
    (u* the best score), or exp(ε·(u_i − u*)/Δu) for a ``monotone`` utility (their Remark 1). ε-DP
    like :func:`exponential`, and its expected score is never below the exponential mechanism's
    (their Thm. 2): the best candidate is certain to be taken when visited. Drawn as its
    equivalent, the noisy max of ε·u_i/(2Δu) + Exp(1) (Ding et al. 2021, "The permute-and-flip
    mechanism is identical to report-noisy-max with exponential noise"). Candidates with utility
    -inf are never selected.

    >>> permute_and_flip([0.0, 1.0, 5.0], epsilon=50.0, sensitivity=1.0, random_state=0)
    2
    """
    logw = exponential_log_weights(utilities, epsilon=epsilon, sensitivity=sensitivity, monotone=monotone)
    rng = check_random_state(random_state)
    return int(np.argmax(logw + rng.standard_exponential(logw.size)))


def _interval_log_weights(edges: Any, utilities: Any, epsilon: float, sensitivity: float,
                          resolution: float | None, origin: float):
    """(first lattice index of each edge, lattice points per interval, log-weights, resolution,
    origin) of :func:`exponential_interval`."""
    e = np.asarray(edges, dtype=float)
    u = _check_utilities(utilities)
    if e.ndim != 1 or e.size != u.size + 1:
        raise ValueError("edges must have exactly one more entry than utilities")
    if not np.all(np.isfinite(e)):
        raise ValueError("edges must be finite")
    if np.any(np.diff(e) < 0):
        raise ValueError("edges must be sorted in increasing order")
    if not e[-1] > e[0]:
        raise ValueError("the intervals have zero total length")
    if resolution is None:
        resolution = lattice_resolution(e[0], e[-1])
    resolution, origin = check_lattice(resolution, origin, lower=e[0], upper=e[-1])
    first = lattice_index(e, resolution=resolution, origin=origin)
    counts = np.diff(first)
    if not np.any((counts > 0) & (u > -np.inf)):
        raise ValueError("no interval holds both a lattice point and a finite utility: nothing can be drawn")
    with np.errstate(divide="ignore"):
        logw = np.log(counts.astype(float)) + exponential_log_weights(u, epsilon=epsilon, sensitivity=sensitivity)
    return first, counts, logw, resolution, origin


def exponential_interval_probabilities(edges: Any, utilities: Any, *, epsilon: float, sensitivity: float,
                                       resolution: float | None = None, origin: float = 0.0) -> np.ndarray:
    """Probability of each interval [edges[i], edges[i+1]) under :func:`exponential_interval`.

    P[i] ∝ N_i · exp(ε·u_i/(2Δu)) with N_i the number of points of the public lattice
    origin + k·resolution in the interval: DiffMulti Eq. 12 with the counting measure of the
    lattice as base measure (intervals without a lattice point get 0). On a fine lattice N_i is
    the length over the resolution, up to one point.
    """
    _, _, logw, _, _ = _interval_log_weights(edges, utilities, epsilon, sensitivity, resolution, origin)
    return np.exp(logw - logsumexp(logw))


def exponential_interval(edges: Any, utilities: Any, *, epsilon: float, sensitivity: float,
                         resolution: float | None = None, origin: float = 0.0,
                         random_state: RandomState = None, return_probabilities: bool = False) -> Any:
    """Draw a point of a public lattice by the exponential mechanism over a piecewise-constant utility.

    The utility is u_i on [edges[i], edges[i+1]). The candidates are the points of the public
    lattice origin + k·resolution (:func:`lattice_value`) between edges[0] and edges[-1]; each
    has the utility of the interval holding it. An interval is chosen with probability
    ∝ N_i · exp(ε·u_i/(2Δu)) (:func:`exponential_interval_probabilities`) and one of its N_i
    lattice points uniformly, which is exactly the finite exponential mechanism over the lattice
    (McSherry & Talwar 2007; DiffMulti §4.3, Eq. 11–12 with the counting measure as base
    measure): ε-DP when every point's utility has sensitivity Δu. The inner edges may be data
    values: they only decide which lattice point gets which utility. The output is always a
    lattice point, never a + (b − a)·U with data ends, whose floating-point support depends on
    a and b (Mironov 2012). ``resolution=None``: :func:`lattice_resolution` of
    [edges[0], edges[-1]], which must then be public.

    The point inside the interval is uniform over its N_i lattice points (:func:`_uniform_index`).
    """
    first, counts, logw, resolution, origin = _interval_log_weights(edges, utilities, epsilon, sensitivity,
                                                                    resolution, origin)
    probs = np.exp(logw - logsumexp(logw))
    rng = check_random_state(random_state)
    i = int(rng.choice(probs.size, p=probs))
    j = _uniform_index(int(counts[i]), rng)
    point = float(lattice_value(int(first[i]) + j, resolution=resolution, origin=origin))
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
    with two corrections of ours to the printed algorithm (the q_d factor in the weights;
    S(0, d) = log 1 = 0; thesis §3.5.5). Returns the selected indices in increasing order.
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


# --------------------------------------------------------------------------- randomized response
def randomized_response_probability(*, epsilon: float) -> float:
    """P[report = true bit] = e^ε/(1 + e^ε) of ε-DP randomized response (Warner 1965; Dwork &
    Roth 2014 §3.2): the two outputs' probabilities differ by the factor p/(1 − p) = e^ε.

    >>> randomized_response_probability(epsilon=math.log(3))   # Dwork & Roth's two coins: 3/4
    0.75
    """
    return float(expit(check_epsilon(epsilon)))


def randomized_response_epsilon(p: float) -> float:
    """The ε = ln(p/(1 − p)) of randomized response that tells the truth with probability p.

    >>> round(randomized_response_epsilon(0.75), 4)            # ln 3
    1.0986
    """
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.5 < p < 1:
        raise ValueError(f"p must be a probability in (1/2, 1) (tell the truth more often than not), got {p!r}")
    return float(logit(p))


def randomized_response(bits: Any, *, epsilon: float, random_state: RandomState = None) -> Any:
    """Each respondent reports their bit with probability p = e^ε/(1 + e^ε), its opposite
    otherwise (Warner 1965; Dwork & Roth 2014 §3.2): ε-DP for each bit, in the local model (no
    one ever sees a true bit). Returns int 0/1, an array for array input.

    >>> randomized_response([1, 0, 1, 1], epsilon=20.0, random_state=0)   # p ≈ 1: the truth
    array([1, 0, 1, 1])
    """
    b = check_bits(bits, "bits")
    p = randomized_response_probability(epsilon=epsilon)
    keep = check_random_state(random_state).random(b.shape) < p
    return _as_output(np.where(keep, b, 1 - b), bits)


def randomized_response_estimate(reports: Any, *, epsilon: float) -> float:
    """Unbiased estimate (λ̂ − (1 − p))/(2p − 1) of the proportion of 1s from the randomized
    reports, λ̂ their mean (Warner 1965): E[λ̂] = (2p − 1)π + 1 − p. Post-processing; it can
    fall outside [0, 1] (clipping would bias it).

    >>> randomized_response_estimate([1, 1, 1, 0], epsilon=math.log(3))   # (3/4 − 1/4) / (1/2)
    1.0
    """
    mean = check_bits(reports, "reports").mean()
    p = randomized_response_probability(epsilon=epsilon)
    return float((mean - (1 - p)) / (2 * p - 1))


def randomized_response_variance(n: int, *, epsilon: float, proportion: float | None = None) -> float:
    """Variance of :func:`randomized_response_estimate` from ``n`` reports.

    Around the proportion of the n respondents themselves (the error the noise adds, what a DP
    comparison needs): p(1 − p)/(n(2p − 1)²), the same whatever their bits. With
    ``proportion=π``, around a population proportion π estimated from a random sample (Warner
    1965): that plus the sampling variance π(1 − π)/n. The central Laplace count at the same ε
    has variance 2/(ε²n²) (:func:`laplace_variance` / n²): local noise costs a factor ~√n in error.

    >>> round(randomized_response_variance(100, epsilon=math.log(3)), 6)   # (3/16) / (100 / 4)
    0.0075
    """
    n = check_int(n, "n", minimum=1)
    p = randomized_response_probability(epsilon=epsilon)
    sampling = 0.0 if proportion is None else check_fraction(proportion, "proportion", low_open=False)
    return float(p * (1 - p) / (n * (2 * p - 1) ** 2) + sampling * (1 - sampling) / n)


# --------------------------------------------------------------------------- Gaussian, (ε, δ)
GAUSSIAN_CALIBRATIONS = ("analytic", "classical")


def gaussian_delta(*, sigma: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """The exact δ(ε) of the Gaussian mechanism N(f(D), σ²) with L2 sensitivity Δ (Balle & Wang
    2018, Thm 8): Φ(Δ/2σ − εσ/Δ) − e^ε·Φ(−Δ/2σ − εσ/Δ). It is (ε, δ)-DP exactly for δ ≥ δ(ε).

    >>> round(gaussian_delta(sigma=1.0, epsilon=1.0), 4)
    0.1269
    """
    s, eps = check_positive(sigma, "sigma"), check_epsilon(epsilon)
    a, b = check_positive(sensitivity, "sensitivity") / (2 * s), eps * s / sensitivity
    return max(0.0, float(ndtr(a - b) - np.exp(eps + log_ndtr(-a - b))))


def gaussian_scale(*, epsilon: float, delta: float, sensitivity: float = 1.0,
                   calibration: str = "analytic") -> float:
    """σ of Gaussian noise that makes a query with L2 sensitivity Δ (ε, δ)-DP.

    ``"classical"``: σ = Δ·√(2 ln(1.25/δ))/ε, valid for ε < 1 only (Dwork & Roth 2014, Thm A.1).
    ``"analytic"`` (any ε): the smallest σ with :func:`gaussian_delta` ≤ δ (Balle & Wang 2018,
    Thm 8; their Alg. 1 solves the same equation), found by bisection and rounded up, so the
    returned σ always satisfies the bound. It is below the classical σ wherever both apply.

    >>> round(gaussian_scale(epsilon=0.5, delta=1e-5, calibration="classical"), 3)
    9.69
    >>> round(gaussian_scale(epsilon=0.5, delta=1e-5), 3)
    7.032
    """
    eps = check_epsilon(epsilon)
    delta = check_fraction(delta, "delta", high_closed=False)
    scale = check_positive(sensitivity, "sensitivity")
    if calibration == "classical":
        if eps >= 1:
            raise ValueError(f"the classical calibration holds for epsilon < 1 only (Dwork & Roth Thm A.1), got "
                             f"{eps!r}: use calibration='analytic'")
        return scale * math.sqrt(2 * math.log(1.25 / delta)) / eps
    if calibration != "analytic":
        raise ValueError(f"calibration must be one of {GAUSSIAN_CALIBRATIONS}, got {calibration!r}")
    hi = scale / eps                   # δ(σ) falls as σ grows (Balle & Wang 2018, Thm 8)
    while gaussian_delta(sigma=hi, epsilon=eps, sensitivity=scale) > delta:
        hi *= 2
    lo = hi / 2
    while lo > 1e-12 * scale and gaussian_delta(sigma=lo, epsilon=eps, sensitivity=scale) <= delta:
        lo /= 2
    while hi - lo > 1e-12 * hi:        # invariant: δ(lo) > δ ≥ δ(hi)
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if gaussian_delta(sigma=mid, epsilon=eps, sensitivity=scale) <= delta else (mid, hi)
    return hi


def gaussian(value: Any, *, epsilon: float, delta: float, sensitivity: float = 1.0,
             calibration: str = "analytic", random_state: RandomState = None, accountant: Any = None) -> Any:
    """Add N(0, σ²) noise to each entry of ``value``, σ from :func:`gaussian_scale`: (ε, δ)-DP
    for a query whose L2 sensitivity (over the whole vector) is ``sensitivity`` (Dwork & Roth 2014,
    Thm A.1; Balle & Wang 2018, Thm 8). The textbook floating-point sampler (teaching: its
    density is N(value, σ²) exactly as drawn; Mironov 2012 applies to its low bits as to Laplace's).

    With ``accountant`` (a :class:`~dpexplore.budget.BudgetAccountant` that holds a δ budget) the
    release spends (ε, δ) on it, after every argument is checked and before the noise is drawn.

    >>> gaussian([10.0, 20.0], epsilon=1.0, delta=1e-5, random_state=0).round(2)
    array([10.47, 19.51])
    >>> from dpexplore.budget import BudgetAccountant
    >>> acc = BudgetAccountant(1.0, delta=1e-5)
    >>> _ = gaussian(5.0, epsilon=0.5, delta=1e-6, accountant=acc, random_state=0)
    >>> acc.ledger.values.tolist()
    [['Gaussian mechanism', '', 0.5, 0.5, 1e-06]]
    """
    sigma = gaussian_scale(epsilon=epsilon, delta=delta, sensitivity=sensitivity, calibration=calibration)
    v = _as_float_array(value)
    rng = check_random_state(random_state)
    if accountant is not None:
        from .budget import check_accountant   # here: importing the mechanisms stays light (no pandas)

        check_accountant(accountant).spend(epsilon, "Gaussian mechanism", delta=delta)
    return _as_output(v + rng.normal(0.0, sigma, size=v.shape), value)


def gaussian_privacy_loss(*, sigma: float, sensitivity: float = 1.0) -> Any:
    """The privacy loss L = ln(p_D(Y)/p_D'(Y)) of the Gaussian mechanism, Y drawn on D: exactly
    Normal(μ, 2μ) with μ = Δ²/(2σ²), as a scipy.stats frozen normal (Balle & Wang 2018, §3).
    δ is not "the chance that the bound fails": P[L > ε] (``.sf(ε)``) is larger than the exact
    δ(ε) = P[L > ε] − e^ε·P[L' < −ε] (§3; L', the loss on D', has the same law), which
    :func:`gaussian_delta` computes.

    >>> loss = gaussian_privacy_loss(sigma=1.0)
    >>> float(loss.mean()), float(loss.var())
    (0.5, 1.0)
    >>> round(float(loss.sf(1.0) - math.exp(1.0) * loss.cdf(-1.0)), 4)   # = gaussian_delta
    0.1269
    """
    from scipy.stats import norm   # here: importing the mechanisms stays light

    mu = check_positive(sensitivity, "sensitivity") ** 2 / (2 * check_positive(sigma, "sigma") ** 2)
    return norm(loc=mu, scale=math.sqrt(2 * mu))


# --------------------------------------------------------------------------- public lattices
#: a default lattice cuts its public range into at least 2**LATTICE_BITS steps
LATTICE_BITS = 20
#: up to this many points, a uniform point is ⌊U·N⌋ with a 53-bit uniform U (within a factor
#: 1 + 2**-20 of uniform); beyond it, an exact integer draw
_FLOOR_DRAW_LIMIT = 2 ** 32


def _uniform_index(n: int, rng: np.random.Generator) -> int:
    """A uniform index in [0, n). For n ≤ 2**32 it is ⌊U·n⌋ with one 53-bit uniform U, the draw
    the former a + (b − a)·U sampler made, so seeded releases on integer attributes are unchanged
    (each index gets 2**53/n values of U, ± 2: within a factor 1 + 2**-20 of uniform, below the
    floating-point precision of the interval choice); beyond, an exact ``Generator.integers``."""
    if n <= _FLOOR_DRAW_LIMIT:
        return min(int(rng.random() * n), n - 1)
    return int(rng.integers(0, n))


def lattice_resolution(lower: float, upper: float) -> float:
    """Default spacing of the public lattice on [lower, upper]: the largest power of two
    ≤ (upper − lower) / 2**20, so at least a million steps. A function of the public bounds only
    (README, "Floating-point noise": every released real number lies on a public grid)."""
    lo, hi = float(lower), float(upper)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi and math.isfinite(hi - lo)):
        raise ValueError(f"a lattice needs finite public bounds lower < upper, got [{lower!r}, {upper!r}]")
    return 2.0 ** math.floor(math.log2((hi - lo) / 2 ** LATTICE_BITS))


def check_lattice(resolution: Any, origin: Any = 0.0, *, lower: float, upper: float) -> tuple[float, float]:
    """``(resolution, origin)`` of a public lattice origin + k·resolution for values in
    [lower, upper], checked: a positive finite resolution, a finite origin, at most
    :data:`MAX_LATTICE_STEPS` steps across the range, and steps of at least 4 floating-point
    spacings of the values (so lattice points are distinct floats and :func:`lattice_index` is
    exact). The errors name the rule and the public numbers only."""
    for name, v in (("resolution", resolution), ("origin", origin)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"{name} must be a number, got {type(v).__name__}")
    res, org = float(resolution), float(origin)
    if not (math.isfinite(res) and res > 0):
        raise ValueError(f"resolution must be a finite number > 0, got {resolution!r}")
    if not math.isfinite(org):
        raise ValueError(f"origin must be finite, got {origin!r}")
    lo, hi = float(lower), float(upper)
    if (hi - lo) / res > MAX_LATTICE_STEPS:
        raise ValueError(f"resolution {res!r} is too fine for the range [{lo!r}, {hi!r}]: a lattice holds at "
                         f"most 2**52 steps across it; declare a coarser resolution")
    span = max(abs(lo), abs(hi), abs(org))
    if res < 4 * float(np.spacing(span)):
        raise ValueError(f"resolution {res!r} is below 4 floating-point steps of values as large as {span!r}: "
                         "its lattice points would not be distinct numbers; declare a coarser resolution")
    return res, org


def lattice_value(index: Any, *, resolution: float, origin: float = 0.0) -> Any:
    """The lattice points origin + index·resolution (the one formula every release evaluates, so
    a released value is a fixed function of its integer index, whatever the data)."""
    k = np.asarray(index, dtype=float)
    return _as_output(origin + k * resolution, index)


def lattice_index(values: Any, *, resolution: float, origin: float = 0.0) -> np.ndarray:
    """Index of the first lattice point at or above each value: the smallest k with
    ``lattice_value(k) >= value`` (int64; exact against the lattice points themselves)."""
    v = np.asarray(values, dtype=float)
    k = np.ceil((v - origin) / resolution)
    for _ in range(2):   # the float quotient can be one off: settle it on the lattice points
        k = np.where(origin + (k - 1) * resolution >= v, k - 1, k)
        k = np.where(origin + k * resolution < v, k + 1, k)
    return k.astype(np.int64)


def snap_to_lattice(values: Any, *, resolution: float, origin: float = 0.0) -> Any:
    """The lattice point nearest each value (post-processing: any fixed function of a DP value is
    DP). Indices are clamped to ±2**62, so any finite or infinite input gives a finite point."""
    v = np.asarray(values, dtype=float)
    k = np.rint(np.clip((v - origin) / resolution, -2.0 ** 62, 2.0 ** 62))
    return _as_output(np.asarray(lattice_value(k, resolution=resolution, origin=origin)), values)
