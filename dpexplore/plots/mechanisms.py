"""Charts for the basic mechanisms, privacy loss and budgets (notebook 01).

Two kinds of pure functions: ``*_frame`` functions turn samples and the closed-form
distributions of :mod:`dpexplore.mechanisms` into small tidy DataFrames, and ``*_chart``
functions turn those frames into altair charts. Nothing here spends privacy budget: the private
samples, audit results and accountants are made by the caller (the widgets or a notebook).

References: Dwork & Roth (2014) Thm 3.6 (Laplace), Def. 3.9/Thm 3.10 (exponential mechanism),
§3.5 (composition); Ghosh, Roughgarden & Sundararajan (2009) (two-sided geometric).
"""
from __future__ import annotations

import re
from typing import Mapping, Sequence

import altair as alt
import numpy as np
import pandas as pd

from ..accuracy import laplace_accuracy
from ..audit import AuditResult
from ..mechanisms import exponential_probabilities, geometric_pmf, laplace_pdf, laplace_scale
from ._accessible import DASHES, OKABE_ITO, cycle, describe, fmt, spread

__all__ = ["noise_frames", "noise_chart", "privacy_loss_frames", "privacy_loss_chart",
           "audit_points", "exponential_frame", "exponential_chart", "budget_frame",
           "budget_chart", "accuracy_chart", "curve_labels"]

_MECH_COLORS = {"Laplace": OKABE_ITO[0], "geometric": OKABE_ITO[1]}
_DATASET_COLORS = [OKABE_ITO[0], OKABE_ITO[3]]


# Channels are spelled out (alt.X2("end:Q"), alt.Tooltip("item:N")), never as bare shorthand
# strings: altair resolves each bare string by rebuilding a schema hash table (10–20 ms here;
# upstream draft fix vega/altair#3547), and a slider redraw would pay that every time.
def _compact(frame: pd.DataFrame, digits: int = 4) -> pd.DataFrame:
    """Copy of ``frame`` with floats rounded to ``digits`` significant digits (smaller charts)."""
    out = frame.copy()
    for col in out.columns:
        if out[col].dtype.kind == "f":
            x = out[col].to_numpy(dtype=float)
            x = np.where(np.abs(x) < 1e-12, 0.0, x)  # invisible on any chart
            with np.errstate(divide="ignore", invalid="ignore"):
                mag = np.where((x == 0) | ~np.isfinite(x), 0, np.floor(np.log10(np.abs(x))))
            scale = 10.0 ** (digits - 1 - mag)
            out[col] = np.where(np.isfinite(x), np.round(x * scale) / scale, x)
    return out


# --------------------------------------------------------------------------- noise histograms
def noise_frames(samples: Mapping[str, np.ndarray], *, epsilon: float, sensitivity: float,
                 true_value: float = 0.0, n_scales: float = 6.0,
                 bins_per_scale: float = 3.0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Histogram of released values and the theoretical density, per mechanism.

    ``samples``: {"Laplace": released values, "geometric": released values} (either may be
    missing) of ``true_value`` + noise at the given ε and Δ. Both are drawn on a density scale
    over the window true_value ± ``n_scales``·b, b = Δ/ε: Laplace with bins of width b /
    ``bins_per_scale`` against the pdf exp(-|x|/b)/2b; geometric with integer-aligned bins of
    width max(1, round(b / bins_per_scale)) against its pmf (a mass per unit step, so it sits on
    the same scale). Returns ``(hist, theory)``: hist has mechanism, left, right, density, count;
    theory has mechanism, x, density.
    """
    b = laplace_scale(epsilon=epsilon, sensitivity=sensitivity)
    half = max(n_scales * b, 3.0)
    lo, hi = true_value - half, true_value + half
    hists, theories = [], []
    for name, values in samples.items():
        values = np.asarray(values, dtype=float)
        if name == "Laplace":
            edges = np.linspace(lo, hi, int(np.ceil(2 * half / (b / bins_per_scale))) + 1)
            x = np.linspace(lo, hi, 241)
            dens = laplace_pdf(x - true_value, epsilon=epsilon, sensitivity=sensitivity)
        elif name == "geometric":
            width = max(1, int(round(b / bins_per_scale)))
            start = np.floor(true_value - half) - 0.5
            edges = np.arange(start, true_value + half + width, width)
            x = np.arange(np.ceil(lo), np.floor(hi) + 1)
            if len(x) > 120:  # keep the chart light: thin the pmf points out evenly
                x = x[:: int(np.ceil(len(x) / 120))]
            dens = geometric_pmf(np.round(x - true_value).astype(int), epsilon=epsilon,
                                 sensitivity=int(sensitivity))
        else:
            raise ValueError(f"unknown mechanism {name!r}: use 'Laplace' or 'geometric'")
        counts, edges = np.histogram(values, bins=edges)
        widths = np.diff(edges)
        hists.append(pd.DataFrame({"mechanism": name, "left": edges[:-1], "right": edges[1:],
                                   "density": counts / (len(values) * widths), "count": counts}))
        theories.append(pd.DataFrame({"mechanism": name, "x": x, "density": dens}))
    return pd.concat(hists, ignore_index=True), pd.concat(theories, ignore_index=True)


def noise_chart(hist: pd.DataFrame, theory: pd.DataFrame, *, true_value: float | None = None,
                title: str = "Released value = true count + noise", width: int = 300,
                height: int = 220) -> alt.HConcatChart:
    """One panel per mechanism: sampled histogram (bars) with the theory on top (line/points).

    The x axes share one domain so that the two mechanisms can be compared; the dashed rule is
    the true value.
    """
    hist, theory = _compact(hist), _compact(theory)
    lo, hi = float(hist["left"].min()), float(hist["right"].max())
    ymax = float(max(hist["density"].max(), theory["density"].max())) * 1.05
    x_scale = alt.Scale(domain=[lo, hi], nice=False)
    y_scale = alt.Scale(domain=[0, ymax])
    panels = []
    for name in hist["mechanism"].unique():
        color = _MECH_COLORS.get(name, "#888")
        h = hist[hist["mechanism"] == name]
        t = theory[theory["mechanism"] == name]
        bars = alt.Chart(h).mark_rect(color=color, opacity=0.45).encode(
            x=alt.X("left:Q", scale=x_scale, title="released value"), x2=alt.X2("right:Q"),
            y=alt.Y("density:Q", scale=y_scale, title="density (bars: samples)"),
            tooltip=[alt.Tooltip("left:Q", format=".2f"), alt.Tooltip("right:Q", format=".2f"),
                     alt.Tooltip("count:Q"), alt.Tooltip("density:Q", format=".4f")])
        if name == "geometric":
            curve = alt.Chart(t).mark_circle(color="black", size=14).encode(
                x=alt.X("x:Q", scale=x_scale), y=alt.Y("density:Q", scale=y_scale))
            label = "geometric (integer outputs): pmf as dots"
        else:
            curve = alt.Chart(t).mark_line(color="black", strokeWidth=1.6).encode(
                x=alt.X("x:Q", scale=x_scale), y=alt.Y("density:Q", scale=y_scale))
            label = "Laplace (real outputs): pdf as line"
        layers = [bars, curve]
        if true_value is not None:
            layers.append(alt.Chart(pd.DataFrame({"x": [true_value]})).mark_rule(
                strokeDash=[4, 3], color="gray").encode(x=alt.X("x:Q", scale=x_scale)))
        panels.append(alt.layer(*layers).properties(title=label, width=width, height=height))
    names = " and ".join(f"the {n} mechanism" for n in hist["mechanism"].unique())
    where = "" if true_value is None else f" around the true value {fmt(true_value)} (dashed line)"
    return describe(
        alt.hconcat(*panels).properties(title=title),
        f"{title}. Histograms of the released values{where} for {names}, over the window "
        f"{fmt(lo)} to {fmt(hi)}, against the exact noise distribution (line: density, dots: probabilities).",
        "Take-away: the releases are centred on the true value and spread over a width set by "
        "b = Δ/ε; the samples follow the exact distribution.")


# --------------------------------------------------------------------------- privacy loss
def privacy_loss_frames(value: float, neighbour_value: float, *, epsilon: float,
                        sensitivity: float, noise_sensitivity: float | None = None,
                        n_scales: float = 5.0, n_points: int = 241) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Output densities of the Laplace mechanism on two neighbouring datasets and their log-ratio.

    The mechanism releases f(D) + Laplace(b) with b = ``noise_sensitivity``/ε (default: the
    true ``sensitivity``, i.e. correctly calibrated). ``value`` = f(D), ``neighbour_value`` =
    f(D'). The privacy loss at output x is ln p_D(x)/p_D'(x) = (|x - f(D')| - |x - f(D)|)/b,
    which stays within ±|f(D) - f(D')|/b ≤ ±ε when b = Δ/ε (Dwork–Roth Thm 3.6).
    Returns ``(densities, loss)``: densities has x, dataset, density; loss has x, log_ratio.
    """
    b = laplace_scale(epsilon=epsilon, sensitivity=sensitivity if noise_sensitivity is None
                      else noise_sensitivity)
    lo = min(value, neighbour_value) - n_scales * b
    hi = max(value, neighbour_value) + n_scales * b
    x = np.linspace(lo, hi, n_points)
    p = laplace_pdf(x - value, epsilon=1.0, sensitivity=b)   # Laplace(b) density
    q = laplace_pdf(x - neighbour_value, epsilon=1.0, sensitivity=b)
    densities = pd.concat([pd.DataFrame({"x": x, "dataset": "D", "density": p}),
                           pd.DataFrame({"x": x, "dataset": "D′ (neighbour)", "density": q})],
                          ignore_index=True)
    loss = pd.DataFrame({"x": x, "log_ratio": (np.abs(x - neighbour_value) - np.abs(x - value)) / b})
    return densities, loss


_EVENT = re.compile(r"^\[(.+), (.+)\)$")


def audit_points(result: AuditResult) -> pd.DataFrame:
    """The audit's per-bin log-ratios as points: x (bin midpoint), log_ratio, lower_bound, count.

    Reads the bins back from the event names of a continuous audit ("[lo, hi)"); the pooled
    "(rare events)" row and events seen on one side only are left out.
    """
    rows = []
    for row in result.table.itertuples(index=False):
        m = _EVENT.match(str(row.event))
        if m is None or not np.isfinite(row.log_ratio):
            continue
        lo, hi = float(m.group(1)), float(m.group(2))
        rows.append({"x": (lo + hi) / 2, "log_ratio": float(row.log_ratio),
                     "lower_bound": float(row.lower_bound),
                     "count": int(row.count + row.count_neighbour)})
    return pd.DataFrame(rows, columns=["x", "log_ratio", "lower_bound", "count"])


def privacy_loss_chart(densities: pd.DataFrame, loss: pd.DataFrame, *, epsilon: float,
                       audit: pd.DataFrame | None = None, title: str | None = None,
                       width: int = 560, height: int = 170) -> alt.VConcatChart:
    """Top: the output densities on D and D′. Bottom: the privacy loss with the ±ε band.

    ``audit`` (from :func:`audit_points`) adds the empirical log-ratio of each audit bin as
    points: with a correctly calibrated mechanism they fall inside the band.
    """
    densities, loss = _compact(densities), _compact(loss)
    audit = None if audit is None else _compact(audit)
    lo, hi = float(loss["x"].min()), float(loss["x"].max())
    x_scale = alt.Scale(domain=[lo, hi], nice=False)
    top = alt.Chart(densities).mark_line(strokeWidth=2).encode(
        x=alt.X("x:Q", scale=x_scale, title="released value"),
        y=alt.Y("density:Q", title="output density"),
        color=alt.Color("dataset:N", title="input", scale=alt.Scale(range=_DATASET_COLORS)),
    ).properties(width=width, height=height, title="What an observer sees on D and on D′")
    lim = max(float(np.abs(loss["log_ratio"]).max()), epsilon) * 1.25
    if audit is not None and len(audit):
        lim = max(lim, float(np.abs(audit["log_ratio"]).max()) * 1.1)
    y_scale = alt.Scale(domain=[-lim, lim], nice=False)
    band = alt.Chart(pd.DataFrame({"lo": [-epsilon], "hi": [epsilon]})).mark_rect(
        color="#54a24b", opacity=0.15).encode(y=alt.Y("lo:Q", scale=y_scale), y2=alt.Y2("hi:Q"))
    edges = alt.Chart(pd.DataFrame({"y": [-epsilon, epsilon]})).mark_rule(
        color="#54a24b", strokeDash=[5, 3]).encode(y=alt.Y("y:Q", scale=y_scale))
    curve = alt.Chart(loss).mark_line(color="black", strokeWidth=2).encode(
        x=alt.X("x:Q", scale=x_scale, title="released value"),
        y=alt.Y("log_ratio:Q", scale=y_scale, title="ln p_D(x) / p_D′(x)"))
    layers = [band, edges, curve]
    if audit is not None and len(audit):
        layers.append(alt.Chart(audit).mark_point(color="#b279a2", filled=True, size=40).encode(
            x=alt.X("x:Q", scale=x_scale), y=alt.Y("log_ratio:Q", scale=y_scale),
            tooltip=[alt.Tooltip("x:Q", format=".2f"), alt.Tooltip("log_ratio:Q", format=".3f"),
                     alt.Tooltip("lower_bound:Q", format=".3f"), alt.Tooltip("count:Q")]))
    bottom = alt.layer(*layers).properties(
        width=width, height=height,
        title=f"Privacy loss (line: exact, dots: audit bins); green band: ±ε = ±{epsilon:.3g}")
    chart = alt.vconcat(top, bottom)
    chart = chart.properties(title=title) if title else chart
    worst = float(np.abs(loss["log_ratio"]).max())
    inside = worst <= epsilon * (1 + 1e-9)
    audit_text = ""
    if audit is not None and len(audit):
        outside = int((np.abs(audit["log_ratio"]) > epsilon).sum())
        audit_text = (f" The audit's {len(audit)} bins (dots) measure the loss empirically; "
                      f"{outside} of them fall outside the band.")
    return describe(
        chart,
        "Top: the output densities of the Laplace mechanism on a dataset D and its neighbour D′. "
        f"Bottom: the privacy loss ln p_D(x)/p_D′(x) at each released value x, with the band ±ε = ±{fmt(epsilon)}."
        + audit_text,
        f"Take-away: the exact loss reaches at most {fmt(worst)}, "
        + ("inside the band: the mechanism keeps its promise of ε." if inside else
           f"beyond ε = {fmt(epsilon)}: the noise is too small for the claimed ε."))


# --------------------------------------------------------------------------- exponential mechanism
def exponential_frame(candidates: Sequence[str], utilities: np.ndarray, epsilons: Sequence[float], *,
                      sensitivity: float = 1.0) -> pd.DataFrame:
    """Exact selection probabilities P[i] ∝ exp(ε·u_i/(2Δu)) (Dwork–Roth Def. 3.9) per ε.

    Tidy rows: candidate, utility, epsilon, probability (each ε's probabilities sum to 1).
    """
    utilities = np.asarray(utilities, dtype=float)
    if len(candidates) != len(utilities):
        raise ValueError("candidates and utilities must have the same length")
    parts = [pd.DataFrame({"candidate": list(map(str, candidates)), "utility": utilities,
                           "epsilon": float(eps),
                           "probability": exponential_probabilities(utilities, epsilon=eps,
                                                                    sensitivity=sensitivity)})
             for eps in epsilons]
    return pd.concat(parts, ignore_index=True)


def curve_labels(curves: pd.DataFrame, min_peak: float = 0.12) -> pd.DataFrame:
    """One direct label per curve that rises above ``min_peak``: at the curve's highest point,
    left-aligned in the left half of the (log) ε axis, right-aligned in the right half; labels on
    one side are moved apart (:func:`~dpexplore.plots._accessible.spread`)."""
    lo, hi = float(curves["epsilon"].min()), float(curves["epsilon"].max())
    peaks = curves.loc[curves.groupby("candidate", sort=False)["probability"].idxmax()]
    peaks = peaks[peaks["probability"] >= min_peak].copy()
    mid = np.sqrt(lo * hi)
    peaks["side"] = np.where(peaks["epsilon"] <= mid, "left", "right")
    peaks["label_y"] = peaks["probability"]
    for side in ("left", "right"):
        rows = peaks["side"] == side
        peaks.loc[rows, "label_y"] = np.minimum(spread(peaks.loc[rows, "probability"], 0.07), 1.04)
    return peaks[["candidate", "epsilon", "label_y", "side"]]


def exponential_chart(current: pd.DataFrame, curves: pd.DataFrame | None = None, *,
                      title: str = "Exponential mechanism: who gets picked?", width: int = 300,
                      height: int = 240, labels: pd.DataFrame | None = None) -> alt.HConcatChart | alt.Chart:
    """Bars: selection probabilities at the current ε (rows of one ε from :func:`exponential_frame`).

    ``curves`` (the same frame over many ε) adds a second panel: each candidate's probability
    against ε (log axis), with a rule at the current ε. Candidates differ by a colour-blind-safe
    colour *and* a dash pattern (one legend for both), and every curve that rises above 0.12 is
    labelled with its candidate's name at its highest point (``labels``: :func:`curve_labels` of
    ``curves``, computed here when not given; an explorer computes it once).
    """
    current = _compact(current)
    curves = None if curves is None else _compact(curves[["candidate", "utility", "epsilon", "probability"]])
    order = list(current.sort_values("utility", ascending=False)["candidate"])
    eps = float(current["epsilon"].iloc[0])
    n = len(order)
    colors = cycle(OKABE_ITO[:7], n)                                        # yellow left out: pale on white
    dashes = [DASHES[(i // 7) % len(DASHES)] for i in range(n)]           # a new dash after each 7 colours
    color = alt.Color("candidate:N", sort=order, title="candidate", scale=alt.Scale(domain=order, range=colors),
                      legend=None if curves is None else alt.Legend(symbolType="stroke", symbolStrokeWidth=2))
    bars = alt.Chart(current).mark_bar().encode(
        y=alt.Y("candidate:N", sort=order, title=None),
        x=alt.X("probability:Q", scale=alt.Scale(domain=[0, 1]), title="P[selected]"),
        color=color,
        tooltip=[alt.Tooltip("candidate:N"), alt.Tooltip("utility:Q"),
                 alt.Tooltip("probability:Q", format=".4f")],
    ).properties(width=width, height=height, title=f"at ε = {eps:.3g}")
    text = alt.Chart(current).mark_text(align="left", dx=3, fontSize=10).encode(
        y=alt.Y("candidate:N", sort=order), x=alt.X("probability:Q"),
        text=alt.Text("probability:Q", format=".2f"))
    left = bars + text
    best = current.loc[current["probability"].idxmax()]
    takeaway = (f"At ε = {eps:.3g}, {best['candidate']} (utility {fmt(best['utility'])}) is picked with "
                f"probability {best['probability']:.2f}; every other candidate keeps a chance.")
    what = (f"{title}. Bars: the probability that the exponential mechanism selects each of {n} candidates "
            f"at ε = {eps:.3g}, most useful first.")
    if curves is None:
        return describe(left.properties(title=title), what, takeaway)
    lo, hi = float(curves["epsilon"].min()), float(curves["epsilon"].max())
    ticks = [t for t in (0.001, 0.01, 0.1, 1, 10, 100, 1000) if lo * 0.999 <= t <= hi * 1.001]
    x = alt.X("epsilon:Q", scale=alt.Scale(type="log", domain=[lo, hi], nice=False), title="ε",
              axis=alt.Axis(values=ticks or None, format="~g"))   # decades only: log axes crowd "0.010.02…"
    lines = alt.Chart(curves).mark_line(strokeWidth=2).encode(
        x=x, y=alt.Y("probability:Q", scale=alt.Scale(domain=[0, 1.08]), title="P[selected]",
                     axis=alt.Axis(values=[0, 0.25, 0.5, 0.75, 1])),
        color=color, strokeDash=alt.StrokeDash("candidate:N", sort=order, title="candidate",
                                               scale=alt.Scale(domain=order, range=dashes),
                                               legend=None if n <= 7 else alt.Legend(symbolType="stroke",
                                                                                     symbolStrokeWidth=2)),
        tooltip=[alt.Tooltip("candidate:N"), alt.Tooltip("utility:Q"),
                 alt.Tooltip("epsilon:Q", format=".3g"), alt.Tooltip("probability:Q", format=".3f")])
    labels = curve_labels(curves) if labels is None else labels
    names = alt.Chart(labels).mark_text(   # one layer: each label's side is in its data
        align=alt.ExprRef("datum.side"), dx=alt.ExprRef("datum.side == 'left' ? 4 : -4"), dy=-7, fontSize=10,
        fontWeight="bold").encode(x=x, y=alt.Y("label_y:Q"), text=alt.Text("candidate:N"), color=color)
    rule = alt.Chart(pd.DataFrame({"epsilon": [eps]})).mark_rule(color="gray", strokeDash=[4, 3]).encode(
        x=alt.X("epsilon:Q"))
    right = alt.layer(lines, rule, names).properties(width=width, height=height, title="as ε grows")
    return describe(
        alt.hconcat(left, right).properties(title=title),
        what + " Right: each candidate's probability against ε on a log axis (line colour and dash "
        "pattern tell the candidates apart; curves are labelled with their names), the dashed rule "
        "marks the current ε.",
        takeaway + " As ε grows the most useful candidate takes over; at small ε the choice is "
        "almost uniform.")


# --------------------------------------------------------------------------- budget
def budget_frame(summary: pd.DataFrame, total: float) -> pd.DataFrame:
    """The "where did ε go" rows: each summary item (item, charged) plus the unspent remainder.

    ``summary`` is :meth:`BudgetAccountant.summary`; rows get start/end offsets for a stacked bar.
    """
    rows = summary[["item", "charged"]].copy()
    spent = float(rows["charged"].sum())
    unspent = max(0.0, float(total) - spent)
    if unspent > 1e-12 * max(1.0, float(total)):
        rows = pd.concat([rows, pd.DataFrame({"item": ["unspent"], "charged": [unspent]})],
                         ignore_index=True)
    rows["end"] = rows["charged"].cumsum()
    rows["start"] = rows["end"] - rows["charged"]
    rows["share"] = rows["charged"] / float(total)
    rows["bar"] = "ε"
    return rows


def budget_chart(summary: pd.DataFrame, total: float, *, title: str = "Where did ε go?",
                 width: int = 560, height: int = 60) -> alt.LayerChart:
    """One horizontal bar of length ``total``: a segment per item charged, grey for unspent."""
    rows = budget_frame(summary, total)
    items = list(rows["item"])
    palette = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#ff9da6", "#9d755d"]
    colors = [("#d0d0d0" if it == "unspent" else palette[i % len(palette)]) for i, it in enumerate(items)]
    x_scale = alt.Scale(domain=[0, float(total)], nice=False)
    bar = alt.Chart(rows).mark_bar(height=height * 0.6).encode(
        x=alt.X("start:Q", scale=x_scale, title=f"ε (total {total:.3g})"), x2=alt.X2("end:Q"),
        y=alt.Y("bar:N", title=None, axis=None),
        color=alt.Color("item:N", sort=items, scale=alt.Scale(domain=items, range=colors),
                        title=None, legend=alt.Legend(orient="bottom", columns=2)),
        tooltip=[alt.Tooltip("item:N"), alt.Tooltip("charged:Q", format=".4f"), alt.Tooltip("share:Q", format=".1%")])
    text = alt.Chart(rows).transform_filter(alt.datum.share >= 0.08).transform_calculate(
        mid="(datum.start + datum.end) / 2").mark_text(fontSize=11).encode(
        x=alt.X("mid:Q", scale=x_scale), y=alt.Y("bar:N", axis=None),
        color=alt.ColorValue(**alt.condition(alt.datum.item == "unspent", alt.value("black"), alt.value("white"))),
        text=alt.Text("charged:Q", format=".3g"))
    spent = rows[rows["item"] != "unspent"]
    parts = "; ".join(f"{it} {fmt(c)}" for it, c in zip(spent["item"], spent["charged"]))
    left = float(total) - float(spent["charged"].sum())
    return describe(
        (bar + text).properties(title=title, width=width, height=height),
        f"{title} One bar of length ε = {fmt(total)} cut into the ε charged per item: {parts or 'nothing'}.",
        f"Take-away: {fmt(float(spent['charged'].sum()))} of {fmt(total)} is spent"
        + (f", {fmt(left)} is left for later." if left > 1e-12 * max(1.0, float(total)) else ": the budget is used up."))


# --------------------------------------------------------------------------- accuracy before release
def accuracy_chart(hist: pd.DataFrame, theory: pd.DataFrame, *, epsilon: float, sensitivity: float,
                   alpha: float, exceeded: float | None = None, width: int = 520,
                   height: int = 200) -> alt.LayerChart:
    """The Laplace noise with its (1 − α) error bound a = b·ln(1/α) marked (Dwork & Roth 2014,
    Theorem 3.8): the density (line), the tails beyond ±a filled (together they hold α of the
    mass), and optionally the histogram of sampled noise (bars).

    ``hist`` and ``theory`` are :func:`noise_frames` of Laplace noise around 0 (their "Laplace"
    rows are used); ``exceeded``: the share of the samples at or beyond ±a (an empirical check
    of α), written in the title.
    """
    bound = laplace_accuracy(epsilon, sensitivity, alpha)
    hist = _compact(hist[hist["mechanism"] == "Laplace"])
    theory = theory[theory["mechanism"] == "Laplace"][["x", "density"]]
    edge = laplace_pdf(np.array([bound]), epsilon=epsilon, sensitivity=sensitivity)[0]
    tails = pd.concat([theory[theory["x"] <= -bound], pd.DataFrame({"x": [-bound, bound], "density": [edge, edge]}),
                       theory[theory["x"] >= bound]]).sort_values("x")
    tails["side"] = np.where(tails["x"] < 0, "low", "high")
    theory, tails = _compact(theory), _compact(tails)
    lo, hi = float(theory["x"].min()), float(theory["x"].max())
    x_scale = alt.Scale(domain=[lo, hi], nice=False)
    x = alt.X("x:Q", scale=x_scale, title="noise = released − true value")
    y = alt.Y("density:Q", title="density")
    layers = []
    if len(hist):
        layers.append(alt.Chart(hist).mark_rect(color=OKABE_ITO[4], opacity=0.45).encode(
            x=alt.X("left:Q", scale=x_scale, title="noise = released − true value"), x2=alt.X2("right:Q"), y=y,
            tooltip=[alt.Tooltip("left:Q", format=".2f"), alt.Tooltip("right:Q", format=".2f"),
                     alt.Tooltip("count:Q")]))
    layers += [
        alt.Chart(tails).mark_area(color=OKABE_ITO[3], opacity=0.55).encode(
            x=x, y=y, detail=alt.Detail("side:N")),
        alt.Chart(theory).mark_line(color="black", strokeWidth=1.6).encode(x=x, y=y),
    ]
    marks = pd.DataFrame({"x": [-bound, bound], "label": [f"−a = {-bound:.3g}", f"+a = {bound:.3g}"],
                          "align": ["right", "left"]})
    layers.append(alt.Chart(marks).mark_rule(color=OKABE_ITO[3], strokeDash=[6, 3], strokeWidth=2).encode(x=x))
    for align, dx in (("right", -4), ("left", 4)):
        layers.append(alt.Chart(marks[marks["align"] == align]).mark_text(
            align=align, dx=dx, baseline="top", y=4, fontSize=11, color=OKABE_ITO[3], fontWeight="bold").encode(
            x=x, text=alt.Text("label:N")))
    share = "" if exceeded is None else f"; share of draws beyond ±a: {exceeded:.1%}"
    title = f"Laplace noise at ε = {epsilon:.3g}, Δ = {sensitivity:.3g}: |noise| < a with probability {1 - alpha:.0%}{share}"
    return describe(
        alt.layer(*layers).properties(width=width, height=height, title=title),
        f"The density of the Laplace noise of scale b = Δ/ε = {laplace_scale(epsilon=epsilon, sensitivity=sensitivity):.3g}"
        + (" over a histogram of sampled noise" if len(hist) else "")
        + f", with the error bound a = b·ln(1/α) = {bound:.3g} for α = {alpha:.3g} marked by dashed lines at ±a "
        "and the two tails beyond them filled.",
        f"Take-away: the filled tails hold {alpha:.1%} of the noise, so a release is within {bound:.3g} of the "
        f"truth with probability {1 - alpha:.1%}"
        + ("." if exceeded is None else f"; {exceeded:.1%} of the sampled draws fell beyond the bound."))
