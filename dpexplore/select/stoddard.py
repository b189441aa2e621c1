"""Private feature selection from Stoddard, Chen & Machanavajjhala (2014), with its flaws exposed.

Stoddard et al. 2014, §3 (feature selection). Features are binary (0/1), the label is
binary, neighbours add or remove one record. The scores and their per-score sensitivities come
from :mod:`dpexplore.select.scores`.

Sound selectors (scikit-learn transformers: ``fit`` / ``transform`` / ``get_support``):

* :class:`ScorePerturbationSelector` — SP (§3.2): Laplace of scale S(Q)·Δ(Q)/ε on every score,
  then a threshold τ or the top k.
* :class:`ExponentialTopKSelector` — the exponential mechanism over k-subsets, one shot
  (:func:`dpexplore.mechanisms.exponential_subset`) or by peeling (k rounds at ε/k) (McSherry & Talwar 2007; thesis §3.5.5).
* :class:`SparseVectorSelector` — the sparse vector technique with a cutoff c (Lyu, Su & Li 2017,
  Alg. 1; :func:`dpexplore.svt.sparse_vector`).

The three sound selectors also take ``fit(source)`` (a :class:`dpexplore.sources.Source`): the
``Binarizer(source.schema)`` columns from the count table's occupied cells, weighted by their
counts (:mod:`dpexplore.select.base`); the fitted selector keeps ``binarizer_``. ``max_ones``
must then be None or at least the number of attributes (each record has one 1 per attribute).

Kept as labelled demonstrations because they are **not** differentially private (Alg. 1 of §3.3, Alg. 2 of §3.4):

* :class:`PrivateThresholdTesting` — Alg. 2 as printed: a noisy threshold compared with exact
  scores. :func:`ptt_counterexample` gives two neighbouring datasets on which one output has
  probability 0 on one side and ≈ 0.39 on the other, so no finite ε holds.
* :class:`ClusterSelection` — Alg. 1 with private k-means; exact membership leaks the same way
  (on the same pair, F1 and F2 are one point in D and can never be separated; in D' they can).

:func:`audit_selectors` runs :func:`dpexplore.audit.privacy_loss` on that pair for every
selector above (the shipped code itself): PTT and Cluster Selection exceed their claimed ε, the
sound selectors stay within it. :func:`selection_quality` scores a selection against the exact
F_τ (precision, recall, F1; §3.1).

The sparsity bound s is enforced, not assumed (ours; §3.2 assumes it): ``max_ones`` caps every row at s ones by
keeping a uniform random subset of them (:func:`cap_row_ones`) before any score is computed.
"""
from __future__ import annotations

import math
import numbers
import warnings
from typing import Any, Callable

import numpy as np
import pandas as pd

from .._validation import (RandomState, check_binary_matrix, check_epsilon, check_fraction, check_int,
                           check_random_state, check_scores)
from ..audit import privacy_loss
from ..budget import FIT_CALLER_STACKLEVEL, BudgetAccountant
from ..exceptions import NotDifferentiallyPrivateWarning
from ..mechanisms import exponential, exponential_subset, laplace, laplace_cdf
from ..sensitivity import utility_sensitivity
from ..svt import sparse_vector, svt_split
from .base import SelectorBase
from .scores import (difference_count, information_gain, mutual_information_sensitivity,
                     purity_index, total_count)

__all__ = [
    "NotDifferentiallyPrivateWarning", "SCORES", "cap_row_ones", "score_sensitivity",
    "exponential_top_k", "private_threshold_testing", "ptt_counterexample",
    "ptt_pattern_probability", "audit_selectors",
    "ScorePerturbationSelector", "ExponentialTopKSelector", "SparseVectorSelector",
    "PrivateThresholdTesting", "ClusterSelection", "binarize_leaves", "selection_quality",
]

SCORES: dict[str, Callable] = {"TC": total_count, "DC": difference_count, "PI": purity_index,
                               "IG": information_gain}


_NOT_DP = ("{name} is NOT differentially private (Stoddard et al. 2014, §3.3–3.4): its output can have "
           "probability 0 on a dataset and > 0 on a neighbour. Use it only as a demonstration.")


# =========================================================================== helpers
def cap_row_ones(X: Any, max_ones: int, *, random_state: RandomState = None) -> tuple[np.ndarray, int]:
    """Keep at most ``max_ones`` ones per row, a uniform random subset of them (the sparsity s of §3.2).

    Returns (capped copy, number of rows that were cut). After capping, adding or removing a
    record changes at most ``max_ones`` TC/DC scores, whatever the raw data look like.
    """
    out = check_binary_matrix(X)     # a fresh int64 copy: X itself is never modified
    s = check_int(max_ones, "max_ones", minimum=1)
    rng = check_random_state(random_state)
    ones_per_row = out.sum(axis=1)
    too_many = np.flatnonzero(ones_per_row > s)
    for row in too_many:   # only the long rows are touched
        on = np.flatnonzero(out[row])
        out[row, rng.choice(on, size=on.size - s, replace=False)] = 0
    return out, int(too_many.size)


def selection_quality(selected: Any, exact: Any) -> dict:
    """Precision, recall, F1 and Jaccard similarity of a selected set against the exact F_τ (§3.1).

    Both arguments are boolean masks over the features. Conventions for empty sets: precision is
    1 when nothing is selected, recall is 1 when F_τ is empty, F1 is 0 when both are 0.
    """
    a = np.asarray(selected, dtype=bool)
    b = np.asarray(exact, dtype=bool)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("selected and exact must be boolean masks of the same length")
    both = int(np.sum(a & b))
    precision = both / a.sum() if a.any() else 1.0
    recall = both / b.sum() if b.any() else 1.0
    f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    union = int(np.sum(a | b))
    return {"precision": float(precision), "recall": float(recall), "f1": float(f1),
            "jaccard": float(both / union) if union else 1.0}


def binarize_leaves(X: pd.DataFrame, schema: Any, attributes: Any = None) -> pd.DataFrame:
    """0/1 indicator columns ``"attr=leaf"`` for every taxonomy leaf of each attribute.

    Uses only the public schema (the taxonomies' leaves), so it costs no budget; each record has
    exactly one 1 per attribute, hence at most s = len(attributes) ones (a public bound).
    """
    codes = schema.leaf_codes(X, attributes)
    columns = {}
    for name, code in codes.items():
        taxonomy = schema[name].taxonomy
        for j, label in enumerate(taxonomy.labels(taxonomy.height - 1)):
            columns[f"{name}={label}"] = (code == j).astype(np.int8)
    return pd.DataFrame(columns, index=X.index)


def score_sensitivity(score: str, *, n_features: int, max_ones: int | None = None,
                      n_min: int | None = None) -> tuple[float, int]:
    """(S(Q), Δ(Q)): one score's sensitivity and how many scores one record can move (§2 table),
    under the paper's add/remove neighbours (:func:`~dpexplore.sensitivity.utility_sensitivity`).

    TC, DC: (1, s); PI: (1, |F|); IG: (ΔI(n_min) in nats, |F|), with ``n_min`` a *public lower
    bound* on the number of records: the mutual-information sensitivity shrinks with n, so the
    bound must use the smallest possible n (the paper's "O(log n)" is for the count-scaled form).
    ``max_ones=None`` means no cap, i.e. s = |F| (always valid).
    """
    score = _check_score(score)
    n_features = check_int(n_features, "n_features", minimum=1)
    s = n_features if max_ones is None else min(check_int(max_ones, "max_ones", minimum=1), n_features)
    if score in ("TC", "DC"):
        return utility_sensitivity(1.0), s
    if score == "PI":
        return utility_sensitivity(1.0), n_features
    if n_min is None:
        raise ValueError("the 'IG' score needs n_min, a public lower bound on the number of records")
    n_min = check_int(n_min, "n_min", minimum=1)
    return utility_sensitivity(mutual_information_sensitivity(n_min, base=math.e)), n_features


def _check_score(score: Any, name: str = "score") -> str:
    if score not in SCORES:
        raise ValueError(f"{name} must be one of {sorted(SCORES)}, got {score!r}")
    return score


# =========================================================================== sound mechanisms
def exponential_top_k(scores: Any, k: int, *, epsilon: float, score_sensitivity: float = 1.0,
                      n_changed: int | None = None, method: str = "one_shot",
                      random_state: RandomState = None) -> np.ndarray:
    """ε-DP top-k by the exponential mechanism (McSherry & Talwar 2007); the caller spends ``epsilon``.

    ``one_shot``: one draw over all k-subsets with U(S) = Σ_{F∈S} Q(F), whose sensitivity is
    S(Q)·min(k, Δ(Q)) (``n_changed`` = Δ(Q); None = no bound, i.e. k) — via
    :func:`dpexplore.mechanisms.exponential_subset`. ``peeling``: k rounds, each the exponential
    mechanism with sensitivity S(Q) at ε/k on the features not yet chosen. Returns sorted indices.
    """
    q = check_scores(scores)
    k = check_int(k, "k", minimum=1)
    if k > q.size:
        raise ValueError(f"k must be at most the number of features ({q.size}), got {k}")
    epsilon = check_epsilon(epsilon)
    rng = check_random_state(random_state)
    if method == "one_shot":
        changed = k if n_changed is None else min(k, check_int(n_changed, "n_changed", minimum=1))
        return exponential_subset(q, k, epsilon=epsilon, sensitivity=score_sensitivity * changed,
                                  random_state=rng)
    if method != "peeling":
        raise ValueError(f"method must be 'one_shot' or 'peeling', got {method!r}")
    utilities = q.copy()
    chosen = []
    for _ in range(k):
        i = exponential(utilities, epsilon=epsilon / k, sensitivity=score_sensitivity,
                        random_state=rng)
        chosen.append(i)
        utilities[i] = -np.inf                  # never picked again
    return np.array(sorted(chosen), dtype=int)


# =========================================================================== flawed mechanisms
def private_threshold_testing(scores: Any, threshold: float, *, epsilon: float, sigma: float = 1.0,
                              random_state: RandomState = None) -> np.ndarray:
    """Alg. 2 (PTT) as printed: τ̃ = τ + Lap(σ/ε), return v[i] = [Q_i ≥ τ̃]. **NOT DP.**

    The paper claims 2σε-DP (Thm 2), or σε-DP for monotone TC (Cor. 3.4). Both are false: the
    output reveals the exact order of the scores; see :func:`ptt_counterexample` (§3.4, Theorem 2).
    Spends nothing, since there is no guarantee to account for.
    """
    warnings.warn(_NOT_DP.format(name="Private Threshold Testing"),
                  NotDifferentiallyPrivateWarning, stacklevel=2)
    q = check_scores(scores)
    noisy_tau = threshold + laplace(0.0, epsilon=epsilon, sensitivity=sigma,
                                    random_state=random_state)
    return q >= noisy_tau


def ptt_pattern_probability(scores: Any, threshold: float, pattern: Any, *, epsilon: float,
                            sigma: float = 1.0) -> float:
    """Exact P[PTT outputs ``pattern``] = P(max_{v=0} Q < τ̃ ≤ min_{v=1} Q) (§3.4, Alg. 2)."""
    q = check_scores(scores)
    v = np.asarray(pattern, dtype=bool)
    if v.shape != q.shape:
        raise ValueError("pattern must have one entry per score")
    top = q[v].min() if v.any() else np.inf          # τ̃ ≤ every selected score
    bottom = q[~v].max() if (~v).any() else -np.inf  # τ̃ > every rejected score
    if top <= bottom:
        return 0.0
    cdf = lambda t: 1.0 if t == np.inf else (0.0 if t == -np.inf else  # noqa: E731
                                             laplace_cdf(t - threshold, epsilon=epsilon, sensitivity=sigma))
    return float(cdf(top) - cdf(bottom))


def ptt_counterexample() -> dict:
    """Two neighbouring datasets on which PTT is not DP for any ε (against Stoddard et al. 2014, §3.4, Theorem 2).

    D: five records with F1 = F2 = 1 (label 1), so TC = (5, 5). D' = D plus one record with
    F1 = 1, F2 = 0 (label 0), so TC' = (6, 5). With τ = 5.5 and noise scale b = σ/ε = 1 (ε = 1),
    the output "F1 selected, F2 not" needs 5 < τ̃ ≤ 5 on D (probability 0) and 5 < τ̃ ≤ 6 on D'
    (probability 1 − e^{−1/2} ≈ 0.393): an infinite likelihood ratio. The labels only matter
    for Cluster Selection, whose feature points are (n_{F=1∧L=0}, n_{F=1∧L=1}): F1 and F2 are the
    same point (0, 5) in D, so exact nearest-centre membership can never separate them, while in
    D' they are (1, 5) and (0, 5) and a Voronoi boundary can fall between them (§3.3).
    """
    X = pd.DataFrame({"F1": [1] * 5, "F2": [1] * 5})
    X_neighbour = pd.concat([X, pd.DataFrame({"F1": [1], "F2": [0]})], ignore_index=True)
    y = pd.Series([1] * 5, name="label")
    y_neighbour = pd.concat([y, pd.Series([0], name="label")], ignore_index=True)
    pattern = (True, False)
    tau, eps = 5.5, 1.0
    return {
        "X": X, "X_neighbour": X_neighbour, "y": y, "y_neighbour": y_neighbour,
        "threshold": tau, "epsilon": eps, "sigma": 1.0, "pattern": pattern,
        "p": ptt_pattern_probability(total_count(X), tau, pattern, epsilon=eps),
        "p_neighbour": ptt_pattern_probability(total_count(X_neighbour), tau, pattern, epsilon=eps),
    }


def _pattern_code(mask: Any) -> int:
    """A selected-set mask → one integer (bit d set = feature d selected), the audit's event."""
    return int(np.sum(np.asarray(mask, dtype=np.int64) << np.arange(np.size(mask))))


def audit_selectors(*, epsilon: float = 1.0, n_samples: int = 20_000, cluster: bool = True,
                    random_state: RandomState = None) -> pd.DataFrame:
    """Audit PTT, Cluster Selection and the sound selectors on :func:`ptt_counterexample`.

    Every selector is the shipped function or estimator itself (no re-implementation), run
    ``n_samples`` times on D and on D' (TC scores, τ = 5.5, rows capped at s = 2 ones) through
    :func:`dpexplore.audit.privacy_loss`; the output event is the selected set. Returns one row
    per selector: the ε it claims (PTT: σε = ε by the paper's Cor. 3.4 for the monotone TC with
    τ̃ = τ + Lap(1/ε); the others: ε), the audit's point estimate over events seen on both sides,
    its lower confidence bound on the true loss (large when an output seen often on one side
    never occurs on the other), and ``violates`` = the bound exceeds the claim. ``cluster=False``
    skips Cluster Selection (the slowest: one k-means per run).
    """
    epsilon = check_epsilon(epsilon)
    rng = check_random_state(random_state)
    ex = ptt_counterexample()
    tau = ex["threshold"]
    max_ones = 2    # rows of D and D' have at most 2 ones: Δ(TC) = 2 for score perturbation
    labels = {id(ex["X"]): ex["y"], id(ex["X_neighbour"]): ex["y_neighbour"]}

    def ptt(X, g):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotDifferentiallyPrivateWarning)
            return _pattern_code(private_threshold_testing(total_count(X), tau, epsilon=epsilon,
                                                           random_state=g))

    def cluster_selection(X, g):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotDifferentiallyPrivateWarning)
            selector = ClusterSelection(threshold=tau, epsilon=epsilon, feature_score="TC", max_ones=max_ones,
                                        n_max=10, random_state=g)
            return _pattern_code(selector.fit(X, labels[id(X)]).get_support())

    def sp(X, g):   # the shipped estimator: TC (rows capped at s) + Lap(s/ε), then > τ
        selector = ScorePerturbationSelector(epsilon=epsilon, feature_score="TC", threshold=tau,
                                             max_ones=max_ones, random_state=g)
        return _pattern_code(selector.fit(X).get_support())

    def svt(X, g):
        chosen = sparse_vector(total_count(X), tau, epsilon=epsilon, cutoff=1, monotone=True,
                               random_state=g)
        return _pattern_code(np.isin(np.arange(2), chosen))

    def em_one_shot(X, g):
        return int(exponential_top_k(total_count(X), 1, epsilon=epsilon, method="one_shot",
                                     random_state=g)[0])

    def em_peeling(X, g):
        return int(exponential_top_k(total_count(X), 1, epsilon=epsilon, method="peeling",
                                     random_state=g)[0])

    selectors = [("PTT (Alg. 2, as printed)", ptt, False)]
    if cluster:
        selectors.append(("Cluster Selection (Alg. 1)", cluster_selection, False))
    selectors += [("score perturbation", sp, True), ("sparse vector, cutoff 1", svt, True),
                  ("EM top-1 (one shot)", em_one_shot, True), ("EM top-1 (peeling)", em_peeling, True)]
    rows = []
    for name, mech, is_dp in selectors:
        result = privacy_loss(mech, ex["X"], ex["X_neighbour"], n_samples=n_samples,
                              random_state=rng)
        rows.append({"selector": name, "claimed_epsilon": epsilon, "sound": is_dp,
                     "epsilon_hat": result.epsilon_hat, "epsilon_lower": result.epsilon_lower,
                     "violates": result.violates(epsilon)})
    return pd.DataFrame(rows)


# =========================================================================== transformers
class _BinarySelector(SelectorBase):
    """Shared plumbing: validation, row capping, scores, get_support/transform.

    ``classes`` (the public labels, the last one positive) and ``binarize`` (None: X is 0/1; a
    number: the public rule X > binarize) are read in :class:`~dpexplore.select.base.SelectorBase`.
    TC ignores the labels, so it reads no class list from y.
    """

    @classmethod
    def _sklearn_check_instance(cls):
        # the checks pass real-valued X: a public cut point (and a rule that fits any width)
        return cls(binarize=0.5)

    def _needs_labels(self) -> bool:
        return getattr(self, "feature_score", "TC") != "TC"

    def _prepare(self, X: Any, y: Any):
        """(0/1 matrix, 0/1 labels, row weights, score): records are rows of weight 1;
        ``fit(source)`` gives the occupied cells weighted by their counts (SelectorBase)."""
        score = _check_score(self.feature_score, "feature_score")
        source = self._source_data(X, y)
        if source is not None:
            Xb, yb, w = source
            # the cap keeps a random subset of each *record's* ones; Binarizer(schema) gives every
            # record exactly one 1 per attribute (public), so a cap at least that is a no-op
            per_record = len(self.binarizer_.columns_)
            if self.max_ones is not None and score in ("TC", "DC") \
                    and check_int(self.max_ones, "max_ones", minimum=1) < per_record:
                raise ValueError(f"max_ones={self.max_ones} is below the {per_record} ones every binarised "
                                 "record holds (one per attribute): capping picks ones per record, which a "
                                 f"count table cannot do; use max_ones=None or ≥ {per_record} with fit(source)")
            return Xb, (yb if score != "TC" else np.zeros_like(yb)), w, score
        Xb, y = self._binary_X(X, y)     # y=None with a label score: scikit-learn's "requires y" error
        if score == "TC":       # labels unused: nothing is read from y
            if y is not None and self.classes is not None:
                self._binary_y(y, Xb.shape[0])   # only checks y against the declared classes
            yb = np.zeros(Xb.shape[0], dtype=np.int64)
        else:
            yb = self._binary_y(y, Xb.shape[0])
        return Xb, yb, np.ones(Xb.shape[0], dtype=np.int64), score

    def _scores(self, Xb: np.ndarray, yb: np.ndarray, w: np.ndarray, score: str, rng: np.random.Generator):
        """Cap rows (TC/DC only need it), then compute the scores as weighted sums over rows
        (records: weight 1; a count table's cells: their counts).

        How many rows were cut is a true count: it is not kept on the selector.
        """
        # No refusal when the records are fewer than n_min: it would depend on the private rows.
        # The IG sensitivity ΔI(n_min) assumes N ≥ n_min, a public promise of the caller.
        if self.max_ones is not None and score in ("TC", "DC") \
                and Xb.sum(axis=1).max() > check_int(self.max_ones, "max_ones", minimum=1):
            # rows within the cap are left as they are (capping them draws nothing from rng)
            # (weighted cells come here only when no row exceeds the cap, see _prepare)
            Xb, _ = cap_row_ones(Xb, self.max_ones, random_state=rng)
        return Xb, (SCORES[score](Xb, yb, weights=w) if score != "TC" else total_count(Xb, weights=w))


class _ScoreSelector(_BinarySelector):
    """A selector whose mechanism reads nothing but the feature scores.

    ``fit(X, y)`` validates, computes the scores (rows capped at ``max_ones`` first) and runs the
    mechanism; :meth:`fit_scores` runs the same mechanism on scores computed elsewhere. Both
    check the public parameters before the first spend and draw from one Generator in the same
    order, so the same scores and seed give the same selection. Subclasses give
    ``_calibrate(n_features, score) -> dict`` (checks and sensitivities, no data),
    ``_select(q, plan, rng)`` (the spends and the mechanism) and ``_rule(q, plan)`` (the indices
    the selection rule keeps from scores, without noise: :meth:`exact_support`).
    """

    def fit(self, X: Any, y: Any = None) -> "_ScoreSelector":
        """Score the features of (X, y) and select from the scores; spends ``epsilon``."""
        Xb, yb, w, score = self._prepare(X, y)
        plan = self._calibrate(Xb.shape[1], score)
        rng = self._begin(plan)
        _, q = self._scores(Xb, yb, w, score, rng)
        self._select(q, plan, rng)
        return self

    def fit_scores(self, scores: Any) -> "_ScoreSelector":
        """Select from precomputed ``scores`` (one per feature, of ``feature_score``); spends ``epsilon``.

        The scores are private: they must be what :meth:`fit` would compute, e.g. TC and DC on
        rows with at most ``max_ones`` ones (the sensitivity assumes it). Same checks, spends,
        draws and fitted attributes as :meth:`fit`, without ``feature_names_in_`` and ``classes_``.
        """
        q = check_scores(scores)
        score = _check_score(self.feature_score, "feature_score")
        for stale in ("feature_names_in_", "classes_", "binarizer_"):
            self.__dict__.pop(stale, None)
        self.n_features_in_ = q.size
        plan = self._calibrate(q.size, score)
        self._select(q, plan, self._begin(plan))
        return self

    def exact_support(self, scores: Any) -> np.ndarray:
        """The selection rule applied to exact ``scores`` without noise — **NOT private** (a teaching
        view: the exact F_τ of §3.1, its first ``cutoff`` features, or the top k, that the mechanism
        approximates). Same parameter checks as :meth:`fit_scores`; spends nothing, stores nothing."""
        q = check_scores(scores)
        support = np.zeros(q.size, dtype=bool)
        support[self._rule(q, self._calibrate(q.size, _check_score(self.feature_score, "feature_score")))] = True
        return support

    def _begin(self, plan: dict) -> np.random.Generator:
        """Open this fit's ledger (a fresh accountant when none is given); the Generator."""
        return self._start(plan["epsilon"])


class ScorePerturbationSelector(_ScoreSelector):
    """Score perturbation, SP (Stoddard et al. 2014, §3.2): ε-DP feature selection.

    Adds Lap(S(Q)·Δ(Q)/ε) to every feature's score (TC, DC: Δ = s, enforced by capping rows at
    ``max_ones`` ones; PI, IG: Δ = |F|), then keeps the features whose noisy score exceeds
    ``threshold`` (public, in score units) or the ``k`` highest noisy scores (give exactly one).
    Fitted: ``support_``, ``noisy_scores_``, ``noise_scale_``, ``ledger_``.
    """

    def __init__(self, *, epsilon: float = 0.5, feature_score: str = "TC", threshold: float | None = None,
                 k: int | None = None, max_ones: int | None = None, n_min: int | None = None,
                 classes: Any = None, binarize: float | None = None,
                 random_state: RandomState = None, accountant: BudgetAccountant | None = None):
        self.classes = classes
        self.binarize = binarize
        self.epsilon = epsilon
        self.feature_score = feature_score
        self.threshold = threshold
        self.k = k
        self.max_ones = max_ones
        self.n_min = n_min
        self.random_state = random_state
        self.accountant = accountant

    @classmethod
    def _sklearn_check_instance(cls):
        return cls(k=1, binarize=0.5)

    def _calibrate(self, n_features: int, score: str) -> dict:
        if (self.threshold is None) == (self.k is None):
            raise ValueError("give exactly one of threshold (τ) or k (top-k)")
        if self.k is not None and not 1 <= check_int(self.k, "k", minimum=1) <= n_features:
            raise ValueError(f"k must be at most the number of features (n_features = {n_features})")
        if self.threshold is not None and not np.isfinite(float(self.threshold)):
            raise ValueError("threshold must be a finite number")
        per_score, changed = score_sensitivity(score, n_features=n_features,
                                               max_ones=self.max_ones, n_min=self.n_min)
        return {"epsilon": check_epsilon(self.epsilon), "sensitivity": per_score * changed, "score": score}

    def _select(self, q: np.ndarray, plan: dict, rng: np.random.Generator) -> None:
        epsilon = plan["epsilon"]
        self.noise_scale_ = plan["sensitivity"] / epsilon           # S(Q)·Δ(Q)/ε
        self._spend(epsilon, f"feature selection: score perturbation ({plan['score']})")
        self.noisy_scores_ = laplace(q, epsilon=epsilon, sensitivity=plan["sensitivity"], random_state=rng)
        self._set_support(self._rule(self.noisy_scores_, plan))

    def _rule(self, q: np.ndarray, plan: dict) -> np.ndarray:
        if self.threshold is not None:
            return np.flatnonzero(q > float(self.threshold))
        return np.argsort(-q, kind="stable")[: int(self.k)]


class ExponentialTopKSelector(_ScoreSelector):
    """ε-DP top-k features by the exponential mechanism (McSherry & Talwar 2007; thesis §3.5.5), one shot or peeling.

    ``method="one_shot"`` samples a k-subset with P(S) ∝ exp(ε·Σ_{F∈S}Q(F)/(2·S(Q)·min(k, Δ(Q))))
    via :func:`dpexplore.mechanisms.exponential_subset`; ``"peeling"`` runs k exponential
    mechanisms at ε/k with sensitivity S(Q). Fitted: ``support_``, ``ledger_``.

    Examples
    --------
    >>> import numpy as np
    >>> from dpexplore.select.stoddard import ExponentialTopKSelector
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 2, size=(500, 4))
    >>> y = X[:, 2]
    >>> selector = ExponentialTopKSelector(k=1, epsilon=1.0, random_state=0).fit(X, y)
    >>> selector.transform(X).shape, float(selector.ledger_["charged"].sum())
    ((500, 1), 1.0)
    """

    def __init__(self, *, k: int = 10, epsilon: float = 0.5, feature_score: str = "TC",
                 method: str = "one_shot", max_ones: int | None = None, n_min: int | None = None,
                 classes: Any = None, binarize: float | None = None,
                 random_state: RandomState = None, accountant: BudgetAccountant | None = None):
        self.classes = classes
        self.binarize = binarize
        self.k = k
        self.epsilon = epsilon
        self.feature_score = feature_score
        self.method = method
        self.max_ones = max_ones
        self.n_min = n_min
        self.random_state = random_state
        self.accountant = accountant

    @classmethod
    def _sklearn_check_instance(cls):
        return cls(k=1, binarize=0.5)

    def _calibrate(self, n_features: int, score: str) -> dict:
        k = check_int(self.k, "k", minimum=1)
        if k > n_features:
            raise ValueError(f"k must be at most the number of features (n_features = {n_features}), got {k}")
        if self.method not in ("one_shot", "peeling"):
            raise ValueError(f"method must be 'one_shot' or 'peeling', got {self.method!r}")
        per_score, changed = score_sensitivity(score, n_features=n_features,
                                               max_ones=self.max_ones, n_min=self.n_min)
        return {"epsilon": check_epsilon(self.epsilon), "k": k, "per_score": per_score, "changed": changed,
                "score": score}

    def _select(self, q: np.ndarray, plan: dict, rng: np.random.Generator) -> None:
        epsilon, k = plan["epsilon"], plan["k"]
        self._spend(epsilon, f"feature selection: exponential top-{k} "
                             f"({self.method.replace('_', ' ')}, {plan['score']})")
        self._set_support(exponential_top_k(q, k, epsilon=epsilon, score_sensitivity=plan["per_score"],
                                            n_changed=plan["changed"], method=self.method,
                                            random_state=rng))

    def _rule(self, q: np.ndarray, plan: dict) -> np.ndarray:
        return np.argsort(-q, kind="stable")[: plan["k"]]     # the most likely k-subset


class SparseVectorSelector(_ScoreSelector):
    """ε-DP selection of the first ``cutoff`` features whose score passes a noisy threshold.

    The sparse vector technique with a cutoff (Lyu, Su & Li 2017, Alg. 1), the sound version of
    what PTT tried to do. Features are tested in column order (public). ``monotone="auto"`` uses
    the halved query noise for TC, whose scores all move the same way when a record is added.
    ``threshold_share``: the share of ε for the threshold noise (None: 1/(1 + (2c)^{2/3})).
    Fitted: ``support_``, ``ledger_``.
    """

    def __init__(self, *, threshold: float = 0.0, cutoff: int = 10, epsilon: float = 0.5,
                 feature_score: str = "TC", monotone: Any = "auto", threshold_share: float | None = None,
                 max_ones: int | None = None, n_min: int | None = None, classes: Any = None,
                 binarize: float | None = None,
                 random_state: RandomState = None, accountant: BudgetAccountant | None = None):
        self.classes = classes
        self.binarize = binarize
        self.threshold = threshold
        self.cutoff = cutoff
        self.epsilon = epsilon
        self.feature_score = feature_score
        self.monotone = monotone
        self.threshold_share = threshold_share
        self.max_ones = max_ones
        self.n_min = n_min
        self.random_state = random_state
        self.accountant = accountant

    def _calibrate(self, n_features: int, score: str) -> dict:
        cutoff = check_int(self.cutoff, "cutoff", minimum=1)
        if not np.isfinite(float(self.threshold)):
            raise ValueError("threshold must be a finite number")
        monotone = (score == "TC") if self.monotone == "auto" else bool(self.monotone)
        if monotone and score != "TC":
            raise ValueError("monotone=True is only valid for TC (the other scores can move both ways)")
        per_score, _ = score_sensitivity(score, n_features=n_features, max_ones=self.max_ones,
                                         n_min=self.n_min)
        share = (svt_split(cutoff)[0] if self.threshold_share is None
                 else check_fraction(self.threshold_share, "threshold_share", high_closed=False))
        return {"epsilon": check_epsilon(self.epsilon), "cutoff": cutoff, "monotone": monotone,
                "per_score": per_score, "share": share}

    def _select(self, q: np.ndarray, plan: dict, rng: np.random.Generator) -> None:
        epsilon, share = plan["epsilon"], plan["share"]
        self._spend(share * epsilon, "feature selection: sparse vector, threshold noise")
        self._spend((1 - share) * epsilon, "feature selection: sparse vector, query noise")
        self._set_support(sparse_vector(q, float(self.threshold), epsilon=epsilon, cutoff=plan["cutoff"],
                                        sensitivity=plan["per_score"], monotone=plan["monotone"],
                                        threshold_share=share, random_state=rng))

    def _rule(self, q: np.ndarray, plan: dict) -> np.ndarray:
        return np.flatnonzero(q >= float(self.threshold))[: plan["cutoff"]]   # in column order, as Alg. 1


class PrivateThresholdTesting(_ScoreSelector):
    """PTT (Stoddard et al. 2014, Alg. 2) exactly as printed. **NOT differentially private.**

    Keeps the features whose exact score is ≥ τ + Lap(σ/ε). The paper's Theorem 2 is false
    (against §3.4, Theorem 2): see :func:`ptt_counterexample` and :func:`audit_selectors`. Fitting emits a
    :class:`NotDifferentiallyPrivateWarning` and spends no budget. Fitted: ``support_``.
    """

    _fits_source = False   # NOT DP: fit(source) is refused (TypeError)

    def __init__(self, *, threshold: float = 0.0, epsilon: float = 0.2, feature_score: str = "TC",
                 sigma: float = 1.0, max_ones: int | None = None, classes: Any = None,
                 binarize: float | None = None, random_state: RandomState = None):
        self.classes = classes
        self.binarize = binarize
        self.threshold = threshold
        self.epsilon = epsilon
        self.feature_score = feature_score
        self.sigma = sigma
        self.max_ones = max_ones
        self.random_state = random_state

    def _calibrate(self, n_features: int, score: str) -> dict:
        return {"epsilon": check_epsilon(self.epsilon)}

    def _begin(self, plan: dict) -> np.random.Generator:
        return check_random_state(self.random_state)   # spends nothing: no ledger

    def _select(self, q: np.ndarray, plan: dict, rng: np.random.Generator) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotDifferentiallyPrivateWarning)
            mask = private_threshold_testing(q, float(self.threshold), epsilon=plan["epsilon"],
                                             sigma=self.sigma, random_state=rng)
        warnings.warn(_NOT_DP.format(name="PrivateThresholdTesting"),
                      NotDifferentiallyPrivateWarning, stacklevel=3)
        self.support_ = mask

    def _rule(self, q: np.ndarray, plan: dict) -> np.ndarray:
        return np.flatnonzero(q >= float(self.threshold))      # Alg. 2's comparison, τ̃ = τ


class ClusterSelection(_BinarySelector):
    """Cluster Selection (Stoddard et al. 2014, Alg. 1) as described. **NOT differentially private.**

    Each feature is the point (n_{F=1∧L=0}, n_{F=1∧L=1}); ``rounds`` rounds of SuLQ-style k-means
    with noisy cluster sizes (Lap, sensitivity 1) and noisy coordinate sums (Lap, sensitivity s =
    ``max_ones``), half of ε/rounds each, centres initialised uniformly in [0, n_max]²; a cluster
    is kept whole when score(centre) ≥ τ (TC: x + y, DC: |y − x|). Two flaws (§3.3, Alg. 1): the
    sensitivities ignore points switching cluster, and the final exact nearest-centre membership
    leaks like PTT. Emits a :class:`NotDifferentiallyPrivateWarning`; spends no budget.
    """

    _fits_source = False   # NOT DP: fit(source) is refused (TypeError)

    def __init__(self, *, threshold: float = 0.0, epsilon: float = 0.2, feature_score: str = "TC",
                 rounds: int = 5, centers: int = 8, max_ones: int | None = 10,
                 n_max: int | None = None, classes: Any = None, binarize: float | None = None,
                 random_state: RandomState = None):
        self.classes = classes
        self.binarize = binarize
        self.threshold = threshold
        self.epsilon = epsilon
        self.feature_score = feature_score
        self.rounds = rounds
        self.centers = centers
        self.max_ones = max_ones
        self.n_max = n_max
        self.random_state = random_state

    def fit(self, X: Any, y: Any = None) -> "ClusterSelection":
        Xb, yb, w, score = self._prepare(X, y)
        if score not in ("TC", "DC"):
            raise ValueError("ClusterSelection supports feature_score='TC' or 'DC' (as in the paper)")
        epsilon = check_epsilon(self.epsilon)
        rounds = check_int(self.rounds, "rounds", minimum=1)
        k = check_int(self.centers, "centers", minimum=1)
        rng = check_random_state(self.random_state)
        s = Xb.shape[1] if self.max_ones is None else min(check_int(self.max_ones, "max_ones", minimum=1),
                                                          Xb.shape[1])
        Xb, _ = self._scores(Xb, yb, w, score, rng)                   # rows capped at s ones
        points = np.column_stack([Xb[yb == 0].sum(axis=0), Xb[yb == 1].sum(axis=0)]).astype(float)
        n_max = Xb.shape[0] if self.n_max is None else check_int(self.n_max, "n_max", minimum=1)
        centres = rng.uniform(0, n_max, size=(k, 2))
        eps_half = epsilon / rounds / 2
        for _ in range(rounds):
            label = np.argmin(((points[:, None, :] - centres[None]) ** 2).sum(axis=2), axis=1)
            size = np.bincount(label, minlength=k) + rng.laplace(0, 1 / eps_half, size=k)
            sums = np.zeros((k, 2))
            np.add.at(sums, label, points)
            sums += rng.laplace(0, s / eps_half, size=(k, 2))
            ok = size > 0                                          # keep old centre otherwise
            centres[ok] = sums[ok] / size[ok, None]
        label = np.argmin(((points[:, None, :] - centres[None]) ** 2).sum(axis=2), axis=1)
        centre_score = centres.sum(axis=1) if score == "TC" else np.abs(centres[:, 1] - centres[:, 0])
        self.centres_ = centres
        self.support_ = centre_score[label] >= float(self.threshold)
        warnings.warn(_NOT_DP.format(name="ClusterSelection"), NotDifferentiallyPrivateWarning,
                      stacklevel=FIT_CALLER_STACKLEVEL)
        return self
