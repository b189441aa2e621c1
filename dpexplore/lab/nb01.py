"""Checks of notebook 01 (Laplace and geometric noise, privacy loss and audits, the exponential
mechanism, budgets)."""
from __future__ import annotations

import math
import re

import numpy as np

from ._core import close, exercise, right_if, write_function
from ._grading import AuditPlan, Case, Refusal, grade_mechanism

# --------------------------------------------------------------------------- 01.3: a graded mechanism
CLASSES = ("a", "b", "c")        # the public classes of the exercise
EPSILON = 1.0                    # the claimed ε
SENSITIVITY = 1.0                # one label moves one class count by 1 (add/remove)
TENS = 10                        # the release shows each noisy count in tens
BATTERY_SEED, AUDIT_SEED = 103, 1
_RELEASE = re.compile(r"^\s*a\s*:\s*(-?\d+)\s+b\s*:\s*(-?\d+)\s+c\s*:\s*(-?\d+)\s*$")
_WIDTH = 14                      # categories per class: the tens within ±40 b of the count


def _leaky_class_counts(labels, rng):
    """The planted leak: the class list is read from the private data (as in the notebook)."""
    from ..mechanisms import laplace
    classes = sorted(set(labels))
    counts = np.array([labels.count(c) for c in classes], dtype=float)
    noisy = laplace(counts, epsilon=EPSILON, random_state=rng)
    return " ".join(f"{c}:{v}" for c, v in zip(classes, np.round(noisy / TENS).astype(int)))


def _tens_shown(release) -> np.ndarray:
    """The three counts in tens of a release such as ``"a:3 b:3 c:0"``."""
    found = _RELEASE.match(release) if isinstance(release, str) else None
    if found is None:
        raise Refusal(f"your release reads {str(release)[:60]!r}: it must list every declared class, a, b and c, "
                      "in that order, as 'a:3 b:3 c:0'.")
    return np.array([int(v) for v in found.groups()], dtype=float)


def _class_count_case(counts, draws: int, rng: np.random.Generator) -> Case:
    """A table with these class counts (shuffled labels): the reference releases each count as
    round((count + L)/10) with L ~ Laplace(Δ/ε), independently; every release of 0 tens or fewer
    is one category (a fair rounding of a negative count may differ)."""
    counts = np.asarray(counts, dtype=int)
    labels = [CLASSES[i] for i in rng.permutation(np.repeat(np.arange(3), counts))]
    b = SENSITIVITY / EPSILON
    rows, tens = [], []
    for c in counts:
        first, last = max(0, math.floor((c - 38 * b) / TENS)), math.ceil((c + 38 * b) / TENS)
        shown = list(range(first, last + 1))         # tens with their own category (first: "or fewer")
        rows.append(np.concatenate([[-np.inf], [(TENS * t + TENS / 2 - c) / b for t in shown[:-1]],
                                    np.full(_WIDTH - len(shown) + 1, np.inf)]))
        tens.append(shown)

    def describe(unit: int, k: int) -> str:
        shown, name = tens[unit], CLASSES[unit]
        if k == 0:
            return f"was reported as {name}:{shown[0]} or fewer"
        return f"was reported as {name}:{shown[k]}{' or more' if k == len(shown) - 1 else ''}"

    def decode(release) -> np.ndarray:
        return (TENS * _tens_shown(release) - counts) / b

    n = int(counts.sum())
    label = f"a table of {n:,} labels (a: {counts[0]:,}, b: {counts[1]:,}, c: {counts[2]:,})"
    return Case(label, lambda: (list(labels),), decode, np.array(rows), counts, n, draws, describe,
                unit_names=[f"class {c}" for c in CLASSES])


def _class_count_battery() -> list[Case]:
    """Generated when the check runs: tables of a handful to 150 labels whose counts sit 2–3 records
    from a rounding edge (where the tens carry most information about the noise scale), some with
    a class of 0, 1 or on an edge; tables past 100 labels with classes of 0, 1 and 50+ records on an
    edge; and tables of 10^4 and 10^5 labels."""
    rng = np.random.default_rng(BATTERY_SEED)
    informative = [10 * j + r for j in range(5) for r in (2, 3, 7, 8)]
    cases = [_class_count_case(counts, 2_800, rng) for counts in ((2, 3, 0), (3, 2, 2), (1, 2, 3))]
    for i in range(13):                                   # up to 150 labels: the noise scale
        counts = rng.choice(informative, size=3)
        if i % 2:
            counts[rng.integers(3)] = rng.choice([0, 1, 4, 5, 14, 15, 16, 25])
        cases.append(_class_count_case(counts, 2_800, rng))
    for big in (55, 64, 105, 147, 996, 2_503, 5_006, 9_995):   # past 100 labels, counts ≥ 50 on an edge
        counts = np.array([big, rng.choice([0, 1, 2]), rng.choice([13, 14, 15, 16, 17, 45, 54, 55])])
        cases.append(_class_count_case(rng.permutation(counts), 400, rng))
    for counts in ((9_994, 15, 1), (90_004, 9_995, 1)):         # 10^4 and 10^5 labels
        cases.append(_class_count_case(counts, 60, rng))
    return cases


def _audited_class_counts(release):
    def run(labels, rng):
        return release(list(labels), rng)
    return run


def _labels(a: int, b: int, c: int) -> tuple:
    return ("a",) * a + ("b",) * b + ("c",) * c


CLASS_COUNT_AUDIT = AuditPlan(
    mechanism=_audited_class_counts,
    pairs=tuple((f"the tables {lbl} and one more label {extra!r}", _labels(*abc), _labels(*abc) + (extra,))
                for lbl, abc, extra in [
                    ("of 30 a and 30 b", (30, 30, 0), "c"),            # the notebook's pair: c absent, then present
                    ("of 30 a, 30 b and 14 c", (30, 30, 14), "c"),     # 1.4 → 1.5 tens: a rounding edge
                    ("of 30 a, 30 b and 15 c", (30, 30, 15), "c"),
                    ("of 30 a, 30 b and 1 c", (30, 30, 1), "c"),       # count ≤ 1
                    ("of 2 a and 3 b", (2, 3, 0), "a"),                # a handful of records
                    ("of 100 a and 1 b", (100, 1, 0), "c"),            # past 100 labels
                    ("of 100 a, 50 b and 24 c", (100, 50, 24), "c"),
                    ("of 54 a and 9 b", (54, 9, 0), "a"),              # a count of 50 or more on an edge
                    ("of 145 a and 2 c", (145, 0, 2), "a"),
                    ("of 995 a, 4 b and 5 c", (995, 4, 5), "a"),
                ]),
    epsilon=EPSILON, planted_leak=_leaky_class_counts, n_samples=2_000, seed=AUDIT_SEED)


def _allowed():
    from ..mechanisms import laplace, laplace_scale    # the notebook's building blocks
    return (laplace, laplace_scale)


@exercise("01.3", answer="my_class_counts",
          hints=("Where does the function above get its list of classes, and what else in your release depends "
                 "on the table, apart from the noisy counts?",
                 "The classes are declared in advance: a class absent from the table has count 0 and is "
                 "released like any other.",
                 "Count every declared class (a class absent from the table has count 0), add Laplace noise of "
                 "scale Δ/ε to each count with Δ the most one label can change one count, and keep the output "
                 "format 'a:3 b:3 c:0'."),
          why="{evidence} With the classes declared in advance the release has the same shape on every table; "
              "only the Laplace noise differs, and the same audit flags the class list read from the data.",
          todo=write_function("my_class_counts(labels, rng)"))
def audited_class_counts(answer):
    return grade_mechanism(answer, cases=_class_count_battery, audit=CLASS_COUNT_AUDIT, seed=BATTERY_SEED,
                           mechanism="the Laplace mechanism with b = Δ/ε on each class count", unit="class",
                           allowed=_allowed())


# --------------------------------------------------------------------------- compute and predict
VISITS_EPSILON, MAX_VISITS = 0.5, 5         # 01.1's givens


@exercise("01.1", answer="b_visits",
          hints=("The Laplace mechanism's noise scale depends on two numbers: ε, and how much one person "
                 "can change the answer.",
                 "b = Δ/ε, and Δ is the most one patient can change the count of visits."),
          why="b = Δ/ε = {delta:g}/{epsilon:g} = {b:g}: five times the sensitivity costs as much as a five "
              "times smaller ε.")
def laplace_scale_visits(answer):
    from ..mechanisms import laplace_scale
    b = laplace_scale(epsilon=VISITS_EPSILON, sensitivity=MAX_VISITS)
    return right_if(close(answer, b), delta=MAX_VISITS, epsilon=VISITS_EPSILON, b=b)


BUG_EPSILON, BUG_CALIBRATED, BUG_MOVE = 0.5, 1, 2     # 01.2's givens


@exercise("01.2", answer="true_epsilon",
          hints=("The privacy loss of the Laplace mechanism is at most (how far the answer can move) / b.",
                 "The noise was calibrated for Δ = 1, so b = 1/ε; but the answer moves by 2."),
          why="b = 1/{epsilon:g} = {b:g} while the answer moves by Δ = {move:g}, so the loss reaches Δ/b = "
              "{loss:g}: {factor:g} times the claimed ε.")
def true_epsilon_of_bug(answer):
    from ..mechanisms import laplace_scale
    b = laplace_scale(epsilon=BUG_EPSILON, sensitivity=BUG_CALIBRATED)
    loss = BUG_MOVE / b
    return right_if(close(answer, loss), epsilon=BUG_EPSILON, b=b, move=BUG_MOVE, loss=loss,
                    factor=loss / BUG_EPSILON)


UTILITIES = (10, 8)          # 01.4's two candidates, ε = 1, Δu = 1


@exercise("01.4", answer="p_better",
          hints=("The exponential mechanism gives each candidate a weight that grows with its utility; the "
                 "probability is its share of the total weight.",
                 "Pr[c] ∝ exp(ε·u/(2Δu)): compute the weight of each candidate, then divide the winner's "
                 "weight by the sum."),
          why="the weights are e^({u1}/2) and e^({u2}/2), so the better one wins with 1/(1 + e^-{gap:g}) ≈ "
              "{p:.2f}: a lead of {lead} is not a certainty at ε = 1.")
def exponential_two_candidates(answer):
    from ..mechanisms import exponential_probabilities
    p = exponential_probabilities(list(UTILITIES), epsilon=1.0, sensitivity=1)[0]
    lead = UTILITIES[0] - UTILITIES[1]
    return right_if(close(answer, p, rel=0.01), u1=UTILITIES[0], u2=UTILITIES[1], gap=lead / 2, p=p, lead=lead)


@exercise("01.5", answer="charged",
          hints=("Two rules: questions about the same people add up (sequential composition); questions "
                 "about disjoint groups of people are charged once (parallel composition).",
                 "The four bins of the age histogram hold disjoint people, so together they are charged "
                 "their maximum, not four times."),
          why="{count:.1f} + {select:.1f} + {hist:.1f} = {total:.1f}: the parallel scope charges the four bins "
              "their maximum, {hist:.1f}.")
def charged_budget(answer):
    from ..budget import BudgetAccountant
    acc = BudgetAccountant(1.0)
    e_count, e_select, e_hist = acc.split([1, 3, 5], total=0.9)
    acc.spend(e_count, "record count")
    acc.spend(e_select, "most common education")
    with acc.parallel("age histogram"):
        for b in range(4):
            acc.spend(e_hist, f"bin {b}")
    return right_if(close(answer, acc.spent), count=e_count, select=e_select, hist=e_hist, total=acc.spent)
