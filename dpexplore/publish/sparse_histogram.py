"""The thresholded Laplace histogram of Vinterbo 2012 (PH, eqs. 3-7), released sparsely.

Lei's threshold τ = A·ln(n)/ε_h, the probability that a cell survives it (eq. 5) and the expected
support (eq. 6); the release over an explicit array of every cell (:func:`perturb_dense`, the
reference) and its sparse construction (§2.1, "Efficient Construction and Representation",
:func:`perturb_sparse`), which draws the same distribution without enumerating the domain; the
kept cells as a :class:`SparseHistogram`. :class:`~dpexplore.publish.projected.ProjectedHistogram`
releases its projection with them.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Callable, Sequence

import numpy as np

from .. import mechanisms
from .._validation import RandomState, check_epsilon, check_random_state

__all__ = ["threshold", "noise_ceiling", "survival_probability", "expected_support", "perturb_dense",
           "perturb_sparse", "SparseHistogram"]

_DENSE_COMPLEMENT = 2_000_000     # below this, empty cells are drawn from an explicit list


def threshold(n: float, epsilon: float, A: float = 0.5) -> float:
    """τ = A·ln(n)/ε_h (Lei's threshold, PH line 1; natural log, histogram share of ε)."""
    return A * math.log(n) / check_epsilon(epsilon)


def noise_ceiling(scale: float, n_cells: int) -> float:
    """b·ln(m/2): the level an empty cell's Laplace(b) noise exceeds with probability 1/m
    (P(L > t) = ½e^(−t/b), eq. 2): were all m cells empty, one of them would be expected above
    it. Public: the noise scale b = Δ/ε_h and the number of cells m.

    >>> round(noise_ceiling(1.0, 2 * 148), 3)      # ln 148
    4.997
    """
    return float(scale) * math.log(max(float(n_cells), 2.0) / 2.0)


def survival_probability(z: Any, n: float, epsilon: float, A: float = 0.5, sensitivity: float = 2.0) -> Any:
    """P(cell with true count z is kept) = P(L > τ - z), L ~ Laplace(Δ/ε_h) (eq. 5).

    With Δ = 2: ½e^{εz/2}/n^{A/2} below τ, 1 - ½n^{A/2}/e^{εz/2} above; an empty cell survives
    with probability 1/(2n^{A/Δ}), independent of ε.
    """
    tau = threshold(n, epsilon, A)
    t = tau - np.asarray(z, dtype=float)
    return mechanisms.laplace_tail(t if np.ndim(z) else float(t), epsilon=epsilon, sensitivity=sensitivity)


def expected_support(true_counts: Any, n_cells: int, n: float, epsilon: float, A: float = 0.5,
                     sensitivity: float = 2.0) -> float:
    """E|S| = Σ_j |h⁻¹(j)|·P(L > τ - j) (eq. 6): non-empty counts given, the rest are empty cells."""
    counts = np.asarray(true_counts, dtype=float).ravel()
    counts = counts[counts > 0]
    empty = int(n_cells) - counts.size
    return float(np.sum(survival_probability(counts, n, epsilon, A, sensitivity))
                 + empty * survival_probability(0.0, n, epsilon, A, sensitivity))


def _check_counts(counts: Any) -> np.ndarray:
    """Cell counts as a flat float array of non-negative integers (a new array)."""
    c = np.asarray(counts, dtype=float).ravel()
    if not np.all(np.isfinite(c)) or np.any(c < 0) or np.any(c != np.rint(c)):
        raise ValueError("counts must hold non-negative integers (cell counts)")
    return c


def perturb_dense(counts: Any, *, epsilon: float, tau: float, sensitivity: float = 2.0,
                  random_state: RandomState = None, hardened: bool | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:
    """PH (Vinterbo 2012, eqs. 3-4) over an explicit array of every cell: ĥ = h + Laplace(Δ/ε),
    keep ĥ > τ (strict).

    Returns (codes of the kept cells, their noisy values). The reference for :func:`perturb_sparse`.
    ``hardened`` (True, or None inside :func:`dpexplore.mechanisms.hardened_noise`): every value
    lies on the integer-count lattice of :func:`dpexplore.mechanisms.hardened_laplace_parameters`
    (``integer=True``), fixed by ε and Δ alone.
    """
    counts = _check_counts(counts)
    noisy = mechanisms.laplace(counts, epsilon=epsilon, sensitivity=sensitivity, random_state=random_state,
                               hardened=hardened, integer=True)
    keep = np.flatnonzero(noisy > tau)
    return keep.astype(np.int64), noisy[keep]


def _sample_empty(m: int, occupied: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` distinct codes drawn uniformly from [0, m) minus ``occupied`` (sorted)."""
    if count == 0:
        return np.zeros(0, dtype=np.int64)
    if m <= _DENSE_COMPLEMENT:
        free = np.setdiff1d(np.arange(m, dtype=np.int64), occupied, assume_unique=True)
        return rng.choice(free, size=count, replace=False)
    # Sequential rejection: distinct valid codes in order of first appearance form a uniform
    # random sample without replacement; keep the first ``count``.
    chosen = np.zeros(0, dtype=np.int64)
    while chosen.size < count:
        need = count - chosen.size
        draw = rng.integers(0, m, size=int(need * 1.1) + 16, dtype=np.int64)
        allc = np.concatenate([chosen, draw])
        _, first = np.unique(allc, return_index=True)
        allc = allc[np.sort(first)]
        chosen = allc[~np.isin(allc, occupied)]
    return chosen[:count]


def _kept_empty_law(tau: float, epsilon: float, sensitivity: float, exact: bool
                    ) -> tuple[float, Callable[[int, np.random.Generator], np.ndarray]]:
    """The law of an empty cell's noisy count given that it passes τ: (the probability that it
    does, a sampler of q such values). ``exact``: the dense release's lattice gℤ and tail,
    g·K > τ ⟺ K ≥ k₀ (exact rational arithmetic); else Laplace conditioned on > τ ≥ 0,
    τ + Exponential(Δ/ε) by memorylessness."""
    if exact:
        grid, t, s, _ = mechanisms.hardened_laplace_parameters(epsilon=epsilon, sensitivity=sensitivity,
                                                               integer=True)
        k0 = math.floor(Fraction(tau) / Fraction(grid)) + 1

        def draw(q: int, rng: np.random.Generator) -> np.ndarray:
            if not q:          # (q̂ = 0 whenever k₀ is huge: P[K ≥ k₀] underflows to 0)
                return np.zeros(0)
            return grid * mechanisms.discrete_laplace_tail(k0, t, s, size=q, random_state=rng).astype(float)
        return float(mechanisms.discrete_laplace_tail_probability(k0, t, s)), draw
    return (float(mechanisms.laplace_tail(tau, epsilon=epsilon, sensitivity=sensitivity)),
            lambda q, rng: tau + rng.exponential(sensitivity / epsilon, size=q))


def perturb_sparse(codes: Any, counts: Any, n_cells: int, *, epsilon: float, tau: float,
                   sensitivity: float = 2.0, random_state: RandomState = None, hardened: bool | None = None
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The sparse construction of Vinterbo 2012, §2.1 ("Efficient Construction and Representation"):
    the same distribution as :func:`perturb_dense` without enumerating V.

    Non-empty cells get Laplace noise and the strict threshold; the number of empty cells that
    survive is q̂ ~ Binomial(m - n', P(L > τ)), their positions are uniform without replacement
    among the empty cells, and their values are L conditioned on L > τ ≥ 0. Returns (kept codes
    sorted, values, True where the cell was empty).

    ``hardened`` (True, or None inside :func:`dpexplore.mechanisms.hardened_noise`): the noise is
    exact discrete Laplace on the lattice gℤ that the dense release uses, g fixed by ε and Δ
    alone (integer counts: :func:`dpexplore.mechanisms.hardened_laplace_parameters` with
    ``integer=True``), never by the number n' of occupied cells. An empty cell is kept when
    g·K > τ, i.e. K ≥ k₀ = ⌊τ/g⌋ + 1, with probability P[K ≥ k₀]; its value is g·K drawn exactly
    from K | K ≥ k₀ (:func:`dpexplore.mechanisms.discrete_laplace_tail`): the dense release's law,
    on its lattice. The binomial count uses that probability in floating point (relative error
    ~2**-52, no change of support). Textbook noise: the kept empty values are τ + Exponential(Δ/ε)
    (Laplace conditioned on > τ ≥ 0, by memorylessness), whose floating-point support differs
    from that of h + Laplace: only hardened noise hides which kept cells were empty.
    """
    codes = np.asarray(codes, dtype=np.int64).ravel()
    counts = _check_counts(counts)
    if codes.size != counts.size:
        raise ValueError("codes and counts must have the same length")
    m = int(n_cells)
    if np.unique(codes).size != codes.size or (codes.size and (codes.min() < 0 or codes.max() >= m)):
        raise ValueError("codes must be distinct cell indices in [0, n_cells)")
    if tau < 0:
        raise ValueError("tau must be >= 0 for the conditioned-tail sampler")
    exact = mechanisms.is_hardened(hardened)
    rng = check_random_state(random_state)
    noisy = mechanisms.laplace(counts, epsilon=epsilon, sensitivity=sensitivity, random_state=rng,
                               hardened=exact, integer=True)
    keep = noisy > tau
    p0, draw_kept = _kept_empty_law(tau, epsilon, sensitivity, exact)
    n_empty = m - codes.size
    q_hat = int(rng.binomial(n_empty, p0)) if n_empty > 0 else 0
    spurious = _sample_empty(m, np.sort(codes), q_hat, rng)
    spurious_values = draw_kept(q_hat, rng)
    all_codes = np.concatenate([codes[keep], spurious])
    values = np.concatenate([noisy[keep], spurious_values])
    empty = np.concatenate([np.zeros(int(keep.sum()), dtype=bool), np.ones(q_hat, dtype=bool)])
    order = np.argsort(all_codes, kind="stable")
    return all_codes[order], values[order], empty[order]


class SparseHistogram:
    """A released histogram stored sparsely: kept cells, their noisy counts, the public shape."""

    def __init__(self, codes: np.ndarray, values: np.ndarray, shape: Sequence[int]):
        self.codes = np.asarray(codes, dtype=np.int64)
        self.values = np.asarray(values, dtype=float)
        self.shape = tuple(int(s) for s in shape)

    @property
    def n_cells(self) -> int:
        return int(np.prod(self.shape, dtype=object))

    def rounded(self) -> np.ndarray:
        """⌈h̃ - ½⌉: copies of each kept cell in the synthetic table (halves round down)."""
        return np.ceil(self.values - 0.5).astype(np.int64)

    def decode(self) -> tuple[np.ndarray, ...]:
        """Per-dimension indices of the kept cells (mixed radix, C order; the label is last)."""
        return np.unravel_index(self.codes, self.shape)
