"""Private ROC curves and AUC on a private test set: PriROC and the LaplaceROC baseline.

Stoddard, Chen & Machanavajjhala (2014), "Differentially Private Algorithms for Empirical
Machine Learning", §4.

PriROC (Alg. 3) in three steps:

1. choose thresholds Θ: α-FixedSpace (a public grid, free) or k-RecursiveMedians (Alg. 4, noisy
   medians with smooth sensitivity, ε1 = 20 % of ε by default);
2. release the positive and the negative bin histograms with Privelet (Haar wavelet, §4.2.1) and
   take prefix sums: TP(θ_i), FP(θ_i) are one-sided range queries;
3. isotonic regression on the noisy prefix sums (Hay et al., §4.2.3), then divide by the last
   prefix sum (= n1, n0), so n1 and n0 are never released separately.

Conventions (documented choices where the paper is silent): a score is predicted positive at θ iff score > θ;
bins are half-open (θ_i, θ_{i-1}] and the lowest bin also holds scores equal to the lower end of
the public ``score_range`` (θ_ℓ = −∞). Scores outside the public range are clipped into it, which
is post-processing of each record and needs no budget; the range itself is never read from the
data. Neighbours differ by adding or removing one test record.

Every function returns the curve as a DataFrame with columns ``threshold, fpr, tpr`` from (0, 0)
to (1, 1); ``curve.attrs`` holds ``auc``, ``epsilon``, ``ledger`` (the spends of this call),
``method``, ``n_bins`` and ``degenerate`` (True when a noisy total came out ≤ 0 and the diagonal
was returned instead).
"""
from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pandas as pd

from .._validation import (RandomState, check_epsilon, check_fraction, check_int, check_random_state,
                           check_same_length, rule_message)
from ..budget import BudgetAccountant, Reservation, prepare_accountant
from ..domain import declared_classes
from ..exceptions import DegenerateCurveWarning
from ..mechanisms import exponential_interval, laplace, lattice_index, lattice_resolution, snap_to_lattice
from ..sensitivity import sum_sensitivity, utility_sensitivity

__all__ = [
    "private_roc_curve", "private_auc", "laplace_roc_curve", "roc_curve_exact", "curve_auc",
    "area_between_curves", "auc_error",
    "fixed_space_thresholds", "recursive_median_thresholds", "median_smooth_sensitivity", "THRESHOLD_RESOLUTION",
    "haar_forward", "haar_inverse", "haar_weights", "privelet_sensitivity", "privelet",
    "isotonic_increasing", "DegenerateCurveWarning",
]


#: spacing of the public lattice k·2**-20 on which the private medians lie, on the [0, 1] scale of
#: the public ``score_range`` (README, "Floating-point noise": every released real number on a public grid)
THRESHOLD_RESOLUTION = lattice_resolution(0.0, 1.0)


# =========================================================================== input checks
def _check_range(score_range: Any) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in score_range)
    except (TypeError, ValueError):
        raise TypeError("score_range must be a pair (low, high) of public numbers, "
                        f"got {score_range!r}") from None
    if not (np.isfinite(lo) and np.isfinite(hi)) or hi <= lo:
        raise ValueError(f"score_range must be finite with low < high, got {score_range!r}")
    return lo, hi


def _check_inputs(y_true: Any, scores: Any, score_range: Any, classes: Any = None, *,
                  owner: str | None = None) -> tuple[np.ndarray, np.ndarray, tuple]:
    """0/1 positive indicators, finite scores and the public range.

    ``classes`` = the two public labels ``[negative, positive]`` (every label of ``y_true`` must
    be one of them; a test set may hold only one). ``classes=None``: the two observed labels,
    the larger positive; for a private release (``owner`` given) that reads which classes occur
    from the private labels and warns :class:`~dpexplore.domain.PrivacyLeakWarning`.
    """
    y = np.asarray(y_true.to_numpy() if isinstance(y_true, (pd.Series, pd.DataFrame)) else y_true)
    s = np.asarray(scores.to_numpy() if isinstance(scores, (pd.Series, pd.DataFrame)) else scores)
    if y.ndim != 1 or y.size == 0:
        raise ValueError("y_true must be a non-empty 1-D array of labels")
    if s.ndim == 2 and s.shape[1] == 2:   # predict_proba output: keep the positive column
        s = s[:, 1]
    if s.ndim != 1:
        raise ValueError("scores must be a 1-D array (one score per test record)")
    check_same_length(s, y, names=("scores", "y_true"))
    try:
        s = s.astype(float)
    except (TypeError, ValueError):
        raise TypeError("scores must be numbers") from None
    if not np.all(np.isfinite(s)):
        raise ValueError("scores must be finite (no NaN or infinity): drop or clip those records")
    if pd.isna(y).any():
        raise ValueError(rule_message("missing_label", "y_true"))
    if classes is not None:
        if isinstance(classes, (str, bytes)) or len(list(classes)) != 2:
            raise ValueError(f"classes must be the two public labels [negative, positive], got {classes!r}")
        _, codes = declared_classes(y, classes, owner or "roc")
        positive = (codes == 1).astype(np.int64)
    else:
        if owner is not None:
            declared_classes(y, None, owner)          # warns: classes read from the private labels
        observed = np.unique(y)
        if observed.size != 2:
            raise ValueError(f"y_true must hold exactly two classes for a ROC curve, got {observed.size}; "
                             "declare classes=[negative, positive]")
        positive = (y == observed[1]).astype(np.int64)
    lo, hi = _check_range(score_range)
    return positive, s, (lo, hi)


# =========================================================================== Privelet (§4.2.1)
def haar_forward(x: Any) -> np.ndarray:
    """Haar coefficients of ``x`` (length a power of two), in heap order.

    ``c[0]`` is the mean of all leaves; ``c[2**d + i]`` (depth d, node i) is
    (mean of the node's left half − mean of its right half) / 2 (Xiao, Wang & Gehrke 2010).
    """
    v = np.asarray(x, dtype=float)
    m = v.size
    if m == 0 or m & (m - 1):
        raise ValueError(f"the Haar transform needs a length that is a power of two, got {m}")
    coeffs = np.empty(m)
    means = v
    while means.size > 1:                  # bottom-up: node means and details
        left, right = means[0::2], means[1::2]
        coeffs[means.size // 2: means.size] = (left - right) / 2.0
        means = (left + right) / 2.0
    coeffs[0] = means[0]
    return coeffs


def haar_inverse(coeffs: Any) -> np.ndarray:
    """Leaves from Haar coefficients: left child = parent mean + c, right child = mean − c."""
    c = np.asarray(coeffs, dtype=float)
    m = c.size
    if m == 0 or m & (m - 1):
        raise ValueError(f"the Haar coefficients must have a power-of-two length, got {m}")
    vals = c[:1]
    width = 1
    while width < m:
        detail = c[width: 2 * width]
        vals = np.column_stack([vals + detail, vals - detail]).ravel()
        width *= 2
    return vals


def haar_weights(m: int) -> np.ndarray:
    """Privelet weights W(c): m for the mean, the subtree's leaf count for each detail (§4.2.1)."""
    m = check_int(m, "m", minimum=1)
    if m & (m - 1):
        raise ValueError(f"m must be a power of two, got {m}")
    w = np.empty(m)
    w[0] = m
    width = 1
    while width < m:
        w[width: 2 * width] = m // width     # a node at depth d covers m / 2**d leaves
        width *= 2
    return w


def privelet_sensitivity(m: int) -> float:
    """Generalised sensitivity Σ W(c)·|Δc| = 1 + log2 m of the Haar coefficients (add/remove):
    each record adds the weighted coefficients of one count, whose L1 norm is 1 + log2 m
    (:func:`~dpexplore.sensitivity.sum_sensitivity`)."""
    m = check_int(m, "m", minimum=1)
    if m & (m - 1):
        raise ValueError(f"m must be a power of two, got {m}")
    return sum_sensitivity(per_record=1.0 + math.log2(m))


def privelet(counts: Any, *, epsilon: float, random_state: RandomState = None) -> np.ndarray:
    """Privelet release of a 1-D histogram (Xiao, Wang & Gehrke 2011; Stoddard et al. 2014, §4.2.1): noisy Haar coefficients, then inverse.

    The weighted coefficients W(c)·c have L1 sensitivity exactly 1 + log2 m when one count moves
    by 1, so the Laplace mechanism with that sensitivity on W·c, divided back by W, adds
    Lap((1 + log2 m)/(ε·W(c))) to each coefficient and is ε-DP. The histogram is padded with
    zeros to a power of two m (data-independent) and the padding is dropped after the inverse.
    The caller spends ``epsilon``. Prefix sums of the output have O(log³ m/ε²) variance.
    """
    x = np.asarray(counts, dtype=float)
    if x.ndim != 1 or x.size == 0 or not np.all(np.isfinite(x)):
        raise ValueError("counts must be a non-empty 1-D array of finite numbers")
    length = x.size
    m = 1 << (length - 1).bit_length()
    padded = np.zeros(m)
    padded[:length] = x
    w = haar_weights(m)
    noisy_weighted = laplace(w * haar_forward(padded), epsilon=epsilon,
                             sensitivity=privelet_sensitivity(m), random_state=random_state)
    return haar_inverse(noisy_weighted / w)[:length]


# =========================================================================== isotonic (§4.2.3)
def isotonic_increasing(values: Any) -> np.ndarray:
    """Least-squares non-decreasing fit (pool adjacent violators, O(n)); Hay et al.'s inference.

    Equals ``sklearn.isotonic.IsotonicRegression().fit_transform(range(n), values)``.
    """
    v = np.asarray(values, dtype=float)
    if v.ndim != 1:
        raise ValueError("values must be 1-D")
    means: list[float] = []
    sizes: list[int] = []
    for value in v:
        means.append(float(value))
        sizes.append(1)
        while len(means) > 1 and means[-2] > means[-1]:   # pool the last two blocks
            size = sizes[-2] + sizes[-1]
            mean = (means[-2] * sizes[-2] + means[-1] * sizes[-1]) / size
            means[-2:] = [mean]
            sizes[-2:] = [size]
    return np.repeat(means, sizes) if means else v.copy()


# =========================================================================== thresholds (§4.2.2)
def fixed_space_thresholds(n_bins: int) -> np.ndarray:
    """α-FixedSpace on [0, 1]: the grid {0, 1/N, ..., 1} with N = ``n_bins`` bins (ε1 = 0).

    The paper sets N = ⌊α·n⌋ with the test-set size n, which is private under add/remove:
    here N is given directly (e.g. α times a public size).
    """
    n_bins = check_int(n_bins, "n_thresholds", minimum=1)
    return np.linspace(0.0, 1.0, n_bins + 1)


def _order_stat(sorted_x: np.ndarray, index: np.ndarray, left: float, right: float) -> np.ndarray:
    """x_i (1-based) padded with ``left`` for i ≤ 0 and ``right`` for i > n."""
    n = sorted_x.size
    padded = np.concatenate([[left], sorted_x, [right]])
    return padded[np.clip(index, 0, n + 1)]


def median_smooth_sensitivity(values: Any, *, beta: float, left: float, right: float) -> float:
    """β-smooth upper bound on the local sensitivity of the median under add/remove neighbours.

    Values lie in [left, right]; sorted x_1 ≤ … ≤ x_n, padded x_i = left (i ≤ 0), right (i > n);
    median = x_m with m = ⌊(n + 1)/2⌋ (the lower median for even n; n = 0 gives ``left``).
    Nissim, Raskhodnikova & Smith (2007) give S* = max_k e^{−kβ}·max_t (x_{m+t} − x_{m+t−k−1})
    for substitution with fixed n (Stoddard et al. 2014, §4.2.2). Under the paper's add/remove neighbours a
    dataset reached by a additions and r removals has its median in a window of the original
    order statistics, and its local sensitivity is at most

        U_j = max_{a + r = j} (x_{m' + 1 + r} − x_{m' − 1 − a}),  m' = ⌊(n + a − r + 1)/2⌋,

    and U_j(x) ≤ U_{j+1}(x') for neighbours x, x'. Hence S = max_j e^{−jβ} U_j is a β-smooth upper
    bound (NRS Def. 2.1), which is what the Cauchy mechanism needs. Empty or tiny partitions get
    S ≈ right − left, with no branch on the private size.
    """
    x = np.sort(np.asarray(values, dtype=float))
    n = x.size
    beta = check_epsilon(beta, "beta")
    # The window does not depend on the split a + r = j: m' − a = ⌊(n − j + 1)/2⌋ for every a
    # (2a is even), so U_j = x_{h + 1 + j} − x_{h − 1} with h = ⌊(n − j + 1)/2⌋: O(n), not O(n²).
    j_max = n + 3                     # beyond it the window always spans [left, right]
    j_all = np.arange(j_max + 1)
    h = (n - j_all + 1) // 2
    width = _order_stat(x, h + 1 + j_all, left, right) - _order_stat(x, h - 1, left, right)
    width[:-1] = np.maximum(width[:-1], 0.0)   # as a max over a ≤ j padded with zeros (j < j_max)
    # same chunks and early stop as the former O(n²) version: identical results for any input
    best = 0.0
    chunk = max(1, 1_000_000 // (j_max + 1))
    for start in range(0, j_max + 1, chunk):
        if math.exp(-start * beta) * (right - left) <= best:
            break
        j = j_all[start: start + chunk]
        best = max(best, float((np.exp(-j * beta) * width[start: start + chunk]).max()))
    return best


def _exponential_median(part: np.ndarray, left: float, right: float, epsilon: float,
                        rng: np.random.Generator) -> float | None:
    """EM median on (left, right): a point x of the public lattice k·:data:`THRESHOLD_RESOLUTION`
    strictly inside (left, right), drawn with P[x] ∝ exp(ε·u(x)/2), u(x) = −|#{p ≤ x} − #{p > x}|
    (each record moves u by at most 1 under add/remove: sensitivity 1).

    u is constant on [x_i, x_{i+1}) between consecutive sorted scores, so
    :func:`~dpexplore.mechanisms.exponential_interval` samples it exactly with the counting
    measure of the lattice as base measure (McSherry & Talwar 2007; DiffMulti Eq. 12); an empty
    partition gives a uniform lattice point. The median is a lattice point, never a score plus a
    float (whose floating-point support shows the scores, Mironov 2012). None when (left, right),
    released bounds, holds no lattice point (the caller falls back to the midpoint, spending
    nothing more).
    """
    start = float(np.nextafter(left, np.inf))          # lattice points strictly above left
    first, end = lattice_index([start, right], resolution=THRESHOLD_RESOLUTION)
    if end <= first:
        return None
    inside = part[(part > left) & (part < right)]
    edges = np.concatenate([[start], inside, [right]])
    below = np.arange(edges.size - 1) + np.count_nonzero(part <= left)
    utilities = -np.abs(2.0 * below - part.size)   # #{p ≤ x} = below, #{p > x} = n − below
    return exponential_interval(edges, utilities, epsilon=epsilon, sensitivity=utility_sensitivity(1.0),
                                resolution=THRESHOLD_RESOLUTION, random_state=rng)


def recursive_median_thresholds(scores01: Any, *, epsilon: float, depth: int,
                                median: str = "smooth", return_fallbacks: bool = False,
                                random_state: RandomState = None) -> Any:
    """k-RecursiveMedians (Alg. 4) on scores in [0, 1]: 2^k − 1 sorted interior thresholds.

    Each of the k levels spends ε' = ε/k on disjoint partitions (parallel composition); a
    partition's median gets Cauchy noise of scale 8·S/ε' with S the β = ε'/2 smooth sensitivity
    (NRS Lemma 2.7 with γ = 2). The paper prints ε1 instead of ε' in the noise: that would
    under-noise by a factor k. The noisy median is released snapped to the public lattice
    k·:data:`THRESHOLD_RESOLUTION` (DP-safe reading): NRS's guarantee is for the real number
    m + (8S/ε')·Z, and snapping it is post-processing, while the float m + noise would carry the
    low bits of the data-dependent m and S (Mironov 2012); the float sum differs from the exact one
    by at most 2**-51 inside (0, 1), so it snaps differently only within that distance of a cell
    boundary. A noisy median outside (left, right) falls back to the midpoint (post-processing,
    Stoddard et al. 2014, Alg. 4); scores equal to a threshold are dropped from both children.
    ``median="exponential"`` replaces the smooth-sensitivity median by the exponential-mechanism
    median on the same lattice (:func:`_exponential_median`), exact under add/remove and far less
    noisy when ε'·n is small: the smooth bound is at least e^{−β·n/2}·(right − left), so with
    ε1 = 0.2, k = 10 and n ≈ 600 almost every
    noisy median falls back to the midpoint and the thresholds become a dyadic grid.
    ``return_fallbacks=True`` also returns a boolean mask (aligned with the sorted thresholds)
    of the noisy medians that fell outside their interval and were replaced by the midpoint.
    The caller spends ``epsilon``.
    """
    epsilon = check_epsilon(epsilon)
    depth = check_int(depth, "depth", minimum=1)
    if median not in ("smooth", "exponential"):
        raise ValueError(f"median must be 'smooth' or 'exponential', got {median!r}")
    rng = check_random_state(random_state)
    eps_level = epsilon / depth
    beta = eps_level / 2.0
    found: list[float] = []
    fell_back: list[bool] = []
    frontier = [(np.asarray(scores01, dtype=float), 0.0, 1.0)]
    for _ in range(depth):
        nxt = []
        for part, left, right in frontier:
            part = np.sort(part)
            n = part.size
            if median == "smooth":
                m = float(_order_stat(part, np.array([(n + 1) // 2]), left, right)[0])
                s = median_smooth_sensitivity(part, beta=beta, left=left, right=right)
                noisy = float(snap_to_lattice(m + 8.0 * s / eps_level * float(rng.standard_cauchy()),
                                              resolution=THRESHOLD_RESOLUTION))
            else:
                noisy = _exponential_median(part, left, right, eps_level, rng)
            outside = noisy is None or not left < noisy < right
            if outside:
                noisy = (left + right) / 2.0
            found.append(noisy)
            fell_back.append(outside)
            nxt.append((part[part < noisy], left, noisy))
            nxt.append((part[part > noisy], noisy, right))
        frontier = nxt
    order = np.argsort(found, kind="stable")
    thresholds = np.asarray(found)[order]
    if return_fallbacks:
        return thresholds, np.asarray(fell_back)[order]
    return thresholds


# =========================================================================== ROC plumbing
def _bin_counts(scores01: np.ndarray, positive: np.ndarray, interior: np.ndarray):
    """Positive and negative counts per bin, bins ordered from the highest θ to the lowest."""
    n_bins = interior.size + 1
    ascending = np.searchsorted(interior, scores01, side="left")   # #thresholds strictly below
    index = n_bins - 1 - ascending                                   # descending order
    tp = np.bincount(index[positive == 1], minlength=n_bins).astype(float)
    fp = np.bincount(index[positive == 0], minlength=n_bins).astype(float)
    return tp, fp


def _curve_frame(thresholds_desc: np.ndarray, tp_prefix: np.ndarray, fp_prefix: np.ndarray):
    """Rates from consistent prefix sums; the diagonal (and a flag) if a total is ≤ 0."""
    n_tp, n_fp = tp_prefix[-1], fp_prefix[-1]
    degenerate = not (n_tp > 0 and n_fp > 0)
    if degenerate:
        ramp = np.linspace(0.0, 1.0, tp_prefix.size + 1)[1:]
        tpr = fpr = ramp
    else:
        tpr = np.clip(tp_prefix, 0.0, n_tp) / n_tp
        fpr = np.clip(fp_prefix, 0.0, n_fp) / n_fp
    frame = pd.DataFrame({"threshold": thresholds_desc,
                          "fpr": np.concatenate([[0.0], fpr]),
                          "tpr": np.concatenate([[0.0], tpr])})
    return frame, degenerate


def curve_auc(curve: pd.DataFrame) -> float:
    """Area under a ROC curve by the trapezoid rule over its points in order."""
    fpr = curve["fpr"].to_numpy(float)
    tpr = curve["tpr"].to_numpy(float)
    return float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1]) / 2.0))


def roc_curve_exact(y_true: Any, scores: Any, *, classes: Any = None) -> pd.DataFrame:
    """The non-private ROC curve with every distinct score as a threshold (ties give diagonal
    segments, so its trapezoid AUC is the Mann–Whitney statistic, as sklearn's). Not private.
    ``classes=[negative, positive]`` (default: the larger observed label is positive)."""
    positive, s, _ = _check_inputs(y_true, scores, (0.0, 1.0), classes)
    order = np.argsort(-s, kind="mergesort")
    s_sorted, pos_sorted = s[order], positive[order]
    last_of_tie = np.r_[np.diff(s_sorted) != 0, True]
    tp = np.cumsum(pos_sorted)[last_of_tie]
    fp = np.cumsum(1 - pos_sorted)[last_of_tie]
    frame = pd.DataFrame({"threshold": np.r_[np.inf, s_sorted[last_of_tie]],
                          "fpr": np.r_[0.0, fp / fp[-1]], "tpr": np.r_[0.0, tp / tp[-1]]})
    frame.attrs["auc"] = curve_auc(frame)
    return frame


def area_between_curves(curve_a: pd.DataFrame, curve_b: pd.DataFrame, grid: int = 2001) -> float:
    """∫₀¹ |TPR_a(f) − TPR_b(f)| df: the other reading of the paper's "ROC area L1 error" (§6)."""
    f = np.linspace(0.0, 1.0, grid)
    ta = np.interp(f, curve_a["fpr"].to_numpy(float), curve_a["tpr"].to_numpy(float))
    tb = np.interp(f, curve_b["fpr"].to_numpy(float), curve_b["tpr"].to_numpy(float))
    return float(np.trapezoid(np.abs(ta - tb), f))


def auc_error(y_true: Any, scores: Any, curve: pd.DataFrame, *, classes: Any = None) -> float:
    """|AUC(true curve) − AUC(private curve)|: the paper's Table 1 metric ("AUC error"). Not private."""
    return abs(roc_curve_exact(y_true, scores, classes=classes).attrs["auc"] - curve_auc(curve))


def _finish(frame: pd.DataFrame, degenerate: bool, held: Reservation, epsilon: float, method: str,
            n_bins: int) -> pd.DataFrame:
    if degenerate:
        warnings.warn("a noisy class total came out ≤ 0 (too little ε or too few records of one "
                      "class): the private ROC curve is the diagonal", DegenerateCurveWarning,
                      stacklevel=3)
    frame.attrs.update({
        "auc": curve_auc(frame), "epsilon": epsilon, "method": method, "n_bins": n_bins,
        "degenerate": degenerate,
        "ledger": held.ledger,   # this call's spends only, whatever other threads spend
    })
    return frame


# =========================================================================== PriROC (Alg. 3)
def private_roc_curve(y_true: Any, scores: Any, *, epsilon: float,
                      thresholds: str = "recursive_medians", n_thresholds: int = 16,
                      score_range: tuple[float, float] = (0.0, 1.0),
                      threshold_share: float = 0.2, median: str = "smooth",
                      counts_split: str = "sequential",
                      range_mechanism: str = "privelet", isotonic: bool = True,
                      classes: Any = None, random_state: RandomState = None,
                      accountant: BudgetAccountant | None = None) -> pd.DataFrame:
    """PriROC (Stoddard et al. 2014, Alg. 3): an ε-DP ROC curve of ``scores`` on a private test set.

    Parameters
    ----------
    y_true, scores : labels and one finite score per record (``predict_proba`` output with two
        columns is accepted).
    classes : the two public labels ``[negative, positive]``. Which classes occur in a private
        test set is private: with ``None`` the two observed labels are used (the larger is
        positive) and a :class:`~dpexplore.domain.PrivacyLeakWarning` says so.
    epsilon : total ε of this release.
    thresholds : ``"recursive_medians"`` (Alg. 4, spends ``threshold_share``·ε, paper: 0.2) or
        ``"fixed_space"`` (public equal-width grid, spends nothing).
    n_thresholds : number of bins ℓ = points on the curve after (0, 0). RecursiveMedians needs a
        power of two (2^k, k levels); FixedSpace uses N = α·n with a public n. The paper suggests
        k = ⌈log2 n⌉ (1024 bins for its ≈600-record folds), but n is private and, on test sets
        of that size, fewer bins give a smaller AUC error (every extra level of the Haar tree adds
        noise to every prefix sum): default 16 (k = 4); benchmarks/private_roc_adult.py sweeps k.
    score_range : public (low, high) of the scores; scores outside are clipped into it. Never
        read from the data.
    counts_split : ``"sequential"`` (paper: TP and FP histograms get ε2/2 each) or ``"parallel"``
        (each gets ε2: a record is in exactly one of the two label histograms, so parallel
        composition charges ε2 once; tighter, same guarantee).
    range_mechanism : ``"privelet"`` (paper) or ``"laplace_bins"`` (Laplace on each bin, then
        prefix sums: a teaching baseline with error linear in the prefix length).
    isotonic : enforce monotone prefix sums by isotonic regression (§4.2.3; post-processing).
    threshold_share : the share of ε spent on the thresholds (``"recursive_medians"`` only).

    Returns the curve DataFrame (threshold, fpr, tpr) in descending threshold order, from (0, 0)
    to (1, 1); ``.attrs`` holds ``auc``, ``ledger``, ``epsilon``, ``method``, ``n_bins``,
    ``degenerate``. Every spend goes through ``accountant`` (a fresh ``BudgetAccountant(epsilon)``
    if None) and the ledger rows of this call sum to ``epsilon``.
    """
    positive, s, (lo, hi) = _check_inputs(y_true, scores, score_range, classes,
                                          owner="private_roc_curve")
    if thresholds not in ("recursive_medians", "fixed_space"):
        raise ValueError("thresholds must be 'recursive_medians' or 'fixed_space', "
                         f"got {thresholds!r}")
    if counts_split not in ("sequential", "parallel"):
        raise ValueError(f"counts_split must be 'sequential' or 'parallel', got {counts_split!r}")
    if range_mechanism not in ("privelet", "laplace_bins"):
        raise ValueError("range_mechanism must be 'privelet' or 'laplace_bins', "
                         f"got {range_mechanism!r}")
    n_bins = check_int(n_thresholds, "n_thresholds", minimum=2)
    if thresholds == "recursive_medians":
        if n_bins & (n_bins - 1):
            raise ValueError("n_thresholds must be a power of two for recursive_medians "
                             f"(2^k bins for k levels), got {n_bins}")
        if median not in ("smooth", "exponential"):
            raise ValueError(f"median must be 'smooth' or 'exponential', got {median!r}")
        fraction = check_fraction(threshold_share, "threshold_share", high_closed=False)
    accountant = prepare_accountant(epsilon, accountant)
    epsilon = float(epsilon)
    with accountant.reserve(epsilon, "PriROC") as held:  # refused now, or never half-way
        rng = check_random_state(random_state)
        s01 = (np.clip(s, lo, hi) - lo) / (hi - lo)       # per-record clipping: no budget needed

        # Step 1: thresholds Θ (§4.2.2)
        if thresholds == "recursive_medians":
            depth = n_bins.bit_length() - 1
            eps1, eps2 = accountant.split([fraction, 1.0 - fraction], total=epsilon)
            for level in range(depth):   # each level: disjoint partitions, charged once (Thm 4.7)
                accountant.spend(eps1 / depth, f"thresholds: noisy medians, level {level + 1} of "
                                               f"{depth} (parallel over partitions)")
            interior = recursive_median_thresholds(s01, epsilon=eps1, depth=depth, median=median,
                                                   random_state=rng)
        else:
            eps2 = epsilon
            interior = fixed_space_thresholds(n_bins)[1:-1]

        # Step 2: noisy bin histograms and prefix sums (§4.2.1)
        tp_bins, fp_bins = _bin_counts(s01, positive, interior)

        def release(counts: np.ndarray, eps: float) -> np.ndarray:
            if range_mechanism == "privelet":
                return privelet(counts, epsilon=eps, random_state=rng)
            return laplace(counts, epsilon=eps, sensitivity=sum_sensitivity(), random_state=rng)   # a histogram

        label = "Privelet" if range_mechanism == "privelet" else "Laplace"
        if counts_split == "sequential":
            eps_tp, eps_fp = accountant.split([1, 1], total=eps2)
            accountant.spend(eps_tp, f"positive bin counts ({label})")
            accountant.spend(eps_fp, f"negative bin counts ({label})")
        else:
            eps_tp = eps_fp = eps2
            with accountant.parallel("bin counts (disjoint by label)"):
                accountant.spend(eps_tp, f"positive bin counts ({label})")
                accountant.spend(eps_fp, f"negative bin counts ({label})")
        tp_prefix = np.cumsum(release(tp_bins, eps_tp))
        fp_prefix = np.cumsum(release(fp_bins, eps_fp))

        # Step 3: consistency (§4.2.3)
        if isotonic:
            tp_prefix, fp_prefix = isotonic_increasing(tp_prefix), isotonic_increasing(fp_prefix)
        grid = np.concatenate([[1.0], interior[::-1], [0.0]])
        frame, degenerate = _curve_frame(lo + grid * (hi - lo), tp_prefix, fp_prefix)
    method = f"PriROC ({thresholds.replace('_', ' ')})"
    return _finish(frame, degenerate, held, epsilon, method, n_bins)


def private_auc(y_true: Any, scores: Any, *, epsilon: float, **kwargs: Any) -> float:
    """ε-DP area under the ROC curve: the trapezoid AUC of :func:`private_roc_curve`.

    Keyword arguments are those of :func:`private_roc_curve`; pass ``accountant=`` to keep the
    ledger. Spends ``epsilon``.
    """
    return float(private_roc_curve(y_true, scores, epsilon=epsilon, **kwargs).attrs["auc"])


# =========================================================================== LaplaceROC (§4.2, §5.2)
def laplace_roc_curve(y_true: Any, scores: Any, *, epsilon: float, n_thresholds: int = 10,
                      score_range: tuple[float, float] = (0.0, 1.0), sensitivity: str = "paper",
                      isotonic: bool = False, classes: Any = None, random_state: RandomState = None,
                      accountant: BudgetAccountant | None = None) -> pd.DataFrame:
    """LaplaceROC, the paper's baseline (§4.2, Fig. 7 of §5.2): one joint Laplace on n1, n0, TP(θ), FP(θ).

    Thresholds: ``n_thresholds`` = t equally spaced interior points of the public range (the
    paper's "chosen based on the data" is unspecified; a data-independent grid keeps the
    baseline honest). Sensitivity of the released vector: ``"paper"`` = 2t + 1 as
    printed, or ``"tight"`` = t + 1 (a record touches n1 and its TP(θ)'s, or n0 and its FP(θ)'s).
    Rates are noisy TP / noisy n1 clipped to [0, 1]; with ``isotonic=True`` the counts
    are made monotone first. ``classes`` as in :func:`private_roc_curve`. Same return format.
    """
    positive, s, (lo, hi) = _check_inputs(y_true, scores, score_range, classes,
                                          owner="laplace_roc_curve")
    t = check_int(n_thresholds, "n_thresholds", minimum=1)
    if sensitivity not in ("paper", "tight"):
        raise ValueError(f"sensitivity must be 'paper' or 'tight', got {sensitivity!r}")
    accountant = prepare_accountant(epsilon, accountant)
    epsilon = float(epsilon)
    with accountant.reserve(epsilon, "LaplaceROC") as held:
        rng = check_random_state(random_state)
        s01 = (np.clip(s, lo, hi) - lo) / (hi - lo)
        interior = np.linspace(0.0, 1.0, t + 2)[1:-1]
        tp_bins, fp_bins = _bin_counts(s01, positive, interior)
        # prefix sums TP(θ_1) ... TP(θ_t), then the class totals n1, n0 as the last entries
        exact = np.concatenate([np.cumsum(tp_bins), np.cumsum(fp_bins)])
        delta = 2 * t + 1 if sensitivity == "paper" else t + 1
        accountant.spend(epsilon, f"TP, FP at {t} thresholds and n1, n0 (Laplace, sensitivity {delta})")
        noisy = laplace(exact, epsilon=epsilon, sensitivity=sum_sensitivity(per_record=delta), random_state=rng)
        tp_prefix, fp_prefix = noisy[: t + 1], noisy[t + 1:]
        if isotonic:
            tp_prefix, fp_prefix = isotonic_increasing(tp_prefix), isotonic_increasing(fp_prefix)
        grid = np.concatenate([[1.0], interior[::-1], [0.0]])
        frame, degenerate = _curve_frame(lo + grid * (hi - lo), tp_prefix, fp_prefix)
    return _finish(frame, degenerate, held, epsilon, "LaplaceROC", t + 1)
