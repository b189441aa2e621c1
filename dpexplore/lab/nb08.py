"""Checks of notebook 08, your data: the unit of privacy (group privacy, Dwork & Roth 2014 §2.3),
public cut points for long-tailed counts, and PrivPfC's grid occupancy (Su et al. 2018) in the
stored sweep ``notebooks/results/08_messy_sweep.csv``.
"""
from __future__ import annotations

from ._core import choice, close, exercise, right_if
from ._stored import read_results


PATIENT_EPSILON, MAX_STAYS = 1.0, 4       # 08.1's givens


@exercise("08.1", answer="eps_per_stay",
          hints=("One row is a stay, but the hospital protects patients: how many rows can one patient own?",
                 "By group privacy a patient with k stays is protected at k times the per-stay ε; choose the "
                 "per-stay ε so that k times it is the patient's ε."),
          why="with at most {stays} stays per patient, ε = 1/{stays} per stay gives each patient "
              "{stays} × {per_stay:g} = {patient:g}.")
def epsilon_per_stay(answer):
    per_stay = PATIENT_EPSILON / MAX_STAYS
    return right_if(close(answer, per_stay), stays=MAX_STAYS, per_stay=per_stay, patient=PATIENT_EPSILON)


def _letter_for_share(share: float) -> str | None:
    """The choice a share of rows matches ("a" about an eighth, "b" about half, "c" over 80 %)."""
    return "c" if share > 0.8 else ("b" if 0.35 <= share <= 0.65 else ("a" if share <= 0.25 else None))


@exercise("08.2", answer="first_bin_share",
          hints=("The column is long-tailed: where do most stays' visit counts lie?",
                 "Compare that with the first equal-width bin, 0–7."),
          why="{share:.0%} of the stays list at most 7 visits, so an equal-width grid over [0, 60] lumps them into its "
              "first bin; long-tail cut points keep that information.")
def first_equal_width_bin(answer):
    from ..datasets import make_messy_table

    visits = make_messy_table(6000, random_state=2026)["n_visits"]
    share = float((visits <= 7).mean())
    letter = _letter_for_share(share)
    return right_if(letter is not None and choice(answer, letter), share=share)


@exercise("08.3", answer="records_per_cell",
          hints=("Find the largest ε on the chart's x axis.",
                 "Read PrivPfC's expected records per cell there (mind the log scale)."),
          why="at the largest ε PrivPfC picks grids with about {per_cell:.1f} records per cell — {label} — so "
              "coarsen: fewer cut points, grouped categories, fewer columns.")
def records_per_cell(answer):
    sweep = read_results("08_messy_sweep.csv")
    privpfc = sweep[sweep["method"] == "PrivPfC"]
    per_cell = float(privpfc.loc[privpfc["epsilon"] == privpfc["epsilon"].max(), "records_per_cell"].median())
    letter = "a" if per_cell > 50 else ("b" if per_cell >= 5 else ("c" if per_cell < 2 else None))
    labels = {"a": "more than 50", "b": "between 5 and 50", "c": "about one or fewer"}
    return right_if(letter is not None and choice(answer, letter, labels[letter]), per_cell=per_cell,
                    label=labels.get(letter, ""))
