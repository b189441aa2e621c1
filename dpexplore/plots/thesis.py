"""Charts for the thesis notebook (private feature selection, DP-NB, DP-LR): data in, altair chart out.

No function here computes anything private; each takes a tidy DataFrame built by the notebook or
by :mod:`dpexplore.widgets.thesis`.
"""
from __future__ import annotations

import altair as alt
import pandas as pd

from ._accessible import describe, fmt

__all__ = ["selection_probability_chart", "stability_chart", "accuracy_curve_chart",
           "lambda_noise_chart", "noise_cloud_chart", "ledger_chart"]


def selection_probability_chart(table: pd.DataFrame, *, score_title: str = "true score q",
                                title: str = "Who gets selected: P(feature ∈ S) vs its true score",
                                width: int = 400) -> alt.Chart:
    """Scatter of exact inclusion probability against the (non-private) score.

    ``table``: columns ``feature``, ``score``, ``probability``, ``chosen`` (bool, this draw).
    """
    chosen = list(table.loc[table["chosen"].astype(bool), "feature"])
    return describe(alt.Chart(table).mark_circle(size=60, opacity=0.8).encode(
        x=alt.X("score:Q", title=score_title),
        y=alt.Y("probability:Q", title="P(feature selected)", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("chosen:N", title="chosen this time", legend=alt.Legend(orient="bottom"),
                        scale=alt.Scale(domain=[True, False], range=["#d62728", "#9e9e9e"])),
        tooltip=[alt.Tooltip("feature"), alt.Tooltip("score:Q", format=".4g"), alt.Tooltip("probability:Q", format=".3f")],
    ).properties(width=width, height=260, title=title),
        f"{title}: a scatter of {len(table)} features, the exact probability that each is selected against its "
        "true score; the features chosen in this draw are red.",
        f"Take-away: higher scores are selected more often, but not always; this draw chose "
        f"{', '.join(map(str, chosen)) or 'none'}.")


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
    # two settings side by side stay inside a notebook at 1400 px (the output area is ~960 px wide)
    chart = (bars + ticks).properties(width=280 if "setting" in freq.columns else 360, height=alt.Step(14))
    what = (f"{title}: bars of the fraction of repetitions that selected each feature, with the exact "
            "probability as a red tick" + ("; one panel per setting." if "setting" in freq.columns else "."))
    takeaway = ("Take-away: bars close to their ticks show the repetitions agree with the exact probabilities; "
                "features with probabilities near 0.5 change from run to run.")
    if "setting" in freq.columns:
        return describe(chart.facet(column=alt.Column("setting:N", title=None)).resolve_scale(y="independent")
                        .properties(title=title), what, takeaway)
    return describe(chart.properties(title=title), what, takeaway)


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
    best = results.loc[results["median"].idxmax()]
    refs = ("" if baselines is None or not len(baselines) else
            "; dashed lines: " + ", ".join(f"{b} {a:.3f}" for b, a in zip(baselines["baseline"], baselines["accuracy"])))
    return describe(
        alt.layer(*layers).resolve_scale(color="independent").properties(width=420, height=260, title=title),
        f"{title}: lines of the median test accuracy (band: 25th to 75th percentile) against {x_title}, for "
        f"{', '.join(map(str, results['pipeline'].unique()))}{refs}.",
        f"Take-away: the best median is {best['median']:.3f} ({best['pipeline']} at {x} = {fmt(best[x])}).")


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
    return describe(
        alt.layer(*layers).properties(width=420, height=260, title=title),
        f"{title}: log-log lines of the scale of the noise norm against λ for "
        f"{', '.join(map(str, table['method'].unique()))}"
        + (f"; a red dashed line marks λ* = {boundary:.3g}." if boundary is not None else "."),
        "Take-away: more regularisation (larger λ) means less noise; the two perturbations cross, which "
        "decides which one to use.")


def noise_cloud_chart(points: pd.DataFrame, *, title: str = "Noise in two dimensions: L1 (Laplace) vs L2 (Gamma norm)") -> alt.Chart:
    """Side-by-side scatter of 2-D noise samples; ``points``: columns ``x``, ``y``, ``norm``."""
    return describe(alt.Chart(points).mark_circle(size=6, opacity=0.35).encode(
        x=alt.X("x:Q", title="b₁"), y=alt.Y("y:Q", title="b₂"),
        color=alt.Color("norm:N", title="noise", scale=alt.Scale(range=["#4c78a8", "#f58518"]),
                        legend=alt.Legend(orient="bottom", direction="vertical", labelLimit=400)),
    ).properties(width=240, height=240).facet(
        column=alt.Column("norm:N", title=None, header=alt.Header(labelLimit=240))).properties(title=title),
        f"{title}: two scatters of {len(points)} two-dimensional noise samples, one panel per kind of noise "
        f"({', '.join(map(str, points['norm'].unique()))}).",
        "Take-away: L1 (Laplace) noise makes a diamond-shaped cloud, L2 (Gamma norm) noise a round one.")


def ledger_chart(ledger: pd.DataFrame, *, title: str = "Where did ε go?") -> alt.Chart:
    """Horizontal bars of ε charged per ledger label (a BudgetAccountant ledger)."""
    return describe(
        alt.Chart(ledger).mark_bar().encode(
            x=alt.X("charged:Q", title="ε charged",   # few ticks: "0.0000.005…" ran together on a short axis
                    axis=alt.Axis(format="~g", tickCount=5, labelOverlap=True, labelFlush=True)),
            y=alt.Y("label:N", title=None, sort=None, axis=alt.Axis(labelLimit=320)),
            color=alt.Color("label:N", legend=None),
            tooltip=[alt.Tooltip("label"), alt.Tooltip("charged:Q", format=".4g")],
        ).properties(width=380, height=alt.Step(22), title=title),
        f"{title}: one bar per spend in the budget ledger: "
        + "; ".join(f"{lab} {c:.3g}" for lab, c in zip(ledger["label"], ledger["charged"])) + ".",
        f"Take-away: the spends add up to ε = {ledger['charged'].sum():.3g}.")
