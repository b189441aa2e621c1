"""Checks of notebook 01 (Laplace and geometric noise, privacy loss and audits, the exponential
mechanism, budgets)."""
from __future__ import annotations

import numpy as np

from ._core import close, exercise
from ._grading import flags_leak, within_claim

# --------------------------------------------------------------------------- 01.3: the audit grades a mechanism
CLASSES = ("a", "b", "c")        # the public classes of the exercise
AUDIT_SAMPLES = 2_000            # per side: the audit of one pair takes well under a second
TABLE = ["a"] * 30 + ["b"] * 30
# Two pairs of add/remove neighbours (one record of class "c" added). The second puts the count of
# "c" at the rounding edge 14 → 15 (1.4 tens → 1, 1.5 tens → 2), so a release without noise, or with
# too little, changes its output there for certain.
NEIGHBOURS = ((TABLE, TABLE + ["c"]), (TABLE + ["c"] * 14, TABLE + ["c"] * 15))


def _leaky_class_counts(labels, rng):
    """The planted leak: the class list is read from the private data (as in the notebook)."""
    from ..mechanisms import laplace
    classes = sorted(set(labels))
    counts = np.array([labels.count(c) for c in classes], dtype=float)
    noisy = laplace(counts, epsilon=1.0, random_state=rng)
    return " ".join(f"{c}:{v}" for c, v in zip(classes, np.round(noisy / 10).astype(int)))


def _public_class_counts(labels, rng, classes=CLASSES):
    from ..mechanisms import laplace
    counts = np.array([labels.count(c) for c in classes], dtype=float)
    noisy = laplace(counts, epsilon=1.0, random_state=rng)
    return " ".join(f"{c}:{v}" for c, v in zip(classes, np.round(noisy / 10).astype(int)))


def _exact_class_counts(labels, rng):          # public classes, but no noise at all
    return " ".join(f"{c}:{int(np.round(labels.count(c) / 10))}" for c in CLASSES)


def _too_little_noise(labels, rng):             # noise for ε = 100 while claiming ε = 1
    from ..mechanisms import laplace
    counts = np.array([labels.count(c) for c in CLASSES], dtype=float)
    noisy = laplace(counts, epsilon=100.0, random_state=rng)
    return " ".join(f"{c}:{v}" for c, v in zip(CLASSES, np.round(noisy / 10).astype(int)))


def _too_much_noise(labels, rng):               # private, but the counts are drowned
    from ..mechanisms import laplace
    counts = np.array([labels.count(c) for c in CLASSES], dtype=float)
    noisy = laplace(counts, epsilon=0.01, random_state=rng)
    return " ".join(f"{c}:{v}" for c, v in zip(CLASSES, np.round(noisy / 10).astype(int)))


def _tens(release: str) -> dict[str, int]:
    pairs = [item.split(":") for item in str(release).split()]
    return {k.strip(): int(v) for k, v in pairs}


def _useful(mechanism) -> bool:
    """Every public class is reported, in order, and a count of 200 reads as 20 tens almost always
    (Laplace(1) noise moves it across a rounding edge with probability e^-5)."""
    rng = np.random.default_rng(0)
    labels = ["a"] * 200 + ["b"] * 100
    releases = [_tens(mechanism(list(labels), rng)) for _ in range(50)]
    if any(list(r) != list(CLASSES) for r in releases):
        return False
    return np.mean([r["a"] == 20 and r["b"] == 10 for r in releases]) >= 0.8


@exercise("01.3", hint="The audit still finds a loss above ε = 1, or the release is not the noisy counts of "
                       "every public class: where does the list of classes come from? Use the declared "
                       "classes ('a', 'b', 'c'), Laplace noise at ε = 1, and keep the output format "
                       "'a:3 b:3 c:0'.",
          why="with the classes declared in advance the release has the same shape on both neighbours, only "
              "the Laplace noise (ε = 1) differs, and the audit finds no loss above ε; the same audit flags "
              "the class list read from the data.",
          todo="write my_class_counts(labels, rng) in the cell above (a def replacing the None), run it, "
               "then run this cell.",
          wrong=[_leaky_class_counts, _exact_class_counts, _too_little_noise, _too_much_noise, "a:3 b:3 c:0"],
          right=[_public_class_counts])
def audited_class_counts(answer) -> bool:
    if not callable(answer):
        return False
    # the planted leak must be caught, or passing the audit below proves nothing (a power check)
    if not flags_leak(_leaky_class_counts, *_pair(0), 1.0, n_samples=AUDIT_SAMPLES, seed=1):
        raise RuntimeError("the audit missed the planted leak: the check itself is broken")
    return _useful(answer) and all(within_claim(answer, *_pair(i), 1.0, n_samples=AUDIT_SAMPLES, seed=1 + i)
                                   for i in range(len(NEIGHBOURS)))


def _pair(i: int):
    data, neighbour = NEIGHBOURS[i]
    return data, [neighbour]


# --------------------------------------------------------------------------- compute and predict
@exercise("01.1", hint="The noise scale is b = Δ/ε, and Δ is the most one person can change the answer: "
                       "here up to 5 visits.",
          why="b = Δ/ε = 5/0.5 = 10: five times the sensitivity costs as much as a five times smaller ε.",
          wrong=[2.0, 0.1, 2.5, "ten"], right=[10, 10.0, "10"])
def laplace_scale_visits(answer) -> bool:
    from ..mechanisms import laplace_scale
    return close(answer, laplace_scale(epsilon=0.5, sensitivity=5))


@exercise("01.2", hint="The privacy loss is at most (how far the answer moves) / b. The noise was calibrated "
                       "for Δ = 1, so b = 1/ε, but the answer moves by 2.",
          why="b = 1/0.5 = 2 while the answer moves by Δ = 2, so the loss reaches Δ/b = 2 × 0.5 = 1.0: "
              "twice the claimed ε.",
          wrong=[0.5, 0.25, 2.0, 4.0], right=[1.0, "1", 1])
def true_epsilon_of_bug(answer) -> bool:
    from ..mechanisms import laplace_scale
    return close(answer, 2 / laplace_scale(epsilon=0.5, sensitivity=1))


@exercise("01.4", hint="Pr[c] ∝ exp(ε·u/(2Δu)): compute the weight of each candidate, then divide the "
                       "winner's weight by the sum.",
          why="the weights are e^(10/2) and e^(8/2), so the better one wins with 1/(1 + e^-1) ≈ 0.73: "
              "a lead of 2 is not a certainty at ε = 1.",
          wrong=[1.0, 0.5, 0.88, 10 / 18], right=[0.731, "0.73", 73.1 / 100])
def exponential_two_candidates(answer) -> bool:
    from ..mechanisms import exponential_probabilities
    p = exponential_probabilities([10, 8], epsilon=1.0, sensitivity=1)[0]
    return close(answer, p, rel=0.01)


@exercise("01.5", hint="Sequential questions add up; the four bins of the age histogram hold disjoint "
                       "people, so together they are charged once, not four times.",
          why="0.1 + 0.3 + 0.5 = 0.9: the parallel scope charges the four bins their maximum, 0.5.",
          wrong=[2.4, 1.0, 0.5, 0.1 + 0.3 + 4 * 0.5 / 4 + 0.5], right=[0.9, "0.9", 0.9000001])
def charged_budget(answer) -> bool:
    from ..budget import BudgetAccountant
    acc = BudgetAccountant(1.0)
    e_count, e_select, e_hist = acc.split([1, 3, 5], total=0.9)
    acc.spend(e_count, "record count")
    acc.spend(e_select, "most common education")
    with acc.parallel("age histogram"):
        for b in range(4):
            acc.spend(e_hist, f"bin {b}")
    return close(answer, acc.spent)
