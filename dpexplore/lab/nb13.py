"""Checks of notebook 13: composition beyond adding up ε. Basic composition (Dwork & Roth 2014,
Thm 3.16), advanced composition (Dwork, Rothblum & Vadhan 2010; Dwork & Roth Thm 3.20), zCDP (Bun &
Steinke 2016, Prop 1.3, 1.4, Lemma 1.7), and what MST (McKenna, Miklau & Sheldon 2021) spends in
notebook 07.
"""
from __future__ import annotations

import math

import numpy as np

from ._core import choice, close, exercise, not_yet, right_if, write_function
from ._grading import Refusal, guarded_call

# --------------------------------------------------------------------------- 13.1: basic composition
DAILY_EPSILON, DAYS = 0.05, 365          # 13.1's givens: a daily noisy count for a year


@exercise("13.1", answer="year_of_counts",
          hints=("The same people answer every day: which composition rule applies, and what does it add up?",
                 "Basic (sequential) composition: k releases of ε each cost k·ε in all."),
          why="{days} × {epsilon:g} = {total:g}: a small daily ε becomes a large yearly one, which is why an "
              "accountant counts every release.")
def year_of_counts(answer):
    from ..composition import basic_composition
    total = basic_composition(DAILY_EPSILON, DAYS)[0]
    return right_if(close(answer, total), days=DAYS, epsilon=DAILY_EPSILON, total=total)


# --------------------------------------------------------------------------- 13.2: zCDP, implemented
BATTERY_SEED = 1302


def _zcdp_cases() -> list[tuple[float, int, float]]:
    """(ε per step, k, δ), generated when the check runs: ε from 0.001 to 2, k from 1 to 10^5, δ from
    10^-12 to 0.1, plus the notebook's (0.1, 100, 10^-6)."""
    rng = np.random.default_rng(BATTERY_SEED)
    cases = [(0.1, 100, 1e-6), (1.0, 1, 1e-5), (2.0, 3, 0.1)]
    for _ in range(30):
        cases.append((float(10 ** rng.uniform(-3, math.log10(2))), int(10 ** rng.uniform(0, 5)),
                      float(10 ** rng.uniform(-12, -1))))
    return cases


@exercise("13.2", answer="zcdp_total",
          hints=("Two steps: how much ρ does one ε-DP step cost, and how does ρ turn back into an ε for a given "
                 "δ?",
                 "An ε-DP step is ε²/2-zCDP, ρ's add up over the k steps, and ρ-zCDP is (ρ + 2√(ρ ln(1/δ)), δ)-DP.",
                 "ρ = k·ε²/2, then return ρ + 2·math.sqrt(ρ·math.log(1/δ))."),
          why="your totals match Bun & Steinke's conversion on {cases} cases, from one step to 100,000: the ρ of "
              "k steps grows like k, but the ε it converts to like √k.",
          todo=write_function("zcdp_total(epsilon, k, delta)"))
def zcdp_total(answer):
    from ..composition import zcdp_of_pure, zcdp_to_dp
    if not callable(answer):
        return not_yet("give a function (a def), not its result.")
    cases = _zcdp_cases()
    for epsilon, k, delta in cases:
        expected = zcdp_to_dp(k * zcdp_of_pure(epsilon), delta=delta)
        try:
            got = float(guarded_call(answer, (epsilon, k, delta)))
        except (Refusal, TypeError, ValueError) as error:
            return not_yet(str(error) if isinstance(error, Refusal) else "return one number, the total ε.")
        if not math.isclose(got, expected, rel_tol=1e-9):
            return not_yet(f"for k = {k:,} steps of ε = {epsilon:.3g} and δ = {delta:.1e} your total is {got:.6g}; "
                           "Bun & Steinke's conversion gives another number.")
    return right_if(True, cases=len(cases))


# --------------------------------------------------------------------------- 13.3: where advanced composition pays
CROSS_EPSILON, CROSS_DELTA = 0.1, 1e-6      # 13.3's givens


def _crossover() -> int:
    """The smallest k at which advanced composition gives a smaller total than k·ε."""
    from ..composition import advanced_composition
    k = 1
    while advanced_composition(CROSS_EPSILON, k, delta_prime=CROSS_DELTA)[0] >= k * CROSS_EPSILON:
        k += 1
    return k


@exercise("13.3", answer="crossover_k",
          hints=("Write both totals as functions of k and ask where the advanced one drops below kε.",
                 "√(2k ln(1/δ′))·ε + kε(e^ε − 1) < kε ⟺ √(2 ln(1/δ′)/k) < 2 − e^ε: solve for k and round up."),
          why="from k = {k} steps of ε = 0.1 on, advanced composition beats kε (at δ′ = 10⁻⁶); below it, its √k "
              "term costs more than it saves. Each bound is valid, so an accountant may report the smaller.")
def crossover_k(answer):
    k = _crossover()
    return right_if(close(answer, k, rel=0.03), k=k)


# --------------------------------------------------------------------------- 13.4: MST's noise, predicted
MST_EPSILON, MST_DELTA = 1.0, 1e-6          # notebook 07's MST at ε = 1


def mst_noise(columns: int) -> dict:
    """The noise on each one-way marginal of MST at ε = 1 on a table of ``columns`` columns: a third of
    the budget for the ``columns`` one-way marginals (McKenna, Miklau & Sheldon 2021), as Gaussian noise
    under ρ-zCDP converted to (ε, δ = 10^-6), or as Laplace noise under pure ε-DP (basic composition).
    Standard deviations of the noise on one count."""
    from ..composition import dp_to_zcdp
    from ..mechanisms import laplace_scale
    rho = dp_to_zcdp(MST_EPSILON, delta=MST_DELTA)
    gaussian = math.sqrt(1 / (2 * rho / (3 * columns)))            # ρ_i = Δ²/(2σ²), Δ = 1
    laplace = math.sqrt(2) * laplace_scale(epsilon=MST_EPSILON / (3 * columns))
    return {"rho": rho, "gaussian": gaussian, "laplace": laplace, "columns": columns}


@exercise("13.4", answer="laplace_noise_is",
          hints=("Compute both standard deviations: the Gaussian one from ρ/3 split over the one-way marginals, "
                 "the Laplace one from ε/3 split over the same marginals.",
                 "Gaussian: ρ_i = ρ/(3d), σ = √(1/(2ρ_i)). Laplace: ε_i = ε/(3d), standard deviation √2/ε_i. "
                 "Which grows faster with d?"),
          why="with d = {columns} columns each one-way count gets Gaussian noise of σ = {gaussian:.1f} under zCDP "
              "(ρ = {rho:.4f}) but Laplace noise of standard deviation {laplace:.1f} under pure ε: split over many "
              "measurements, zCDP's √k beats basic composition's k, and MST pays for it with δ = 10⁻⁶.")
def laplace_noise_is(answer):
    from ..datasets import load_adult
    _, schema = load_adult()
    noise = mst_noise(len(schema.predictors) + 1)
    ratio = noise["laplace"] / noise["gaussian"]
    option = ("c", "larger") if ratio > 1.25 else ("a", "smaller") if ratio < 0.8 else ("b", "about the same")
    return right_if(choice(answer, *option), **noise)
