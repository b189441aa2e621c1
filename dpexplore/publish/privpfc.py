"""PrivPfC: private publication of a noisy histogram chosen for classification.

Su, Cao, Li & Lyu, "PrivPfC: differentially private data publication for classification",
The VLDB Journal 27(2):201-223, 2018 (Alg. 2). Digest: shared/specs/privpfc.md.

The method in one sentence: enumerate a data-independent pool of candidate *grids* (one
taxonomy level per attribute), pick one with a single exponential-mechanism call scored by the
expected accuracy of the noisy-histogram classifier, and publish that grid's class counts with
Laplace noise. The budget is split three ways (Alg. 2 line 2): ε_size for the record count N̂,
ε_sel for the selection and ε_pert for the counts (3% / 37% / 60% by default).

Level numbering: our taxonomies count depth from 0 (root); the paper counts levels from 1, so the
paper's level ℓ is our depth ℓ-1 (a grid of depths (0, 2, 1) is the paper's ⟨1, 3, 2⟩).
"""
from __future__ import annotations

import functools
import math
import numbers
import warnings
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError

from .. import mechanisms
from .._validation import (RandomState, check_epsilon, check_fraction_weights, check_positive,
                           check_random_state)
from ..budget import BudgetAccountant
from ..domain import PrivacyLeakWarning, Schema, class_values
from ..histogram import LevelCodes, noisy_counts, synthetic_from_counts
from ..models.histogram import HistogramClassifier, generalize
from ..counts import CountTable
from .base import (DEFAULT_MAX_SYNTHETIC_ROWS, CompleteSynthetic, Release, apportion, check_release_features,
                   check_release_input, prepare_accountant, source_input, synthetic_size)

__all__ = ["PrivPfC", "PrivPfCSelNF", "GridScorer", "PrivPfCRun", "run_privpfc",
           "win_probability", "cell_quality", "grid_quality", "exact_cell_quality", "quality_sensitivity",
           "enumerate_grids", "grid_threshold", "describe_grid", "CONSTANT_SENSITIVITY",
           "MAX_GRID_CELLS", "candidates_table", "sensitivity_curve", "win_probability_curve", "grid_levels",
           "cell_labels", "compare_counts", "counts_comparison"]

CONSTANT_SENSITIVITY = 1.1
"""The paper's bound on the quality sensitivity (Lemma 1 and 2; Alg. 2 line 13)."""

MAX_GRID_CELLS = 1_000_000
"""Public cap on τ so that a dense count table always fits in memory (only bites for ε ≳ 100)."""


# =========================================================================== quality (Sec. 4)
def _lose(gap: np.ndarray, epsilon: float) -> np.ndarray:
    """a(G) = ½·e^{-εG}·(1 + εG/2): P[the class ahead by G ≥ 0 loses] (Lemma 3, Eq. 10)."""
    t = epsilon * gap
    return 0.5 * np.exp(-t) * (1.0 + 0.5 * t)


def win_probability(gap: Any, epsilon: float) -> Any:
    """P[n¹ + Z₁ ≥ n² + Z₂] for a count lead ``gap`` = n¹ - n², Z iid Laplace(1/ε) (Eq. 10).

    1 - a(gap) for gap ≥ 0 and a(|gap|) for gap < 0, so a tie (gap 0) gives exactly ½.
    ``epsilon`` is the budget that will perturb the counts (ε_pert), not ε_sel.
    """
    eps = check_epsilon(epsilon)
    g = np.asarray(gap, dtype=float)
    a = _lose(np.abs(g), eps)
    p = np.where(g >= 0, 1.0 - a, a)
    return p.item() if np.ndim(gap) == 0 else p


def cell_quality(counts: Any, epsilon: float) -> np.ndarray:
    """Expected correctly classified records per cell: n⁽¹⁾p⁽¹⁾ + n⁽²⁾p⁽²⁾ (Eq. 5).

    ``counts`` has shape (..., n_classes). Only the two largest counts matter; for two classes
    this is the exact Eq. 1. Written as n⁽¹⁾ - G·a(G) with G = n⁽¹⁾ - n⁽²⁾ ≥ 0, which does not
    depend on how ties between classes are broken.
    """
    eps = check_epsilon(epsilon)
    c = np.asarray(counts, dtype=float)
    if c.ndim < 1 or c.shape[-1] < 2:
        raise ValueError("counts must have a last axis of at least two classes")
    top = np.sort(c, axis=-1)[..., -2:]
    gap = top[..., 1] - top[..., 0]
    return top[..., 1] - gap * _lose(gap, eps)


def grid_quality(counts: Any, epsilon: float) -> float:
    """gq(D, g): the sum of :func:`cell_quality` over the grid's cells (Def. 4/5)."""
    return float(np.sum(cell_quality(counts, epsilon)))


def exact_cell_quality(counts: Any, epsilon: float, n_points: int = 8001) -> np.ndarray:
    """Eq. 1 for any number of classes: Σ_i n^i·P[class i has the largest noisy count].

    NOT PROVEN PRIVATE: for three or more classes Eq. 1 has no sensitivity bound (paper §4.3),
    so PrivPfC selects with the top-two approximation (Eq. 5, :func:`cell_quality`). This is the
    non-private diagnostic of the paper's Fig. 3 (how well Eq. 5 tracks Eq. 1).
    p^i = E_Z[Π_{j≠i} F(n^i - n^j + Z)], Z ~ Laplace(1/ε), by the trapezoid rule on
    [-25/ε, 25/ε] (8,001 points: for two classes it matches the closed form to ~2e-4 per cell).
    """
    eps = check_epsilon(epsilon)
    c = np.asarray(counts, dtype=float)
    if c.ndim != 2 or c.shape[1] < 2:
        raise ValueError("counts must have shape (n_cells, n_classes) with at least two classes")
    z = np.linspace(-25.0 / eps, 25.0 / eps, int(n_points))
    w = mechanisms.laplace_pdf(z, epsilon=eps) * np.gradient(z)
    w[[0, -1]] *= 0.5  # trapezoid end points
    k = c.shape[1]
    out = np.empty(c.shape[0])
    for start in range(0, c.shape[0], 256):
        block = c[start:start + 256]                                   # (m, k)
        lead = block[:, :, None] - block[:, None, :]                   # n^i - n^j, (m, k, k)
        cdf = mechanisms.laplace_cdf(lead[..., None] + z, epsilon=eps)  # (m, k, k, P)
        cdf[:, np.arange(k), np.arange(k), :] = 1.0                    # leave out j = i
        p = (np.prod(cdf, axis=2) * w).sum(axis=-1)                    # (m, k)
        out[start:start + 256] = (block * p).sum(axis=1)
    return out


def _lemma1_f(x: np.ndarray, epsilon: float) -> np.ndarray:
    """f_ε(x) = |1 + g₁(x-1) - g₁(x)|, g₁(x) = x·a(x) (Lemma 1, Eq. 4).

    Evaluated without cancellation: with t = εx, g₁(x-1) - g₁(x) equals
    ½[(x-1)(1-e^{-ε})e^{-(t-ε)}(1 + (t-ε)/2) - e^{-t}(1 + t - ε/2)] (algebra on Eq. 4), so small ε does not
    subtract two numbers of size 1/ε.
    """
    t = epsilon * x
    lead = (x - 1.0) * -np.expm1(-epsilon) * np.exp(-(t - epsilon)) * (1.0 + 0.5 * (t - epsilon))
    diff = 0.5 * (lead - np.exp(-t) * (1.0 + t - 0.5 * epsilon))
    return np.abs(1.0 + diff)


def quality_sensitivity(epsilon: float) -> float:
    """Δ_gq(ε): the exact sensitivity of the grid quality for perturbation budget ``epsilon``.

    Lemma 1 (Eq. 3): max over integer gaps x ≥ 1 of f_ε(x) -- the case where the removed record
    is in the strict majority class; the other case is bounded by ½ ≤ f_ε(1). The maximum is
    taken over integers by a direct scan of x = 1..max(10, ⌈20/ε⌉) (the continuous maximiser is
    ≈ (1+√3)/ε + ½, not (1+√3)/2 as printed), so it is ≈1.0889 for small ε and falls to 1 for large
    ε; never above the paper's 1.1. The same bound covers the top-two approximation Eq. 5 (Lemma
    2; spec §3.4). The ε here is ε_pert, which is fixed before selection, so using Δ(ε_pert)
    instead of 1.1 is still DP (paper §4.2).
    """
    eps = check_epsilon(epsilon)
    hi = max(10, math.ceil(20.0 / eps)) + 1
    if hi <= 2_000_000:
        x = np.arange(1, hi + 1, dtype=float)
    else:  # tiny ε: scan the small gaps and a wide window around the maximiser
        centre = math.floor((1 + math.sqrt(3)) / eps + 0.5)
        x = np.concatenate([np.arange(1, 1001), np.arange(max(1, centre - 100_000), centre + 100_001)]).astype(float)
    return float(max(_lemma1_f(x, eps).max(), 0.5))


# =========================================================================== candidates (Sec. 5)
def grid_threshold(n_hat: float, epsilon_pert: float, noise_to_signal: float = 0.2) -> float:
    """τ = r·N̂·ε_pert (Eq. 6), capped at the public constant :data:`MAX_GRID_CELLS`.

    The paper's prose after Eq. 7 writes ε for ε_pert: a typo (Eq. 6 and Alg. 2 use ε_pert).
    A function of the DP estimate N̂ and public constants only, so it is post-processing.
    """
    return float(min(noise_to_signal * n_hat * epsilon_pert, MAX_GRID_CELLS))


def enumerate_grids(level_sizes: Sequence[Sequence[int]], theta: int, tau: float) -> np.ndarray:
    """Candidate grids, breadth-first by number of refined attributes (Alg. 2, ``Enumerate``).

    ``level_sizes[j]`` lists the node count per depth of attribute j (root first). Returns an
    int array (n_grids, n_attributes) of depths: first the all-root grid (the majority-vote
    grid, one cell), then every grid refining one attribute, then two, ... keeping only grids of
    at most ``tau`` cells, until ``theta`` grids are collected. The all-root grid is always in
    (so the pool is never empty) and counts toward Θ.

    Canonical generation: a grid is only extended with attributes after its last refined one,
    so each grid is produced once and Θ counts *distinct* grids (the paper's pseudo-code makes
    each m-attribute grid m times, spec §4.2). Pruning is safe because refining never shrinks a
    grid. Within a layer the order is lexicographic in the given (public) attribute order,
    which decides what survives the Θ cut. Uses no data: only the taxonomy shapes, Θ and τ.
    """
    sizes = tuple(tuple(int(s) for s in ls) for ls in level_sizes)
    # cells are integers, so "cells > tau" depends on tau only through floor(tau): the pool is
    # cached on that key (an explorer step re-enumerates the same pool) and handed out as a copy
    return _enumerate_grids(sizes, int(theta), math.floor(tau) if math.isfinite(tau) else tau).copy()


@functools.lru_cache(maxsize=16)   # a pool of Θ = 10,000 grids is about 1 MB
def _enumerate_grids(sizes: tuple[tuple[int, ...], ...], theta: int, tau: float) -> np.ndarray:
    d = len(sizes)
    root = (0,) * d
    pool = [root]
    layer = [(root, 1, -1)]  # (grid, number of cells, index of the last refined attribute)
    while layer and len(pool) < theta:
        nxt = []
        for grid, size, last in layer:
            for j in range(last + 1, d):
                for depth in range(1, len(sizes[j])):
                    cells = size * sizes[j][depth]
                    if cells > tau:
                        break  # deeper levels only have more nodes
                    new = grid[:j] + (depth,) + grid[j + 1:]
                    pool.append(new)
                    nxt.append((new, cells, j))
                    if len(pool) >= theta:
                        return np.array(pool, dtype=np.int64).reshape(len(pool), d)
        layer = nxt
    return np.array(pool, dtype=np.int64).reshape(len(pool), d)


def describe_grid(depths: Sequence[int], attributes: Sequence[str]) -> str:
    """Readable name of a grid, e.g. "education@2 × sex@1" (depths; "(root)" if none refined)."""
    parts = [f"{a}@{int(d)}" for a, d in zip(attributes, depths) if d > 0]
    return " × ".join(parts) if parts else "(root)"


# =========================================================================== scoring
class GridScorer:
    """Scores many grids on one table quickly, reusing work across grids.

    Built once per training table: the node code of every row for every attribute and depth
    (:class:`~dpexplore.histogram.LevelCodes`) and the class codes. A grid's key for each row
    is the class followed by its node codes in mixed radix, ``y·size + cell``; grids are scored
    in lexicographic order of their refined (attribute, depth) items, so a grid's key extends
    its prefix's key (kept on a stack) with a single multiply-add, then one ``np.bincount``
    gives all (class, cell) counts; grids differing only in the depth of their last refined
    attribute share that pass (coarser depths are column sums over the taxonomy). No Python
    loop runs over rows (spec §6).

    The quality per ε_pert is cached per grid, so re-scoring a pool after ε_sel or Θ moved is a
    dictionary look-up. Everything here reads the true data: scores are inputs to the
    exponential mechanism, not releases.

    ``weights`` (one per row, default 1) makes each row stand for that many records: built
    from a :class:`~dpexplore.counts.CountTable` (:meth:`from_table`) the rows are the occupied
    (leaf cell, class) entries weighted by their counts, every ``bincount`` becomes a weighted
    sum with the same integer result, and the cost depends on occupied cells, not records.
    """

    def __init__(self, codes: LevelCodes, y_codes: Any, n_classes: int, weights: Any = None):
        self.attributes = list(codes.attributes)
        self.level_sizes = [tuple(codes.level_sizes[a]) for a in self.attributes]
        # int64 codes: np.bincount works on intp, so int32 keys would be converted every call
        self._codes = [[codes.codes(a, d).astype(np.int64) for d in range(len(ls))]
                       for a, ls in zip(self.attributes, self.level_sizes)]
        self._taxonomies = [codes.schema[a].taxonomy for a in self.attributes]
        self._coarse: dict[tuple[int, int, int], np.ndarray] = {}
        self.y = np.asarray(y_codes, dtype=np.int64)
        if self.y.shape != (codes.n_rows,):
            raise ValueError("y_codes must have one class code per row")
        self.n_classes = int(n_classes)
        if weights is None:
            self._w = None
            self.n_rows = int(self.y.size)
            self._max_class = int(np.bincount(self.y, minlength=self.n_classes).max(initial=0))
        else:
            w = np.asarray(weights)
            if w.shape != self.y.shape or (w.size and (w.dtype.kind not in "iu" or w.min() < 0)):
                raise ValueError("weights must hold one non-negative integer count per row")
            self._w = w.astype(np.int64)
            self.n_rows = int(self._w.sum())   # records, not rows
            self._max_class = int(np.bincount(self.y, weights=self._w, minlength=self.n_classes).max(initial=0))
        self._cache: dict[float, dict[tuple, float]] = {}

    @classmethod
    def from_table(cls, table: Any) -> "GridScorer":
        """A scorer over a :class:`~dpexplore.counts.CountTable`: one weighted row per occupied
        cell (weight = count). Same qualities and counts as the records it was built from."""
        return cls(LevelCodes.from_table(table), table.class_codes, table.schema.n_classes, weights=table.counts)

    def _bincount(self, key: np.ndarray, minlength: int) -> np.ndarray:
        """Counts of records per key: plain, or weighted (float64 sums of integers below 2**53
        are exact, so the cast gives exactly the integer counts)."""
        if self._w is None:
            return np.bincount(key, minlength=minlength)
        return np.bincount(key, weights=self._w, minlength=minlength).astype(np.int64)  # exact integers

    def shape(self, depths: Sequence[int]) -> tuple[int, ...]:
        return tuple(ls[int(d)] for ls, d in zip(self.level_sizes, depths))

    def counts(self, depths: Sequence[int]) -> np.ndarray:
        """True counts (n_cells, n_classes) of one grid, empty cells included (non-private)."""
        key, size = self.y.copy(), 1
        for j, d in enumerate(depths):
            if d > 0:
                s = self.level_sizes[j][int(d)]
                key *= s
                key += self._codes[j][int(d)]
                size *= s
        return self._bincount(key, self.n_classes * size).reshape(self.n_classes, size).T

    def _tables(self, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
        # a gap never exceeds the largest class count, and from εG ≥ 800 on e^{-εG} is exactly 0.0
        # in float64, so G·a(G) = 0 and G/2 - G·a(G) = G/2 there (see _lookup): the table stops
        # at min(largest class + 1, ⌈800/ε⌉ + 2) entries whatever the number of records
        gap = np.arange(min(self._max_class + 1, math.ceil(800.0 / epsilon) + 2), dtype=float)
        psi = gap * _lose(gap, epsilon)          # G·a(G): expected loss of a cell with lead G
        return psi, 0.5 * gap - psi             # binary: quality = N/2 + Σ_c (G/2 - G·a(G))

    @staticmethod
    def _lookup(table: np.ndarray, gap: np.ndarray, half: bool) -> np.ndarray:
        """``table[gap]``, past the table's end the exact value it would hold: G/2 (``half``,
        the φ table) or 0.0 (the ψ table). Element for element the same floats as a full table."""
        n = table.shape[0]
        if not gap.size or int(gap.max()) < n:
            return table[gap]
        beyond = 0.5 * gap if half else np.zeros(gap.shape)
        return np.where(gap < n, table[np.minimum(gap, n - 1)], beyond)

    def score(self, grids: Any, epsilon_pert: float) -> np.ndarray:
        """Grid quality (Eq. 1 for two classes, Eq. 5 otherwise) of each row of ``grids``."""
        eps = check_epsilon(epsilon_pert, "epsilon_pert")
        grids = np.asarray(grids, dtype=np.int64).reshape(-1, len(self.attributes))
        cache = self._cache.setdefault(float(f"{eps:.12g}"), {})  # ε_pert from a split: ignore float dust
        keys = list(map(tuple, grids.tolist()))
        missing = [i for i, key in enumerate(keys) if key not in cache]
        if missing:
            # lexicographic order of depth vectors keeps grids sharing refined prefixes together
            self._score_into(np.unique(grids[missing], axis=0), eps, cache)
        return np.array([cache[key] for key in keys], dtype=float)

    def sizes(self, grids: Any) -> np.ndarray:
        """Number of cells of each grid (rows of depths)."""
        grids = np.asarray(grids, dtype=np.int64).reshape(-1, len(self.attributes))
        out = np.ones(len(grids), dtype=np.int64)
        for j, ls in enumerate(self.level_sizes):
            out *= np.asarray(ls, dtype=np.int64)[grids[:, j]]
        return out

    def _coarsen(self, j: int, deep: int, depth: int) -> np.ndarray:
        """0/1 matrix (nodes at ``deep``) × (nodes at ``depth``) of attribute j: node → ancestor.

        Taken from the public taxonomy (leaf → node maps), so summing the columns of a count
        table at ``deep`` gives exactly the counts at the coarser ``depth``.
        """
        key = (j, deep, depth)
        if key not in self._coarse:
            tax = self._taxonomies[j]
            ancestor = np.zeros(self.level_sizes[j][deep], dtype=np.int64)
            ancestor[tax.leaf_to_node(deep)] = tax.leaf_to_node(depth)
            onehot = np.zeros((self.level_sizes[j][deep], self.level_sizes[j][depth]))
            onehot[np.arange(ancestor.size), ancestor] = 1.0
            self._coarse[key] = onehot
        return self._coarse[key]

    def _quality(self, counts: np.ndarray, psi: np.ndarray, phi: np.ndarray) -> float:
        """Eq. 1 (k = 2) or Eq. 5 of a (n_classes, n_cells) table of integer counts."""
        k = self.n_classes
        if k == 2:
            gap = np.abs(counts[0] - counts[1])
            return 0.5 * self.n_rows + float(self._lookup(phi, gap, True).sum())  # Σ_c n_max - G·a(G), n_max = (n + G)/2
        top = np.partition(counts, k - 2, axis=0)
        return float(top[k - 1].sum() - self._lookup(psi, top[k - 1] - top[k - 2], False).sum())  # Eq. 5

    def _score_into(self, grids: np.ndarray, eps: float, cache: dict) -> None:
        """Exact counts of every grid, one ``bincount`` per (refined prefix, last attribute).

        Grids that differ only in the depth of their last refined attribute j share one pass
        over the rows: count once at the deepest of those depths, then sum columns (taxonomy
        ancestor map) for the coarser ones. Prefix keys are kept on a stack across groups.
        """
        psi, phi = self._tables(eps)
        k = self.n_classes
        groups: dict[tuple, dict[int, tuple]] = {}  # (prefix items, j) -> {depth: grid}
        for g in map(tuple, grids.tolist()):
            items = [(j, d) for j, d in enumerate(g) if d > 0]
            if not items:  # the all-root grid: one cell
                cache[g] = self._quality(self._bincount(self.y, k).reshape(k, 1), psi, phi)
                continue
            j, d = items[-1]
            groups.setdefault((tuple(items[:-1]), j), {})[d] = g
        stack: list[tuple[tuple[int, int], np.ndarray, int]] = []  # (item, key, size)
        for (prefix, j), members in sorted(groups.items()):
            common = 0
            while common < min(len(prefix), len(stack)) and stack[common][0] == prefix[common]:
                common += 1
            del stack[common:]
            for item in prefix[common:]:
                jj, dd = item
                key, size = (stack[-1][1], stack[-1][2]) if stack else (self.y, 1)
                s = self.level_sizes[jj][dd]
                new = key * s
                new += self._codes[jj][dd]
                stack.append((item, new, size * s))
            key, size = (stack[-1][1], stack[-1][2]) if stack else (self.y, 1)
            deep = max(members)
            s = self.level_sizes[j][deep]
            last = key * s
            last += self._codes[j][deep]
            counts = self._bincount(last, k * size * s).reshape(k * size, s)
            for d, g in members.items():
                if d == deep:
                    table = counts
                else:  # exact: integer counts summed in float64, far below 2**53
                    table = (counts @ self._coarsen(j, deep, d)).astype(np.int64)
                cache[g] = self._quality(table.reshape(k, -1), psi, phi)


# =========================================================================== the algorithm
@dataclass
class PrivPfCRun:
    """Everything one PrivPfC run produced (Alg. 2), for the estimator and the explorer.

    Released (DP): ``n_hat``, ``tau`` (post-processing), ``pool`` (post-processing), ``index`` /
    the chosen grid, ``noisy_counts``. Diagnostics that read the data without noise and are
    NOT part of the release: ``qualities`` and ``probabilities``.
    """

    epsilons: dict[str, float]
    n_hat: float
    tau: float
    pool: np.ndarray
    qualities: np.ndarray
    sensitivity: float
    probabilities: np.ndarray
    index: int
    noisy_counts: np.ndarray

    @property
    def grid(self) -> np.ndarray:
        return self.pool[self.index]


SENSITIVITY_MODES = ("exact", "constant")


def _check_theta(theta: Any) -> int:
    if isinstance(theta, bool) or not isinstance(theta, numbers.Real) or not float(theta).is_integer():
        raise TypeError(f"theta must be a whole number of candidate grids, got {theta!r}")
    if theta < 1:
        raise ValueError(f"theta must be at least 1 (the pool size cap Θ), got {theta!r}")
    return int(theta)


def _check_split(split: Any) -> np.ndarray:
    w = check_fraction_weights(split, "split")
    if w.size != 3:
        raise ValueError("split must hold three weights (record count, grid selection, histogram noise), "
                         f"got {split!r}")
    return w


def _check_sensitivity(sensitivity: Any) -> str:
    if sensitivity not in SENSITIVITY_MODES:
        raise ValueError(f"sensitivity must be 'exact' (Δ(ε_pert), Lemma 1) or 'constant' (1.1), got {sensitivity!r}")
    return sensitivity


def run_privpfc(scorer: GridScorer, *, epsilon: float, theta: int = 10_000,
                split: Sequence[float] = (0.03, 0.37, 0.60), noise_to_signal: float = 0.2,
                sensitivity: str = "exact", accountant: BudgetAccountant | None = None,
                random_state: RandomState = None, private_selection: bool = True,
                min_records_per_cell: float | None = None) -> PrivPfCRun:
    """PrivPfC (Alg. 2) on a prepared :class:`GridScorer`; every spend goes through ``accountant``.

    1. N̂ = N + Lap(1/ε_size)                          (line 3, label "record count")
    2. τ = r·N̂·ε_pert; pool = Enumerate(T, Θ, τ)      (lines 4-5, no data access)
    3. one exponential mechanism over the pool with quality gq(·; ε_pert), sensitivity Δ(ε_pert)
       or 1.1, budget ε_sel                            (line 6, label "grid selection")
    4. Laplace(1/ε_pert) on every (cell, class) count of the chosen grid, empty cells included
                                                       (line 7, label "histogram counts")
    ``private_selection=False`` replaces step 3 by the noise-free argmax (PrivPfC-SelNF, §7.4):
    NOT differentially private, spends no ε_sel, for diagnosing error sources only.
    ``min_records_per_cell`` (None = the paper) lowers τ to N̂ / min_records_per_cell at step 2
    (Alg. 2 line 4, before Enumerate): grids whose expected occupancy N̂/|g| is below it never
    enter the pool. A function of the DP N̂ and a public constant: post-processing, no ε.
    """
    epsilon = check_epsilon(epsilon)
    theta = _check_theta(theta)
    w = _check_split(split)
    ratio = check_positive(noise_to_signal, "noise_to_signal")
    if min_records_per_cell is not None:
        min_records_per_cell = check_positive(min_records_per_cell, "min_records_per_cell")
    mode = _check_sensitivity(sensitivity)
    acc = prepare_accountant(epsilon, accountant)
    rng = check_random_state(random_state)
    eps_size, eps_sel, eps_pert = acc.split(w, total=epsilon)

    n_hat = float(mechanisms.laplace(float(scorer.n_rows), epsilon=acc.spend(eps_size, "record count"),
                                     random_state=rng))
    tau = grid_threshold(n_hat, eps_pert, ratio)
    if min_records_per_cell is not None:   # dpexplore option (issue 12 item 15), not in the paper
        tau = min(tau, n_hat / min_records_per_cell)
    pool = enumerate_grids(scorer.level_sizes, theta, tau)
    qualities = scorer.score(pool, eps_pert)
    delta = quality_sensitivity(eps_pert) if mode == "exact" else CONSTANT_SENSITIVITY
    probabilities = mechanisms.exponential_probabilities(qualities, epsilon=eps_sel, sensitivity=delta)
    if private_selection:
        index = mechanisms.exponential(qualities, epsilon=acc.spend(eps_sel, "grid selection"),
                                       sensitivity=delta, random_state=rng)
    else:
        warnings.warn("noise-free grid selection (PrivPfC-SelNF): the output is NOT differentially "
                      "private (diagnostic only)", PrivacyLeakWarning, stacklevel=3)
        index = int(np.argmax(qualities))
    counts = scorer.counts(pool[index])
    noisy = noisy_counts(counts, epsilon=acc.spend(eps_pert, "histogram counts"), random_state=rng)
    return PrivPfCRun(epsilons={"record count": eps_size, "grid selection": eps_sel, "histogram counts": eps_pert},
                      n_hat=n_hat, tau=tau, pool=pool, qualities=qualities, sensitivity=delta,
                      probabilities=probabilities, index=int(index), noisy_counts=noisy)


class PrivPfC(Release, CompleteSynthetic, ClassifierMixin, BaseEstimator):
    """PrivPfC (Su et al. 2018): a DP noisy histogram on a privately chosen grid, and its classifier.

    Parameters
    ----------
    epsilon : float, default 1.0
        Total privacy budget (pure ε-DP, add/remove-one neighbours).
    theta : int, default 10_000
        Θ, the maximum number of candidate grids in the pool (not a cap on grid size).
    split : three weights, default (0.03, 0.37, 0.60)
        Shares of ε for the record count, the grid selection and the histogram noise (Alg. 2).
    random_state : int, Generator or None
    accountant : BudgetAccountant or None
        Where ε is spent (a fresh one holding ``epsilon`` if None).
    noise_to_signal : float, default 0.2 (keyword only)
        r in the cell cap τ = r·N̂·ε_pert (Eq. 6-7).
    sensitivity : "exact" or "constant" (keyword only)
        Δ of the quality in the exponential mechanism: Δ(ε_pert) from Lemma 1 (≈1.084-1.089 at
        usual budgets), or the paper's constant 1.1 (Alg. 2 line 13; the reference code's
        choice). Both are DP.
    min_records_per_cell : float or None, default None (keyword only)
        None is the paper. A number m drops from the candidate pool every grid with more cells
        than N̂/m (τ lowered to min(τ, N̂/m) at Alg. 2 line 4, before Enumerate): post-processing
        of the DP record count N̂, so no extra ε. On small tables the quality score (a training
        accuracy) favours grids of thousands of nearly empty cells as ε grows; ``expected_occupancy_``
        (N̂ / cells of the chosen grid) shows it.
    marginal_share : float in [0, 1), default 0.0 (keyword only)
        0 is the paper: attributes the grid leaves at the root carry no information and
        :meth:`synthetic` draws them uniformly over their declared domain. A share s > 0 runs
        PrivPfC on (1 - s)·ε and, after the grid is chosen, spends s·ε on Laplace one-way
        marginals of those root attributes over their taxonomy leaves (split evenly; ledger rows
        "marginal: <column>"), from which :meth:`synthetic` samples them. An extension beyond the
        paper. If the grid refines every attribute the share is not spent (``epsilon_spent_``).
    max_synthetic_rows : int, default 1_000_000 (keyword only)
        Public cap on the rows :meth:`synthetic` makes (its size is N̂ clamped to [1, cap]).

    ``fit(X, y, schema=None)``: the schema (taxonomies, class labels) must be public; without it
    it is read from the data with a :class:`PrivacyLeakWarning`. ``X`` may be a DataFrame or an
    array (columns ``x0, x1, …``, or the schema's predictors when the widths agree).

    Released (DP) fitted attributes: ``grid_`` ({predictor: depth}, depth 0 = root; ``levels_``
    gives the paper's numbering, depth + 1), ``counts_`` (noisy counts of shape (n_cells,
    n_classes), every cell of the grid, real-valued: the paper's floor at Alg. 2 line 22 and the
    reference code's rounding are post-processing, applied in :meth:`synthetic`), ``n_hat_``,
    ``tau_`` and the public ``quality_sensitivity_``, ``epsilon_split_``, ``ledger_``;
    ``classes_`` are the schema's classes in the type of y. Nothing computed from the raw data
    without noise is stored: the candidates' true qualities and selection probabilities (a
    NON-private teaching view) come from :meth:`diagnostics`, recomputed from data you pass in.
    ``expected_occupancy_`` is N̂ divided by the chosen grid's number of cells (released);
    ``column_sources_`` says how each column of :meth:`synthetic` is produced ("modelled",
    "marginal" or "uniform", with its ε) and ``marginals_`` holds the noisy marginals.
    """

    method = "PrivPfC"
    _private_selection = True

    def __init__(self, epsilon: float = 1.0, theta: int = 10_000,
                 split: Sequence[float] = (0.03, 0.37, 0.60), random_state: RandomState = None,
                 accountant: BudgetAccountant | None = None, *, noise_to_signal: float = 0.2,
                 sensitivity: str = "exact", min_records_per_cell: float | None = None,
                 marginal_share: float = 0.0, max_synthetic_rows: int = DEFAULT_MAX_SYNTHETIC_ROWS):
        self.epsilon = epsilon
        self.theta = theta
        self.split = split
        self.random_state = random_state
        self.accountant = accountant
        self.noise_to_signal = noise_to_signal
        self.sensitivity = sensitivity
        self.min_records_per_cell = min_records_per_cell
        self.marginal_share = marginal_share
        self.max_synthetic_rows = max_synthetic_rows

    # ------------------------------------------------------------------ fit
    def _check_params(self) -> None:
        check_epsilon(self.epsilon)
        _check_theta(self.theta)
        _check_split(self.split)
        check_positive(self.noise_to_signal, "noise_to_signal")
        _check_sensitivity(self.sensitivity)
        if self.min_records_per_cell is not None:
            check_positive(self.min_records_per_cell, "min_records_per_cell")
        self._check_complete_params()
        check_random_state(self.random_state)

    def fit(self, X: Any, y: Any = None, schema: Schema | None = None) -> "PrivPfC":
        """Run PrivPfC on the training table (spends ``epsilon``).

        ``fit(X, y, schema)`` for records in memory, or ``fit(source)`` for a
        :class:`dpexplore.sources.Source` (pandas, DuckDB, Spark; the target and schema come from
        it; ``classes_`` are then the schema's strings). Either way the run works on the
        :class:`~dpexplore.counts.CountTable` (occupied cells weighted by their counts): the same
        table and seed give the same release from any engine, and after the table is built the
        cost does not depend on the number of records.
        """
        self._check_params()
        got = source_input(X, y, schema, estimator=self)
        if got is None:
            X, y, schema = check_release_input(X, y, schema, estimator=self)
            table = CountTable.from_codes(schema, schema.leaf_codes(X), schema.encode_target(y))
            classes = class_values(schema.classes, y)
            filler = self._prepare_filler(schema, X=X)
        else:
            table, schema = got
            classes = None
            filler = self._prepare_filler(schema, table=table)
        accountant = prepare_accountant(self.epsilon, self.accountant)
        self._fit_scorer(GridScorer.from_table(table), schema, accountant, classes=classes, filler=filler)
        return self

    def _fit_scorer(self, scorer: GridScorer, schema: Schema, accountant: BudgetAccountant,
                    classes: Any = None, filler: Any = None) -> None:
        self._open_ledger(accountant)
        rng = check_random_state(self.random_state)
        run = run_privpfc(scorer, epsilon=self._model_epsilon(), theta=self.theta, split=self.split,
                          noise_to_signal=self.noise_to_signal, sensitivity=self.sensitivity,
                          accountant=accountant, random_state=rng,
                          private_selection=self._private_selection,
                          min_records_per_cell=self.min_records_per_cell)
        self.schema_ = schema
        # after the grid is chosen (a DP output): marginals of the root attributes (extension)
        self._fill_marginals([a for a, d in zip(scorer.attributes, run.grid) if d > 0], accountant, rng, filler)
        self._close_ledger()
        # the run's qualities/probabilities read the data without noise: not kept (diagnostics())
        # predictions come back in the type of the caller's labels (sklearn: classes_ as in y)
        self.classes_ = np.asarray(schema.classes, dtype=object) if classes is None else np.asarray(classes)
        self.epsilon_split_ = dict(run.epsilons)
        self.n_hat_ = run.n_hat
        self.tau_ = run.tau
        self.quality_sensitivity_ = run.sensitivity
        self.grid_ = {a: int(d) for a, d in zip(scorer.attributes, run.grid)}
        self.counts_ = run.noisy_counts
        self.expected_occupancy_ = max(run.n_hat, 0.0) / float(run.noisy_counts.shape[0])
        self.classifier_ = HistogramClassifier.from_counts(self.counts_, self.grid_, schema, classes=self.classes_)

    # ------------------------------------------------------------------ release
    def _check_fitted(self) -> None:
        if not hasattr(self, "counts_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet: call fit(X, y)")

    def diagnostics(self, X: Any, y: Any) -> pd.DataFrame:
        """NON-PRIVATE teaching view: the candidate pool of this release with each grid's TRUE
        quality and selection probability, recomputed from the private data passed in.

        Columns as :func:`candidates_table` (grid, depths, size, n_refined, quality,
        probability, chosen). The pool itself is public (it follows from the released N̂ via
        τ); quality and probability read ``X``/``y`` without noise: never publish them.
        """
        self._check_fitted()
        X = check_release_features(self, X, self.schema_.predictors)
        self.schema_.validate(X, y)
        scorer = GridScorer(LevelCodes(X, self.schema_), self.schema_.encode_target(y), self.schema_.n_classes)
        pool = enumerate_grids(scorer.level_sizes, _check_theta(self.theta), self.tau_)
        eps_pert, eps_sel = self.epsilon_split_["histogram counts"], self.epsilon_split_["grid selection"]
        qualities = scorer.score(pool, eps_pert)
        probabilities = mechanisms.exponential_probabilities(qualities, epsilon=eps_sel,
                                                             sensitivity=self.quality_sensitivity_)
        chosen = np.flatnonzero((pool == np.asarray(list(self.grid_.values()))).all(axis=1))
        run = PrivPfCRun(epsilons=dict(self.epsilon_split_), n_hat=self.n_hat_, tau=self.tau_, pool=pool,
                         qualities=qualities, sensitivity=self.quality_sensitivity_,
                         probabilities=probabilities, index=int(chosen[0]) if chosen.size else -1,
                         noisy_counts=self.counts_)
        return candidates_table(run, scorer)

    @property
    def levels_(self) -> dict[str, int]:
        """The chosen grid in the paper's numbering (level 1 = root)."""
        self._check_fitted()
        return {a: d + 1 for a, d in self.grid_.items()}

    def synthetic(self, random_state: RandomState = None, values: str = "generalized",
                  weighted: bool = False, max_rows: int | None = None, n: int | None = None) -> pd.DataFrame:
        """Synthetic records from the noisy histogram, every declared column in schema order.
        Post-processing: no budget.

        Size (a public rule): ``n`` if given, else the DP record count N̂ (``n_hat_``), clamped to
        [1, ``max_synthetic_rows``] (``max_rows`` overrides that cap). The rows of each (cell,
        class) are its noisy count clipped at 0, rescaled to that size (largest-remainder
        rounding; at the paper's scale this is round(max(0, count)) copies, Alg. 2 line 22).
        Refined attributes get node labels ("generalized", as the reference code) or values
        drawn inside the node ("sampled"; int64 for integer attributes, float64 for others); attributes left at the root
        are drawn from their noisy marginal (``marginal_share`` > 0) or uniformly over the
        declared domain (the paper; "generalized": the root label), see ``column_sources_``.

        ``weighted=True`` returns each generalised (cell, class) once with a ``weight`` column
        holding its rounded copy count instead (root attributes keep the root label). The target
        column holds ``classes_`` (the labels in the type of the training y).
        """
        self._check_fitted()
        if not weighted:
            if values not in ("generalized", "sampled"):
                raise ValueError(f"values must be 'generalized' or 'sampled', got {values!r}")
            size = synthetic_size(self.n_hat_, n, self.max_synthetic_rows, max_rows)
            rng = check_random_state(random_state)
            reps = apportion(self.counts_, size).reshape(self.counts_.shape)
            frame = synthetic_from_counts(reps, self.grid_, self.schema_, values=values,
                                          rounding="round", random_state=rng, max_rows=size)
            codes = self.schema_.encode_target(frame[self.schema_.target])
            frame[self.schema_.target] = self.classes_[codes]
            return self._complete(frame, rng, generalized=values == "generalized")
        if values != "generalized":
            raise ValueError("weighted=True only supports values='generalized'")
        reps = np.rint(np.clip(self.counts_, 0, None)).astype(np.int64).ravel()
        keep = np.flatnonzero(reps > 0)
        cells, labels = np.divmod(keep, len(self.classes_))
        frame = self.generalize_cells(cells)
        frame[self.schema_.target] = self.classes_[labels]  # as the unweighted table
        frame["weight"] = reps[keep]
        return frame

    def generalize_cells(self, cells: Any) -> pd.DataFrame:
        """Node labels (every predictor; root label when unrefined) of released cell indices."""
        self._check_fitted()
        return cell_labels(cells, self.grid_, self.schema_)

    def noisy_histogram(self) -> pd.DataFrame:
        """The release as a tidy table: node labels of the refined attributes, one column per class."""
        self._check_fitted()
        used = [a for a, d in self.grid_.items() if d > 0]
        frame = self.generalize_cells(np.arange(self.counts_.shape[0]))[used]
        for i, c in enumerate(self.schema_.classes):
            frame[c] = self.counts_[:, i]
        return frame

    def generalize(self, X: pd.DataFrame) -> pd.DataFrame:
        """``X`` with every value replaced by its node label on the released grid (for models
        trained on :meth:`synthetic`)."""
        self._check_fitted()
        return generalize(X, self.grid_, self.schema_)

    # ------------------------------------------------------------------ classifier
    def predict(self, X: Any) -> np.ndarray:
        """Histogram classifier: the class with the largest noisy count in each row's cell."""
        self._check_fitted()
        return self.classifier_.predict(check_release_features(self, X, self.schema_.predictors))

    def predict_proba(self, X: Any) -> np.ndarray:
        """Noisy counts clipped at 0 and normalised per cell (columns follow ``classes_``)."""
        self._check_fitted()
        return self.classifier_.predict_proba(check_release_features(self, X, self.schema_.predictors))


class PrivPfCSelNF(PrivPfC):
    """PrivPfC-SelNF: NOT DIFFERENTIALLY PRIVATE. A diagnostic (paper §7.4, Fig. 10).

    The grid is the noise-free argmax of the quality; the record count and the histogram are
    noisy as in PrivPfC. Comparing it with PrivPfC separates the error of private selection
    from the error of the count noise. Its ledger does not cover the selection, which reads the
    data without noise; a :class:`PrivacyLeakWarning` says so on every fit.
    """

    method = "PrivPfC-SelNF (non-private diagnostic)"
    _private_selection = False



# =========================================================================== tidy data for plots
def sensitivity_curve(epsilons: Any) -> pd.DataFrame:
    """Δ_gq(ε) of Lemma 1 for each ε, next to the paper's constant 1.1 (the Fig. 2 analogue)."""
    eps = np.asarray(epsilons, dtype=float).ravel()
    return pd.DataFrame({"epsilon": eps, "sensitivity": [quality_sensitivity(e) for e in eps],
                         "constant": CONSTANT_SENSITIVITY})


def win_probability_curve(gaps: Any, epsilons: Sequence[float]) -> pd.DataFrame:
    """P[the leading class stays ahead after noise] against the count lead, per ε (Eq. 10)."""
    gaps = np.asarray(gaps, dtype=float).ravel()
    return pd.concat([pd.DataFrame({"gap": gaps, "epsilon": float(e), "probability": win_probability(gaps, e)})
                      for e in epsilons], ignore_index=True)


def grid_levels(grid: Mapping[str, int], schema: Schema) -> pd.DataFrame:
    """One row per (attribute, depth): node count and whether the grid uses that depth.

    ``level`` is the paper's numbering (depth + 1).
    """
    rows = []
    for a in schema.predictors:
        tax = schema[a].taxonomy
        for depth, size in enumerate(tax.level_sizes):
            rows.append({"attribute": a, "depth": depth, "level": depth + 1, "nodes": size,
                         "chosen": grid.get(a, 0) == depth, "refined": grid.get(a, 0) > 0})
    return pd.DataFrame(rows)


def cell_labels(cells: Any, grid: Mapping[str, int], schema: Schema) -> pd.DataFrame:
    """Node labels (every predictor; the root label when unrefined) of cell indices of ``grid``.

    Cells are numbered in mixed radix over the schema's predictors (C order), as
    :class:`~dpexplore.histogram.LevelCodes` and the released ``counts_`` number them.
    """
    names = schema.predictors
    taxes = [schema[a].taxonomy for a in names]
    shape = tuple(t.level_sizes[int(grid.get(a, 0))] for a, t in zip(names, taxes))
    nodes = np.unravel_index(np.asarray(cells, dtype=np.int64), shape)
    return pd.DataFrame({a: np.asarray(t.labels(int(grid.get(a, 0))), dtype=object)[c]
                         for a, t, c in zip(names, taxes, nodes)}, columns=names)


def compare_counts(true: Any, noisy: Any, grid: Mapping[str, int], schema: Schema,
                   n_cells: int = 6, pick: str = "largest") -> pd.DataFrame:
    """True vs noisy counts of ``n_cells`` cells of a released grid (tidy).

    NON-PRIVATE DIAGNOSTIC: ``true`` holds the raw counts (n_cells, n_classes) of the grid.
    The cells shown are picked from the noisy totals (the release), not from the true ones:
    ``pick="largest"`` takes the largest, ``"spread"`` takes cells at evenly spaced ranks from
    the largest to the smallest (so small and empty cells, where the noise shows, appear too).
    Columns: cell (node labels of the refined attributes), class, kind ("true"/"noisy"), count.
    """
    true, noisy = np.asarray(true, dtype=float), np.asarray(noisy, dtype=float)
    if true.shape != noisy.shape:
        raise ValueError(f"true and noisy counts differ in shape: {true.shape} vs {noisy.shape}")
    if pick not in ("largest", "spread"):
        raise ValueError(f"pick must be 'largest' or 'spread', got {pick!r}")
    ranked = np.argsort(-noisy.sum(axis=1), kind="stable")
    if pick == "largest" or len(ranked) <= n_cells:
        order = ranked[:n_cells]
    else:
        order = ranked[np.unique(np.linspace(0, len(ranked) - 1, n_cells).round().astype(int))]
    labels = cell_labels(order, grid, schema)
    used = [a for a in schema.predictors if grid.get(a, 0) > 0]
    names = labels[used].astype(str).agg(" · ".join, axis=1) if used else pd.Series(["(all records)"] * len(order))
    rows = []
    for name, cell in zip(names, order):
        for i, c in enumerate(schema.classes):
            rows.append({"cell": name, "class": c, "kind": "true", "count": float(true[cell, i])})
            rows.append({"cell": name, "class": c, "kind": "noisy", "count": float(noisy[cell, i])})
    return pd.DataFrame(rows)


def counts_comparison(model: "PrivPfC", X: pd.DataFrame, y: Any, n_cells: int = 6,
                      pick: str = "largest") -> pd.DataFrame:
    """:func:`compare_counts` for a fitted PrivPfC and its training data (NON-PRIVATE diagnostic).

    The true counts are recounted with the histogram classifier's generalisation, which is the
    one used for the release and for test records.
    """
    model._check_fitted()
    true = HistogramClassifier(schema=model.schema_, grid=model.grid_).fit(X, y).counts_
    return compare_counts(true, model.counts_, model.grid_, model.schema_, n_cells=n_cells, pick=pick)


def candidates_table(run: PrivPfCRun, scorer: GridScorer) -> pd.DataFrame:
    """The pool of a run as a table: grid, depths, size, n_refined, quality, probability, chosen.

    quality and probability read the data without noise: diagnostics, not part of the release.
    """
    pool = run.pool
    sizes = scorer.sizes(pool)
    frame = pd.DataFrame({
        "grid": [describe_grid(g, scorer.attributes) for g in pool],
        "depths": [tuple(int(v) for v in g) for g in pool],
        "size": sizes,
        "n_refined": (pool > 0).sum(axis=1),
        "quality": run.qualities,
        "probability": run.probabilities,
    })
    frame["chosen"] = np.arange(len(pool)) == run.index
    return frame
