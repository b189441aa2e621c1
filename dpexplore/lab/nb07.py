"""Checks of notebook 07, the showdown: sequential composition (Dwork & Roth 2014, Thm 3.16), and
reading the stored sweep (``notebooks/results/07_showdown_*``) that the notebook's charts draw, and
the stored shape benchmark (``notebooks/results/07_fidelity.csv``, with MST's rows of
``peers_messy.csv``).
"""
from __future__ import annotations

import json

from ._core import choice, close, exercise, right_if
from ._stored import read_results, results_path


@exercise("07.1", answer="sweep_epsilon",
          hints=("Sequential composition adds the ε of every fit that sees the same person.",
                 "Count the fits per method (budgets × runs), then the methods, and add up their ε."),
          why="{methods} methods × {runs} runs × ({budgets}) = {total:g}: a benchmark that refits on the same "
              "people is no release — its ε adds up.")
def sweep_composition(answer):
    meta = json.loads(results_path("07_showdown_sweep.json").read_text())
    methods, runs = len(meta["methods"]["Adult"]), meta["repetitions"]
    total = methods * runs * sum(meta["epsilons"])
    return right_if(close(answer, total), methods=methods, runs=runs, total=total,
                    budgets=" + ".join(f"{e:g}" for e in meta["epsilons"]))


@exercise("07.2", answer="projected_vs_diffgen",
          hints=("Find ε = 0.03 at the left of the Adult panel.",
                 "Compare the two lines there (or the ε = 0.03 column of the table in section 2)."),
          why="the projected histogram's median is {relation} DiffGen's at ε = 0.03: one histogram does not protect "
              "a method from a small budget by itself (section 6).")
def projected_vs_diffgen(answer):
    results = read_results("07_showdown_results.csv")
    adult = results[(results["dataset"] == "Adult") & (results["metric"] == "accuracy")]
    smallest = adult.loc[adult["epsilon"] > 0, "epsilon"].min()
    medians = adult[adult["epsilon"] == smallest].groupby("method")["value"].median()
    below = medians["Projected histogram"] < medians["DiffGen"]
    return right_if(choice(answer, "below" if below else "above"), relation="below" if below else "above")


@exercise("07.3", answer="band_edge",
          hints=("A quantile of a few sorted values is interpolated between them: find its position.",
                 "The 25 % quantile of three sorted values x₁ ≤ x₂ ≤ x₃ sits at position 0.25·(3 − 1) between "
                 "them."),
          why="at position {position:g} between x₁ and x₂: {where} — a spread of three runs, not a confidence "
              "interval.")
def band_edge(answer):
    import pandas as pd

    from ..evaluate.sweeps import summarise

    runs = [0.70, 0.76, 0.80]   # three runs of one (method, ε)
    toy = pd.DataFrame({"method": "m", "epsilon": 1.0, "run": range(3), "metric": "accuracy",
                        "value": runs, "seconds": 1.0})
    q25 = float(summarise(toy)["q25"].iloc[0])
    position = (q25 - runs[0]) / (runs[1] - runs[0])
    if abs(position - 0.5) < 1e-9:
        return right_if(choice(answer, "b"), position=position, where="halfway between the lowest run and the median")
    letter = "c" if q25 == runs[0] else "a"
    return right_if(choice(answer, letter), position=position,
                    where="not halfway between the lowest run and the median")


@exercise("07.4", answer="table_for_crosstabs",
          hints=["Use the second chart (the generated table), its lower row (pairs of columns), at ε = 1: "
                 "for cross-tabulations the point furthest left wins, whatever its height.",
                 "A point wins only by a gap larger than the thin lines (the spread of three runs), and "
                 "only against a point with the same guarantee: compare MST's pure-ε point, not its "
                 "(ε, δ) one."],
          why="under the same pure ε-DP at ε = 1, {verdict}; MST under (ε, δ) may come as close, but with a "
              "weaker guarantee. Compare like with like: the same ε, the same δ, several runs.")
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
    gap = options[runner_up] - options[best]
    names = {"a": "PrivPfC", "b": "DiffMulti", "c": "MST"}
    if gap <= spread:
        verdict = (f"{names[best]}'s and {names[runner_up]}'s tables are the closest to the generated table's "
                   f"pairs of columns, {gap:.3f} apart, less than the spread of the runs ({spread:.3f}): these "
                   "runs cannot tell them apart")
        return right_if(choice(answer, "d"), verdict=verdict)
    verdict = (f"{names[best]}'s table is the closest to the generated table's pairs of columns, by {gap:.3f}, "
               f"more than the spread of the runs ({spread:.3f})")
    return right_if(choice(answer, best), verdict=verdict)
