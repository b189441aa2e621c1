"""DiffMulti: differentially private multidimensional generalization (Al-Hussaeni et al.).

The table is cut top-down into hyper-rectangular regions (a partition tree, paper §4.1, Alg. 1):
every partition P with a local specialization budget h' > 0 picks, with the exponential
mechanism, one attribute to specialize *inside P only* (a taxonomy node → its children, or a
numeric interval → two halves at a private split point), hands its remaining h' − 1 units to the
children in proportion to their noisy sizes (the "fair", dense-region heuristic, Eq. 10), and the
children repeat. The leaves are published with a Laplace count per class (Phase 2).

Budget (§4.4): ε/2 for partitioning with ε' = ε / (2(|A_num| + 3|g|)): per partition one split
point for its new numeric interval (the root: one per numeric attribute), one attribute choice and
one noisy child-size vector, each ε'; siblings are disjoint (parallel composition), so the cost is
that of the longest root-to-leaf path, capped at |g| splits. ε/2 (plus whatever the realized tree
did not use) for the (leaf × class) counts, which have sensitivity 1 together.

This module also holds what DiffGen (:mod:`dpexplore.publish.diffgen`) shares with DiffMulti:
the split scores, the private numeric split point, the taxonomy navigation and the release of
generalized regions (``partitions_``, ``synthetic``, ``predict``).
"""
from __future__ import annotations

import inspect
import numbers
import sys
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError

from .. import mechanisms
from .._validation import check_epsilon, check_random_state
from ..budget import BudgetAccountant
from ..domain import Schema, class_values
from .base import (DEFAULT_MAX_SYNTHETIC_ROWS, CompleteSynthetic, Release, apportion, check_release_features,
                   check_release_input, prepare_accountant, source_input, synthetic_size)

if TYPE_CHECKING:
    from ..counts import CountTable

__all__ = ["DiffMulti", "ReleaseClassifier", "c45_tree", "category_order", "split_utilities", "private_split_point", "fair_allocation",
           "score_sensitivity", "SCORES", "MAX_SYNTHETIC_ROWS", "MAX_TREE_DEPTH"]

SCORES = ("max", "ncp", "dm")
MAX_TREE_DEPTH = 2_000            # public cap on min(|g|, h): root-to-leaf paths are grown recursively
MAX_SYNTHETIC_ROWS = 10_000_000   # public cap on the rows synthetic() materialises (tiny ε → huge counts)


# =========================================================================== scores (§3)
def child_scores(counts: np.ndarray, score: str, ncp: np.ndarray | None = None) -> np.ndarray:
    """Score of splitting into children with class counts ``counts`` (..., n_children, n_classes).

    Higher is better. Max (§3.3): Σ_c max_cls |D_c^cls|. DM (§3.1): −Σ_c |D_c|². NCP (§3.2):
    −Σ_c |D_c|·NCP(c) with ``ncp`` the NCP of each child. DM and NCP are "inverted" by negation,
    which keeps their sensitivity (spec §17.7).
    """
    counts = np.asarray(counts, dtype=float)
    if score == "max":
        return counts.max(axis=-1).sum(axis=-1)
    sizes = counts.sum(axis=-1)
    if score == "dm":
        return -(sizes ** 2).sum(axis=-1)
    return -(sizes * ncp).sum(axis=-1)


def score_sensitivity(score: str, n_max: int | None = None) -> float:
    """Δu: 1 for Max and NCP; 2·N_max + 1 for DM with N_max a *public* bound on |D| (§3.1).

    The paper's ΔDM = 2|D| + 1 reads the private |D|; under add/remove neighbours that is not
    allowed, so the DP-safe reading (spec §3.1 trap) replaces |D| by a public upper bound.
    """
    if score in ("max", "ncp"):
        return 1.0
    if n_max is None:
        raise ValueError("utility='dm' needs n_max, a public upper bound on the number of records "
                         "(its sensitivity 2·|D|+1 must not read the private |D|)")
    return 2.0 * n_max + 1.0


# =========================================================================== numeric splits (§4.3)
def _top(a: float, b: float, integer: bool) -> float:
    """Largest split point of the region [a, b): split points s send x < s left, x ≥ s right.

    Integer regions hold a..b-1 and split at s ∈ {a+1, ..., b-1}; continuous ones at s ∈ [a, b).
    """
    return b - 1.0 if integer else b


def splittable(a: float, b: float, integer: bool, min_width: float,
               lattice: tuple[float, float] | None = None) -> bool:
    """Data-independent leaf rule for numeric regions (VALID, Def. 4.1).

    Integer: at least two integers in the region. Continuous: wider than ``min_width`` (a public
    granularity). Both: at least one split point of the public ``lattice`` (see
    :func:`private_split_point`) inside the region. Never "all records share one value": that
    would read the data.
    """
    if not ((b - a >= 2) if integer else (b - a > min_width)):
        return False
    resolution, origin = _split_lattice(a, b, integer, lattice)
    if (b - 1.0 if integer else b) - a > resolution * (1 + 2.0 ** -8):
        return True       # wider than one step: lattice points are spaced within 2**-9 of it
    ends = mechanisms.lattice_index(_split_pieces(np.array([a, b], dtype=float), b, integer),
                                    resolution=resolution, origin=origin)
    return bool(ends[1] > ends[0])


def _split_lattice(a: float, b: float, integer: bool, lattice: tuple[float, float] | None) -> tuple[float, float]:
    """(resolution, origin) of the split points: the caller's public lattice (an attribute's
    declared one), else the integers (integer regions) or the default lattice of [a, b]."""
    if lattice is not None:
        return lattice
    return (1.0, 0.0) if integer else (mechanisms.lattice_resolution(a, b), float(a))


def _split_pieces(edges: np.ndarray, b: float, integer: bool) -> np.ndarray:
    """Piece k of the split points holds the s with edges[k] < s ≤ edges[k+1] (x < s goes left,
    so exactly the records ≤ edges[k] go left), up to the largest split point: b − 1 in an
    integer region, the float below b in a continuous one. As half-open [p_k, p_{k+1}) of floats
    (p = the next float up), the form :func:`dpexplore.mechanisms.exponential_interval` takes."""
    top = b - 1.0 if integer else float(np.nextafter(b, -np.inf))
    ends = np.minimum(np.asarray(edges, dtype=float), top)
    ends[-1] = top
    return np.nextafter(ends, np.inf)


def split_utilities(values: np.ndarray, y: np.ndarray, n_classes: int, a: float, b: float, *,
                    integer: bool, weights: np.ndarray | None = None):
    """Sub-intervals of the split point and the utility of each (Observation 4.1, Eq. 12).

    The distinct values x_1 < … < x_m of the region cut the split-point range into m + 1 pieces;
    inside one piece every split point sends the same records left (x < s) and right, so the
    score is constant there. Sorted once, prefix class counts give every piece's left/right
    counts. Returns ``(edges, left_counts, total)``: ``edges`` (m + 2,) are the piece boundaries
    (integer regions: piece k holds the split points {edges[k] + 1, …, edges[k+1]}), ``left``
    (m + 1, n_classes) the class counts sent left, ``total`` the region's class counts.
    ``weights``: one count per value (weighted records, e.g. a CountTable's cells); default 1.
    """
    v = np.asarray(values, dtype=float)
    yk = np.asarray(y, dtype=np.int64)
    order = np.argsort(v, kind="stable")
    vs, ys = v[order], yk[order]
    n = vs.size
    onehot = np.zeros((n + 1, n_classes))
    onehot[np.arange(1, n + 1), ys] = 1.0 if weights is None else np.asarray(weights, dtype=float)[order]
    cum = np.cumsum(onehot, axis=0)                       # cum[i] = class counts of the i smallest
    if n:
        ends = np.flatnonzero(np.r_[np.diff(vs) > 0, True])   # last position of each distinct value
        distinct = vs[ends]
        left = np.vstack([np.zeros((1, n_classes)), cum[ends + 1]])
    else:
        distinct = np.empty(0)
        left = np.zeros((1, n_classes))
    top = _top(a, b, integer)
    distinct = np.clip(distinct, a, top)
    edges = np.r_[a, distinct, top]
    return edges, left, cum[-1]


def _piece_utilities(left: np.ndarray, total: np.ndarray, score: str) -> np.ndarray:
    """Max or DM utility of each split piece from its left/right class counts."""
    return child_scores(np.stack([left, total[None, :] - left], axis=1), score)


def _log_integral_exp(B: np.ndarray, length: np.ndarray) -> np.ndarray:
    """log ∫_0^length exp(B·t) dt per entry, stable for any sign of B (−inf when length is 0)."""
    B, L = np.broadcast_arrays(np.atleast_1d(np.asarray(B, dtype=float)),
                               np.atleast_1d(np.asarray(length, dtype=float)))
    out = np.full(B.shape, -np.inf)
    x = B * L
    small = (np.abs(x) < 1e-10) & (L > 0)
    pos = (x >= 1e-10) & (L > 0)
    neg = (x <= -1e-10) & (L > 0)
    out[small] = np.log(L[small])
    out[pos] = x[pos] + np.log(-np.expm1(-x[pos])) - np.log(B[pos])
    out[neg] = np.log(-np.expm1(x[neg])) - np.log(-B[neg])
    return out


def _sample_truncated_exp(B: float, length: float, rng: np.random.Generator) -> float:
    """t ∈ [0, length) with density ∝ exp(B·t) (inverse CDF, stable for large |B·length|)."""
    u = rng.random()
    x = B * length
    if abs(x) < 1e-10:
        return u * length
    if x > 0:
        t = length + np.log(u + (1.0 - u) * np.exp(-x)) / B
    else:
        t = np.log1p(u * np.expm1(x)) / B
    return float(min(max(t, 0.0), np.nextafter(length, 0.0)))


def _ncp_split_point(pieces, left, total, a, b, *, integer, epsilon, sensitivity, domain_width, lattice, rng):
    """Exact EM for NCP over the lattice of split points; its utility is linear (not constant)
    inside each piece.

    u(s) = −(|L|·width(left) + |R|·width(right)) / W. The paper scores each piece at its midpoint
    and splits there (§3.2); that utility does not have sensitivity 1 (moving a record moves the
    midpoints), so dpexplore weighs every lattice point s of a piece by exp(ε'u(s)/2Δ) exactly: a
    geometric series, summed in closed form (Σ_{j<N} e^{cj} = ∫_0^N e^{ct}dt / ∫_0^1 e^{ct}dt),
    picks a piece by its mass and a point inside it from the truncated geometric distribution
    (the floor of a truncated exponential). This is the EM of Eq. 11 over the public lattice
    (counting measure), hence ε'-DP; the split is a lattice point, never a data value plus a float.
    """
    resolution, origin = lattice
    first = mechanisms.lattice_index(pieces, resolution=resolution, origin=origin)
    counts = np.diff(first)
    s0 = np.asarray(mechanisms.lattice_value(first[:-1], resolution=resolution, origin=origin))  # first point
    nl = left.sum(axis=1)
    nr = total.sum() - nl
    kappa = epsilon / (2.0 * sensitivity)
    step = -kappa * (nl - nr) / domain_width * resolution      # change of the log-weight per lattice step
    shift = 1.0 if integer else 0.0                            # integer widths: [a, s − 1] and [s, b − 1]
    right_end = (b - 1.0) if integer else b
    u0 = -(nl * (s0 - shift - a) + nr * (right_end - s0)) / domain_width
    logmass = kappa * u0 + _log_integral_exp(step, counts) - _log_integral_exp(step, np.ones_like(counts))
    probs = np.exp(logmass - logsumexp(logmass))
    k = int(rng.choice(probs.size, p=probs))
    j = int(np.floor(_sample_truncated_exp(float(step[k]), float(counts[k]), rng)))
    return float(mechanisms.lattice_value(int(first[k]) + j, resolution=resolution, origin=origin)), probs


def private_split_point(values: np.ndarray, y: np.ndarray, n_classes: int, a: float, b: float, *,
                        integer: bool, score: str, epsilon: float, sensitivity: float,
                        domain_width: float, random_state: Any = None,
                        return_probabilities: bool = False, weights: np.ndarray | None = None,
                        lattice: tuple[float, float] | None = None):
    """Private split point s of the region [a, b) by the exponential mechanism (§4.3, Eq. 11–12).

    The candidates are the points of a PUBLIC lattice (resolution, origin) inside the region:
    ``lattice`` (DiffMulti and DiffGen pass the attribute's declared one,
    :attr:`dpexplore.domain.Attribute.lattice`), else the integers for an integer region and the
    default lattice of [a, b] (:func:`dpexplore.mechanisms.lattice_resolution`) for a continuous
    one. Split points lie in {a + 1, …, b − 1} (integer regions) or strictly between a and b.
    Max/DM: the utility is constant between consecutive distinct data values, so
    :func:`dpexplore.mechanisms.exponential_interval` picks a piece with probability
    ∝ (lattice points in it) · exp(ε·u/(2Δu)) and a lattice point uniformly in it: Eq. 12 with the
    counting measure of the lattice as base measure, which does not depend on the data
    (Thm 4.3). The paper draws s from the Lebesgue measure, a + (b − a)·U with data values a, b,
    whose floating-point support shows the data ends (Mironov 2012): the DP-safe reading is the
    lattice. Piece k holds the split points edges[k] < s ≤ edges[k+1]. NCP: see
    :func:`_ncp_split_point`. The caller spends ε. Records with x < s go to the left child
    [a, s), the others to [s, b). ``weights``: one count per value (weighted records); default 1.
    """
    rng = check_random_state(random_state)
    edges, left, total = split_utilities(values, y, n_classes, a, b, integer=integer, weights=weights)
    resolution, origin = _split_lattice(a, b, integer, lattice)
    pieces = _split_pieces(edges, b, integer)
    if score == "ncp":
        s, probs = _ncp_split_point(pieces, left, total, a, b, integer=integer, epsilon=epsilon,
                                    sensitivity=sensitivity, domain_width=domain_width,
                                    lattice=(resolution, origin), rng=rng)
    else:
        util = _piece_utilities(left, total, score)
        s, probs = mechanisms.exponential_interval(pieces, util, epsilon=epsilon, sensitivity=sensitivity,
                                                   resolution=resolution, origin=origin, random_state=rng,
                                                   return_probabilities=True)
    return (float(s), probs) if return_probabilities else float(s)


# =========================================================================== budget division (§4.2)
def fair_allocation(sizes: Any, h: int, *, fair: bool = True, random_state: Any = None) -> np.ndarray:
    """Divide the h − 1 specializations left after a split among the children (Eq. 10).

    ``sizes`` are the children's **noisy** sizes (DP outputs). Negative sizes are clamped to 0
    and the denominator is the sum of the clamped sizes: the paper's "|P_c| = 0 ⇒ 0" test reads
    the true count and leaks (spec §5 trap). If that sum is 0, or ``fair`` is False, the split is
    even (Ex. 4.2). Leftover units from the floors go to the largest remainders, ties broken at
    random (post-processing of noisy values, spec §19.2). Children with noisy size 0 get nothing
    in the fair split.
    """
    rng = check_random_state(random_state)
    sizes = np.clip(np.asarray(sizes, dtype=float), 0.0, None)
    units = max(int(h) - 1, 0)
    total = sizes.sum()
    shares = sizes / total if (fair and total > 0) else np.full(sizes.size, 1.0 / sizes.size)
    exact = shares * units
    alloc = np.floor(exact + 1e-9).astype(np.int64)
    left_over = units - int(alloc.sum())
    if left_over > 0:
        remainder = np.where(shares > 0, exact - alloc, -1.0)
        order = np.lexsort((rng.random(sizes.size), -remainder))
        alloc[order[:left_over]] += 1
    return alloc


# =========================================================================== taxonomy navigation
class _CatNav:
    """Children of taxonomy nodes with padded single-child chains skipped (a padded leaf copied
    down, see :mod:`dpexplore.domain`, is not a specialization). Everything is precomputed once
    per taxonomy, so the per-partition work is dictionary look-ups."""

    def __init__(self, taxonomy):
        self.tax = taxonomy
        self.l2n = [taxonomy.leaf_to_node(d) for d in range(taxonomy.height)]
        self.n_leaves = taxonomy.n_leaves
        sizes = taxonomy.level_sizes
        self._raw_kids: dict[tuple[int, int], list[int]] = {}
        for d in range(taxonomy.height - 1):
            par = taxonomy.parents(d + 1)
            for node in range(sizes[d]):
                self._raw_kids[(d, node)] = [int(k) for k in np.flatnonzero(par == node)]
        self._n_under = [np.bincount(m, minlength=s) for m, s in zip(self.l2n, sizes)]
        self._kids: dict = {}
        self._labels = [taxonomy.labels(d) for d in range(taxonomy.height)]

    def _raw(self, depth: int, node: int) -> list[int]:
        return self._raw_kids.get((depth, node), [])

    def effective(self, depth: int, node: int) -> tuple[int, int]:
        while True:
            kids = self._raw(depth, node)
            if len(kids) != 1:
                return depth, node
            depth, node = depth + 1, kids[0]

    def children(self, depth: int, node: int):
        """(child depth, [effective (depth, node) of each child], position map over child-depth nodes)."""
        key = (depth, node)
        if key not in self._kids:
            kids = self._raw(depth, node)
            pos = np.full(self.tax.level_sizes[depth + 1] if kids else 0, -1, dtype=np.int64)
            for i, k in enumerate(kids):
                pos[k] = i
            eff = [self.effective(depth + 1, k) for k in kids]
            ncp = np.array([self.ncp(*k) for k in eff])
            self._kids[key] = (depth + 1, eff, pos, ncp)
        return self._kids[key][:3]

    def child_ncp(self, depth: int, node: int) -> np.ndarray:
        self.children(depth, node)
        return self._kids[(depth, node)][3]

    def is_leaf(self, depth: int, node: int) -> bool:
        return not self._raw(depth, node)

    def ncp(self, depth: int, node: int) -> float:
        """|leaves under node| / |leaves| (0 for a leaf), §3.2."""
        return 0.0 if self.is_leaf(depth, node) else int(self._n_under[depth][node]) / self.n_leaves

    def label(self, depth: int, node: int) -> str:
        return self._labels[depth][node]


def categorical_children(nav: "_CatNav", node: tuple[int, int], leaf_codes: np.ndarray, y: np.ndarray,
                         n_classes: int, weights: np.ndarray | None = None
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Specializing a taxonomy node: child position of each record, child × class counts (sums of
    ``weights``, default 1 per record), child NCP."""
    cdepth, kids, pos = nav.children(*node)
    child = pos[nav.l2n[cdepth][leaf_codes]]
    counts = np.bincount(child * n_classes + y, weights=weights,
                         minlength=len(kids) * n_classes).reshape(len(kids), n_classes)
    return child, counts, nav.child_ncp(*node)


def numeric_children(values: np.ndarray, y: np.ndarray, n_classes: int, region: tuple[float, float],
                     split: float, integer: bool, domain_width: float, weights: np.ndarray | None = None):
    """Splitting [lo, hi) at s (x < s left): child of each record, 2 × class counts (sums of
    ``weights``, default 1 per record), child NCP."""
    lo, hi = region
    child = (values >= split).astype(np.int64)
    counts = np.bincount(child * n_classes + y, weights=weights, minlength=2 * n_classes).reshape(2, n_classes)
    ncp = np.array([split - lo - integer, hi - integer - split]) / domain_width   # widths / |domain|
    return child, counts, ncp


def _interval_label(a: float, b: float, integer: bool, upper: float) -> str:
    fmt = lambda x: str(int(x)) if float(x).is_integer() else f"{x:.6g}"
    if integer:
        return f"[{fmt(a)}, {fmt(b - 1)}]"
    return f"[{fmt(a)}, {fmt(b)}]" if b >= upper else f"[{fmt(a)}, {fmt(b)})"


# =========================================================================== shared release
class _Data:
    """The fit data as arrays: numeric values ``Xn``, categorical leaf codes ``Xc`` and ``w``, the
    weight of each row: None for records (weight 1), the counts for a CountTable's cells
    (:meth:`from_table`). Every count the methods take is a sum of these weights."""

    w: np.ndarray | None = None

    def __init__(self, X: pd.DataFrame, schema: Schema, clip: bool = False):
        self.num = schema.numeric
        self.cat = schema.categorical
        cols = []
        for n in self.num:
            v = X[n].to_numpy(dtype=float)
            if clip:  # test records outside the public domain are clamped (spec §17.13)
                v = np.clip(v, schema[n].lower, schema[n].upper)
            cols.append(v)
        self.Xn = np.column_stack(cols) if cols else np.empty((len(X), 0))
        self.Xc = (np.column_stack([schema[n].taxonomy.leaf_codes(X[n].astype(str)) for n in self.cat])
                   if self.cat else np.empty((len(X), 0), dtype=np.int32))

    @classmethod
    def from_table(cls, table: "CountTable") -> "_Data":
        """The occupied cells of ``table`` as weighted records (weight = count, **private**).

        Categorical attributes keep their leaf codes. A numeric value becomes its leaf's
        representative value (:meth:`~dpexplore.counts.CountTable.representative_values`: the
        leaf's upper edge inside the public range; floored for integer attributes, so it is a
        whole number of the leaf): the finest resolution the table holds. That is a fixed,
        public map applied to every record before the mechanism, so a fit on it keeps its ε-DP.
        """
        schema = table.schema
        self = object.__new__(cls)
        self.num, self.cat = schema.numeric, schema.categorical
        m = table.counts.shape[0]
        cols = []
        for n in self.num:
            rep = np.asarray(table.representative_values(n), dtype=float)
            if schema[n].integer:
                rep = np.floor(rep)
            cols.append(rep[table.leaf_codes[n]])
        self.Xn = np.column_stack(cols) if cols else np.empty((m, 0))
        self.Xc = (np.column_stack([table.leaf_codes[n] for n in self.cat]) if self.cat
                   else np.empty((m, 0), dtype=np.int32))
        self.w = table.counts.astype(np.int64)
        return self

    def weights(self, idx: Any) -> np.ndarray | None:
        """The weights of the rows ``idx`` (indices or a mask); None for records (weight 1)."""
        return None if self.w is None else self.w[idx]

    def size(self, idx: np.ndarray) -> int:
        """Number of records in the rows ``idx`` (integer indices): a sum of weights. **Private.**"""
        return int(idx.size) if self.w is None else int(self.w[idx].sum())

    @property
    def n_records(self) -> int:
        """Number of records (a sum of weights). **Private**: only checked against public bounds."""
        return int(self.Xn.shape[0]) if self.w is None else int(self.w.sum())


class _RegionRelease(Release, CompleteSynthetic, ClassifierMixin, BaseEstimator):
    """A released set of disjoint generalized regions with noisy class counts.

    Subclasses fit and set: ``schema_``, ``_regions`` (per attribute: categorical (depth, node)
    arrays or numeric (lo, hi) arrays, one entry per leaf region), ``noisy_counts_`` (n_regions ×
    n_classes, the Laplace counts before rounding) and ``_leaf_index(data)``.
    """

    # ------------------------------------------------------------------ published table
    @property
    def partitions_(self) -> pd.DataFrame:
        """One row per leaf region: its generalized record, the noisy count of every class, and
        their total. (The released counts, Phase 2 of §4.4, before rounding.)"""
        self._check_fitted()
        if getattr(self, "_partitions_cache", None) is None:
            cols = {a: self._region_labels(a) for a in self.schema_.predictors}
            for k, c in enumerate(self.schema_.classes):
                cols[c] = self.noisy_counts_[:, k]
            cols["count"] = self.noisy_counts_.sum(axis=1)
            self._partitions_cache = pd.DataFrame(cols)
        return self._partitions_cache

    def _check_fitted(self) -> None:
        if not hasattr(self, "noisy_counts_"):   # NotFittedError is an AttributeError too
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet: call fit(X, y) first")

    def _region_labels(self, attribute: str) -> np.ndarray:
        attr = self.schema_[attribute]
        r = self._regions[attribute]
        if attr.kind == "categorical":
            labels = {d: np.asarray(attr.taxonomy.labels(d), dtype=object) for d in np.unique(r[0])}
            out = np.empty(r[0].size, dtype=object)
            for d, lab in labels.items():
                m = r[0] == d
                out[m] = lab[r[1][m]]
            return out
        pairs, inverse = np.unique(np.column_stack(r), axis=0, return_inverse=True)   # label each interval once
        labels = np.array([_interval_label(a, b, attr.integer, attr.upper) for a, b in pairs], dtype=object)
        return labels[np.ravel(inverse)]

    @property
    def n_regions_(self) -> int:
        self._check_fitted()
        return int(self.noisy_counts_.shape[0])

    def released_counts(self) -> np.ndarray:
        """Published integer counts: max(0, ⌊noisy⌋) as the paper rounds them (§4.4, line 21)."""
        self._check_fitted()
        return np.floor(np.clip(self.noisy_counts_, 0, 2.0 ** 62)).astype(np.int64)   # no int64 overflow

    # ------------------------------------------------------------------ synthetic data
    def synthetic(self, values: str = "sampled", random_state: Any = None, n: int | None = None) -> pd.DataFrame:
        """Records from the release, every declared column in schema order.

        Size (a public rule): ``n`` if given, else the unclipped sum of the noisy counts (an
        unbiased DP estimate of the record count), clamped to [1, ``max_synthetic_rows``]. Each
        (region, class) gets rows in proportion to its noisy count clipped at 0 (largest-remainder
        rounding; the paper's max(0, ⌊count⌋) copies, §4.4 line 21, would make ~165k rows from 6k
        at ε = 0.01, where most regions hold pure noise).
        ``values="generalized"``: the region's generalized record (the paper's output, §8.1).
        ``values="sampled"`` (a dpexplore extension, spec §8.3): a leaf category drawn uniformly
        under each taxonomy node and a uniform number (integer for integer attributes) inside
        each interval (int64 for integer attributes). Attributes never split are drawn from their noisy
        marginal (``marginal_share`` > 0) or uniformly over the declared domain (see
        ``column_sources_``). Post-processing only: no ε is spent.
        """
        if values not in ("sampled", "generalized"):
            raise ValueError(f"values must be 'sampled' or 'generalized', got {values!r}")
        self._check_fitted()
        size = synthetic_size(float(np.sum(self.noisy_counts_)), n, self.max_synthetic_rows)
        flat = apportion(self.noisy_counts_, size)
        idx = np.repeat(np.arange(flat.size), flat)
        region, cls = np.divmod(idx, self.schema_.n_classes)
        rng = check_random_state(random_state)
        data: dict[str, Any] = {}
        for a in self.schema_.predictors:
            if values == "generalized":
                data[a] = self._region_labels(a)[region]
            else:
                data[a] = self._sample_values(a, region, rng)
        data[self.schema_.target] = self.classes_[cls]
        frame = pd.DataFrame(data, columns=self.schema_.predictors + [self.schema_.target])
        return self._complete(frame, rng, generalized=values == "generalized")

    def _sample_values(self, attribute: str, region: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        attr = self.schema_[attribute]
        r = self._regions[attribute]
        if attr.kind == "numeric":
            lo, hi = r[0][region], r[1][region]
            if attr.integer:
                return (lo + np.floor(rng.random(region.size) * (hi - lo))).astype(np.int64)
            return lo + rng.random(region.size) * (hi - lo)
        tax = attr.taxonomy
        depth, node = r[0][region], r[1][region]
        out = np.empty(region.size, dtype=object)
        leaves = np.asarray(tax.leaves, dtype=object)
        for d in np.unique(depth):
            m2n = tax.leaf_to_node(int(d))
            order = np.argsort(m2n, kind="stable")           # leaves grouped by node
            starts = np.searchsorted(m2n[order], np.arange(tax.level_sizes[int(d)]))
            sizes = np.bincount(m2n, minlength=tax.level_sizes[int(d)])
            m = depth == d
            nodes = node[m]
            pick = starts[nodes] + np.floor(rng.random(nodes.size) * sizes[nodes]).astype(np.int64)
            out[m] = leaves[order[pick]]
        return out

    def _class_values(self) -> list:
        return list(self.classes_)

    # ------------------------------------------------------------------ classifier
    def generalize(self, X: pd.DataFrame) -> pd.DataFrame:
        """Each record of X replaced by the generalized record of its leaf region (§8.2 step 2)."""
        leaf = self.apply(X)
        return pd.DataFrame({a: self._region_labels(a)[leaf] for a in self.schema_.predictors},
                            index=X.index if isinstance(X, pd.DataFrame) else None)

    def apply(self, X: pd.DataFrame) -> np.ndarray:
        """Index of the leaf region (row of ``partitions_``) of every record of X. A DataFrame may
        hold other columns too (say a synthetic table with its target): the fitted predictors are
        taken by name. (``predict`` is strict, as scikit-learn requires.)"""
        preds = self.schema_.predictors if hasattr(self, "schema_") else []
        if isinstance(X, pd.DataFrame) and set(preds) < set(X.columns):
            X = X[list(getattr(self, "feature_names_in_", preds))]
        return self._apply(X)

    def _apply(self, X: Any) -> np.ndarray:
        self._check_fitted()
        X = check_release_features(self, X, self.schema_.predictors)  # sklearn's feature checks
        for n in self.schema_.predictors:
            if X[n].isna().any():
                raise ValueError(f"X has missing values (NaN) in column {n!r}")
        return self._leaf_index(_Data(X, self.schema_, clip=True))

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        """Class shares of the noisy counts (clamped at 0) of each record's region; regions whose
        counts are all ≤ 0 fall back to the class shares of the whole release."""
        self._check_fitted()
        counts = np.clip(self.noisy_counts_, 0, None)
        prior = counts.sum(axis=0) + 1e-12
        prior = prior / prior.sum()
        tot = counts.sum(axis=1, keepdims=True)
        proba = np.where(tot > 0, counts / np.where(tot > 0, tot, 1.0), prior[None, :])
        return proba[self._apply(X)]

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        """Majority noisy class of each record's region."""
        best = self.predict_proba(X).argmax(axis=1)
        return self.classes_[best]

    def _set_labels(self, y: pd.Series | None) -> None:
        """``classes_``: the schema's classes, in its order and in the dtype of y, decided by y's
        dtype only (never by which labels occur in y: that would leak a rare class's presence).
        ``y=None`` (a fit from a Source, no y dtype to follow): the schema's strings."""
        self.classes_ = (np.asarray(self.schema_.classes, dtype=object) if y is None
                         else class_values(self.schema_.classes, y))

    def train_classifier(self, estimator: Any = None, random_state: Any = None) -> "ReleaseClassifier":
        """A classifier trained on the release as the paper does (§8.2): the generalized records,
        each weighted by its released count, one-hot encoded (each taxonomy node or interval is
        its own token). Default: :func:`c45_tree`, an entropy tree with pruning. Test records are
        generalized through the same regions before prediction. Post-processing: no ε."""
        return ReleaseClassifier(self, estimator, random_state)

    # ------------------------------------------------------------------ plotting helper
    def rectangles(self, x: str, y: str) -> pd.DataFrame:
        """Leaf regions as rectangles in the (x, y) plane, for a release fitted on exactly x and y.

        Numeric axes use the interval bounds; categorical axes the positions of the taxonomy's
        leaves, ordered so that every node covers a contiguous range. Columns: x0, x1, y0, y1,
        majority (noisy), count (noisy total), label_x, label_y.
        """
        self._check_fitted()
        if set(self.schema_.predictors) != {x, y} or x == y:
            raise ValueError(f"rectangles needs a release fitted on exactly the two attributes {x!r}, "
                             f"{y!r}; this one has {self.schema_.predictors}")
        out = {}
        for axis, a in (("x", x), ("y", y)):
            lo, hi = self._axis_bounds(a)
            out[axis + "0"], out[axis + "1"] = lo, hi
            out["label_" + axis] = self._region_labels(a)
        counts = self.noisy_counts_
        out["majority"] = np.asarray(self.classes_, dtype=object)[counts.argmax(axis=1)]
        out["count"] = counts.sum(axis=1)
        return pd.DataFrame(out)

    def _axis_bounds(self, attribute: str) -> tuple[np.ndarray, np.ndarray]:
        attr = self.schema_[attribute]
        r = self._regions[attribute]
        if attr.kind == "numeric":
            return r[0].astype(float), r[1].astype(float)   # integer regions [a, b) hold a..b-1
        pos = category_positions(attr.taxonomy)
        lo = np.empty(r[0].size)
        hi = np.empty(r[0].size)
        for d in np.unique(r[0]):
            m2n = attr.taxonomy.leaf_to_node(int(d))
            m = r[0] == d
            for i in np.flatnonzero(m):
                p = pos[m2n == r[1][i]]
                lo[i], hi[i] = p.min(), p.max() + 1
        return lo, hi


def c45_tree(random_state: Any = None) -> Any:
    """The C4.5-like tree of the paper's classification experiments (§8.2, §13): scikit-learn's
    CART with the entropy (information-gain) criterion and cost-complexity post-pruning
    (``ccp_alpha=1e-4``), the scikit-learn analogue of C4.5's error-based pruning."""
    from sklearn.tree import DecisionTreeClassifier

    return DecisionTreeClassifier(criterion="entropy", ccp_alpha=1e-4, random_state=random_state)


class ReleaseClassifier:
    """An estimator fitted on a release's generalized records (see ``train_classifier``)."""

    def __init__(self, release: "_RegionRelease", estimator: Any = None, random_state: Any = None):
        from sklearn.preprocessing import OneHotEncoder

        self.release = release
        rs = check_random_state(random_state)
        self.estimator = c45_tree(int(rs.integers(2**31 - 1))) if estimator is None else estimator
        parts = release.partitions_[release.schema_.predictors]
        counts = release.released_counts()
        region, cls = np.nonzero(counts > 0)
        if region.size == 0:       # nothing released: predict the first class everywhere
            region, cls = np.array([0]), np.array([0])
            weight = np.array([1.0])
        else:
            weight = counts[region, cls].astype(float)
        self.encoder = OneHotEncoder(handle_unknown="ignore")
        Xtr = self.encoder.fit_transform(parts.iloc[region].astype(str))
        labels = np.asarray(release.classes_)
        self.estimator.fit(Xtr, labels[cls], sample_weight=weight)

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return self.estimator.predict(self.encoder.transform(self.release.generalize(X).astype(str)))

    def score(self, X: pd.DataFrame, y: Any) -> float:
        return float(np.mean(self.predict(X) == np.asarray(y)))


def category_positions(taxonomy) -> np.ndarray:
    """Axis position of every leaf, ordered by its path of node codes so nodes are contiguous."""
    keys = [taxonomy.leaf_to_node(d) for d in range(taxonomy.height - 1, -1, -1)]
    order = np.lexsort(keys)
    pos = np.empty(taxonomy.n_leaves, dtype=float)
    pos[order] = np.arange(taxonomy.n_leaves)
    return pos


def category_order(taxonomy) -> list:
    """The taxonomy's leaves in axis order (see :func:`category_positions`)."""
    pos = category_positions(taxonomy)
    return [taxonomy.leaves[i] for i in np.argsort(pos)]


def _utility_alias(utility: str, aliases: dict) -> str:
    """Accept the issue's spelling ``score=`` for ``utility=`` (the attribute cannot be called
    ``score``: that is scikit-learn's accuracy method). Only this one alias is accepted."""
    unknown = sorted(set(aliases) - {"score"})
    if unknown:
        raise TypeError(f"unexpected keyword argument(s) {unknown}")
    if "score" in aliases:
        if utility != "max" and utility != aliases["score"]:
            raise TypeError("give the score function once: score= (alias) or utility=, not both")
        return aliases["score"]
    return utility


def _hide_aliases(init):
    """The constructor's ``**aliases`` (the ``score=`` spelling) is not a parameter: keep it out of
    the signature scikit-learn reads (``get_params``, ``clone`` and its checks see ``utility``)."""
    sig = inspect.signature(init)
    init.__signature__ = sig.replace(parameters=[p for p in sig.parameters.values()
                                                 if p.kind is not inspect.Parameter.VAR_KEYWORD])
    return init


def check_flag(value: Any, name: str) -> bool:
    """A boolean parameter (TypeError naming it)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_count(value: Any, name: str, minimum: int = 0, allow_none: bool = False) -> int | None:
    """An integer parameter ≥ minimum (ValueError/TypeError naming it)."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be ≥ {minimum}, got {value}")
    return int(value)


# =========================================================================== DiffMulti
class _Partition:
    __slots__ = ("idx", "cat", "num", "splits", "h", "depth", "id")

    def __init__(self, idx, cat, num, splits, h, depth, id):
        self.idx, self.cat, self.num, self.splits = idx, cat, num, splits
        self.h, self.depth, self.id = h, depth, id


class DiffMulti(_RegionRelease):
    """Differentially private multidimensional generalization (Al-Hussaeni et al., Alg. 1).

    Parameters
    ----------
    epsilon : total privacy budget ε (> 0).
    h : total number of specializations in the whole tree (not a depth, §4.2). 0 = one region.
    max_depth : |g|, the cap on splits along any root-to-leaf path, fixed before the run because
        ε' depends on it. None: Σ over categorical attributes of (taxonomy height − 1) plus
        ``numeric_height`` per numeric attribute (§4.4, Line 3).
    utility : the score function u: "max" (classification, §3.3), "ncp" (§3.2) or "dm" (§3.1,
        needs ``n_max``). (Named ``utility``, the paper's word, because ``score`` is the
        scikit-learn accuracy method; ``score="max"|"ncp"|"dm"`` is accepted as a constructor
        alias, as the issue spells it, and stored as ``utility``.)
    numeric_height : nominal height of a numeric attribute in |g| (the paper uses 7).
    allocation : "fair" (noisy size-proportional, Eq. 10 with Thm 4.2) or "even" (Ex. 4.2; then
        no child sizes are measured and their ε' goes unspent, to be reused by the leaf counts).
        A partition with h' = 1 has no units left to divide, so its child sizes are never measured.
    reuse_budget : give the leaf counts whatever Phase 1 did not use (§4.4, Line 20), so the
        release spends exactly ε. False: the counts get ε/2.
    n_max : public upper bound on the number of records (only for utility="dm").
    marginal_share : fraction of ε in [0, 1), default 0 (the paper: attributes the tree never
        splits are drawn uniformly over their declared domain in :meth:`synthetic`). s > 0 runs
        the method on (1 - s)·ε and, after the tree is released, spends s·ε on Laplace one-way
        marginals of the never-split attributes (ledger "marginal: <column>", split evenly)
        that :meth:`synthetic` samples them from: an extension beyond the paper. Unspent when
        every attribute was split. ``column_sources_`` says how each column is produced.
    max_synthetic_rows : public cap on the rows :meth:`synthetic` makes (default 1,000,000).
    min_width : continuous numeric regions narrower than this fraction of the public range are
        not split (a data-independent leaf rule; integer regions stop at one value).

    DP-safe readings (documented deviations): the "|P_c| = 0 ⇒ h' = 0" rule of Eq. 10 uses the
    noisy, clamped sizes (never the true count); ΔDM uses ``n_max`` instead of the private |D|;
    NCP split points use the exact EM instead of the midpoint rule; split points are points of
    the attribute's public lattice (:attr:`~dpexplore.domain.Attribute.lattice`, its declared
    resolution), drawn with the counting measure of that lattice as Eq. 12's base measure,
    never a + (b − a)·U between data values (:func:`private_split_point`); validity of a split
    never depends on the data (empty children are created and published); a partition at
    depth |g| does not split (the paper writes "≤ |g|").

    Attributes (after fit): ``partitions_``, ``noisy_counts_``, ``tree_`` (one row per node, DP
    outputs only), ``epsilon_prime_``, ``max_depth_``, ``leaf_epsilon_``, ``ledger_``,
    ``classes_`` (the schema's classes, in its order and in y's dtype, whatever y holds),
    ``n_features_in_``/``feature_names_in_``. ``fit`` takes a DataFrame or an array (columns
    ``x0, x1, …`` or the schema's predictors); without a schema one is read from the data with a
    :class:`~dpexplore.domain.PrivacyLeakWarning`. Nothing non-private is kept on the object.
    """

    method = "DiffMulti"

    @_hide_aliases
    def __init__(self, epsilon: float = 1.0, *, h: int = 1000, max_depth: int | None = None,
                 utility: str = "max", numeric_height: int = 7, allocation: str = "fair",
                 reuse_budget: bool = True, n_max: int | None = None, min_width: float = 1e-6,
                 random_state: Any = None, accountant: BudgetAccountant | None = None,
                 marginal_share: float = 0.0, max_synthetic_rows: int = DEFAULT_MAX_SYNTHETIC_ROWS, **aliases):
        self.epsilon = epsilon
        self.h = h
        self.max_depth = max_depth
        self.utility = _utility_alias(utility, aliases)
        self.numeric_height = numeric_height
        self.allocation = allocation
        self.reuse_budget = reuse_budget
        self.n_max = n_max
        self.min_width = min_width
        self.random_state = random_state
        self.accountant = accountant
        self.marginal_share = marginal_share
        self.max_synthetic_rows = max_synthetic_rows

    # ------------------------------------------------------------------ fit
    def _check_params(self) -> None:
        check_epsilon(self.epsilon)
        self._check_complete_params()
        check_count(self.h, "h", 0)
        check_count(self.max_depth, "max_depth", 0, allow_none=True)
        check_count(self.numeric_height, "numeric_height", 1)
        if self.utility not in SCORES:
            raise ValueError(f"utility must be one of {SCORES}, got {self.utility!r}")
        if self.allocation not in ("fair", "even"):
            raise ValueError(f"allocation must be 'fair' or 'even', got {self.allocation!r}")
        check_flag(self.reuse_budget, "reuse_budget")
        if self.utility == "dm":
            score_sensitivity("dm", self.n_max)            # ValueError when n_max is missing
            check_count(self.n_max, "n_max", 1)
        if not (isinstance(self.min_width, numbers.Real) and 0 < self.min_width < 1):
            raise ValueError(f"min_width must be a fraction in (0, 1), got {self.min_width!r}")

    def fit(self, X: Any, y: Any = None, schema: Schema | None = None) -> "DiffMulti":
        """Build the private partition tree and publish noisy leaf × class counts.

        ``fit(X, y, schema)`` on records, or ``fit(source)`` on a :class:`dpexplore.sources.Source`
        (pandas, DuckDB, Spark; target and schema come from it, every predictor needs a taxonomy;
        ``classes_`` are then the schema's strings). A source fit runs on the occupied cells of
        its :class:`~dpexplore.counts.CountTable` as weighted records (every count a sum of
        weights), so after the table is built its cost depends on the cells, not the rows, and
        every engine gives the same release for the same seed. It sees numeric values at
        taxonomy-leaf resolution (one representative value per leaf, :meth:`_Data.from_table`),
        so its split points (§4.3) can differ from ``fit(X, y)`` on the raw values; that
        coarsening is a fixed public map of each record, so the release stays ε-DP.
        """
        self._check_params()
        got = source_input(X, y, schema, estimator=self)
        if got is None:
            X, y, schema = check_release_input(X, y, schema, estimator=self)
            data = _Data(X, schema)             # everything that reads the data fails before any spend
            yk = schema.encode_target(y)
            filler = self._prepare_filler(schema, X=X)
        else:
            table, schema = got
            data, yk = _Data.from_table(table), table.class_codes
            filler = self._prepare_filler(schema, table=table)
        if self.utility == "dm" and data.n_records > self.n_max:
            raise ValueError(f"n_max={self.n_max} is below the number of records; it must be a public upper bound")
        if self.max_depth is None:  # Line 3: Σ taxonomy heights, numeric attributes count numeric_height
            g = sum(schema[a].taxonomy.height - 1 for a in schema.categorical) + self.numeric_height * len(schema.numeric)
        else:
            g = int(self.max_depth)
        if min(g, int(self.h)) > MAX_TREE_DEPTH:   # public sizes: refuse before spending, not mid-tree
            raise ValueError(f"max_depth={g} and h={self.h} allow paths deeper than MAX_TREE_DEPTH = {MAX_TREE_DEPTH} "
                             "(the tree is grown recursively); lower max_depth or h")
        acc = prepare_accountant(self.epsilon, self.accountant)
        eps = self._model_epsilon()             # epsilon, less the marginal_share (extension)
        self.schema_ = schema
        self._set_labels(y)                     # a source: y is None, labels are the schema's strings
        self._partitions_cache = None
        self._open_ledger(acc)
        rng = check_random_state(self.random_state)
        K = schema.n_classes
        num, cat = schema.numeric, schema.categorical
        self._nav = {a: _CatNav(schema[a].taxonomy) for a in cat}
        self._navs = [self._nav[a] for a in cat]
        self._integer = [schema[a].integer for a in num]
        self._lattice = [schema[a].lattice for a in num]          # public grid of the split points
        self._min_w = [self.min_width * (schema[a].upper - schema[a].lower) for a in num]
        self.max_depth_ = g
        self.epsilon_prime_ = eps / (2.0 * (len(num) + 3 * max(g, 1)))        # Line 4
        self._sens = score_sensitivity(self.utility, self.n_max)
        self._g, self._K, self._y, self._data, self._rng, self._acc = g, K, yk, data, rng, acc
        self._width = {a: schema[a].upper - schema[a].lower for a in num}
        self._width_list = [self._width[a] for a in num]
        self._bounds0 = [(schema[a].lower, schema[a].upper + 1.0 if schema[a].integer else schema[a].upper)
                         for a in num]
        self._nodes: list[dict] = []
        self._leaves: list[_Partition] = []
        root = _Partition(np.arange(data.Xn.shape[0]), [self._nav[a].effective(0, 0) for a in cat],
                          list(self._bounds0), [None] * len(num), int(self.h), 0, 0)
        self._nodes.append({"node": 0, "parent": -1, "depth": 0, "h": int(self.h), "noisy_size": np.nan})
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 3 * MAX_TREE_DEPTH))   # one frame per tree level
        try:
            with acc.parallel("DiffMulti partitioning"):
                with acc.branch("root"):
                    self._grow(root)
        finally:
            sys.setrecursionlimit(limit)
        # This fit's own cost so far (its spends, the parallel children at their max), never the
        # accountant's overall total, which does not move inside a branch next to a dearer sibling.
        phase1 = self.epsilon_spent_
        # Per-path cost (the max over root-to-leaf paths) must stay within ε/2 (spec §17.2).
        if phase1 > eps / 2 * (1 + 1e-9):  # a bug, not bad input: never publish after it
            raise RuntimeError(f"DiffMulti partitioning spent {phase1} > ε/2 = {eps / 2}")
        self.partitioning_epsilon_ = phase1
        leaf_eps = eps - phase1 if self.reuse_budget else eps / 2
        self.leaf_epsilon_ = leaf_eps
        leaf_of = np.empty(data.Xn.shape[0], dtype=np.int64)
        for i, P in enumerate(self._leaves):
            leaf_of[P.idx] = i
        L = len(self._leaves)
        counts = np.bincount(leaf_of * K + yk, weights=data.w, minlength=L * K).reshape(L, K)   # Phase 2
        self.noisy_counts_ = mechanisms.laplace(counts.astype(float),
                                                epsilon=acc.spend(leaf_eps, "DiffMulti leaf × class counts"),
                                                random_state=rng)
        # after the tree is released: marginals of the attributes it never split (extension)
        self._fill_marginals({nd["attribute"] for nd in self._nodes if "attribute" in nd}, acc, rng, filler)
        self._close_ledger()
        self._regions = self._leaf_regions()
        self._finish_tree()
        for P in self._leaves:
            P.idx = None  # drop the private records
        del self._data, self._y, self._rng, self._acc
        return self

    # ------------------------------------------------------------------ Phase 1 (Alg. 1, lines 6-19)
    def _candidates(self, P: _Partition) -> list[tuple[str, int]]:
        """Specializable values of P (data-independent: taxonomy, public bounds, DP split points)."""
        out = [("cat", j) for j, (d, n) in enumerate(P.cat) if not self._navs[j].is_leaf(d, n)]
        for j, (lo, hi) in enumerate(P.num):
            if splittable(lo, hi, self._integer[j], self._min_w[j], self._lattice[j]):
                out.append(("num", j))
        return out

    def _grow(self, P: _Partition) -> None:
        cands = self._candidates(P)
        if P.h <= 0 or P.depth >= self._g or not cands:          # VALID(P), Def. 4.1 (depth < |g|)
            self._leaves.append(P)
            self._nodes[P.id]["leaf"] = len(self._leaves) - 1
            return
        acc, rng, e1, K = self._acc, self._rng, self.epsilon_prime_, self._K
        schema = self.schema_
        yP = self._y[P.idx]
        wP = self._data.weights(P.idx)             # None on records; cell counts on a CountTable
        # Line 9: a split point for every new numeric interval (root: all of them), ε' each.
        for kind, j in cands:
            if kind == "num" and P.splits[j] is None:
                a = schema.numeric[j]
                lo, hi = P.num[j]
                P.splits[j] = private_split_point(
                    self._data.Xn[P.idx, j], yP, K, lo, hi, integer=schema[a].integer, score=self.utility,
                    epsilon=acc.spend(e1, f"split point {a}"), sensitivity=self._sens,
                    domain_width=self._width[a], random_state=rng, weights=wP, lattice=self._lattice[j])
        # Line 10: score every candidate as if P were split on it.
        routes, scores = [], []
        for kind, j in cands:
            if kind == "cat":
                child, counts, ncp = categorical_children(self._navs[j], P.cat[j], self._data.Xc[P.idx, j], yP, K, wP)
            else:
                child, counts, ncp = numeric_children(self._data.Xn[P.idx, j], yP, K, P.num[j], P.splits[j],
                                                      self._integer[j], self._width_list[j], wP)
            routes.append(child)
            scores.append(float(child_scores(counts, self.utility, ncp)))
        # Line 11: exponential mechanism over the candidates, ε'.
        pick = mechanisms.exponential(np.array(scores), epsilon=acc.spend(e1, "attribute choice"),
                                      sensitivity=self._sens, random_state=rng)
        kind, j = cands[pick]
        child = routes[pick]
        # Line 12: one child per child value, empty ones included.
        if kind == "cat":
            a = schema.categorical[j]
            _, kids, _ = self._nav[a].children(*P.cat[j])
            n_children = len(kids)
        else:
            a = schema.numeric[j]
            n_children = 2
        order = np.argsort(child, kind="stable")
        bounds = np.searchsorted(child[order], np.arange(n_children + 1))
        groups = [P.idx[order[bounds[c]:bounds[c + 1]]] for c in range(n_children)]
        # Line 13: noisy child sizes (disjoint children: one ε' for the vector) and fair h'.
        # With P.h' = 1 there is nothing to divide (every child gets 0 whatever the sizes), so the
        # sizes are not measured and that ε' is not spent (a rule on the DP output h' only).
        if self.allocation == "fair" and P.h > 1:
            sizes = np.array([self._data.size(g) for g in groups], dtype=float)
            noisy = mechanisms.laplace(sizes, epsilon=acc.spend(e1, "child sizes"), random_state=rng)
        else:
            noisy = np.full(n_children, np.nan)
        measured = bool(np.isfinite(noisy).all())
        alloc = fair_allocation(noisy if measured else np.ones(n_children), P.h,
                                fair=measured, random_state=rng)
        node = self._nodes[P.id]
        node.update(attribute=a, kind=kind)
        if kind == "num":
            node["split"] = P.splits[j]
        else:
            node["taxonomy_depth"] = P.cat[j]
        children = []
        for c in range(n_children):
            cat, nums, splits = list(P.cat), list(P.num), list(P.splits)
            if kind == "cat":
                cat[j] = kids[c]
            else:
                lo, hi = P.num[j]
                nums[j] = (lo, P.splits[j]) if c == 0 else (P.splits[j], hi)
                splits[j] = None          # the new interval needs its own split point
            cid = len(self._nodes)
            self._nodes.append({"node": cid, "parent": P.id, "depth": P.depth + 1, "h": int(alloc[c]),
                                "noisy_size": float(noisy[c])})
            children.append(_Partition(groups[c], cat, nums, splits, int(alloc[c]), P.depth + 1, cid))
        node["children"] = [ch.id for ch in children]
        P.idx = None
        # Lines 14-15: the children hold disjoint records, so their spends compose in parallel.
        with acc.parallel(f"children of node {P.id}"):
            for ch in children:
                with acc.branch(f"node {ch.id}"):
                    self._grow(ch)

    # ------------------------------------------------------------------ published structures
    def _leaf_regions(self) -> dict:
        out = {}
        for j, a in enumerate(self.schema_.categorical):
            out[a] = (np.array([P.cat[j][0] for P in self._leaves], dtype=np.int64),
                      np.array([P.cat[j][1] for P in self._leaves], dtype=np.int64))
        for j, a in enumerate(self.schema_.numeric):
            out[a] = (np.array([P.num[j][0] for P in self._leaves], dtype=float),
                      np.array([P.num[j][1] for P in self._leaves], dtype=float))
        return out

    def _finish_tree(self) -> None:
        rows = []
        for nd in self._nodes:
            row = {k: nd.get(k) for k in ("node", "parent", "depth", "h", "noisy_size", "attribute", "split")}
            row["children"] = len(nd.get("children", []))
            row["leaf"] = nd.get("leaf", -1)
            rows.append(row)
        tree = pd.DataFrame(rows)
        tree["region"] = ""
        # generalized record of every node, in the notation of the released table
        self.tree_ = tree
        self._describe_nodes()

    def _describe_nodes(self) -> None:
        """Label each tree node by the value it specialized to (e.g. "age: [17, 36]")."""
        labels = [""] * len(self._nodes)
        schema = self.schema_
        for nd in self._nodes:
            if "children" not in nd:
                continue
            a = nd["attribute"]
            if nd["kind"] == "num":
                lo_hi = self._node_interval(nd["node"], a)
                attr = schema[a]
                s = nd["split"]
                parts = [(lo_hi[0], s), (s, lo_hi[1])]
                for cid, (lo, hi) in zip(nd["children"], parts):
                    labels[cid] = f"{a}: {_interval_label(lo, hi, attr.integer, attr.upper)}"
            else:
                nav = self._nav[a]
                _, kids, _ = nav.children(*nd["taxonomy_depth"])
                for cid, k in zip(nd["children"], kids):
                    labels[cid] = f"{a}: {nav.label(*k)}"
        labels[0] = "all records"
        self.tree_["region"] = labels

    def _node_interval(self, node: int, attribute: str) -> tuple[float, float]:
        j = self.schema_.numeric.index(attribute)
        lo, hi = self._bounds0[j]
        chain = []
        while node > 0:
            parent = self._nodes[node]["parent"]
            chain.append((parent, node))
            node = parent
        for parent, child in reversed(chain):
            pn = self._nodes[parent]
            if pn.get("attribute") == attribute and pn["kind"] == "num":
                if pn["children"][0] == child:
                    hi = pn["split"]
                else:
                    lo = pn["split"]
        return lo, hi

    def _leaf_index(self, data: _Data) -> np.ndarray:
        """Route records down the released tree (the same rules as in fit, x < s goes left)."""
        out = np.empty(data.Xn.shape[0], dtype=np.int64)
        stack = [(0, np.arange(data.Xn.shape[0]))]
        cat = self.schema_.categorical
        while stack:
            nid, idx = stack.pop()
            nd = self._nodes[nid]
            if "children" not in nd:
                out[idx] = nd["leaf"]
                continue
            a = nd["attribute"]
            if nd["kind"] == "num":
                j = self.schema_.numeric.index(a)
                child = (data.Xn[idx, j] >= nd["split"]).astype(np.int64)
            else:
                j = cat.index(a)
                nav = self._nav[a]
                cdepth, _, pos = nav.children(*nd["taxonomy_depth"])
                child = pos[nav.l2n[cdepth][data.Xc[idx, j]]]
            for c, cid in enumerate(nd["children"]):
                stack.append((cid, idx[child == c]))
        return out
