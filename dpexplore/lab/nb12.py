"""Checks of notebook 12: the Gaussian mechanism and (ε, δ): L2 sensitivity, the classical and the
analytic calibrations (Dwork & Roth 2014, Thm A.1; Balle & Wang 2018, Thm 8), the privacy-loss
distribution (Balle & Wang 2018, §3), and δ in the budget accountant.

Exercise 12.2 (the classical Gaussian release) is graded by
:func:`dpexplore.lab._grading.grade_mechanism`: the student's releases against N(value, σ²) with the
classical σ on a battery of count vectors, then the privacy audit on neighbouring vectors that
differ by one record in one entry.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtri

from ._core import choice, close, exercise, right_if, write_function
from ._grading import GAUSSIAN, ZERO_WIDTH, AuditPlan, Case, Refusal, grade_mechanism

# --------------------------------------------------------------------------- 12.1: L2 sensitivity
COUNTS_PER_PERSON = 4       # 12.1's givens: one person adds 1 to each of four counts released together


@exercise("12.1", answer="l2_sensitivity",
          hints=("Write the change one person makes to the vector of four counts, then take its length.",
                 "The change is (1, 1, 1, 1): the L1 sensitivity adds the absolute values, the L2 sensitivity is "
                 "the square root of the sum of their squares."),
          why="the change (1, 1, 1, 1) has L2 norm √{n} = {l2:g}, half its L1 norm {l1:g}: Gaussian noise scaled to "
              "Δ₂ grows with the square root of the number of counts one person touches, Laplace noise with the "
              "number itself.")
def l2_sensitivity(answer):
    change = np.ones(COUNTS_PER_PERSON)
    l2, l1 = float(np.linalg.norm(change)), float(np.abs(change).sum())
    return right_if(close(answer, l2), n=COUNTS_PER_PERSON, l2=l2, l1=l1)


# --------------------------------------------------------------------------- 12.2: a graded mechanism
AUDIT_EPSILON, AUDIT_DELTA = 0.5, 1e-5
BATTERY_SEED, AUDIT_SEED = 1202, 1203

# standard normal quantiles at 1/16 … 15/16 (the median 0 replaced by the category "the exact true
# value", |Z| ≤ 10^-6)
_GRID = np.unique([float(ndtri(q)) for q in np.arange(1, 16) / 16 if q != 0.5] + [-ZERO_WIDTH, ZERO_WIDTH])


def _classical_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    from ..mechanisms import gaussian_scale
    return gaussian_scale(epsilon=epsilon, delta=delta, sensitivity=sensitivity, calibration="classical")


def _exact_from_1000(values, epsilon, delta, sensitivity, rng):
    """The planted leak: entries of 1,000 or more released without noise."""
    values = np.asarray(values, dtype=float)
    noisy = values + rng.normal(0.0, _classical_sigma(epsilon, delta, sensitivity), size=values.shape)
    return np.where(values >= 1_000, values, noisy)


def _released(output, values: np.ndarray) -> np.ndarray:
    y = np.asarray(output, dtype=float) if np.ndim(output) == 1 else np.full(1, np.nan)
    if y.shape != values.shape:
        raise Refusal(f"return one released value per entry ({values.size} here), got {str(output)[:60]}.")
    if not np.all(np.isfinite(y)):
        raise Refusal("your release holds a value that is not a finite number.")
    return y


def _gaussian_case(values, epsilon: float, delta: float, sensitivity: float, draws: int) -> Case:
    """A count vector, ε, δ and its L2 sensitivity: the reference releases value + N(0, σ²) on every
    entry, independently, σ the classical calibration. Categories of Z = noise/σ: 16 equal-probability
    bins of the standard normal, the middle one split off as "exactly the true value" (|Z| ≤ 10^-6)."""
    values = np.asarray(values, dtype=float)
    sigma = _classical_sigma(epsilon, delta, sensitivity)
    edges = np.concatenate([[-np.inf], _GRID, [np.inf]])

    def decode(output) -> np.ndarray:
        return (_released(output, values) - values) / sigma

    def describe(unit: int, k: int) -> str:
        lo, hi = edges[k] * sigma, edges[k + 1] * sigma
        if abs(lo) <= ZERO_WIDTH * sigma and abs(hi) <= ZERO_WIDTH * sigma:
            return "was released as exactly its true value"
        if not np.isfinite(lo):
            return f"was released with noise of {hi:.3g} or less"
        if not np.isfinite(hi):
            return f"was released with noise above {lo:.3g}"
        return f"was released with noise in ({lo:.3g}, {hi:.3g}]"

    label = (f"{values.size:,} count{'s' if values.size > 1 else ''} of a table of {values.sum():,.0f} records "
             f"(from {values.min():,.0f} to {values.max():,.0f}), ε = {epsilon:g}, δ = {delta:g}, Δ₂ = {sensitivity:.3g}")
    return Case(label, lambda: (values.copy(), epsilon, delta, sensitivity), decode,
                np.tile(edges, (values.size, 1)), values, int(values.sum()), draws, describe,
                unit_names=[f"the count {v:,.0f}" for v in values], reference=GAUSSIAN)


def _gaussian_battery() -> list[Case]:
    """Generated when the check runs: histograms of 30 counts up to 10^4 at several ε < 1, δ and L2
    sensitivities; counts of 0 to 3 on tables of a handful of records; entries around 1,000; a vector
    of 1,000 mostly empty entries; tables of 10^4 and 10^5 records. Power: 8,940 releases of 120,550
    counts, so a σ 5 % off (either way) is refused with probability 1 − 10^-15 or more (the
    score test's normal approximation; the verdict states it)."""
    rng = np.random.default_rng(BATTERY_SEED)
    cases = []
    for epsilon, delta, sensitivity in ((0.5, 1e-5, 1.0), (0.1, 1e-6, 1.0), (0.9, 1e-3, math.sqrt(2)),
                                        (0.3, 1e-7, 2.0), (0.7, 1e-5, 3.0), (0.2, 1e-4, 1.0)):
        values = np.round(np.exp(rng.uniform(0, math.log(10_000), size=30)))
        cases.append(_gaussian_case(values, epsilon, delta, sensitivity, 300))
    for values in ((0, 1, 2), (3, 0, 0, 1), (5,), (1,)):
        cases.append(_gaussian_case(values, 0.5, 1e-5, 1.0, 1_500))          # a handful of records
    cases.append(_gaussian_case((998, 999, 1_000, 1_001, 1_002, 40), 0.5, 1e-5, 1.0, 800))
    values = np.zeros(1_000)
    values[rng.choice(1_000, size=15, replace=False)] = rng.integers(1, 50, size=15)
    cases.append(_gaussian_case(values, 0.5, 1e-6, 1.0, 40))                 # a long, mostly empty vector
    for total, cells in ((10_000, 25), (100_000, 30)):                     # tables of 10^4 and 10^5 records
        values = rng.multinomial(total, np.full(cells, 1 / cells)).astype(float)
        values[:3] = (0, 1, 10_000)
        values[-1] += max(0.0, total - values.sum())
        cases.append(_gaussian_case(values, 0.5, 1e-5, 1.0, 150))
    return cases


def _audited_gaussian(release):
    def run(data, rng):
        values, entry = data
        out = np.asarray(release(np.array(values, dtype=float), AUDIT_EPSILON, AUDIT_DELTA, 1.0, rng), dtype=float)
        if out.shape != (len(values),):
            raise Refusal("return one released value per entry")
        return float(out[entry])          # the released value of the entry the added record changes
    return run


def _gaussian_pair(values, entry):
    values = tuple(float(v) for v in values)
    plus = tuple(v + (i == entry) for i, v in enumerate(values))
    return (f"the counts {tuple(int(v) for v in values)} and one more record in entry {entry}", (values, entry),
            (plus, entry))


GAUSSIAN_AUDIT = AuditPlan(
    mechanism=_audited_gaussian,
    pairs=tuple(_gaussian_pair(*p) for p in [((0, 40), 0), ((3,), 0), ((999, 5), 0), ((40, 9_999), 1),
                                             ((5_000, 4_999, 2), 2)]),
    epsilon=AUDIT_EPSILON, planted_leak=_exact_from_1000, n_samples=2_000, seed=AUDIT_SEED)


@exercise("12.2", answer="my_gaussian",
          hints=("Which number sets the noise: how much one record moves the whole vector, measured how?",
                 "The classical calibration scales σ with the L2 sensitivity and with √(2 ln(1.25/δ)), and "
                 "divides by ε; every entry gets its own independent draw.",
                 "σ = Δ₂·√(2·ln(1.25/δ))/ε, then return values + rng.normal(0, σ, size=len(values)); no branch on "
                 "the values or their number."),
          why="{evidence} The audit checks the ε part only: events of probability δ are too rare for its draws, "
              "which is exactly the slack δ allows.",
          todo=write_function("my_gaussian(values, epsilon, delta, sensitivity, rng)"))
def classical_gaussian(answer):
    return grade_mechanism(answer, cases=_gaussian_battery, audit=GAUSSIAN_AUDIT, seed=BATTERY_SEED,
                           mechanism="the Gaussian mechanism with the classical σ = Δ₂√(2 ln(1.25/δ))/ε",
                           unit="count")


# --------------------------------------------------------------------------- 12.3 to 12.5
CHART_EPSILON, CHART_DELTA = 0.5, 1e-5      # 12.3's givens, read off the σ chart


@exercise("12.3", answer="sigma_ratio",
          hints=("Read both curves of the σ chart at ε = 0.5, or compute both σ with gaussian_scale.",
                 "Divide the classical σ by the analytic σ at ε = 0.5, δ = 10⁻⁵ (Δ₂ = 1)."),
          why="σ = {classical:.3g} against {analytic:.3g}: the classical bound adds {extra:.0f} % more noise than "
              "the analytic calibration needs for the same (ε, δ).")
def sigma_ratio(answer):
    from ..mechanisms import gaussian_scale
    analytic = gaussian_scale(epsilon=CHART_EPSILON, delta=CHART_DELTA)
    classical = gaussian_scale(epsilon=CHART_EPSILON, delta=CHART_DELTA, calibration="classical")
    ratio = classical / analytic
    return right_if(close(answer, ratio), classical=classical, analytic=analytic, extra=100 * (ratio - 1))


LOSS_EPSILON, LOSS_DELTA = 1.0, 1e-5         # 12.4's givens: the analytic σ for (1, 10^-5)


@exercise("12.4", answer="tail_versus_delta",
          hints=("Compute the analytic σ for (ε = 1, δ = 10⁻⁵), then the chance that the privacy loss L exceeds "
                 "ε; the loss is normal with mean μ = Δ²/(2σ²) and variance 2μ.",
                 "δ(ε) = P[L > ε] − e^ε·P[L′ < −ε]: what does the second term do to the comparison of P[L > ε] "
                 "with δ?"),
          why="P[L > ε] = {tail:.3g}, {ratio:.0f} times δ = {delta:g}: the loss exceeds ε far more often than δ. "
              "(ε, δ)-DP does not say \"the ε bound fails with probability δ\"; δ weighs each such output by "
              "1 − e^(ε − L).")
def tail_versus_delta(answer):
    from ..mechanisms import gaussian_privacy_loss, gaussian_scale
    sigma = gaussian_scale(epsilon=LOSS_EPSILON, delta=LOSS_DELTA)
    tail = float(gaussian_privacy_loss(sigma=sigma).sf(LOSS_EPSILON))
    option = ("a", "smaller") if tail < LOSS_DELTA * 0.99 else ("c", "larger") if tail > LOSS_DELTA * 1.01 \
        else ("b", "equal")
    return right_if(choice(answer, *option), tail=tail, ratio=tail / LOSS_DELTA, delta=LOSS_DELTA)


BUDGET = (1.0, 1e-5)                  # 12.5's givens: the accountant's (ε, δ)
RELEASE = (0.1, 3e-6)                 # and each Gaussian release's


@exercise("12.5", answer="gaussian_releases",
          hints=("Two budgets are spent at once: count how many releases each one allows.",
                 "ε allows total ε / 0.1 releases, δ allows total δ / (3·10⁻⁶); the accountant refuses the first "
                 "release that either budget cannot pay."),
          why="the ε budget would pay for {by_epsilon} releases, the δ budget for {count} only: the accountant "
              "refuses release {next} before it draws any noise, and its ledger shows δ = {spent:.1e} spent.")
def gaussian_releases(answer):
    from ..budget import BudgetAccountant, BudgetExceededError
    from ..mechanisms import gaussian

    acc = BudgetAccountant(BUDGET[0], delta=BUDGET[1])
    count = 0
    try:
        while True:
            gaussian(0.0, epsilon=RELEASE[0], delta=RELEASE[1], accountant=acc, random_state=0)
            count += 1
    except BudgetExceededError:
        pass
    return right_if(close(answer, count), count=count, next=count + 1, spent=acc.spent_delta,
                    by_epsilon=round(BUDGET[0] / RELEASE[0]))
