"""Checks of notebook 00 (what differential privacy promises; the Adult data and its taxonomies)."""
from __future__ import annotations

import math

from ._core import choice, close, exercise


def _adult_schema():
    from ..datasets import load_adult
    return load_adult()[1]


@exercise("00.1", hint="ε-DP lets the probability of any outcome grow at most by the factor e^ε when "
                       "your record is added: multiply 10 % by e^0.5.",
          why="0.10 × e^0.5 ≈ 0.165: with you in the data the event is at most about 16.5 % likely.",
          wrong=[0.15, 0.5, 0.1 + 0.5, 0.1 * 0.5], right=[0.1 * math.exp(0.5), "0.165", 16.49 / 100])
def probability_bound(answer) -> bool:
    # Dwork & Roth 2014, Def. 2.4: Pr[M(D) ∈ S] ≤ e^ε Pr[M(D') ∈ S]
    return close(answer, 0.1 * math.exp(0.5), rel=0.01)


@exercise("00.2", hint="Changing one person's values is the same as removing the old record and adding "
                       "the new one: two add/remove steps, and each costs up to ε.",
          why="a substitution is one removal plus one addition, so the add/remove guarantee ε gives 2ε "
              "(group privacy for two steps, Dwork & Roth 2014 §2.3).",
          wrong=["a", "c", "d", "ε"], right=["b", " B ", "2ε", "(b)"])
def substitution(answer) -> bool:
    return choice(answer, "b", "2ε", "2 ε", "2eps", "2 epsilon")


@exercise("00.3", hint="The unit of privacy here is a hospital stay, not a patient: the patient's three "
                       "stays are three records, and each costs up to ε (group privacy: k records, kε).",
          why="three records of one patient are protected at 3 × 0.5 = 1.5, not 0.5: the unit of privacy "
              "is what one record is.",
          wrong=[0.5, 0.5 / 3, 3, "1.5 per stay"], right=[1.5, "1.5", 3 * 0.5])
def unit_of_privacy(answer) -> bool:
    return close(answer, 3 * 0.5)


@exercise("00.4", hint="Always answering the larger class is right for everyone in that class: read the "
                       "share of the ≤50K bar (a fraction like 0.7, or a percentage like 70).",
          why="about three people in four earn at most 50K, so the constant answer '≤50K' is right 75.2 % "
              "of the time: the baseline every private classifier must beat.",
          wrong=[0.248, 0.5, 24.8], right=[0.752, 75.2, "75%", "0.75"])
def majority_baseline(answer) -> bool:
    from ..datasets import load_adult
    frame, schema = load_adult()
    share = float(frame[schema.target].value_counts(normalize=True).max())
    text = str(answer).strip()
    value = float(text.rstrip("%")) / 100 if text.endswith("%") else float(answer)
    value = value / 100 if value > 1 else value
    return abs(value - share) <= 0.005


@exercise("00.5", hint="Count the boxes in the age tree's third row (depth 0 is the root, so depth 2 is two "
                       "rows below it); the heat table above gives the same number.",
          why="the age range is halved at every depth: 1, 2, 4, … intervals; depth 2 is the papers' level 3.",
          wrong=[2, 3, 8, "level 3"], right=[4, "4"])
def age_nodes_at_depth_2(answer) -> bool:
    expected = _adult_schema()["age"].taxonomy.level_sizes[2]
    value = float(answer)
    return value == int(value) and int(value) == expected
