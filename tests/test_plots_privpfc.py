"""Charts of notebook 02: no line hidden under another, numbering as in notebook 00, the drawn grid shown."""
from __future__ import annotations

import pandas as pd

from dpexplore.plots.privpfc import error_chart, grid_levels_chart, selection_chart


def _layers(spec):
    return spec["layer"] if "layer" in spec else [spec]


def test_error_chart_draws_coinciding_methods_apart():
    rows = [{"epsilon": e, "seed": s, "method": m, "error": 0.2 - 0.01 * s}
            for e in (0.05, 0.1, 1.0) for s in range(3)
            for m in ("PrivPfC histogram classifier", "tree on PrivPfC synthetic data")]   # identical errors
    chart = error_chart(pd.DataFrame(rows), {"majority": 0.24})
    spec = chart.to_dict()
    data = pd.DataFrame(next(v for v in spec["datasets"].values() if v and "median" in v[0]))
    at = data[data["epsilon"] == 0.1].set_index("method")["x"]
    assert at.nunique() == 2 and (at / 0.1).between(0.9, 1.1).all()     # side by side, close to ε
    marks = [layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"] for layer in _layers(spec)]
    assert "line" in marks and "point" in marks
    line = next(layer for layer in _layers(spec) if layer["mark"]["type"] == "line")
    assert line["encoding"]["strokeDash"]["field"] == "method"      # and a dash of its own
    axis = next(layer for layer in _layers(spec) if layer["mark"]["type"] == "line")["encoding"]["x"]["axis"]
    assert axis["values"] == [0.05, 0.1, 1.0]                       # the swept ε only: no crowded log ticks
    assert chart.to_dict(validate=True)


def test_grid_levels_use_our_depths_with_the_paper_level_in_the_title():
    levels = pd.DataFrame({"attribute": ["age"] * 3, "depth": [0, 1, 2], "level": [1, 2, 3], "nodes": [1, 4, 16],
                           "chosen": [False, True, False], "refined": [True] * 3})
    x = grid_levels_chart(levels).to_dict()["layer"][0]["encoding"]["x"]
    assert x["field"] == "depth" and x["title"].startswith("depth (0 = root") and "paper level = depth + 1" in x["title"]


def test_selection_chart_always_shows_the_drawn_grid():
    cand = pd.DataFrame({"grid": [f"g{i}" for i in range(20)], "probability": [0.5 ** i for i in range(20)],
                         "size": range(20), "chosen": [i == 15 for i in range(20)]})
    shown = pd.DataFrame(next(iter(selection_chart(cand, top=5).to_dict()["datasets"].values())))
    assert len(shown) == 6 and shown["chosen"].sum() == 1
