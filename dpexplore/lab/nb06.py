"""Checks of notebook 06: Vinterbo's projected histograms (2012): the budget split (§2.10), the
greedy exponential-mechanism selection (Algorithm 1, Corollary 1) and the thresholded histogram
(§2.2–2.4, eq. 5).

Exercise 06.3 is graded by the package's privacy audit (:mod:`dpexplore.audit`): which cells the
student's release keeps, on two tables that differ by one record in an empty cell.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ._core import as_number, choice, close, exercise, numbers_close
from ._grading import event, flags_leak, within_claim


@lru_cache(maxsize=1)
def _iris_split() -> dict:
    """The ε split of ``ProjectedHistogram(epsilon=1.0, k=2, gamma=0.8)`` fitted on Iris."""
    from ..datasets import load_iris
    from ..publish.projected import ProjectedHistogram

    iris, schema = load_iris()
    X, y = schema.split(iris)
    model = ProjectedHistogram(epsilon=1.0, k=2, gamma=0.8, random_state=0, schema=schema).fit(X, y)
    return {"histogram": model.epsilon_split_["histogram"],
            "step": model.epsilon_split_["selection"] / model.k_}


@exercise("06.1",
          hint="Take the record count's share off first (the ledger's first row); γ = 0.8 of the rest "
               "goes to the histogram, 1 − γ to the selection, and the selection is split over the "
               "k = 2 steps.",
          why="the record count takes 0.05, so ε_h = 0.8·0.95 = 0.76 and ε_p = 0.2·0.95 = 0.19, i.e. "
              "ε_step = 0.095 for each of the two greedy picks.",
          wrong=[(0.8, 0.1), (0.76, 0.19), (0.095, 0.76), 0.76],
          right=[(0.76, 0.095), [0.76, 0.095], ("0.76", "0.095")])
def budget_split(answer) -> bool:
    split = _iris_split()
    return numbers_close(answer, [split["histogram"], split["step"]])


CHART_EPSILONS = (0.01, 0.05, 0.2, 1.0)   # the ε_p of notebook 06's chart of first picks


@lru_cache(maxsize=1)
def _first_reliable_epsilon() -> float:
    """The smallest ε_p of the chart at which the likeliest first pick has probability > 0.8."""
    from ..datasets import load_iris, train_test_split
    from ..mechanisms import exponential_probabilities
    from ..publish import projected as ph

    iris, schema = load_iris()
    X_train, _, y_train, _ = train_test_split(iris, schema, test_size=0.1, random_state=0)
    heuristic = ph.ProjectedHistogram(epsilon=1.0, random_state=0, schema=schema).fit(X_train, y_train)
    codes, _ = heuristic._codes(X_train, schema.predictors, heuristic.n_bins_)
    scores = ph.candidate_scores(codes, schema.encode_target(y_train), [])
    for eps_p in CHART_EPSILONS:   # one greedy step (k = 1) spends all of ε_p, Δ = 2
        if exponential_probabilities(scores, epsilon=eps_p, sensitivity=ph.score_sensitivity()).max() > 0.8:
            return eps_p
    return float("nan")


@exercise("06.2",
          hint="Go down the rows of the chart (ε_p = 0.01, 0.05, 0.2, 1) and stop at the first one where "
               "a single bar passes 0.8 of the first picks.",
          why="at ε_p = 0.2 the exponential mechanism already favours petal length's large discernibility "
              "gain; below it the noise still spreads the picks, even to attributes that discern nothing.",
          wrong=[0.01, 0.05, 1.0, "petal_length"], right=[0.2, "0.2", 0.20])
def reliable_first_pick(answer) -> bool:
    expected = _first_reliable_epsilon()
    return as_number(answer) in CHART_EPSILONS and close(answer, expected)


HISTOGRAM_EPSILON, HISTOGRAM_TAU = 1.0, 0.5
HISTOGRAM_SAMPLES, HISTOGRAM_SEED = 10_000, 606
TABLE = (0.0, 40.0)                       # counts of the two cells of D: the first cell is empty
NEIGHBOURS = ((1.0, 40.0),)               # D': one record added to the empty cell


def _audited(release):
    """``release`` as an audit mechanism: the set of kept cells as one event."""
    def kept(counts, rng):
        released = release(np.array(counts, dtype=float), HISTOGRAM_EPSILON, HISTOGRAM_TAU, rng)
        out = np.asarray(released, dtype=float)
        if out.shape != (len(counts),):
            raise ValueError("return one released count per cell")
        return event(out > 0)
    return kept


def _occupied_only(counts, epsilon, tau, rng):
    """The planted leak: noise on the occupied cells only (reveals which cells exist)."""
    counts = np.asarray(counts, dtype=float)
    noisy = counts + np.where(counts > 0, rng.laplace(0.0, 1.0 / epsilon, size=counts.size), 0.0)
    return np.where(noisy > tau, noisy, 0.0)


def _every_cell(counts, epsilon, tau, rng):
    """A right answer: Laplace(1/ε) on every cell of the domain, then the threshold."""
    noisy = np.asarray(counts, dtype=float) + rng.laplace(0.0, 1.0 / epsilon, size=len(counts))
    return np.where(noisy > tau, noisy, 0.0)


def _no_threshold(counts, epsilon, tau, rng):
    """Private, but keeps every cell: the empty ones flood the synthetic table."""
    return np.asarray(counts, dtype=float) + rng.laplace(0.0, 1.0 / epsilon, size=len(counts))


def _no_noise(counts, epsilon, tau, rng):
    """The exact counts above τ: not private at all."""
    counts = np.asarray(counts, dtype=float)
    return np.where(counts > tau, counts, 0.0)


@lru_cache(maxsize=1)
def _audit_catches_leak() -> bool:
    return flags_leak(_audited(_occupied_only), TABLE, NEIGHBOURS, HISTOGRAM_EPSILON,
                      n_samples=2_000, seed=HISTOGRAM_SEED)


def _useful(release) -> bool:
    """One seeded run on 1,000 cells: the cell of 500 kept within ±20, at most 60 empty cells kept."""
    counts = np.zeros(1000)
    counts[0] = 500.0
    out = np.asarray(release(counts, HISTOGRAM_EPSILON, 5.0, np.random.default_rng(HISTOGRAM_SEED)),
                     dtype=float)
    if out.shape != counts.shape:
        return False
    return bool(abs(out[0] - 500.0) < 20.0 and np.count_nonzero(out[1:] > 0) <= 60)


@exercise("06.3",
          hint="Every cell of the domain needs noise, the empty ones too: otherwise a cell that is kept "
               "proves someone is in it. One record changes one cell by 1, so Laplace(1/ε) on every "
               "count, then keep the cells above τ and return 0 for the others; use only rng.",
          why="noise on every cell of the public domain makes an empty cell look like one with a record "
              "up to a factor e^ε; the threshold is post-processing, so the release stays ε-DP.",
          wrong=[_occupied_only, _no_threshold, _no_noise, "Laplace"],
          right=[_every_cell],
          todo="write my_histogram(counts, epsilon, tau, rng) in the cell above (a def replacing the "
               "None), run it, then run this cell.")
def thresholded_histogram(answer) -> bool:
    if not callable(answer) or not _audit_catches_leak():
        return False
    return _useful(answer) and within_claim(_audited(answer), TABLE, NEIGHBOURS, HISTOGRAM_EPSILON,
                                            n_samples=HISTOGRAM_SAMPLES, seed=HISTOGRAM_SEED)


@exercise("06.4",
          hint="Write the empty cell's survival probability P(Laplace(Δ/ε_h) > A·ln(n)/ε_h) and see "
               "what happens to ε_h in it.",
          why="τ = A·ln(n)/ε_h grows exactly as fast as the noise scale Δ/ε_h, so ε_h cancels: "
              "P = ½·n^(−A/Δ) at every ε.",
          wrong=["a", "c", "grows"], right=["b", "(b)", "stays the same"])
def empty_cell_floor(answer) -> bool:
    from ..publish.projected import survival_probability

    small, large = (survival_probability(0.0, 135, eps, 0.5, 1.0) for eps in (0.1, 1.0))
    if np.isclose(small, large, rtol=1e-9):
        return choice(answer, "b", "stays the same")
    return choice(answer, *(("a", "grows") if small > large else ("c", "shrinks")))


@exercise("06.5",
          hint="Each empty cell survives with probability ½·n^(−A/Δ), whatever ε_h; multiply by the "
               "number of empty cells.",
          why="½·10,000^(−0.5) = 0.005 per empty cell, so about 100 of the 20,000 survive: every one a "
              "block of about τ + noise-scale fake records.",
          wrong=[0.005, 50, 10_000, 200], right=[100, "100", 100.0])
def surviving_empty_cells(answer) -> bool:
    from ..publish.projected import survival_probability

    return close(answer, 20_000 * survival_probability(0.0, 10_000, 1.0, 0.5, 1.0))
