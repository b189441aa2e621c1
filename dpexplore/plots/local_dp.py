"""Charts for randomized response and local DP (notebook 11).

Pure functions. :func:`error_frame` evaluates the closed-form errors of the two ways to estimate a
proportion at the same ε: randomized response (Warner 1965; local model: every respondent
randomises their own answer) and the Laplace count (central model: a trusted curator adds noise
once), from :func:`dpexplore.mechanisms.randomized_response_variance` and
:func:`dpexplore.mechanisms.laplace_variance`; the charts draw them. Nothing here spends privacy:
the simulated releases come from the caller.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import altair as alt
import numpy as np
import pandas as pd

from ..mechanisms import laplace_variance, randomized_response_variance
from ._accessible import DASHES, OKABE_ITO, SHAPES, describe, fmt
from ._histograms import histogram_frame, outline_chart

__all__ = ["LOCAL", "CENTRAL", "error_frame", "error_chart", "estimates_chart"]

LOCAL = "randomized response (local)"
CENTRAL = "Laplace count (central)"


def error_frame(ns: Sequence[int], *, epsilon: float) -> pd.DataFrame:
    """Standard deviation of the estimated proportion from n people at ε, per model: randomized
    response √(p(1 − p)/(n(2p − 1)²)) and the Laplace count √2/(εn) (sensitivity 1, n public).

    >>> error_frame([100], epsilon=1.0).round(4).values.tolist()
    [['randomized response (local)', 100, 0.096], ['Laplace count (central)', 100, 0.0141]]
    """
    ns = np.asarray(ns, dtype=np.int64)
    local = [np.sqrt(randomized_response_variance(int(n), epsilon=epsilon)) for n in ns]
    central = np.sqrt(laplace_variance(epsilon=epsilon)) / ns
    return pd.concat([pd.DataFrame({"model": LOCAL, "n": ns, "sd": local}),
                      pd.DataFrame({"model": CENTRAL, "n": ns, "sd": central})], ignore_index=True)


def error_chart(curves: pd.DataFrame, *, n: int, epsilon: float, observed: Mapping[str, float] | None = None,
                title: str | None = None, width: int = 420, height: int = 260) -> alt.LayerChart:
    """The error (standard deviation) of each model's estimate against n, both axes logarithmic
    (:func:`error_frame`), with a rule at the current ``n``; ``observed`` ({model: sd of simulated
    releases at n}) adds a point per model. Models differ by colour, dash pattern and point shape,
    and each line is named at its left end."""
    models = [LOCAL, CENTRAL]
    colors, dashes, shapes = [OKABE_ITO[3], OKABE_ITO[0]], [DASHES[1], DASHES[0]], [SHAPES[1], SHAPES[0]]
    x = alt.X("n:Q", title="number of people n (log axis)",
              scale=alt.Scale(type="log", domain=[float(curves["n"].min()), float(curves["n"].max())], nice=False),
              axis=alt.Axis(format="~s"))
    y = alt.Y("sd:Q", title="error of the estimated proportion (sd, log axis)", scale=alt.Scale(type="log"),
              axis=alt.Axis(format="~g"))
    color = alt.Color("model:N", sort=models, scale=alt.Scale(domain=models, range=colors),
                      legend=alt.Legend(orient="bottom", direction="vertical", title=None, labelLimit=400))
    lines = alt.Chart(curves).mark_line(strokeWidth=2.2).encode(
        x=x, y=y, color=color,
        strokeDash=alt.StrokeDash("model:N", sort=models, scale=alt.Scale(domain=models, range=dashes), legend=None),
        tooltip=[alt.Tooltip("model:N"), alt.Tooltip("n:Q", format=","), alt.Tooltip("sd:Q", format=".3g")])
    first = curves.loc[curves.groupby("model", sort=False)["n"].idxmin()]
    names = alt.Chart(first).mark_text(align="left", dx=4, dy=-9, fontSize=10, fontWeight="bold").encode(
        x=x, y=y, text=alt.Text("model:N"), color=alt.Color("model:N", sort=models,
                                                           scale=alt.Scale(domain=models, range=colors), legend=None))
    now = pd.DataFrame({"n": [n], "text": [f"n = {n:,}"]})
    layers = [lines, names, alt.Chart(now).mark_rule(color="gray", strokeDash=[4, 3]).encode(x=alt.X("n:Q")),
              alt.Chart(now).mark_text(align="left", dx=4, y=8, fontSize=10, color="dimgray").encode(
                  x=alt.X("n:Q"), text=alt.Text("text:N"))]
    at_n = error_frame([n], epsilon=epsilon).set_index("model")["sd"]
    what = (f"Error of the estimated proportion against the number of people n at ε = {fmt(epsilon)}, both axes "
            f"logarithmic: {LOCAL} (vermillion, dashed) and {CENTRAL} (blue, solid), each named at its left end; "
            f"the dashed rule marks n = {n:,}.")
    if observed:
        pts = pd.DataFrame({"model": list(observed), "n": n, "sd": list(observed.values())})
        layers.append(alt.Chart(pts).mark_point(filled=True, size=90, stroke="black").encode(
            x=x, y=y, color=alt.Color("model:N", sort=models, scale=alt.Scale(domain=models, range=colors),
                                      legend=None),
            shape=alt.Shape("model:N", sort=models, scale=alt.Scale(domain=models, range=shapes), legend=None),
            tooltip=[alt.Tooltip("model:N"), alt.Tooltip("sd:Q", format=".3g", title="sd of the simulated releases")]))
        what += " Points: the standard deviation of simulated releases at that n (square: local, circle: central)."
    ratio = at_n[LOCAL] / at_n[CENTRAL]
    takeaway = (f"Take-away: at n = {n:,} randomized response's error is {fmt(at_n[LOCAL])} against "
                f"{fmt(at_n[CENTRAL])}, {ratio:.0f} times larger; the central error falls like 1/n, the local one "
                "only like 1/√n, so the gap grows like √n.")
    title = title or f"Local against central DP at ε = {fmt(epsilon)}"
    return describe(alt.layer(*layers).properties(title=title, width=width, height=height), what, takeaway)


def estimates_chart(estimates: Mapping[str, np.ndarray], *, truth: float, title: str | None = None,
                    bins: int = 40, width: int = 420, height: int = 200) -> alt.LayerChart:
    """Outlined histograms of repeated estimates of a proportion ({model: estimates}) on common
    bins spanning all of them, with the true proportion as a dashed rule."""
    values = np.concatenate([np.asarray(v, dtype=float) for v in estimates.values()])
    lo, hi = float(min(values.min(), truth)), float(max(values.max(), truth))
    pad = max(hi - lo, 1e-3) * 0.05
    hist = histogram_frame(estimates, np.linspace(lo - pad, hi + pad, bins + 1))
    sds = {m: float(np.std(v)) for m, v in estimates.items()}
    title = title or "Repeated releases of the estimated proportion"
    return outline_chart(
        hist, rules=[(truth, f"the true proportion {truth:.3f}")], x_title="estimated proportion", title=title,
        width=width, height=height,
        what=f"{title}: histograms of the estimates of each model over {len(next(iter(estimates.values())))} "
             f"repeated releases; the dashed rule marks the true proportion {truth:.3f}.",
        takeaway="Take-away: both are centred on the truth (unbiased), but their spreads differ: " +
                 ", ".join(f"{m} sd {fmt(s)}" for m, s in sds.items()) + ".")
