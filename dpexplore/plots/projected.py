"""Charts for Vinterbo's projected histograms: pure functions, tidy data in, altair chart out."""
from __future__ import annotations

from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from ._accessible import DASHES, OKABE_ITO, SHAPES, cycle, describe, fmt

__all__ = ["selection_chart", "histogram_chart", "survival_chart", "auc_chart", "budget_chart", "summary_text"]

_STATUS_COLORS = alt.Scale(domain=["kept", "kept, empty in truth", "dropped", "empty, dropped"],
                           range=["#4c78a8", "#e45756", "#bab0ac", "#eeeeee"])


def selection_chart(selection: pd.DataFrame, width: int = 160) -> alt.Chart:
    """PRIVATEKD step by step: each candidate's selection probability, the pick highlighted.

    ``selection``: columns step, attribute, gain, probability, chosen (``ProjectedHistogram.diagnostics(X, y)["selection"]``, not private).
    """
    data = selection.assign(picked=np.where(selection["chosen"], "picked", "not picked"),
                            gain=selection["gain"].round(2), probability=selection["probability"].round(4))
    picks = ", ".join(f"step {int(st)}: {a}" for st, a in zip(data.loc[data["chosen"], "step"],
                                                              data.loc[data["chosen"], "attribute"]))
    return describe(alt.Chart(data).mark_bar().encode(
        x=alt.X("probability:Q", scale=alt.Scale(domain=[0, 1]), title="P(pick)"),
        y=alt.Y("attribute:N", sort="-x", title=None),
        color=alt.Color("picked:N", scale=alt.Scale(domain=["picked", "not picked"], range=["#f58518", "#9ecae9"]),
                        title=None),
        tooltip=[alt.Tooltip("step"), alt.Tooltip("attribute"), alt.Tooltip("gain"), alt.Tooltip("probability")],
    ).properties(width=width, height=alt.Step(14)).facet(
        column=alt.Column("step:O", title="greedy step")).resolve_scale(y="independent"),
        "Bars, one panel per greedy step of PRIVATEKD: each candidate attribute's probability of being "
        "picked, the picked one in orange.",
        f"Take-away: the picks were {picks or 'none'}; a pick is random, weighted towards the larger gains.")


def histogram_chart(table: pd.DataFrame, tau: float, width: int = 420) -> alt.LayerChart:
    """True counts (black ticks) and released noisy counts (horizontal bars) of every cell, τ as a
    red rule. One row per cell · class, labels read horizontally (they are hidden beyond 60 rows).

    ``table``: columns cell, class, true_count, noisy_count (NaN if dropped), status.
    """
    data = table.assign(key=table["cell"] + " · " + table["class"].astype(str),
                        shown=table["noisy_count"].fillna(0.0))
    many = len(data) > 60
    # no y title: beside long cell labels it would overlap them; the chart's title names the rows
    base = alt.Chart(data).encode(y=alt.Y("key:N", sort=None, title=None,
                                          axis=alt.Axis(labels=not many, labelLimit=240, ticks=not many)))
    bars = base.mark_bar(opacity=0.85).encode(
        x=alt.X("shown:Q", title="count"),
        color=alt.Color("status:N", scale=_STATUS_COLORS, title="cell",
                        legend=alt.Legend(orient="bottom", columns=2)),
        tooltip=[alt.Tooltip("cell"), alt.Tooltip("class"), alt.Tooltip("true_count"),
                 alt.Tooltip("noisy_count:Q", format=".1f"), alt.Tooltip("status")])
    ticks = base.mark_tick(color="black", thickness=2).encode(x=alt.X("true_count:Q"))
    rule = alt.Chart(pd.DataFrame({"tau": [tau]})).mark_rule(color="red", strokeDash=[6, 3]).encode(x=alt.X("tau:Q"))
    text = alt.Chart(pd.DataFrame({"tau": [tau], "label": [f"τ = {tau:.2f}"]})).mark_text(
        align="left", dx=4, baseline="top", color="red").encode(
        x=alt.X("tau:Q"), y=alt.YValue(2), text=alt.Text("label:N"))
    step = 5 if many else 14
    kept = data[data["status"].astype(str).str.startswith("kept")]
    empty_kept = int((data["status"] == "kept, empty in truth").sum())
    return describe(
        (bars + ticks + rule + text).properties(
            width=width, height=alt.Step(step),
            title="Rows: cell · class; bars: released noisy counts, black ticks: true counts (not private)"),
        f"Horizontal bars of the released noisy count of each of {len(data)} cell · class pairs, the true "
        f"count as a black tick and the threshold τ = {tau:.2f} as a red dashed line.",
        f"Take-away: {len(kept)} pairs pass τ and are kept"
        + (f", {empty_kept} of them empty in truth" if empty_kept else "")
        + "; the others are dropped.")


def survival_chart(table: pd.DataFrame, floor: float | None = None, width: int = 420) -> alt.LayerChart:
    """P(a cell with true count z survives the threshold) against z (eq. 5), one line per ε_h,
    with τ marked and the ε-independent floor for empty cells.

    ``table``: columns z, probability, epsilon_h, tau.
    """
    levels = list(dict.fromkeys(table["epsilon_h"]))
    n = len(levels)
    # a colour-blind-safe colour, a point shape and a dash pattern per ε_h: one legend for all three
    color = alt.Color("epsilon_h:N", title="ε_h", sort=levels, scale=alt.Scale(domain=levels, range=cycle(OKABE_ITO[:7], n)))
    lines = alt.Chart(table).mark_line(point=alt.OverlayMarkDef(filled=True, size=45)).encode(
        x=alt.X("z:Q", title="true count z of the cell"),
        y=alt.Y("probability:Q", scale=alt.Scale(domain=[0, 1]), title="P(cell kept)"),
        color=color,
        shape=alt.Shape("epsilon_h:N", title="ε_h", sort=levels, scale=alt.Scale(domain=levels, range=cycle(SHAPES, n))),
        strokeDash=alt.StrokeDash("epsilon_h:N", title="ε_h", sort=levels,
                                  scale=alt.Scale(domain=levels, range=cycle(DASHES, n))),
        tooltip=[alt.Tooltip("z"), alt.Tooltip("probability:Q", format=".4f"), alt.Tooltip("epsilon_h")])
    taus = alt.Chart(table.drop_duplicates("epsilon_h")).mark_rule(strokeDash=[4, 3], opacity=0.7).encode(
        x=alt.X("tau:Q"), color=color)
    layers = [lines, taus]
    floor_text = ""
    if floor is not None:
        marker = pd.DataFrame({"floor": [floor], "label": [f"floor for empty cells: {floor:.3g}"]})
        layers += [alt.Chart(marker).mark_rule(color="gray").encode(y=alt.Y("floor:Q")),
                   alt.Chart(marker).mark_text(align="right", dy=-6, color="#555555", fontSize=10).encode(
                       y=alt.Y("floor:Q"), x=alt.XValue(width - 2), text=alt.Text("label:N"))]
        floor_text = f"; a grey line marks the probability {floor:.3g} that an empty cell is kept, whatever ε_h"
    return describe(
        alt.layer(*layers).properties(width=width, height=260,
                                      title="P(cell kept) against its true count, one line per ε_h"),
        f"Lines of the probability that a cell with true count z survives the threshold, against z, for "
        f"ε_h = {', '.join(map(str, levels))} (each with its own colour, point shape and dash); dashed rules mark "
        f"each τ{floor_text}.",
        "Take-away: cells well above τ are almost always kept and cells well below are dropped; a larger "
        "ε_h makes the step from dropped to kept sharper.")


def auc_chart(sweep: pd.DataFrame, width: int = 260) -> alt.Chart:
    """Median CV AUC against the swept parameter, one line per method, one panel per dataset
    (Fig. 2 of the paper), with the interquartile range as a band."""
    g = sweep.groupby(["dataset", "parameter", "value", "method"])["auc"]
    data = pd.concat({"median": g.median(), "q25": g.quantile(0.25), "q75": g.quantile(0.75)}, axis=1).reset_index()
    param = data["parameter"].iloc[0] if len(data) else "value"
    scale = alt.Scale(type="log") if param == "epsilon" else alt.Scale(zero=False)
    axis = alt.Axis(values=sorted(data["value"].unique().tolist()), format="~g", labelOverlap="greedy")
    base = alt.Chart(data).encode(x=alt.X("value:Q", scale=scale, title=param, axis=axis),
                                  color=alt.Color("method:N", title=None))
    band = base.mark_area(opacity=0.15).encode(y=alt.Y("q25:Q"), y2=alt.Y2("q75:Q"))
    line = base.mark_line(point=True).encode(
        y=alt.Y("median:Q", title="median AUC", scale=alt.Scale(zero=False)),
        tooltip=[alt.Tooltip("method"), alt.Tooltip("value"), alt.Tooltip("median:Q", format=".3f")])
    best = data.loc[data["median"].idxmax()] if len(data) else None
    return describe(
        alt.layer(band, line, data=data).properties(width=width, height=220).facet(
            column=alt.Column("dataset:N", title=None)).resolve_scale(y="independent"),
        f"Lines of the median cross-validated AUC against {param}, one panel per dataset "
        f"({', '.join(map(str, data['dataset'].unique()))}), one line per method with its inter-quartile band.",
        "" if best is None else
        f"Take-away: the highest median AUC is {best['median']:.3f} ({best['method']} on {best['dataset']}, "
        f"{param} = {fmt(best['value'])}).")


def budget_chart(split: dict[str, float], k: int) -> alt.Chart:
    """Where ε went: the noisy record count, the k greedy steps and the histogram."""
    rows = [{"part": "record count", "epsilon": split.get("record count", 0.0)}]
    rows += [{"part": f"selection step {t}", "epsilon": split.get("selection", 0.0) / max(k, 1)}
             for t in range(1, k + 1)] if split.get("selection", 0.0) > 0 else []
    rows.append({"part": "histogram", "epsilon": split["histogram"]})
    data = pd.DataFrame([r for r in rows if r["epsilon"] > 0])
    return describe(
        alt.Chart(data).mark_bar().encode(
            x=alt.X("sum(epsilon):Q", title="ε"), color=alt.Color("part:N", sort=None, title=None),
            order=alt.Order("index:Q"), tooltip=[alt.Tooltip("part"), alt.Tooltip("epsilon:Q", format=".4f")],
        ).transform_window(index="row_number()").properties(width=420, height=40),
        "One stacked bar of the total ε split into its parts: "
        + "; ".join(f"{p} {e:.3g}" for p, e in zip(data["part"], data["epsilon"])) + ".",
        f"Take-away: the histogram gets {split['histogram'] / max(float(data['epsilon'].sum()), 1e-300):.0%} of the budget.")


def summary_text(model: Any, diagnostics: dict | None = None) -> str:
    """One paragraph of the released numbers of a fitted ProjectedHistogram.

    ``diagnostics``: optionally ``model.diagnostics(X, y)`` (NOT private), to add how many kept
    cells were empty in truth.
    """
    h = model.histogram_
    truth = ("" if diagnostics is None else
             f", {int(diagnostics['histogram']['was_empty'].sum())} of them empty in truth (not private)")
    split = model.epsilon_split_
    return (f"k = {model.k_}, γ = {model.gamma_:.3f}, {model.n_bins_} bins per numeric attribute; "
            f"ε: count {split['record count']:.3f}, selection {split['selection']:.3f}, "
            f"histogram {split['histogram']:.3f}\n"
            f"selected (in order): {', '.join(model.selected_)}\n"
            f"τ = {model.threshold_:.2f}, Laplace scale {model.noise_scale_:.2f}; "
            f"{len(h)} of {model.n_cells_} cells kept{truth}; "
            f"synthetic table: {model.synthetic_size_} rows")
