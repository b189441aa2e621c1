"""Charts for the sparse vector technique (notebook 14): where AboveThreshold's first ⊤ falls, and
the privacy audit's verdict on AboveThreshold and the broken variants of Lyu, Su & Li (2017).

References: Dwork & Roth (2014) §3.6, Alg. 1 (AboveThreshold); Lyu, Su & Li (2017) Alg. 3, 5, 6.
"""
from __future__ import annotations

from typing import Sequence

import altair as alt
import numpy as np
import pandas as pd

from ._accessible import DASHES, OKABE_ITO, SHAPES, cycle, describe, fmt, spread
from .roc import audit_chart

__all__ = ["first_above_chart", "worst_pairs", "audit_verdicts_chart", "audit_draws_chart"]


def first_above_chart(exact: np.ndarray, *, queries: np.ndarray, threshold: float, epsilon: float,
                      sampled: np.ndarray | None = None, names: Sequence[str] | None = None,
                      title: str | None = None, width: int = 460, height: int = 200) -> alt.LayerChart:
    """Bars: the exact probability that AboveThreshold's first ⊤ is query k (the last bar: none), from
    :func:`dpexplore.svt.above_threshold_probabilities`; ``sampled``, the share of runs that did so, as
    black ticks. Each bar is labelled with the query's name (``names``, default q1, q2, …) and its value."""
    n = len(queries)
    names = [f"{name}: {fmt(q)}" for name, q in zip(names or [f"q{k + 1}" for k in range(n)], queries)] + ["none above"]
    data = pd.DataFrame({"outcome": names, "probability": np.round(exact, 5),
                         "above": ["at or above τ" if q >= threshold else "below τ" for q in queries] + ["none"]})
    title = title or f"Where AboveThreshold's first 'above' answer falls: τ = {fmt(threshold)}, ε = {fmt(epsilon)}"
    x = alt.X("outcome:N", sort=names, title="first 'above' answer at query (name: true value)",
              axis=alt.Axis(labelAngle=-40))
    y = alt.Y("probability:Q", title="probability", scale=alt.Scale(domain=[0, min(1.0, float(exact.max()) * 1.15 + 0.02)]))
    bars = alt.Chart(data).mark_bar(opacity=0.85).encode(
        x=x, y=y, color=alt.Color("above:N", scale=alt.Scale(domain=["below τ", "at or above τ", "none"],
                                                             range=[OKABE_ITO[4], OKABE_ITO[0], "#999999"]),
                                  title="the query is", legend=alt.Legend(orient="top")),
        tooltip=[alt.Tooltip("outcome:N"), alt.Tooltip("probability:Q", format=".4f")])
    layers = [bars]
    sample_text = ""
    if sampled is not None:
        ticks = data.assign(share=np.round(np.asarray(sampled, dtype=float), 5))
        layers.append(alt.Chart(ticks).mark_tick(color="black", thickness=2, size=18).encode(
            x=x, y=alt.Y("share:Q"), tooltip=[alt.Tooltip("outcome:N"), alt.Tooltip("share:Q", format=".4f")]))
        sample_text = " Black ticks: the share of sampled runs that stopped there."
    top = int(np.argmax(exact))
    return describe(
        alt.layer(*layers).properties(title=title, width=width, height=height),
        f"{title}. Bars of the exact probability that the first ⊤ is each of the {n} queries (queries below τ in "
        "light blue, at or above τ in dark blue, with their values under the bars) and that no query is "
        f"answered ⊤ (grey).{sample_text}",
        f"Take-away: the likeliest outcome is {names[top]} ({exact[top]:.2f}); a query below τ can still be the "
        "first ⊤, and one above it can be passed over: the noise decides, so each answer says little about one "
        "query.")


def worst_pairs(table: pd.DataFrame) -> pd.DataFrame:
    """For each variant, the audit row with the largest lower bound at the largest number of draws
    (the cached audit of ``benchmarks/14_svt_audit.py``)."""
    most = table[table["n_samples"] == table["n_samples"].max()]
    return most.loc[most.groupby("variant", sort=False)["epsilon_lower"].idxmax()]


def audit_verdicts_chart(table: pd.DataFrame, *, title: str | None = None, width: int = 360,
                         height: int = 160) -> alt.Chart:
    """One bar per variant: the audit's largest lower bound on its ε over the neighbouring pairs, at the
    largest number of draws, against the claimed ε (dashed), with the verdict written beside the bar."""
    worst = worst_pairs(table)
    title = title or f"The audit's verdict at ε = {fmt(worst['claimed_epsilon'].iloc[0])} " \
                     f"({int(worst['n_samples'].iloc[0]):,} draws per side, each variant's worst pair)"
    return audit_chart(worst, title=title, width=width, height=height, item="variant")


def audit_draws_chart(table: pd.DataFrame, *, title: str = "How many draws the audit needs to refute each variant",
                      width: int = 420, height: int = 240) -> alt.LayerChart:
    """The largest lower bound over the pairs against the number of draws per side (log axis), one line
    per variant told apart by colour, dash and point shape and labelled at its right end; filled points
    where the claim is refuted; the claimed ε as a dashed rule."""
    best = table.groupby(["variant", "n_samples"], sort=False).agg(
        epsilon_lower=("epsilon_lower", "max"), violates=("violates", "any"),
        claimed_epsilon=("claimed_epsilon", "first")).reset_index()
    best["verdict"] = np.where(best["violates"], "refuted", "not refuted")
    names = list(dict.fromkeys(best["variant"]))
    colors, dashes, shapes = cycle(OKABE_ITO[:7], len(names)), cycle(DASHES, len(names)), cycle(SHAPES, len(names))
    x = alt.X("n_samples:Q", scale=alt.Scale(type="log"), title="draws per side",
              axis=alt.Axis(values=[100, 300, 1_000, 3_000, 10_000, 30_000, 100_000], format="~s"))
    y = alt.Y("epsilon_lower:Q", title="lower confidence bound on ε")
    color = alt.Color("variant:N", scale=alt.Scale(domain=names, range=colors), legend=None)
    lines = alt.Chart(best).mark_line(strokeWidth=2).encode(
        x=x, y=y, color=color, strokeDash=alt.StrokeDash("variant:N", scale=alt.Scale(domain=names, range=dashes),
                                                         legend=None))
    points = alt.Chart(best).mark_point(size=60, strokeWidth=2).encode(
        x=x, y=y, color=color, shape=alt.Shape("variant:N", scale=alt.Scale(domain=names, range=shapes), legend=None),
        fill=alt.condition(alt.datum.violates, alt.Color("variant:N", scale=alt.Scale(domain=names, range=colors),
                                                         legend=None), alt.value("white")),
        tooltip=[alt.Tooltip("variant:N"), alt.Tooltip("n_samples:Q", format=","),
                 alt.Tooltip("epsilon_lower:Q", format=".3f"), alt.Tooltip("verdict:N")])
    last = best[best["n_samples"] == best["n_samples"].max()].copy()
    last["label_y"] = spread(last["epsilon_lower"].to_numpy(dtype=float),
                             0.07 * float(best["epsilon_lower"].max() or 1.0))
    labels = alt.Chart(last).mark_text(align="left", dx=8, fontWeight="bold", fontSize=11).encode(
        x=x, y=alt.Y("label_y:Q"), text=alt.Text("variant:N"), color=color)
    claimed = float(best["claimed_epsilon"].iloc[0])
    rule = alt.Chart(pd.DataFrame({"y": [claimed], "label": [f"claimed ε = {fmt(claimed)}"]}))
    rules = rule.mark_rule(color="black", strokeDash=[5, 3]).encode(y=alt.Y("y:Q")) + \
        rule.mark_text(align="left", x=4, dy=-7, color="black", fontSize=11).encode(y=alt.Y("y:Q"),
                                                                                    text=alt.Text("label:N"))
    first = best[best["violates"]].groupby("variant", sort=False)["n_samples"].min()
    never = [v for v in names if v not in first.index]
    return describe(
        alt.layer(lines, points, rules, labels).properties(title=title, width=width, height=height),
        f"{title}: for each variant, a line of the audit's largest lower bound on ε over the neighbouring pairs "
        "against the number of draws per side (log axis); lines differ by colour, dash and point shape and are "
        f"labelled at their right end; filled points are refutations; a dashed line marks the claimed ε = "
        f"{fmt(claimed)}.",
        "Take-away: " + "; ".join(f"{v} is refuted from {int(n):,} draws" for v, n in first.sort_values().items())
        + (f"; {', '.join(never)} never" if never else "") + ": a rarer leaking event needs more draws to show.")
