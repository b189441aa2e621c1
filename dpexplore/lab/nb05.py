"""Checks of notebook 05: PriROC (Stoddard, Chen & Machanavajjhala 2014, Algorithms 3 and 4),
Privelet (Xiao, Wang & Gehrke 2011) and the audit of Private Threshold Testing (their Algorithm 2).

Exercise 05.5 (repair PTT) is graded by :func:`dpexplore.lab._grading.grade_mechanism`: the
student's selector against score perturbation (Laplace noise on every TC score, then the threshold)
on a battery of TC vectors, and the privacy audit on neighbouring pairs, among them the
counterexample of :func:`dpexplore.select.stoddard.ptt_counterexample`.
"""
from __future__ import annotations

import warnings

import numpy as np

from ._core import choice, close, exercise, right_if, right_option, write_function
from ._grading import AuditPlan, Case, Refusal, event, grade_mechanism


@exercise("05.1", answer="eps_level",
          hints=("First find RecursiveMedians' share of ε, then how many levels of medians 32 bins need.",
                 "RecursiveMedians gets 20 % of ε, and 2^k bins need k levels; the medians of one level "
                 "split disjoint parts, so each level costs its share once."),
          why="ε1 = 0.2·2 = {eps1:g} is spread over k = log₂ 32 = {levels} levels: ε_level = {level:g}.")
def level_budget(answer):
    from ..evaluate.roc import private_roc_curve

    # the package's own ledger of such a release (on public toy scores: the spends are public)
    labels, scores = np.tile([0, 1], 20), np.linspace(0.0, 1.0, 40)
    ledger = private_roc_curve(labels, scores, epsilon=2.0, n_thresholds=32, classes=[0, 1],
                               random_state=0).attrs["ledger"]
    level = ledger[ledger["label"].str.contains("level ")]
    value = float(level["epsilon"].iloc[0])
    return right_if(close(answer, value), eps1=float(level["epsilon"].sum()), levels=len(level), level=value)


@exercise("05.2", answer="privelet_scale",
          hints=("Laplace scale = sensitivity/ε: what is the sensitivity of Privelet's weighted "
                 "coefficients?",
                 "Privelet's generalised sensitivity for m bins is 1 + log₂ m (not m)."),
          why="(1 + log₂ 1024)/0.4 = {sensitivity:g}/0.4 = {scale:g} on the weighted coefficients, instead "
              "of the m/ε a release of every prefix sum at once would need.")
def privelet_scale(answer):
    from ..evaluate.roc import privelet_sensitivity
    from ..mechanisms import laplace_scale

    sensitivity = privelet_sensitivity(1024)
    scale = laplace_scale(epsilon=0.4, sensitivity=sensitivity)
    return right_if(close(answer, scale), sensitivity=sensitivity, scale=scale)


ROC_METHODS = {"a": "LaplaceROC (t = 10)", "b": "PriROC FixedSpace", "c": "PriROC RecursiveMedians"}
_WORST_METHOD = ("2aa1a24a17ab67faf6902a08", "3f583d55957b40743786c72a", "bb836774d4121faab1980d20")


@exercise("05.3", answer="worst_method",
          hints=("Look at the left end of the chart (ε = 0.1), or the first column of the table under it.",
                 "Compare how much noise each method puts on one count at ε = 0.1: which one pays for every "
                 "threshold at once?"),
          why="{method}: LaplaceROC puts noise of scale (2t + 1)/ε = {scale:g} on every count at ε = 0.1, and "
              "its 11-point curve adds discretisation error; PriROC's Privelet noise grows only with log m.")
def worst_method(answer):
    from ..mechanisms import laplace_scale

    method = right_option(answer, "05.3", _WORST_METHOD, ROC_METHODS)
    return right_if(method is not None, method=method, scale=laplace_scale(epsilon=0.1, sensitivity=2 * 10 + 1))


@exercise("05.4", answer="ptt_verdict",
          hints=("Find an output that one of the two datasets can produce and the other never can.",
                 "What does the likelihood ratio of an output that has probability 0 on one side do to "
                 "any ε?"),
          why="\"F1 selected, F2 not\" has probability 0 on D and about {q:.2f} on D': an unbounded privacy "
              "loss, which the audit detects for any claimed ε.")
def ptt_verdict(answer):
    from ..select.stoddard import ptt_counterexample

    example = ptt_counterexample()
    refuted = example["p"] == 0.0 < example["p_neighbour"] or example["p_neighbour"] == 0.0 < example["p"]
    return right_if(choice(answer, *(("b", "refuted") if refuted else ("a", "passes"))),
                    q=max(example["p"], example["p_neighbour"]))


# --------------------------------------------------------------------------- 05.5: a graded mechanism
EPSILON, THRESHOLD = 1.0, 5.5      # the notebook's audit: ε = 1, τ = 5.5
ROW_ONES = 2                       # s: a record has at most two ones, so it moves at most two scores by 1
BATTERY_SEED, AUDIT_SEED = 505, 506


def _ptt(tc, threshold, epsilon, rng):
    """The planted leak: PTT as the package ships it (noise on the threshold only)."""
    from ..select.stoddard import NotDifferentiallyPrivateWarning, private_threshold_testing

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotDifferentiallyPrivateWarning)
        return private_threshold_testing(tc, threshold, epsilon=epsilon, random_state=rng)


def _selections(output, m: int) -> np.ndarray:
    selected = np.asarray(output)
    if selected.shape != (m,) or not np.all((selected == 0) | (selected == 1)):
        raise Refusal(f"return one True/False per feature ({m} here), got {str(output)[:60]}.")
    return selected.astype(bool)


def _selector_case(tc, threshold: float, epsilon: float, draws: int) -> Case:
    """TC scores, τ and ε: the reference selects feature i when tc_i + L_i > τ, with independent
    L_i ~ Laplace(s/ε): one category per outcome, edge (τ − tc_i)/b."""
    tc = np.asarray(tc, dtype=float)
    b = ROW_ONES / epsilon
    rows = np.array([[-np.inf, min(max((threshold - t) / b, -40.0), 40.0), np.inf] for t in tc])

    def decode(output) -> np.ndarray:
        return np.where(_selections(output, tc.size), np.inf, -np.inf)

    def describe(unit: int, k: int) -> str:
        return "was selected" if k == 1 else "was not selected"

    label = (f"{tc.size} features with TC scores from {tc.min():,.0f} to {tc.max():,.0f} (sum {tc.sum():,.0f}), "
             f"τ = {threshold:g}, ε = {epsilon:g}")
    return Case(label, lambda: (tc.copy(), threshold, epsilon), decode, rows, tc, int(tc.sum()), draws,
                describe, unit_names=[f"a feature with TC = {t:,.0f}" for t in tc])


def _selector_battery() -> list[Case]:
    """Generated when the check runs: TC vectors whose scores sit within ±5 noise scales of τ (where a
    selection carries most information about the scale), at several ε and τ; tiny vectors (sums of
    12 or less, like the notebook's D and D'); vectors with a score of 20 or more, with zeros near a
    small τ, and with up to 300 features and scores up to 10^4."""
    rng = np.random.default_rng(BATTERY_SEED)
    cases = []
    for epsilon, threshold in ((1.0, 5.5), (0.5, 20.0), (2.0, 100.5), (1.0, 1000.0), (0.25, 60.0),
                               (1.0, 30.5), (2.0, 8.0), (0.5, 250.0)):
        b = ROW_ONES / epsilon
        tc = np.maximum(0, np.round(threshold + b * rng.uniform(-5, 5, size=24)))
        cases.append(_selector_case(tc, threshold, epsilon, 1_500))
    for tc, threshold in (((5, 5), 5.5), ((6, 5), 5.5), ((6, 6), 5.5), ((2, 3, 1, 0), 2.0), ((4, 4, 4), 3.5)):
        cases.append(_selector_case(tc, threshold, 1.0, 1_000))
    for tc, threshold, epsilon in (((25, 6, 5, 7, 4, 0, 30), 6.0, 1.0),        # a score of 20 or more
                                   ((0, 0, 0, 0, 1, 2, 0, 3), 1.5, 1.0),        # zeros near a small τ
                                   ((0,) * 10 + (12,), 0.5, 0.5)):
        cases.append(_selector_case(tc, threshold, epsilon, 1_000))
    wide = np.round(rng.uniform(0, 10_000, size=300))
    wide[:40] = np.round(5_000 + 20 * rng.uniform(-5, 5, size=40))             # near τ at b = 20
    cases.append(_selector_case(wide, 5_000.5, 0.1, 200))
    big = np.round(9_990 + rng.uniform(-12, 12, size=20))
    cases.append(_selector_case(big, 9_990.0, 1.0, 400))
    return cases


def _audited_selector(selector):
    def release(data, rng):
        tc, threshold = data
        selected = selector(np.array(tc, dtype=float), threshold, EPSILON, rng)
        if np.shape(selected) != (len(tc),):
            raise Refusal("return one True/False per feature")
        return event(selected)
    return release


SELECTOR_AUDIT = AuditPlan(
    mechanism=_audited_selector,
    pairs=tuple((f"TC = {d} and TC = {d2} with τ = {t:g}", (d, t), (d2, t)) for d, d2, t in [
        ((5, 5), (6, 5), 5.5),            # the paper's counterexample
        ((5, 5), (6, 6), 5.5),            # a record with both features on
        ((6, 6), (7, 7), 6.0),            # τ a full Δ from a count
        ((5, 6), (6, 7), 6.0),
        ((19, 20), (20, 21), 20.0),       # scores of 20 or more
        ((3, 4, 5, 1), (4, 5, 5, 1), 5.0),   # sums past 12
        ((0, 0), (1, 0), 1.0),            # a score of 0
        ((0, 7), (0, 8), 8.0),
        ((998, 1000), (999, 1001), 1000.0),
        ((9999, 10000), (10000, 10001), 10000.0),
    ]),
    epsilon=EPSILON, planted_leak=_ptt, n_samples=2_000, seed=AUDIT_SEED)


@exercise("05.5", answer="my_selector",
          hints=("Noise on the threshold alone leaves the exact order of the scores visible: where else "
                 "can the noise go?",
                 "Give every score its own noise, then compare each noisy score with τ. How far can one record "
                 "move the whole vector of scores (its L1 sensitivity)?",
                 "A record moves each score by at most 1 and at most s of them: the Laplace scale is that L1 "
                 "sensitivity over ε. Draw everything from rng."),
          why="{evidence} Each noisy score Q + Lap(s/ε) is compared with τ: score perturbation, ε-DP because the "
              "TC vector has L1 sensitivity s.",
          todo=write_function("my_selector(tc, threshold, epsilon, rng)"))
def repaired_ptt(answer):
    return grade_mechanism(answer, cases=_selector_battery, audit=SELECTOR_AUDIT, seed=BATTERY_SEED,
                           mechanism="score perturbation with the Laplace mechanism, b = Δ/ε", unit="feature")
