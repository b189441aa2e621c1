"""Charts of the method showdown: error against ε with its spread, reference lines, run times."""
from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

__all__ = ["error_chart", "runtime_chart", "ranking_chart"]

_NEED = {"method", "epsilon", "median", "q25", "q75"}


def error_chart(summary: pd.DataFrame, *, metric: str = "error", title: str | None = None) -> alt.Chart:
    """Median error (line + points) and interquartile band per method against ε (log axis);
    methods with ε = inf (majority class, non-private) are drawn as horizontal rules.
    Faceted by ``dataset`` when the column is present."""
    if not _NEED <= set(summary.columns):
        raise ValueError(f"summary needs the columns {sorted(_NEED)} (use summarise())")
    s = summary[summary["metric"] == metric] if "metric" in summary.columns else summary
    data = s.assign(reference=~np.isfinite(s["epsilon"]))
    data["epsilon"] = data["epsilon"].where(~data["reference"])  # inf → null: JSON has no inf
    x = alt.X("epsilon:Q", scale=alt.Scale(type="log"), title="ε (log scale)")
    color = alt.Color("method:N", title="method")
    private, reference = alt.datum.reference == False, alt.datum.reference == True  # noqa: E712
    band = alt.Chart().mark_area(opacity=0.18).encode(x=x, y="q25:Q", y2="q75:Q", color=color) \
        .transform_filter(private)
    line = alt.Chart().mark_line(point=True).encode(
        x=x, y=alt.Y("median:Q", title=f"test {metric} (median, band = quartiles)"), color=color,
        tooltip=["method", "epsilon", alt.Tooltip("median:Q", format=".3f"), alt.Tooltip("q25:Q", format=".3f"),
                 alt.Tooltip("q75:Q", format=".3f")]).transform_filter(private)
    rule = alt.Chart().mark_rule(strokeDash=[5, 4], color="black").encode(
        y="median:Q", tooltip=["method", alt.Tooltip("median:Q", format=".3f")]).transform_filter(reference)
    label = alt.Chart().mark_text(align="left", dx=4, dy=-6, color="black").encode(
        y="median:Q", text="method:N", x=alt.value(2)).transform_filter(reference)
    layer = alt.layer(band, line, rule, label, data=data).properties(width=330, height=240)
    if "dataset" in data.columns:
        return layer.facet(column=alt.Column("dataset:N", title=None)).resolve_scale(y="independent") \
            .properties(title=title or "")
    return layer.properties(title=title or "")


def runtime_chart(summary: pd.DataFrame) -> alt.Chart:
    """Median fit time per method (log axis), one bar per method and dataset."""
    if not {"method", "seconds", "epsilon"} <= set(summary.columns):
        raise ValueError("summary needs the columns method, seconds, epsilon")
    keys = ["dataset", "method"] if "dataset" in summary.columns else ["method"]
    t = summary[np.isfinite(summary["epsilon"])].groupby(keys, as_index=False)["seconds"].median()
    chart = alt.Chart(t).mark_bar().encode(
        y=alt.Y("method:N", sort="x", title=None),
        x=alt.X("seconds:Q", scale=alt.Scale(type="log"), title="median fit time (s, log scale)"),
        tooltip=keys + [alt.Tooltip("seconds:Q", format=".2f")])
    if "dataset" in t.columns:
        chart = chart.encode(color=alt.Color("dataset:N"), yOffset="dataset:N")
    return chart.properties(width=360, height=alt.Step(16), title="Run time per method")


def ranking_chart(summary: pd.DataFrame, epsilon: float, *, metric: str = "error") -> alt.Chart:
    """At one ε: each method's median error (bar) and quartiles (tick range), best first (lowest
    error; highest for "accuracy" and "auc"), with
    the majority-class and non-private medians as dashed rules. Faceted by ``dataset`` if present."""
    if not _NEED <= set(summary.columns):
        raise ValueError(f"summary needs the columns {sorted(_NEED)} (use summarise())")
    s = summary[summary["metric"] == metric] if "metric" in summary.columns else summary
    at = s[np.isclose(s["epsilon"], epsilon)]
    if at.empty:
        raise ValueError(f"no results at ε = {epsilon}; the sweep has {sorted(set(s['epsilon'][np.isfinite(s['epsilon'])]))}")
    refs = s[~np.isfinite(s["epsilon"])]
    data = pd.concat([at.assign(reference=False), refs.assign(reference=True)], ignore_index=True)
    data["epsilon"] = data["epsilon"].where(~data["reference"])
    private, reference = alt.datum.reference == False, alt.datum.reference == True  # noqa: E712
    best_first = "descending" if metric in ("accuracy", "auc") else "ascending"
    y = alt.Y("method:N", sort=alt.EncodingSortField("median", order=best_first), title=None)
    bars = alt.Chart().mark_bar(opacity=0.7).encode(
        y=y, x=alt.X("median:Q", title=f"test {metric} at ε = {epsilon:g}"), color=alt.Color("method:N", legend=None),
        tooltip=["method", alt.Tooltip("median:Q", format=".3f"), alt.Tooltip("q25:Q", format=".3f"),
                 alt.Tooltip("q75:Q", format=".3f")]).transform_filter(private)
    spread = alt.Chart().mark_rule(color="black").encode(y=y, x="q25:Q", x2="q75:Q").transform_filter(private)
    rules = alt.Chart().mark_rule(strokeDash=[5, 4], color="black").encode(
        x="median:Q", tooltip=["method", alt.Tooltip("median:Q", format=".3f")]).transform_filter(reference)
    layer = alt.layer(bars, spread, rules, data=data).properties(width=300, height=alt.Step(22))
    if "dataset" in data.columns:
        return layer.facet(column=alt.Column("dataset:N", title=None)).resolve_scale(y="independent")
    return layer
