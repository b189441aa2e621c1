"""Checks of notebook 04: private feature selection, DP Naive Bayes (the thesis's Algorithms 1
and 5) and DP logistic regression (Chaudhuri, Monteleoni & Sarwate 2011, Algorithms 1 and 2).

Expected values come from the package (the same functions the notebook calls) or from the stored
sweeps the notebook's charts draw (``notebooks/results/04_*.csv``).
"""
from __future__ import annotations

from functools import lru_cache

from ._core import choice, close, exercise
from ._stored import read_results

FLAT_RATIO = 3.0
"""Selection probabilities are "nearly flat" when the likeliest feature is picked at most this many
times as often as the least likely one."""


@lru_cache(maxsize=1)
def _flat_score_letter() -> str:
    """Which score gives nearly flat k-subset inclusion probabilities in notebook 04, section 3
    (ε_FS = 0.05, k = 10; thesis Algorithm 5): "a" count, "b" MI, "c" both, "d" neither."""
    import numpy as np

    from ..datasets import load_adult, train_test_split
    from ..mechanisms import exponential_subset_inclusion
    from ..models.naive_bayes import Binarizer
    from ..select.scores import information_gain, mutual_information_sensitivity, purity_index

    frame, schema = load_adult()
    X_tr, _, y_tr, _ = train_test_split(frame, schema, test_size=1 / 3, random_state=0)
    binary = Binarizer(schema).fit().transform(X_tr)
    y = (y_tr == schema.classes[1]).astype(int).to_numpy()
    flat = []
    scored = [(purity_index(binary, y), 1.0),
              (information_gain(binary, y, base=2), mutual_information_sensitivity(30_000, base=2))]
    for scores, sensitivity in scored:
        p = exponential_subset_inclusion(scores, 10, epsilon=0.05, sensitivity=10 * sensitivity)
        flat.append(bool(p.max() <= FLAT_RATIO * p.min()))
    return {(True, True): "c", (True, False): "a", (False, True): "b", (False, False): "d"}[tuple(flat)]


@exercise("04.1",
          hint="Look at the last column of section 2's table: the exponential mechanism only concentrates "
               "when ε_FS·(range of the scores)/(2k·Δq) is large, and flattens when it is close to 0.",
          why="mutual information's scores span only a few of its sensitivities (ΔI ≈ log₂N/N), so at "
              "ε_FS = 0.05 every subset gets almost the same weight; the count score spans thousands "
              "of Δq = 1.",
          wrong=["a", "c", "count score", "d"], right=["b", " B ", "(b)", "mutual information"])
def flat_selection(answer) -> bool:
    letter = _flat_score_letter()
    label = {"a": "count score", "b": "mutual information"}.get(letter, letter)
    return choice(answer, letter, label)


@exercise("04.2",
          hint="First find ε_NB, the share of the total ε left for training; then b = Δ/ε_NB, where Δ "
               "is the L1 sensitivity of the count vector: one record moves one count per feature used.",
          why="ε_NB = 0.6·0.1 = 0.06 and the count vector's L1 sensitivity is k = 20, so "
              "b = 20/0.06 ≈ 333.",
          wrong=[500, 200, 1 / 0.06, "a lot"], right=[333.33, "333.3", 1000 / 3])
def naive_bayes_scale(answer) -> bool:
    from ..mechanisms import laplace_scale

    return close(answer, laplace_scale(epsilon=0.1 * (1 - 0.4), sensitivity=20))


_K_SUBSET, _ALL_FEATURES = "k-subset (count) k=10 + DP-NB", "DP-NB, all features"


@exercise("04.3",
          hint="Find ε = 1 on the (log) x axis and compare the two DP-NB lines there, not the "
               "logistic regression or the baselines.",
          why="at ε = 1 the noise D/ε_NB is small against Adult's counts, so all features beat a private "
              "selection of 10: selection then only throws away signal (the thesis's Fig. 3.17).",
          wrong=["a", "k-subset", "c"], right=["b", "(B)", "all features"])
def better_at_eps_1(answer) -> bool:
    sweep = read_results("04_accuracy_epsilon.csv")
    at_1 = sweep[sweep["epsilon"] == 1.0].set_index("pipeline")["median"]
    if at_1[_ALL_FEATURES] > at_1[_K_SUBSET]:
        return choice(answer, "b", "all features")
    return choice(answer, "a", "k-subset")


@exercise("04.4",
          hint="λ* = c/(e^(ε/2) − 1) with c = 1/4 for the logistic loss (section 9); mind the ε/2 "
               "in the exponent.",
          why="λ* = 0.25/(e^0.1 − 1) ≈ 2.38: twice the budget moves the cliff to about half the λ.",
          wrong=[4.876, 2.5, 0.25 / 0.2214, "5"], right=[2.379, "2.38", 0.25 / 0.10517])
def lambda_star(answer) -> bool:
    from ..models.logistic import objective_branch_boundary

    return close(answer, objective_branch_boundary(0.2))


@exercise("04.5",
          hint="Follow the objective-perturbation line from left to right and find the λ of the grid "
               "where it dips lowest; the grid points are 0.01, 0.1, 1, 3, 5, 7, 10, 30, …",
          why="λ = 5 is the first grid point just above λ* = 4.876: ε_obj is nearly 0 there, so the "
              "noise vector is huge — the λ cliff.",
          wrong=[0.01, 4.876, 10_000, 7], right=[5, "5", 5.0])
def worst_lambda(answer) -> bool:
    sweep = read_results("04_accuracy_lambda.csv")
    objective = sweep[sweep["pipeline"] == "objective perturbation"]
    return close(answer, float(objective.loc[objective["median"].idxmin(), "lam"]))
