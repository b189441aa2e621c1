"""Complete synthetic tables: what every publisher's ``synthetic()`` shares.

A synthetic table holds every declared column in schema order, with a public size rule
(:func:`synthetic_size`); columns the release carries no information on are filled uniformly
over their declared domain (the papers' rule) or from small paid DP marginals
(:class:`MarginalFiller`, an extension beyond the papers, README "Synthetic tables");
:class:`CompleteSynthetic` is the publishers' mixin that pays and draws them.
"""
from __future__ import annotations

import numbers
import warnings
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .. import mechanisms
from .._validation import format_number
from ..domain import Schema, Taxonomy, marginal_taxonomy
from ..exceptions import FewRecordsWarning, SyntheticSizeWarning
from ..histogram import sample_within
from ..limits import FEW_RECORDS, MAX_SYNTHETIC_ROWS, MIN_SYNTHETIC_ROWS, SIZE_ERROR_RATIO
from ..sensitivity import ADD_REMOVE, sum_sensitivity, utility_sensitivity
from .sparse_histogram import noise_ceiling
from .shape import (IntervalCells, NodeCells, apportion, cell_shares, consistent_counts, CellTree,
                    draw_leaves, leaf_probabilities, rake, values_in_cells)

__all__ = ["CompleteSynthetic", "MarginalFiller", "synthetic_size", "count_noise_sd", "check_marginal_share",
           "check_row_cap"]


def check_marginal_share(value: Any) -> float:
    """``marginal_share`` as a float in [0, 1): the fraction of ε kept for one-way marginals."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise TypeError(f"marginal_share must be a number in [0, 1) (a fraction of epsilon), got {value!r}")
    if not 0.0 <= float(value) < 1.0:
        raise ValueError(f"marginal_share must be in [0, 1) (0 = the paper's budget, e.g. 0.1 keeps 10% of "
                         f"epsilon for marginals of unmodelled columns), got {value!r}")
    return float(value)


def check_row_cap(value: Any, name: str = "max_synthetic_rows") -> int:
    """A public row count ≥ 1 (``max_synthetic_rows`` or ``n``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if not (isinstance(value, numbers.Real) and float(value).is_integer()):
            raise TypeError(f"{name} must be a whole number of rows ≥ 1, got {value!r}")
    if int(value) < 1:
        raise ValueError(f"{name} must be a whole number of rows ≥ 1, got {value!r}")
    return int(value)


def count_noise_sd(epsilon: float, n_counts: int = 1, sensitivity: float = 1.0) -> float:
    """The standard deviation of the noise in a sum of ``n_counts`` Laplace counts, each of
    ``sensitivity`` at ``epsilon`` (√(2·n_counts)·Δ/ε): a public number, from ε and the released
    number of counts; 0 when nothing was noised (``epsilon`` = 0, e.g. a public n)."""
    if not epsilon > 0:
        return 0.0
    return float(np.sqrt(n_counts * mechanisms.laplace_variance(epsilon=epsilon, sensitivity=sensitivity)))


def synthetic_size(dp_total: float, n: Any = None, cap: int = MAX_SYNTHETIC_ROWS,
                   floor: int = MIN_SYNTHETIC_ROWS, noise_sd: float | None = None) -> int:
    """The public size rule of a synthetic table: ``n`` when given, else the release's DP total
    (a noisy record count or the unclipped sum of noisy counts) raised to the public ``floor``
    (:data:`~dpexplore.limits.MIN_SYNTHETIC_ROWS`), then capped at ``cap`` (``max_synthetic_rows``).
    A total below the floor, or a table below
    :data:`~dpexplore.limits.FEW_RECORDS` rows, gets a :class:`FewRecordsWarning` saying why.
    On the high side, symmetrically, a :class:`~dpexplore.exceptions.SyntheticSizeWarning`: when
    the cap bounds the size, or when the total's error bar (two standard deviations of its noise,
    ``noise_sd``, public: :func:`count_noise_sd`) is wider than
    :data:`~dpexplore.limits.SIZE_ERROR_RATIO` of it. A function of DP outputs and public
    constants only."""
    cap_name = "max_synthetic_rows"
    cap = check_row_cap(cap, cap_name)
    if n is not None:
        size = min(check_row_cap(n, "n"), cap)
        reason = f"n={size} was asked for" if size == int(n) else f"{cap_name}={cap}"
    else:
        floor = check_row_cap(floor, "floor")
        total = float(dp_total)
        size = int(min(max(round(total), floor), cap)) if np.isfinite(total) else (cap if total > 0 else floor)
        reason = f"{cap_name}={cap}"
        if not total >= floor:
            warnings.warn(f"the release's noisy record count ({format_number(total)}) is below the public floor of "
                          f"{floor} synthetic rows, so the table has {min(floor, cap)} rows drawn from counts that are "
                          "mostly noise; pass n= to choose the size", FewRecordsWarning, stacklevel=4)
            return size
        _warn_noisy_size(total, size, cap, cap_name, noise_sd)
    if size < FEW_RECORDS:
        warnings.warn(f"the synthetic table has {size} rows because {reason}: too few to show the data's shape",
                      FewRecordsWarning, stacklevel=4)
    return size


def _warn_noisy_size(total: float, size: int, cap: int, cap_name: str, noise_sd: float | None) -> None:
    """:func:`synthetic_size`'s high side: one warning naming the public rule(s) that apply."""
    bar = 2.0 * float(noise_sd) if noise_sd is not None else 0.0
    wide, capped = bar > SIZE_ERROR_RATIO * total, total > cap
    if not (wide or capped):
        return
    count = f"the release's noisy record count ({format_number(round(total))}" + (
        f" ± {format_number(round(bar))}, two standard deviations of its noise: a public figure from ε)" if wide else ")")
    text = (f"{count} is above the public cap {cap_name}={cap}, so the table has {size} rows" if capped
            else f"the synthetic table's {size} rows follow {count}")
    advice = ("the size says little about the table's. Pass n= to choose it, lower the public cap "
              f"{cap_name}, or give the release more ε" if wide else f"pass n= to choose the size, or raise {cap_name}")
    warnings.warn(f"{text}: {advice}", SyntheticSizeWarning, stacklevel=5)


def _sample_leaves(attr: Any, tax: Any, codes: np.ndarray, rng: np.random.Generator, generalized: bool) -> np.ndarray:
    depth = tax.height - 1
    if generalized:
        return np.asarray(tax.labels(depth), dtype=object)[codes]
    return sample_within(attr, tax, depth, codes, rng)


PARENT_SELECTION_SHARE = 0.2
"""Share of a column's marginal ε that chooses its parent (:meth:`MarginalFiller.release`); the
rest measures the two-way table. A public constant: 0.2 kept the customer table's undeclared
rules best at ε = 1 among 0.1–0.3 without losing 2-way TVD on Adult or the generated table
(benchmarks/fidelity.py). More buys surer parents at the tables' expense (benchmarks/ablations.py,
ε = 1, ten runs of the customer table): at 0.35 the phone rule broke in 0.7–3.2 % of rows instead
of 2.2–3.6 %, but DiffGen's worst add-on rule in 4.2 % instead of 3.3 %, every customer table's
2-way TVD rose by .001–.005, and PrivPfC's on Adult from .041 to .043, above MST's."""

PARENT_MIN_EPSILON = 0.004
"""The least ε a parent's choice may get (:data:`PARENT_SELECTION_SHARE` of a column's share):
below it every column is measured one-way (:meth:`MarginalFiller.release`). Permute-and-flip
(with a monotone score under add/remove: each other candidate taken with probability
exp(−ε·gap/Δ) when visited) picks a parent that explains a fifth of 5,000 records (a score gap
of ~1,000, sensitivity 1) over twenty candidates with probability > 1/2 only when ε·1,000 > ~2.5,
i.e. ε > ~0.0025 (the exponential mechanism: ε·1,000 > ln 20); below that the choice is mostly
chance, and a two-way table with a chance parent blurs the column's own counts with more noise
than it adds relations (at ε = 0.1 the generated tables' 2-way TVD fell by a third without it,
`benchmarks/fidelity.py`). A public constant, compared with public figures (ε, the share, the
number of columns) only."""

PARENT_NOISE_PENALTY = 1.0
"""How many times the expected L1 noise of a candidate parent's two-way table (cells · Δ / ε) its
score loses (:meth:`MarginalFiller.release`): a public penalty on parents with many leaves, whose
table the noise blurs. 1 chose well on Adult and the generated tables (benchmarks/fidelity.py)."""


MODEL_PRIOR_SHARE = 0.01
"""The share of a table's records that its raking starts with spread by the marginals' tree
model (:meth:`CompleteSynthetic._copy_weights`), where the table's counts are mostly noise
(:data:`MODEL_PRIOR_NOISE`): raking only scales, so a released cell whose noisy count was clipped
to 0 could never get rows, and where the cells outnumber the records (DiffGen on notebook 08's
generated table: 69,000 counts for 4,800 records at ε = 1) the marginals could not be met
(1-way TVD 0.15 in one run of three). A public constant; any share from 0.0001 to 0.1 gave the
same tables within 0.003 2-way TVD (benchmarks/fidelity.py)."""

MODEL_PRIOR_NOISE = 2.0
"""The prior (:data:`MODEL_PRIOR_SHARE`) is used only when the expected L1 noise of a table's
counts (m·b, public) is at least this many times its record count. On tables the noise does not
swamp it cost more than it gave: PrivPfC's Adult table at ε = 1 (m·b a quarter of the records)
went from 0.041 to 0.042 2-way TVD with it, DiffMulti's customer table (m·b about the records)
from 0.054 to 0.057, its worst undeclared rule breaking in 6.9 % of rows instead of 5.4 %
(benchmarks/fidelity.py, 3 seeds)."""

CONDITIONAL_SHRINK = 0.1
"""How far a column's distribution given a parent value leans towards its overall shape
(:meth:`CompleteSynthetic._conditional`): the weight of the overall shape is this share of the
expected L1 noise of the counts given that value (leaves · b), against their noisy total. A
public constant. A parent value of a few records next to the noise then follows the column's
overall shape; a common one keeps its own, and with it the zeros of a table's logic. With the
whole L1 noise (1), the customer table's worst add-on service broke its undeclared rule in
7.4–10 % of the rows at ε = 1 (PrivPfC, DiffGen, the projected histogram); with 0.1, in
4.3–7.3 % (MST: 6.4 %), with a closer 2-way TVD, while Adult and the generated table moved by at
most 0.001 (DiffMulti: 28 % either way, before its columns were drawn jointly;
benchmarks/fidelity.py, 3 seeds)."""


class MarginalFiller:
    """The paid marginals that give a synthetic table the data's shape (an extension beyond the
    papers): values of the columns a release carries no information on, and values inside the
    released cells of the modelled ones (:mod:`dpexplore.publish.shape`).

    Built BEFORE the first spend from the training data (the leaf code of every value of every
    predictor, on its :func:`marginal_taxonomy`, the class of every record, and the row weights of
    a CountTable), so bad data fails before anything is spent. :meth:`release` then, after the
    method's private model selection, spends ``epsilon`` (split evenly, sequentially) on a Laplace
    marginal of each column it is given over its declared domain: one-way, or for a column the
    method does not model a two-way table with a privately chosen parent (the class or another
    column: a synthetic value is drawn given its row's parent value, so the column keeps its
    strongest relation), ledger "marginal: <column>"; then it drops the codes. ``class_marginal``: the class
    column too, for a method whose released counts misstate the class shares (the thresholded
    projected histogram). Not in the papers: an extension, documented as such in every ledger and
    docstring.

    Nothing is paid for what a declared rule fixes (:attr:`~dpexplore.domain.Schema.rules`): the
    marginal of a rule column counts only the records where it is free (its source's value is
    not mapped), over its free labels (ledger "marginal: <column> (where free)"); its mapped labels
    are structural zeros, released as 0 without a measurement. The records still fall in one cell each at most, so the sensitivity
    is unchanged; as a parent of another column it keeps every label.
    """

    def __init__(self, schema: Schema, X: pd.DataFrame | None = None, table: Any = None,
                 taxonomies: dict | None = None, codes: dict | None = None, weights: Any = None,
                 y: Any = None, class_marginal: bool = False):
        self.taxonomies = {}
        self._codes: dict[str, np.ndarray] = {}
        self._weights = None
        self.n_classes, self.target = schema.n_classes, schema.target
        # the class of every record: ``y`` (records), ``codes[target]`` or the table's class codes
        if y is not None:
            self._classes = schema.encode_target(y)
        elif codes is not None and schema.target in codes:
            self._classes = np.asarray(codes[schema.target], dtype=np.int64)
        elif table is not None:
            self._classes = np.asarray(table.class_codes, dtype=np.int64)
        else:
            self._classes = None
        if class_marginal and self._classes is not None:
            self.taxonomies[schema.target] = Taxonomy.flat(schema.target, schema.classes)
            self._codes[schema.target] = self._classes
        for a in schema.predictors:
            tax = (taxonomies or {}).get(a) or marginal_taxonomy(schema[a])
            self.taxonomies[a] = tax
            if codes is not None and a in codes:
                self._codes[a] = np.asarray(codes[a], dtype=np.int64)
            elif table is not None and tax is schema[a].taxonomy:
                self._codes[a] = np.asarray(table.leaf_codes[a], dtype=np.int64)
            elif X is not None:
                self._codes[a] = np.asarray(tax.leaf_codes(X[a]), dtype=np.int64)
        if codes is not None:
            self._weights = None if weights is None else np.asarray(weights, dtype=float)
        elif table is not None:
            self._weights = np.asarray(table.counts, dtype=float)
        self._fixed = self._rule_cells(schema)

    # ------------------------------------------------------------------ declared rules
    def _rule_cells(self, schema: Schema) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Per rule column with codes: (True for each record where its rule fixes it, True for
        each of its marginal leaves that is a mapped label): what its marginal leaves out."""
        out = {}
        for name, source in schema.rules.items():
            if name in self._codes and source in self._codes:
                mapping = schema[name].rule["mapping"]
                source_leaves = np.asarray(self.taxonomies[source].leaves, dtype=object)
                fixed = np.isin(source_leaves[self._codes[source]], list(mapping))
                out[name] = fixed, np.isin(np.asarray(self.taxonomies[name].leaves, dtype=object),
                                           list(schema[name].fixing_values))
        return out

    def _free_weights(self, a: str) -> np.ndarray | None:
        """The records' weights in the marginal of ``a``: 0 where a declared rule fixes it."""
        if a not in self._fixed:
            return self._weights
        free = (~self._fixed[a][0]).astype(float)
        return free if self._weights is None else free * self._weights

    def _without_fixed(self, a: str, noisy: np.ndarray) -> np.ndarray:
        """``noisy`` (leaves first) with the mapped labels of ``a``'s rule at 0: the free records
        never hold them, so these cells are structural zeros, not measurements."""
        if a in self._fixed:
            noisy = noisy.copy()
            noisy[self._fixed[a][1]] = 0.0
        return noisy

    def release(self, columns: Sequence[str], epsilon: float, accountant: Any, rng: np.random.Generator,
                joint: Sequence[str] = (), neighbours: str = ADD_REMOVE) -> dict[str, np.ndarray]:
        """Noisy marginal of each column, one ε/m spend per column (m = len(columns): sequential
        composition; ledger "marginal: <column>"), Laplace noise on counts over a partition of the
        records (a record is in one of its cells), calibrated to the release's ``neighbours``
        (:func:`~dpexplore.sensitivity.sum_sensitivity`: 1 under add/remove, 2 under substitution,
        where a replaced record leaves one cell and enters another):

        * a column of ``joint`` (in that order; the classes must be known) gets a parent: the
          class, a column not in ``joint``, or an earlier one of ``joint``, chosen privately
          with :data:`PARENT_SELECTION_SHARE` of its ε (none when the class
          is the only candidate), then its table leaves × the parent's leaves is measured with the
          rest (a tree of two-way marginals, as in PrivBayes, Zhang et al. 2017, §4, with degree
          1). The score of a parent is the number of records whose leaf is the most common one
          given the parent's leaf, Σ_u max_v T(v, u) (u the parent's leaf, v the column's)
          (sensitivity 1 under both relations: a record adds 0 or 1 to it, a monotone score,
          :func:`~dpexplore.sensitivity.utility_sensitivity`, so under add/remove the mechanism
          drops its factor 2), less :data:`PARENT_NOISE_PENALTY` times the expected L1 noise of
          its table, |cells|·Δ/ε_table (public). The parent is drawn by permute-and-flip
          (:func:`~dpexplore.mechanisms.permute_and_flip`: the same ε as the exponential
          mechanism, and surer of a clear leader: phone service as multiple lines' parent on the
          customer table at ε = 1, about 1 chance in 2 instead of 2 in 5). ``self.parents``
          says which. Only when that ε is at least :data:`PARENT_MIN_EPSILON` (public: ε and
          the number of columns decide it); below, the column is measured one-way;
        * another column: one-way over its leaves; the class column over the classes.
        """
        out: dict[str, np.ndarray] = {}
        columns = list(columns)
        self.parents = {}
        if not columns:
            self._codes, self._classes, self._fixed = {}, None, {}
            return out
        each = float(epsilon) / len(columns)
        joint = [a for a in joint if a in columns] if self._classes is not None else []
        delta, score_delta = sum_sensitivity(neighbours), utility_sensitivity(1.0, neighbours, monotone=True)
        for a in columns:
            if a not in self._codes:
                raise ValueError(f"no data for the marginal of {a!r}")
            size = len(self.taxonomies[a].leaves)
            spent = accountant.spend(each, f"marginal: {a}" + (" (where free)" if a in self._fixed else ""))
            if a in joint and spent * PARENT_SELECTION_SHARE >= PARENT_MIN_EPSILON:
                candidates = ([self.target] + [p for p in self._codes if p not in joint and p != self.target]
                              + joint[:joint.index(a)])
                tables = [self._table(p, a, size) for p in candidates]
                if len(candidates) == 1:                   # nothing to choose: all of it measures the table
                    pick, eps_table = 0, spent
                else:
                    eps_table = spent * (1.0 - PARENT_SELECTION_SHARE)
                    scores = [t.max(axis=1).sum() - PARENT_NOISE_PENALTY * t.size * delta / eps_table
                              for t in tables]
                    pick = mechanisms.permute_and_flip(scores, epsilon=spent * PARENT_SELECTION_SHARE,
                                                       sensitivity=score_delta, random_state=rng,
                                                       monotone=neighbours == ADD_REMOVE)
                self.parents[a] = candidates[pick]
                counts, eps_counts = tables[pick].T, eps_table              # leaves × parent leaves
            else:
                counts = np.bincount(self._codes[a], weights=self._free_weights(a), minlength=size).astype(float)
                eps_counts = spent
            out[a] = self._without_fixed(a, np.asarray(
                mechanisms.laplace(counts, epsilon=eps_counts, sensitivity=delta, random_state=rng), dtype=float))
        self._codes, self._classes, self._fixed = {}, None, {}   # the private codes are not kept
        return out

    def _table(self, parent: str, a: str, size: int) -> np.ndarray:
        """The true counts parent leaf × leaf of ``a`` (NOT private: an input of the mechanism)."""
        if parent == self.target:
            codes, width = self._classes, self.n_classes
        else:
            codes, width = self._codes[parent], len(self.taxonomies[parent].leaves)
        return np.bincount(codes * size + self._codes[a], weights=self._free_weights(a),
                           minlength=width * size).astype(float).reshape(width, size)


def _cast_like(values: np.ndarray, attr: Any) -> Any:
    """Synthetic values of ``attr`` in the schema's type: int64 for integer attributes, float64
    for other numeric ones, the declared category labels for categorical ones. Decided by the
    schema only, so every engine (records, pandas, DuckDB, Spark) gives the same frame; a caller
    who wants the categories back in its own column types maps them (e.g. dpexplore.tables)."""
    if attr.kind == "numeric":
        return np.asarray(values).astype(np.int64 if attr.integer else float)
    return values


def _entry_classes(shape: tuple, classes: Any = None) -> np.ndarray | None:
    """The class of each (cell, class) entry, in C order, of a table of ``shape``: its column when
    the classes are its columns; with one column, ``classes`` (the class of each cell, or None)."""
    n_cells, width = int(shape[0]), int(shape[1])
    if width > 1:
        return np.tile(np.arange(width), n_cells)
    return None if classes is None else np.asarray(classes, dtype=np.int64)


class CompleteSynthetic:
    """Mixin: the bookkeeping of complete synthetic tables, shared by the four publishers.

    A fit calls :meth:`_prepare_filler` before its first spend (it returns the filler holding the
    private codes, kept in a local variable, never on the estimator) and :meth:`_fill_marginals`
    after its model selection (inside its ledger); ``synthetic`` calls :meth:`_complete` on the
    modelled columns it made.
    """

    def _check_complete_params(self) -> None:
        check_marginal_share(self.marginal_share)
        check_row_cap(self.max_synthetic_rows)

    def _model_epsilon(self) -> float:
        """The ε the method itself runs on: (1 - marginal_share)·epsilon."""
        return float(self.epsilon) * (1.0 - float(self.marginal_share))

    def _prepare_filler(self, schema: Schema, X: Any = None, table: Any = None,
                        **kwargs) -> "MarginalFiller | None":
        return MarginalFiller(schema, X=X, table=table, **kwargs) if float(self.marginal_share) > 0 else None

    def _fill_marginals(self, modelled: Sequence[str], accountant: Any, rng: np.random.Generator,
                        filler: "MarginalFiller | None", exact: Sequence[str] = ()) -> None:
        """After the model is chosen: pay the marginals (when ``marginal_share`` > 0, split evenly)
        of every predictor except the modelled ones in ``exact`` (released cells that are already
        single leaves of the marginal: a marginal adds nothing there), and of the class when the
        filler holds it. Each paid predictor gets a privately chosen parent (the class, a column
        drawn before it: ``marginal_parents_``) and its two-way table with it
        (``joint_marginals_``, leaves × parent leaves) when the ε allows a choice
        (:data:`PARENT_MIN_EPSILON`), else a one-way marginal. An unmodelled column is drawn given
        its row's parent value; a modelled one (whose coarse relation to the others is in the
        released cells) shapes its values inside their released cells, given its parent's value
        (:mod:`dpexplore.publish.shape`); modelled columns are drawn first. Sets
        ``column_sources_`` (a rule column's entry also names the column that fixes it,
        ``"fixed_by"``: its marginal is paid for the free rows only), ``marginals_`` (one-way: a
        two-way table summed over its parent) and those two. Their counts follow the leaf order
        of each column's marginal taxonomy (its declared taxonomy's leaves, which can group the
        categories in another order than the schema's list; the class: the schema's classes)."""
        schema = self.schema_
        modelled = [a for a in schema.predictors if a in set(modelled)]
        rest = [a for a in schema.predictors if a not in set(modelled)]
        paid = [a for a in schema.predictors if a in set(rest) or a not in set(exact)]
        if filler is not None and schema.target in filler.taxonomies:
            paid.append(schema.target)
        share = float(self.epsilon) * float(self.marginal_share)
        self.marginals_, self.joint_marginals_, self.marginal_parents_ = {}, {}, {}
        self._marginal_taxonomies = {}
        if filler is not None and paid:
            shaped = [a for a in modelled if a in paid]   # drawn inside their cells, before the rest
            noisy_marginals = filler.release(paid, share, accountant, rng, joint=shaped + rest,
                                             neighbours=self.neighbours)
            for a, noisy in noisy_marginals.items():
                if noisy.ndim == 2:                      # a two-way table: the one-way marginal is its sum
                    self.joint_marginals_[a] = noisy
                self.marginals_[a] = noisy.sum(axis=1) if noisy.ndim == 2 else noisy
            self.marginal_parents_ = dict(filler.parents)
            self._marginal_taxonomies = {a: filler.taxonomies[a] for a in paid}
            self._parent_taxonomies = {p: filler.taxonomies[p] for p in self.marginal_parents_.values()
                                       if p != schema.target}
            # the Laplace scale Δ/ε of a two-way table's counts, and of a one-way marginal's
            self._joint_scale = (len(paid) / (share * (1.0 - PARENT_SELECTION_SHARE))
                                 * sum_sensitivity(self.neighbours))
            self._one_way_scale = len(paid) / share * sum_sensitivity(self.neighbours)
        model_eps = self._model_epsilon()
        each = share / len(paid) if self.marginals_ else 0.0
        sources = {a: {"source": "modelled", "epsilon": model_eps} for a in modelled}
        for a in modelled:
            if a in self.marginals_:
                sources[a]["marginal_epsilon"] = each
                if a in self.marginal_parents_:
                    sources[a]["given"] = self.marginal_parents_[a]
        for a in rest:
            if a in self.marginals_:
                sources[a] = {"source": "marginal", "epsilon": each}
                if a in self.marginal_parents_:
                    sources[a]["given"] = self.marginal_parents_[a]
            else:
                sources[a] = {"source": "uniform", "epsilon": 0.0}
        for a, source in schema.rules.items():
            sources[a]["fixed_by"] = source
        sources[schema.target] = {"source": "modelled", "epsilon": model_eps}
        if schema.target in self.marginals_:
            sources[schema.target]["marginal_epsilon"] = each
        self.column_sources_ = {a: sources[a] for a in schema.predictors + [schema.target]}

    def _fill_column(self, a: str, n: int, rng: np.random.Generator, generalized: bool,
                     parent: np.ndarray | None = None) -> np.ndarray:
        """``n`` values of an unmodelled column: from its noisy marginal (nearest non-negative
        counts, normalised), given each row's parent leaf (``parent``) when it has a two-way
        table (:meth:`_conditional`), the rows of each parent leaf together by systematic
        sampling (:func:`~dpexplore.publish.shape.draw_leaves`); else uniform over its declared
        domain (the papers' rule; "generalized": the root label)."""
        attr = self.schema_[a]
        if a in getattr(self, "marginals_", {}):
            tax = self._marginal_taxonomies[a]
            joint = a in getattr(self, "joint_marginals_", {}) and parent is not None
            groups = np.asarray(parent, dtype=np.int64) if joint else np.zeros(n, dtype=np.int64)
            codes = np.zeros(n, dtype=np.int64)
            for v in np.unique(groups):
                rows = np.flatnonzero(groups == v)
                p = self._conditional(a, int(v)) if joint else consistent_counts(self.marginals_[a])
                codes[rows] = draw_leaves(p, rows.size, rng)
            return _sample_leaves(attr, tax, codes, rng, generalized)
        tax = marginal_taxonomy(attr)
        if generalized:
            return np.full(n, tax.root_label if hasattr(tax, "root_label") else "Any", dtype=object)
        return sample_within(attr, tax, 0, np.zeros(n, dtype=np.int64), rng)

    def _complete(self, frame: pd.DataFrame, rng: np.random.Generator, generalized: bool = False,
                  cells: dict | None = None, row_cells: Any = None) -> pd.DataFrame:
        """Every declared column in schema order (:attr:`~dpexplore.domain.Schema.columns`):
        unmodelled columns filled (:meth:`_fill_column`); a modelled column with a noisy marginal
        whose released cells are given in ``cells`` ({column: NodeCells or IntervalCells, one
        entry per released cell; ``row_cells`` the cell of every row}) is drawn inside each row's
        cell, with the other such columns (:meth:`_redraw_in_cells`); derived columns
        are computed from their source column; values in the schema's types (unless
        ``generalized``: node labels are text, derived columns their root label). Every declared
        rule holds in every row (:meth:`_keep_rules`, as soon as a rule column and its source are drawn)."""
        schema = self.schema_
        n = len(frame)
        data = {}
        sources = getattr(self, "column_sources_", {})
        modelled = [a for a in schema.predictors
                    if sources.get(a, {}).get("source", "modelled") == "modelled" and a in frame.columns]
        for a in modelled:
            values = frame[a].to_numpy()
            data[a] = values if generalized else _cast_like(values, schema[a])
        shaped = [] if generalized else self._shaped(cells)
        self._redraw_in_cells([a for a in modelled if a in shaped], data, cells, row_cells,
                              frame[schema.target], rng)
        kept: set[str] = set()
        self._keep_rules(data, kept, rng)
        for a in schema.predictors:            # then the others, each after its parent
            if a not in modelled:
                parent = None if generalized else self._parent_codes(a, data, frame[schema.target])
                values = self._fill_column(a, n, rng, generalized, parent)
                data[a] = values if generalized else _cast_like(values, schema[a])
                self._keep_rules(data, kept, rng)
        for name, attr in schema.derived.items():
            data[name] = (np.full(n, attr.taxonomy.root_label, dtype=object) if generalized
                          else attr.derive(data[attr.source]))
        data[schema.target] = frame[schema.target].to_numpy()
        return pd.DataFrame(data, columns=schema.columns + [schema.target])

    def _keep_rules(self, data: dict, kept: set, rng: np.random.Generator) -> None:
        """Post-processing that makes the drawn rows keep every declared rule
        (:attr:`~dpexplore.domain.Schema.rules`) whose column and source are both in ``data``
        and not yet in ``kept``: a row whose source value is mapped gets the mapped label; a row
        whose source value is a free category but that holds a mapped label is redrawn among the
        free labels, from the column's noisy marginal restricted to them when paid, else
        uniformly (systematic sampling, :func:`~dpexplore.publish.shape.draw_leaves`)."""
        for name, source in self.schema_.rules.items():
            if name in kept or name not in data or source not in data:
                continue
            kept.add(name)
            attr = self.schema_[name]
            values = np.asarray(data[name], dtype=object).copy()
            source_text = pd.Series(np.asarray(data[source], dtype=object)).astype(str)
            fixed = source_text.map(attr.rule["mapping"]).to_numpy(dtype=object)
            is_fixed = ~pd.isna(fixed)
            values[is_fixed] = fixed[is_fixed]
            free_source = ~is_fixed & source_text.isin(self.schema_[source].categories).to_numpy()
            redraw = np.flatnonzero(free_source & np.isin(values.astype(str), list(attr.fixing_values)))
            if redraw.size:
                free = list(attr.free_labels)
                values[redraw] = np.asarray(free, dtype=object)[draw_leaves(self._free_label_weights(name, free), redraw.size, rng)]
            data[name] = values if np.asarray(data[name]).dtype == object else values.astype(np.asarray(data[name]).dtype)

    def _free_label_weights(self, name: str, free: list[str]) -> np.ndarray:
        """The weights of the free labels of a rule column: its noisy marginal's nearest
        non-negative counts when paid (on its own leaves), else equal (uniform)."""
        marginal = getattr(self, "marginals_", {}).get(name)
        tax = getattr(self, "_marginal_taxonomies", {}).get(name)
        if marginal is None or tax is None or not set(free) <= set(tax.leaves):
            return np.ones(len(free))
        counts = consistent_counts(marginal)
        weights = np.asarray([counts[list(tax.leaves).index(label)] for label in free])
        return weights if weights.sum() > 0 else np.ones(len(free))

    def _shaped(self, cells: dict | None) -> list[str]:
        """The columns of ``cells`` drawn from their noisy marginal inside their cells: those with a
        marginal over every record (:meth:`_full_marginal`) whose node cells (if nodes) are on the
        marginal's own taxonomy."""
        marginals = getattr(self, "marginals_", None)
        if not cells or not marginals:
            return []
        return [a for a, c in cells.items() if a in marginals and self._full_marginal(a) is not None
                and (isinstance(c, IntervalCells) or self._marginal_taxonomies[a] is self.schema_[a].taxonomy)]

    def _modelled_in_cells(self, cells: dict | None) -> list[str]:
        """The columns of :meth:`_shaped` that the release models (its cells say something of them;
        the others' cells are their whole domain), in schema order."""
        shaped = set(self._shaped(cells))
        sources = getattr(self, "column_sources_", {})
        return [a for a in self.schema_.predictors
                if a in shaped and sources.get(a, {}).get("source", "modelled") == "modelled"]

    def _full_marginal(self, a: str) -> np.ndarray | None:
        """The noisy one-way marginal of ``a`` over every record. A rule column's paid marginal
        counts its free records only: a mapped label then gets the source's noisy count of the
        values mapped to it (post-processing of released marginals); None when the source has
        no paid marginal."""
        source = self.schema_.rules.get(a)
        if source is None:
            return self.marginals_[a]
        if source not in self.marginals_:
            return None
        full = np.array(self.marginals_[a], dtype=float)
        own = list(self._marginal_taxonomies[a].leaves)
        source_leaves = list(self._marginal_taxonomies[source].leaves)
        for value, label in self.schema_[a].rule["mapping"].items():
            full[own.index(label)] += self.marginals_[source][source_leaves.index(value)]
        return full

    def _copies(self, noisy: np.ndarray, size: int, cells: dict | None = None, classes: Any = None) -> np.ndarray:
        """Synthetic rows per released (cell, class), ``size`` in all, flat: :func:`apportion` of the
        noisy counts (the papers' rule), or, when the release keeps the data's shape, the
        cumulative :func:`apportion` of :meth:`_copy_weights`; cells that break a declared rule
        first get 0 (:meth:`_without_impossible_cells`)."""
        weights = self._copy_weights(self._without_impossible_cells(noisy, cells), cells, classes)
        return apportion(weights, size, cumulative=bool(getattr(self, "marginals_", None)))

    def _without_impossible_cells(self, weights: np.ndarray, cells: dict | None) -> np.ndarray:
        """``weights`` (one row per released cell) with 0 for each cell in which no combination of
        a rule column's and its source's values keeps the declared rule (a structural zero: e.g.
        "internet: No" × "security: Yes"), so its noise gets no rows. Post-processing of public
        cells; unchanged without rules or cells."""
        rules = [(n, s) for n, s in self.schema_.rules.items()
                 if cells and isinstance(cells.get(n), NodeCells) and isinstance(cells.get(s), NodeCells)]
        if not rules:
            return weights
        weights = np.array(weights, dtype=float)
        flat = weights.reshape(weights.shape[0], -1)
        for name, source in rules:
            attr, src = self.schema_[name], self.schema_[source]
            inside = []
            for a in (src, attr):
                groups, share, _ = cells[a.name].overlap(a, a.taxonomy)
                inside.append(share[groups] > 0)                 # cells × leaves
            leaves = np.asarray(src.taxonomy.leaves, dtype=object), np.asarray(attr.taxonomy.leaves, dtype=object)
            pairs = np.meshgrid(*leaves, indexing="ij")
            allowed = ~attr.rule_breaks(pairs[0].ravel(), pairs[1].ravel()).reshape(pairs[0].shape)
            possible = ((inside[0].astype(float) @ allowed.astype(float)) * inside[1]).sum(axis=1) > 0
            flat[~possible] = 0.0
        return weights

    def _copy_weights(self, noisy: np.ndarray, cells: dict | None = None, classes: Any = None) -> np.ndarray:
        """What the rows of each released (cell, class) are apportioned by: the noisy counts (the
        papers' rule), or, when the release keeps the data's shape (marginals paid), one fit of
        all of the release's measurements (an extension; in the spirit of Private-PGM, McKenna,
        Sheldon & Miklau 2019, with raking in place of its solver):

        * start: the nearest non-negative counts summing to the record count that every released
          total implies (:func:`~dpexplore.publish.shape.consistent_counts`,
          :meth:`_record_total`); where the counts are mostly noise (:data:`MODEL_PRIOR_NOISE`),
          :data:`MODEL_PRIOR_SHARE` of it spread by the marginals' tree model
          (:meth:`_model_prior`), so a cell whose count the noise hid can still get rows;
        * raked (:func:`~dpexplore.publish.shape.rake`) to the noisy one-way marginals of the
          columns of ``cells``, then to their two-way tables with their parents
          (:meth:`_pair_margins`), and to the class totals (:meth:`_class_totals`; for a flat
          table, one count per released cell with ``classes`` the class of each, the totals of
          the class marginal and the tables whose parent is the class, since its own counts are
          thresholded);
        * each count staying within the noise its release could hold,
          :func:`~dpexplore.publish.sparse_histogram.noise_ceiling` of its public Laplace scale
          (``_count_scale``), so a lone noisy cell is not inflated to carry a marginal; the class
          totals, met last, are not held by it (a threshold that kept few cells leaves the mass it
          dropped spread evenly, and the band would hold its class shares there).

        Post-processing of released values only."""
        if not getattr(self, "marginals_", None):
            return noisy
        margins = []
        for a in self._shaped(cells):
            tax, marginal = self._marginal_taxonomies[a], self._full_marginal(a)
            groups, prob, _ = leaf_probabilities(self.schema_[a], tax, marginal, cells[a])
            margins.append((groups, prob, consistent_counts(marginal)))
        noisy = np.asarray(noisy, dtype=float)
        table = noisy.reshape(noisy.shape[0], -1)                     # (cell, class): classes as columns
        margins += self._pair_margins(cells, table.shape, classes)
        total = self._record_total()[0]
        start = consistent_counts(table, total=total)
        # the prior, only where the counts' expected L1 noise (m·b) is at least twice the records
        sparse = table.size * self._count_scale() >= MODEL_PRIOR_NOISE * total
        prior = self._model_prior(cells, table.shape, classes) if sparse else None
        if prior is not None:
            start = (1.0 - MODEL_PRIOR_SHARE) * start + MODEL_PRIOR_SHARE * total * prior.reshape(start.shape)
        # the class totals: over the class columns, or over the cells of each class of a flat table
        # (whose counts, thresholded, are left out of them)
        flat = table.shape[1] == 1 and classes is not None
        totals = self._class_totals(table) if table.shape[1] > 1 else self._class_totals(None) if flat else None
        return rake(start, margins, class_totals=totals, band=noise_ceiling(self._count_scale(), table.size),
                    class_of=np.asarray(classes, dtype=np.int64) if flat else None).reshape(noisy.shape)

    def _model_prior(self, cells: dict, shape: tuple, classes: Any = None) -> np.ndarray | None:
        """The share of the records that the marginals' tree model (:meth:`_cell_tree`) puts in
        each (cell, class) entry of a table of ``shape``: the chance of the cell's values of the
        columns drawn in their cells, times its class's share. None without such columns."""
        shaped = self._modelled_in_cells(cells)
        if not shaped:
            return None
        n_cells, width = int(shape[0]), int(shape[1])
        entry_class = _entry_classes(shape, classes)
        entry_cell = np.repeat(np.arange(n_cells), width)
        target = self.schema_.target
        tree, given = self._cell_tree(shaped, {a: cells[a].take(entry_cell) for a in shaped},
                                      lambda a: entry_class if self.marginal_parents_.get(a) == target else None)
        z = tree.likelihood(given)
        if entry_class is not None:
            shares = self._class_totals(None) if width > 1 else None
            if shares is not None and shares.sum() > 0:
                z = z * (shares / shares.sum())[entry_class]
        return z / z.sum() if z.sum() > 0 else None

    def _class_totals(self, table: np.ndarray | None) -> np.ndarray | None:
        """Each class's record count from every release of it, weighted by the inverse of their
        public noise variances: ``table``'s class columns summed over its cells (the release's
        counts), the paid class marginal, and each two-way table whose parent is the class
        summed over the column's leaves (a rule column's, which counts free records only, left out)."""
        estimates = [] if table is None else [(table.sum(axis=0), table.shape[0] * 2.0 * self._count_scale() ** 2)]
        target = self.schema_.target
        if target in self.marginals_:
            estimates.append((np.asarray(self.marginals_[target], dtype=float), 2.0 * self._one_way_scale ** 2))
        for a, joint in self.joint_marginals_.items():
            if self.marginal_parents_.get(a) == target and a not in self.schema_.rules:
                estimates.append((joint.sum(axis=0), joint.shape[0] * 2.0 * self._joint_scale ** 2))
        if not estimates:
            return None
        weights = np.array([1.0 / max(v, 1e-12) for _, v in estimates])
        return np.clip(sum(w * np.asarray(t, dtype=float) for w, (t, _) in zip(weights, estimates)) / weights.sum(),
                       0.0, None)

    def _record_total(self) -> tuple[float, float]:
        """The record count from every released total, and its noise's standard deviation: the
        release's own (:meth:`_size_total`) and, with marginals paid, each marginal's sum, weighted
        by the inverse of their public noise variances (cells × 2b²; a rule column's marginal
        counts its free records only: left out). On DiffGen's 34,560 counts at ε = 1 the table's
        own total has a standard deviation of ~950 records; its marginals bring it to ~30."""
        total, sd = self._size_total()
        estimates = [(float(total), float(sd) ** 2)]
        for a, noisy in getattr(self, "marginals_", {}).items():
            if a in self.schema_.rules:
                continue
            joint = self.joint_marginals_.get(a)
            scale = self._joint_scale if joint is not None else self._one_way_scale
            estimates.append((float(np.sum(noisy)), (joint if joint is not None else noisy).size * 2.0 * scale ** 2))
        if len(estimates) == 1:
            return float(total), float(sd)
        weights = np.array([1.0 / max(v, 1e-12) for _, v in estimates])
        return float(np.dot(weights, [t for t, _ in estimates]) / weights.sum()), float(1.0 / np.sqrt(weights.sum()))

    def _pair_margins(self, cells: dict, shape: tuple, classes: Any = None) -> list:
        """The two-way tables (column given parent, :meth:`MarginalFiller.release`) of the modelled
        columns drawn in their cells (:meth:`_modelled_in_cells`) whose parent is the class or
        another of them, as
        margins of :func:`~dpexplore.publish.shape.rake` over the (cell, class) entries of a table
        of ``shape`` (classes as columns, or one column with ``classes`` the class of each cell).
        Inside a pair of cells, a pair of leaves weighs its nearest non-negative count in the table
        (uniform over the cells when all are 0), so a released cell whose pair of values the table
        holds no records of (e.g. "no internet" × "online security: yes") loses its weight.
        Rule columns are left to their rule. Post-processing of released counts and cells."""
        shaped = self._modelled_in_cells(cells)
        width = int(shape[1])
        entry_class = _entry_classes(shape, classes)
        out = []
        for a in shaped:
            parent = self.marginal_parents_.get(a)
            if a not in self.joint_marginals_ or a in self.schema_.rules:
                continue
            if parent == self.schema_.target and entry_class is not None:
                n = self.schema_.n_classes
                parent_group, parent_share, parent_uniform = entry_class, np.eye(n), np.eye(n)
            elif parent in shaped:
                g, parent_share, parent_uniform, _ = cell_shares(
                    self.schema_[parent], self._marginal_taxonomies[parent], cells[parent])
                parent_group = np.repeat(g, width)
            else:
                continue
            g, share, uniform, _ = cell_shares(self.schema_[a], self._marginal_taxonomies[a], cells[a])
            keys, pair = np.unique(np.column_stack([parent_group, np.repeat(g, width)]), axis=0, return_inverse=True)
            joint = consistent_counts(self.joint_marginals_[a]).T              # parent leaves × leaves
            prob = joint[None] * parent_share[keys[:, 0]][:, :, None] * share[keys[:, 1]][:, None, :]
            even = parent_uniform[keys[:, 0]][:, :, None] * uniform[keys[:, 1]][:, None, :]
            empty = prob.sum(axis=(1, 2)) <= 0
            prob[empty] = even[empty]
            prob = prob.reshape(len(keys), -1)
            total = prob.sum(axis=1, keepdims=True)
            out.append((np.ravel(pair), prob / np.where(total > 0, total, 1.0), joint.ravel()))
        return out

    def _parent_codes(self, a: str, data: dict, target: Any) -> np.ndarray | None:
        """The leaf of each synthetic row's value of ``a``'s parent (its class index, or the leaf
        on the parent's marginal taxonomy of the value already drawn), or None without one."""
        parent = getattr(self, "marginal_parents_", {}).get(a)
        if parent is None:
            return None
        if parent == self.schema_.target:
            return self.schema_.encode_target(target)
        return np.asarray(self._parent_taxonomies[parent].leaf_codes(pd.Series(data[parent])), dtype=np.int64)

    def _conditional(self, a: str, v: int) -> np.ndarray:
        """The leaf distribution of column ``a`` given its parent's leaf ``v`` (sums to 1, or all
        0): the nearest non-negative counts of that column of its two-way table, shrunk towards
        the column's one-way marginal by the noise they carry, (n_v·p_v + λ·p) / (n_v + λ), with
        n_v their noisy total and λ = :data:`CONDITIONAL_SHRINK` × leaves × the Laplace scale: a
        parent value with few records next to the noise follows the column's overall shape, a
        common one its own. Post-processing of released counts."""
        table = self.joint_marginals_[a]
        overall = consistent_counts(self.marginals_[a])
        overall = overall / overall.sum() if overall.sum() > 0 else overall
        own = consistent_counts(table[:, v])
        n_v, lam = float(own.sum()), CONDITIONAL_SHRINK * table.shape[0] * self._joint_scale
        own = own / n_v if n_v > 0 else own
        return (n_v * own + lam * overall) / (n_v + lam)

    def _conditional_table(self, a: str) -> np.ndarray:
        """Parent leaves × leaves of ``a``: :meth:`_conditional` for each parent leaf; a rule column
        whose parent is its source (a declared rule, public) holds its mapped label for each mapped
        source value."""
        table = np.stack([self._conditional(a, v) for v in range(self.joint_marginals_[a].shape[1])])
        source = self.schema_.rules.get(a)
        if source is not None and self.marginal_parents_.get(a) == source:
            own = list(self._marginal_taxonomies[a].leaves)
            parent_leaves = list(self._marginal_taxonomies[source].leaves)
            for value, label in self.schema_[a].rule["mapping"].items():
                table[parent_leaves.index(value)] = np.eye(len(own))[own.index(label)]
        return table

    def _cell_tree(self, columns: Sequence[str], cells: dict, parent_codes: Any) -> tuple[CellTree, dict]:
        """The tree of ``columns``' distributions in the rows' ``cells`` ({column: NodeCells or
        IntervalCells, one per row}) and each root's conditional row per row: a column's
        distribution given its parent's leaf (:meth:`_conditional_table`); a parent outside
        ``columns`` gives each row's leaf by ``parent_codes(column)`` (None: unknown, the column's
        noisy marginal instead); no parent: the noisy marginal. A rule column whose parent is not
        its source is ``quiet`` (its table counts its free records only)."""
        columns = [a for a in self.schema_.predictors if a in set(columns)]     # each after its parent
        parents, given, conditionals, shares = {}, {}, {}, {}
        for a in columns:
            shares[a] = cell_shares(self.schema_[a], self._marginal_taxonomies[a], cells[a])[:3]
            parent = self.marginal_parents_.get(a) if a in getattr(self, "joint_marginals_", {}) else None
            codes = parent_codes(a) if parent is not None and parent not in columns else None
            if parent is None or (parent not in columns and codes is None):
                conditionals[a], parents[a] = np.clip(self._full_marginal(a), 0.0, None)[None, :], None
            else:
                conditionals[a], given[a] = self._conditional_table(a), codes
                parents[a] = parent if parent in columns else None
        quiet = [a for a in columns
                 if a in self.schema_.rules and self.marginal_parents_.get(a) != self.schema_.rules[a]]
        return CellTree(conditionals, parents, shares, quiet=quiet), given

    def _redraw_in_cells(self, columns: Sequence[str], data: dict, cells: dict, row_cells: Any,
                         target: Any, rng: np.random.Generator) -> None:
        """The values of the modelled ``columns`` (schema order) redrawn inside each row's released
        cell, jointly (:class:`~dpexplore.publish.shape.CellTree`): each from its
        distribution given its parent's leaf (:meth:`_conditional_table`; the class or a column
        outside ``columns``: the row's value; none: the noisy marginal), times what its children
        in ``columns`` need, so a parent value that a child's cell excludes is not drawn (e.g.
        "no internet" in a row whose "online security" cell holds "yes" or "no" only). A rule
        column whose parent is not its source sends no message (its table counts its free
        records only). Rows whose cell holds no declared value keep theirs."""
        if not columns:
            return
        rows = {a: cells[a].take(row_cells) for a in columns}
        tree, given = self._cell_tree(columns, rows, lambda a: self._parent_codes(a, data, target))
        leaves = tree.draw(given, rng)
        for a in columns:
            values = np.array(data[a], dtype=object)
            drawn = leaves[a] >= 0
            new = values_in_cells(self.schema_[a], self._marginal_taxonomies[a], np.maximum(leaves[a], 0),
                                  rows[a], rng)
            values[drawn] = np.asarray(new, dtype=object)[drawn]
            data[a] = _cast_like(values, self.schema_[a])
