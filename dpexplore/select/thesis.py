"""Private feature selection from the thesis on DP Naive Bayes / logistic regression (seed 002).

Spec: specs/feature-selection-nb-lr.md §4. Features are binary (0/1), the label binary, and
neighbours add or remove one record (§1).

* :class:`PrivateKSubsetSelector` — the thesis's Algorithm 5 ("privacy-efficient sampling"): one
  exponential mechanism over all k-subsets with utility U(S) = Σ_{d∈S} q_d, whose sensitivity is
  k·Δq (§4.5). The sampler is :func:`dpexplore.mechanisms.exponential_subset` (the corrected
  recurrence); its exact inclusion probabilities come from
  :func:`dpexplore.mechanisms.exponential_subset_inclusion`. Scores: the count score q (§4.4,
  = Stoddard's purity index, Δq = 1) or mutual information in bits (§2.6, Δq = ΔI(N) of
  Zhang et al. 2014). ``mechanism="noisy_scores"`` is the thesis's Algorithm 3 instead
  (Laplace(D·Δq/ε) on every score, keep the top k, §4.2), for comparison.
* :class:`IterativeSelector` — Algorithm 4 (§4.3) as printed, kept only as a labelled **non-DP**
  example: its loop count and examination order depend on the exact scores.
  :func:`audit_iterative_vs_subset` exhibits two neighbouring data sets on which it leaks far
  more than its claimed ε while the k-subset sampler stays within ε.
"""
from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np
import pandas as pd

from .._validation import RandomState, check_epsilon, check_random_state
from ..audit import privacy_loss
from ..domain import PrivacyLeakWarning
from ..mechanisms import exponential_subset, exponential_subset_inclusion, laplace
from .base import SelectorBase
from .scores import information_gain, mutual_information_sensitivity, purity_index
from .stoddard import NotDifferentiallyPrivateWarning

__all__ = ["THESIS_SCORES", "thesis_scores", "score_sensitivity", "iterative_select",
           "iterative_selection_probabilities", "audit_iterative_vs_subset",
           "PrivateKSubsetSelector", "IterativeSelector", "NotDifferentiallyPrivateWarning"]

THESIS_SCORES = ("count", "mi")


# =========================================================================== helpers
def _positive_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _check_score(score: Any) -> str:
    if score not in THESIS_SCORES:
        raise ValueError(f"score must be one of {THESIS_SCORES}, got {score!r}")
    return score


def _binary_xy(X: Any, y: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(0/1 matrix, 0/1 labels, the two class values); the positive class is the larger value."""
    a = np.asarray(X.to_numpy() if isinstance(X, pd.DataFrame) else X)
    if a.ndim != 2 or a.shape[0] == 0 or a.shape[1] == 0:
        raise ValueError("X must be a non-empty 2-D array of 0/1 features")
    if a.dtype == bool:
        a = a.astype(np.int64)
    elif not (np.issubdtype(a.dtype, np.number) and np.isin(a, (0, 1)).all()):
        raise ValueError("X must hold only 0/1 values: binarise it with public cut points first "
                         "(dpexplore.models.naive_bayes.Binarizer)")
    if y is None:
        raise ValueError("the feature scores need the labels y")
    ya = np.asarray(y.to_numpy() if isinstance(y, (pd.Series, pd.DataFrame)) else y).ravel()
    if ya.size != a.shape[0]:
        raise ValueError(f"X has {a.shape[0]} rows but y has {ya.size}")
    if pd.isna(ya).any():
        raise ValueError("y has missing values (NaN): drop those rows first")
    classes = np.unique(ya)
    if classes.size != 2:
        raise ValueError(f"y must have exactly two classes (the thesis's scores are binary), got {classes.size}")
    return a.astype(np.int64), (ya == classes[1]).astype(np.int64), classes


def thesis_scores(X: Any, y: Any, score: str = "count") -> np.ndarray:
    """Per-feature quality: the count score q (§4.4, raw counts) or MI in bits (§2.6)."""
    score = _check_score(score)
    Xb, yb, _ = _binary_xy(X, y)
    if score == "count":
        return purity_index(Xb, yb)
    return information_gain(Xb, yb, base=2)


def score_sensitivity(score: str, n_min: int | None = None) -> float:
    """Δq of one score under add/remove-one: 1 for counts, ΔI(n_min) bits for MI (Table 3.2).

    ΔI(N) shrinks with N, so ``n_min`` must be a public *lower bound* on the number of records.
    """
    score = _check_score(score)
    if score == "count":
        return 1.0
    if n_min is None:
        raise ValueError("score='mi' needs n_min, a public lower bound on the number of records")
    return mutual_information_sensitivity(_positive_int(n_min, "n_min"), base=2)


# =========================================================================== Algorithm 4 (NOT DP)
def _iterative_order(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Examination order (descending, ties by index) and scores shifted so the (k+1)-th is 0."""
    order = np.argsort(-scores, kind="stable")
    shift = scores[order[k]] if k < scores.size else 0.0
    return order, scores[order] - shift


def iterative_select(scores: Any, k: int, *, epsilon: float, sensitivity: float,
                     random_state: RandomState = None, max_rounds: int = 10_000) -> tuple[np.ndarray, int]:
    """Thesis Algorithm 4 as printed (NOT differentially private; spec §4.3, trap 9).

    ε' = ε/k; scores sorted and shifted so the (k+1)-th best is 0; features are examined in
    that order, cycling through the unselected ones, and each is kept with probability
    sigmoid(ε'·I/(2Δ)) until k are kept. Returns (selected indices, number of Bernoulli steps).
    """
    q = np.asarray(scores, dtype=float)
    k = _positive_int(k, "k")
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

    def _prepare(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray, str, int, float]:
        epsilon = check_epsilon(self.epsilon)
        score = _check_score(self.score)
        k = _positive_int(self.k, "k")
        Xb, yb, _ = _binary_xy(X, y)
        if k > Xb.shape[1]:
            raise ValueError(f"k = {k} exceeds the number of features {Xb.shape[1]}")
        if score == "mi" and self.n_min is not None and Xb.shape[0] < self.n_min:
            raise ValueError(f"n_min={self.n_min} is larger than the number of records: the MI "
                             "sensitivity would be understated; pass a true lower bound")
        self.n_features_in_ = Xb.shape[1]
        if isinstance(X, pd.DataFrame):
            self.feature_names_in_ = np.asarray(X.columns, dtype=object)
        return Xb, yb, score, k, epsilon

    def _sensitivity(self, score: str, n: int) -> float:
        if score == "mi" and self.n_min is None:
            warnings.warn("score='mi' without n_min: the MI sensitivity ΔI(N) uses the private "
                          "record count N - 1; pass a public lower bound n_min",
                          PrivacyLeakWarning, stacklevel=3)
            return mutual_information_sensitivity(max(n - 1, 2), base=2)
        return score_sensitivity(score, self.n_min)




class PrivateKSubsetSelector(_ThesisSelector):
    """ε-DP choice of exactly k binary features (thesis Algorithm 5, spec §4.5).

    P(S) ∝ exp(ε·Σ_{d∈S} q_d / (2·k·Δq)) over all k-subsets, sampled exactly in O(kD).
    ``score="count"``: q = max(|N¹₁−N¹₀|, |N⁰₁−N⁰₀|), Δq = 1 (§4.4). ``score="mi"``: mutual
    information in bits, Δq = ΔI(n_min) (give a public lower bound on N; without it the private
    N is used with a :class:`~dpexplore.domain.PrivacyLeakWarning`).
    ``mechanism="noisy_scores"``: Algorithm 3 (§4.2): q + Laplace(D·Δq/ε), top k.

    Fitted: ``support_``, ``scores_`` (exact scores — **not private**, for teaching plots only),
    ``inclusion_probabilities_`` (exact P(d ∈ S), computed from the exact scores — also **not
    private**, teaching plots only; subset mechanism only), ``accountant_``. Only ``support_``
    (and ``noisy_scores_`` for Alg. 3) is the ε-DP release.
    """

    def __init__(self, k: int = 10, epsilon: float = 0.05, *, score: str = "count",
                 mechanism: str = "subset", n_min: int | None = None, accountant: Any = None,
                 random_state: RandomState = None):
        self.k = k
        self.epsilon = epsilon
        self.score = score
        self.mechanism = mechanism
        self.n_min = n_min
        self.accountant = accountant
        self.random_state = random_state

    def fit(self, X: Any, y: Any) -> "PrivateKSubsetSelector":
        """Score the features and sample the k-subset; spends ``epsilon`` once."""
        if self.mechanism not in ("subset", "noisy_scores"):
            raise ValueError(f"mechanism must be 'subset' or 'noisy_scores', got {self.mechanism!r}")
        Xb, yb, score, k, epsilon = self._prepare(X, y)
        dq = self._sensitivity(score, Xb.shape[0])
        rng = self._start(epsilon)
        q = purity_index(Xb, yb) if score == "count" else information_gain(Xb, yb, base=2)
        self.scores_ = q
        self.score_sensitivity_ = dq
        if self.mechanism == "subset":
            eps = self._spend(epsilon, f"feature selection: k-subset EM ({score} score, k={k})")
            # Alg. 5: the utility Σ_{d∈S} q_d of a k-subset has sensitivity k·Δq (§4.5)
            self.subset_sensitivity_ = k * dq
            self.inclusion_probabilities_ = exponential_subset_inclusion(
                q, k, epsilon=eps, sensitivity=self.subset_sensitivity_)
            chosen = exponential_subset(q, k, epsilon=eps, sensitivity=self.subset_sensitivity_,
                                        random_state=rng)
        else:
            eps = self._spend(epsilon, f"feature selection: noisy {score} scores (Alg. 3)")
            # Alg. 3: one record moves every score, so the L1 sensitivity of the vector is D·Δq
            noisy = laplace(q, epsilon=eps, sensitivity=Xb.shape[1] * dq, random_state=rng)
            self.noisy_scores_ = noisy
            chosen = np.argsort(-noisy, kind="stable")[:k]
        self._set_support(chosen)
        return self


class IterativeSelector(_ThesisSelector):
    """Thesis Algorithm 4 (§4.3): iterative binary exponential mechanism — **NOT differentially private**.

    Kept as a cautionary example. It spends (records) the claimed ``epsilon`` in the accountant
    under a label saying so, and exposes ``n_steps_`` (Bernoulli steps actually run) and
    ``epsilon_composed_`` = n_steps·ε/k, what sequential composition charges for those steps
    (the thesis's "(#iterations)·ε/T", §4.3): a step keeps a feature with probability
    sigmoid(x), x = ε'·I/(2Δq), and |d log sigmoid(±x)/dx| ≤ 1, so a step costs at most the
    change of x, ε'·(2Δq)/(2Δq) = ε' with the data-dependent shift (shifted scores have
    sensitivity 2Δq). Even that is no guarantee: the number of steps and the examination order
    depend on the exact scores (see :func:`audit_iterative_vs_subset`).
    """

    def __init__(self, k: int = 10, epsilon: float = 0.05, *, score: str = "count",
                 n_min: int | None = None, accountant: Any = None, random_state: RandomState = None):
        self.k = k
        self.epsilon = epsilon
        self.score = score
        self.n_min = n_min
        self.accountant = accountant
        self.random_state = random_state

    def fit(self, X: Any, y: Any) -> "IterativeSelector":
        """Run Algorithm 4 with ε' = ε/k per step (warns: not DP)."""
        Xb, yb, score, k, epsilon = self._prepare(X, y)
        dq = self._sensitivity(score, Xb.shape[0])
        warnings.warn("IterativeSelector (thesis Algorithm 4) is NOT differentially private: its "
                      "loop length and examination order depend on the data (spec §4.3). Use "
                      "PrivateKSubsetSelector.", NotDifferentiallyPrivateWarning, stacklevel=2)
        rng = self._start(epsilon)
        q = purity_index(Xb, yb) if score == "count" else information_gain(Xb, yb, base=2)
        self.scores_ = q
        self._spend(epsilon, "feature selection: iterative Alg. 4 (claimed ε; NOT DP)")
        chosen, steps = iterative_select(q, k, epsilon=epsilon, sensitivity=dq, random_state=rng)
        self.n_steps_ = steps
        # each Bernoulli step costs ε' = ε/k (see the class docstring); NOT a DP guarantee
        self.epsilon_composed_ = steps * epsilon / k
        self._set_support(chosen)
        return self
