"""Pictures for DiffMulti and DiffGen (notebook 03): partitions of a plane, the partition tree,
the split-point mechanism and accuracy curves. Pure functions of tidy data; no privacy here."""
from __future__ import annotations

import json
import re
import textwrap
from typing import Sequence

import altair as alt
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ._accessible import describe, fmt, spread

__all__ = ["partition_chart", "partition_comparison", "tree_figure", "split_density_chart",
           "accuracy_chart", "DescribedFigure"]

class DescribedFigure(Figure):
    """A matplotlib figure that carries a text ``description`` (what it shows and its take-away).

    Displayed in a notebook, its PNG gets the description as alt text in the output's metadata
    (``{"image/png": {"alt": ...}}``, the convention of ``IPython.display.Image(alt=...)``);
    ``notebooks/build.py`` turns that into an ``<img alt=…>`` that JupyterLab and nbconvert show.
    Create it with ``plt.subplots(..., FigureClass=DescribedFigure)`` and set ``.description``.
    """

    description: str = ""

    def _repr_mimebundle_(self, include=None, exclude=None):
        # only metadata here: the PNG itself comes from the inline backend's formatter
        return {}, ({"image/png": {"alt": self.description}} if self.description else {})


def partition_chart(rects: pd.DataFrame, x: str, y: str, *, title: str = "",
                    points: pd.DataFrame | None = None, width: int = 320, height: int = 280,
                    x_ticks: Sequence[str] | None = None, y_ticks: Sequence[str] | None = None) -> alt.Chart:
    """Leaf regions as rectangles coloured by their (noisy) majority class (paper Fig. 3).

    ``rects``: columns x0, x1, y0, y1, majority, count, label_x, label_y (one row per region,
    e.g. ``release.rectangles(x, y)``). ``points``: optional raw records (columns x, y, class)
    drawn on top as small dots. ``x_ticks``/``y_ticks``: names of categorical axis positions.
    """
    data = rects.assign(count=rects["count"].round(1))
    xs = alt.Scale(domain=[float(rects["x0"].min()), float(rects["x1"].max())], nice=False, zero=False)
    ys = alt.Scale(domain=[float(rects["y0"].min()), float(rects["y1"].max())], nice=False, zero=False)
    base = alt.Chart(data).mark_rect(stroke="white", strokeWidth=0.6).encode(
        x=alt.X("x0:Q", title=x, scale=xs, axis=_axis(x_ticks)), x2=alt.X2("x1:Q"),
        y=alt.Y("y0:Q", title=y, scale=ys, axis=_axis(y_ticks)), y2=alt.Y2("y1:Q"),
        color=alt.Color("majority:N", title="noisy majority"),
        opacity=alt.OpacityValue(0.75),
        tooltip=[alt.Tooltip("label_x:N", title=x), alt.Tooltip("label_y:N", title=y),
                 alt.Tooltip("majority:N"), alt.Tooltip("count:Q", title="noisy count")],
    ).properties(width=width, height=height, title=title)
    shares = rects.groupby("majority")["count"].size()
    what = (f"{title + ': ' if title else ''}the plane of {x} and {y} cut into {len(rects)} regions, each "
            "coloured by the class with the larger noisy count"
            + ("" if points is None or points.empty else ", with the records as small dots") + ".")
    takeaway = ("Take-away: " + ", ".join(f"{n} regions have majority {m}" for m, n in shares.items())
                + "; where records are dense the regions are small.")
    if points is None or points.empty:
        return describe(base, what, takeaway)
    dots = alt.Chart(points).mark_circle(size=8, opacity=0.5).encode(
        x=alt.X("x:Q", scale=xs), y=alt.Y("y:Q", scale=ys),
        color=alt.Color("class:N", title="noisy majority"))
    return describe(base + dots, what, takeaway)


def _axis(ticks: Sequence[str] | None) -> alt.Axis:
    """Categorical axes: leaf names at the centres of their unit-wide positions."""
    if ticks is None:
        return alt.Axis()
    names = json.dumps([str(t) for t in ticks])
    return alt.Axis(values=[i + 0.5 for i in range(len(ticks))], labelExpr=f"{names}[floor(datum.value)]",
                    labelFontSize=8)


def partition_comparison(multi: pd.DataFrame, grid: pd.DataFrame, x: str, y: str, *,
                         titles: tuple[str, str] = ("DiffMulti (multidimensional)", "DiffGen (single-dimensional)"),
                         **kwargs) -> alt.HConcatChart:
    """DiffMulti's partition next to DiffGen's grid on the same plane (paper Fig. 3 b/c)."""
    return describe(
        alt.hconcat(partition_chart(multi, x, y, title=titles[0], **kwargs),
                    partition_chart(grid, x, y, title=titles[1], **kwargs)).resolve_scale(color="shared"),
        f"Two maps of the plane of {x} and {y}: left, {titles[0]} with {len(multi)} regions; right, "
        f"{titles[1]} with {len(grid)} regions; each region coloured by its noisy majority class.",
        "Take-away: the multidimensional partition cuts each region on its own, so it is fine where "
        "records are dense and coarse elsewhere; the single-dimensional one applies every cut to all "
        "records and makes a grid.")


def _compact(text: str) -> str:
    """Numbers of five digits or more as 61k / 1.5M, so that a box stays narrow."""
    def short(m: re.Match) -> str:
        v = int(m.group(0))
        return f"{v / 1e6:.3g}M" if abs(v) >= 10**6 else f"{v / 1e3:.3g}k"
    return re.sub(r"(?<![\d.])-?\d{5,}(?![\d.])", short, text)


def tree_figure(tree: pd.DataFrame, *, max_depth: int = 3, width: float = 8.8, fontsize: float = 9) -> plt.Figure:
    """The first levels of a partition tree (paper Fig. 4): each box shows the value a node
    specialized to, its noisy size (as measured by its parent) and its budget h'.

    ``tree``: columns node, parent, depth, h, noisy_size, region (``DiffMulti.tree_``).
    Deeper nodes are summarised by "…" under their ancestor. The figure is ``width`` inches wide
    at 100 dpi (880 px: a notebook shows it unscaled next to an open file browser), labels are
    wrapped and large numbers compacted so that ``fontsize`` stays legible.
    """
    t = tree[tree["depth"] <= max_depth]
    kids = {n: list(g["node"]) for n, g in t.groupby("parent")}
    deeper = set(tree.loc[tree["depth"] == max_depth + 1, "parent"])
    # leaf order by depth-first traversal gives x positions; parents sit above their children
    xpos: dict[int, float] = {}
    counter = [0.0]

    def place(n: int) -> float:
        ch = kids.get(n, [])
        if not ch:
            xpos[n] = counter[0]
            counter[0] += 1
        else:
            xs = [place(c) for c in ch]
            xpos[n] = (min(xs) + max(xs)) / 2
        return xpos[n]

    root = int(t.loc[t["parent"] == -1, "node"].iloc[0])
    place(root)
    n_cols = max(counter[0], 1)
    chars = max(8, int(width * 100 / n_cols / (0.62 * fontsize * 100 / 72)) - 1)   # characters per box line
    depth = int(t["depth"].max())
    texts: dict[int, str] = {}
    for _, row in t.iterrows():
        size = "" if np.isnan(row["noisy_size"]) else f"\n≈{row['noisy_size']:.0f} rec."
        attribute, _, value = _compact(str(row["region"])).partition(": ")
        lines = [attribute + ":"] + textwrap.wrap(value, chars) if value else [attribute]
        texts[int(row["node"])] = "\n".join(lines) + f"{size}\nh'={int(row['h'])}"
    n_lines = max(v.count("\n") + 1 for v in texts.values())
    level_height = 0.3 + 0.2 * n_lines * fontsize / 9     # inches between two levels: boxes never touch
    fig, ax = plt.subplots(figsize=(width, level_height * (depth + 1) + 0.3), dpi=100, FigureClass=DescribedFigure)
    for _, row in t.iterrows():
        n = int(row["node"])
        x, yv = xpos[n], -row["depth"]
        if row["parent"] in xpos:
            ax.plot([xpos[int(row["parent"])], x], [yv + 1, yv], color="0.6", lw=0.8, zorder=1)
        ax.text(x, yv, texts[n], ha="center", va="center", fontsize=fontsize,
                bbox=dict(boxstyle="round,pad=0.25", fc="#eef3fb" if row["children"] else "#fdf1e6", ec="0.5"),
                zorder=2)
        if n in deeper:
            ax.text(x, yv - 0.5, "…", ha="center", va="center", fontsize=fontsize + 1, color="0.4")
    ax.set_xlim(-0.6, n_cols - 0.4)
    ax.set_ylim(-depth - 0.7, 0.45)
    ax.axis("off")
    ax.set_title("Partition tree, first levels (blue: split further, orange: leaf region)", fontsize=fontsize + 1)
    fig.tight_layout(pad=0.2)
    rows = t.set_index("node")
    top = [f"{rows.at[c, 'region']}, ≈{rows.at[c, 'noisy_size']:.0f} records, h'={int(rows.at[c, 'h'])}"
           for c in kids.get(root, [])]
    fig.description = (
        f"Tree diagram of the first {depth + 1} levels of the partition tree ({len(t)} nodes): each box is a "
        "region with the value it was cut to, its noisy size and the number of cuts h' it received; blue "
        "boxes are split further, orange boxes are leaves. "
        f"Take-away: the root splits into {len(top)} regions ({'; '.join(top)}); small regions get no cuts.")
    return fig


def split_density_chart(edges: Sequence[float], probabilities: Sequence[float], *,
                        split: float | None = None, title: str = "", attribute: str = "value") -> alt.Chart:
    """Piecewise-constant density of the private split point (Eq. 12): each piece's probability
    divided by its length, with an optional drawn split point marked."""
    e = np.asarray(edges, dtype=float)
    p = np.asarray(probabilities, dtype=float)
    length = np.diff(e)
    dens = np.divide(p, length, out=np.zeros_like(p), where=length > 0)
    df = pd.DataFrame({"lo": e[:-1], "hi": e[1:], "density": dens, "probability": p.round(4)})
    chart = alt.Chart(df).mark_rect(color="#4c78a8", opacity=0.8).encode(
        x=alt.X("lo:Q", title=attribute, scale=alt.Scale(zero=False, nice=False)), x2=alt.X2("hi:Q"),
        y=alt.Y("density:Q", title="density of the split point"), y2=alt.Y2Datum(0),
        tooltip=[alt.Tooltip("lo:Q"), alt.Tooltip("hi:Q"), alt.Tooltip("probability:Q")],
    ).properties(width=420, height=180, title=title)
    if split is not None:
        chart = chart + alt.Chart(pd.DataFrame({"s": [split]})).mark_rule(color="crimson", strokeWidth=2).encode(
            x=alt.X("s:Q"))
    densest = df.loc[df["density"].idxmax()]
    return describe(
        chart, f"{title + ': ' if title else ''}bars of the density of the private split point on {attribute}, "
        f"piece by piece over {len(df)} pieces" + (f"; the drawn split at {fmt(split)} is a red line." if split is not None else "."),
        f"Take-away: the densest piece is {fmt(densest['lo'])} to {fmt(densest['hi'])}; every piece keeps a "
        "chance, so the split can land anywhere.")


def accuracy_chart(results: pd.DataFrame, *, x: str, baselines: pd.DataFrame | None = None,
                   log_x: bool = True, title: str = "", width: int = 380, height: int = 240) -> alt.Chart:
    """Mean accuracy (± one standard deviation band) per method against ``x`` (h or ε).

    ``results``: columns method, ``x``, mean, std. ``baselines``: columns name, accuracy
    (horizontal rules, e.g. majority class and non-private)."""
    scale = alt.Scale(type="log") if log_x else alt.Scale(zero=False)
    df = results.assign(lo=results["mean"] - results["std"].fillna(0), hi=results["mean"] + results["std"].fillna(0))
    ticks = sorted(df[x].unique().tolist())
    if len(ticks) > 8:   # keep every other tick: no overlapping labels on a narrow log axis
        ticks = ticks[::2]
    enc_x = alt.X(f"{x}:Q", scale=scale, title="ε (total)" if x == "epsilon" else x,
                  axis=alt.Axis(values=ticks, labelExpr="format(datum.value, '~g')", labelOverlap=True))
    line = alt.Chart(df).mark_line(point=True).encode(
        x=enc_x, y=alt.Y("mean:Q", title="accuracy", scale=alt.Scale(zero=False)), color=alt.Color("method:N"),
        tooltip=[alt.Tooltip("method:N"), alt.Tooltip(f"{x}:Q"), alt.Tooltip("mean:Q", format=".3f"),
                 alt.Tooltip("std:Q", format=".3f")])
    band = alt.Chart(df).mark_area(opacity=0.2).encode(x=enc_x, y=alt.Y("lo:Q"), y2=alt.Y2("hi:Q"),
                                                       color=alt.Color("method:N"))
    chart = band + line
    if baselines is not None and not baselines.empty:
        rules = alt.Chart(baselines).mark_rule(strokeDash=[4, 3]).encode(
            y=alt.Y("accuracy:Q"), color=alt.ColorValue("gray"),
            tooltip=[alt.Tooltip("name:N"), alt.Tooltip("accuracy:Q", format=".3f")])
        lo = min(float(df["lo"].min()), float(baselines["accuracy"].min()))
        hi = max(float(df["hi"].max()), float(baselines["accuracy"].max()))
        placed = baselines.assign(label_y=spread(baselines["accuracy"], 13 * (hi - lo) / height))
        labels = alt.Chart(placed).mark_text(align="left", dx=3, dy=-6, fontSize=10, color="gray").encode(
            y=alt.Y("label_y:Q"), text=alt.Text("name:N"), x=alt.XValue(2))
        chart = chart + rules + labels
    best = df.loc[df["mean"].idxmax()]
    refs = ("" if baselines is None or baselines.empty else
            "; references as grey dashed lines: " + ", ".join(f"{n} {a:.3f}" for n, a in zip(baselines["name"], baselines["accuracy"])))
    return describe(
        chart.properties(width=width, height=height, title=title),
        f"{title + ': ' if title else ''}lines of the mean accuracy (band: ± one standard deviation) against "
        f"{'ε' if x == 'epsilon' else x} for {', '.join(map(str, df['method'].unique()))}{refs}.",
        f"Take-away: the best mean accuracy is {best['mean']:.3f} ({best['method']} at {x} = {fmt(best[x])}).")
