"""Checks of notebook 10: why privacy needs noise, shown by attacks (a differencing attack,
reconstruction from subset counts after Dinur & Nissim 2003, membership inference after Yeom et
al. 2018, and the limit ε-DP puts on it: Wasserman & Zhou 2010, Thm 2.4).

Exercise 10.2 is graded by running the student's attack: :func:`my_reconstruct`'s answer gets the
subset counts of secret columns generated when the check runs (sizes from a handful of records to
150, exact answers and answers off by up to 2) and must give the secret back; a function that calls
into dpexplore (its own :func:`dpexplore.attacks.reconstruct`) is refused.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._core import as_probability, close, exercise, not_yet, right_if, write_function
from ._grading import Refusal, guarded_call, zero_one_release

DIFFERENCE_EPSILON = 0.5        # 10.1: ε of each of the two counts, Δ = 1


@exercise("10.1", answer="difference_sd",
          hints=("The attacker's difference is her bit plus the first count's noise minus the second's: what "
                 "happens to the spread when two independent noises are combined?",
                 "Variances of independent noises add (a minus sign changes nothing), and Laplace noise of scale "
                 "b = Δ/ε has variance 2b²; the standard deviation is the square root of the variance."),
          why="each count gets Laplace noise of scale b = 1/{epsilon:g} = {b:g}, variance 2b² = {one:g}; the "
              "difference has variance {one:g} + {one:g} = {two:g}, so its standard deviation is {sd:g}: the one "
              "person the attacker is after moves it by only 1.")
def difference_sd(answer):
    from ..mechanisms import laplace_scale, laplace_variance

    one = laplace_variance(epsilon=DIFFERENCE_EPSILON)
    sd = math.sqrt(2 * one)
    return right_if(close(answer, sd), epsilon=DIFFERENCE_EPSILON, b=laplace_scale(epsilon=DIFFERENCE_EPSILON),
                    one=one, two=2 * one, sd=sd)


# --------------------------------------------------------------------------- 10.2: graded by running the attack
RECONSTRUCTION_SEED = 1002
EXACT_RATE, NOISY_RATE = 0.99, 0.95     # the share of bits an attack must recover: exact / noisy answers


@dataclass(frozen=True)
class HiddenTable:
    """A secret column and the answers an attacker gets: ``answers[j]`` = the number of 1s of
    ``secret`` in the subset ``queries[j]``, off by up to ``noise``."""

    label: str
    secret: np.ndarray
    queries: np.ndarray
    answers: np.ndarray
    noise: float


def _hidden_tables() -> list[HiddenTable]:
    """Generated when the check runs: secret columns of 8 to 150 records (random bits, a rare 1, all
    0s, all 1s), 4n random subset queries each (Dinur & Nissim 2003, §3), answered exactly or off by
    up to 1 or 2 (uniform errors, far below √n)."""
    from ..attacks import noisy_subset_counts, subset_queries

    rng = np.random.default_rng(RECONSTRUCTION_SEED)
    specs = [(8, 0.0, "random"), (25, 0.0, "random"), (40, 0.0, "all 0"), (60, 0.0, "one 1"), (80, 0.0, "all 1"),
             (100, 0.0, "random"), (150, 0.0, "random"), (100, 1.0, "random"), (120, 2.0, "random"),
             (60, 1.0, "rare 1s")]
    tables = []
    for n, noise, kind in specs:
        if kind == "random":
            secret = rng.integers(0, 2, n)
        elif kind == "rare 1s":
            secret = (rng.random(n) < 0.1).astype(np.int64)
        else:
            secret = np.full(n, 1 if kind == "all 1" else 0)
            if kind == "one 1":
                secret[rng.integers(n)] = 1
        A = subset_queries(n, 4 * n, random_state=rng)
        answers = noisy_subset_counts(secret, A, noise=noise, random_state=rng)
        how = "exact answers" if noise == 0 else f"answers off by up to {noise:g}"
        tables.append(HiddenTable(f"a hidden table of {n} records ({4 * n} queries, {how})", secret, A, answers, noise))
    return tables


@exercise("10.2", answer="my_reconstruct",
          hints=("Look for a 0/1 column whose subset counts come as close as possible to every answer you were "
                 "given: with many more answers than records there is little room for any other column.",
                 "Relax the bits to numbers x in [0, 1] and minimise the total error Σ_j |A_j·x − a_j| with a "
                 "linear program: one extra variable e_j ≥ |A_j·x − a_j| per answer.",
                 "scipy.optimize.linprog over (x, e): minimise Σ e subject to A x − e ≤ a and −A x − e ≤ −a, "
                 "bounds 0 ≤ x ≤ 1 and e ≥ 0 (method='highs'); then round x at 1/2."),
          why="your attack recovered {exact:.0%} of the secret bits on {n_exact} hidden tables with exact answers "
              "and {noisy:.0%} on {n_noisy} whose answers were off by up to {noise:g}, from {smallest} to {largest} "
              "records, using nothing but the answers. Errors this small (far below √n) protect no one: "
              "that is what noise of order √n, and DP, are for.",
          todo=write_function("my_reconstruct(queries, answers)"))
def reconstruction_attack(answer):
    if not callable(answer):
        return not_yet("give a function (a def), not its result.")
    tables = _hidden_tables()
    rates = []
    for t in tables:
        try:
            guess = zero_one_release(guarded_call(answer, (t.queries.copy(), t.answers.copy())), t.secret.size,
                                     unit="record", hint="round the linear program's solution (x ≥ 1/2 means 1)")
        except Refusal as refusal:
            return not_yet(f"on {t.label}: {refusal}")
        rate = float(np.mean(guess == t.secret))
        need = EXACT_RATE if t.noise == 0 else NOISY_RATE
        if rate < need:
            return not_yet(f"on {t.label}, your attack recovered {rate:.0%} of the secret bits ({need:.0%} needed; "
                           "guessing gets about half).")
        rates.append((t, rate))
    exact = [r for t, r in rates if t.noise == 0]
    noisy = [r for t, r in rates if t.noise > 0]
    sizes = [t.secret.size for t in tables]
    return right_if(True, exact=float(np.mean(exact)), n_exact=len(exact), noisy=float(np.mean(noisy)),
                    n_noisy=len(noisy), noise=max(t.noise for t in tables), smallest=min(sizes), largest=max(sizes))


# --------------------------------------------------------------------------- 10.3: read the reconstruction chart
CHART_QUERIES, CHART_RATE = 400, 0.75    # 10.3: the line of the chart read, and the share to fall below


def _first_noise_below() -> tuple[float, float, float, float, int]:
    """From the stored sweep: the smallest error bound E at which the mean share recovered with
    400 queries falls below 3/4, its share, the grid's E and share just before it, and the number
    of records attacked."""
    from ..plots.attacks import reconstruction_summary
    from ._stored import read_results

    runs = read_results("10_reconstruction.csv")
    n_records = len(str(runs["secret"].dropna().iloc[0]).split())
    summary = reconstruction_summary(runs)
    line = summary[summary["n_queries"] == CHART_QUERIES].sort_values("noise")
    below = line[line["rate"] < CHART_RATE]
    first = below.iloc[0]
    before = line[line["noise"] < first["noise"]].iloc[-1]
    return float(first["noise"]), float(first["rate"]), float(before["noise"]), float(before["rate"]), n_records


@exercise("10.3", answer="noise_to_stop_it",
          hints=("Follow the line of 400 queries from the left and stop at the first point under 75 %.",
                 "Read the x-axis value of that point: the error bound E of the grid (0, 1, 2, 3, 5, 7, 10, …)."),
          why="at E = {before:g} the attack still recovers {before_rate:.0%} of the bits, at E = {noise:g} only "
              "{rate:.0%}: the fall comes as E reaches √n = {root:g}, as Dinur & Nissim's analysis says; the same "
              "attack with fewer queries falls earlier.")
def noise_to_stop_it(answer):
    noise, rate, before, before_rate, n_records = _first_noise_below()
    return right_if(close(answer, noise), noise=noise, rate=rate, before=before, before_rate=before_rate,
                    root=math.sqrt(n_records))


# --------------------------------------------------------------------------- 10.4: the ε-DP limit on membership
MEMBERSHIP_EPSILON, MEMBERSHIP_FPR = 2.0, 0.01      # 10.4's givens


@exercise("10.4", answer="max_members_flagged",
          hints=("Flagging a record as a member is a test between two neighbouring datasets: with the record "
                 "and without it. What does ε-DP say about the probability of one outcome on the two?",
                 "Any event's probability can grow by at most the factor e^ε from one neighbour to the other, "
                 "so the true-positive rate is at most e^ε times the false-positive rate (give a share, "
                 "0.25 for 25 %)."),
          why="TPR ≤ e^ε·FPR = e^{epsilon:g} × {fpr:g} = {tpr:.3f}: an attack that wrongly flags 1 % of the "
              "non-members flags at most {percent:.1f} % of the members; without DP nothing stops it "
              "flagging nearly all of them.")
def max_members_flagged(answer):
    from ..attacks import membership_bound

    tpr = float(membership_bound([MEMBERSHIP_FPR], epsilon=MEMBERSHIP_EPSILON)[0])
    return right_if(close(as_probability(answer), tpr),
                    epsilon=MEMBERSHIP_EPSILON, fpr=MEMBERSHIP_FPR, tpr=tpr, percent=100 * tpr)
