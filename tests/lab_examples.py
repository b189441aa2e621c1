"""The answer key of the lab: example answers for every exercise of ``dpexplore.lab``.

The installed package holds no answer (``dpexplore/lab/_core.py``): the example answers that the
tests feed through every check live here, in the test suite and the instructor's checkout only.

- ``EXAMPLES[id] = (wrong, right)``: at least two answers each check must call "not yet" and one
  it must call "right" (``tests/test_lab.py``).
- ``REFERENCE[id]``: the reference solution of each "implement" exercise, and ``FAIR[id]`` other
  correct ways to write it (vectorised or looped, other generator calls): every one is accepted.
- ``REFUSED[id]``: the graders' regression set, answers that leak or are not the mechanism asked
  for; every one must be refused (``tests/test_lab_graders.py``).
"""
from __future__ import annotations

import math
from collections import Counter

import numpy as np

from dpexplore.mechanisms import laplace

CLASSES = ("a", "b", "c")


# =========================================================================== 01.3: noisy class counts
def _shown(noisy) -> str:
    return " ".join(f"{c}:{v}" for c, v in zip(CLASSES, np.round(np.asarray(noisy) / 10).astype(int)))


def _counts(labels) -> np.ndarray:
    return np.array([labels.count(c) for c in CLASSES], dtype=float)


def class_counts_reference(labels, rng):
    """The notebook's solution: the declared classes, the package's Laplace at ε = 1."""
    return _shown(laplace(_counts(labels), epsilon=1.0, random_state=rng))


def class_counts_looped(labels, rng):
    tally = Counter(labels)
    parts = []
    for c in CLASSES:
        noisy = tally[c] + rng.laplace(0.0, 1.0)
        parts.append(f"{c}:{int(round(noisy / 10))}")
    return " ".join(parts)


def class_counts_exponentials(labels, rng):
    """Laplace(b) as the difference of two Exponential(b) draws."""
    return _shown(_counts(labels) + rng.exponential(1.0, 3) - rng.exponential(1.0, 3))


def class_counts_inverse_cdf(labels, rng):
    """Laplace(b) by the inverse distribution function, from uniform draws."""
    u = rng.random(3) - 0.5
    return _shown(_counts(labels) - np.sign(u) * np.log1p(-2 * np.abs(u)))


def class_counts_half_up(labels, rng):
    """Another rounding, int(x + 1/2): numpy's on every positive count (not below 0: a fair variant)."""
    noisy = _counts(labels) + rng.laplace(0.0, 1.0, 3)
    return " ".join(f"{c}:{int(v / 10 + 0.5)}" for c, v in zip(CLASSES, noisy))


def class_counts_leaky(labels, rng):
    """The notebook's bug: the class list is read from the data."""
    classes = sorted(set(labels))
    counts = np.array([labels.count(c) for c in classes], dtype=float)
    noisy = laplace(counts, epsilon=1.0, random_state=rng)
    return " ".join(f"{c}:{v}" for c, v in zip(classes, np.round(noisy / 10).astype(int)))


def _class_counts_scaled(factor_of_n):
    def release(labels, rng):
        return _shown(_counts(labels) + rng.laplace(0.0, factor_of_n(len(labels)), 3))
    return release


def class_counts_exact(labels, rng):
    return _shown(_counts(labels))


def class_counts_exact_past_100(labels, rng):
    counts = _counts(labels)
    return _shown(counts if len(labels) > 100 else counts + rng.laplace(0.0, 1.0, 3))


def class_counts_exact_from_50(labels, rng):
    counts = _counts(labels)
    return _shown(np.where(counts >= 50, counts, counts + rng.laplace(0.0, 1.0, 3)))


def class_counts_small_as_zero(labels, rng):
    counts = _counts(labels)
    return _shown(np.where(counts <= 1, 0.0, counts + rng.laplace(0.0, 1.0, 3)))


def class_counts_shared_noise(labels, rng):
    return _shown(_counts(labels) + rng.laplace(0.0, 1.0))


def class_counts_calls_the_package(labels, rng):
    from dpexplore.mechanisms import geometric
    return _shown(geometric(_counts(labels).astype(int), epsilon=1.0, random_state=rng))


# =========================================================================== 10.2: the reconstruction attack
def _lp_solution(queries, answers):
    """The x ∈ [0, 1]^n minimising Σ_j |A_j·x − a_j| (variables x and one error e_j per answer)."""
    from scipy.optimize import linprog

    A, a = np.asarray(queries, dtype=float), np.asarray(answers, dtype=float)
    k, n = A.shape
    result = linprog(np.r_[np.zeros(n), np.ones(k)], A_ub=np.block([[A, -np.eye(k)], [-A, -np.eye(k)]]),
                     b_ub=np.r_[a, -a], bounds=[(0, 1)] * n + [(0, None)] * k, method="highs")
    return result.x[:n]


def reconstruct_reference(queries, answers):
    """The notebook's solution: the linear program, rounded at 1/2."""
    return (_lp_solution(queries, answers) >= 0.5).astype(int)


def reconstruct_least_squares(queries, answers):
    """Least squares, rounded: with 4n queries it recovers the column too (a fair attack)."""
    x = np.linalg.lstsq(np.asarray(queries, dtype=float), np.asarray(answers, dtype=float), rcond=None)[0]
    return [bool(v >= 0.5) for v in x]


def reconstruct_unrounded(queries, answers):
    return _lp_solution(queries, answers)


def reconstruct_by_correlation(queries, answers):
    """The mean answer of the subsets with a record minus the mean of those without it: too weak."""
    A, a = np.asarray(queries, dtype=float), np.asarray(answers, dtype=float)
    inside = (A * a[:, None]).sum(axis=0) / A.sum(axis=0)
    outside = ((1 - A) * a[:, None]).sum(axis=0) / (1 - A).sum(axis=0)
    return (inside - outside > 0.5).astype(int)


def reconstruct_calls_the_package(queries, answers):
    from dpexplore.attacks import reconstruct
    return reconstruct(queries, answers)


def reconstruct_guessing(queries, answers):
    return np.random.default_rng(0).integers(0, 2, np.shape(queries)[1])


# =========================================================================== 11.3: randomized response
def _truth_probability(epsilon):
    return math.exp(epsilon) / (1 + math.exp(epsilon))


def rr_reference(answers, epsilon, rng):
    """The notebook's solution: the truth with probability p = e^ε/(1 + e^ε), else the opposite."""
    answers = np.asarray(answers)
    p = np.exp(epsilon) / (1 + np.exp(epsilon))
    return np.where(rng.random(len(answers)) < p, answers, 1 - answers)


def rr_looped(answers, epsilon, rng):
    p = _truth_probability(epsilon)
    return [int(a) if rng.random() < p else 1 - int(a) for a in answers]


def rr_forced_response(answers, epsilon, rng):
    """Two coins: with probability γ = (e^ε − 1)/(e^ε + 1) the truth, else a fair coin's answer."""
    answers = np.asarray(answers)
    gamma = (math.exp(epsilon) - 1) / (math.exp(epsilon) + 1)
    return np.where(rng.random(answers.size) < gamma, answers, rng.integers(0, 2, answers.size))


def rr_binomial_flips(answers, epsilon, rng):
    """Flip each answer with probability 1 − p (binomial draws), as booleans."""
    flips = rng.binomial(1, 1 - _truth_probability(epsilon), len(answers))
    return (np.asarray(answers) ^ flips).astype(bool)


def _rr_truth_probability(p_of):
    """Randomized response that tells the truth with probability p_of(ε, answers) (clipped to [0, 1])."""
    def release(answers, epsilon, rng):
        answers = np.asarray(answers)
        p = min(1.0, max(0.0, p_of(epsilon, answers)))
        return np.where(rng.random(answers.size) < p, answers, 1 - answers)
    return release


def rr_exact_past_1000(answers, epsilon, rng):
    return np.asarray(answers) if len(answers) > 1_000 else rr_reference(answers, epsilon, rng)


def rr_yes_kept(answers, epsilon, rng):
    answers = np.asarray(answers)
    lie = rng.random(answers.size) < 1 - _truth_probability(epsilon)
    return np.where((answers == 0) & lie, 1, answers)


def rr_one_coin(answers, epsilon, rng):
    answers = np.asarray(answers)
    return answers if rng.random() < _truth_probability(epsilon) else 1 - answers


def rr_truth_when_uncertain(answers, epsilon, rng):
    """The coin decides between the truth and a uniform random answer, with the truth's p: too little noise."""
    answers = np.asarray(answers)
    return np.where(rng.random(answers.size) < _truth_probability(epsilon), answers,
                    rng.integers(0, 2, answers.size))


def rr_first_person_exact(answers, epsilon, rng):
    out = rr_reference(answers, epsilon, rng)
    out[0] = np.asarray(answers)[0]
    return out


def rr_no_noise(answers, epsilon, rng):
    return np.asarray(answers)


def rr_calls_the_package(answers, epsilon, rng):
    from dpexplore.mechanisms import randomized_response
    return randomized_response(answers, epsilon=epsilon, random_state=rng)


def rr_calls_the_probability(answers, epsilon, rng):
    from dpexplore.mechanisms import randomized_response_probability
    p = randomized_response_probability(epsilon=epsilon)
    return np.where(rng.random(len(answers)) < p, answers, 1 - np.asarray(answers))


# =========================================================================== 03.1: piece probabilities
def pieces_reference(edges, scores, epsilon):
    weights = np.diff(edges) * np.exp(epsilon * (scores - np.max(scores)) / 2)
    return weights / weights.sum()


def pieces_looped(edges, scores, epsilon):
    top = max(scores)
    weights = [(edges[i + 1] - edges[i]) * math.exp(epsilon * (scores[i] - top) / 2) for i in range(len(scores))]
    total = sum(weights)
    return [w / total for w in weights]


def pieces_unshifted(edges, scores, epsilon):
    weights = np.diff(edges) * np.exp(epsilon * np.asarray(scores) / 2)
    return weights / weights.sum()


def pieces_length_ignored(edges, scores, epsilon):
    w = np.exp(epsilon * np.asarray(scores, dtype=float) / 2)
    return w / w.sum()


def pieces_no_half(edges, scores, epsilon):
    w = np.diff(edges) * np.exp(epsilon * np.asarray(scores, dtype=float))
    return w / w.sum()


def pieces_unnormalised(edges, scores, epsilon):
    return np.diff(edges) * np.exp(epsilon * np.asarray(scores, dtype=float) / 2)


def pieces_calls_the_package(edges, scores, epsilon):
    """Passes the old check: the first cell of notebook 03 imports this function."""
    from dpexplore.mechanisms import exponential_interval_probabilities
    return exponential_interval_probabilities(edges, scores, epsilon=epsilon, sensitivity=1)


# =========================================================================== 05.5: repaired PTT
def _noisy_scores(scale):
    def select(tc, threshold, epsilon, rng):
        return np.asarray(tc, dtype=float) + rng.laplace(0.0, scale / epsilon, len(tc)) > threshold
    return select


selector_reference = _noisy_scores(2.0)


def selector_looped(tc, threshold, epsilon, rng):
    return [float(t) + rng.laplace(0.0, 2 / epsilon) > threshold for t in tc]


def selector_exponentials(tc, threshold, epsilon, rng):
    b = 2.0 / epsilon
    noise = rng.exponential(b, len(tc)) - rng.exponential(b, len(tc))
    return (np.asarray(tc) + noise > threshold).astype(int)


def selector_inverse_cdf(tc, threshold, epsilon, rng):
    u = rng.uniform(-0.5, 0.5, len(tc))
    return np.asarray(tc) - (2.0 / epsilon) * np.sign(u) * np.log1p(-2 * np.abs(u)) > threshold


def selector_ptt(tc, threshold, epsilon, rng):
    """PTT: noise on the threshold only."""
    return np.asarray(tc) >= threshold + rng.laplace(0.0, 1.0 / epsilon)


def selector_exact_from_20(tc, threshold, epsilon, rng):
    tc = np.asarray(tc, dtype=float)
    if tc.max() >= 20:
        return tc > threshold
    return selector_reference(tc, threshold, epsilon, rng)


def selector_exact_past_12(tc, threshold, epsilon, rng):
    tc = np.asarray(tc, dtype=float)
    if tc.sum() > 12:
        return tc > threshold
    return selector_reference(tc, threshold, epsilon, rng)


def selector_zeros_never(tc, threshold, epsilon, rng):
    tc = np.asarray(tc, dtype=float)
    return selector_reference(tc, threshold, epsilon, rng) & (tc > 0)


def selector_calls_the_package(tc, threshold, epsilon, rng):
    return laplace(np.asarray(tc, dtype=float), epsilon=epsilon, sensitivity=2.0, random_state=rng) > threshold


# =========================================================================== 06.3: thresholded histogram
def histogram_reference(counts, epsilon, tau, rng):
    noisy = np.asarray(counts, dtype=float) + rng.laplace(0.0, 1.0 / epsilon, size=len(counts))
    return np.where(noisy > tau, noisy, 0.0)


def histogram_looped(counts, epsilon, tau, rng):
    out = []
    for c in counts:
        noisy = c + rng.laplace(0.0, 1.0 / epsilon)
        out.append(noisy if noisy > tau else 0.0)
    return out


def histogram_inverse_cdf(counts, epsilon, tau, rng):
    u = rng.random(len(counts)) - 0.5
    noisy = np.asarray(counts) - np.sign(u) * np.log1p(-2 * np.abs(u)) / epsilon
    return noisy * (noisy > tau)


def histogram_sparse(counts, epsilon, tau, rng):
    """The paper's sparse construction (§2.4): noise on the occupied cells, a binomial number of
    surviving empty cells at uniform positions, each τ + Exponential(b) (τ ≥ 0)."""
    counts = np.asarray(counts, dtype=float)
    b = 1.0 / epsilon
    out = np.zeros(counts.size)
    occupied = np.flatnonzero(counts > 0)
    noisy = counts[occupied] + rng.laplace(0.0, b, occupied.size)
    out[occupied] = np.where(noisy > tau, noisy, 0.0)
    empty = np.flatnonzero(counts == 0)
    survivors = rng.binomial(empty.size, 0.5 * math.exp(-tau / b))
    chosen = rng.choice(empty, size=survivors, replace=False)
    out[chosen] = tau + rng.exponential(b, survivors)
    return out


def _histogram_scaled(scale_of):
    def release(counts, epsilon, tau, rng):
        counts = np.asarray(counts, dtype=float)
        noisy = counts + rng.laplace(0.0, 1.0, counts.size) * scale_of(counts, epsilon)
        return np.where(noisy > tau, noisy, 0.0)
    return release


def histogram_occupied_only(counts, epsilon, tau, rng):
    counts = np.asarray(counts, dtype=float)
    noisy = counts + np.where(counts > 0, rng.laplace(0.0, 1.0 / epsilon, size=counts.size), 0.0)
    return np.where(noisy > tau, noisy, 0.0)


def histogram_no_threshold(counts, epsilon, tau, rng):
    return np.asarray(counts, dtype=float) + rng.laplace(0.0, 1.0 / epsilon, size=len(counts))


def histogram_no_noise(counts, epsilon, tau, rng):
    counts = np.asarray(counts, dtype=float)
    return np.where(counts > tau, counts, 0.0)


def histogram_kept_exact(counts, epsilon, tau, rng):
    """The noisy count decides which cells are kept, but kept cells show their exact count."""
    counts = np.asarray(counts, dtype=float)
    noisy = counts + rng.laplace(0.0, 1.0 / epsilon, size=counts.size)
    return np.where(noisy > tau, np.where(counts > 0, counts, noisy), 0.0)


def histogram_exact_past_100(counts, epsilon, tau, rng):
    counts = np.asarray(counts, dtype=float)
    if counts.sum() > 100:
        return np.where(counts > tau, counts, 0.0)
    return histogram_reference(counts, epsilon, tau, rng)


def histogram_exact_from_30(counts, epsilon, tau, rng):
    counts = np.asarray(counts, dtype=float)
    noisy = histogram_reference(counts, epsilon, tau, rng)
    return np.where(counts >= 30, counts, noisy)


def histogram_shared_noise(counts, epsilon, tau, rng):
    noisy = np.asarray(counts, dtype=float) + rng.laplace(0.0, 1.0 / epsilon)
    return np.where(noisy > tau, noisy, 0.0)


def histogram_calls_the_package(counts, epsilon, tau, rng):
    from dpexplore.publish.sparse_histogram import perturb_dense
    codes, values = perturb_dense(counts, epsilon=epsilon, tau=tau, sensitivity=1.0, random_state=rng)
    out = np.zeros(len(counts))
    out[codes] = values
    return out


# =========================================================================== 12.2: the classical Gaussian release
def _classical(epsilon, delta, sensitivity):
    return sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon


def gaussian_reference(values, epsilon, delta, sensitivity, rng):
    """The notebook's solution: σ = Δ₂√(2 ln(1.25/δ))/ε on every entry."""
    values = np.asarray(values, dtype=float)
    return values + rng.normal(0.0, _classical(epsilon, delta, sensitivity), size=values.shape)


def gaussian_looped(values, epsilon, delta, sensitivity, rng):
    sigma = _classical(epsilon, delta, sensitivity)
    return [float(v) + sigma * rng.standard_normal() for v in values]


def gaussian_box_muller(values, epsilon, delta, sensitivity, rng):
    """Normal draws by the Box–Muller transform of uniform draws."""
    u1, u2 = 1.0 - rng.random(len(values)), rng.random(len(values))
    z = np.sqrt(-2 * np.log(u1)) * np.cos(2 * np.pi * u2)
    return np.asarray(values, dtype=float) + _classical(epsilon, delta, sensitivity) * z


def _gaussian_scaled(sigma_of):
    """σ = sigma_of(classical σ, values, ε, δ, Δ₂)."""
    def release(values, epsilon, delta, sensitivity, rng):
        values = np.asarray(values, dtype=float)
        sigma = sigma_of(_classical(epsilon, delta, sensitivity), values, epsilon, delta, sensitivity)
        return values + rng.normal(0.0, 1.0, size=values.shape) * sigma
    return release


def gaussian_exact_from_1000(values, epsilon, delta, sensitivity, rng):
    noisy = gaussian_reference(values, epsilon, delta, sensitivity, rng)
    return np.where(np.asarray(values) >= 1_000, values, noisy)


def gaussian_exact_past_10000_records(values, epsilon, delta, sensitivity, rng):
    values = np.asarray(values, dtype=float)
    return values if values.sum() > 10_000 else gaussian_reference(values, epsilon, delta, sensitivity, rng)


def gaussian_shared_noise(values, epsilon, delta, sensitivity, rng):
    return np.asarray(values, dtype=float) + rng.normal(0.0, _classical(epsilon, delta, sensitivity))


def gaussian_laplace_shape(values, epsilon, delta, sensitivity, rng):
    """Laplace noise with the classical σ as its standard deviation: not the mechanism asked for."""
    values = np.asarray(values, dtype=float)
    return values + rng.laplace(0.0, _classical(epsilon, delta, sensitivity) / math.sqrt(2), size=values.shape)


def gaussian_variance_as_scale(values, epsilon, delta, sensitivity, rng):
    values = np.asarray(values, dtype=float)
    return values + rng.normal(0.0, _classical(epsilon, delta, sensitivity) ** 2, size=values.shape)


def gaussian_calls_the_package(values, epsilon, delta, sensitivity, rng):
    from dpexplore.mechanisms import gaussian
    return gaussian(values, epsilon=epsilon, delta=delta, sensitivity=sensitivity, calibration="classical",
                    random_state=rng)


def gaussian_calls_the_scale(values, epsilon, delta, sensitivity, rng):
    from dpexplore.mechanisms import gaussian_scale
    sigma = gaussian_scale(epsilon=epsilon, delta=delta, sensitivity=sensitivity, calibration="classical")
    return np.asarray(values, dtype=float) + rng.normal(0.0, sigma, size=len(values))


# =========================================================================== 13.2: k ε-DP steps under zCDP
def zcdp_total_reference(epsilon, k, delta):
    rho = k * epsilon ** 2 / 2
    return rho + 2 * math.sqrt(rho * math.log(1 / delta))


def zcdp_total_numpy(epsilon, k, delta):
    rho = np.float64(k) * np.square(epsilon) / 2
    return float(rho + 2 * np.sqrt(-rho * np.log(delta)))


def zcdp_total_calls_the_package(epsilon, k, delta):
    from dpexplore.composition import zcdp_of_pure, zcdp_to_dp
    return zcdp_to_dp(k * zcdp_of_pure(epsilon), delta=delta)


# =========================================================================== 14.4: AboveThreshold, repaired
def above_threshold_reference(queries, threshold, epsilon, rng):
    """The notebook's solution: the variant halted at its first ⊤, with query noise Lap(4Δ/ε)."""
    noisy_threshold = threshold + rng.laplace(0.0, 2 / epsilon)
    answers = []
    for q in queries:
        above = q + rng.laplace(0.0, 4 / epsilon) >= noisy_threshold
        answers.append(bool(above))
        if above:
            break
    return answers


def above_threshold_vectorised(queries, threshold, epsilon, rng):
    """Every query's noise drawn at once (the draws after the first ⊤ are never shown)."""
    rho = rng.laplace(0.0, 2 / epsilon)
    above = np.asarray(queries) + rng.laplace(0.0, 4 / epsilon, size=len(queries)) >= threshold + rho
    stop = int(np.argmax(above)) + 1 if above.any() else len(queries)
    return above[:stop]


def above_threshold_exponentials(queries, threshold, epsilon, rng):
    """Laplace noise as the difference of two exponential draws, answers as 0/1."""
    rho = rng.exponential(2 / epsilon) - rng.exponential(2 / epsilon)
    out = []
    for q in queries:
        out.append(int(q + rng.exponential(4 / epsilon) - rng.exponential(4 / epsilon) >= threshold + rho))
        if out[-1]:
            return np.array(out)
    return np.array(out)


def _svt_variant(*, threshold_scale=2.0, query_scale=4.0, halt=True, noise_when=None, shared=False,
                 fresh_threshold=False, cutoff=1):
    """A repair with one thing wrong: the scales (in units of Δ/ε), no halting or a later one, noise
    only where ``noise_when(q, queries, threshold)`` holds (an exact comparison elsewhere), one ν for
    every query, ρ redrawn per query."""
    def release(queries, threshold, epsilon, rng):
        rho = rng.laplace(0.0, threshold_scale / epsilon)
        nu = rng.laplace(0.0, query_scale / epsilon)
        answers, above = [], 0
        for q in queries:
            if fresh_threshold:
                rho = rng.laplace(0.0, threshold_scale / epsilon)
            noisy = noise_when is None or noise_when(q, queries, threshold)
            noise = (nu if shared else rng.laplace(0.0, query_scale / epsilon)) if noisy else 0.0
            answers.append(bool(q + noise >= threshold + (rho if noisy else 0.0)))
            above += answers[-1]
            if halt and above == cutoff:
                break
        return answers
    return release


def above_threshold_released_value(queries, threshold, epsilon, rng):
    """Lyu et al.'s Alg. 3: the ⊤ comes with its noisy value."""
    rho = rng.laplace(0.0, 2 / epsilon)
    out = []
    for q in queries:
        noisy = q + rng.laplace(0.0, 4 / epsilon)
        if noisy >= threshold + rho:
            return out + [noisy]
        out.append(False)
    return out


def above_threshold_calls_the_package(queries, threshold, epsilon, rng):
    from dpexplore.svt import above_threshold
    return above_threshold(queries, threshold, epsilon=epsilon, random_state=rng)


def above_threshold_calls_sparse_vector(queries, threshold, epsilon, rng):
    from dpexplore.svt import sparse_vector
    first = sparse_vector(queries, threshold, epsilon=epsilon, cutoff=1, threshold_share=0.5, random_state=rng)
    answers = np.zeros(first[0] + 1 if first.size else len(queries), dtype=bool)
    answers[first] = True
    return answers


# =========================================================================== the answer key
REFERENCE = {"01.3": class_counts_reference, "03.1": pieces_reference, "05.5": selector_reference,
             "06.3": histogram_reference, "10.2": reconstruct_reference, "11.3": rr_reference,
             "12.2": gaussian_reference, "13.2": zcdp_total_reference, "14.4": above_threshold_reference}

FAIR = {
    "01.3": {"looped, collections.Counter, round()": class_counts_looped,
             "exponential differences": class_counts_exponentials,
             "inverse CDF from rng.random": class_counts_inverse_cdf,
             "int(x + 0.5) rounding": class_counts_half_up},
    "03.1": {"looped, math.exp": pieces_looped, "without the max shift": pieces_unshifted},
    "05.5": {"looped": selector_looped, "exponential differences, 0/1": selector_exponentials,
             "inverse CDF from rng.uniform": selector_inverse_cdf},
    "06.3": {"looped, a list": histogram_looped, "inverse CDF, noisy·(noisy > τ)": histogram_inverse_cdf,
             "the sparse construction (binomial + exponential)": histogram_sparse},
    "10.2": {"least squares, rounded, a list of booleans": reconstruct_least_squares},
    "11.3": {"looped, a list": rr_looped, "forced response (two coins)": rr_forced_response,
             "binomial flips, booleans": rr_binomial_flips},
    "12.2": {"looped, a list, standard_normal": gaussian_looped, "Box–Muller from uniform draws": gaussian_box_muller},
    "13.2": {"numpy": zcdp_total_numpy},
    "14.4": {"vectorised, cut after the first ⊤": above_threshold_vectorised,
             "exponential differences, 0/1": above_threshold_exponentials},
}

REFUSED = {
    "01.3": {"the class list read from the data": class_counts_leaky,
             "no noise": class_counts_exact,
             "b = Δ/(1.05ε)": _class_counts_scaled(lambda n: 1 / 1.05),
             "b = Δ/(1.1ε)": _class_counts_scaled(lambda n: 1 / 1.1),
             "b = 1.05·Δ/ε (too much noise)": _class_counts_scaled(lambda n: 1.05),
             "exact counts past 100 labels": class_counts_exact_past_100,
             "no noise on counts ≥ 50": class_counts_exact_from_50,
             "a count ≤ 1 reported as 0": class_counts_small_as_zero,
             "b = Δ/(ε·n) (shrinks with n)": _class_counts_scaled(lambda n: 1 / max(n, 1)),
             "b = min(1, 100/n)·Δ/ε": _class_counts_scaled(lambda n: min(1.0, 100 / max(n, 1))),
             "one noise draw for every class": class_counts_shared_noise,
             "noise for ε = 100": _class_counts_scaled(lambda n: 0.01),
             "calls dpexplore's geometric": class_counts_calls_the_package},
    "03.1": {"the package's own function": pieces_calls_the_package,
             "length ignored": pieces_length_ignored, "ε·score without the ½": pieces_no_half,
             "not normalised": pieces_unnormalised},
    "05.5": {"PTT (noise on the threshold)": selector_ptt,
             "Lap(1/ε): Δ = 1": _noisy_scores(1.0),
             "Lap(2/(1.05ε))": _noisy_scores(2 / 1.05),
             "Lap(2/(1.1ε))": _noisy_scores(2 / 1.1),
             "Lap(2/(1.2ε))": _noisy_scores(2 / 1.2),
             "Lap(2.1/ε) (too much noise)": _noisy_scores(2.1),
             "exact comparison when the largest score is ≥ 20": selector_exact_from_20,
             "exact comparison when the scores sum to more than 12": selector_exact_past_12,
             "scores of 0 never selected": selector_zeros_never,
             "calls dpexplore's laplace": selector_calls_the_package},
    "06.3": {"noise on the occupied cells only": histogram_occupied_only,
             "Lap(1/(1.05ε))": _histogram_scaled(lambda c, e: 1 / (1.05 * e)),
             "Lap(1/(1.1ε))": _histogram_scaled(lambda c, e: 1 / (1.1 * e)),
             "Lap(1/(1.2ε))": _histogram_scaled(lambda c, e: 1 / (1.2 * e)),
             "Lap(1.05/ε) (too much noise)": _histogram_scaled(lambda c, e: 1.05 / e),
             "kept cells released with their exact count": histogram_kept_exact,
             "an exact release past 100 records": histogram_exact_past_100,
             "cells ≥ 30 released exactly": histogram_exact_from_30,
             "noise that shrinks as the count grows": _histogram_scaled(lambda c, e: 1 / (e * (1 + c / 100))),
             "one noise draw for every cell": histogram_shared_noise,
             "no threshold": histogram_no_threshold,
             "no noise": histogram_no_noise,
             "calls dpexplore's perturb_dense": histogram_calls_the_package},
    "10.2": {"calls dpexplore's reconstruct": reconstruct_calls_the_package,
             "the LP's solution, not rounded": reconstruct_unrounded,
             "correlation of the answers (too weak)": reconstruct_by_correlation,
             "a coin flip per record": reconstruct_guessing,
             "all zeros": lambda queries, answers: np.zeros(np.shape(queries)[1], dtype=int)},
    "11.3": {"no noise": rr_no_noise,
             "p 3 % too high": _rr_truth_probability(lambda e, a: 1.03 * _truth_probability(e)),
             "p 3 % too low (too much noise)": _rr_truth_probability(lambda e, a: 0.97 * _truth_probability(e)),
             "ε 5 % too large": _rr_truth_probability(lambda e, a: _truth_probability(1.05 * e)),
             "ε 5 % too small (too much noise)": _rr_truth_probability(lambda e, a: _truth_probability(e / 1.05)),
             "p = e^(2ε)/(1 + e^(2ε))": _rr_truth_probability(lambda e, a: _truth_probability(2 * e)),
             "p = 1 − e^−ε": _rr_truth_probability(lambda e, a: 1 - math.exp(-e)),
             "p = e^ε/(1 + e^ε) + 1/n": _rr_truth_probability(lambda e, a: _truth_probability(e) + 1 / a.size),
             "ε·log₁₀ n (less noise on big surveys)": _rr_truth_probability(
                 lambda e, a: _truth_probability(e * max(1.0, math.log10(a.size)))),
             "exact answers past 1,000 people": rr_exact_past_1000,
             "a yes always reported as yes": rr_yes_kept,
             "one coin for everybody": rr_one_coin,
             "a random answer instead of the opposite": rr_truth_when_uncertain,
             "the first person's answer exact": rr_first_person_exact,
             "calls dpexplore's randomized_response": rr_calls_the_package,
             "calls dpexplore's randomized_response_probability": rr_calls_the_probability},
    "12.2": {"σ = Δ₂/ε (the Laplace scale)": _gaussian_scaled(lambda s, v, e, d, l2: l2 / e),
             "σ / 1.05": _gaussian_scaled(lambda s, v, e, d, l2: s / 1.05),
             "σ / 1.1": _gaussian_scaled(lambda s, v, e, d, l2: s / 1.1),
             "σ · 1.05 (too much noise)": _gaussian_scaled(lambda s, v, e, d, l2: s * 1.05),
             "σ / √(number of entries)": _gaussian_scaled(lambda s, v, e, d, l2: s / math.sqrt(len(v))),
             "σ from Δ₂ = 1 whatever the sensitivity": _gaussian_scaled(lambda s, v, e, d, l2: s / l2),
             "σ that shrinks with the table's size": _gaussian_scaled(lambda s, v, e, d, l2: s * min(1.0, 1e3 / max(v.sum(), 1))),
             "σ² used as the standard deviation": gaussian_variance_as_scale,
             "counts ≥ 1,000 released exactly": gaussian_exact_from_1000,
             "an exact release past 10,000 records": gaussian_exact_past_10000_records,
             "one noise draw for every entry": gaussian_shared_noise,
             "Laplace noise of standard deviation σ": gaussian_laplace_shape,
             "no noise": lambda values, epsilon, delta, sensitivity, rng: np.asarray(values, dtype=float),
             "calls dpexplore's gaussian": gaussian_calls_the_package,
             "calls dpexplore's gaussian_scale": gaussian_calls_the_scale},
    "13.2": {"kε (basic composition)": lambda e, k, d: k * e,
             "ρ itself, not converted": lambda e, k, d: k * e * e / 2,
             "ρ = kε (not ε²/2 per step)": lambda e, k, d: k * e + 2 * math.sqrt(k * e * math.log(1 / d)),
             "without the 2": lambda e, k, d: k * e * e / 2 + math.sqrt(k * e * e / 2 * math.log(1 / d)),
             "ln δ for ln(1/δ)": lambda e, k, d: k * e * e / 2 + 2 * math.sqrt(abs(k * e * e / 2 * math.log(d)) / k),
             "calls dpexplore's zcdp_to_dp": zcdp_total_calls_the_package},
    "14.4": {"not repaired: no halting, ν ~ Lap(2Δ/ε) (Lyu Alg. 6)": _svt_variant(query_scale=2.0, halt=False),
             "halts, but ν ~ Lap(2Δ/ε)": _svt_variant(query_scale=2.0),
             "no noise on the queries (Lyu Alg. 5), halting": _svt_variant(query_scale=1e-12),
             "ν ~ Lap(4Δ/ε) but no halting": _svt_variant(halt=False),
             "halts after the second ⊤": _svt_variant(cutoff=2),
             "releases the ⊤'s noisy value (Lyu Alg. 3)": above_threshold_released_value,
             "ρ ~ Lap(Δ/ε)": _svt_variant(threshold_scale=1.0),
             "ν ~ Lap(4Δ/(1.1ε))": _svt_variant(query_scale=4 / 1.1),
             "ρ, ν 5 % too small": _svt_variant(threshold_scale=2 / 1.05, query_scale=4 / 1.05),
             "ρ, ν 5 % too large": _svt_variant(threshold_scale=2 * 1.05, query_scale=4 * 1.05),
             "ρ redrawn for every query": _svt_variant(fresh_threshold=True),
             "one ν for every query": _svt_variant(shared=True),
             "exact comparison past 30 queries": _svt_variant(noise_when=lambda q, qs, t: len(qs) <= 30),
             "exact comparison for counts ≥ 1,000": _svt_variant(noise_when=lambda q, qs, t: q < 1_000),
             "exact ⊤ for a count at or above τ + 1": _svt_variant(noise_when=lambda q, qs, t: q < t + 1),
             "calls dpexplore's above_threshold": above_threshold_calls_the_package,
             "calls dpexplore's sparse_vector": above_threshold_calls_sparse_vector},
}

EXAMPLES = {
    "00.1": ([0.15, 0.5, 0.1 + 0.5, 0.1 * 0.5, "10%"],
             [0.1 * math.exp(0.5), "0.165", 16.49 / 100, 0.16, "16.5%", 16.5]),
    "00.2": (["a", "c", "d", "ε"], ["b", " B ", "2ε", "(b)"]),
    "00.3": ([0.5, 0.5 / 3, 3, "1.5 per stay"], [1.5, "1.5", 3 * 0.5]),
    "00.4": ([0.248, 0.5, 24.8], [0.752, 75.2, "75%", "0.75"]),
    "00.5": ([2, 3, 8, "level 3"], [4, "4"]),
    "01.1": ([2.0, 0.1, 2.5, "ten"], [10, 10.0, "10"]),
    "01.2": ([0.5, 0.25, 2.0, 4.0], [1.0, "1", 1]),
    "01.3": ([class_counts_leaky, class_counts_exact, "a:3 b:3 c:0"], [class_counts_reference]),
    "01.4": ([1.0, 0.5, 0.88, 10 / 18], [0.731, "0.73", 73.1 / 100]),
    "01.5": ([2.4, 1.0, 0.5, 0.1 + 0.3 + 4 * 0.5 / 4 + 0.5], [0.9, "0.9", 0.9000001]),
    "02.1": ([1.0, 0.5, 0.9, 0.45], [0.643, 0.65, "0.64", 64.3]),
    "02.2": ([360, 7200, 133.2, 4320], [216, 216.0, "216"]),
    "02.3": (["a", "c", "more", "same"], ["b", "B", "fewer", "(b)"]),
    "02.4": ([1.15, 2.36, 1 / 0.87 ** 2, math.sqrt(2) / 0.6], [1.6255, "1.63", math.sqrt(2) / 0.87, 1.6]),
    "03.1": ([pieces_length_ignored, pieces_no_half, pieces_unnormalised, np.diff, pieces_calls_the_package],
             [pieces_reference]),
    "03.2": ([1.0, 0.9, 0.06, 0.45], [0.383, "0.38", 38, 0.4]),
    "03.3": ([2 / 192, 1 / 384, 2 / 68, 0.5], [2 / 384, "0.0052", 0.00521]),
    "03.4": (["a", "c", "rises", "collapses"], ["b", " b ", "plateau", "(b)"]),
    "04.1": (["a", "c", "count score", "d"], ["b", " B ", "(b)", "mutual information"]),
    "04.2": ([500, 200, 1 / 0.06, "a lot"], [333.33, "333.3", 1000 / 3]),
    "04.3": (["a", "k-subset", "c"], ["b", "(B)", "all features"]),
    "04.4": ([4.876, 2.5, 0.25 / 0.2214, "5"], [2.379, "2.38", 0.25 / 0.10517]),
    "04.5": ([0.01, 4.876, 10_000, 7], [5, "5", 5.0]),
    "05.1": ([0.4, 0.0125, 0.0625, "0.8"], [0.08, "0.08", 0.4 / 5]),
    "05.2": ([11, 2560, 25, 0.4 / 11], [27.5, "27.5", 11 / 0.4]),
    "05.3": (["b", "c", "PriROC FixedSpace"], ["a", "(a)", "LaplaceROC"]),
    "05.4": (["a", "(A)", "passes"], ["b", " b ", "refuted"]),
    "05.5": ([selector_ptt, _noisy_scores(1.0), lambda tc, t, e, rng: np.zeros(len(tc), dtype=bool),
              "score perturbation"], [selector_reference]),
    "06.1": ([(0.8, 0.1), (0.76, 0.19), (0.095, 0.76), 0.76], [(0.76, 0.095), [0.76, 0.095], ("0.76", "0.095")]),
    "06.2": ([0.01, 0.05, 1.0, "petal_length"], [0.2, "0.2", 0.20]),
    "06.3": ([histogram_occupied_only, histogram_no_threshold, histogram_no_noise, "Laplace"],
             [histogram_reference]),
    "06.4": (["a", "c", "grows"], ["b", "(b)", "stays the same"]),
    "06.5": ([0.005, 50, 10_000, 200], [100, "100", 100.0]),
    "07.1": ([1.0, 1.43, 4.29, 8.58], [25.74, "25.7", 6 * 3 * 1.43]),
    "07.2": (["above", "Above ", "same"], ["below", " Below", "below."]),
    "07.3": (["a", "c", "the lowest run"], ["b", "(b)", " B"]),
    "07.4": (["a", "c", "PrivPfC"], ["d", "(d)", " D "]),
    "08.1": ([4, 1, 0.5, "1/4 per patient"], [0.25, "0.25", 1 / 4]),
    "08.2": (["a", "b", "about half"], ["c", "(c)", " C "]),
    "08.3": (["a", "b", "more than 50"], ["c", "(c)", "about one or fewer"]),
    "09.1": ([1, 45_222, 0.0045, 22.1], [221.1, "221", 10_000_000 / 45_222]),
    "09.2": (["no", "No.", "maybe"], ["yes", " Yes", "identical"]),
    "09.3": (["a", "b", "count table"], ["c", "(c)", "fit after table"]),
    "10.1": ([2, 2 * math.sqrt(2), 8, 16], [4, "4", 4.0, math.sqrt(16)]),
    "10.2": ([reconstruct_calls_the_package, reconstruct_by_correlation, "linear program"], [reconstruct_reference]),
    "10.3": ([7, 5, 100, "√n"], [10, "10", 10.0]),
    "10.4": ([0.01, 0.02, 0.0272, 0.866], [0.0739, "7.4%", 7.39, math.exp(2) * 0.01]),
    "11.1": ([0.8, 4, 0.6, math.log(0.8)], [1.386, "1.39", math.log(4), 1.4]),
    "11.2": ([0.4, 0.15, 0.6, 0.4 / 0.75], [0.3, "0.3", "30%", 0.15 / 0.5]),
    "11.3": ([rr_no_noise, rr_truth_when_uncertain, "randomized response"], [rr_reference]),
    "11.4": ([21.45, 2145, 67.8, 10], [214.5, "215", 210, 21.45 * 10]),
    "12.1": ([4, 1, 16, "4"], [2, "2", math.sqrt(4), 2.0]),
    "12.2": ([_gaussian_scaled(lambda s, v, e, d, l2: l2 / e), gaussian_shared_noise, "σ = 9.69"],
             [gaussian_reference]),
    "12.3": ([0.73, 1.0, 9.69, 2.0], [1.378, "1.38", 9.69 / 7.032, 1.4]),
    "12.4": (["a", "b", "smaller", "equal"], ["c", "(c)", "larger", " C "]),
    "12.5": ([10, 4, 5, 2], [3, "3", 3.0]),
    "13.1": ([0.05, 365, 1.0, 0.05 * math.sqrt(365)], [18.25, "18.25", 365 * 0.05, 18.3]),
    "13.2": ([lambda e, k, d: k * e, lambda e, k, d: k * e * e / 2, zcdp_total_calls_the_package, 5.76],
             [zcdp_total_reference, zcdp_total_numpy]),
    "13.3": ([10, 100, 1, 20], [35, "35", 34.5, 35.0]),
    "13.4": (["a", "b", "smaller", "about the same"], ["c", "(c)", "larger", " C"]),
    "14.1": ([2, 4, 16, "eight"], [8, "8", 8.0, 4 / 0.5]),
    "14.2": ([1001 * 0.5, 1.0, 0.0, 1001], [0.5, "0.5", 1 / 2]),
    "14.3": (["a", "b", "d", "no halting"], ["c", "(c)", "released value", " C "]),
    "14.4": ([_svt_variant(query_scale=2.0, halt=False), _svt_variant(query_scale=2.0), "AboveThreshold"],
             [above_threshold_reference]),
}
