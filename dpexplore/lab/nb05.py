"""Checks of notebook 05: PriROC (Stoddard, Chen & Machanavajjhala 2014, Algorithms 3 and 4),
Privelet (Xiao, Wang & Gehrke 2011) and the audit of Private Threshold Testing (their Algorithm 2).

Exercise 05.5 is graded by the package's privacy audit (:mod:`dpexplore.audit`) on the
counterexample pair of :func:`dpexplore.select.stoddard.ptt_counterexample` and on a second pair
where the added record has both features on (rows have at most s = 2 ones).
"""
from __future__ import annotations

import warnings
from functools import lru_cache

import numpy as np

from ._core import choice, close, exercise
from ._grading import event, flags_leak, within_claim

AUDIT_EPSILON = 1.0
AUDIT_THRESHOLD = 5.5
AUDIT_SAMPLES = 10_000          # runs per side (plus a pilot of a quarter): under a second per pair
LEAK_SAMPLES = 2_000            # PTT's leak is an impossible output: a small audit finds it
AUDIT_SEED = 505
TC_D = (5.0, 5.0)               # D: five records with both features on
TC_NEIGHBOURS = ((6.0, 5.0),    # D': one more record with only F1 on (the paper's counterexample)
                 (6.0, 6.0))    # D'': one more record with both features on (s = 2)


@exercise("05.1",
          hint="RecursiveMedians gets 20 % of ε, and 2^k bins need k levels; the medians of one level "
               "split disjoint parts, so each level costs its share once.",
          why="ε1 = 0.2·2 = 0.4 is spread over k = log₂ 32 = 5 levels: ε_level = 0.08.",
          wrong=[0.4, 0.0125, 0.0625, "0.8"], right=[0.08, "0.08", 0.4 / 5])
def level_budget(answer) -> bool:
    from ..evaluate.roc import private_roc_curve

    # the package's own ledger of such a release (on public toy scores: the spends are public)
    labels, scores = np.tile([0, 1], 20), np.linspace(0.0, 1.0, 40)
    ledger = private_roc_curve(labels, scores, epsilon=2.0, n_thresholds=32, classes=[0, 1],
                               random_state=0).attrs["ledger"]
    level = ledger[ledger["label"].str.contains("level 1 of")]
    return close(answer, float(level["epsilon"].iloc[0]))


@exercise("05.2",
          hint="Laplace scale = sensitivity/ε, and Privelet's generalised sensitivity for m bins is "
               "1 + log₂ m (not m).",
          why="(1 + log₂ 1024)/0.4 = 11/0.4 = 27.5 on the weighted coefficients, instead of the m/ε "
              "a release of every prefix sum at once would need.",
          wrong=[11, 2560, 25, 0.4 / 11], right=[27.5, "27.5", 11 / 0.4])
def privelet_scale(answer) -> bool:
    from ..evaluate.roc import privelet_sensitivity
    from ..mechanisms import laplace_scale

    return close(answer, laplace_scale(epsilon=0.4, sensitivity=privelet_sensitivity(1024)))


@exercise("05.3",
          hint="Look at the left end of the chart (ε = 0.1), or the first column of the table under it.",
          why="LaplaceROC puts noise of scale (2t + 1)/ε = 210 on every count at ε = 0.1, and its "
              "11-point curve adds discretisation error; PriROC's Privelet noise grows only with log m.",
          wrong=["b", "c", "PriROC FixedSpace"], right=["a", "(a)", "LaplaceROC"])
def worst_method(answer) -> bool:
    return choice(answer, "a", "LaplaceROC", "LaplaceROC (t = 10)")


@exercise("05.4",
          hint="Find an output that one of the two datasets can produce and the other never can; what "
               "does the likelihood ratio of such an output do to any ε?",
          why="\"F1 selected, F2 not\" has probability 0 on D and about 0.39 on D': an unbounded "
              "privacy loss, which the audit detects for any claimed ε.",
          wrong=["a", "(A)", "passes"], right=["b", " b ", "refuted"])
def ptt_verdict(answer) -> bool:
    from ..select.stoddard import ptt_counterexample

    example = ptt_counterexample()
    refuted = example["p"] == 0.0 < example["p_neighbour"] or example["p_neighbour"] == 0.0 < example["p"]
    return choice(answer, *(("b", "refuted") if refuted else ("a", "passes")))


def _audited(selector):
    """``selector`` as an audit mechanism on TC scores: the selected set as one event."""
    def release(tc, rng):
        chosen = selector(np.array(tc, dtype=float), AUDIT_THRESHOLD, AUDIT_EPSILON, rng)
        if np.shape(chosen) != (len(tc),):
            raise ValueError("return one True/False per feature")
        return event(chosen)
    return release


def _ptt(tc, threshold, epsilon, rng):
    """The planted leak: PTT as the package ships it (noise on the threshold only)."""
    from ..select.stoddard import NotDifferentiallyPrivateWarning, private_threshold_testing

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotDifferentiallyPrivateWarning)
        return private_threshold_testing(tc, threshold, epsilon=epsilon, random_state=rng)


@lru_cache(maxsize=1)
def _audit_catches_ptt() -> bool:
    return flags_leak(_audited(_ptt), TC_D, TC_NEIGHBOURS, AUDIT_EPSILON,
                      n_samples=LEAK_SAMPLES, seed=AUDIT_SEED)


def _useful(selector) -> bool:
    """Keeps TC = 30 and drops TC = 0 at τ = 15 in at least 90 % of 400 seeded runs at ε = 1."""
    rng = np.random.default_rng(AUDIT_SEED)
    hits = sum(event(selector(np.array([30.0, 0.0]), 15.0, AUDIT_EPSILON, rng)) == "10" for _ in range(400))
    return hits >= 360


@exercise("05.5",
          hint="Noise on the threshold alone leaves the exact order of the scores visible. Add Laplace "
               "noise to every score, scaled to how much one record can move the whole score vector "
               "(L1 sensitivity: each score by at most 1, and at most s = 2 of them), then compare "
               "with τ; use only rng.",
          why="every noisy score Q + Lap(s/ε) is compared with τ: score perturbation, ε-DP because the "
              "TC vector has L1 sensitivity s = 2; the audit stays within ε = 1 on both pairs and "
              "catches PTT on the same pairs.",
          wrong=[lambda tc, t, e, rng: np.asarray(tc) >= t + rng.laplace(0.0, 1.0 / e),          # PTT
                 lambda tc, t, e, rng: np.asarray(tc) + rng.laplace(0.0, 1.0 / e, len(tc)) > t,   # Δ = 1
                 lambda tc, t, e, rng: np.zeros(len(tc), dtype=bool),                             # useless
                 "score perturbation"],
          right=[lambda tc, t, e, rng: np.asarray(tc) + rng.laplace(0.0, 2.0 / e, len(tc)) > t],
          todo="write my_selector(tc, threshold, epsilon, rng) in the cell above (a def replacing the "
               "None), run it, then run this cell.")
def repaired_ptt(answer) -> bool:
    if not callable(answer) or not _audit_catches_ptt():
        return False
    return _useful(answer) and within_claim(_audited(answer), TC_D, TC_NEIGHBOURS, AUDIT_EPSILON,
                                            n_samples=AUDIT_SAMPLES, seed=AUDIT_SEED)
