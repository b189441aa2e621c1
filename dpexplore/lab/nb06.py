"""Checks of notebook 06: Vinterbo's projected histograms (2012): the budget split (§2.10), the
greedy exponential-mechanism selection (Algorithm 1, Corollary 1) and the thresholded histogram
(§2.2–2.4, eq. 5).

Exercise 06.3 is graded by :func:`dpexplore.lab._grading.grade_mechanism`: the released values
of the student's histogram against the thresholded Laplace mechanism on a battery of count
vectors, and the privacy audit on neighbouring tables that differ by one record in one cell.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ._core import as_number, choice, close, exercise, numbers_close, right_if, write_function
from ._grading import ZERO_WIDTH, AuditPlan, Case, Refusal, grade_mechanism


@lru_cache(maxsize=1)
def _iris_split() -> dict:
    """The ε split of ``ProjectedHistogram(epsilon=1.0, k=2, gamma=0.8)`` fitted on Iris."""
    from ..datasets import load_iris
    from ..publish.projected import ProjectedHistogram

    iris, schema = load_iris()
    X, y = schema.split(iris)
    model = ProjectedHistogram(epsilon=1.0, k=2, gamma=0.8, random_state=0, schema=schema).fit(X, y)
    return {"count": model.epsilon_split_["record count"], "histogram": model.epsilon_split_["histogram"],
            "selection": model.epsilon_split_["selection"], "step": model.epsilon_split_["selection"] / model.k_}


@exercise("06.1", answer="split_answer",
          hints=("Read the ledger from the top: not all of ε is split by γ.",
                 "Take the record count's share off first (the ledger's first row); γ = 0.8 of the rest goes to "
                 "the histogram, 1 − γ to the selection, and the selection is split over the k = 2 steps."),
          why="the record count takes {count:g}, so ε_h = 0.8·{rest:g} = {histogram:g} and ε_p = 0.2·{rest:g} = "
              "{selection:g}, i.e. ε_step = {step:g} for each of the two greedy picks.")
def budget_split(answer):
    split = _iris_split()
    return right_if(numbers_close(answer, [split["histogram"], split["step"]]), rest=1.0 - split["count"], **split)


CHART_EPSILONS = (0.01, 0.05, 0.2, 1.0)   # the ε_p of notebook 06's chart of first picks


@lru_cache(maxsize=1)
def _first_reliable_epsilon() -> float:
    """The smallest ε_p of the chart at which the likeliest first pick has probability > 0.8."""
    from ..datasets import load_iris, train_test_split
    from ..mechanisms import exponential_probabilities
    from ..publish import projected as ph

    iris, schema = load_iris()
    X_train, _, y_train, _ = train_test_split(iris, schema, test_size=0.1, random_state=0)
    heuristic = ph.ProjectedHistogram(epsilon=1.0, random_state=0, schema=schema).fit(X_train, y_train)
    codes, _ = heuristic._codes(X_train, schema.predictors, heuristic.n_bins_)
    scores = ph.candidate_scores(codes, schema.encode_target(y_train), [])
    for eps_p in CHART_EPSILONS:   # one greedy step (k = 1) spends all of ε_p, Δ = 2
        if exponential_probabilities(scores, epsilon=eps_p, sensitivity=ph.score_sensitivity()).max() > 0.8:
            return eps_p
    return float("nan")


@exercise("06.2", answer="eps_p_reliable",
          hints=("Go down the rows of the chart (ε_p = 0.01, 0.05, 0.2, 1), one ε_p at a time.",
                 "Stop at the first row where a single bar passes 0.8 of the first picks."),
          why="at ε_p = {epsilon:g} the exponential mechanism already favours petal length's large discernibility "
              "gain; below it the noise still spreads the picks, even to attributes that discern nothing.")
def reliable_first_pick(answer):
    expected = _first_reliable_epsilon()
    return right_if(as_number(answer) in CHART_EPSILONS and close(answer, expected), epsilon=expected)


# --------------------------------------------------------------------------- 06.3: a graded mechanism
SENSITIVITY = 1.0                 # add/remove: one record changes one cell by 1
BATTERY_SEED, AUDIT_SEED = 606, 607
AUDIT_EPSILON = 1.0
# standard Laplace quantiles at 1/16 … 15/16 (the median 0 replaced by the category "the exact
# true count", |Z| ≤ 10^-6)
_GRID = np.unique([np.log(2 * q) if q < 0.5 else -np.log(2 * (1 - q)) for q in np.arange(1, 16) / 16
                   if q != 0.5] + [-ZERO_WIDTH, ZERO_WIDTH])
_WIDTH = _GRID.size + 2


def _occupied_only(counts, epsilon, tau, rng):
    """The planted leak: noise on the occupied cells only (reveals which cells exist)."""
    counts = np.asarray(counts, dtype=float)
    noisy = counts + np.where(counts > 0, rng.laplace(0.0, 1.0 / epsilon, size=counts.size), 0.0)
    return np.where(noisy > tau, noisy, 0.0)


def _released(output, counts: np.ndarray, tau: float) -> np.ndarray:
    y = np.asarray(output, dtype=float) if np.ndim(output) == 1 else np.full(1, np.nan)
    if y.shape != counts.shape:
        raise Refusal(f"return one released count per cell ({counts.size} here), got {str(output)[:60]}.")
    bad = ~np.isfinite(y) | (y < 0) | ((y > 0) & (y <= tau))
    if bad.any():
        i = int(np.argmax(bad))
        raise Refusal(f"the cell with count {counts[i]:g} was released as {y[i]:.4g}: a dropped cell must be 0 "
                      f"and a kept one above τ = {tau:g}.")
    return y


def _histogram_case(counts, tau: float, epsilon: float, draws: int) -> Case:
    """Counts, τ and ε: the reference releases c + L where c + L > τ and 0 elsewhere, with
    independent L ~ Laplace(Δ/ε) on every cell. Categories of Z = L/b: dropped (Z ≤ (τ − c)/b),
    then kept with Z in one of 16 equal-probability bins, or within 10^-6 of 0 (the exact count)."""
    counts = np.asarray(counts, dtype=float)
    b = SENSITIVITY / epsilon
    rows, lows = [], []
    for c in counts:
        low = min(max((tau - c) / b, -40.0), 40.0)
        above = _GRID[_GRID > low]
        rows.append(np.concatenate([[-np.inf, low], above, np.full(_WIDTH - above.size - 1, np.inf)]))
        lows.append(above)

    def decode(output) -> np.ndarray:
        y = _released(output, counts, tau)
        return np.where(y == 0, -np.inf, (y - counts) / b)

    def describe(unit: int, k: int) -> str:
        if k == 0:
            return "was dropped"
        edges = rows[unit]
        lo, hi = edges[k] * b, edges[k + 1] * b
        if abs(lo) <= ZERO_WIDTH * b and abs(hi) <= ZERO_WIDTH * b:
            return "was released as exactly its true count"
        lo_text, hi_text = ("0" if abs(v) <= ZERO_WIDTH * b else f"{v:.3g}" for v in (lo, hi))
        if edges[k] <= -40.0:
            return f"was released as its count + noise of {hi_text} or less"
        if not np.isfinite(hi):
            return f"was released as its count + noise above {lo_text}"
        return f"was released as its count + noise in ({lo_text}, {hi_text}]"

    label = (f"{counts.size:,} cells holding {counts.sum():,.0f} records (counts {counts.min():,.0f} to "
             f"{counts.max():,.0f}), τ = {tau:g}, ε = {epsilon:g}")
    return Case(label, lambda: (counts.copy(), epsilon, tau), decode, np.array(rows), counts,
                int(counts.sum()), draws, describe, unit_names=[f"a cell with count {c:,.0f}" for c in counts])


def _histogram_battery() -> list[Case]:
    """Generated when the check runs: cells far above τ at several ε (their noise is fully
    released: the scale), counts at τ − 1, τ and τ + 1 (τ a full Δ from a count), many empty cells
    near a small τ, tables of a handful of records, and tables of 10^4 to 10^5 records with
    counts up to 10^4."""
    rng = np.random.default_rng(BATTERY_SEED)
    cases = []
    for epsilon, tau in ((1.0, 5.0), (0.5, 20.0), (2.0, 2.5), (0.25, 50.0), (1.0, 100.0), (2.0, 10.0)):
        counts = np.round(np.exp(rng.uniform(np.log(tau + 40 / epsilon), np.log(10_000), size=40)))
        cases.append(_histogram_case(counts, tau, epsilon, 300))
    for tau, epsilon in ((1.0, 1.0), (5.0, 1.0), (30.0, 0.5), (100.0, 2.0)):
        counts = np.repeat([0.0, tau - 1, tau, tau + 1, tau + 3], 6)
        cases.append(_histogram_case(counts, tau, epsilon, 400))
    for tau in (1.0, 2.0):                                        # mostly empty domains
        counts = np.zeros(1_000)
        counts[rng.choice(1_000, size=20, replace=False)] = rng.integers(3, 60, size=20)
        cases.append(_histogram_case(counts, tau, 1.0, 100))
    for counts, tau in (((0, 1, 2), 0.5), ((3, 0, 0, 1), 1.0), ((0, 40), 0.5), ((12, 30, 29, 31, 0), 2.0)):
        cases.append(_histogram_case(counts, tau, 1.0, 1_000))    # a handful of records
    for total, cells in ((10_000, 30), (100_000, 12)):
        counts = np.round(rng.dirichlet(np.ones(cells)) * total)
        counts = np.minimum(counts, 10_000)
        counts[:3] = (0, 1, 99)
        cases.append(_histogram_case(counts, 50.0, 1.0, 150))
    return cases


def _audited_histogram(release):
    def run(data, rng):
        counts, tau, cell = data
        out = np.asarray(release(np.array(counts, dtype=float), AUDIT_EPSILON, tau, rng), dtype=float)
        if out.shape != (len(counts),):
            raise Refusal("return one released count per cell")
        return float(out[cell])          # the released value of the cell the added record falls in
    return run


def _histogram_pair(counts, cell, tau):
    counts = tuple(float(c) for c in counts)
    plus = tuple(c + (i == cell) for i, c in enumerate(counts))
    return (f"the counts {tuple(int(c) for c in counts)} and one more record in cell {cell} (τ = {tau:g})",
            (counts, tau, cell), (plus, tau, cell))


HISTOGRAM_AUDIT = AuditPlan(
    mechanism=_audited_histogram,
    pairs=tuple(_histogram_pair(*p) for p in [
        ((0, 40), 0, 0.5),              # the notebook's pair: a record in an empty cell
        ((0, 40), 0, 1.0),              # τ a full Δ from the counts
        ((1, 40), 0, 1.0),
        ((4, 5, 6), 1, 5.0),
        ((29, 3), 0, 5.0),              # cells of 30 or more
        ((30, 0), 0, 30.0),
        ((60, 40), 1, 50.0),            # 100 records, then 101
        ((99, 1), 1, 1.0),
        ((0, 0, 0, 0, 0), 2, 2.0),
        ((10_000, 200), 1, 200.0),
    ]),
    epsilon=AUDIT_EPSILON, planted_leak=_occupied_only, n_samples=2_000, seed=AUDIT_SEED)


@exercise("06.3", answer="my_histogram",
          hints=("Which cells get noise in your release? A cell that is kept proves someone is in it unless "
                 "an empty cell can be kept too.",
                 "Every cell of the domain needs its own noise, the empty ones too; the threshold comes after "
                 "the noise, and the released value of a kept cell is its noisy count.",
                 "One record changes one cell by 1: Laplace noise of scale Δ/ε on every count, keep the noisy "
                 "counts above τ and return 0 for the others; draw everything from rng."),
          why="{evidence} Noise on every cell of the public domain makes an empty cell look like one with a record "
              "up to a factor e^ε, and the threshold is post-processing of the noisy counts.",
          todo=write_function("my_histogram(counts, epsilon, tau, rng)"))
def thresholded_histogram(answer):
    return grade_mechanism(answer, cases=_histogram_battery, audit=HISTOGRAM_AUDIT, seed=BATTERY_SEED,
                           mechanism="the thresholded Laplace mechanism with b = Δ/ε", unit="cell")


@exercise("06.4", answer="empty_cell_change",
          hints=("Write the empty cell's survival probability P(Laplace(Δ/ε_h) > τ) with τ = A·ln(n)/ε_h.",
                 "Divide both the threshold and the noise scale by ε_h: what is left of ε_h in the "
                 "probability?"),
          why="τ = A·ln(n)/ε_h grows exactly as fast as the noise scale Δ/ε_h, so ε_h cancels: "
              "P = ½·n^(−A/Δ) at every ε.")
def empty_cell_floor(answer):
    from ..publish.sparse_histogram import survival_probability

    small, large = (survival_probability(0.0, 135, eps, 0.5, 1.0) for eps in (0.1, 1.0))
    if np.isclose(small, large, rtol=1e-9):
        return choice(answer, "b", "stays the same")
    return choice(answer, *(("a", "grows") if small > large else ("c", "shrinks")))


@exercise("06.5", answer="fake_cells",
          hints=("Each empty cell survives independently, with the same probability: find it, then count.",
                 "Each empty cell survives with probability ½·n^(−A/Δ), whatever ε_h; multiply by the number "
                 "of empty cells."),
          why="½·10,000^(−0.5) = {p:g} per empty cell, so about {cells:.0f} of the 20,000 survive: every one a "
              "block of about τ + noise-scale fake records.")
def surviving_empty_cells(answer):
    from ..publish.sparse_histogram import survival_probability

    p = survival_probability(0.0, 10_000, 1.0, 0.5, 1.0)
    return right_if(close(answer, 20_000 * p), p=p, cells=20_000 * p)
