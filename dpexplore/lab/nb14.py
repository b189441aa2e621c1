"""Checks of notebook 14: the sparse vector technique, AboveThreshold (Dwork & Roth 2014, §3.6,
Alg. 1) and the broken variants catalogued by Lyu, Su & Li (2017).

Exercise 14.4 (repair the variant that does not halt) is graded by
:func:`dpexplore.lab._grading.grade_mechanism`: the position of the student's first ⊤ against
AboveThreshold's exact distribution (:func:`dpexplore.svt.above_threshold_probabilities`) on a
battery of query lists, and the privacy audit on the neighbouring query lists of
:data:`dpexplore.svt_audit.SVT_NEIGHBOURS`, where the unrepaired variant is the planted leak.
"""
from __future__ import annotations

import warnings

import numpy as np

from ._core import choice, close, exercise, right_if, write_function
from ._grading import AuditPlan, Case, Refusal, categorical_reference, grade_mechanism
from ._stored import read_results

# --------------------------------------------------------------------------- 14.1 and 14.2
SCALE_EPSILON = 0.5          # 14.1's givens: AboveThreshold at ε = 0.5 on counts (Δ = 1)


@exercise("14.1", answer="query_noise_scale",
          hints=("AboveThreshold splits ε in two halves: one pays for the threshold's noise, the other for the "
                 "queries'.",
                 "With ε/2 for the queries, the noise scale is (how far a comparison can move)/(ε/2): a query moves "
                 "by Δ and the noisy threshold it is compared with by Δ too."),
          why="ν_i ~ Lap(4Δ/ε) = Lap(4·1/{epsilon:g}) = Lap({scale:g}): twice the threshold's scale 2Δ/ε = {rho:g}, "
              "because each comparison q_i + ν_i ≥ τ + ν_τ can move by 2Δ between neighbours.")
def query_noise_scale(answer):
    from ..mechanisms import laplace_scale

    rho = laplace_scale(epsilon=SCALE_EPSILON / 2, sensitivity=1.0)          # line 1: ρ ~ Lap(2Δ/ε)
    scale = laplace_scale(epsilon=SCALE_EPSILON / 2, sensitivity=2.0)        # line 3: ν ~ Lap(4Δ/ε)
    return right_if(close(answer, scale), epsilon=SCALE_EPSILON, scale=scale, rho=rho)


LONG_EPSILON, LONG_BELOW = 0.5, 1_000     # 14.2's givens: 1,000 queries far below τ, then one far above


@exercise("14.2", answer="charged_for_1001",
          hints=("The accountant charges AboveThreshold once per run, however many queries it answers.",
                 "Only the ⊤ costs privacy (with the threshold noise); the ⊥ answers before it are paid by the "
                 "same ε."),
          why="the ledger has one row of ε = {epsilon:g} for {queries:,} queries: AboveThreshold pays for its single "
              "⊤ and the threshold noise, and the ⊥ answers before it cost nothing more (Dwork & Roth 2014, "
              "Thm 3.23).")
def charged_for_many_queries(answer):
    from ..budget import BudgetAccountant
    from ..svt import above_threshold

    acc = BudgetAccountant(1.0)
    queries = np.r_[np.zeros(LONG_BELOW), 1_000.0]
    above_threshold(queries, 500.0, epsilon=LONG_EPSILON, random_state=0, accountant=acc)
    return right_if(close(answer, acc.spent), epsilon=acc.spent, queries=queries.size)


# --------------------------------------------------------------------------- 14.3: the audit's verdicts
AUDIT_RESULTS = "14_svt_audit.csv"
VARIANT_OPTIONS = {"a": "no query noise", "b": "no halting", "c": "released value", "d": "AboveThreshold"}


def _first_refutations():
    """For each broken variant of the stored audit, the fewest draws per side at which a pair refutes
    it, fewest first."""
    table = read_results(AUDIT_RESULTS)
    refuted = table[table["violates"] & (table["variant"] != VARIANT_OPTIONS["d"])]
    return refuted.groupby("variant")["n_samples"].min().sort_values()


@exercise("14.3", answer="hardest_to_refute",
          hints=("Read the second chart: for each broken variant, the fewest draws at which some pair refutes it.",
                 "The variant whose first refutation comes last (furthest right) is the one whose leak is the "
                 "rarest event."),
          why="{variant}: its leak shows only in a rare event (a low released value caps the threshold noise, and "
              "then the ⊥ answers before it say a little more), so the audit needs {draws:,} draws per side to "
              "refute it; {others}.")
def hardest_to_refute(answer):
    first = _first_refutations()
    variant, draws = str(first.index[-1]), int(first.iloc[-1])
    others = ", ".join(f"{v} falls from {int(n):,}" for v, n in first.iloc[:-1].items())
    letter = next(k for k, v in VARIANT_OPTIONS.items() if v == variant)
    return right_if(choice(answer, letter, variant), variant=variant, draws=draws, others=others)


# --------------------------------------------------------------------------- 14.4: a graded repair
EPSILON = 1.0                     # the audit's claimed ε; the battery uses several
SENSITIVITY = 1.0                 # counts: one record moves each query by at most 1
BATTERY_SEED, AUDIT_SEED = 1404, 1405


def _without_halting(queries, threshold, epsilon, rng):
    """The planted leak: the variant the notebook asks to repair (Lyu et al. 2017, Alg. 6)."""
    from ..exceptions import NotDifferentiallyPrivateWarning
    from ..svt_audit import svt_without_halting

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotDifferentiallyPrivateWarning)
        return svt_without_halting(queries, threshold, epsilon=epsilon, random_state=rng)


def _first_above(output, n: int) -> int:
    """The position of the first ⊤ of a run's answers (n for none), or a refusal for answers
    AboveThreshold can never give."""
    answers = np.asarray(output).ravel() if np.ndim(output) <= 1 else np.full(1, np.nan)
    if answers.size == 0 or answers.dtype.kind not in "biuf" or not np.all((answers == 0) | (answers == 1)):
        raise Refusal(f"return the answers as True (⊤) / False (⊥), one per query asked, got {str(output)[:60]}: "
                      "a released value is another mechanism.")
    above = np.flatnonzero(answers)
    if above.size > 1 or (above.size == 1 and above[0] != answers.size - 1):
        raise Refusal(f"your answers go on after the first ⊤ (query {above[0] + 1} of {n}): AboveThreshold halts "
                      "there, and every further answer costs more privacy than ε pays for.")
    if above.size == 0 and answers.size != n:
        raise Refusal(f"your answers stop after {answers.size} of {n} queries without a ⊤: answer every query "
                      "until the first ⊤.")
    return int(above[0]) if above.size else n


def _svt_case(queries, threshold: float, epsilon: float, size: int, draws: int) -> Case:
    """A query list, τ and ε: the reference is AboveThreshold with ρ ~ Lap(2Δ/ε), ν_i ~ Lap(4Δ/ε); the
    release is the position of the first ⊤ (or "none"), whose exact distribution is one category each."""
    q = np.asarray(queries, dtype=float)
    n = q.size
    edges = np.concatenate([[-np.inf], np.arange(n) + 0.5, [np.inf]])[None, :]

    def probabilities(s: float) -> np.ndarray:       # every noise scale times s: ε/s
        from ..svt import above_threshold_probabilities
        return above_threshold_probabilities(q, threshold, epsilon=epsilon / s, sensitivity=SENSITIVITY)

    def describe(unit: int, k: int) -> str:
        return "answered ⊥ to every query" if k == n else f"gave its first ⊤ at query {k + 1}"

    label = (f"{n} count{'s' if n > 1 else ''} of a table of {size:,} records (from {q.min():,.0f} to "
             f"{q.max():,.0f}), τ = {threshold:g}, ε = {epsilon:g}")
    return Case(label, lambda: (q.copy(), threshold, epsilon), lambda out: np.array([float(_first_above(out, n))]),
                edges, np.array([q.max()]), size, draws, describe, unit_names=["the run"],
                reference=categorical_reference(label, probabilities))


def _svt_battery() -> list[Case]:
    """Generated when the check runs: query lists whose counts sit a few noise scales around τ (where the
    first ⊤'s position carries most information about the noise scales), at ε = 0.5, 1 and 2, of 1 to 40
    queries; counts τ − 1, τ, τ + 1 (a full Δ from τ) on tables of a handful of records; more than 30
    queries; counts past 1,000 and up to 10^4 on tables of 10^4 and 10^5 records; empty counts.
    Power: 81,500 runs, so both noise scales 5 % off together (either way) are refused with probability
    0.999997 (the score test's normal approximation; the verdict states it)."""
    rng = np.random.default_rng(BATTERY_SEED)
    cases = []
    for epsilon, threshold, n in ((1.0, 20.0, 6), (0.5, 100.0, 10), (2.0, 8.0, 4), (1.0, 300.0, 12),
                                  (0.5, 40.0, 3), (2.0, 60.0, 20), (1.0, 12.0, 8), (1.0, 50.0, 40)):
        scale = 4 * SENSITIVITY / epsilon
        q = np.maximum(0, np.round(threshold + scale * rng.uniform(-2.5, 0.5, size=n)))
        cases.append(_svt_case(q, threshold, epsilon, int(3 * threshold + 50), 8_000))
    for q, threshold in (((1, 2, 3), 2.0), ((2, 3, 4, 1), 3.0), ((0, 1, 0), 1.0), ((5,), 4.0)):
        cases.append(_svt_case(q, threshold, 1.0, 5, 2_000))               # a handful of records
    for n, threshold in ((35, 10.0), (45, 30.0)):                          # more than 30 queries
        q = np.maximum(0, np.round(threshold + 4 * rng.uniform(-4.0, 0.0, size=n)))
        cases.append(_svt_case(q, threshold, 1.0, 400, 1_500))
    for threshold, size in ((1_000.0, 10_000), (5_000.0, 100_000), (9_990.0, 100_000)):   # large counts
        q = np.round(threshold + 4 * rng.uniform(-3.0, 1.0, size=10))
        cases.append(_svt_case(np.r_[q, 10_000.0], threshold, 1.0, size, 1_500))
    cases.append(_svt_case((0.0, 0.0, 10_000.0), 9_999.0, 1.0, 100_000, 1_000))
    cases.append(_svt_case((0.0, 0.0), 1.0, 1.0, 5, 1_000))              # empty counts
    return cases


def _audited_svt(release):
    from ..svt_audit import SVT_NEIGHBOURS

    def run(data, rng):
        queries, pair = data
        return SVT_NEIGHBOURS[pair][2](release(np.array(queries, dtype=float), 0.0, EPSILON, rng))
    return run


def _svt_pairs() -> tuple:
    from ..svt_audit import SVT_NEIGHBOURS

    return tuple((f"the neighbouring query lists {name!r} (τ = 0)", (tuple(d), name), (tuple(d2), name))
                 for name, (d, d2, _) in SVT_NEIGHBOURS.items())


SVT_AUDIT = AuditPlan(mechanism=_audited_svt, pairs=_svt_pairs(), epsilon=EPSILON, planted_leak=_without_halting,
                      n_samples=2_000, seed=AUDIT_SEED)


@exercise("14.4", answer="my_above_threshold",
          hints=("Compare the variant with Dwork & Roth's Algorithm 1 line by line: what does it do after a ⊤, and "
                 "how much noise does each query get?",
                 "AboveThreshold answers until its first ⊤ and stops there; each query's noise must cover a "
                 "comparison that can move by 2Δ with only half of ε.",
                 "Draw ν_τ ~ Lap(2Δ/ε) once, then for each query in order draw a fresh ν_i ~ Lap(4Δ/ε), answer ⊤ "
                 "and stop when q_i + ν_i ≥ τ + ν_τ, else answer ⊥; Δ = 1 for counts; every draw from rng."),
          why="{evidence} Halting at the first ⊤ makes the ⊥ answers before it cost nothing beyond ε/2 of threshold "
              "noise, and the query noise Lap(4Δ/ε) pays the other half for that one ⊤.",
          todo=write_function("my_above_threshold(queries, threshold, epsilon, rng)"))
def repaired_sparse_vector(answer):
    return grade_mechanism(answer, cases=_svt_battery, audit=SVT_AUDIT, seed=BATTERY_SEED,
                           mechanism="AboveThreshold (ν_τ ~ Lap(2Δ/ε), ν_i ~ Lap(4Δ/ε), halting at the first ⊤)",
                           unit="run")
