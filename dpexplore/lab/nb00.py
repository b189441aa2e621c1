"""Checks of notebook 00 (what differential privacy promises; the Adult data and its taxonomies)."""
from __future__ import annotations

import math

from ._core import as_probability, close, exercise, right_if, right_option

P_WITHOUT, EPSILON_00_1 = 0.10, 0.5       # 00.1's givens


@exercise("00.1", answer="with_you",
          hints=("ε-DP bounds a ratio: with you in the data, the probability of any outcome is at most a fixed "
                 "factor times its probability without you. Which factor?",
                 "The factor is e^ε: multiply the probability without you by e^0.5 (0.25 and \"25%\" are both "
                 "fine as answers)."),
          why="{p0:.2f} × e^{epsilon:g} ≈ {p:.3f}: with you in the data the event is at most about {percent:.1f} % "
              "likely.")
def probability_bound(answer):
    # Dwork & Roth 2014, Def. 2.4: Pr[M(D) ∈ S] ≤ e^ε Pr[M(D') ∈ S]
    p = P_WITHOUT * math.exp(EPSILON_00_1)
    return right_if(close(as_probability(answer), p), p0=P_WITHOUT, epsilon=EPSILON_00_1, p=p, percent=100 * p)


SUBSTITUTION_OPTIONS = {"a": "ε", "b": "2ε", "c": "no guarantee at all", "d": "ε/2"}   # as in the notebook
_SUBSTITUTION = ("83bcec5029792c6deec04d51", "d4e570f7b9db2ecc3ad192ba", "0c637fcbc89a77ab3dda4ffa")


@exercise("00.2", answer="substitution",
          hints=("Write the change as add/remove steps: how few additions and removals turn D into D'?",
                 "Each add/remove step costs up to ε, and k steps cost up to kε (group privacy)."),
          why="a substitution is one removal plus one addition, so the add/remove guarantee ε gives {option} "
              "(group privacy, Dwork & Roth 2014 §2.3).")
def substitution(answer):
    option = right_option(answer, "00.2", _SUBSTITUTION, SUBSTITUTION_OPTIONS)
    return right_if(option is not None, option=option)


STAYS, EPSILON_00_3 = 3, 0.5               # 00.3's givens


@exercise("00.3", answer="patient_epsilon",
          hints=("What is one record of this table: a patient, or a stay?",
                 "The patient's stays are separate records, and each costs up to ε (group privacy: k records, "
                 "kε)."),
          why="{stays} records of one patient are protected at {stays} × {epsilon:g} = {value:g}, not {epsilon:g}: "
              "the unit of privacy is what one record is.")
def unit_of_privacy(answer):
    value = STAYS * EPSILON_00_3
    return right_if(close(answer, value), stays=STAYS, epsilon=EPSILON_00_3, value=value)


@exercise("00.4", answer="always_poor",
          hints=("Always answering one class is right exactly for the people in that class.",
                 "Read the share of the larger bar, ≤50K (a fraction like 0.7, or a percentage like 70)."),
          why="{percent:.1f} % of the people earn at most 50K, so the constant answer '≤50K' is right {percent:.1f} % "
              "of the time: the baseline every private classifier must beat.")
def majority_baseline(answer):
    from ..datasets import load_adult
    frame, schema = load_adult()
    share = float(frame[schema.target].value_counts(normalize=True).max())
    return right_if(abs(as_probability(answer) - share) <= 0.005, percent=100 * share)


@exercise("00.5", answer="age_intervals",
          hints=("Count the boxes in the age tree's rows, starting from the root (depth 0).",
                 "Depth 2 is two rows below the root; the heat table above gives the same number."),
          why="the age range is halved at every depth: {sizes} intervals at depths 0, 1, 2; depth 2 is the "
              "papers' level 3.")
def age_nodes_at_depth_2(answer):
    sizes = _adult_age_levels()
    value = float(answer)
    return right_if(value == int(value) and int(value) == sizes[2], sizes=", ".join(str(s) for s in sizes[:3]))


def _adult_age_levels() -> list[int]:
    from ..datasets import load_adult
    return list(load_adult()[1]["age"].taxonomy.level_sizes)
