"""What DiffMulti and DiffGen share: split scores, private split points, taxonomy navigation and
the release of disjoint generalized regions with noisy class counts.

Al-Hussaeni, Fung, Iqbal, Liu & Hung, "Differentially private multidimensional data publishing"
(Knowledge and Information Systems 56, 2018): the score functions (§4.2), the private numeric split
point (§4.3, Eq. 11–12) and the published regions (§4.4); DiffGen (Mohammed et al., KDD 2011)
uses the same scores and split points with global recoding (:mod:`dpexplore.publish.diffgen`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pandas as pd
from scipy.special import logsumexp

from .. import mechanisms
from .._validation import (check_epsilon, check_flag, check_fraction, check_int, check_random_state, format_number,
                           rule_message)
from ..domain import Schema
from ..sensitivity import sum_sensitivity, utility_sensitivity
from ..inputs import check_release_features
from .base import Publisher
from .complete import count_noise_sd
from .histogram_release import HistogramRelease
from .shape import IntervalCells, NodeCells
from .sparse_histogram import noise_ceiling

if TYPE_CHECKING:
    from ..counts import CountTable

__all__ = ["SCORES", "child_scores", "score_sensitivity", "splittable", "split_utilities", "piece_utilities",
           "private_split_point", "TaxonomyNavigator", "categorical_children", "numeric_children",
           "interval_label", "WeightedRecords", "RegionRelease", "c45_tree", "region_pseudo_counts",
           "count_reliability", "ReleaseClassifier", "category_positions", "category_order"]

SCORES = ("max", "ncp", "dm")

# =========================================================================== scores (§4.2)
def child_scores(counts: np.ndarray, score: str, ncp: np.ndarray | None = None) -> np.ndarray:
    """Score of splitting into children with class counts ``counts`` (..., n_children, n_classes).

    Higher is better. Max (Eq. 8): Σ_c max_cls |D_c^cls|. DM (Eq. 3): −Σ_c |D_c|². NCP (Eq. 6):
    −Σ_c |D_c|·NCP(c) with ``ncp`` the NCP of each child. DM and NCP are "inverted" by negation,
    which keeps their sensitivity (§4.2: lower-is-better scores are "inverted"; Thm 4.1).
    """
    counts = np.asarray(counts, dtype=float)
    if score == "max":
        return counts.max(axis=-1).sum(axis=-1)
    sizes = counts.sum(axis=-1)
    if score == "dm":
        return -(sizes ** 2).sum(axis=-1)
    return -(sizes * ncp).sum(axis=-1)


def score_sensitivity(score: str, n_max: int | None = None) -> float:
    """Δu under add/remove (:func:`~dpexplore.sensitivity.utility_sensitivity`): 1 for Max and
    NCP (a record adds at most 1 to one child's count, or its NCP ≤ 1); 2·N_max + 1 for DM with
    N_max a *public* bound on |D| (§4.2).

    The paper's ΔDM = 2|D| + 1 reads the private |D|; under add/remove neighbours that is not
    allowed, so the DP-safe reading replaces |D| by a public upper bound (a dpexplore choice, §4.2).
    """
    if score in ("max", "ncp"):
        return utility_sensitivity(1.0)
    if n_max is None:
        raise ValueError("utility='dm' needs n_max, a public upper bound on the number of records "
                         "(its sensitivity 2·|D|+1 must not read the private |D|)")
    return utility_sensitivity(2.0 * n_max + 1.0)


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


def piece_utilities(left: np.ndarray, total: np.ndarray, score: str) -> np.ndarray:
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
    and splits there (§4.3); that utility does not have sensitivity 1 (moving a record moves the
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
        util = piece_utilities(left, total, score)
        s, probs = mechanisms.exponential_interval(pieces, util, epsilon=epsilon, sensitivity=sensitivity,
                                                   resolution=resolution, origin=origin, random_state=rng,
                                                   return_probabilities=True)
    return (float(s), probs) if return_probabilities else float(s)


# =========================================================================== taxonomy navigation
class TaxonomyNavigator:
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
        """|leaves under node| / |leaves| (0 for a leaf), Al-Hussaeni et al. Eq. 5."""
        return 0.0 if self.is_leaf(depth, node) else int(self._n_under[depth][node]) / self.n_leaves

    def label(self, depth: int, node: int) -> str:
        return self._labels[depth][node]


def categorical_children(nav: "TaxonomyNavigator", node: tuple[int, int], leaf_codes: np.ndarray, y: np.ndarray,
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


def interval_label(a: float, b: float, integer: bool, upper: float) -> str:
    """Label of the region [a, b) of a numeric attribute: "[a, b − 1]" for integers (the values
    it holds), "[a, b)" for continuous ones, closed at the attribute's public ``upper`` bound."""
    fmt = format_number
    if integer:
        return f"[{fmt(a)}, {fmt(b - 1)}]"
    return f"[{fmt(a)}, {fmt(b)}]" if b >= upper else f"[{fmt(a)}, {fmt(b)})"


# =========================================================================== shared release
class RegionData(NamedTuple):
    """The fit data of a region release: the records (or cells) and the class code of each."""

    records: "WeightedRecords"
    class_codes: np.ndarray


class WeightedRecords:
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
            if clip:  # test records go through the training regions (§5.1); clamping them is ours
                v = np.clip(v, schema[n].lower, schema[n].upper)
            cols.append(v)
        self.Xn = np.column_stack(cols) if cols else np.empty((len(X), 0))
        self.Xc = (np.column_stack([schema[n].taxonomy.leaf_codes(X[n].astype(str)) for n in self.cat])
                   if self.cat else np.empty((len(X), 0), dtype=np.int32))

    @classmethod
    def from_table(cls, table: "CountTable") -> "WeightedRecords":
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


class RegionRelease(HistogramRelease, Publisher):
    """A released set of disjoint generalized regions with noisy class counts (a :class:`Publisher`).

    The fit data are :class:`RegionData` (the records, or a CountTable's cells, as
    :class:`WeightedRecords` with their class codes). Subclasses implement ``_release`` on them
    and set ``_regions`` (per attribute: categorical (depth, node) arrays or numeric (lo, hi)
    arrays, one entry per leaf region), ``noisy_counts_`` (n_regions × n_classes, the Laplace
    counts before rounding) and ``_leaf_index(data)``. The regions' counts classify
    (:meth:`_region_probabilities`), or, when the marginals are two-way tables with chosen
    parents, a regression fitted on the completed synthetic table (``classifier_data_``
    "synthetic", ``table_model_``:
    :meth:`~dpexplore.publish.histogram_release.HistogramRelease._fit_table_classifier`).
    """

    synthetic_values = ("sampled", "generalized")
    _released = "noisy_counts_"
    _table_classifier = True         # with two-way marginals: HistogramRelease._fit_table_classifier

    # ------------------------------------------------------------------ fit
    def _check_region_params(self) -> None:
        """The parameters DiffMulti and DiffGen share (every check before any spend)."""
        check_epsilon(self.epsilon)
        check_flag(self.reuse_budget, "reuse_budget")
        if self.utility not in SCORES:
            raise ValueError(f"utility must be one of {SCORES}, got {self.utility!r}")
        if self.utility == "dm":
            score_sensitivity("dm", self.n_max)            # ValueError when n_max is missing
            check_int(self.n_max, "n_max", minimum=1)
        check_fraction(self.min_width, "min_width", high_closed=False)

    def _records_data(self, X: pd.DataFrame, y: pd.Series, schema: Schema) -> "RegionData":
        # everything that reads the data fails before any spend
        return self._region_data(WeightedRecords(X, schema), schema.encode_target(y), schema)

    def _table_data(self, table: "CountTable", schema: Schema, source: Any) -> "RegionData":
        """A source fit runs on the occupied cells of its CountTable as weighted records (every
        count a sum of weights), at taxonomy-leaf resolution (:meth:`WeightedRecords.from_table`)."""
        return self._region_data(WeightedRecords.from_table(table), table.class_codes, schema)

    def _region_data(self, data: "WeightedRecords", yk: np.ndarray, schema: Schema) -> "RegionData":
        if self.utility == "dm" and data.n_records > self.n_max:
            raise ValueError(f"n_max={self.n_max} is below the number of records; it must be a public upper bound")
        self._check_sizes(schema)
        return RegionData(data, np.asarray(yk))

    def _check_sizes(self, schema: Schema) -> None:
        """Public sizes the release cannot take, refused before the first spend."""

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
        labels = np.array([interval_label(a, b, attr.integer, attr.upper) for a, b in pairs], dtype=object)
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
    def _count_scale(self) -> float:
        return sum_sensitivity() / float(self.leaf_epsilon_)

    def _size_total(self) -> tuple[float, float]:
        return float(np.sum(self.noisy_counts_)), count_noise_sd(self.leaf_epsilon_, np.size(self.noisy_counts_))

    def _synthetic_rows(self, size: int, rng: np.random.Generator, values: str,
                        shuffle: bool) -> tuple[pd.DataFrame, dict | None, np.ndarray]:
        """Records from the release (:meth:`synthetic`).

        Size (a public rule): ``n`` if given, else the unclipped sum of the noisy counts (an
        unbiased DP estimate of the record count; with marginals paid, averaged with their totals,
        :meth:`~dpexplore.publish.complete.CompleteSynthetic._record_total`), raised to the public floor and capped at
        ``max_synthetic_rows`` (:func:`~dpexplore.publish.complete.synthetic_size`). Each
        (region, class) gets rows in proportion to its noisy count clipped at 0 (largest-remainder
        rounding; the paper's max(0, ⌊count⌋) copies, §4.4 line 21, would make ~165k rows from 6k
        at ε = 0.01, where most regions hold pure noise).
        ``values="generalized"``: the region's generalized record (the paper's output, §4.4).
        ``values="sampled"`` (a dpexplore extension: the paper publishes generalized records, §4.4): a leaf category drawn uniformly
        under each taxonomy node and a uniform number (integer for integer attributes) inside
        each interval (int64 for integer attributes). Attributes never split are drawn from their noisy
        marginal (``marginal_share`` > 0) or uniformly over the declared domain (see
        ``column_sources_``). Post-processing only: no ε is spent.
        With ``marginal_share`` > 0 the table keeps the data's shape
        (:mod:`dpexplore.publish.shape`): copies from one fit of the counts with the paid marginals
        (:meth:`~dpexplore.publish.complete.CompleteSynthetic._copy_weights`), and values inside
        each cell drawn jointly from the columns' distributions given their parents.
        """
        cells = None
        if getattr(self, "marginals_", None) or self.schema_.rules:   # each region's interval or node, per attribute
            cells = {a: (IntervalCells if self.schema_[a].kind == "numeric" else NodeCells)(*self._regions[a])
                     for a in self.schema_.predictors}
        flat = self._copies(self.noisy_counts_, size, cells)
        idx = np.repeat(np.arange(flat.size), flat)
        region, cls = np.divmod(idx, self.schema_.n_classes)
        data: dict[str, Any] = {}
        for a in self.schema_.predictors:
            if values == "generalized":
                data[a] = self._region_labels(a)[region]
            else:
                data[a] = self._sample_values(a, region, rng)
        data[self.schema_.target] = self.classes_[cls]
        return pd.DataFrame(data, columns=self.schema_.predictors + [self.schema_.target]), cells, region

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
        """Each record of X replaced by the generalized record of its leaf region (the classification protocol of §5.1)."""
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
        missing = [n for n in self.schema_.predictors if X[n].isna().any()]
        if missing:
            raise ValueError(rule_message("missing", missing))
        return self._leaf_index(WeightedRecords(X, self.schema_, clip=True))

    def _predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        """Class probabilities of each record's region (:meth:`_region_probabilities`)."""
        return self._region_probabilities()[self._apply(X)]

    def _region_probabilities(self) -> np.ndarray:
        """(n_regions, n_classes) class probabilities of every leaf region: post-processing of the
        released counts, no ε.

        The papers train C4.5 on the generalized records (§5.1, :meth:`train_classifier`); this
        direct read of the counts is a dpexplore extension. Each region's evidence is its noisy
        counts clamped at 0 (the released counts, §4.4), plus a pseudo-count spread by the
        release's class shares (:meth:`_class_shares`) of q noise standard deviations (√2·b each,
        b = Δ/ε_leaf: public). So a region's counts overturn the class shares only when they
        stand above the noise, and a region left with nothing predicts them. Without it, on a
        fine partition the clamped noise of the empty (region, class) pairs decided a region of
        one or two records, or none, and pulled it towards even shares: below always predicting
        the majority class.

        A region whose noisy total is not clearly above the noise gets that pseudo-count divided
        by the counts' reliability (:func:`region_pseudo_counts`). On a partition finer than the
        records, at small ε, the class mix is mostly noise and those regions predict the class
        shares: with the plain pseudo-count, DiffGen on the generated table of notebook 08
        (~19,000 regions for ~5,600 records at ε = 0.1) followed the noise in one region in ten
        (0.648 against the majority's 0.687, ``benchmarks/fidelity.py``). Regions clearly above
        the noise keep the plain pseudo-count: applied to every region, the reliability, low on
        average over a partition of many small regions, also silenced the few large ones that
        carry the classes at small ε (DiffGen on Adult at ε = 0.03: 0.752, the majority, against
        0.771). Reading the nearest non-negative counts with the noisy total instead
        (:func:`~dpexplore.publish.shape.consistent_counts`, what the synthetic rows follow) lost
        the evidence of small regions where the classes are well separated (DiffGen on
        Adult-Multiclass at ε = 0.1: 0.80 against 0.83). Ties go to the larger class share."""
        noisy = np.asarray(self.noisy_counts_, dtype=float)
        shares = self._class_shares()
        noise_sd = count_noise_sd(self.leaf_epsilon_, sensitivity=sum_sensitivity())
        pseudo = region_pseudo_counts(noisy, shares, noise_sd)
        counts = np.clip(noisy, 0, None) + pseudo[:, None] * shares[None, :]
        tot = counts.sum(axis=1, keepdims=True)
        proba = np.where(tot > 0, counts / np.where(tot > 0, tot, 1.0), shares[None, :])
        return (proba + 1e-9 * shares[None, :]) / (1.0 + 1e-9)     # argmax: a tie goes to the larger share

    def _class_shares(self) -> np.ndarray:
        """The release's class shares: its unclipped noisy class totals (the sums of the leaf
        counts, unbiased, of variance regions × 2(Δ/ε_leaf)²) and, when ``marginal_share`` paid
        the class marginal (:meth:`_prepare_filler`), that marginal (variance 2(Δ/ε_m)²),
        combined by inverse variance (public weights), clipped at 0 and normalised. On a fine
        partition the totals add the noise of every empty region and are mostly noise at small ε
        (the larger class is then a coin toss); the one class marginal is not."""
        noisy = np.asarray(self.noisy_counts_, dtype=float)
        totals, q = noisy.sum(axis=0), noisy.shape[1]
        target = self.schema_.target
        if target in getattr(self, "marginals_", {}):
            var_totals = noisy.shape[0] * count_noise_sd(self.leaf_epsilon_, sensitivity=sum_sensitivity()) ** 2
            var_marginal = count_noise_sd(self.column_sources_[target]["marginal_epsilon"],
                                          sensitivity=sum_sensitivity(self.neighbours)) ** 2
            w = var_marginal / (var_marginal + var_totals)
            totals = w * totals + (1.0 - w) * np.asarray(self.marginals_[target], dtype=float)
        totals = np.clip(totals, 0, None)
        return totals / totals.sum() if totals.sum() > 0 else np.full(q, 1.0 / q)

    def _prepare_filler(self, schema: Schema, X: Any = None, table: Any = None, **kwargs: Any) -> Any:
        """The marginals' codes, the class's too: its one noisy marginal gives the classifier
        class shares that the sum of many noisy leaf counts does not (:meth:`_class_shares`)."""
        return super()._prepare_filler(schema, X=X, table=table, class_marginal=True, **kwargs)

    def train_classifier(self, estimator: Any = None, random_state: Any = None) -> "ReleaseClassifier":
        """A classifier trained on the release as the paper does (§5.1): the generalized records,
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


def region_pseudo_counts(noisy: Any, shares: Any, noise_sd: float) -> np.ndarray:
    """The pseudo-count of each region (row of ``noisy``, one noisy count per class) that
    :meth:`RegionRelease._region_probabilities` spreads by the class shares: q noise standard
    deviations σ, divided by :func:`count_reliability` for a region whose noisy total is not
    clearly above the noise (at most b·ln(m/2), b = σ/√2 the Laplace scale, the level one of the
    m counts would reach were all empty: :func:`~dpexplore.publish.sparse_histogram.noise_ceiling`).
    Post-processing of released counts with the public σ.

    >>> rng = np.random.default_rng(0)
    >>> empty = rng.laplace(0, 10, (5000, 2))                  # 5,000 regions of pure noise
    >>> noisy = np.vstack([[[300.0, 100.0], [100.0, 300.0]], empty])
    >>> pseudo = region_pseudo_counts(noisy, [0.5, 0.5], 10 * 2 ** 0.5)
    >>> bool(np.allclose(pseudo[:2], 2 * 10 * 2 ** 0.5))     # the two large regions: 2σ
    True
    >>> int(np.sum(pseudo[2:] > 10 * pseudo[0]))               # all but the ~1 noise crossing the ceiling
    4998
    """
    noisy = np.asarray(noisy, dtype=float)
    pseudo = np.full(noisy.shape[0], noisy.shape[1] * float(noise_sd))
    unclear = noisy.sum(axis=1) <= noise_ceiling(noise_sd / np.sqrt(2.0), noisy.size)
    pseudo[unclear] /= max(count_reliability(noisy, shares, noise_sd), 1e-6)
    return pseudo


def count_reliability(noisy: Any, shares: Any, noise_sd: float) -> float:
    """The share of the regions' class mix, as their noisy counts show it, that is not noise.

    Each region's counts are compared with its noisy total spread by the class shares: d_rc =
    y_rc − s_c·Σ_c' y_rc'. With no class signal in the regions and noise of standard deviation
    σ (a public figure) on every count, the mean of Σ_c d_rc² over the regions is
    σ²·(q − 2 + q·Σ_c s_c²). The reliability is 1 − that / the observed mean, clipped to [0, 1]:
    the classical signal-over-total variance of a noisy measurement (as in empirical-Bayes
    shrinkage). Post-processing of released counts.

    >>> rng = np.random.default_rng(0)
    >>> sizes = rng.poisson(100, 500)
    >>> mixed = rng.binomial(sizes, rng.choice([0.1, 0.9], 500))        # regions mostly of one class
    >>> signal = np.column_stack([mixed, sizes - mixed]).astype(float)
    >>> count_reliability(signal + rng.laplace(0, 1, signal.shape), [0.5, 0.5], 2 ** 0.5) > 0.9
    True
    >>> pure = rng.binomial(sizes, 0.8)                                   # every region 80 / 20
    >>> noise = np.column_stack([pure, sizes - pure]) + rng.laplace(0, 20, (500, 2))
    >>> count_reliability(noise, [0.8, 0.2], 20 * 2 ** 0.5) < 0.2
    True
    """
    noisy = np.asarray(noisy, dtype=float)
    shares = np.asarray(shares, dtype=float)
    if noisy.size == 0:
        return 0.0
    deviation = noisy - noisy.sum(axis=1, keepdims=True) * shares[None, :]
    observed = float(np.mean(np.sum(deviation ** 2, axis=1)))
    q = noisy.shape[1]
    expected_noise = noise_sd ** 2 * (q - 2 + q * float(np.sum(shares ** 2)))
    return float(np.clip(1.0 - expected_noise / observed, 0.0, 1.0)) if observed > 0 else 0.0


def c45_tree(random_state: Any = None) -> Any:
    """The C4.5-like tree of the paper's classification experiments (§5, §5.1): scikit-learn's
    CART with the entropy (information-gain) criterion and cost-complexity post-pruning
    (``ccp_alpha=1e-4``), the scikit-learn analogue of C4.5's error-based pruning."""
    from sklearn.tree import DecisionTreeClassifier

    return DecisionTreeClassifier(criterion="entropy", ccp_alpha=1e-4, random_state=random_state)


class ReleaseClassifier:
    """An estimator fitted on a release's generalized records (see ``train_classifier``)."""

    def __init__(self, release: "RegionRelease", estimator: Any = None, random_state: Any = None):
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

