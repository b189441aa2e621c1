"""Attacks that show why privacy needs noise: reconstruction from subset counts, membership inference.

Non-private by design: they run on the data owner's side to show what answers without enough
noise give away (the labs' "attacks first").

* Reconstruction (Dinur & Nissim 2003, §3, the polynomial-time attack): from the counts of a
  secret bit over many random subsets of n records, answered with error at most E, a linear
  program finds a 0/1 vector consistent with the answers. When E is well below √n it agrees with
  the secret on almost every record; from E ≈ √n on it falls towards guessing (n = 100, 4n
  queries: 100% of the bits at E ≤ 1, about 70% at E = √n, under 60% at E = 5√n).
  :func:`subset_queries`, :func:`noisy_subset_counts`, :func:`reconstruct`, :func:`reconstruction_rate`.
* Membership inference by the loss threshold (Yeom et al. 2018, §3): records a model was
  trained on tend to have a lower loss; the score −loss ranks members first, and its ROC curve
  against records the model never saw measures the leak (AUC 0.5: none). :func:`membership_scores`,
  :func:`membership_roc`. Against an ε-DP training algorithm no attack's ROC curve can rise above
  :func:`membership_bound` (the hypothesis-testing view of DP: Wasserman & Zhou 2010, Thm 2.4;
  Kairouz, Oh & Viswanath 2015, Thm 2.1).

>>> rng = np.random.default_rng(0)
>>> secret = rng.integers(0, 2, size=60)
>>> reconstruction_rate(secret, n_queries=240, noise=0.0, random_state=1)      # exact answers
1.0
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ._validation import (RandomState, check_bits, check_epsilon, check_finite, check_fraction, check_int,
                          check_random_state)

__all__ = ["subset_queries", "noisy_subset_counts", "reconstruct", "reconstruction_rate",
           "membership_scores", "membership_roc", "membership_bound"]


def _check_secret(secret: Any) -> np.ndarray:
    s = check_bits(secret, "secret")
    if s.ndim != 1:
        raise ValueError("secret must be a 1-D array: one bit per record")
    return s.astype(float)


def _check_noise(noise: Any) -> float:
    e = check_finite(noise, "noise")
    if e < 0:
        raise ValueError(f"noise must be ≥ 0 (the largest error of an answer), got {noise!r}")
    return e


def subset_queries(n_records: int, n_queries: int, *, random_state: RandomState = None) -> np.ndarray:
    """A (n_queries × n_records) 0/1 matrix: each query a uniformly random subset of the records
    (each record in each subset with probability 1/2; Dinur & Nissim 2003, §3).

    >>> subset_queries(4, 2, random_state=0)
    array([[1, 1, 1, 0],
           [0, 0, 0, 0]])
    """
    n = check_int(n_records, "n_records", minimum=1)
    k = check_int(n_queries, "n_queries", minimum=1)
    return check_random_state(random_state).integers(0, 2, size=(k, n))


def noisy_subset_counts(secret: Any, queries: Any, *, noise: float,
                        random_state: RandomState = None) -> np.ndarray:
    """The count of 1s of ``secret`` in each query's subset, each plus an independent error
    uniform on [−E, E], E = ``noise``: a server whose answers are within E of the truth, the
    perturbation of Dinur & Nissim 2003 (E = 0: exact answers).

    >>> noisy_subset_counts([1, 0, 1], [[1, 1, 1], [1, 0, 0]], noise=0.0)
    array([2., 1.])
    """
    s, e = _check_secret(secret), _check_noise(noise)
    A = np.asarray(queries, dtype=float)
    if A.ndim != 2 or A.shape[1] != s.size:
        raise ValueError(f"queries must be a 2-D 0/1 matrix with one column per record ({s.size})")
    return A @ s + check_random_state(random_state).uniform(-e, e, size=A.shape[0])


def reconstruct(queries: Any, answers: Any) -> np.ndarray:
    """The 0/1 vector the attacker reconstructs: the x ∈ [0, 1]^n that minimises Σ_j |A_j·x − a_j|
    (a linear program, solved by scipy's HiGHS), rounded at 1/2. Dinur & Nissim (2003, §3) take any
    x within E of every answer; minimising the total error instead (the LP decoding of Dwork,
    McSherry & Talwar 2007) needs no E.

    >>> A = subset_queries(5, 20, random_state=0)
    >>> reconstruct(A, A @ np.array([1, 0, 0, 1, 1]))
    array([1, 0, 0, 1, 1])
    """
    from scipy.optimize import linprog   # here: the package imports stay light

    A = np.asarray(queries, dtype=float)
    a = np.asarray(answers, dtype=float)
    if A.ndim != 2 or a.shape != (A.shape[0],) or not (np.all(np.isfinite(A)) and np.all(np.isfinite(a))):
        raise ValueError("queries must be a finite 2-D matrix and answers a finite vector, one answer per query")
    k, n = A.shape
    # variables (x, e): minimise Σ e subject to A x − e ≤ a, −A x − e ≤ −a, 0 ≤ x ≤ 1, e ≥ 0
    cost = np.r_[np.zeros(n), np.ones(k)]
    constraints = np.block([[A, -np.eye(k)], [-A, -np.eye(k)]])
    result = linprog(cost, A_ub=constraints, b_ub=np.r_[a, -a], bounds=[(0, 1)] * n + [(0, None)] * k,
                     method="highs")
    if result.status != 0:
        raise RuntimeError(f"the linear program failed: {result.message}")
    return (result.x[:n] >= 0.5).astype(np.int64)


def reconstruction_rate(secret: Any, *, n_queries: int, noise: float, random_state: RandomState = None) -> float:
    """Share of the records whose secret bit :func:`reconstruct` recovers from ``n_queries``
    random subset counts answered within ``noise`` (0.5 is a coin's guess on a balanced secret).

    >>> reconstruction_rate([1, 0] * 30, n_queries=240, noise=60.0, random_state=0) < 0.9   # E ≫ √n
    True
    """
    s = _check_secret(secret)
    rng = check_random_state(random_state)
    A = subset_queries(s.size, n_queries, random_state=rng)
    guess = reconstruct(A, noisy_subset_counts(s, A, noise=noise, random_state=rng))
    return float(np.mean(guess == s))


def membership_scores(model: Any, X: Any, y: Any) -> np.ndarray:
    """The loss-threshold attack's score of each record: log p̂(y | x), the negated cross-entropy
    loss of the fitted ``model`` (``predict_proba`` and ``classes_``, as scikit-learn's) on its
    true label (Yeom et al. 2018, §3). Higher means "more likely a training record"; a
    threshold on it is the attack, every threshold gives a point of :func:`membership_roc`.

    >>> from sklearn.tree import DecisionTreeClassifier
    >>> model = DecisionTreeClassifier(random_state=0).fit([[0], [1], [2]], [0, 1, 0])
    >>> membership_scores(model, [[0], [1]], [0, 1])
    array([0., 0.])
    """
    proba = np.asarray(model.predict_proba(X), dtype=float)
    classes = list(model.classes_)
    labels = np.asarray(y)
    if labels.ndim != 1 or labels.size != proba.shape[0]:
        raise ValueError("y must give one label per row of X")
    unknown = set(labels.tolist()) - set(classes)
    if unknown:
        raise ValueError(f"y has labels the model does not know; its classes are {classes}")
    column = np.array([classes.index(label) for label in labels.tolist()])
    p = proba[np.arange(labels.size), column]
    return np.log(np.clip(p, 1e-12, 1.0))   # a probability of 0 would make the loss infinite


def membership_roc(member_scores: Any, non_member_scores: Any) -> tuple[pd.DataFrame, float]:
    """The attack's ROC curve (false and true positive rates over every threshold, as a DataFrame
    with columns ``fpr``, ``tpr``, ``threshold``) and its AUC: members are the positives.

    >>> roc, auc = membership_roc([0.0, -0.1, -0.2], [-1.0, -2.0, -0.15])
    >>> round(auc, 3)
    0.889
    """
    from sklearn.metrics import roc_auc_score, roc_curve

    pos = np.asarray(member_scores, dtype=float).ravel()
    neg = np.asarray(non_member_scores, dtype=float).ravel()
    if pos.size == 0 or neg.size == 0 or not (np.all(np.isfinite(pos)) and np.all(np.isfinite(neg))):
        raise ValueError("member_scores and non_member_scores must be non-empty and finite")
    truth = np.r_[np.ones(pos.size), np.zeros(neg.size)]
    fpr, tpr, threshold = roc_curve(truth, np.r_[pos, neg])
    return pd.DataFrame({"fpr": fpr, "tpr": tpr, "threshold": threshold}), float(roc_auc_score(truth, np.r_[pos, neg]))


def membership_bound(fpr: Any, *, epsilon: float, delta: float = 0.0) -> np.ndarray:
    """The highest true-positive rate any membership test can reach at false-positive rate ``fpr``
    against an (ε, δ)-DP training algorithm: min(1, e^ε·FPR + δ, 1 − e^−ε·(1 − δ − FPR)).

    Telling "the record was in the training set" from "it was not" is a test between two
    neighbouring datasets; (ε, δ)-DP confines every such test's error rates to this region
    (Wasserman & Zhou 2010, Thm 2.4, for δ = 0; Kairouz, Oh & Viswanath 2015, Thm 2.1). So the
    ROC curve of :func:`membership_roc` stays under it, up to sampling noise, for a DP model.

    >>> membership_bound([0.0, 0.05, 0.5, 1.0], epsilon=1.0).round(4).tolist()
    [0.0, 0.1359, 0.8161, 1.0]
    """
    eps = check_epsilon(epsilon)
    d = 0.0 if delta == 0 else check_fraction(delta, "delta", high_closed=False)
    f = np.asarray(fpr, dtype=float)
    if f.size == 0 or not np.all((f >= 0) & (f <= 1)):
        raise ValueError("fpr must hold false-positive rates in [0, 1]")
    return np.minimum.reduce([np.ones_like(f), np.exp(eps) * f + d, 1 - np.exp(-eps) * (1 - d - f)])
