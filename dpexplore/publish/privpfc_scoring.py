"""What PrivPfC's exponential mechanism scores: candidate grids and their quality.

Su, Cao, Li & Lyu, "PrivPfC: differentially private data publication for classification",
The VLDB Journal 27(2):201-223, 2018. The grid quality gq (§4: Eq. 1 for two classes, the
top-two approximation Eq. 5 otherwise) and its sensitivity (Lemma 1 and 2); the candidate pool
(§4.4, Alg. 2 ``Enumerate``); and two scorers that evaluate gq on many grids of one table:

* :class:`GridScorer` counts each grid once per ε_pert, sharing work between grids with a
  common refined prefix (what :class:`~dpexplore.publish.privpfc.PrivPfC` uses);
* :class:`GapScorer` keeps, per grid, what its quality needs at *any* ε_pert (the sum of the
  cells' largest counts and the histogram of the cells' leads), so rescoring a pool at a new
  ε_pert is one sparse product (the PrivPfC explorer moves ε with a slider).

Everything here reads the true data: qualities are inputs to the exponential mechanism (Alg. 2
line 6), never releases. :mod:`dpexplore.publish.privpfc` runs the algorithm on these.
"""
from __future__ import annotations

import functools
import math
from typing import Any, Sequence

import numpy as np
import scipy.sparse as sp

from .. import mechanisms
from .._validation import check_epsilon
from ..histogram import LevelCodes

__all__ = ["CONSTANT_SENSITIVITY", "win_probability", "cell_quality", "grid_quality", "exact_cell_quality",
           "quality_sensitivity", "enumerate_grids", "describe_grid", "GridScorer", "GapScorer"]

CONSTANT_SENSITIVITY = 1.1
"""The paper's bound on the quality sensitivity (Lemma 1 and 2; Alg. 2 line 13)."""


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
    2, §4.3). The ε here is ε_pert, which is fixed before selection, so using Δ(ε_pert)
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


# =========================================================================== candidates (§4.4)
def enumerate_grids(level_sizes: Sequence[Sequence[int]], theta: int, tau: float) -> np.ndarray:
    """Candidate grids, breadth-first by number of refined attributes (Alg. 2, ``Enumerate``).

    ``level_sizes[j]`` lists the node count per depth of attribute j (root first). Returns an
    int array (n_grids, n_attributes) of depths: first the all-root grid (the majority-vote
    grid, one cell), then every grid refining one attribute, then two, ... keeping only grids of
    at most ``tau`` cells, until ``theta`` grids are collected. The all-root grid is always in
    (so the pool is never empty) and counts toward Θ.

    Canonical generation: a grid is only extended with attributes after its last refined one,
    so each grid is produced once and Θ counts *distinct* grids (the paper's pseudo-code makes
    each m-attribute grid m times). Pruning is safe because refining never shrinks a
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
    loop runs over rows.

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


class GapScorer(GridScorer):
    """A :class:`GridScorer` whose qualities cost one sparse product per ε_pert.

    A grid's quality (Eq. 1, Eq. 5) is Σ_cells n⁽¹⁾ − Σ_cells G·a(G; ε_pert), with G = n⁽¹⁾ − n⁽²⁾
    the lead of a cell's largest count over its second (empty cells add 0). Only the second sum
    depends on ε_pert, and only through the multiset of leads. So each grid is counted once (the
    true counts: a NON-PRIVATE input of the exponential mechanism, as in the parent class) and
    stored as its Σ n⁽¹⁾ and a sparse row "number of cells with lead G"; scoring any pool at any
    ε_pert is then ``top − M @ ψ`` with ψ(G) = G·(1 − P[win](G)). Same qualities as
    :class:`GridScorer` up to float rounding (summation order). ``_cache`` maps each ε_pert seen
    to the qualities of the stored grids (extended when grids are added).
    """

    def __init__(self, codes: LevelCodes, y_codes: Any, n_classes: int, weights: Any = None):
        super().__init__(codes, y_codes, n_classes, weights)
        self._radix = np.array([8 ** j for j in range(len(self.attributes))], dtype=np.int64)
        if any(len(ls) > 8 for ls in self.level_sizes) or 8 ** len(self.attributes) > 2 ** 62:
            raise ValueError("GapScorer keys grids in base 8: at most 8 taxonomy levels and 20 attributes")
        self._all_keys = np.zeros(0, dtype=np.int64)
        self._sorted_keys = np.zeros(0, dtype=np.int64)
        self._sorted_rows = np.zeros(0, dtype=np.int64)
        self._top: list[float] = []
        self._rows: list[tuple[np.ndarray, np.ndarray]] = []   # (leads, number of cells) per grid
        self._matrix: sp.csr_matrix | None = None
        self._leads = np.zeros(0, dtype=np.int64)   # the lead of each matrix column, in order of first use
        self.names: list[str] = []

    def _quality(self, counts: np.ndarray, psi: np.ndarray, phi: np.ndarray) -> tuple:
        """Hook of :meth:`GridScorer._score_into`: instead of the quality at one ε_pert, keep
        what it needs at every ε_pert: Σ n⁽¹⁾ and the leads' histogram of a (classes, cells) table."""
        counts = counts[:, counts.sum(axis=0) > 0]
        if not counts.shape[1]:
            return 0.0, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        top = np.partition(counts, self.n_classes - 2, axis=0)[-2:]
        leads, cells = np.unique(top[1] - top[0], return_counts=True)
        return float(top[1].sum()), leads.astype(np.int64), cells

    def _keys(self, grids: np.ndarray) -> np.ndarray:
        return grids @ self._radix     # one int64 per grid (mixed radix over the depths)

    def _lookup_rows(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if not len(self._sorted_keys):
            return np.zeros(len(keys), dtype=np.int64), np.zeros(len(keys), dtype=bool)
        pos = np.minimum(np.searchsorted(self._sorted_keys, keys), len(self._sorted_keys) - 1)
        return self._sorted_rows[pos], self._sorted_keys[pos] == keys

    def add(self, grids: Any) -> np.ndarray:
        """Count every grid not seen yet (prefix-sharing passes of the parent); return their store rows."""
        grids = np.asarray(grids, dtype=np.int64).reshape(-1, len(self.attributes))
        keys = self._keys(grids)
        rows, found = self._lookup_rows(keys)
        if not found.all():
            new = np.unique(grids[~found], axis=0)
            stats: dict[tuple, tuple] = {}
            self._score_into(new, 1.0, stats)
            for key in map(tuple, new.tolist()):
                top, leads, cells = stats[key]
                self._top.append(top)
                self._rows.append((leads, cells))
                self.names.append(describe_grid(key, self.attributes))
            self._all_keys = np.concatenate([self._all_keys, self._keys(new)])
            order = np.argsort(self._all_keys, kind="stable")
            self._sorted_keys, self._sorted_rows = self._all_keys[order], order
            rows, found = self._lookup_rows(keys)
        return rows

    def _qualities(self, eps: float) -> np.ndarray:
        """Qualities of every stored grid at ``eps`` (cached; grids stored later are appended)."""
        key = float(f"{eps:.12g}")   # ε_pert from a split: ignore float dust
        done = self._cache.get(key)
        if done is None or len(done) < len(self._top):
            have = 0 if self._matrix is None else self._matrix.shape[0]
            if have < len(self._rows):   # stack only the rows of the grids counted since
                rows = self._rows[have:]
                indptr = np.concatenate([[0], np.cumsum([len(leads) for leads, _ in rows])])
                cols = self._lead_columns(np.concatenate([leads for leads, _ in rows]))
                vals = np.concatenate([cells for _, cells in rows]).astype(float)
                width = len(self._leads)
                block = sp.csr_matrix((vals, cols, indptr), shape=(len(rows), width))
                if self._matrix is not None:
                    old = self._matrix
                    old.resize((old.shape[0], width))
                    block = sp.vstack([old, block], format="csr")
                self._matrix = block
                self._top_array = np.asarray(self._top)
            start = 0 if done is None else len(done)
            lead = self._leads.astype(float)
            psi = lead * (1.0 - win_probability(lead, eps))     # G·a(G): expected loss of a cell (Eq. 10)
            block = self._matrix if start == 0 else self._matrix[start:]
            new = self._top_array[start:] - block @ psi
            self._cache[key] = new if done is None else np.concatenate([done, new])
        return self._cache[key]

    def _lead_columns(self, leads: np.ndarray) -> np.ndarray:
        """The matrix column of each lead, new leads appended: one column per distinct lead seen,
        so ψ is evaluated on those only (a lead can be as large as the largest class count). A
        row's entries keep their ascending-lead order, which fixes the summation order of M @ ψ."""
        self._leads = np.concatenate([self._leads, np.setdiff1d(leads, self._leads)])
        order = np.argsort(self._leads, kind="stable")
        return order[np.searchsorted(self._leads[order], leads)]

    def score(self, grids: Any, epsilon_pert: float) -> np.ndarray:
        """Grid quality (Eq. 1 for two classes, Eq. 5 otherwise) of each row of ``grids``."""
        rows = self.add(grids)
        return self._qualities(float(epsilon_pert))[rows]

    def warm(self, theta: int, taus: Sequence[float]) -> None:
        """Count in advance the pools of Θ = ``theta`` grids at each cell cap in ``taus``."""
        for tau in sorted(set(math.floor(t) for t in taus)):
            self.add(enumerate_grids(self.level_sizes, theta, tau))
