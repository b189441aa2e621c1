"""Checks of notebook 04: private feature selection, DP Naive Bayes (the thesis's Algorithms 1
and 5) and DP logistic regression (Chaudhuri, Monteleoni & Sarwate 2011, Algorithms 1 and 2).

Expected values come from the package (the same functions the notebook calls) or from the stored
sweeps the notebook's charts draw (``notebooks/results/04_*.csv``).
"""
from __future__ import annotations

from functools import lru_cache

from ._core import choice, close, exercise, right_if
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


SCORE_NAMES = {"a": "the count score", "b": "mutual information", "c": "both", "d": "neither"}


@exercise("04.1", answer="flat_score",
          hints=("Look at the last column of section 2's table: the exponential mechanism concentrates only when "
                 "ε_FS·(range of the scores)/(2k·Δq) is large.",
                 "Compare each score's range with its sensitivity Δq: how many Δq apart are the best and the worst "
                 "feature?"),
          why="{score} gives nearly flat inclusion probabilities at ε_FS = 0.05: mutual information's scores span "
              "only a few of its sensitivities (ΔI ≈ log₂N/N), while the count score spans thousands of Δq = 1.")
def flat_selection(answer):
    letter = _flat_score_letter()
    return right_if(choice(answer, letter, SCORE_NAMES[letter]), score=SCORE_NAMES[letter].capitalize())


NB_EPSILON, SELECTION_SHARE, NB_FEATURES = 0.1, 0.4, 20     # 04.2's givens


@exercise("04.2", answer="b_nb",
          hints=("First find ε_NB, the share of the total ε left for training.",
                 "Then b = Δ/ε_NB, where Δ is the L1 sensitivity of the count vector: one record moves one count "
                 "per feature used."),
          why="ε_NB = {share:g}·{epsilon:g} = {eps_nb:g} and the count vector's L1 sensitivity is k = {k}, so "
              "b = {k}/{eps_nb:g} ≈ {b:.0f}.")
def naive_bayes_scale(answer):
    from ..mechanisms import laplace_scale

    eps_nb = NB_EPSILON * (1 - SELECTION_SHARE)
    b = laplace_scale(epsilon=eps_nb, sensitivity=NB_FEATURES)
    return right_if(close(answer, b), share=1 - SELECTION_SHARE, epsilon=NB_EPSILON, eps_nb=eps_nb, k=NB_FEATURES,
                    b=b)


_K_SUBSET, _ALL_FEATURES = "k-subset (count) k=10 + DP-NB", "DP-NB, all features"


@exercise("04.3", answer="better_at_eps_1",
          hints=("Find ε = 1 on the (log) x axis.",
                 "Compare the two DP-NB lines there, not the logistic regression or the baselines."),
          why="at ε = 1 {winner} {verb} a private selection of 10{reason}")
def better_at_eps_1(answer):
    sweep = read_results("04_accuracy_epsilon.csv")
    at_1 = sweep[sweep["epsilon"] == 1.0].set_index("pipeline")["median"]
    if at_1[_ALL_FEATURES] > at_1[_K_SUBSET]:
        return right_if(choice(answer, "b", "all features"), winner="all features", verb="beat",
                        reason=": the noise D/ε_NB is small against Adult's counts, so selection only throws away "
                               "signal (the thesis's Fig. 3.17).")
    return right_if(choice(answer, "a", "k-subset"), winner="the k-subset selection", verb="beats",
                    reason=" over all features: fewer features, less noise per count.")


@exercise("04.4", answer="lambda_star",
          hints=("The cliff is where ε_obj, the budget objective perturbation has left, reaches 0 (section 9).",
                 "λ* = c/(e^(ε/2) − 1) with c = 1/4 for the logistic loss; mind the ε/2 in the exponent."),
          why="λ* = 0.25/(e^{half:g} − 1) ≈ {lam:.2f}: twice the budget moves the cliff to about half the λ.")
def lambda_star(answer):
    from ..models.logistic import objective_branch_boundary

    lam = objective_branch_boundary(0.2)
    return right_if(close(answer, lam), half=0.1, lam=lam)


@exercise("04.5", answer="worst_lambda",
          hints=("Follow the objective-perturbation line from left to right.",
                 "Find the λ of the grid where it dips lowest; the grid points are 0.01, 0.1, 1, 3, 5, 7, 10, 30, …"),
          why="λ = {lam:g} is the first grid point just above λ* = {cliff:.3f}: ε_obj is nearly 0 there, so the noise "
              "vector is huge — the λ cliff.")
def worst_lambda(answer):
    from ..models.logistic import objective_branch_boundary

    sweep = read_results("04_accuracy_lambda.csv")
    objective = sweep[sweep["pipeline"] == "objective perturbation"]
    lam = float(objective.loc[objective["median"].idxmin(), "lam"])
    return right_if(close(answer, lam), lam=lam, cliff=objective_branch_boundary(0.1))
