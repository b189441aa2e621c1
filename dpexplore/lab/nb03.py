"""Checks of notebook 03 (DiffMulti: private split points and a partition tree)."""
from __future__ import annotations

import math

import numpy as np

from ._core import as_probability, choice, close, exercise, not_yet, right_if, write_function
from ._grading import Refusal, guarded_call

# The paper's Example 4.5 (Al-Hussaeni et al., §4): six years of birth in [1930, 1999) and their classes.
TOY_YOB = np.array([1947, 1953, 1955, 1957, 1959, 1968])
TOY_CLASS = np.array([0, 0, 1, 1, 1, 0])
BATTERY_SEED = 303


def _toy_pieces():
    """Edges of the seven pieces of Example 4.5 and their Max scores."""
    from ..publish.diffmulti import split_utilities
    edges, left, total = split_utilities(TOY_YOB, TOY_CLASS, 2, 1930, 1999, integer=False)
    return edges, left.max(axis=1) + (total - left).max(axis=1)


N_NUMERIC, N_CUTS, EPSILON_03_3 = 6, 62, 2.0      # 03.3's givens: |A_num|, |g| and ε on Adult


@exercise("03.3", answer="eps_op",
          hints=("Half of ε pays for the partitioning; the longest path of the tree decides how many operations "
                 "share that half.",
                 "ε_op = ε / (2(|A_num| + 3|g|)): |A_num| split points at the root and three operations per "
                 "level of a path."),
          why="{epsilon:g} / (2 × ({numeric} + 3 × {cuts})) = {epsilon:g}/{denominator} ≈ {eps_op:.2g}: each "
              "single operation of the tree gets a tiny share of ε.")
def epsilon_op(answer):
    # Al-Hussaeni et al., Algorithm 1 line 4: ε' = ε / (2(|A_num| + 3|g|))
    denominator = 2 * (N_NUMERIC + 3 * N_CUTS)
    value = EPSILON_03_3 / denominator
    return right_if(close(answer, value, rel=0.01), epsilon=EPSILON_03_3, numeric=N_NUMERIC, cuts=N_CUTS,
                    denominator=denominator, eps_op=value)


@exercise("03.2", answer="p_best_piece",
          hints=("The chart's y-axis is a density: probability per year of the split point, not per piece.",
                 "In the top panel (ε_op = 4), read the height over the best piece [1953, 1955) (score 5) and "
                 "multiply it by the piece's length in years."),
          why="at ε_op = 4 the best piece gets only about {percent:.0f} %: it is short ({length:g} years), and the "
              "mechanism weights every piece by its length × exp(ε_op·score/2).")
def best_piece_share(answer):
    from ..mechanisms import exponential_interval_probabilities
    edges, scores = _toy_pieces()
    best = int(np.argmax(scores))
    p = exponential_interval_probabilities(edges, scores, epsilon=4.0, sensitivity=1)[best]
    return right_if(abs(as_probability(answer) - p) <= 0.03,       # read off a chart: ± 3 points
                    percent=100 * p, length=float(edges[best + 1] - edges[best]))


def _piece_cases() -> list[tuple]:
    """Example 4.5 at three ε, then pieces generated when the check runs: 2 to 40 pieces over
    ranges from 1 to 10^5, some pieces 10^4 times shorter than others, integer scores up to a
    few hundred and ε from 0.001 to 3 (ε·score/2 stays below 400: no overflow without the shift).
    Each case is (label, edges, scores, ε)."""
    edges, scores = _toy_pieces()
    cases = [(f"Example 4.5 at ε = {e:g}", edges, scores, e) for e in (4.0, 1.0, 0.003)]
    rng = np.random.default_rng(BATTERY_SEED)
    for _ in range(25):
        k = int(rng.integers(2, 41))
        lo, span = float(rng.uniform(-1_000, 2_000)), float(10 ** rng.uniform(0, 5))
        lengths = 10 ** rng.uniform(-4, 0, size=k)
        cuts = lo + span * np.concatenate([[0.0], np.cumsum(lengths) / lengths.sum()])
        epsilon = float(10 ** rng.uniform(-3, math.log10(3)))
        top = int(min(400, 2 * 400 / epsilon))
        cases.append((f"{k} pieces over [{cuts[0]:.6g}, {cuts[-1]:.6g}] at ε = {epsilon:.3g}", cuts,
                      rng.integers(0, top + 1, size=k).astype(float), epsilon))
    return cases


def _fine_probabilities(edges, scores, epsilon):
    """The continuous mechanism's probabilities, from the package on a lattice fine enough that each
    piece's number of points is its length to within 10^-6 (the finest lattice whose points are
    distinct numbers)."""
    from ..mechanisms import exponential_interval_probabilities
    finest = 4 * float(np.spacing(np.max(np.abs(edges))))
    resolution = 2.0 ** max(math.floor(math.log2((edges[-1] - edges[0]) / 2 ** 40)), math.ceil(math.log2(finest)))
    return exponential_interval_probabilities(edges, scores, epsilon=epsilon, sensitivity=1, resolution=resolution)


@exercise("03.1", answer="piece_probabilities",
          hints=("The continuous exponential mechanism picks a point of the range; a piece collects the "
                 "probability of all its points.",
                 "Each piece gets the weight length × exp(ε·score/(2Δ)) with Δ = 1, and the weights are divided "
                 "by their sum. Subtracting the largest score before exp avoids overflow."),
          why="your probabilities match the continuous exponential mechanism on Example 4.5 and on {cases} "
              "generated sets of pieces: weighting by length makes every point of the public range a "
              "candidate.",
          todo=write_function("piece_probabilities(edges, scores, epsilon)"))
def piece_probabilities(answer):
    if not callable(answer):
        return not_yet("give a function (a def), not its result.")
    cases = _piece_cases()
    for label, edges, scores, epsilon in cases:
        expected = _fine_probabilities(edges, scores, epsilon)
        try:
            got = guarded_call(answer, (np.array(edges, dtype=float), np.array(scores, dtype=float), epsilon))
        except Refusal as refusal:
            return not_yet(str(refusal))
        got = np.asarray(got, dtype=float)
        if got.shape != expected.shape:
            return not_yet(f"on {label}, return one probability per piece ({expected.size}), got shape {got.shape}.")
        if not np.isclose(got.sum(), 1.0, rtol=1e-6):
            return not_yet(f"on {label}, your probabilities sum to {got.sum():.4g}, not 1.")
        if not np.allclose(got, expected, rtol=1e-6, atol=1e-12):
            return not_yet(f"on {label}, your probabilities differ from the continuous exponential mechanism's.")
    return right_if(True, cases=len(cases) - 3)


@exercise("03.4", answer="more_cuts",
          hints=("Between h = 1,000 and h = 10,000 two forces act: name them before you predict.",
                 "More cuts can separate the classes better, but each late cut is chosen with the same tiny ε_op "
                 "on fewer records, and the leaves' counts get smaller next to their noise."),
          why="{trend}")
def plateau(answer):
    labels, trend = _h_trend()
    return right_if(choice(answer, *labels), trend=trend)


def _h_trend() -> tuple[tuple[str, ...], str]:
    """What the stored sweep shows from h = 1,000 to 10,000: a change beyond the larger run-to-run
    standard deviation is a rise (a) or a fall (c); anything smaller is the plateau (b)."""
    from ._stored import read_results
    runs = read_results("03_diffmulti_accuracy.csv")
    by_h = runs[(runs["sweep"] == "h") & (runs["method"] == "DiffMulti")].groupby("h")["accuracy"]
    mean, std = by_h.mean(), by_h.std()
    change, spread = mean[10_000] - mean[1_000], max(std[10_000], std[1_000])
    if change > spread:
        return ("a", "rises"), "more cuts win: the accuracy rises beyond its run-to-run spread."
    if change < -spread:
        return ("c", "collapses", "falls"), "the noise wins: the accuracy falls beyond its run-to-run spread."
    return (("b", "plateau", "stays", "stays on a plateau"),
            "the two forces cancel: the late cuts are nearly random and the fair allocation sends them to the "
            "dense regions, so the accuracy stays on its plateau.")
