"""Outlined histograms of several samples on one axis (notebooks 10 and 11): a tidy frame from the
samples (:func:`histogram_frame`) and a chart of step lines told apart by colour, dash pattern and
a name written at each peak (:func:`outline_chart`)."""
from __future__ import annotations

from typing import Mapping, Sequence

import altair as alt
import numpy as np
import pandas as pd

from ._accessible import DASHES, OKABE_ITO, describe, spread

__all__ = ["histogram_frame", "outline_chart"]


def histogram_frame(samples: Mapping[str, np.ndarray], edges: Sequence[float]) -> pd.DataFrame:
    """Tidy histogram of several samples on common ``edges``: case, left, right, share (of that
    case's sample falling in the bin), count. Values outside the edges are left out.

    >>> histogram_frame({"a": [0.5, 1.5, 1.6]}, [0, 1, 2])[["case", "left", "count"]].values.tolist()
    [['a', 0.0, 1], ['a', 1.0, 2]]
    """
    edges = np.asarray(edges, dtype=float)
    parts = []
    for name, values in samples.items():
        values = np.asarray(values, dtype=float)
        counts, _ = np.histogram(values, bins=edges)
        parts.append(pd.DataFrame({"case": name, "left": edges[:-1], "right": edges[1:],
                                   "share": counts / max(values.size, 1), "count": counts}))
    return pd.concat(parts, ignore_index=True)


def outline_chart(hist: pd.DataFrame, *, rules: Sequence[tuple[float, str]], x_title: str, title: str, what: str,
                  takeaway: str, width: int = 440, height: int = 200, x_format: str = ".3g") -> alt.LayerChart:
    """Step lines of :func:`histogram_frame` (one per case, told apart by colour and dash pattern,
    named at their peaks, legend below) with dashed rules at ``rules`` [(x, text)], named in the x-axis
    title."""
    cases = list(dict.fromkeys(hist["case"]))
    colors, dashes = OKABE_ITO[: len(cases)], [DASHES[i % len(DASHES)] for i in range(len(cases))]
    data = hist.assign(mid=(hist["left"] + hist["right"]) / 2)
    if rules:
        x_title += " (dashed line: " + "; ".join(r[1] for r in rules) + ")"
    x = alt.X("mid:Q", title=x_title, axis=alt.Axis(format=x_format))
    color = alt.Color("case:N", sort=cases, scale=alt.Scale(domain=cases, range=colors),
                      legend=alt.Legend(orient="bottom", direction="vertical", title=None, symbolType="stroke",
                                        symbolStrokeWidth=2, labelLimit=400))
    lines = alt.Chart(data).mark_line(interpolate="step", strokeWidth=2.2).encode(
        x=x, y=alt.Y("share:Q", title="share of the releases"), color=color,
        strokeDash=alt.StrokeDash("case:N", sort=cases, scale=alt.Scale(domain=cases, range=dashes), legend=None),
        tooltip=[alt.Tooltip("case:N"), alt.Tooltip("left:Q", format=x_format),
                 alt.Tooltip("right:Q", format=x_format), alt.Tooltip("share:Q", format=".3f")])
    peaks = data.loc[data.groupby("case", sort=False)["share"].idxmax()].copy()
    peaks["label_y"] = spread(peaks["share"].to_numpy(), float(data["share"].max()) * 0.15)
    names = alt.Chart(peaks).mark_text(dy=-8, fontSize=10, fontWeight="bold").encode(
        x=alt.X("mid:Q"), y=alt.Y("label_y:Q"), text=alt.Text("case:N"),
        color=alt.Color("case:N", sort=cases, scale=alt.Scale(domain=cases, range=colors), legend=None))
    layers = [lines, names]
    if rules:      # named in the axis title: a label beside the rule would cross the peaks' names
        marks = pd.DataFrame({"mid": [r[0] for r in rules], "text": [r[1] for r in rules]})
        layers.append(alt.Chart(marks).mark_rule(color="black", strokeDash=[4, 3]).encode(
            x=alt.X("mid:Q"), tooltip=[alt.Tooltip("text:N")]))
    what = what.rstrip(".") + (f" The {len(cases)} cases ({'; '.join(cases)}) are outlined histograms told apart by "
                               "colour and dash pattern and named at their peaks.")
    return describe(alt.layer(*layers).properties(title=title, width=width, height=height), what, takeaway)
