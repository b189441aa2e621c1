"""Checks of notebook 03 (DiffMulti: private split points and a partition tree)."""
from __future__ import annotations

import numpy as np

from ._core import as_number, choice, close, exercise

# The paper's Example 4.5 (Al-Hussaeni et al., §4): six years of birth in [1930, 1999) and their classes.
TOY_YOB = np.array([1947, 1953, 1955, 1957, 1959, 1968])
TOY_CLASS = np.array([0, 0, 1, 1, 1, 0])


def _toy_pieces():
    """Edges of the seven pieces of Example 4.5 and their Max scores."""
    from ..publish.diffmulti import split_utilities
    edges, left, total = split_utilities(TOY_YOB, TOY_CLASS, 2, 1930, 1999, integer=False)
    return edges, left.max(axis=1) + (total - left).max(axis=1)


@exercise("03.3", hint="ε_op = ε / (2(|A_num| + 3|g|)): half of ε pays for the partitioning, spread over "
                       "|A_num| split points at the root and three operations per level of a path.",
          why="2 / (2 × (6 + 3 × 62)) = 2/384 ≈ 0.0052: each single operation of the tree gets a tiny "
              "share of ε.",
          wrong=[2 / 192, 1 / 384, 2 / 68, 0.5], right=[2 / 384, "0.0052", 0.00521])
def epsilon_op(answer) -> bool:
    # Al-Hussaeni et al., Algorithm 1 line 4: ε' = ε / (2(|A_num| + 3|g|))
    return close(answer, 2.0 / (2 * (6 + 3 * 62)), rel=0.01)


@exercise("03.2", hint="In the top panel (ε_op = 4) find the piece [1953, 1955), the best cut (score 5), "
                       "and read the probability the mechanism gives to the whole piece.",
          why="at ε_op = 4 the best piece gets only about 38 %: it is short (2 years), and the mechanism "
              "weights every piece by its length × exp(ε_op·score/2).",
          wrong=[1.0, 0.9, 0.06, 0.45], right=[0.383, "0.38", 38, 0.4])
def best_piece_share(answer) -> bool:
    from ..mechanisms import exponential_interval_probabilities
    edges, scores = _toy_pieces()
    best = int(np.argmax(scores))
    p = exponential_interval_probabilities(edges, scores, epsilon=4.0, sensitivity=1)[best]
    value = as_number(answer)
    value = value / 100 if value > 1 else value
    return abs(value - p) <= 0.03                              # read off a chart: ± 3 points


def _length_weighted(edges, scores, epsilon):
    w = np.diff(edges) * np.exp(epsilon * (np.asarray(scores) - np.max(scores)) / 2)
    return w / w.sum()


def _length_ignored(edges, scores, epsilon):
    w = np.exp(epsilon * np.asarray(scores, dtype=float) / 2)
    return w / w.sum()


def _no_half(edges, scores, epsilon):
    w = np.diff(edges) * np.exp(epsilon * np.asarray(scores, dtype=float))
    return w / w.sum()


def _unnormalised(edges, scores, epsilon):
    return np.diff(edges) * np.exp(epsilon * np.asarray(scores, dtype=float) / 2)


@exercise("03.1", hint="Each piece gets the weight length × exp(ε·score/(2Δ)) with Δ = 1, and the weights "
                       "are divided by their sum. Subtracting the largest score before exp avoids overflow.",
          why="your probabilities match the continuous exponential mechanism on Example 4.5 and on random "
              "pieces: weighting by length makes every point of the public range a candidate.",
          todo="write piece_probabilities(edges, scores, epsilon) in the cell above, run it, then run this cell.",
          wrong=[_length_ignored, _no_half, _unnormalised, np.diff], right=[_length_weighted])
def piece_probabilities(answer) -> bool:
    from ..mechanisms import exponential_interval_probabilities
    rng = np.random.default_rng(3)
    edges, scores = _toy_pieces()
    cases = [(edges, scores, e) for e in (4.0, 1.0, 0.003)]
    for _ in range(3):
        cut = np.sort(rng.uniform(0, 100, size=6))
        cases.append((np.concatenate([[0.0], cut, [100.0]]), rng.integers(0, 20, size=7).astype(float),
                      float(rng.uniform(0.01, 3))))
    for e, s, eps in cases:
        expected = exponential_interval_probabilities(e, s, epsilon=eps, sensitivity=1)
        got = np.asarray(answer(np.array(e, dtype=float), np.array(s, dtype=float), eps), dtype=float)
        # the package counts the points of a fine public grid in each piece (length / resolution,
        # up to one point), hence a relative tolerance of 1e-3
        if got.shape != expected.shape or not np.allclose(got, expected, rtol=1e-3, atol=1e-6):
            return False
    return True


@exercise("03.4", hint="Between h = 1,000 and h = 10,000 two forces act: more cuts can separate the classes "
                       "better, but each late cut is chosen with the same tiny ε_op on fewer records, and the "
                       "leaves' counts get smaller next to their noise.",
          why="the two forces cancel: the late cuts are nearly random and the fair allocation sends them to "
              "the dense regions, so the accuracy stays on its plateau.",
          wrong=["a", "c", "rises", "collapses"], right=["b", " b ", "plateau", "(b)"])
def plateau(answer) -> bool:
    return choice(answer, *_h_trend_labels())


def _h_trend_labels() -> tuple[str, ...]:
    """What the stored sweep shows from h = 1,000 to 10,000: a change beyond the larger run-to-run
    standard deviation is a rise (a) or a fall (c); anything smaller is the plateau (b)."""
    from ._stored import read_results
    runs = read_results("03_diffmulti_accuracy.csv")
    by_h = runs[(runs["sweep"] == "h") & (runs["method"] == "DiffMulti")].groupby("h")["accuracy"]
    mean, std = by_h.mean(), by_h.std()
    change, spread = mean[10_000] - mean[1_000], max(std[10_000], std[1_000])
    if change > spread:
        return ("a", "rises")
    if change < -spread:
        return ("c", "collapses", "falls")
    return ("b", "plateau", "stays", "stays on a plateau")
