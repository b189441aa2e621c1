"""Charts for the thesis notebook (private feature selection, DP-NB, DP-LR): data in, altair chart out.

No function here computes anything private; each takes a tidy DataFrame built by the notebook or
by :mod:`dpexplore.widgets.thesis`.
"""
from __future__ import annotations

import altair as alt
import pandas as pd

__all__ = ["selection_probability_chart", "stability_chart", "accuracy_curve_chart",
           "lambda_noise_chart", "noise_cloud_chart", "ledger_chart"]


def selection_probability_chart(table: pd.DataFrame, *, score_title: str = "true score q",
                                title: str = "Who gets selected: P(feature ∈ S) vs its true score") -> alt.Chart:
    """Scatter of exact inclusion probability against the (non-private) score.

    ``table``: columns ``feature``, ``score``, ``probability``, ``chosen`` (bool, this draw).
    """
    return alt.Chart(table).mark_circle(size=60, opacity=0.8).encode(
        x=alt.X("score:Q", title=score_title),
        y=alt.Y("probability:Q", title="P(feature selected)", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("chosen:N", title="chosen this time",
                        scale=alt.Scale(domain=[True, False], range=["#d62728", "#9e9e9e"])),
        tooltip=[alt.Tooltip("feature"), alt.Tooltip("score:Q", format=".4g"), alt.Tooltip("probability:Q", format=".3f")],
    ).properties(width=420, height=260, title=title)


def stability_chart(freq: pd.DataFrame, *, title: str = "How stable is the choice? Selection frequency over repetitions") -> alt.Chart:
    """Bars of how often each feature was chosen, with the exact probability as a tick.

    ``freq``: columns ``feature``, ``frequency``, ``probability`` (optional ``setting`` to facet
    rows by a setting, e.g. the score).
    """
    base = alt.Chart(freq)
    bars = base.mark_bar(color="#4c78a8").encode(
        x=alt.X("frequency:Q", title="fraction of runs selecting it", scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("feature:N", sort="-x", title=None),
        tooltip=[alt.Tooltip("feature"), alt.Tooltip("frequency:Q", format=".2f"), alt.Tooltip("probability:Q", format=".3f")])
    ticks = base.mark_tick(color="#d62728", thickness=2, size=14).encode(
        x=alt.X("probability:Q"), y=alt.Y("feature:N", sort="-x"))
    chart = (bars + ticks).properties(width=360, height=alt.Step(14))
    if "setting" in freq.columns:
        return chart.facet(column=alt.Column("setting:N", title=None)).resolve_scale(y="independent").properties(title=title)
    return chart.properties(title=title)


def accuracy_curve_chart(results: pd.DataFrame, baselines: pd.DataFrame | None = None, *, x: str = "k",
                         x_title: str = "k (features selected)", log_x: bool = False,
                         title: str = "Test accuracy", y_domain: tuple[float, float] | None = None) -> alt.Chart:
    """Median accuracy per ``pipeline`` against ``x`` with a q25–q75 band, plus baseline rules.

    ``results``: columns ``x``, ``pipeline``, ``median``, ``q25``, ``q75``.
    ``baselines``: columns ``baseline``, ``accuracy`` (horizontal dashed rules).
    """
    scale = alt.Scale(type="log") if log_x else alt.Scale(zero=False)
    # log axes: ticks at the swept values only (default log ticks overlap: "0.010.02")
    ticks = sorted(results[x].unique().tolist()) if log_x else alt.Undefined
    xaxis = alt.Axis(format="~g", labelOverlap="greedy", values=ticks)
    yscale = alt.Scale(domain=list(y_domain), clamp=True) if y_domain else alt.Scale(zero=False)
    base = alt.Chart(results)
    band = base.mark_area(opacity=0.2).encode(
        x=alt.X(f"{x}:Q", scale=scale, title=x_title, axis=xaxis), y=alt.Y("q25:Q", scale=yscale), y2=alt.Y2("q75:Q"),
        color=alt.Color("pipeline:N", title=None, legend=None))
    line = base.mark_line(point=True).encode(
        x=alt.X(f"{x}:Q", scale=scale, title=x_title, axis=xaxis),
        y=alt.Y("median:Q", title="test accuracy (median, q25–q75)", scale=yscale),
        color=alt.Color("pipeline:N", title=None),
        tooltip=[alt.Tooltip("pipeline"), alt.Tooltip(f"{x}:Q"), alt.Tooltip("median:Q", format=".3f")])
    layers = [band, line]
    if baselines is not None and len(baselines):
        rules = alt.Chart(baselines).mark_rule(strokeDash=[5, 4]).encode(
            y=alt.Y("accuracy:Q"), color=alt.Color("baseline:N", title=None,
                                            scale=alt.Scale(range=["#7f7f7f", "#2ca02c", "#9467bd", "#8c564b"])),
            tooltip=[alt.Tooltip("baseline"), alt.Tooltip("accuracy:Q", format=".3f")])
        layers.append(rules)
    return alt.layer(*layers).resolve_scale(color="independent").properties(width=420, height=260, title=title)


def lambda_noise_chart(table: pd.DataFrame, boundary: float | None = None, *,
                       title: str = "Noise-norm scale against λ: output vs objective perturbation") -> alt.Chart:
    """Log–log lines of the noise scale per ``method`` against ``lam``, a rule at the branch boundary λ*.

    ``table``: columns ``lam``, ``noise_scale``, ``method``.
    """
    line = alt.Chart(table).mark_line().encode(
        x=alt.X("lam:Q", scale=alt.Scale(type="log"), title="λ (thesis units, = N·Λ)",
                axis=alt.Axis(format="~g", labelOverlap="greedy")),
        y=alt.Y("noise_scale:Q", scale=alt.Scale(type="log"), title="Gamma scale of ‖b‖",
                axis=alt.Axis(format="~g", labelOverlap="greedy")),
        color=alt.Color("method:N", title="method",
                        legend=alt.Legend(orient="bottom", direction="vertical", labelLimit=400)),
        tooltip=[alt.Tooltip("method"), alt.Tooltip("lam:Q", format=".4g"), alt.Tooltip("noise_scale:Q", format=".4g")])
    layers = [line]
    if boundary is not None:
        marker = alt.Chart(pd.DataFrame({"lam": [boundary], "label": [f"λ* = {boundary:.3g}"]}))
        rule = marker.mark_rule(color="#d62728", strokeDash=[4, 4]).encode(x=alt.X("lam:Q"), tooltip=[alt.Tooltip("label")])
        text = marker.mark_text(color="#d62728", align="left", dx=4, baseline="top", y=4).encode(
            x=alt.X("lam:Q"), text=alt.Text("label:N"))
        layers += [rule, text]
    return alt.layer(*layers).properties(width=420, height=260, title=title)


def noise_cloud_chart(points: pd.DataFrame, *, title: str = "Noise in two dimensions: L1 (Laplace) vs L2 (Gamma norm)") -> alt.Chart:
    """Side-by-side scatter of 2-D noise samples; ``points``: columns ``x``, ``y``, ``norm``."""
    return alt.Chart(points).mark_circle(size=6, opacity=0.35).encode(
        x=alt.X("x:Q", title="b₁"), y=alt.Y("y:Q", title="b₂"),
        color=alt.Color("norm:N", title="noise", scale=alt.Scale(range=["#4c78a8", "#f58518"]),
                        legend=alt.Legend(orient="bottom", direction="vertical", labelLimit=400)),
    ).properties(width=240, height=240).facet(
        column=alt.Column("norm:N", title=None, header=alt.Header(labelLimit=240))).properties(title=title)


def ledger_chart(ledger: pd.DataFrame, *, title: str = "Where did ε go?") -> alt.Chart:
    """Horizontal bars of ε charged per ledger label (a BudgetAccountant ledger)."""
    return alt.Chart(ledger).mark_bar().encode(
        x=alt.X("charged:Q", title="ε charged"), y=alt.Y("label:N", title=None, sort=None),
        color=alt.Color("label:N", legend=None),
        tooltip=[alt.Tooltip("label"), alt.Tooltip("charged:Q", format=".4g")],
    ).properties(width=380, height=alt.Step(22), title=title)
