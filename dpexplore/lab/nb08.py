"""Checks of notebook 08, your data: the unit of privacy (group privacy, Dwork & Roth 2014 §2.3),
public cut points for long-tailed counts, and PrivPfC's grid occupancy (Su et al. 2018) in the
stored sweep ``notebooks/results/08_messy_sweep.csv``.
"""
from __future__ import annotations

from ._core import choice, close, exercise
from ._stored import read_results


@exercise("08.1",
          hint="By group privacy a patient with k stays is protected at k times the per-stay ε; choose "
               "the per-stay ε so that k times it is the patient's ε.",
          why="with at most 4 stays per patient, ε = 1/4 per stay gives each patient 4 × 0.25 = 1.",
          wrong=[4, 1, 0.5, "1/4 per patient"], right=[0.25, "0.25", 1 / 4])
def epsilon_per_stay(answer) -> bool:
    patient_epsilon, max_stays = 1.0, 4
    return close(answer, patient_epsilon / max_stays)


def _letter_for_share(share: float) -> str | None:
    """The choice a share of rows matches ("a" about an eighth, "b" about half, "c" over 80 %)."""
    return "c" if share > 0.8 else ("b" if 0.35 <= share <= 0.65 else ("a" if share <= 0.25 else None))


@exercise("08.2",
          hint="The column is long-tailed: think of where most stays' visit counts lie compared with the "
               "first equal-width bin, 0–7.",
          why="most stays list only a few visits, so an equal-width grid over [0, 60] lumps nearly all of "
              "them into its first bin; long-tail cut points keep that information.",
          wrong=["a", "b", "about half"], right=["c", "(c)", " C "])
def first_equal_width_bin(answer) -> bool:
    from ..datasets import make_messy_table

    visits = make_messy_table(6000, random_state=2026)["n_visits"]
    letter = _letter_for_share(float((visits <= 7).mean()))
    return letter is not None and choice(answer, letter)


@exercise("08.3",
          hint="Find the largest ε on the chart's x axis and read PrivPfC's expected records per cell "
               "there (mind the log scale).",
          why="at the largest ε PrivPfC picks grids with about as many cells as records — about one "
              "record per cell or fewer — so coarsen: fewer cut points, grouped categories, fewer columns.",
          wrong=["a", "b", "more than 50"], right=["c", "(c)", "about one or fewer"])
def records_per_cell(answer) -> bool:
    sweep = read_results("08_messy_sweep.csv")
    privpfc = sweep[sweep["method"] == "PrivPfC"]
    per_cell = float(privpfc.loc[privpfc["epsilon"] == privpfc["epsilon"].max(), "records_per_cell"].median())
    letter = "a" if per_cell > 50 else ("b" if per_cell >= 5 else ("c" if per_cell < 2 else None))
    labels = {"a": "more than 50", "b": "between 5 and 50", "c": "about one or fewer"}
    return letter is not None and choice(answer, letter, labels[letter])
