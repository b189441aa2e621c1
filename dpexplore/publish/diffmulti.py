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

What DiffMulti shares with DiffGen (:mod:`dpexplore.publish.diffgen`): the split scores, the
private numeric split point, the taxonomy navigation and the release of generalized regions
(``partitions_``, ``synthetic``, ``predict``) live in :mod:`dpexplore.publish.partition`.
"""
from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pandas as pd

from .. import mechanisms
from .._validation import check_int, check_random_state
from ..budget import BudgetAccountant
from ..domain import Schema
from ..limits import MAX_SYNTHETIC_ROWS
from ..limits import MAX_TREE_DEPTH
from ..sensitivity import sum_sensitivity
from .base import Modelled
from .partition import (SCORES, RegionData, ReleaseClassifier, RegionRelease, TaxonomyNavigator, WeightedRecords, c45_tree,
                        categorical_children, category_order, category_positions, child_scores, interval_label,
                        numeric_children, piece_utilities, private_split_point, score_sensitivity, split_utilities,
                        splittable)

__all__ = ["DiffMulti", "ReleaseClassifier", "c45_tree", "category_order", "category_positions", "split_utilities",
           "private_split_point", "fair_allocation", "score_sensitivity", "child_scores", "splittable",
           "piece_utilities", "categorical_children", "numeric_children", "interval_label", "SCORES",
           "MAX_TREE_DEPTH"]



# =========================================================================== budget division (§4.2)
def fair_allocation(sizes: Any, h: int, *, fair: bool = True, random_state: Any = None) -> np.ndarray:
    """Divide the h − 1 specializations left after a split among the children (Eq. 10).

    ``sizes`` are the children's **noisy** sizes (DP outputs). Negative sizes are clamped to 0
    and the denominator is the sum of the clamped sizes: the paper's "|P_c| = 0 ⇒ 0" test reads
    the true count and leaks (§4.2, Eq. 10 and Thm 4.2). If that sum is 0, or ``fair`` is False, the split is
    even (Ex. 4.2). Leftover units from the floors go to the largest remainders, ties broken at
    random (post-processing of noisy values; §4.2 lets leftover units "be randomly distributed", the
    largest-remainder rule is ours). Children with noisy size 0 get nothing
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



# =========================================================================== DiffMulti
class _Partition:
    __slots__ = ("idx", "cat", "num", "splits", "h", "depth", "id")

    def __init__(self, idx, cat, num, splits, h, depth, id):
        self.idx, self.cat, self.num, self.splits = idx, cat, num, splits
        self.h, self.depth, self.id = h, depth, id


class DiffMulti(RegionRelease):
    """Differentially private multidimensional generalization (Al-Hussaeni et al., Alg. 1).

    Parameters
    ----------
    epsilon : total privacy budget ε (> 0).
    h : total number of specializations in the whole tree (not a depth, §4.2). 0 = one region.
    max_depth : |g|, the cap on splits along any root-to-leaf path, fixed before the run because
        ε' depends on it. None: Σ over categorical attributes of (taxonomy height − 1) plus
        ``numeric_height`` per numeric attribute (§4.4, Line 3).
    utility : the score function u: "max" (classification, Eq. 8), "ncp" (Eq. 6) or "dm" (Eq. 3,
        needs ``n_max``). (Named ``utility``, the paper's word, because ``score`` is the
        scikit-learn accuracy method.)
    numeric_height : nominal height of a numeric attribute in |g| (the paper uses 7).
    allocation : "fair" (noisy size-proportional, Eq. 10 with Thm 4.2) or "even" (Ex. 4.2; then
        no child sizes are measured and their ε' goes unspent, to be reused by the leaf counts).
        A partition with h' = 1 has no units left to divide, so its child sizes are never measured.
    reuse_budget : give the leaf counts whatever Phase 1 did not use (§4.4, Line 20), so the
        release spends exactly ε. False: the counts get ε/2.
    n_max : public upper bound on the number of records (only for utility="dm").
    marginal_share : fraction of ε in [0, 1), default 0 (the paper: attributes the tree never
        splits are drawn uniformly over their declared domain in :meth:`synthetic`). s > 0 runs
        the method on (1 - s)·ε and, after the tree is released, spends s·ε on Laplace marginals
        (ledger "marginal: <column>", split evenly): each two-way with a privately chosen parent
        (``marginal_parents_``) when ε allows the choice, else one-way; :meth:`synthetic` draws
        the never-split attributes given each row's parent value, and the split ones inside their
        regions, given it. An extension beyond the paper (README "Synthetic
        tables"). ``column_sources_`` says how each column is produced.
    max_synthetic_rows : public cap on the rows :meth:`synthetic` makes (default
        :data:`dpexplore.limits.MAX_SYNTHETIC_ROWS`).
    schema : the public :class:`~dpexplore.domain.Schema` (taxonomies, bounds, classes) ``fit(X, y)``
        uses; None reads one from the data with a :class:`~dpexplore.domain.PrivacyLeakWarning`.
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
    ``n_features_in_``/``feature_names_in_``. ``fit(X, y)`` takes a DataFrame or an array (columns
    ``x0, x1, …`` or the schema's predictors); without a schema one is read from the data with a
    :class:`~dpexplore.domain.PrivacyLeakWarning`. ``fit(source)`` takes a
    :class:`dpexplore.sources.Source` (pandas, DuckDB, Spark; target and schema come from it,
    every predictor needs a taxonomy; ``classes_`` follow its target column's type) and runs on the
    occupied cells of its :class:`~dpexplore.counts.CountTable` as weighted records, so after the
    table is built its cost depends on the cells, not the rows, and every engine gives the same
    release for the same seed. It sees numeric values at taxonomy-leaf resolution (one
    representative value per leaf, :meth:`WeightedRecords.from_table`), so its split points
    (§4.3) can differ from ``fit(X, y)`` on the raw values; that coarsening is a fixed public map
    of each record, so the release stays ε-DP. Nothing non-private is kept on the object.
    """

    method = "DiffMulti"

    def __init__(self, epsilon: float = 1.0, *, h: int = 1000, max_depth: int | None = None,
                 utility: str = "max", numeric_height: int = 7, allocation: str = "fair",
                 reuse_budget: bool = True, n_max: int | None = None, min_width: float = 1e-6,
                 random_state: Any = None, accountant: BudgetAccountant | None = None,
                 marginal_share: float = 0.0, max_synthetic_rows: int = MAX_SYNTHETIC_ROWS,
                 schema: Schema | None = None):
        self.epsilon = epsilon
        self.h = h
        self.max_depth = max_depth
        self.utility = utility
        self.numeric_height = numeric_height
        self.allocation = allocation
        self.reuse_budget = reuse_budget
        self.n_max = n_max
        self.min_width = min_width
        self.random_state = random_state
        self.accountant = accountant
        self.marginal_share = marginal_share
        self.max_synthetic_rows = max_synthetic_rows
        self.schema = schema

    # ------------------------------------------------------------------ fit
    def _check_params(self) -> None:
        self._check_region_params()
        check_int(self.h, "h", minimum=0)
        check_int(self.max_depth, "max_depth", minimum=0, allow_none=True)
        check_int(self.numeric_height, "numeric_height", minimum=1)
        if self.allocation not in ("fair", "even"):
            raise ValueError(f"allocation must be 'fair' or 'even', got {self.allocation!r}")

    def _depth(self, schema: Schema) -> int:
        """|g|, the tree's depth bound (Alg. 1 line 3): Σ taxonomy heights, numeric attributes
        counting ``numeric_height``, unless ``max_depth`` is given."""
        if self.max_depth is None:
            return sum(schema[a].taxonomy.height - 1 for a in schema.categorical) + self.numeric_height * len(schema.numeric)
        return int(self.max_depth)

    def _check_sizes(self, schema: Schema) -> None:
        g = self._depth(schema)
        if min(g, int(self.h)) > MAX_TREE_DEPTH:   # public sizes: refuse before spending, not mid-tree
            raise ValueError(f"max_depth={g} and h={self.h} allow paths deeper than MAX_TREE_DEPTH = {MAX_TREE_DEPTH} "
                             "(the tree is grown recursively); lower max_depth or h")

    def _release(self, fit_data: RegionData, acc: BudgetAccountant, rng: np.random.Generator,
                 eps: float) -> Modelled:
        """Build the private partition tree (Phase 1) and publish noisy leaf × class counts (Phase 2)."""
        schema, (data, yk) = self.schema_, fit_data
        g = self._depth(schema)
        self._partitions_cache = None
        K = schema.n_classes
        num, cat = schema.numeric, schema.categorical
        self._nav = {a: TaxonomyNavigator(schema[a].taxonomy) for a in cat}
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
        # Per-path cost (the max over root-to-leaf paths) must stay within ε/2 (§4.4, Thm 4.4;
        # Def. 4.1: depth ≤ |g|).
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
                                                sensitivity=sum_sensitivity(), random_state=rng)
        # after the tree is released: marginals of the attributes it never split (extension)
        return Modelled({nd["attribute"] for nd in self._nodes if "attribute" in nd})

    def _finish_fit(self, fit_data: RegionData) -> None:
        self._regions = self._leaf_regions()
        self._finish_tree()
        for P in self._leaves:
            P.idx = None  # drop the private records
        del self._data, self._y, self._rng, self._acc

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
            noisy = mechanisms.laplace(sizes, epsilon=acc.spend(e1, "child sizes"), sensitivity=sum_sensitivity(),
                                       random_state=rng)
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
                    labels[cid] = f"{a}: {interval_label(lo, hi, attr.integer, attr.upper)}"
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

    def _leaf_index(self, data: WeightedRecords) -> np.ndarray:
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
