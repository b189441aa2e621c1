"""PrivPfC: private publication of a noisy histogram chosen for classification.

Su, Cao, Li & Lyu, "PrivPfC: differentially private data publication for classification",
The VLDB Journal 27(2):201-223, 2018 (Alg. 2).

The method in one sentence: enumerate a data-independent pool of candidate *grids* (one
taxonomy level per attribute), pick one with a single exponential-mechanism call scored by the
expected accuracy of the noisy-histogram classifier, and publish that grid's class counts with
Laplace noise. The budget is split three ways (Alg. 2 line 2): ε_size for the record count N̂,
ε_sel for the selection and ε_pert for the counts (3% / 37% / 60% by default).

Level numbering: our taxonomies count depth from 0 (root); the paper counts levels from 1, so the
paper's level ℓ is our depth ℓ-1 (a grid of depths (0, 2, 1) is the paper's ⟨1, 3, 2⟩).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from .. import mechanisms
from .._validation import (RandomState, check_epsilon, check_fraction_weights, check_int, check_positive,
                           check_random_state)
from ..budget import BudgetAccountant, prepare_accountant
from ..counts import CountTable
from ..domain import PrivacyLeakWarning, Schema
from ..histogram import LevelCodes, noisy_counts, synthetic_from_counts
from ..limits import MAX_GRID_CELLS, MAX_SYNTHETIC_ROWS
from ..models.histogram import HistogramClassifier, generalize
from ..sensitivity import count_sensitivity, sum_sensitivity, utility_sensitivity
from .privpfc_scoring import (CONSTANT_SENSITIVITY, GridScorer, cell_quality, describe_grid,
                              enumerate_grids, exact_cell_quality, grid_quality, quality_sensitivity,
                              win_probability)
from ..inputs import check_release_features
from .base import Modelled, Publisher
from .complete import count_noise_sd
from .histogram_release import HistogramRelease
from .shape import grid_cells

__all__ = ["PrivPfC", "PrivPfCSelNF", "GridScorer", "PrivPfCRun", "run_privpfc", "win_probability",
           "cell_quality", "grid_quality", "exact_cell_quality", "quality_sensitivity", "enumerate_grids",
           "grid_threshold", "describe_grid", "CONSTANT_SENSITIVITY", "MAX_GRID_CELLS", "cell_labels"]


# =========================================================================== candidates (Sec. 5)
def grid_threshold(n_hat: float, epsilon_pert: float, noise_to_signal: float = 0.2) -> float:
    """τ = r·N̂·ε_pert (Eq. 6), capped at the public constant :data:`MAX_GRID_CELLS`.

    The paper's prose after Eq. 7 writes ε for ε_pert: a typo (Eq. 6 and Alg. 2 use ε_pert).
    A function of the DP estimate N̂ and public constants only, so it is post-processing.
    """
    return float(min(noise_to_signal * n_hat * epsilon_pert, MAX_GRID_CELLS))


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


def check_shares(shares: Any) -> np.ndarray:
    """PrivPfC's ``shares`` of ε (Alg. 2 line 2): three positive weights, returned normalised."""
    w = check_fraction_weights(shares, "shares")
    if w.size != 3:
        raise ValueError("shares must hold three weights (record count, grid selection, histogram noise), "
                         f"got {shares!r}")
    return w


def _check_sensitivity(sensitivity: Any) -> str:
    if sensitivity not in SENSITIVITY_MODES:
        raise ValueError(f"sensitivity must be 'exact' (Δ(ε_pert), Lemma 1) or 'constant' (1.1), got {sensitivity!r}")
    return sensitivity


def run_privpfc(scorer: GridScorer, *, epsilon: float, theta: int = 10_000,
                shares: Sequence[float] = (0.03, 0.37, 0.60), noise_to_signal: float = 0.2,
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
    ε is divided by the weights ``shares`` into ε_size, ε_sel and ε_pert (line 2).
    ``private_selection=False`` replaces step 3 by the noise-free argmax (PrivPfC-SelNF, §5.5):
    NOT differentially private, spends no ε_sel, for diagnosing error sources only.
    ``min_records_per_cell`` (None = the paper) lowers τ to N̂ / min_records_per_cell at step 2
    (Alg. 2 line 4, before Enumerate): grids whose expected occupancy N̂/|g| is below it never
    enter the pool. A function of the DP N̂ and a public constant: post-processing, no ε.
    """
    epsilon = check_epsilon(epsilon)
    theta = check_int(theta, "theta", minimum=1)
    w = check_shares(shares)
    ratio = check_positive(noise_to_signal, "noise_to_signal")
    if min_records_per_cell is not None:
        min_records_per_cell = check_positive(min_records_per_cell, "min_records_per_cell")
    mode = _check_sensitivity(sensitivity)
    acc = prepare_accountant(epsilon, accountant)
    rng = check_random_state(random_state)
    eps_size, eps_sel, eps_pert = acc.split(w, total=epsilon)

    n_hat = float(mechanisms.laplace(float(scorer.n_rows), epsilon=acc.spend(eps_size, "record count"),
                                     sensitivity=count_sensitivity(), random_state=rng))
    tau = grid_threshold(n_hat, eps_pert, ratio)
    if min_records_per_cell is not None:   # a dpexplore option, not in the paper
        tau = min(tau, n_hat / min_records_per_cell)
    pool = enumerate_grids(scorer.level_sizes, theta, tau)
    qualities = scorer.score(pool, eps_pert)
    delta = utility_sensitivity(quality_sensitivity(eps_pert) if mode == "exact" else CONSTANT_SENSITIVITY)
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


class PrivPfC(HistogramRelease, Publisher):
    """PrivPfC (Su et al. 2018): a DP noisy histogram on a privately chosen grid, and its classifier.

    Parameters
    ----------
    epsilon : float, default 1.0
        Total privacy budget (pure ε-DP, add/remove-one neighbours).
    theta : int, default 10_000
        Θ, the maximum number of candidate grids in the pool (not a cap on grid size).
    shares : three weights, default (0.03, 0.37, 0.60)
        Shares of ε for the record count, the grid selection and the histogram noise (Alg. 2
        line 2).
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
        PrivPfC on (1 - s)·ε and, after the grid is chosen, spends s·ε on Laplace marginals over
        the taxonomy leaves (split evenly; ledger rows "marginal: <column>"): each two-way with a
        privately chosen parent (``marginal_parents_``) when ε allows the choice, else one-way;
        :meth:`synthetic` draws the root attributes given each row's parent value, and the
        attributes the grid keeps coarser than their leaves inside their cells, given it. An extension beyond the paper (README "Synthetic tables"). If the grid refines every
        attribute to its leaves the share is not spent (``epsilon_spent_``).
    max_synthetic_rows : int, default :data:`dpexplore.limits.MAX_SYNTHETIC_ROWS` (keyword only)
        Public cap on the rows :meth:`synthetic` makes (its size is N̂ clamped to [1, cap]).
    schema : Schema or None, default None (keyword only)
        The public schema (taxonomies, class labels) ``fit(X, y)`` uses; None reads one from the
        data with a :class:`PrivacyLeakWarning`.

    ``fit(X, y)`` for records in memory (``X`` a DataFrame or an array: columns ``x0, x1, …``,
    or the schema's predictors when the widths agree), or ``fit(source)`` for a
    :class:`dpexplore.sources.Source` (pandas, DuckDB, Spark; the target and schema come from it;
    ``classes_`` then follow the type of its target column). Either way the run works on the
    :class:`~dpexplore.counts.CountTable` (occupied cells weighted by their counts): the same
    table and seed give the same release from any engine, and after the table is built the cost
    does not depend on the number of records.

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
    "marginal" or "uniform", with its ε) and ``marginals_`` holds the noisy marginals (in the
    leaf order of each column's taxonomy, which can differ from its list of categories).

    Examples
    --------
    >>> from dpexplore import datasets, sources
    >>> from dpexplore.publish import PrivPfC
    >>> frame, schema = datasets.make_synthetic(n_samples=1000, n_numeric=2, n_categorical=2,
    ...                                         random_state=0)
    >>> model = PrivPfC(epsilon=1.0, random_state=0).fit(sources.pandas(frame, schema))
    >>> list(model.ledger_["label"]), model.epsilon_spent_
    (['record count', 'grid selection', 'histogram counts'], 1.0)
    >>> list(model.synthetic(random_state=0).columns)
    ['num_0', 'num_1', 'cat_0', 'cat_1', 'label']
    >>> X, y = frame.drop(columns=schema.target), frame[schema.target]
    >>> same = PrivPfC(epsilon=1.0, schema=schema, random_state=0).fit(X, y)
    >>> same.grid_ == model.grid_                          # records or a source: the same release
    True
    """

    method = "PrivPfC"
    _private_selection = True
    synthetic_values = ("generalized", "sampled")

    def __init__(self, epsilon: float = 1.0, theta: int = 10_000,
                 shares: Sequence[float] = (0.03, 0.37, 0.60), random_state: RandomState = None,
                 accountant: BudgetAccountant | None = None, *, noise_to_signal: float = 0.2,
                 sensitivity: str = "exact", min_records_per_cell: float | None = None,
                 marginal_share: float = 0.0, max_synthetic_rows: int = MAX_SYNTHETIC_ROWS,
                 schema: Schema | None = None):
        self.epsilon = epsilon
        self.theta = theta
        self.shares = shares
        self.random_state = random_state
        self.accountant = accountant
        self.noise_to_signal = noise_to_signal
        self.sensitivity = sensitivity
        self.min_records_per_cell = min_records_per_cell
        self.marginal_share = marginal_share
        self.max_synthetic_rows = max_synthetic_rows
        self.schema = schema

    # ------------------------------------------------------------------ fit
    def _check_params(self) -> None:
        check_epsilon(self.epsilon)
        check_int(self.theta, "theta", minimum=1)
        check_shares(self.shares)
        check_positive(self.noise_to_signal, "noise_to_signal")
        _check_sensitivity(self.sensitivity)
        if self.min_records_per_cell is not None:
            check_positive(self.min_records_per_cell, "min_records_per_cell")
        check_random_state(self.random_state)

    def _records_data(self, X: pd.DataFrame, y: pd.Series, schema: Schema) -> GridScorer:
        return GridScorer.from_table(CountTable.from_codes(schema, schema.leaf_codes(X), schema.encode_target(y)))

    def _table_data(self, table: CountTable, schema: Schema, source: Any) -> GridScorer:
        return GridScorer.from_table(table)

    def _release(self, scorer: GridScorer, accountant: BudgetAccountant, rng: np.random.Generator,
                 epsilon: float) -> Modelled:
        schema = self.schema_
        run = run_privpfc(scorer, epsilon=epsilon, theta=self.theta, shares=self.shares,
                          noise_to_signal=self.noise_to_signal, sensitivity=self.sensitivity,
                          accountant=accountant, random_state=rng,
                          private_selection=self._private_selection,
                          min_records_per_cell=self.min_records_per_cell)
        # the run's qualities/probabilities read the data without noise: not kept (diagnostics())
        self.epsilon_split_ = dict(run.epsilons)
        self.n_hat_ = run.n_hat
        self.tau_ = run.tau
        self.quality_sensitivity_ = run.sensitivity
        self.grid_ = {a: int(d) for a, d in zip(scorer.attributes, run.grid)}
        self.counts_ = run.noisy_counts
        self.expected_occupancy_ = max(run.n_hat, 0.0) / float(run.noisy_counts.shape[0])
        self.classifier_ = HistogramClassifier.from_counts(self.counts_, self.grid_, schema, classes=self.classes_)
        # marginals of the root attributes; none for those refined to their leaves (extension)
        return Modelled([a for a, d in self.grid_.items() if d > 0],
                        exact=[a for a, d in self.grid_.items() if d == schema[a].taxonomy.height - 1])

    # ------------------------------------------------------------------ release
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
        pool = enumerate_grids(scorer.level_sizes, check_int(self.theta, "theta", minimum=1), self.tau_)
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

    def _count_scale(self) -> float:
        return sum_sensitivity() / float(self.epsilon_split_["histogram counts"])

    def _size_total(self) -> tuple[float, float]:
        return self.n_hat_, count_noise_sd(self.epsilon_split_["record count"])

    def _synthetic_rows(self, size: int, rng: np.random.Generator, values: str,
                        shuffle: bool) -> tuple[pd.DataFrame, dict | None, np.ndarray]:
        """Synthetic records from the noisy histogram (:meth:`synthetic`). Post-processing: no budget.

        Size (a public rule): ``n`` if given, else the DP record count N̂ (``n_hat_``; with marginals
        paid, averaged with their totals, :meth:`~dpexplore.publish.complete.CompleteSynthetic._record_total`), raised to
        the public floor and capped at ``max_synthetic_rows`` (:func:`~dpexplore.publish.complete.synthetic_size`). The rows of each (cell, class) are its noisy count clipped
        at 0, rescaled to that size (largest-remainder rounding; at the paper's scale this is
        round(max(0, count)) copies, Alg. 2 line 22). Refined attributes get node labels
        ("generalized", as the reference code) or values drawn inside the node ("sampled";
        int64 for integer attributes, float64 for others); attributes left at the root are
        drawn from their noisy marginal (``marginal_share`` > 0) or uniformly over the declared
        domain (the paper; "generalized": the root label), see ``column_sources_``. The target
        column holds ``classes_`` (the labels in the type of the training y) and
        :meth:`weighted_table` the release with a weight column. With ``marginal_share`` > 0 the table keeps the data's shape
        (:mod:`dpexplore.publish.shape`): copies from one fit of the counts with the paid marginals
        (:meth:`~dpexplore.publish.complete.CompleteSynthetic._copy_weights`), and values inside
        each cell drawn jointly from the columns' distributions given their parents.
        """
        cells = grid_cells(self.grid_, self.schema_) if getattr(self, "marginals_", None) or self.schema_.rules else None
        reps = self._copies(self.counts_, size, cells).reshape(self.counts_.shape)
        frame = synthetic_from_counts(reps, self.grid_, self.schema_, values=values,
                                      rounding="round", random_state=rng, max_rows=size)
        codes = self.schema_.encode_target(frame[self.schema_.target])
        frame[self.schema_.target] = self.classes_[codes]
        rows = np.repeat(np.arange(reps.size), reps.ravel()) // self.schema_.n_classes   # each row's grid cell
        return frame, cells, rows

    def weighted_table(self) -> pd.DataFrame:
        """The released histogram as generalized records with a ``weight`` column: each (cell,
        class) with a positive rounded noisy count once (round(max(0, count)) copies, Alg. 2 line
        22), every predictor as its node label (the root label when unrefined), the target as
        ``classes_``. Post-processing: no budget."""
        self._check_fitted()
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

    def _predict_proba(self, X: Any) -> np.ndarray:
        """Noisy counts clipped at 0 and normalised per cell."""
        return self.classifier_.predict_proba(check_release_features(self, X, self.schema_.predictors))


class PrivPfCSelNF(PrivPfC):
    """PrivPfC-SelNF: NOT DIFFERENTIALLY PRIVATE. A diagnostic (paper §5.5, Fig. 10).

    The grid is the noise-free argmax of the quality; the record count and the histogram are
    noisy as in PrivPfC. Comparing it with PrivPfC separates the error of private selection
    from the error of the count noise. Its ledger does not cover the selection, which reads the
    data without noise; a :class:`PrivacyLeakWarning` says so on every fit.
    """

    method = "PrivPfC-SelNF (non-private diagnostic)"
    _private_selection = False



# =========================================================================== tables
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
