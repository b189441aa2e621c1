"""Checks of notebook 11: randomized response and local DP (Warner 1965; Dwork & Roth 2014, §3.2).

Exercise 11.3 (write randomized response) is graded by
:func:`dpexplore.lab._grading.grade_mechanism`: whether each person's report is their true answer
or its opposite is compared with the reference (the truth with probability p = e^ε/(1 + e^ε)) on a
battery of surveys generated when the check runs, from one person to 10^5, with all-yes and all-no
surveys and sizes around 1,000; then the privacy audit runs on pairs of surveys that differ in one
person's answer, and must flag a planted leak.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ._core import close, exercise, right_if, write_function
from ._grading import AuditPlan, Case, Reference, categorical_reference, grade_mechanism, zero_one_release


@exercise("11.1", answer="survey_epsilon",
          hints=("ε bounds how much more likely a report is for one true answer than for the other.",
                 "A person whose answer is yes reports yes with probability p, one whose answer is no with "
                 "probability 1 − p: ε = ln(p/(1 − p))."),
          why="ε = ln(p/(1 − p)) = ln({p:g}/{q:g}) = ln {odds:g} ≈ {epsilon:.3f}: telling the truth {odds:g} times "
              "as often as lying.")
def survey_epsilon(answer):
    from ..mechanisms import randomized_response_epsilon

    p = 0.8
    return right_if(close(answer, randomized_response_epsilon(p)), p=p, q=1 - p, odds=p / (1 - p),
                    epsilon=randomized_response_epsilon(p))


ESTIMATE_N, ESTIMATE_YES = 1_000, 400            # 11.2's givens: 400 of 1,000 reports say yes, ε = ln 3


@exercise("11.2", answer="estimated_share",
          hints=("The share of yes reports is not the share of yes answers: the lies pull it towards 1/2.",
                 "E[share of yes reports] = p·π + (1 − p)(1 − π): solve for π with p = e^ε/(1 + e^ε) = 3/4."),
          why="π̂ = (λ̂ − (1 − p))/(2p − 1) = ({share:g} − {lie:g})/{gap:g} = {estimate:g}: the raw share of yes "
              "reports, {share:g}, overstates it.")
def estimated_share(answer):
    from ..mechanisms import randomized_response_estimate, randomized_response_probability

    reports = np.r_[np.ones(ESTIMATE_YES), np.zeros(ESTIMATE_N - ESTIMATE_YES)]
    eps = math.log(3)
    p = randomized_response_probability(epsilon=eps)
    estimate = randomized_response_estimate(reports, epsilon=eps)
    return right_if(close(answer, estimate), share=ESTIMATE_YES / ESTIMATE_N, lie=1 - p, gap=2 * p - 1,
                    estimate=estimate)


# --------------------------------------------------------------------------- 11.3: a graded mechanism
BATTERY_SEED, AUDIT_SEED = 1103, 1104
AUDIT_EPSILON = 1.0


def _truth_or_lie(epsilon: float):
    """The reference's two outcomes, 0: the true answer, 1: its opposite, when every noise scale is
    multiplied by s (ε becomes ε/s): (p, 1 − p) with p = e^(ε/s)/(1 + e^(ε/s))."""
    from ..mechanisms import randomized_response_probability

    def probabilities(s: float) -> np.ndarray:
        p = randomized_response_probability(epsilon=epsilon / s)
        return np.array([p, 1.0 - p])
    return probabilities


@lru_cache(maxsize=None)
def _reference(epsilon: float, answers: str) -> Reference:
    """Randomized response at ε; surveys of one kind of answers (all yes, all no, mixed) pool together."""
    return categorical_reference(f"randomized response at ε = {epsilon:g} ({answers})", _truth_or_lie(epsilon))


def _reports(output, n: int) -> np.ndarray:
    """The 0/1 reports of a release, one per person."""
    return zero_one_release(output, n, unit="person", hint="")


def _survey_case(answers, epsilon: float, draws: int) -> Case:
    """A survey with these true answers at ε: each unit (a person) either reports their true answer
    (outcome 0, probability p) or its opposite (outcome 1), independently of everyone else."""
    answers = np.asarray(answers, dtype=np.int64)
    n, yes = answers.size, int(answers.sum())
    kind = "all yes" if yes == n else "all no" if yes == 0 else "mixed answers"

    def decode(output) -> np.ndarray:
        return (_reports(output, n) != answers).astype(float)

    def describe(unit: int, k: int) -> str:
        return "reported their true answer" if k == 0 else "reported the opposite of their true answer"

    label = f"a survey of {n:,} {'person' if n == 1 else 'people'} ({yes:,} true yes) at ε = {epsilon:.3g}"
    return Case(label, lambda: (answers.copy(), epsilon), decode, np.tile([-np.inf, 0.5, np.inf], (n, 1)),
                answers.astype(float), n, draws, describe, reference=_reference(float(epsilon), kind))


def _survey_battery() -> list[Case]:
    """Generated when the check runs: one to three people at three ε (many releases each, so one
    person's leak shows), surveys of a few hundred people with random answers at ε from 0.25 to 3
    (the noise scale), all-yes and all-no surveys, sizes around 1,000 and 5,000, 10^4 and 10^5 people."""
    rng = np.random.default_rng(BATTERY_SEED)
    cases = []
    for epsilon in (0.5, 1.0, 2.0):
        cases += [_survey_case([1], epsilon, 1_500), _survey_case([0], epsilon, 1_000),
                  _survey_case([0, 1, 1], epsilon, 800)]
    for epsilon in (0.25, 0.5, 1.0, math.log(3), 2.0, 3.0):
        n = int(rng.integers(200, 601))
        cases.append(_survey_case((rng.random(n) < rng.uniform(0.1, 0.9)).astype(int), epsilon, 300))
    for value, n, epsilon in ((1, 400, 1.0), (0, 400, 1.0), (1, 150, 2.0), (0, 150, 0.5)):
        cases.append(_survey_case(np.full(n, value), epsilon, 300))
    for n in (999, 1_000, 1_001, 1_024, 5_000):
        cases.append(_survey_case((rng.random(n) < 0.3).astype(int), 1.0, 40))
    cases.append(_survey_case((rng.random(10_000) < 0.5).astype(int), 1.5, 15))
    cases.append(_survey_case((rng.random(100_000) < 0.25).astype(int), 1.0, 3))
    return cases


def _yes_kept(answers, epsilon, rng):
    """The planted leak: a yes is always reported as yes; only the no answers are randomised."""
    answers = np.asarray(answers, dtype=np.int64)
    lie = rng.random(answers.size) < 1 / (1 + math.exp(epsilon))
    return np.where((answers == 0) & lie, 1, answers)


def _audited_survey(release):
    def run(data, rng):
        answers, person = data
        return int(_reports(release(np.array(answers, dtype=np.int64), AUDIT_EPSILON, rng), len(answers))[person])
    return run


def _survey_pair(answers, person: int):
    answers = tuple(int(a) for a in answers)
    flipped = answers[:person] + (1 - answers[person],) + answers[person + 1:]
    return (f"a survey of {len(answers):,} where person {person}'s answer changes from {answers[person]} to "
            f"{flipped[person]}", (answers, person), (flipped, person))


_MIXED = tuple(int(i % 3 == 0) for i in range(1_001))
SURVEY_AUDIT = AuditPlan(
    mechanism=_audited_survey,
    pairs=tuple(_survey_pair(*p) for p in [
        ((1,), 0), ((0,), 0),                 # one person
        ((0, 1, 1), 1), ((0,) * 10, 4),        # a handful
        ((1,) * 100, 99),                      # all yes
        (_MIXED, 500), (_MIXED, 3),            # past 1,000 people
    ]),
    epsilon=AUDIT_EPSILON, planted_leak=_yes_kept, n_samples=2_000, seed=AUDIT_SEED)


@exercise("11.3", answer="my_randomized_response",
          hints=("Each person flips their own biased coin, whatever the others answered and however many "
                 "they are: what must the coin decide, and with what probability?",
                 "With probability p = e^ε/(1 + e^ε) a person reports their true answer, otherwise its "
                 "opposite, independently of everyone else, and on every survey size.",
                 "reports = np.where(rng.random(len(answers)) < p, answers, 1 - answers) with "
                 "p = np.exp(epsilon) / (1 + np.exp(epsilon)); draw every coin from rng."),
          why="{evidence} For randomized response a noise scale 5 % off means ε 5 % off, and the argument is the "
              "likelihood ratio: each report is the truth with probability p = e^ε/(1 + e^ε) whatever the answer, so "
              "for either report the two possible answers' likelihoods differ by the factor p/(1 − p) = e^ε.",
          todo=write_function("my_randomized_response(answers, epsilon, rng)"))
def randomized_response_answer(answer):
    return grade_mechanism(answer, cases=_survey_battery, audit=SURVEY_AUDIT, seed=BATTERY_SEED,
                           mechanism="randomized response with p = e^ε/(1 + e^ε)", unit="respondent")


# --------------------------------------------------------------------------- 11.4: local against central
RATIO_EPSILON, RATIO_N = 1.0, 100_000      # 11.4's givens


@exercise("11.4", answer="error_ratio",
          hints=("How does each model's error shrink as n grows? One falls like 1/n, the other like 1/√n.",
                 "The ratio of the two errors grows like √n: multiply the ratio the explorer shows at "
                 "n = 1,000 by √(100,000 / 1,000)."),
          why="randomized response's error is {local:.3g} and the Laplace count's {central:.3g} at n = 100,000: "
              "{ratio:.0f} times larger, about √100 = 10 times the ratio at n = 1,000 ({small:.1f}); "
              "local DP's price grows like √n.")
def error_ratio(answer):
    from ..mechanisms import laplace_variance, randomized_response_variance

    def ratio(n: int) -> tuple[float, float, float]:
        local = math.sqrt(randomized_response_variance(n, epsilon=RATIO_EPSILON))
        central = math.sqrt(laplace_variance(epsilon=RATIO_EPSILON)) / n
        return local, central, local / central

    local, central, value = ratio(RATIO_N)
    return right_if(close(answer, value), local=local, central=central, ratio=value, small=ratio(1_000)[2])
