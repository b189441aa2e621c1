"""Charts for the attacks that show why privacy needs noise (notebook 10).

Pure functions: tidy DataFrames in, altair charts out. The attacks themselves run in
:mod:`dpexplore.attacks` (reconstruction by a linear program, Dinur & Nissim 2003; membership
inference by the loss threshold, Yeom et al. 2018); nothing here computes privacy. The ε-DP
limit drawn on a membership ROC chart is :func:`dpexplore.attacks.membership_bound`.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import altair as alt
import numpy as np
import pandas as pd

from ..attacks import membership_bound
from ._accessible import CONSISTENT, DASHES, OKABE_ITO, REFUTED, describe, fmt, spread
from ._histograms import histogram_frame, outline_chart

__all__ = ["difference_chart", "reconstruction_summary", "reconstruction_chart",
           "records_chart", "roc_frame", "membership_chart"]


def difference_chart(differences: Mapping[str, np.ndarray], *, edges: Sequence[float], threshold: float,
                     title: str = "What the attacker sees", width: int = 440, height: int = 200) -> alt.LayerChart:
    """Outlined histograms (on ``edges``) of the attacker's difference of two noisy counts over
    repeated releases, one per true value of the target's secret (``differences``: {case: values}),
    with the attacker's threshold as a dashed rule."""
    hist = histogram_frame(differences, edges)
    means = {c: float(np.mean(v)) for c, v in differences.items()}
    return outline_chart(
        hist, rules=[(threshold, f"guess 1 above {threshold:g}")],
        x_title="the attacker's difference of the two released counts", title=title, width=width, height=height,
        what=f"{title}: histograms of the attacker's difference of two noisy counts over many repeated releases, "
             f"one per case; the dashed rule at {threshold:g} is the attacker's threshold.",
        takeaway="Take-away: the two histograms are centred one apart (" +
                 ", ".join(f"{c}: mean {m:.2f}" for c, m in means.items()) +
                 ") but overlap almost entirely, so the difference no longer tells which case is true.")


# --------------------------------------------------------------------------- reconstruction
def reconstruction_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (n_queries, noise): the mean share of bits recovered and the lowest and highest over
    the repetitions, from the rows of ``benchmarks/10_reconstruction_grid.py``."""
    g = runs.groupby(["n_queries", "noise"])["rate"]
    return pd.DataFrame({"rate": g.mean(), "low": g.min(), "high": g.max(), "runs": g.size()}).reset_index()


def reconstruction_chart(summary: pd.DataFrame, *, n_records: int, n_queries: int | None = None,
                         noise: float | None = None, title: str | None = None, width: int = 460,
                         height: int = 260) -> alt.LayerChart:
    """Share of secret bits the reconstruction attack recovers against the error bound E of the
    answers (a symlog axis: 0 included), one line per number of queries (:func:`reconstruction_summary`).

    Lines differ by colour and dash pattern and are labelled at their right end with their number
    of queries. With ``n_queries`` that line is drawn thick with the band from its lowest to its
    highest run; with ``noise`` too, its point is marked. Rules: E = √n (where Dinur & Nissim's
    attack stops working) and 0.5, a coin flip.
    """
    data = summary.assign(n_queries=summary["n_queries"].astype(int))
    ks = sorted(data["n_queries"].unique())
    names = [f"{k} queries" for k in ks]
    data = data.assign(series=[f"{k} queries" for k in data["n_queries"]])
    colors = [OKABE_ITO[i % 7] for i in range(len(ks))]
    dashes = [DASHES[i % len(DASHES)] for i in range(len(ks))]
    root = float(np.sqrt(n_records))
    top = float(data["noise"].max())
    x = alt.X("noise:Q", title="error bound E of every answer (symlog axis)",
              scale=alt.Scale(type="symlog", domain=[0, top]),
              axis=alt.Axis(values=sorted(set(data["noise"].tolist())), labelOverlap="greedy", format="d"))
    share = alt.Scale(domain=[0.4, 1.0], clamp=True)
    y = alt.Y("rate:Q", title="share of secret bits recovered", scale=share, axis=alt.Axis(format="%"))
    color = alt.Color("series:N", sort=names, scale=alt.Scale(domain=names, range=colors), legend=None)
    dash = alt.StrokeDash("series:N", sort=names, scale=alt.Scale(domain=names, range=dashes), legend=None)
    tooltip = [alt.Tooltip("series:N", title="attack"), alt.Tooltip("noise:Q", title="E"),
               alt.Tooltip("rate:Q", format=".1%", title="recovered (mean)"),
               alt.Tooltip("low:Q", format=".1%"), alt.Tooltip("high:Q", format=".1%")]
    chosen = data[data["n_queries"] == n_queries] if n_queries is not None else data.iloc[:0]
    lines = alt.Chart(data).mark_line(point=alt.OverlayMarkDef(size=18)).encode(
        x=x, y=y, color=color, strokeDash=dash, tooltip=tooltip,
        strokeWidth=alt.condition(alt.datum.n_queries == (n_queries or -1), alt.value(3.5), alt.value(1.4)),
        opacity=alt.condition(alt.datum.n_queries == (n_queries or -1), alt.value(1.0),
                              alt.value(0.45 if n_queries is not None else 0.9)))
    layers = [lines]
    if len(chosen):
        layers.insert(0, alt.Chart(chosen).mark_area(opacity=0.15).encode(
            x=x, y=alt.Y("low:Q", scale=share), y2=alt.Y2("high:Q"), color=color))
    ends = data[data["noise"] == top].sort_values("rate").copy()
    ends["label_y"] = spread(ends["rate"].to_numpy(), 0.04)
    labels = alt.Chart(ends).mark_text(align="left", dx=6, fontSize=10).encode(
        x=x, y=alt.Y("label_y:Q"), text=alt.Text("series:N"), color=color)
    refs = pd.DataFrame({"noise": [root], "text": [f"E = √n = {fmt(root)}"]})
    coin = pd.DataFrame({"rate": [0.5], "text": ["a coin flip"]})
    layers += [labels,
               alt.Chart(refs).mark_rule(color="gray", strokeDash=[4, 3]).encode(x=alt.X("noise:Q")),
               alt.Chart(refs).mark_text(align="left", dx=4, y=6, fontSize=10, color="dimgray").encode(
                   x=alt.X("noise:Q"), text=alt.Text("text:N")),
               alt.Chart(coin).mark_rule(color="gray", strokeDash=[2, 2]).encode(y=alt.Y("rate:Q")),
               alt.Chart(coin).mark_text(align="left", x=4, dy=-6, fontSize=10, color="dimgray").encode(
                   y=alt.Y("rate:Q"), text=alt.Text("text:N"))]
    what = (f"Reconstruction of a secret column of {n_records} records from noisy subset counts: the share of "
            f"bits recovered (mean over {int(data['runs'].max())} runs) against the error bound E of each answer, "
            f"one line per number of queries ({', '.join(map(str, ks))}), told apart by colour and dash pattern "
            f"and labelled at their right end; dashed rules mark E = √n = {fmt(root)} and a coin flip (0.5).")
    if len(chosen) and noise is not None:
        point = chosen[np.isclose(chosen["noise"], noise)]
        if len(point):
            row = point.iloc[0]
            layers.append(alt.Chart(point).mark_point(shape="diamond", size=160, filled=True, color="black").encode(
                x=x, y=y, tooltip=tooltip))
            what += (f" The black diamond: {int(row['n_queries'])} queries at E = {fmt(row['noise'])} recover "
                     f"{row['rate']:.0%} of the bits (runs from {row['low']:.0%} to {row['high']:.0%}).")
    exact = data[data["noise"] == 0]["rate"].min()
    far = data[data["noise"] >= 5 * root]["rate"].max() if (data["noise"] >= 5 * root).any() else np.nan
    takeaway = (f"Take-away: exact answers give away {exact:.0%} or more of the secret bits; more queries push the "
                "attack further, but as E grows past √n the share recovered falls towards a coin flip"
                + (f" (at most {far:.0%} from E = 5√n on)." if np.isfinite(far) else "."))
    title = title or (f"{n_queries} subset counts: how much of the secret column comes back?"
                      if n_queries is not None else "Reconstruction from subset counts")
    return describe(alt.layer(*layers).properties(title=title, width=width, height=height), what, takeaway)


def records_chart(secret: Sequence[int], guess: Sequence[int], *, columns: int = 20,
                  title: str = "Which records the attacker got right", width: int = 460) -> alt.Chart:
    """One mark per record in a grid: a filled square where the reconstructed bit equals the
    secret, a cross where it does not (shape and colour both say which)."""
    s, g = np.asarray(secret, dtype=int), np.asarray(guess, dtype=int)
    if s.shape != g.shape:
        raise ValueError("secret and guess must have one bit per record each")
    outcome = np.where(s == g, "right", "wrong")
    data = pd.DataFrame({"record": np.arange(s.size), "col": np.arange(s.size) % columns,
                         "row": np.arange(s.size) // columns, "secret": s, "guess": g, "outcome": outcome})
    rows = int(data["row"].max()) + 1 if s.size else 1
    chart = alt.Chart(data).mark_point(filled=True, size=90).encode(
        x=alt.X("col:O", axis=None), y=alt.Y("row:O", axis=None),
        shape=alt.Shape("outcome:N", scale=alt.Scale(domain=["right", "wrong"], range=["square", "cross"]),
                        legend=alt.Legend(orient="bottom", title=None)),
        color=alt.Color("outcome:N", scale=alt.Scale(domain=["right", "wrong"], range=[CONSISTENT, REFUTED]),
                        legend=alt.Legend(orient="bottom", title=None)),
        tooltip=[alt.Tooltip("record:Q"), alt.Tooltip("secret:Q"), alt.Tooltip("guess:Q"),
                 alt.Tooltip("outcome:N")])
    right = int((outcome == "right").sum())
    return describe(
        chart.properties(title=title, width=width, height=max(40, 24 * rows)),
        f"{title}: the {s.size} attacked records in a grid of {columns} per row, a blue square where the "
        f"attacker's reconstructed bit equals the record's secret and a vermillion cross where it does not.",
        f"Take-away: {right} of {s.size} secret bits come back right ({right / max(s.size, 1):.0%}).")


# --------------------------------------------------------------------------- membership inference
def roc_frame(curves: Mapping[str, Sequence[pd.DataFrame]], *, points: int = 120) -> pd.DataFrame:
    """Tidy (model, draw, fpr, tpr) from {model: [ROC DataFrame of :func:`dpexplore.attacks.membership_roc`,
    …]}, each curve thinned to at most ``points`` evenly spaced rows (first and last kept)."""
    parts = []
    for name, draws in curves.items():
        for i, c in enumerate(draws):
            if len(c) > points:
                c = c.iloc[np.unique(np.linspace(0, len(c) - 1, points).round().astype(int))]
            parts.append(pd.DataFrame({"model": name, "draw": i, "fpr": c["fpr"].to_numpy(),
                                       "tpr": c["tpr"].to_numpy()}))
    return pd.concat(parts, ignore_index=True)


def membership_chart(curves: pd.DataFrame, *, epsilon: float | None = None,
                     aucs: Mapping[str, float] | None = None, title: str = "Membership inference: ROC curves",
                     width: int = 380, height: int = 340) -> alt.LayerChart:
    """ROC curves of the loss-threshold attack (:func:`roc_frame`), one colour and dash pattern
    per model (a model's several draws share them), the diagonal (guessing), and, with
    ``epsilon``, the ε-DP limit: no attack on an ε-DP model rises above it (shaded above it)."""
    models = list(dict.fromkeys(curves["model"]))
    colors = [OKABE_ITO[i % 7] for i in range(len(models))]
    dashes = [DASHES[i % len(DASHES)] for i in range(len(models))]
    data = curves.assign(key=curves["model"] + " #" + curves["draw"].astype(str),
                         order=curves.groupby(["model", "draw"]).cumcount())
    x = alt.X("fpr:Q", title="false-positive rate (non-members flagged)", scale=alt.Scale(domain=[0, 1]))
    y = alt.Y("tpr:Q", title="true-positive rate (members flagged)", scale=alt.Scale(domain=[0, 1]))
    layers = []
    what = (f"{title}: the attack's true-positive rate against its false-positive rate for each model "
            f"({'; '.join(models)}), one colour and dash pattern per model; the dotted diagonal is guessing")
    if epsilon is not None:
        f = np.linspace(0, 1, 101)
        limit = pd.DataFrame({"fpr": f, "tpr": membership_bound(f, epsilon=epsilon), "top": 1.0})
        layers += [alt.Chart(limit).mark_area(color="lightgray", opacity=0.45).encode(x=x, y=alt.Y("tpr:Q"),
                                                                                       y2=alt.Y2("top:Q")),
                   alt.Chart(limit).mark_line(color="black", strokeDash=[6, 3], strokeWidth=1.5).encode(
                       x=x, y=alt.Y("tpr:Q"))]
        kink = 1 / (1 + np.exp(epsilon))          # where the two sides of the limit meet
        label = pd.DataFrame({"fpr": [kink], "tpr": [float(membership_bound([kink], epsilon=epsilon)[0])],
                              "text": [f"ε-DP limit, ε = {fmt(epsilon)}"]})
        layers.append(alt.Chart(label).mark_text(align="left", dx=6, dy=-10, fontSize=10, fontWeight="bold").encode(
            x=x, y=alt.Y("tpr:Q"), text=alt.Text("text:N")))
        what += (f"; the black dashed line is the ε-DP limit at ε = {fmt(epsilon)}, with the grey region above it "
                 "out of reach of any attack on an ε-DP model")
    layers.append(alt.Chart(pd.DataFrame({"fpr": [0, 1], "tpr": [0, 1]})).mark_line(
        color="gray", strokeDash=[2, 3]).encode(x=x, y=alt.Y("tpr:Q")))
    layers.append(alt.Chart(data).mark_line(strokeWidth=2, opacity=0.85).encode(
        x=x, y=y, detail=alt.Detail("key:N"), order=alt.Order("order:Q"),
        color=alt.Color("model:N", sort=models, scale=alt.Scale(domain=models, range=colors),
                        legend=alt.Legend(orient="bottom", direction="vertical", title=None, labelLimit=400,
                                          symbolType="stroke", symbolStrokeWidth=2)),
        strokeDash=alt.StrokeDash("model:N", sort=models, scale=alt.Scale(domain=models, range=dashes), legend=None),
        tooltip=[alt.Tooltip("model:N"), alt.Tooltip("fpr:Q", format=".3f"), alt.Tooltip("tpr:Q", format=".3f")]))
    if aucs:
        takeaway = "Take-away: AUC " + ", ".join(f"{m} {a:.2f}" for m, a in aucs.items()) + \
            " (0.5 is guessing); the further a curve bows above the diagonal, the more the model gives away."
    else:
        takeaway = "Take-away: the further a curve bows above the diagonal, the more the model gives away."
    return describe(alt.layer(*layers).properties(title=title, width=width, height=height), what + ".", takeaway)
