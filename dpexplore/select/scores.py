"""Feature scores for binary features and a binary label, with their sensitivities.

One implementation serves both papers that use them:
Stoddard, Chen & Machanavajjhala (2014) §3.1–3.2: total count TC (eq. 2), difference count DC
(eq. 3), purity index PI (eq. 4) and information gain IG (eqs. 5–6);
the thesis on DP Naive Bayes / logistic regression uses PI as its count-based score q(X_j)
(§3.5.4), and mutual information (= IG) with the sensitivity ΔI(N) of Zhang et al. (2014)
(§3.5.2.2, eq. 3.20, Table 3.2).

Under add/remove-one neighbours, TC/DC/PI scores move by at most 1 each (a record touches one of
the four counts of a feature). How many scores move at once (the L1 sensitivity of the whole
vector) depends on the score: Δ(Q) of Stoddard et al. §3.2 (s for TC and DC, every feature for
PI and IG).

Every score takes optional ``weights``: row i stands for ``weights[i]`` records (e.g. the occupied
cells of a :class:`~dpexplore.counts.CountTable`, weights = counts, via
:func:`dpexplore.encode.binarize_table`). Records are rows of weight 1: one code path,
exact integer counts either way.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import check_binary_matrix, check_same_length, is_zero_one

__all__ = ["binary_class_counts", "total_count", "difference_count", "purity_index",
           "information_gain", "mutual_information_sensitivity"]


def _binary_labels(y: Any, n: int) -> np.ndarray:
    a = np.asarray(y).ravel()
    check_same_length(range(n), a)
    if not is_zero_one(a):
        raise ValueError("y must be binary 0/1 labels for these scores")
    return a.astype(np.int64)


def _weights(weights: Any, n: int) -> np.ndarray:
    """Row weights (records per row): ones when None; else n finite non-negative numbers."""
    if weights is None:
        return np.ones(n, dtype=np.int64)
    w = np.asarray(weights)
    if w.ndim != 1:
        raise ValueError("weights must be 1-D: one entry (records per row) per row of X")
    check_same_length(range(n), w, names=("X", "weights"))
    if not (np.issubdtype(w.dtype, np.number) and np.all(np.isfinite(w)) and np.all(w >= 0)):
        raise ValueError("weights must be finite non-negative numbers (records per row)")
    return w


def binary_class_counts(X: Any, y: Any, weights: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(n11, n10, n01, n00): per feature, records with F=f and L=l (first index f, second l).

    Weighted sums over rows (``weights=None``: one record per row)."""
    Xb = check_binary_matrix(X, copy=False)     # read only
    yb = _binary_labels(y, Xb.shape[0])
    w = _weights(weights, Xb.shape[0])
    pos, neg = yb == 1, yb == 0
    n11 = (w * pos) @ Xb      # one product per class, without copying the class's rows
    n10 = (w * neg) @ Xb
    return n11, n10, w[pos].sum() - n11, w[neg].sum() - n10


def total_count(X: Any, y: Any = None, weights: Any = None) -> np.ndarray:
    """TC (Stoddard eq. 2): number of records with the feature on. Each score has sensitivity 1."""
    Xb = check_binary_matrix(X, copy=False)     # read only
    return (_weights(weights, Xb.shape[0]) @ Xb).astype(float)


def difference_count(X: Any, y: Any, weights: Any = None) -> np.ndarray:
    """DC (Stoddard eq. 3): |n_{F=1∧L=1} − n_{F=1∧L=0}|. Each score has sensitivity 1."""
    n11, n10, _, _ = binary_class_counts(X, y, weights)
    return np.abs(n11 - n10).astype(float)


def purity_index(X: Any, y: Any, weights: Any = None) -> np.ndarray:
    """PI (Stoddard eq. 4) = the thesis's count score (§3.5.4, raw counts).

    max(|n_{F=1∧L=1} − n_{F=1∧L=0}|, |n_{F=0∧L=1} − n_{F=0∧L=0}|). Each score has sensitivity 1,
    but one record moves every feature's score (its F=0 counts change too).
    """
    n11, n10, n01, n00 = binary_class_counts(X, y, weights)
    return np.maximum(np.abs(n11 - n10), np.abs(n01 - n00)).astype(float)


def information_gain(X: Any, y: Any, base: float = np.e, weights: Any = None) -> np.ndarray:
    """IG = mutual information I(F; L) of each binary feature with the label (Stoddard eqs. 5–6).

    In nats by default (the paper writes ln); ``base=2`` gives bits as in the thesis.
    """
    n11, n10, n01, n00 = (np.asarray(c, dtype=float) for c in binary_class_counts(X, y, weights))
    n = n11 + n10 + n01 + n00
    joint = np.stack([n00, n01, n10, n11]) / n            # P(F=f, L=l), rows (f, l) = 00, 01, 10, 11
    pf = np.stack([(n00 + n01), (n00 + n01), (n10 + n11), (n10 + n11)]) / n
    pl = np.stack([(n00 + n10), (n01 + n11), (n00 + n10), (n01 + n11)]) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(joint > 0, joint * np.log(joint / (pf * pl)), 0.0)
    return np.maximum(terms.sum(axis=0), 0.0) / np.log(base)


def mutual_information_sensitivity(n: int, base: float = 2) -> float:
    """ΔI(N) = (1/N)·log N + ((N−1)/N)·log(N/(N−1)) (thesis Table 3.2, Zhang et al. 2014).

    Sensitivity of the mutual information of a binary feature and a binary label on N records
    under add/remove-one, N being the larger data set of the pair; e.g. ΔI(100) = 0.0808 bits.
    N must be public: a declared lower bound on the number of records, since ΔI falls with N
    (never the private count, which the sensitivity would then release).
    """
    n = float(n)
    if not np.isfinite(n) or n < 2:
        raise ValueError(f"n must be a number of records ≥ 2, got {n}")
    return float((np.log(n) / n + (n - 1) / n * np.log(n / (n - 1))) / np.log(base))
