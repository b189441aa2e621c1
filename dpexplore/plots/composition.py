"""Charts for composition (notebook 13): the total ε of k mechanisms under basic composition,
advanced composition and zCDP converted to (ε, δ), from :func:`dpexplore.composition.composed_epsilon`.

References: Dwork & Roth (2014) Thm 3.16 (basic) and Thm 3.20 (advanced, Dwork, Rothblum & Vadhan
2010); Bun & Steinke (2016) Prop 1.3, 1.4 and Lemma 1.7 (zCDP).
"""
from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from ._accessible import DASHES, OKABE_ITO, SHAPES, describe, fmt, spread

__all__ = ["composition_frame", "composition_chart"]

RULES = {"basic": ("basic: kε (δ = 0)", OKABE_ITO[0], DASHES[0], SHAPES[0]),
         "advanced": ("advanced (Dwork, Rothblum & Vadhan)", OKABE_ITO[1], DASHES[1], SHAPES[1]),
         "zcdp": ("zCDP, converted (Bun & Steinke)", OKABE_ITO[2], DASHES[2], SHAPES[2])}


def composition_frame(table: pd.DataFrame) -> pd.DataFrame:
    """The wide table of :func:`~dpexplore.composition.composed_epsilon` (k, basic, advanced, zcdp)
    as tidy rows: k, rule (the column), name (its label), total (ε after k steps).

    >>> from dpexplore.composition import composed_epsilon
    >>> composition_frame(composed_epsilon(0.1, [10], delta=1e-6)).round(3)[["k", "rule", "total"]].values.tolist()
    [[10, 'basic', 1.0], [10, 'advanced', 1.767], [10, 'zcdp', 1.712]]
    """
    tidy = table.melt(id_vars="k", value_vars=list(RULES), var_name="rule", value_name="total")
    return tidy.assign(name=tidy["rule"].map(lambda r: RULES[r][0]))


def composition_chart(frame: pd.DataFrame, *, epsilon: float, delta: float, mark_k: int | None = None,
                      mark_label: str = "", title: str | None = None, width: int = 460,
                      height: int = 260) -> alt.LayerChart:
    """Total ε against the number k of ε-DP steps (log axes), one line per composition theorem told
    apart by colour, dash, point shape and a label beyond its right end; ``mark_k`` draws a rule at one k
    (``mark_label`` says what it is) and the three totals there.

    ``frame``: :func:`composition_frame`; ``epsilon`` the ε of each step, ``delta`` the δ of the
    advanced and zCDP totals (basic composition of pure steps has δ = 0).
    """
    title = title or f"Total ε after k steps of ε = {fmt(epsilon)} each (δ = {fmt(delta)} for the curved two)"
    names = [RULES[r][0] for r in RULES]
    color = alt.Color("name:N", scale=alt.Scale(domain=names, range=[v[1] for v in RULES.values()]), legend=None)
    dash = alt.StrokeDash("name:N", scale=alt.Scale(domain=names, range=[v[2] for v in RULES.values()]), legend=None)
    shape = alt.Shape("name:N", scale=alt.Scale(domain=names, range=[v[3] for v in RULES.values()]), legend=None)
    lo, hi = int(frame["k"].min()), int(frame["k"].max())
    x = alt.X("k:Q", scale=alt.Scale(type="log", domain=[lo, hi], nice=False), title="k (number of ε-DP steps)",
              axis=alt.Axis(values=[v for v in (1, 3, 10, 30, 100, 300, 1000, 3000, 10_000) if lo <= v <= hi],
                            format="~g"))
    y = alt.Y("total:Q", scale=alt.Scale(type="log"), title="total ε",
              axis=alt.Axis(values=[0.01, 0.03, 0.1, 0.3, 1, 3, 10, 30, 100, 300, 1000], format="~g"))
    tooltip = [alt.Tooltip("name:N", title="composition"), alt.Tooltip("k:Q"), alt.Tooltip("total:Q", format=".3g")]
    lines = alt.Chart(frame).mark_line(strokeWidth=2.5).encode(x=x, y=y, color=color, strokeDash=dash, tooltip=tooltip)
    ends = frame[frame["k"] == hi].copy()
    logs = np.log10(ends["total"].to_numpy(dtype=float))
    span = np.log10(float(frame["total"].max()) / float(frame["total"].min())) or 1.0
    ends["label_y"] = 10 ** spread(logs, 0.06 * span)
    labels = alt.Chart(ends).mark_text(align="left", dx=6, fontWeight="bold", fontSize=11).encode(
        x=x, y=alt.Y("label_y:Q"), text=alt.Text("name:N"), color=color)
    layers = [lines, labels]
    marked = ""
    if mark_k is not None:
        here = frame[frame["k"] == mark_k]
        layers.append(alt.Chart(pd.DataFrame({"k": [mark_k], "label": [mark_label or f"k = {mark_k}"]}))
                      .mark_rule(color="gray", strokeDash=[4, 3]).encode(x=x))
        layers.append(alt.Chart(pd.DataFrame({"k": [mark_k], "label": [mark_label or f"k = {mark_k}"]}))
                      .mark_text(align="left", dx=4, baseline="top", y=4, fontSize=11, color="#444444")
                      .encode(x=x, text=alt.Text("label:N")))
        layers.append(alt.Chart(here).mark_point(filled=True, size=70).encode(x=x, y=y, color=color, shape=shape,
                                                                              tooltip=tooltip))
        marked = (f" A dashed rule marks k = {mark_k}" + (f" ({mark_label})" if mark_label else "") + ", where the "
                  "totals are " + "; ".join(f"{n} {fmt(t)}" for n, t in zip(here["name"], here["total"])) + ".")
    wide = frame.pivot(index="k", columns="rule", values="total")
    best = wide.idxmin(axis=1)
    cross = wide.index[(best != "basic").to_numpy()]
    takeaway = (f"basic composition grows like k, the other two like √k: from k = {int(cross.min())} steps on, a "
                "curved bound is the smaller total (each bound is valid, so the smallest applies), at the price of "
                f"δ = {fmt(delta)}." if len(cross) else
                "over these k basic composition stays the smallest total: the curved bounds pay off only for many "
                "small steps.")
    return describe(
        alt.layer(*layers).properties(title=title, width=width, height=height),
        f"{title}. Lines of the total ε against the number of steps k (log axes) for basic composition (solid), "
        "advanced composition (dashed) and zCDP converted to (ε, δ) (dotted), each labelled beyond its right end."
        + marked,
        takeaway)
