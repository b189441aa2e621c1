"""Private feature selection from the thesis on DP Naive Bayes / logistic regression (§3.5).

Features are binary (0/1), the label binary, and neighbours differ by one added or removed
record (thesis Def. 2.1.1).

* :class:`PrivateKSubsetSelector` — the thesis's Algorithm 5 ("privacy-efficient sampling",
  §3.5.5): one exponential mechanism over all k-subsets with utility U(S) = Σ_{d∈S} q_d, whose
  sensitivity is k·Δq. The sampler is :func:`dpexplore.mechanisms.exponential_subset` (the
  corrected recurrence); its exact inclusion probabilities come from
  :func:`dpexplore.mechanisms.exponential_subset_inclusion`. Scores: the count score q (§3.5.4,
  = Stoddard's purity index, Δq = 1) or mutual information in bits (Def. 2.6.1, Δq = ΔI(n_min),
  eq. 3.20 and Table 3.2, from Zhang et al. 2014). ``mechanism="noisy_scores"`` is the thesis's
  Algorithm 3 instead (Laplace(D·Δq/ε) on every score, keep the top k, §3.5.2.2), for comparison.
* :class:`IterativeSelector` — Algorithm 4 (§3.5.3) as printed, kept only as a labelled **non-DP**
  example: its loop count and examination order depend on the exact scores.
  :func:`audit_iterative_vs_subset` exhibits two neighbouring data sets on which it leaks far
  more than its claimed ε while the k-subset sampler stays within ε.
"""
from __future__ import annotations

import itertools
import math
import numbers
import warnings
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone

from .._validation import (RandomState, check_binary_matrix, check_epsilon, check_int, check_random_state,
                           check_same_length, check_scores)
from ..inputs import check_y
from ..audit import privacy_loss
from ..budget import FIT_CALLER_STACKLEVEL
from ..domain import declared_classes
from ..mechanisms import exponential_subset, exponential_subset_inclusion, laplace
from ..sensitivity import utility_sensitivity
from .base import SelectorBase
from .scores import information_gain, mutual_information_sensitivity, purity_index
from .stoddard import NotDifferentiallyPrivateWarning

__all__ = ["thesis_scores", "score_sensitivity", "iterative_select", "iterative_selection_probabilities",
           "audit_iterative_vs_subset", "PrivateKSubsetSelector", "IterativeSelector",
           "NotDifferentiallyPrivateWarning"]

THESIS_SCORES = ("count", "mi")


# =========================================================================== helpers
def _check_score(score: Any, name: str = "score") -> str:
    if score not in THESIS_SCORES:
        raise ValueError(f"{name} must be one of {THESIS_SCORES}, got {score!r}")
    return score


def _binary_xy(X: Any, y: Any, classes: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """(0/1 matrix, 0/1 labels) for the non-private score functions: the positive class is the
    last of ``classes`` (the larger observed label when None: fine for exact, non-private views)."""
    a = check_binary_matrix(X)
    if y is None:
        raise ValueError("the feature scores need the labels y")
    ya = check_y(y).to_numpy()
    check_same_length(a, ya)
    if classes is not None:
        values, codes = declared_classes(ya, classes, "thesis_scores")
        return a, (codes == len(values) - 1).astype(np.int64)
    observed = np.unique(ya)
    if observed.size != 2:
        raise ValueError(f"y must have exactly two classes (the thesis's scores are binary), got {observed.size}")
    return a, (ya == observed[1]).astype(np.int64)


def thesis_scores(X: Any, y: Any, score: str = "count", *, classes: Any = None) -> np.ndarray:
    """Per-feature quality: the count score q (thesis §3.5.4, raw counts) or MI in bits (Def. 2.6.1).

    Exact scores of the data passed in — **NOT private** (teaching plots, tests). ``classes``:
    the declared labels, the last one positive (default: the larger of the two observed labels).
    """
    score = _check_score(score)
    Xb, yb = _binary_xy(X, y, classes)
    if score == "count":
        return purity_index(Xb, yb)
    return information_gain(Xb, yb, base=2)


_MI_NEEDS_N_MIN = (
    "feature_score='mi' needs n_min, a public lower bound on the number of records: the MI "
    "sensitivity ΔI(N) falls with N (thesis eq. 3.20, Table 3.2), and one read from the private N "
    "would be released with the fit. Declare a bound you know without looking at the rows; with "
    "none, n_min=2 gives ΔI(2) = 1 bit, which holds for every N")


def _check_n_min(n_min: Any) -> int:
    """The declared lower bound on N for the MI sensitivity: an integer ≥ 2 (ΔI(1) is undefined)."""
    if n_min is None:
        raise ValueError(_MI_NEEDS_N_MIN)
    if isinstance(n_min, bool) or not isinstance(n_min, numbers.Integral) or n_min < 2:
        raise ValueError("n_min must be an integer ≥ 2 (a public lower bound on the number of "
                         f"records), got {n_min!r}")
    return int(n_min)


def score_sensitivity(score: str, n_min: int | None = None) -> float:
    """Δq of one score under add/remove-one (:func:`~dpexplore.sensitivity.utility_sensitivity`):
    1 for counts, ΔI(n_min) bits for MI (thesis §3.5.2.2, eq. 3.20, Table 3.2).

    ΔI(N) shrinks with N, so ``n_min`` must be a public *lower bound* on the number of records;
    ``n_min=2`` gives ΔI(2) = 1 bit, the whole range of the MI of two binary variables, a bound
    that holds for every N.
    """
    score = _check_score(score)
    if score == "count":
        return utility_sensitivity(1.0)
    return utility_sensitivity(mutual_information_sensitivity(_check_n_min(n_min), base=2))


# =========================================================================== Algorithm 4 (NOT DP)
def _iterative_order(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Examination order (descending, ties by index) and scores shifted so the (k+1)-th is 0."""
    order = np.argsort(-scores, kind="stable")
    shift = scores[order[k]] if k < scores.size else 0.0
    return order, scores[order] - shift


def iterative_select(scores: Any, k: int, *, epsilon: float, sensitivity: float,
                     random_state: RandomState = None, max_rounds: int = 10_000) -> tuple[np.ndarray, int]:
    """Thesis Algorithm 4 as printed (§3.5.3; NOT differentially private: the loop length and
    the examination order depend on the exact scores).

    ε' = ε/k; scores sorted and shifted so the (k+1)-th best is 0; features are examined in
    that order, cycling through the unselected ones, and each is kept with probability
    sigmoid(ε'·I/(2Δ)) until k are kept. Returns (selected indices, number of Bernoulli steps).
    """
    q = np.asarray(scores, dtype=float)
    k = check_int(k, "k", minimum=1)
    if k > q.size:
        raise ValueError(f"k = {k} exceeds the number of features {q.size}")
    eps_step = check_epsilon(epsilon) / k
    rng = check_random_state(random_state)
    order, shifted = _iterative_order(q, k)
    p = 1.0 / (1.0 + np.exp(-eps_step * shifted / (2.0 * sensitivity)))
    chosen = np.zeros(q.size, dtype=bool)
    steps = 0
    for _ in range(max_rounds):
        for j in range(q.size):
            if chosen[j]:
                continue
            steps += 1
            if rng.random() < p[j]:
                chosen[j] = True
                if chosen.sum() == k:
                    return np.sort(order[chosen]), steps
    raise RuntimeError("the iterative selector did not finish (scores far below the (k+1)-th)")


def iterative_selection_probabilities(scores: Any, *, epsilon: float, sensitivity: float) -> np.ndarray:
    """Exact P(feature chosen) of :func:`iterative_select` for k = 1 (geometric cycling)."""
    q = np.asarray(scores, dtype=float)
    order, shifted = _iterative_order(q, 1)
    p = 1.0 / (1.0 + np.exp(-check_epsilon(epsilon) * shifted / (2.0 * sensitivity)))
    reach = np.concatenate([[1.0], np.cumprod(1 - p)[:-1]])   # P(reach position j in one sweep)
    per_sweep = reach * p
    out = np.empty_like(q)
    out[order] = per_sweep / per_sweep.sum()
    return out


def _audit_pair() -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Two neighbouring data sets (add one record) on which two features' count scores tie / differ.

    Balanced classes (20 + 20). Feature A and B are on in 15 records of class 1 and 5 of class 0,
    so q_A = q_B = 10. The added record (class 1, A = 0, B = 1) gives q_A = 10, q_B = 11: the
    examination order of Algorithm 4 flips.
    """
    y = np.array([1] * 20 + [0] * 20)
    x = np.array([1] * 15 + [0] * 5 + [1] * 5 + [0] * 15)
    X = np.column_stack([x, x])
    X_neighbour = np.vstack([X, [0, 1]])
    y_neighbour = np.append(y, 1)
    return (X, y), (X_neighbour, y_neighbour)


def audit_iterative_vs_subset(*, epsilon: float = 0.1, n_samples: int = 20_000,
                              random_state: RandomState = None) -> pd.DataFrame:
    """Empirical privacy loss of Algorithm 4 and of the k-subset sampler (k = 1) on neighbours.

    Both claim ε-DP with the count score (Δq = 1). Returns one row per selector with the
    audit's point estimate, its lower confidence bound and whether it shows a violation.
    """
    epsilon = check_epsilon(epsilon)
    rng = check_random_state(random_state)
    (X, y), (Xn, yn) = _audit_pair()
    q, qn = purity_index(X, y), purity_index(Xn, yn)

    def iterative(scores, g, n):
        return np.array([iterative_select(scores, 1, epsilon=epsilon, sensitivity=1.0, random_state=g)[0][0]
                         for _ in range(n)])

    def subset(scores, g, n):
        return np.array([exponential_subset(scores, 1, epsilon=epsilon, sensitivity=1.0, random_state=g)[0]
                         for _ in range(n)])

    rows = []
    for name, mech, exact in (
            ("iterative (Alg. 4, NOT DP)", iterative,
             lambda s: iterative_selection_probabilities(s, epsilon=epsilon, sensitivity=1.0)),
            ("k-subset EM (Alg. 5)", subset,
             lambda s: exponential_subset_inclusion(s, 1, epsilon=epsilon, sensitivity=1.0))):
        result = privacy_loss(mech, q, qn, n_samples=n_samples, batched=True, random_state=rng)
        p, pn = exact(q), exact(qn)
        rows.append({"selector": name, "claimed_epsilon": epsilon,
                     "exact_loss": float(np.max(np.abs(np.log(p) - np.log(pn)))),
                     "epsilon_hat": result.epsilon_hat, "epsilon_lower": result.epsilon_lower,
                     "violates": result.violates(epsilon)})
    return pd.DataFrame(rows)


# =========================================================================== transformers
class _ThesisSelector(SelectorBase):
    """Shared plumbing: validation before any spend, scores, support, transform, ledger."""

    @classmethod
    def _sklearn_check_instance(cls):
        # the checks pass real-valued X and labels they choose: a public cut point and k = 1
        return cls(k=1, binarize=0.5)

    def _prepare(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, str, int, float]:
        """(0/1 matrix, 0/1 labels, row weights, score, k, ε): records are rows of weight 1;
        ``fit(source)`` gives the occupied cells weighted by their counts (SelectorBase).

        The public parameters are checked before the data is read; nothing here depends on the
        number of records (no refusal when it is below ``n_min``: see PrivateKSubsetSelector)."""
        epsilon = check_epsilon(self.epsilon)
        score = _check_score(self.feature_score, "feature_score")
        k = check_int(self.k, "k", minimum=1)
        if score == "mi":
            _check_n_min(self.n_min)
        source = self._source_data(X, y)
        if source is None:
            Xb, y = self._binary_X(X, y)     # y=None: scikit-learn's "requires y" error
        else:
            Xb, yb, w = source
        if k > Xb.shape[1]:
            raise ValueError(f"k = {k} exceeds the number of features (n_features = {Xb.shape[1]})")
        if source is None:
            yb = self._binary_y(y, Xb.shape[0])
            w = np.ones(Xb.shape[0], dtype=np.int64)
        return Xb, yb, w, score, k, epsilon

    def _sensitivity(self, score: str) -> float:
        """Δq from public values only: 1, or ΔI(n_min) (never from the private N)."""
        return score_sensitivity(score, self.n_min)

    @staticmethod
    def _scores(Xb: np.ndarray, yb: np.ndarray, w: np.ndarray, score: str) -> np.ndarray:
        # weighted sums over rows (records: weight 1; a count table's cells: their counts)
        if score == "count":
            return purity_index(Xb, yb, weights=w)
        return information_gain(Xb, yb, base=2, weights=w)

    def true_scores(self, X: Any, y: Any) -> np.ndarray:
        """The exact per-feature scores q of (X, y) — **NOT private** (a teaching view).

        Recomputed from the data you pass (nothing is kept on the fitted selector); uses this
        selector's ``feature_score``, ``classes`` and ``binarize``. Never publish the result.
        """
        probe = clone(self)
        Xb, yb, w, score, _, _ = probe._prepare(X, y)
        return self._scores(Xb, yb, w, score)


class PrivateKSubsetSelector(_ThesisSelector):
    """ε-DP choice of exactly k binary features (thesis Algorithm 5, §3.5.5).

    P(S) ∝ exp(ε·Σ_{d∈S} q_d / (2·k·Δq)) over all k-subsets, sampled exactly in O(kD).
    ``feature_score="count"``: q = max(|N¹₁−N¹₀|, |N⁰₁−N⁰₀|), Δq = 1 (§3.5.4).
    ``feature_score="mi"``: mutual information in bits, Δq = ΔI(n_min) (eq. 3.20, Table 3.2).
    ``n_min`` is then required (ValueError before anything is spent, whatever the data): ΔI(N)
    falls with N, so a sensitivity computed from the private N would be released, exactly, in
    ``score_sensitivity_``. The guarantee assumes N ≥ n_min, as every declared bound is an
    assumption about the data; it is not checked, because a refusal when N < n_min would itself
    tell neighbours apart (with fewer records a score can move by ΔI(N) > ΔI(n_min)). Without a
    bound to declare, ``n_min=2``: ΔI(2) = 1 bit is the whole range of the MI of two binary
    variables, so it holds for every N. (A bound taken from a noisy count would hold only with
    high probability, making the fit (ε, δ)-DP, not ε-DP.)
    ``mechanism="noisy_scores"``: Algorithm 3 (§3.5.2.2): q + Laplace(D·Δq/ε), top k.
    ``classes``: the two public labels ``[negative, positive]`` (the scores compare the last
    declared class with the others); ``None`` reads them from y with a PrivacyLeakWarning.
    ``binarize``: None (X must be 0/1) or a public cut point (X > binarize becomes 1).

    Fitted: ``support_`` (the ε-DP release; plus ``noisy_scores_`` for Alg. 3),
    ``score_sensitivity_``, ``subset_sensitivity_`` (subset mechanism; both functions of the
    public ``feature_score``, ``n_min``, ``k`` and number of features only), ``classes_``,
    ``ledger_``, ``accountant_``. Exact scores and exact selection probabilities are **not**
    kept: :meth:`true_scores`, :meth:`inclusion_probabilities` and :meth:`subset_probabilities`
    recompute them from data you pass (non-private teaching views).
    """

    def __init__(self, k: int = 10, epsilon: float = 0.05, *, feature_score: str = "count",
                 mechanism: str = "subset", n_min: int | None = None, classes: Any = None,
                 binarize: float | None = None, accountant: Any = None,
                 random_state: RandomState = None):
        self.k = k
        self.epsilon = epsilon
        self.feature_score = feature_score
        self.mechanism = mechanism
        self.n_min = n_min
        self.classes = classes
        self.binarize = binarize
        self.accountant = accountant
        self.random_state = random_state

    def _calibration(self, n_features: int) -> tuple[int, float, float]:
        """Check the public parameters; (k, ε, sensitivity of the released quantity).

        Subset mechanism: the utility Σ_{d∈S} q_d of a k-subset has sensitivity k·Δq (thesis
        §3.5.5). Noisy scores: one record moves every score, L1 sensitivity D·Δq (Alg. 3, §3.5.2.2).
        """
        if self.mechanism not in ("subset", "noisy_scores"):
            raise ValueError(f"mechanism must be 'subset' or 'noisy_scores', got {self.mechanism!r}")
        epsilon = check_epsilon(self.epsilon)
        score = _check_score(self.feature_score, "feature_score")
        k = check_int(self.k, "k", minimum=1)
        if k > n_features:
            raise ValueError(f"k = {k} exceeds the number of features (n_features = {n_features})")
        dq = self._sensitivity(score)
        self.score_sensitivity_ = dq
        return k, epsilon, (k * dq if self.mechanism == "subset" else n_features * dq)

    def _mechanism_params(self, X: Any, y: Any) -> tuple[np.ndarray, int, float, float, int]:
        """Validate, score and calibrate: (q, k, ε, sensitivity of the released quantity, D).

        The one place fit and the teaching views take the mechanism's parameters from.
        """
        Xb, yb, w, score, _, _ = self._prepare(X, y)
        d = Xb.shape[1]
        k, epsilon, sensitivity = self._calibration(d)
        return self._scores(Xb, yb, w, score), k, epsilon, sensitivity, d

    def fit(self, X: Any, y: Any = None) -> "PrivateKSubsetSelector":
        """Score the features and sample the k-subset; spends ``epsilon`` once.

        ``fit(X, y)`` on 0/1 features, or ``fit(source)``: the ``Binarizer(source.schema)``
        columns from the source's count table (weighted cells; see
        :mod:`dpexplore.select.base`), kept as ``binarizer_``.
        """
        q, k, epsilon, sensitivity, _ = self._mechanism_params(X, y)
        self._select(q, k, epsilon, sensitivity)
        return self

    def fit_scores(self, scores: Any) -> "PrivateKSubsetSelector":
        """Sample the k-subset from precomputed ``scores`` (one per feature); spends ``epsilon`` once.

        The scores are private: they must be the ``feature_score`` of the training data, as
        :meth:`true_scores` computes them. Same checks, spend, draws and fitted attributes as
        :meth:`fit`, without ``feature_names_in_`` and ``classes_``.
        """
        q = check_scores(scores)
        for stale in ("feature_names_in_", "classes_", "binarizer_"):
            self.__dict__.pop(stale, None)
        self.n_features_in_ = q.size
        self._select(q, *self._calibration(q.size))
        return self

    def _select(self, q: np.ndarray, k: int, epsilon: float, sensitivity: float) -> None:
        """The mechanism (the one place it runs): Algorithm 5, or Algorithm 3 for ``noisy_scores``,
        calibrated by :meth:`_calibration`."""
        score = self.feature_score
        rng = self._start(epsilon)
        if self.mechanism == "subset":
            eps = self._spend(epsilon, f"feature selection: k-subset EM ({score} score, k={k})")
            self.subset_sensitivity_ = sensitivity
            chosen = exponential_subset(q, k, epsilon=eps, sensitivity=sensitivity, random_state=rng)
        else:
            eps = self._spend(epsilon, f"feature selection: noisy {score} scores (Alg. 3)")
            noisy = laplace(q, epsilon=eps, sensitivity=sensitivity, random_state=rng)
            self.noisy_scores_ = noisy
            chosen = np.argsort(-noisy, kind="stable")[:k]
        self._set_support(chosen)

    def inclusion_probabilities(self, X: Any, y: Any) -> np.ndarray:
        """Exact P(d ∈ S) of the subset mechanism on (X, y) — **NOT private** (teaching view).

        Same validation, scores and calibration as :meth:`fit`; spends nothing, stores nothing.
        """
        probe = clone(self)
        if probe.mechanism != "subset":
            raise ValueError("inclusion probabilities are exact for mechanism='subset' only")
        q, k, epsilon, sensitivity, _ = probe._mechanism_params(X, y)
        return exponential_subset_inclusion(q, k, epsilon=epsilon, sensitivity=sensitivity)

    def subset_probabilities(self, X: Any, y: Any, *, max_subsets: int = 200_000) -> pd.Series:
        """Exact P(S) of every k-subset on (X, y) — **NOT private** (teaching view, small D only).

        A Series indexed by the sorted tuples of feature indices. Same calibration as :meth:`fit`.
        """
        probe = clone(self)
        if probe.mechanism != "subset":
            raise ValueError("subset probabilities are exact for mechanism='subset' only")
        q, k, epsilon, sensitivity, d = probe._mechanism_params(X, y)
        if math.comb(d, k) > max_subsets:
            raise ValueError(f"C({d}, {k}) subsets exceed max_subsets={max_subsets}")
        subsets = list(itertools.combinations(range(d), k))
        logw = np.array([epsilon * q[list(s)].sum() / (2.0 * sensitivity) for s in subsets])
        return pd.Series(np.exp(logw - np.logaddexp.reduce(logw)), index=pd.Index(subsets, tupleize_cols=False),
                         name="probability")


class IterativeSelector(_ThesisSelector):
    """Thesis Algorithm 4 (§3.5.3): iterative binary exponential mechanism — **NOT differentially private**.

    Kept as a cautionary example. It spends (records) the claimed ``epsilon`` in the accountant
    under a label saying so, and exposes ``n_steps_`` (Bernoulli steps actually run) and
    ``epsilon_composed_`` = n_steps·ε/k, what sequential composition charges for those steps
    (the thesis's "(#iterations)·ε/T", §3.5.3): a step keeps a feature with probability
    sigmoid(x), x = ε'·I/(2Δq), and |d log sigmoid(±x)/dx| ≤ 1, so a step costs at most the
    change of x, ε'·(2Δq)/(2Δq) = ε' with the data-dependent shift (shifted scores have
    sensitivity 2Δq). Even that is no guarantee: the number of steps and the examination order
    depend on the exact scores (see :func:`audit_iterative_vs_subset`). ``classes`` and
    ``binarize`` as for :class:`PrivateKSubsetSelector`; exact scores via :meth:`true_scores`.
    ``fit(source)`` is refused (TypeError): not DP.
    """

    _fits_source = False

    def __init__(self, k: int = 10, epsilon: float = 0.05, *, feature_score: str = "count",
                 n_min: int | None = None, classes: Any = None, binarize: float | None = None,
                 accountant: Any = None, random_state: RandomState = None):
        self.k = k
        self.epsilon = epsilon
        self.feature_score = feature_score
        self.n_min = n_min
        self.classes = classes
        self.binarize = binarize
        self.accountant = accountant
        self.random_state = random_state

    def fit(self, X: Any, y: Any = None) -> "IterativeSelector":
        """Run Algorithm 4 with ε' = ε/k per step (warns: not DP)."""
        Xb, yb, w, score, k, epsilon = self._prepare(X, y)
        dq = self._sensitivity(score)
        warnings.warn("IterativeSelector (thesis Algorithm 4) is NOT differentially private: its "
                      "loop length and examination order depend on the data (thesis §3.5.3). Use "
                      "PrivateKSubsetSelector.", NotDifferentiallyPrivateWarning,
                      stacklevel=FIT_CALLER_STACKLEVEL)
        rng = self._start(epsilon)
        q = self._scores(Xb, yb, w, score)
        self._spend(epsilon, "feature selection: iterative Alg. 4 (claimed ε; NOT DP)")
        chosen, steps = iterative_select(q, k, epsilon=epsilon, sensitivity=dq, random_state=rng)
        self.n_steps_ = steps
        # each Bernoulli step costs ε' = ε/k (see the class docstring); NOT a DP guarantee
        self.epsilon_composed_ = steps * epsilon / k
        self._set_support(chosen)
        return self
