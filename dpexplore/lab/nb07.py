"""Checks of notebook 07, the showdown: sequential composition (Dwork & Roth 2014, Thm 3.16), and
reading the stored sweep (``notebooks/results/07_showdown_*``) that the notebook's charts draw, and
the stored shape benchmark (``notebooks/results/07_fidelity.csv``, with MST's rows of
``peers_messy.csv``).
"""
from __future__ import annotations

import json

from ._core import choice, close, exercise
from ._stored import read_results, results_path


@exercise("07.1",
          hint="Sequential composition adds the ε of every fit that sees the same person: count the "
               "fits per method (budgets × runs), then the methods.",
          why="6 methods × 3 runs × (0.03 + 0.1 + 0.3 + 1) = 25.74: a benchmark that refits on the same "
              "people is no release — its ε adds up.",
          wrong=[1.0, 1.43, 4.29, 8.58], right=[25.74, "25.7", 6 * 3 * 1.43])
def sweep_composition(answer) -> bool:
    meta = json.loads(results_path("07_showdown_sweep.json").read_text())
    fits_per_person = len(meta["methods"]["Adult"]) * meta["repetitions"]
    return close(answer, fits_per_person * sum(meta["epsilons"]))


@exercise("07.2",
          hint="Find ε = 0.03 at the left of the Adult panel and compare the two lines there "
               "(or the ε = 0.03 column of the table in section 2).",
          why="the projected histogram's median is far below DiffGen's at ε = 0.03: one histogram does "
              "not protect a method from a small budget by itself (section 6).",
          wrong=["above", "Above ", "same"], right=["below", " Below", "below."])
def projected_vs_diffgen(answer) -> bool:
    results = read_results("07_showdown_results.csv")
    adult = results[(results["dataset"] == "Adult") & (results["metric"] == "accuracy")]
    smallest = adult.loc[adult["epsilon"] > 0, "epsilon"].min()
    medians = adult[adult["epsilon"] == smallest].groupby("method")["value"].median()
    return choice(answer, "below" if medians["Projected histogram"] < medians["DiffGen"] else "above")


@exercise("07.3",
          hint="The 25 % quantile of three sorted values x₁ ≤ x₂ ≤ x₃ is interpolated at position "
               "0.25·(3 − 1) = 0.5 between them.",
          why="at position 0.5 between x₁ and x₂: halfway between the lowest run and the median — a "
              "spread of three runs, not a confidence interval.",
          wrong=["a", "c", "the lowest run"], right=["b", "(b)", " B"])
def band_edge(answer) -> bool:
    import pandas as pd

    from ..evaluate.sweeps import summarise

    runs = [0.70, 0.76, 0.80]   # three runs of one (method, ε)
    toy = pd.DataFrame({"method": "m", "epsilon": 1.0, "run": range(3), "metric": "accuracy",
                        "value": runs, "seconds": 1.0})
    q25 = float(summarise(toy)["q25"].iloc[0])
    if abs(q25 - (runs[0] + runs[1]) / 2) < 1e-12:
        return choice(answer, "b")
    return choice(answer, "c" if q25 == runs[0] else "a")


@exercise("07.4",
          hint="Use the second chart (the generated table), its lower row (pairs of columns), at ε = 1: "
               "for cross-tabulations the point furthest left wins, whatever its height, but only by a gap "
               "larger than the thin lines (the spread of three runs). Compare MST's pure-ε point, not its "
               "(ε, δ) one.",
          why="under the same pure ε-DP, PrivPfC's table is the closest to the generated table's pairs of "
              "columns at ε = 1, by more than the spread of the runs; MST under (ε, δ) comes as close, "
              "but with a weaker guarantee. Compare like with like: the same ε, the same δ, several runs.",
          wrong=["c", "d", "MST"], right=["a", "(a)", " A "])
def table_for_crosstabs(answer) -> bool:
    import numpy as np

    shape = read_results("07_fidelity.csv")
    at_one = shape[(shape["dataset"] == "messy") & np.isclose(shape["epsilon"], 1.0)]
    runs = at_one.groupby("method")["tvd_2way"]
    options = {"a": runs.median()["PrivPfC"], "b": runs.median()["DiffMulti"]}
    spread = float((runs.max() - runs.min())[["PrivPfC", "DiffMulti"]].max())   # the longer thin line
    peers = read_results("peers_messy.csv")
    mst = peers[peers["method"].str.startswith("MST") & (peers["delta"] == 0)
                & np.isclose(peers["epsilon"], 1.0) & (peers["metric"] == "tvd_2way")]["value"]
    if len(mst):
        options["c"] = float(mst.mean())     # pure ε, like every dpexplore method (δ = 0)
    best, runner_up = sorted(options, key=options.get)[:2]
    told_apart = options[runner_up] - options[best] > spread
    return choice(answer, best if told_apart else "d")
