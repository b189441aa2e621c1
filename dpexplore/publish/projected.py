"""Differentially private projected histograms (Vinterbo, ECML PKDD 2012).

Three steps (Vinterbo 2012, §2.3):

1. discretise numeric predictors into ``s`` equal-width bins over their PUBLIC bounds (§2.1, 'Numeric data');
2. choose ``k`` predictors with PRIVATEKD, a greedy exponential mechanism on the submodular
   discernibility score F (Alg. 1, eq. 9, Thm 1), spending ε_p = (1-γ)·ε;
3. publish the thresholded Laplace histogram of the projection on those k predictors plus the
   label over the FULL public domain (PH, eqs. 3-4, Prop. 1), spending ε_h = γ·ε, built sparsely
   (ours, §2.1) with the same distribution as the dense construction.

The release is then post-processed: a synthetic table with ⌈h̃ - ½⌉ copies of each kept cell,
and an ordinary (multinomial) logistic regression fitted on it (§2.3).

Neighbour models (Vinterbo 2012, §2.1). The package's convention is add/remove-one
neighbours (unbounded DP). Under it the (cell × class) count vector has L1 sensitivity 1, so
the histogram noise is Laplace(1/ε_h); the record count n is then private, so a small share of
ε buys a noisy n̂ used wherever the paper uses n (bins, heuristics, τ). The paper uses
substitution neighbours (bounded DP): n is public and one replaced record moves two cells, so
the noise is Laplace(2/ε_h). Both are offered (``neighbours=``), and every measurement takes its
sensitivity from the declared one (:mod:`dpexplore.sensitivity`): the histogram, the paid
marginals (``marginal_share``) and the selection, whose discernibility score has sensitivity
< 2 under both (proof of Thm 1, and the bound in :func:`score_sensitivity`).
"""
from __future__ import annotations

import functools
import math
import warnings
from typing import Any, NamedTuple, Sequence

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression

from .. import mechanisms
from .._validation import RandomState, check_epsilon, check_fraction, check_int, check_positive, check_random_state
from ..budget import FIT_CALLER_STACKLEVEL, BudgetAccountant
from ..counts import CountTable
from ..domain import Attribute, Schema
from ..exceptions import EmptySyntheticWarning
from ..histogram import cell_codes, decode_cells
from ..limits import MAX_DOMAIN, MAX_FILLED_CELLS, MAX_RECORDS, MAX_SIMULATED, MAX_SPURIOUS, MAX_SYNTHETIC_ROWS
from ..sensitivity import (ADD_REMOVE, NEIGHBOURS, check_neighbours, count_sensitivity, sum_sensitivity,
                           utility_sensitivity)
from ..sources.bins import (bandwidth, bin_count, bin_starts, binned_schema, bins_to_count, discretise,
                            public_bin_count)
from ..inputs import check_release_features
from .base import Modelled, Publisher
from .complete import MarginalFiller, count_noise_sd
from .histogram_release import HistogramRelease
from .sparse_histogram import SparseHistogram, noise_ceiling, perturb_sparse, threshold
from .shape import IntervalCells, NodeCells, consistent_counts

__all__ = ["ProjectedHistogram", "NEIGHBOURS", "bandwidth", "bin_count", "discretise", "bin_midpoints",
           "discernibility", "discernibility_brute_force", "candidate_scores", "score_sensitivity",
           "private_kd", "mda", "estimate_k", "estimate_gamma", "bin_masses",
           "EmptySyntheticWarning", "MAX_RECORDS"]

_HEURISTIC_SEED = 2012            # the simulated data of the k/γ heuristics are public: fixed seed



# ============================================================================ discretisation (§2.1, 'Numeric data')
# bandwidth, bin_count, discretise and the binned schema live in dpexplore.sources.bins: a source's
# first scan counts the public bins too, whichever method scans first
def bin_midpoints(lower: float, upper: float, n_bins: int) -> np.ndarray:
    """Midpoint lo + (b + ½)/s·(hi - lo) of each bin (the paper's reverse mapping)."""
    return lower + (np.arange(n_bins) + 0.5) / n_bins * (upper - lower)


# ============================================================================ discernibility (§2.2)
def _compact(key: np.ndarray) -> np.ndarray:
    """Rank of each non-negative key among the distinct keys: ``np.unique``'s inverse, from a
    bincount when the keys' range is small (linear time, the same ids)."""
    top = int(key.max()) + 1 if key.size else 0
    if top > 4 * key.size + 1024:
        return np.unique(key, return_inverse=True)[1].astype(np.int64).ravel()
    rank = np.cumsum(np.bincount(key, minlength=top) > 0) - 1
    return rank[key]


def _blocks(codes: np.ndarray, columns: Sequence[int], sizes: Sequence[int]) -> np.ndarray:
    """Partition of the records by their pattern on ``columns`` (compact block ids)."""
    block = np.zeros(codes.shape[0], dtype=np.int64)
    for c in columns:
        block = _compact(block * int(sizes[c]) + codes[:, c])
    return block


def _wcount(key: np.ndarray, minlength: int, weights: np.ndarray | None) -> np.ndarray:
    """Records per key: plain, or weighted rows (a count table's cells; float sums of integers
    below 2**53 rounded back, so exactly the integer counts of the records they stand for)."""
    if weights is None:
        return np.bincount(key, minlength=minlength)
    return np.rint(np.bincount(key, weights=weights, minlength=minlength)).astype(np.int64)


def _score_from_blocks(block: np.ndarray, y: np.ndarray, n_classes: int, pi_f: float,
                       weights: np.ndarray | None = None) -> float:
    """F = (|π(f)| - Σ_b(|b|² - Σ_v c_bv²)) / n (the partition formula, Vinterbo 2012, §2.2)."""
    n = block.size if weights is None else int(weights.sum())
    n_blocks = int(block.max()) + 1 if block.size else 0
    c = _wcount(block * n_classes + y, n_blocks * n_classes, weights).reshape(n_blocks, n_classes)
    size = c.sum(axis=1).astype(float)
    undiscerned = float(np.sum(size ** 2) - np.sum(c.astype(float) ** 2))
    return (pi_f - undiscerned) / n


def _pi_f(y: np.ndarray, n_classes: int, weights: np.ndarray | None = None) -> float:
    """|π(f)| = n² - Σ_v n_v²: ordered pairs with different labels."""
    nv = _wcount(y, n_classes, weights).astype(float)
    n = y.size if weights is None else int(weights.sum())
    return float(n) ** 2 - float(np.sum(nv ** 2))


def _check_weights(weights: Any, n: int) -> np.ndarray | None:
    """None (one record per row) or one non-negative integer count per row."""
    if weights is None:
        return None
    w = np.asarray(weights)
    if w.shape != (n,) or w.dtype.kind not in "iu" or (w.size and w.min() < 0):
        raise ValueError("weights must hold one non-negative integer count per row of codes")
    return w.astype(np.int64)


def _check_codes(codes: Any, y: Any) -> tuple[np.ndarray, np.ndarray, int]:
    codes = np.asarray(codes, dtype=np.int64)
    if codes.ndim == 1:
        codes = codes[:, None]
    y = np.asarray(y, dtype=np.int64)
    if codes.ndim != 2 or y.ndim != 1 or codes.shape[0] != y.size or y.size == 0:
        raise ValueError("codes must be an (n, p) integer array and y n class codes, n > 0")
    if codes.min(initial=0) < 0 or y.min() < 0:
        raise ValueError("codes and y must be non-negative integers")
    return codes, y, int(y.max()) + 1


def discernibility(codes: Any, y: Any, subset: Sequence[int], weights: Any = None) -> float:
    """F(S) = |π(S) ∩ π(f)| / n over ordered pairs (Vinterbo eq. 9), via partition refinement.

    ``weights``: each row of ``codes`` stands for that many records (a count table's cells)."""
    codes, y, q = _check_codes(codes, y)
    w = _check_weights(weights, y.size)
    sizes = codes.max(axis=0) + 1
    return _score_from_blocks(_blocks(codes, list(subset), sizes), y, q, _pi_f(y, q, w), w)


def discernibility_brute_force(codes: Any, y: Any, subset: Sequence[int]) -> float:
    """F(S) by counting every ordered pair (x, y) with f(x) ≠ f(y) and x_S ≠ y_S (tests, O(n²))."""
    codes, y, _ = _check_codes(codes, y)
    sub = codes[:, list(subset)]
    differ_s = np.any(sub[:, None, :] != sub[None, :, :], axis=2) if len(subset) else \
        np.zeros((y.size, y.size), dtype=bool)
    differ_f = y[:, None] != y[None, :]
    return float(np.sum(differ_s & differ_f)) / y.size


def candidate_scores(codes: Any, y: Any, selected: Sequence[int], weights: Any = None) -> np.ndarray:
    """F(S ∪ {a}) for every predictor a (NaN for those already in S); gains differ by F(S) only.

    ``weights``: as :func:`discernibility` (same scores as the records the rows stand for)."""
    codes, y, q = _check_codes(codes, y)
    w = _check_weights(weights, y.size)
    sizes = codes.max(axis=0) + 1
    pi_f = _pi_f(y, q, w)
    base = _blocks(codes, list(selected), sizes)
    out = np.full(codes.shape[1], np.nan)
    for a in range(codes.shape[1]):
        if a in selected:
            continue
        out[a] = _score_from_blocks(_compact(base * int(sizes[a]) + codes[:, a]), y, q, pi_f, w)
    return out


def score_sensitivity(neighbours: str = ADD_REMOVE) -> float:
    """Δ(F) = 2 (proof of Thm 1).

    Substitution: F_i moves by ≤ 1 and each other F_j by ≤ 1/n, so |ΔF| ≤ 2(n-1)/n < 2 (the
    paper's bound, tighter than twice the add/remove one).
    Add/remove: with N = n·F pairs and c ≤ n new discerning partners of the added record,
    F' - F = (2cn - N)/(n(n+1)) ∈ (-1, 2). Either way 2 is a valid bound.
    """
    return utility_sensitivity(2.0, neighbours, substitution=2.0)


def private_kd(codes: Any, y: Any, k: int, epsilon: float, *, names: Sequence[str] | None = None,
               accountant: BudgetAccountant | None = None, random_state: RandomState = None,
               weights: Any = None, neighbours: str = ADD_REMOVE) -> tuple[list[int], pd.DataFrame]:
    """PRIVATEKD (Alg. 1): k greedy picks, each by the exponential mechanism on F(S ∪ {a}).

    Each pick spends ε/k with utility sensitivity 2 (:func:`score_sensitivity` under
    ``neighbours``), i.e. P(a) ∝ exp((ε/k)·g(a)/4) = exp(ε'·g(a))
    with ε' = ε/(4k) (Corollary 1); using F(S ∪ {a}) instead of the gain g(a) gives the same
    probabilities (eq. 13). Returns the picks in order and a table of every step's candidates
    with their gains and selection probabilities (computed from the private data: a diagnostic,
    not part of the release). ``weights``: rows as weighted records (:func:`discernibility`).
    """
    codes, y, _ = _check_codes(codes, y)
    weights = _check_weights(weights, y.size)
    p = codes.shape[1]
    k = int(k)
    if not 1 <= k <= p:
        raise ValueError(f"k must be between 1 and the number of predictors ({p}), got {k}")
    epsilon = check_epsilon(epsilon)
    names = [str(i) for i in range(p)] if names is None else list(names)
    rng = check_random_state(random_state)
    step_eps = epsilon / k
    delta = score_sensitivity(neighbours)
    selected: list[int] = []
    rows = []
    current = discernibility(codes, y, [], weights)
    for t in range(1, k + 1):
        scores = candidate_scores(codes, y, selected, weights)
        cand = [a for a in range(p) if a not in selected]
        if accountant is not None:
            accountant.spend(step_eps, f"selection step {t}")
        pick, probs = mechanisms.exponential(scores[cand], epsilon=step_eps, sensitivity=delta,
                                             random_state=rng, return_probabilities=True)
        for a, pr in zip(cand, probs):
            rows.append({"step": t, "attribute": names[a], "gain": scores[a] - current,
                         "score": scores[a], "probability": float(pr), "chosen": a == cand[pick]})
        selected.append(cand[pick])
        current = scores[cand[pick]]
    return selected, pd.DataFrame(rows)


def mda(codes: Any, y: Any, sigma: float = 0.1, weights: Any = None) -> list[int]:
    """Non-private greedy minimal discerning attributes: add argmax gain until F(S) ≥ (1-σ)F(A)
    (§2.3, eq. 10). ``weights``: as :func:`discernibility` (the same attributes as the records)."""
    codes, y, _ = _check_codes(codes, y)
    target = (1.0 - sigma) * discernibility(codes, y, range(codes.shape[1]), weights)
    selected: list[int] = []
    current = discernibility(codes, y, [], weights)
    while current < target - 1e-12 and len(selected) < codes.shape[1]:
        scores = candidate_scores(codes, y, selected, weights)
        a = int(np.nanargmax(scores))
        selected.append(a)
        current = scores[a]
    return selected


# ============================================================================ heuristics (§2.3, eqs. 10-11)
def _simulated_codes(n: int, d: int, n_bins: int, rng: np.random.Generator) -> np.ndarray:
    """d N(0,1) columns, min-max scaled into [0, 1] (allowed: synthetic data), cut into s bins."""
    x = rng.standard_normal((n, d))
    lo, hi = x.min(axis=0), x.max(axis=0)
    x -= lo                                  # in place: u = (x - lo)/(hi - lo), then ⌊u·s⌋
    x /= np.where(hi > lo, hi - lo, 1.0)
    x *= n_bins
    np.floor(x, out=x)
    return np.minimum(x, n_bins - 1).astype(np.int64)


def estimate_k(n: float, d: int, n_classes: int, n_bins: int, sigma: float = 0.1,
               seed: int = _HEURISTIC_SEED) -> int:
    """k = |MDA(f, D', σ)| on simulated data of the public size: labels uniform on q classes,
    d predictors N(0,1) independent of the label, s bins (§2.3, eq. 10). Costs no privacy. At most
    :data:`dpexplore.limits.MAX_SIMULATED` records are simulated (bounded memory for a huge noisy n̂)."""
    n, d = min(max(int(round(n)), 2), MAX_SIMULATED), int(d)
    if d <= 1:
        return max(d, 1)
    return _simulated_k(n, d, int(n_classes), int(n_bins), float(sigma), int(seed))


# the heuristics read only public arguments (and simulated data): each is computed once per
# argument tuple, so a later fit on a source of the same public size skips the simulation
@functools.lru_cache(maxsize=64)
def _simulated_k(n: int, d: int, n_classes: int, n_bins: int, sigma: float, seed: int) -> int:
    rng = np.random.default_rng(seed)
    y = rng.integers(n_classes, size=n)
    codes, weights = _simulated_codes(n, d, n_bins, rng), None
    shape = [n_bins] * d + [n_classes]
    if math.prod(shape) < 2 ** 62:        # the same records as weighted (cell, class) rows: F is a function of counts
        cells, weights = np.unique(cell_codes([*codes.T, y], shape), return_counts=True)
        *columns, y = decode_cells(cells, shape)
        codes = np.column_stack(columns)
    return max(1, len(mda(codes, y, sigma, weights)))


@functools.lru_cache(maxsize=64)
def _bin_masses(n_bins: int, n_samples: int, seed: int) -> np.ndarray:
    codes = _simulated_codes(n_samples, 1, n_bins, np.random.default_rng(seed))[:, 0]
    masses = np.bincount(codes, minlength=n_bins) / codes.size
    masses.flags.writeable = False
    return masses


def bin_masses(n_bins: int, n_samples: int = 100_000, seed: int = _HEURISTIC_SEED) -> np.ndarray:
    """p_i: share of N(0,1) draws, min-max scaled into [0, 1], in each of s equal bins (§2.3, eq. 11)."""
    return _bin_masses(int(n_bins), int(n_samples), int(seed)).copy()


def estimate_gamma(n: float, d: int, n_classes: int, k: int, n_bins: int, *, A: float = 0.5,
                   B: float = 0.5, loss: float = 0.05, p: float = 0.9, sensitivity: float = 2.0,
                   n_samples: int = 100_000, seed: int = _HEURISTIC_SEED) -> dict[str, float]:
    """γ = ε_h*/(ε_h* + ε_p*) (eq. 11) from public quantities only.

    ε_p* = 2qBk²·ln(d-1)/(l·n·(q-1)); ε_h* makes a cell of the typical size z = p_x·n/q survive
    with probability ≥ p: max((A ln n - Δ ln(1/(2p)))/z, (A ln n - Δ ln(2-2p))/z) with
    p_x = (Σ p_i²)^k; Δ = 2 is the paper's Laplace(2/ε) noise, Δ = 1 the add/remove one.
    ``d`` is the number of predictors (the paper's d-1). γ is clipped to [0.01, 1].
    """
    q, k, d = int(n_classes), int(k), int(d)
    if d <= 1 or k >= d:           # nothing to select: γ = 1 (Vinterbo 2012, §2.3)
        return {"gamma": 1.0, "epsilon_p_star": 0.0, "epsilon_h_star": math.inf, "z": math.nan}
    px = float(np.sum(_bin_masses(int(n_bins), int(n_samples), int(seed)) ** 2)) ** k
    z = px * n / q
    eps_p = 2.0 * q * B * k ** 2 * math.log(d) / (loss * n * (q - 1))
    a_ln_n = A * math.log(n)
    eps_h = max((a_ln_n - sensitivity * math.log(1.0 / (2.0 * p))) / z,
                (a_ln_n - sensitivity * math.log(2.0 - 2.0 * p)) / z)
    gamma = float(np.clip(eps_h / (eps_h + eps_p), 0.01, 1.0)) if eps_h > 0 else 0.01
    return {"gamma": gamma, "epsilon_p_star": eps_p, "epsilon_h_star": eps_h, "z": z}


# ============================================================================ the estimator
def _category_codes(values: pd.Series, attr) -> np.ndarray:
    """Index of each value in the attribute's PUBLIC category list, matched by text as
    :meth:`Attribute.validate` does (integer-coded categories 0/1 match "0"/"1")."""
    codes = pd.Index(list(attr.categories), dtype=object).get_indexer(values.astype(str).to_numpy(dtype=object))
    if np.any(codes < 0):
        bad = sorted({str(v) for v in values[codes < 0]})[:5]
        raise ValueError(f"column {attr.name!r} has value(s) {bad} outside its declared categories "
                         f"{list(attr.categories)[:10]}; declare them in the schema or recode the column")
    return codes.astype(np.int64)


def _bin_bounds(attr: Attribute, n_bins: int, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """[t_b, t_{b+1}) of bin ``index`` of a numeric attribute (the last bin closed at the upper
    bound): the values :func:`discretise` puts in it. Public: bounds and s."""
    edges = np.asarray([attr.lower, *bin_starts(attr.lower, attr.upper, n_bins), attr.upper])
    index = np.asarray(index, dtype=np.int64)
    return edges[index], edges[index + 1]


def _binned_cells(source: Any, schema: Schema, n_bins: int
                  ) -> tuple[np.ndarray, list[int], np.ndarray, np.ndarray]:
    """(codes (m, d), domain sizes, class codes, counts) of the occupied (bin/category × class)
    cells, counted by the source's own engine (the same table, re-coded on the public bins).

    Equal to ``_codes`` on the records, grouped: so the weighted run gives the record run's release.
    """
    binned = binned_schema(schema, n_bins)
    table = source.with_schema(binned).count_table()
    codes = np.column_stack([table.leaf_codes[a] for a in binned.predictors]).astype(np.int64)
    sizes = [n_bins if binned[a].kind == "numeric" else len(binned[a].categories) for a in binned.predictors]
    return codes, sizes, table.class_codes.astype(np.int64), table.counts


class _FitData(NamedTuple):
    """The fit data: the records and their class codes, or the source; the private record count."""

    X: pd.DataFrame | None
    y_codes: np.ndarray | None
    source: Any
    n_records: int


def _domain_sizes(schema: Schema, names: Sequence[str], n_bins: int) -> list[int]:
    """Public domain size of each attribute: s bins (numeric) or its category count."""
    return [n_bins if schema[a].kind == "numeric" else len(schema[a].categories) for a in names]


def _check_domain(sizes: Sequence[int], k: int, n_classes: int, p_empty: float | None) -> None:
    """Refuse, BEFORE the selection spends anything, a projection that cannot be released.

    Every choice of k predictors is checked (the product of the k largest public domain sizes
    times q): the picks are random, so an error after the selection would waste its budget.
    ``p_empty`` = P(L > τ) = ½·n^(-A/Δ) (eq. 5, independent of ε_h) bounds the expected number of
    kept empty cells; None skips that part (n not known yet).
    """
    worst = math.prod(sorted((int(v) for v in sizes), reverse=True)[:k]) * int(n_classes)
    if worst > MAX_DOMAIN:
        raise ValueError(f"a projection on {k} predictors can have {worst} cells, more than an int64 code "
                         "can index; choose a smaller k or fewer bins")
    if p_empty is not None and worst * p_empty > MAX_SPURIOUS:
        raise ValueError(f"a projection on {k} predictors can have {worst} cells, of which about "
                         f"{worst * p_empty:.3g} empty ones would survive the threshold (eq. 6-7): "
                         "choose a smaller k, fewer bins or a larger A")


class ProjectedHistogram(HistogramRelease, Publisher):
    """Vinterbo's DP projected histogram and the logistic regression fitted on its synthetic data.

    Parameters
    ----------
    epsilon : total budget ε (pure ε-DP).
    k : number of predictors to keep (the label is added); None = the paper's heuristic,
        |MDA| on simulated data with slack ``sigma`` (§2.3, eq. 10).
    gamma : share of ε for the histogram, ε_h = γ·ε and ε_p = (1-γ)·ε for the selection; None =
        the paper's heuristic (§2.3, eq. 11) with target survival probability ``p``.
    A : threshold constant, τ = A·ln(n)/ε_h (the paper uses ½).
    neighbours : "add/remove" (package default) or "substitution" (the paper).
        *add/remove*: histogram noise Laplace(1/ε_h) (count vector has L1 sensitivity 1); n is
        private, so ``count_share``·ε buys n̂ = n + Laplace(1/ε_n), used for bins, heuristics and τ;
        the rest is split by γ. *substitution*: n is public, noise Laplace(2/ε_h) (one changed
        record moves two cells), exactly the paper. The selection's score has sensitivity 2 in
        both models, so each of the k picks spends ε_p/k (ε' = ε_p/(4k), Corollary 1). The paid
        marginals (``marginal_share``) follow the same relation: their counts have sensitivity 2
        under substitution (:mod:`dpexplore.sensitivity`).
    n_bins : "literal" (s from bw(n, d-1) over all predictors, the paper read literally),
        "projected" (bw(n, k)) or an integer ≥ 2; the rules are clamped to ≥ 2 (ours; Vinterbo 2012, §2.1).
    sigma, p, B, loss : constants of the k and γ heuristics (0.1, 0.9, ½, 0.05).
    count_share : share of ε for n̂ under add/remove (ignored under substitution).
    test_values : "raw" (numeric test values scaled with the public bounds, default) or
        "midpoint" (snapped to their bin's midpoint) for predict (Vinterbo 2012, §2.3).
    C : inverse L2 strength of the logistic regression on the synthetic table. The paper fits
        an unpenalised glm / multinom; a weak L2 (large C, ours; the paper's §3.1 fits glm/multinom) only keeps the fit finite
        when the small synthetic table is separable. C = 1 is NOT weak here: features lie in
        [0, 1] and bin midpoints differ by 1/s, so C = 1 shrinks the coefficients enough to
        flatten the middle class of a multinomial fit (Iris at ε = 10⁴: Hand–Till 0.85 vs 1.0).
    random_state, accountant : randomness source; where ε is spent.
    marginal_share : fraction of ε in [0, 1), default 0 (the paper: :meth:`synthetic` draws the
        predictors that were not projected uniformly over their declared domain). s > 0 runs the
        method on (1 - s)·ε and, after the projection is released, spends s·ε (split evenly) on
        Laplace marginals (over the taxonomy leaves, or 16 equal-width bins without a taxonomy;
        from a Source over the method's s bins; ledger "marginal: <column>"): each two-way with a
        privately chosen parent (``marginal_parents_``) when ε allows the choice, else one-way;
        :meth:`synthetic` draws the predictors left out given each row's parent value, and the
        projected ones inside their bins, given it; and the class's, to which the
        synthetic class shares are raked (the threshold drops small cells). An extension beyond
        the paper (README "Synthetic tables"); when the marginals are two-way tables with chosen
        parents, the classifier is a logistic regression fitted on the completed synthetic table,
        whether D̃ carries a model or not (``classifier_data_``,
        :meth:`~dpexplore.publish.histogram_release.HistogramRelease._fit_table_classifier`).
    max_synthetic_rows : public cap on the rows :meth:`synthetic` makes (default
        :data:`dpexplore.limits.MAX_SYNTHETIC_ROWS`).
    schema : the public :class:`~dpexplore.domain.Schema` ``fit(X, y)`` uses (keyword only).

    ``fit(X, y)`` takes a DataFrame or an array (columns ``x0, x1, …``, or the schema's
    predictors); without a schema one is read from the data with a
    :class:`~dpexplore.domain.PrivacyLeakWarning`. ``fit(source)`` takes a
    :class:`dpexplore.sources.Source` (target and schema from it; ``classes_`` follow the type
    of its target column): the bins and categories are counted by the source's engine (one group-by on
    the public bin edges, once s is known; in the scan that builds the source's table when s is
    public before the fit, and kept for later fits), and selection and histogram run on those
    cells as weighted records, the same release as from the records. Everything is validated
    before the first spend.

    Fitted (released, DP): ``selected_`` (pick order), ``histogram_`` (kept cells: levels, class,
    noisy count, copies), ``counts_`` (:class:`SparseHistogram`), ``threshold_``, ``k_``,
    ``gamma_``, ``n_bins_``, ``n_hat_``, ``noise_scale_``, ``epsilon_split_``, ``ledger_``,
    ``classes_`` (the schema's classes in the type of y) and the fitted ``model_``
    (post-processing; None with ``fallback_`` True when too few cells stand clearly above the
    noise to fit it, then ``prior_`` is predicted: an extension, see :meth:`_fit_model`);
    ``classifier_data_`` "synthetic" when the completed table's regression (``table_model_``)
    classifies instead (``marginal_share`` above).
    Nothing read from the private data without noise is stored: the non-private teaching view
    (each selection step's true gains and probabilities, which kept cells were truly empty) is
    :meth:`diagnostics`, recomputed from data you pass in.
    """

    _table_classifier = True         # with two-way marginals: HistogramRelease._fit_table_classifier

    method = "ProjectedHistogram"
    synthetic_values = ("representative", "generalized")
    _needs_taxonomy = False                    # fit(source): the method bins on the public bounds

    def __init__(self, epsilon: float = 1.0, k: int | None = None, gamma: float | None = None, A: float = 0.5,
                 random_state: RandomState = None, accountant: BudgetAccountant | None = None, *,
                 neighbours: str = ADD_REMOVE, n_bins: str | int = "literal", sigma: float = 0.1,
                 p: float = 0.9, B: float = 0.5, loss: float = 0.05, count_share: float = 0.05,
                 test_values: str = "raw", C: float = 1e4, marginal_share: float = 0.0,
                 max_synthetic_rows: int = MAX_SYNTHETIC_ROWS, schema: Schema | None = None):
        self.epsilon = epsilon
        self.k = k
        self.gamma = gamma
        self.A = A
        self.random_state = random_state
        self.accountant = accountant
        self.neighbours = neighbours
        self.n_bins = n_bins
        self.sigma = sigma
        self.p = p
        self.B = B
        self.loss = loss
        self.count_share = count_share
        self.test_values = test_values
        self.C = C
        self.marginal_share = marginal_share
        self.max_synthetic_rows = max_synthetic_rows
        self.schema = schema

    # ------------------------------------------------------------------ checks
    def _check_params(self) -> None:
        check_epsilon(self.epsilon)
        if self.k is not None:
            check_int(self.k, "k", minimum=1)
        if self.gamma is not None:
            check_fraction(self.gamma, "gamma")
        check_positive(self.A, "A")
        check_neighbours(self.neighbours)
        if isinstance(self.n_bins, str):
            if self.n_bins not in ("literal", "projected"):
                raise ValueError(f"n_bins must be 'literal', 'projected' or an integer >= 2, got {self.n_bins!r}")
        else:
            check_int(self.n_bins, "n_bins", minimum=2)
        check_fraction(self.sigma, "sigma", high_closed=False)
        check_fraction(self.p, "p", high_closed=False)
        check_positive(self.B, "B")
        check_fraction(self.loss, "loss", high_closed=False)
        check_fraction(self.count_share, "count_share", high_closed=False)
        if self.test_values not in ("raw", "midpoint"):
            raise ValueError(f"test_values must be 'raw' or 'midpoint', got {self.test_values!r}")
        check_positive(self.C, "C")
        check_random_state(self.random_state)

    def _codes(self, X: pd.DataFrame, names: Sequence[str], n_bins: int) -> tuple[np.ndarray, list[int]]:
        """Bin / category index of every value, with the public domain size of each attribute."""
        schema = self.schema_
        cols, sizes = [], []
        for a in names:
            attr = schema[a]
            if attr.kind == "numeric":
                cols.append(discretise(X[a].to_numpy(), attr.lower, attr.upper, n_bins))
                sizes.append(n_bins)
            else:
                cols.append(_category_codes(X[a], attr))
                sizes.append(len(attr.categories))
        return np.column_stack(cols).astype(np.int64), sizes

    # ------------------------------------------------------------------ fit
    def _records_data(self, X: pd.DataFrame, y: pd.Series, schema: Schema) -> "_FitData":
        for a in schema.categorical:
            _category_codes(X[a], schema[a])       # integer-coded categories match by text
        self._check_before_spending(schema)
        return _FitData(X, schema.encode_target(y).astype(np.int64), None, len(X))

    def _public_bin_count(self, d: int) -> int | None:
        """s when public quantities alone fix it, before n̂ is drawn: an integer ``n_bins``, or
        ⌈1/bw(n̂, d') - ½⌉ (§2.1) equal over n̂'s public range under add/remove for every d' it
        may take (:func:`~dpexplore.sources.bins.public_bin_count`); else None."""
        if not isinstance(self.n_bins, str):
            return int(self.n_bins)
        if self.neighbours != ADD_REMOVE:            # n̂ = n: not clipped to a public range
            return None
        return public_bin_count([d] if self.n_bins == "literal" else [min(int(self.k), d)] if self.k is not None
                                else range(1, d + 1))

    def _count_along(self, source: Any, schema: Schema) -> list[Schema]:
        """The binned schema (§2.1) a fit from ``source`` under ``schema`` will count, when s is
        public before the fit (:meth:`_public_bin_count`): the source then counts it in the same
        scan as its own table. Reads no data and spends nothing."""
        return bins_to_count(schema, self._public_bin_count(len(schema.predictors)))

    def _table_data(self, table: CountTable, schema: Schema, source: Any) -> "_FitData":
        # the source's own engine counts the method's public bins once s is known (_binned_cells);
        # when s is public it counted them along with ``table`` (_count_along)
        self._check_before_spending(schema)
        return _FitData(None, None, source, table.n_records)   # n: private, used through n̂

    def _check_before_spending(self, schema: Schema) -> None:
        """Everything that can fail on public sizes fails here, before the first spend."""
        if self.k is not None and not isinstance(self.n_bins, str):   # known before n̂: check now
            _check_domain(_domain_sizes(schema, schema.predictors, int(self.n_bins)),
                          min(int(self.k), len(schema.predictors)), schema.n_classes, None)
        if mechanisms.is_hardened():   # the exact sampler's public limits: ε_n, and ε_h ≥ γ_min·(ε - ε_n)
            eps = self._model_epsilon()
            eps_n_min = self.count_share * eps if self.neighbours == ADD_REMOVE else 0.0
            if eps_n_min > 0:
                mechanisms.hardened_laplace_parameters(epsilon=eps_n_min)
            gamma_min = float(self.gamma) if self.gamma is not None else 0.01   # eq. 11 is clipped to ≥ 0.01
            mechanisms.hardened_laplace_parameters(epsilon=gamma_min * (eps - eps_n_min),
                                                   sensitivity=sum_sensitivity(self.neighbours), integer=True)

    def _prepare_filler(self, schema: Schema, X: Any = None, table: Any = None, **kwargs: Any) -> Any:
        """Records: the marginal codes on each column's taxonomy leaves (or 16 public bins), read
        now; the class's too (the threshold skews the class shares). A source: counted over the
        method's own bins in :meth:`_release`, once s is known."""
        return None if table is not None else super()._prepare_filler(schema, X=X, class_marginal=True, **kwargs)

    def _release(self, fit_data: "_FitData", acc: BudgetAccountant, rng: np.random.Generator,
                 eps: float) -> Modelled:
        """Select k predictors privately and release their thresholded histogram (spends ε), from
        the records or (a source) from the source's cells."""
        schema, (X, y_codes, source, n_records) = self.schema_, fit_data
        predictors = schema.predictors
        q, d = schema.n_classes, len(predictors)
        delta = sum_sensitivity(self.neighbours)        # the (cell × class) histogram over a partition
        filler = None

        # n: public under substitution; a noisy count under add/remove (Laplace(1/ε_n))
        if self.neighbours == ADD_REMOVE:
            eps_n = self.count_share * eps
            n_hat = n_records + float(mechanisms.laplace(0.0, epsilon=acc.spend(eps_n, "record count"),
                                                      sensitivity=count_sensitivity(self.neighbours),
                                                      random_state=rng))
            n_hat = min(max(n_hat, 2.0), float(MAX_RECORDS))   # public clip: post-processing
        else:
            eps_n, n_hat = 0.0, float(n_records)
        rest = eps - eps_n

        # bins (§2.1) and the heuristics for k (eq. 10) and γ (eq. 11): public quantities only
        s_literal = bin_count(n_hat, d)
        k = min(int(self.k), d) if self.k is not None else min(estimate_k(n_hat, d, q, s_literal, self.sigma), d)
        if isinstance(self.n_bins, str):
            s = s_literal if self.n_bins == "literal" else bin_count(n_hat, k)
        else:
            s = int(self.n_bins)
        if k >= d:
            gamma_info = {"gamma": 1.0, "epsilon_p_star": 0.0, "epsilon_h_star": math.inf, "z": math.nan}
            gamma = 1.0                                # nothing to select: all to the histogram
        elif self.gamma is not None:
            gamma_info, gamma = None, float(self.gamma)
        else:
            gamma_info = estimate_gamma(n_hat, d, q, k, s, A=self.A, B=self.B, loss=self.loss, p=self.p,
                                        sensitivity=delta)
            gamma = gamma_info["gamma"]
        _check_domain(_domain_sizes(schema, predictors, s), k, q, 0.5 * n_hat ** (-float(self.A) / delta))
        if source is None:
            codes, sizes = self._codes(X, predictors, s)
            weights = None
        else:  # a further group-by where the data lives: (bin/category codes × class) counts
            codes, sizes, y_codes, weights = _binned_cells(source, schema, s)
        if self.marginal_share > 0 and source is not None:   # a source: over the method's own bins
            binned = binned_schema(schema, s)
            filler = MarginalFiller(schema, taxonomies={a: binned[a].taxonomy for a in predictors},
                                    codes={**{a: codes[:, j] for j, a in enumerate(predictors)}, schema.target: y_codes},
                                    weights=weights, class_marginal=True)

        # PRIVATEKD with ε_p = (1-γ)·ε (Alg. 1, Corollary 1)
        eps_p = (1.0 - gamma) * rest
        if k >= d:
            picks = list(range(d))
        elif eps_p <= 0:                               # γ = 1: the exponential mechanism at ε = 0
            picks = [int(a) for a in rng.choice(d, size=k, replace=False)]   # is a uniform draw, free
        else:  # the step table private_kd returns reads the data: not kept (see diagnostics())
            picks, _ = private_kd(codes, y_codes, k, eps_p, names=predictors, accountant=acc, random_state=rng,
                                  weights=weights, neighbours=self.neighbours)
        eps_p = eps_p if k < d else 0.0
        eps_h = rest - eps_p

        # PH over the full public domain of the projection + label (§2.1; the sparse construction is ours)
        shape = [sizes[a] for a in picks] + [q]
        m = math.prod(shape)
        assert m <= MAX_DOMAIN     # guaranteed by _check_domain before anything was selected
        cell = np.zeros(codes.shape[0], dtype=np.int64)
        for a in picks:
            cell = cell * sizes[a] + codes[:, a]
        cell = cell * q + y_codes
        if weights is None:
            true_codes, true_counts = np.unique(cell, return_counts=True)
        else:
            true_codes, inverse = np.unique(cell, return_inverse=True)
            true_counts = _wcount(inverse.ravel(), true_codes.size, weights)
            true_codes, true_counts = true_codes[true_counts > 0], true_counts[true_counts > 0]
        tau = threshold(n_hat, eps_h, self.A)
        kept, values, _ = perturb_sparse(     # which kept cells were empty: not kept (non-private)
            true_codes, true_counts, m, epsilon=acc.spend(eps_h, "projected histogram"), tau=tau,
            sensitivity=delta, random_state=rng)
        self.k_, self.gamma_, self.n_bins_, self.n_hat_ = k, gamma, s, n_hat
        self.gamma_heuristic_ = gamma_info
        self.selected_ = [predictors[a] for a in picks]
        self.attribute_sizes_ = {predictors[a]: sizes[a] for a in picks}
        self.threshold_ = tau
        self.noise_scale_ = delta / eps_h
        self.epsilon_split_ = {"record count": eps_n, "selection": eps_p, "histogram": eps_h}
        self.n_cells_ = m
        self.counts_ = SparseHistogram(kept, values, shape)
        self.histogram_ = self._histogram_frame()
        # after the projection is released: marginals of the predictors (two-way with a chosen
        # parent for those left out) and of the class (extension)
        return Modelled(self.selected_, filler=filler)

    def _finish_fit(self, fit_data: "_FitData") -> None:
        self._fit_model()

    # ------------------------------------------------------------------ release
    def _level_labels(self, a: str) -> np.ndarray:
        attr = self.schema_[a]
        if attr.kind == "numeric":
            edges = np.linspace(attr.lower, attr.upper, self.n_bins_ + 1)
            return np.asarray([f"[{lo:g}, {hi:g}{']' if i == self.n_bins_ - 1 else ')'}"
                               for i, (lo, hi) in enumerate(zip(edges[:-1], edges[1:]))], dtype=object)
        return np.asarray(list(attr.categories), dtype=object)

    def _histogram_frame(self) -> pd.DataFrame:
        idx = self.counts_.decode()
        data = {a: self._level_labels(a)[i] for a, i in zip(self.selected_, idx[:-1])}
        data[self.schema_.target] = self.classes_[idx[-1]]
        data["noisy_count"] = self.counts_.values
        data["copies"] = self.counts_.rounded()
        return pd.DataFrame(data)

    def diagnostics(self, X: Any, y: Any) -> dict[str, pd.DataFrame]:
        """The NON-PRIVATE teaching view of this release, recomputed from the private data passed in.

        Returns ``{"selection": ..., "histogram": ...}``: each PRIVATEKD step's candidates with
        their true scores, gains and selection probabilities (given the released picks), and
        ``histogram_`` with the true count of each kept cell and ``was_empty`` (kept although
        truly empty). These read the data without noise: never publish them. Nothing of this is
        stored on the estimator (pickling it does not carry them).
        """
        self._check_fitted()
        X = check_release_features(self, X, self.schema_.predictors)
        predictors = self.schema_.predictors
        self.schema_.validate(X, y)
        codes, sizes = self._codes(X, predictors, self.n_bins_)
        y_codes = self.schema_.encode_target(y).astype(np.int64)
        picks = [predictors.index(a) for a in self.selected_]
        rows, eps_p, k = [], self.epsilon_split_["selection"], len(picks)
        if eps_p > 0 and k < len(predictors):
            current = discernibility(codes, y_codes, [])
            for t in range(k):
                scores = candidate_scores(codes, y_codes, picks[:t])
                cand = [a for a in range(len(predictors)) if a not in picks[:t]]
                probs = mechanisms.exponential_probabilities(scores[cand], epsilon=eps_p / k,
                                                             sensitivity=score_sensitivity(self.neighbours))
                for a, pr in zip(cand, probs):
                    rows.append({"step": t + 1, "attribute": predictors[a], "gain": scores[a] - current,
                                 "score": scores[a], "probability": float(pr), "chosen": a == picks[t]})
                current = scores[picks[t]]
        selection = pd.DataFrame(rows, columns=["step", "attribute", "gain", "score", "probability", "chosen"])
        cell = np.zeros(len(X), dtype=np.int64)
        for a in picks:
            cell = cell * sizes[a] + codes[:, a]
        cell = cell * len(self.classes_) + y_codes
        true_codes, true_counts = np.unique(cell, return_counts=True)
        pos = np.searchsorted(true_codes, self.counts_.codes)
        hit = (pos < true_codes.size) & (true_codes[np.minimum(pos, max(true_codes.size - 1, 0))] == self.counts_.codes)
        true = np.where(hit, true_counts[np.minimum(pos, max(true_codes.size - 1, 0))], 0)
        histogram = self.histogram_.assign(true_count=true, was_empty=true == 0)
        return {"selection": selection, "histogram": histogram}

    def _values(self, a: str, index: np.ndarray) -> np.ndarray:
        """Numeric bin index → bin midpoint (original units); categorical index → the category."""
        attr = self.schema_[a]
        if attr.kind == "numeric":
            return bin_midpoints(attr.lower, attr.upper, self.n_bins_)[index]
        return np.asarray(list(attr.categories), dtype=object)[index]

    def _count_scale(self) -> float:
        return float(self.noise_scale_)

    def _size_total(self) -> tuple[float, float]:
        return self.n_hat_, count_noise_sd(self.epsilon_split_["record count"])

    def _synthetic_rows(self, size: int, rng: np.random.Generator, values: str,
                        shuffle: bool) -> tuple[pd.DataFrame, dict | None, np.ndarray]:
        """D̃ (§2.2): kept cells repeated in proportion to ⌈h̃ - ½⌉, every declared column in
        schema order. ``values="representative"``: numeric bins become their midpoints (the
        paper's reverse mapping; rounded for integer attributes); ``"generalized"``: every
        projected column holds its bin's label ("[lo, hi)") or its category, and the other
        columns their generalized fill (the root label, or a marginal's leaf label).

        Size (a public rule): ``n`` if given, else n̂ (``n_hat_``: the noisy record count, or the
        public n under substitution; with marginals paid, averaged with their totals,
        :meth:`~dpexplore.publish.complete.CompleteSynthetic._record_total`) raised to the public floor and capped at ``max_synthetic_rows``
        (:func:`~dpexplore.publish.complete.synthetic_size`); the copies are
        rescaled to it by largest-remainder rounding (at the paper's scale, the paper's copies).
        Predictors that were not projected are drawn from their noisy marginal
        (``marginal_share`` > 0) or uniformly over the declared domain (``column_sources_``).
        The projected columns are deterministic; a given ``random_state`` shuffles the row order
        (``shuffle``) and draws the other columns. With ``marginal_share`` > 0 the table keeps the data's shape
        (:mod:`dpexplore.publish.shape`): copies from one fit of the counts with the paid marginals
        (:meth:`~dpexplore.publish.complete.CompleteSynthetic._copy_weights`), and values inside
        each cell drawn jointly from the columns' distributions given their parents.
        """
        generalized = values == "generalized"
        kept, copies = self.counts_.decode(), self.counts_.rounded()
        cells = None
        if getattr(self, "marginals_", None):
            kept, copies = self._with_thresholded_mass(kept, copies)
        if getattr(self, "marginals_", None) or self.schema_.rules:
            cells = self._cells(kept)
        reps = (self._copies(copies, size, cells, classes=kept[-1]) if copies.size
                else np.zeros(0, np.int64))
        idx = [np.repeat(i, reps) for i in kept]
        if generalized:
            data = {a: self._level_labels(a)[i] for a, i in zip(self.selected_, idx[:-1])}
        else:
            data = {a: self._values(a, i) for a, i in zip(self.selected_, idx[:-1])}
            for a in self.selected_:
                attr = self.schema_[a]
                if attr.kind == "numeric" and attr.integer:   # an integer inside the bin's range
                    data[a] = np.clip(np.floor(data[a] + 0.5), attr.lower, attr.upper).astype(np.int64)
        data[self.schema_.target] = self.classes_[idx[-1]]
        frame = pd.DataFrame(data, columns=list(self.selected_) + [self.schema_.target])
        order = rng.permutation(len(frame)) if shuffle else np.arange(len(frame))
        rows = np.repeat(np.arange(reps.size), reps)[order]       # each row's kept cell
        return frame.iloc[order].reset_index(drop=True), cells, rows

    def _cells(self, index: Sequence[np.ndarray]) -> dict:
        """Each cell's bin [t_b, t_b+1) per numeric column (§2.1, 'Numeric data') or its category's
        leaf, from the cells' per-column indices (``index``: one array per projected column, then the
        class)."""
        return {a: IntervalCells(*_bin_bounds(self.schema_[a], self.n_bins_, i)) if self.schema_[a].kind == "numeric"
                else NodeCells(self.schema_[a].taxonomy.height - 1,
                               self.schema_[a].taxonomy.leaf_codes(np.asarray(self.schema_[a].categories)[i]))
                for a, i in zip(self.selected_, index[:-1])}

    def _with_thresholded_mass(self, kept: tuple[np.ndarray, ...], copies: np.ndarray
                               ) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
        """Every cell of the projection (at most :data:`dpexplore.limits.MAX_FILLED_CELLS`) with
        weights: the kept cells' copies, and the mass the threshold removed, n̂ − Σ copies, spread
        evenly over the cells it removed (each ≤ τ: a removed cell's noisy count was at most τ,
        §2.1) in which a declared rule can hold (a structural zero gets none). The raking
        that follows (:meth:`_copy_weights`) then shapes that mass by the paid marginals, so a
        category none of whose cells passed τ is not lost from the synthetic table. Post-processing
        of released values (kept counts, n̂, τ); the kept cells alone when the projection is larger."""
        m = self.counts_.n_cells
        if m > MAX_FILLED_CELLS:
            return kept, copies
        weights = np.zeros(m)
        weights[self.counts_.codes] = np.clip(copies, 0, None)
        removed = np.ones(m, dtype=bool)
        removed[self.counts_.codes] = False
        every = np.unravel_index(np.arange(m), self.counts_.shape)
        if self.schema_.rules:
            removed &= self._without_impossible_cells(np.ones(m), self._cells(every)) > 0
        missing = float(self.n_hat_) - float(weights.sum())
        if missing > 0 and removed.any():
            weights[removed] = min(missing / removed.sum(), max(float(self.threshold_), 0.0))
        return every, weights

    def _design(self, index: Sequence[np.ndarray]) -> np.ndarray:
        """Features: numeric → position u ∈ [0, 1] on the public range; categorical → one-hot
        over the FULL public category list (Vinterbo 2012, §3.1)."""
        blocks = []
        for a, i in zip(self.selected_, index):
            attr = self.schema_[a]
            if attr.kind == "numeric":
                blocks.append(np.asarray(i, dtype=float)[:, None])
            else:
                blocks.append(np.eye(len(attr.categories))[np.asarray(i, dtype=np.int64)])
        return np.hstack(blocks) if blocks else np.zeros((len(index[0]) if index else 0, 0))

    def _fit_model(self) -> None:
        """Logistic regression on D̃ as weighted unique rows (the same objective as the repeated
        rows, Vinterbo 2012, §3), or the class prior when D̃ cannot carry it.

        The fallback (an extension: the paper is silent on it, §2.3) predicts the class prior
        (:meth:`_class_shares`, AUC 0.5; with marginals measured given chosen parents the completed
        table's regression predicts instead, ``classifier_data_``) when D̃ is empty or of one
        class, and also when its cells that stand clearly above the noise (noisy count above
        max(τ, :func:`noise_ceiling`), which one cell is expected to exceed were all m cells
        empty) are of one class or fewer than the coefficients they can determine for one class
        (the intercept, one per numeric column and one per level of a categorical column that they
        hold: the regression is then underdetermined by them, and the rest of D̃ is what the
        noise put there). At small
        ε_h the kept cells are mostly empty cells that crossed τ (each does with probability
        ½·n̂^(−A/Δ), eq. 5), whose classes are noise: the regression fitted on them fell below the
        majority class. Post-processing of the released counts with public constants (b = Δ/ε_h,
        m, τ).
        """
        reps = np.clip(self.counts_.rounded(), 0, None)
        idx = self.counts_.decode()
        pos = reps > 0
        index = []
        for a, i in zip(self.selected_, idx[:-1]):
            if self.schema_[a].kind == "numeric":
                index.append(((np.asarray(i) + 0.5) / self.n_bins_)[pos])
            else:
                index.append(np.asarray(i)[pos])
        labels, weights = idx[-1][pos], reps[pos].astype(float)
        level = max(float(self.threshold_), noise_ceiling(self.noise_scale_, self.n_cells_))
        clear = self.counts_.values[pos] > level         # cells clearly above the noise
        self.synthetic_size_ = int(weights.sum())
        # one class's coefficients the clear cells can determine: a numeric column's one, one per
        # level of a categorical column that they hold, and the intercept
        n_params = 1 + sum(1 if self.schema_[a].kind == "numeric" else np.unique(i[clear]).size
                           for a, i in zip(self.selected_, index))
        present, clear_classes = np.unique(labels).size, np.unique(labels[clear]).size
        if present < 2 or clear_classes < 2 or clear.sum() < n_params:
            self.prior_ = (self._class_shares(labels[clear], weights[clear]) if clear.any()
                           else self._class_shares(labels, weights))
            self.model_ = None
            self.fallback_ = True
            reason = (f"{present} class(es)" if present < 2 else
                      f"{int(clear.sum())} cell(s) of {clear_classes} class(es) clearly above the noise, "
                      f"for {n_params} coefficients")
            instead = ("the regression on the completed table classifies instead (its marginals carry the "
                       "columns' relations)" if self._uses_table_classifier()
                       else "predicting the class shares of the release (AUC 0.5)")
            warnings.warn(f"the synthetic table has {self.synthetic_size_} rows and {reason}: {instead}",
                          EmptySyntheticWarning, stacklevel=FIT_CALLER_STACKLEVEL + 2)
            return
        self.fallback_ = False
        self.model_ = LogisticRegression(C=float(self.C), max_iter=1000)
        self.model_.fit(self._design(index), labels, sample_weight=weights)

    def _class_shares(self, labels: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """The class prior of the fallback (:meth:`_fit_model`; the paper is silent there,
        §2.3): the paid class marginal's shares when ``marginal_share`` > 0 bought one
        (:func:`~dpexplore.publish.shape.consistent_counts`), else the class shares of the cells
        given (:meth:`_fit_model`: D̃'s cells clearly above the noise when there are any, since an
        empty cell that crossed τ has a random class; else all of D̃), else uniform.
        Post-processing of released counts."""
        q = len(self.classes_)
        marginal = getattr(self, "marginals_", {}).get(self.schema_.target)
        counts = (consistent_counts(marginal) if marginal is not None
                  else np.bincount(labels, weights=weights, minlength=q))
        return counts / counts.sum() if counts.sum() > 0 else np.full(q, 1.0 / q)

    def _test_index(self, X: Any) -> list[np.ndarray]:
        X = check_release_features(self, X, self.schema_.predictors)
        self.schema_.subset(self.selected_).validate(X[self.selected_])
        out = []
        for a in self.selected_:
            attr = self.schema_[a]
            if attr.kind == "numeric":
                u = np.clip((X[a].to_numpy(dtype=float) - attr.lower) / (attr.upper - attr.lower), 0.0, 1.0)
                if self.test_values == "midpoint":
                    u = (discretise(X[a].to_numpy(), attr.lower, attr.upper, self.n_bins_) + 0.5) / self.n_bins_
                out.append(u)
            else:
                out.append(_category_codes(X[a], attr))
        return out

    def _predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        """Class probabilities from the LR fitted on D̃."""
        index = self._test_index(X)
        n = len(index[0])
        if self.model_ is None:
            return np.tile(self.prior_, (n, 1))
        proba = np.zeros((n, len(self.classes_)))
        proba[:, self.model_.classes_] = self.model_.predict_proba(self._design(index))
        return proba

