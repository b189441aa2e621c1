"""DiffGen: differentially private single-dimensional top-down specialization (Mohammed et al.,
KDD 2011), the baseline DiffMulti is compared against (Al-Hussaeni et al. §5.1, Fig. 8; Su et al.
2018 §5.2).

Every attribute starts at the top of its taxonomy (numeric ones: their public range, cut at a
private split point). Each of ``steps`` rounds picks, with the exponential mechanism on the
``Max`` score, one value of the current cut — over *all* attributes — and specializes it in
every record (global recoding, unlike DiffMulti's per-region recoding). The released table is
the full grid of the final cuts with a Laplace count per (cell, class), empty cells included.

Budget (DiffGen Alg. 1): ε/2 for the counts and ε/2 for the specializations with
ε' = ε / (2(|A_num| + 2·steps)): one split point per numeric attribute at the start, then per
step one exponential-mechanism choice and the split points of the (disjoint, hence parallel)
new numeric intervals. The score of a value only reads the records under it (its marginal),
so its sensitivity is 1 for Max.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .. import mechanisms
from .._validation import check_int
from ..budget import BudgetAccountant
from ..domain import Schema
from ..histogram import decode_cells
from ..limits import DIFFGEN_MAX_CELLS, MAX_SYNTHETIC_ROWS
from ..sensitivity import sum_sensitivity
from .base import Modelled
from .partition import (RegionData, RegionRelease, TaxonomyNavigator, WeightedRecords, categorical_children, child_scores,
                        interval_label, numeric_children, private_split_point, score_sensitivity, splittable)

__all__ = ["DiffGen"]


class DiffGen(RegionRelease):
    """DiffGen baseline: ``steps`` global specializations chosen by the exponential mechanism.

    Parameters
    ----------
    epsilon : total privacy budget ε.
    steps : number of specializations h (the PrivPfC paper uses 10 for Adult; the DiffMulti paper
        explores 2..20). Stops earlier if nothing is left to specialize.
    utility : "max" (the paper's classification score), "ncp" or "dm" (needs ``n_max``), the same
        score functions as :class:`~dpexplore.publish.diffmulti.DiffMulti`.
    max_cells : cap on the number of grid cells × classes; a specialization that would exceed it
        is not a candidate (the rule reads only the public cuts, never the data).
    reuse_budget : if fewer than ``steps`` specializations were possible, give the unspent ε' to
        the counts (the run length is itself a DP output), so the release spends exactly ε.
    marginal_share, max_synthetic_rows : as :class:`~dpexplore.publish.diffmulti.DiffMulti` (an
        extension beyond the paper: Laplace marginals, bought with ``marginal_share``·ε after the
        cuts are chosen, each two-way with a privately chosen parent when ε allows the choice,
        else one-way; ``column_sources_``).
    schema : the public :class:`~dpexplore.domain.Schema` ``fit(X, y)`` uses (None: read from the
        data with a :class:`~dpexplore.domain.PrivacyLeakWarning`).

    ``fit(X, y)`` on records, or ``fit(source)`` on a :class:`dpexplore.sources.Source` (target and
    schema come from it, every predictor needs a taxonomy; ``classes_`` follow the type of its
    target column). A source fit runs on its CountTable's occupied cells as weighted records (cost set
    by the cells, not the rows; the same release from every engine). Numeric values are seen at
    taxonomy-leaf resolution (one representative per leaf), so split points can differ from
    ``fit(X, y)`` on raw values; a fixed public coarsening of each record, so still ε-DP
    (Al-Hussaeni et al. §4.3).
    """

    method = "DiffGen"

    def __init__(self, epsilon: float = 1.0, *, steps: int = 10, utility: str = "max",
                 n_max: int | None = None, reuse_budget: bool = True, min_width: float = 1e-6,
                 max_cells: int = DIFFGEN_MAX_CELLS, random_state: Any = None,
                 accountant: BudgetAccountant | None = None, marginal_share: float = 0.0,
                 max_synthetic_rows: int = MAX_SYNTHETIC_ROWS, schema: Schema | None = None):
        self.epsilon = epsilon
        self.steps = steps
        self.utility = utility
        self.n_max = n_max
        self.reuse_budget = reuse_budget
        self.min_width = min_width
        self.max_cells = max_cells
        self.random_state = random_state
        self.accountant = accountant
        self.marginal_share = marginal_share
        self.max_synthetic_rows = max_synthetic_rows
        self.schema = schema

    def _check_params(self) -> None:
        self._check_region_params()
        check_int(self.steps, "steps", minimum=0)
        check_int(self.max_cells, "max_cells", minimum=1)

    # ------------------------------------------------------------------ fit
    def _release(self, fit_data: RegionData, acc: BudgetAccountant, rng: np.random.Generator,
                 eps: float) -> Modelled:
        """Specialize the cuts privately, then publish the noisy grid of (cell × class) counts."""
        schema, (data, yk) = self.schema_, fit_data
        K = schema.n_classes
        self._partitions_cache = None
        num, cat = schema.numeric, schema.categorical
        sens = score_sensitivity(self.utility, self.n_max)
        # DiffGen Alg. 1, line 3: ε/2 over the |A_num| + 2h operations of phase 1; with neither a
        # numeric attribute nor a step there is none (ε' = 0), and phase 1's ε/2 is unused like
        # that of steps that could not run: the counts get it with ``reuse_budget``
        operations = len(num) + 2 * self.steps
        e1 = eps / (2.0 * operations) if operations else 0.0
        self.epsilon_prime_ = e1
        self._nav = {a: TaxonomyNavigator(schema[a].taxonomy) for a in cat}
        width = {a: schema[a].upper - schema[a].lower for a in num}
        # current cuts: categorical → list of effective taxonomy nodes; numeric → [(lo, hi, split)]
        self._cut_cat = [[self._nav[a].effective(0, 0)] for a in cat]
        self._cut_num = [[(schema[a].lower, schema[a].upper + 1.0 if schema[a].integer else schema[a].upper)]
                         for a in num]
        splits: dict[tuple[int, int], float] = {}

        def new_split(j: int, k: int, label: str) -> None:
            a = schema.numeric[j]
            lo, hi = self._cut_num[j][k]
            if not splittable(lo, hi, schema[a].integer, self.min_width * width[a], schema[a].lattice):
                return
            inside = self._num_pos(data, j) == k
            splits[(j, k)] = private_split_point(   # a point of the attribute's public lattice
                data.Xn[inside, j], yk[inside], K, lo, hi, integer=schema[a].integer, score=self.utility,
                epsilon=acc.spend(e1, label), sensitivity=sens, domain_width=width[a], random_state=rng,
                weights=data.weights(inside), lattice=schema[a].lattice)

        for j, a in enumerate(num):                               # line 4: initial split points
            new_split(j, 0, f"split point {a}")
        history = []
        for step in range(self.steps):                            # lines 6-11
            cands, scores = self._candidates(data, yk, K, splits, width, sens)
            if not cands:
                break
            pick = mechanisms.exponential(np.array(scores), epsilon=acc.spend(e1, f"step {step + 1}: specialization"),
                                          sensitivity=sens, random_state=rng)
            kind, j, k = cands[pick]
            if kind == "cat":
                a = cat[j]
                node = self._cut_cat[j][k]
                _, kids, _ = self._nav[a].children(*node)
                self._cut_cat[j][k:k + 1] = kids
                history.append({"step": step + 1, "attribute": a, "value": self._nav[a].label(*node),
                                "children": [self._nav[a].label(*c) for c in kids]})
            else:
                a = num[j]
                lo, hi = self._cut_num[j][k]
                s = splits.pop((j, k))
                self._cut_num[j][k:k + 1] = [(lo, s), (s, hi)]
                # renumber the split points of the intervals after k
                for (jj, kk) in sorted([key for key in splits if key[0] == j and key[1] > k], reverse=True):
                    splits[(jj, kk + 1)] = splits.pop((jj, kk))
                history.append({"step": step + 1, "attribute": a, "split": s,
                                "value": interval_label(lo, hi, schema[a].integer, schema[a].upper),
                                "children": [interval_label(lo, s, schema[a].integer, schema[a].upper),
                                             interval_label(s, hi, schema[a].integer, schema[a].upper)]})
                with acc.parallel(f"step {step + 1}: split points"):   # the two halves are disjoint
                    new_split(j, k, f"split point {a}")
                    new_split(j, k + 1, f"split point {a}")
        # This fit's own cost so far (never the accountant's overall total, which does not move
        # inside a branch next to a sibling that spent more).
        phase1 = self.epsilon_spent_
        if phase1 > eps / 2 * (1 + 1e-9):  # a bug, not bad input: never publish after it
            raise RuntimeError(f"DiffGen specialization spent {phase1} > ε/2 = {eps / 2}")
        self.partitioning_epsilon_ = phase1
        self.history_ = pd.DataFrame(history)
        self.leaf_epsilon_ = eps - phase1 if self.reuse_budget else eps / 2
        cells = self._leaf_index(data)
        n_cells = int(np.prod(self.grid_shape_))
        counts = np.bincount(cells * K + yk, weights=data.w, minlength=n_cells * K).reshape(n_cells, K)
        self.noisy_counts_ = mechanisms.laplace(counts.astype(float),
                                                epsilon=acc.spend(self.leaf_epsilon_, "DiffGen cell × class counts"),
                                                sensitivity=sum_sensitivity(), random_state=rng)
        self._regions = self._grid_regions()
        # after the cuts are released: marginals of the attributes never specialized (extension)
        return Modelled({h["attribute"] for h in history})

    # ------------------------------------------------------------------ helpers
    def _num_pos(self, data: WeightedRecords, j: int) -> np.ndarray:
        starts = np.array([lo for lo, _ in self._cut_num[j]])
        return np.searchsorted(starts, data.Xn[:, j], side="right") - 1

    def _cat_pos(self, data: WeightedRecords, j: int) -> np.ndarray:
        nav = self._nav[self.schema_.categorical[j]]
        leafmap = np.empty(nav.n_leaves, dtype=np.int64)
        for k, (d, n) in enumerate(self._cut_cat[j]):
            leafmap[nav.l2n[d] == n] = k
        return leafmap[data.Xc[:, j]]

    @property
    def grid_shape_(self) -> tuple[int, ...]:
        return tuple(len(c) for c in self._cut_cat) + tuple(len(c) for c in self._cut_num)

    def _candidates(self, data, yk, K, splits, width, sens):
        """Every value of the current cuts that can be specialized, with its score (marginal)."""
        schema = self.schema_
        shape = self.grid_shape_
        n_cells = int(np.prod(shape)) * K
        cands, scores = [], []
        for j, a in enumerate(schema.categorical):
            nav = self._nav[a]
            pos = self._cat_pos(data, j)
            for k, node in enumerate(self._cut_cat[j]):
                if nav.is_leaf(*node):
                    continue
                n_kids = len(nav.children(*node)[1])
                if n_cells // shape[j] * (shape[j] + n_kids - 1) > self.max_cells:
                    continue
                inside = pos == k
                _, counts, ncp = categorical_children(nav, node, data.Xc[inside, j], yk[inside], K,
                                                      data.weights(inside))
                cands.append(("cat", j, k))
                scores.append(float(child_scores(counts, self.utility, ncp)))
        off = len(schema.categorical)
        for j, a in enumerate(schema.numeric):
            pos = self._num_pos(data, j)
            for k, region in enumerate(self._cut_num[j]):
                if (j, k) not in splits or n_cells // shape[off + j] * (shape[off + j] + 1) > self.max_cells:
                    continue
                inside = pos == k
                _, counts, ncp = numeric_children(data.Xn[inside, j], yk[inside], K, region, splits[(j, k)],
                                                  schema[a].integer, width[a], data.weights(inside))
                cands.append(("num", j, k))
                scores.append(float(child_scores(counts, self.utility, ncp)))
        return cands, scores

    def _leaf_index(self, data: WeightedRecords) -> np.ndarray:
        codes = [self._cat_pos(data, j) for j in range(len(self._cut_cat))]
        codes += [self._num_pos(data, j) for j in range(len(self._cut_num))]
        shape = self.grid_shape_
        if not codes:
            return np.zeros(data.Xn.shape[0], dtype=np.int64)
        return np.ravel_multi_index(tuple(codes), shape).astype(np.int64)

    def _grid_regions(self) -> dict:
        shape = self.grid_shape_
        cell = np.arange(int(np.prod(shape)))
        parts = decode_cells(cell, shape)
        out = {}
        for j, a in enumerate(self.schema_.categorical):
            nodes = np.array(self._cut_cat[j], dtype=np.int64)
            out[a] = (nodes[parts[j], 0], nodes[parts[j], 1])
        off = len(self.schema_.categorical)
        for j, a in enumerate(self.schema_.numeric):
            iv = np.array(self._cut_num[j], dtype=float)
            out[a] = (iv[parts[off + j], 0], iv[parts[off + j], 1])
        return out
