"""Charts for the Gaussian mechanism and (ε, δ) (notebook 12): its two calibrations, and its
privacy-loss distribution with the area that makes δ(ε).

``*_frame`` functions turn the closed forms of :mod:`dpexplore.mechanisms` into small tidy
DataFrames; ``*_chart`` functions draw them. Nothing here spends privacy budget.

References: Dwork & Roth (2014) Thm A.1 (the classical σ = Δ√(2 ln(1.25/δ))/ε, for ε < 1); Balle &
Wang (2018) Thm 8 (the exact δ(ε), hence the analytic σ) and §3 (the privacy loss of the Gaussian
mechanism is N(μ, 2μ), μ = Δ²/(2σ²), and δ(ε) = E[(1 − e^(ε − L))₊]).
"""
from __future__ import annotations

from typing import Sequence

import altair as alt
import numpy as np
import pandas as pd

from ..mechanisms import gaussian_delta, gaussian_privacy_loss, gaussian_scale
from ._accessible import DASHES, OKABE_ITO, describe, fmt

__all__ = ["calibration_frame", "calibration_chart", "loss_distribution_frame", "loss_distribution_chart"]

CALIBRATIONS = {"analytic": (OKABE_ITO[0], DASHES[0]), "classical": (OKABE_ITO[1], DASHES[1])}


# --------------------------------------------------------------------------- σ against ε
def calibration_frame(epsilons: Sequence[float], *, delta: float, sensitivity: float = 1.0) -> pd.DataFrame:
    """σ of both calibrations at each ε (rows: epsilon, calibration, sigma); the classical σ only
    where it holds (ε < 1, Dwork & Roth 2014, Thm A.1).

    >>> calibration_frame([0.5, 2.0], delta=1e-5).round(3).values.tolist()
    [[0.5, 'analytic', 7.032], [2.0, 'analytic', 1.994], [0.5, 'classical', 9.69]]
    """
    eps = np.asarray(epsilons, dtype=float)
    rows = [(e, "analytic", gaussian_scale(epsilon=e, delta=delta, sensitivity=sensitivity)) for e in eps]
    rows += [(e, "classical", gaussian_scale(epsilon=e, delta=delta, sensitivity=sensitivity,
                                             calibration="classical")) for e in eps if e < 1]
    return pd.DataFrame(rows, columns=["epsilon", "calibration", "sigma"])


def calibration_chart(frame: pd.DataFrame, *, delta: float, sensitivity: float = 1.0,
                      epsilon: float | None = None, title: str | None = None, width: int = 420,
                      height: int = 240) -> alt.LayerChart:
    """σ against ε (both log axes), one line per calibration told apart by colour, dash and a label
    at the line's left end; ``epsilon`` marks one ε with a rule and the σ of both there."""
    title = title or f"Gaussian noise σ for (ε, δ = {fmt(delta)}), L2 sensitivity Δ₂ = {fmt(sensitivity)}"
    names = [c for c in CALIBRATIONS if c in set(frame["calibration"])]
    color = alt.Color("calibration:N", scale=alt.Scale(domain=names, range=[CALIBRATIONS[c][0] for c in names]),
                      legend=None)
    dash = alt.StrokeDash("calibration:N", scale=alt.Scale(domain=names, range=[CALIBRATIONS[c][1] for c in names]),
                          legend=None)
    lo, hi = float(frame["epsilon"].min()), float(frame["epsilon"].max())
    x = alt.X("epsilon:Q", scale=alt.Scale(type="log", domain=[lo, hi], nice=False), title="ε",
              axis=alt.Axis(values=[t for t in (0.01, 0.03, 0.1, 0.3, 1, 3, 10) if lo <= t <= hi], format="~g"))
    y = alt.Y("sigma:Q", scale=alt.Scale(type="log"), title="σ (standard deviation of the noise)",
              axis=alt.Axis(values=[0.01, 0.03, 0.1, 0.3, 1, 3, 10, 30, 100, 300, 1000], format="~g"))
    lines = alt.Chart(frame).mark_line(strokeWidth=2.5).encode(
        x=x, y=y, color=color, strokeDash=dash,
        tooltip=[alt.Tooltip("calibration:N"), alt.Tooltip("epsilon:Q", format=".3g"),
                 alt.Tooltip("sigma:Q", format=".4g")])
    ends = frame.loc[frame.groupby("calibration", sort=False)["epsilon"].idxmin()]
    ends = ends.assign(label=ends["calibration"] + np.where(ends["calibration"] == "classical", " (ε < 1 only)", ""))
    labels = alt.Chart(ends).mark_text(align="left", dx=4, dy=-9, fontWeight="bold", fontSize=11).encode(
        x=x, y=y, text=alt.Text("label:N"), color=color)
    layers = [lines, labels]
    marked = ""
    if epsilon is not None:
        here = frame[np.isclose(frame["epsilon"], epsilon)]
        layers.append(alt.Chart(pd.DataFrame({"epsilon": [epsilon]})).mark_rule(color="gray", strokeDash=[4, 3])
                      .encode(x=alt.X("epsilon:Q")))
        if len(here):
            layers.append(alt.Chart(here).mark_point(filled=True, size=60).encode(x=x, y=y, color=color,
                                                                                  shape=alt.Shape("calibration:N",
                                                                                                  legend=None)))
            marked = " At ε = " + fmt(epsilon) + ": " + "; ".join(
                f"{c} σ = {fmt(s)}" for c, s in zip(here["calibration"], here["sigma"])) + "."
    analytic = frame[frame["calibration"] == "analytic"]
    classical = frame[frame["calibration"] == "classical"]
    both = analytic.merge(classical, on="epsilon", suffixes=("_a", "_c"))
    ratio = (both["sigma_c"] / both["sigma_a"]) if len(both) else pd.Series(dtype=float)
    takeaway = ("the analytic σ is below the classical one wherever both apply"
                + (f" (by a factor {fmt(ratio.min(), 2)} to {fmt(ratio.max(), 2)})" if len(ratio) else "")
                + ", and it goes on past ε = 1, where the classical bound does not hold.")
    return describe(
        alt.layer(*layers).properties(title=title, width=width, height=height),
        f"{title}. Lines of the noise standard deviation σ against ε (log axes) for the analytic calibration "
        "(solid blue, Balle & Wang 2018) and the classical one (dashed orange, Dwork & Roth Thm A.1, drawn for "
        "ε < 1 only), each labelled at its left end." + marked,
        takeaway)


# --------------------------------------------------------------------------- the privacy-loss distribution
def loss_distribution_frame(*, sigma: float, epsilon: float, sensitivity: float = 1.0,
                            n_points: int = 401) -> tuple[pd.DataFrame, dict]:
    """The privacy loss L of the Gaussian mechanism, N(μ, 2μ) with μ = Δ²/(2σ²) (Balle & Wang 2018,
    §3), on a grid: ``loss``, its ``density`` f, ``tail`` (f where L > ε, else 0) and ``weighted``
    ((1 − e^(ε − L))·f where L > ε, else 0), whose area is exactly δ(ε). Returns the frame and
    {"mu", "epsilon", "tail": P[L > ε], "delta": δ(ε)}.

    >>> frame, areas = loss_distribution_frame(sigma=1.0, epsilon=1.0)
    >>> round(areas["tail"], 4), round(areas["delta"], 4)
    (0.3085, 0.1269)
    """
    loss = gaussian_privacy_loss(sigma=sigma, sensitivity=sensitivity)
    mu, sd = float(loss.mean()), float(loss.std())
    grid = np.linspace(min(mu - 4.5 * sd, epsilon - sd), max(mu + 4.5 * sd, epsilon + 2 * sd), n_points)
    grid = np.unique(np.concatenate([grid, [epsilon]]))
    density = loss.pdf(grid)
    beyond = grid >= epsilon
    frame = pd.DataFrame({"loss": grid, "density": density, "tail": np.where(beyond, density, 0.0),
                          "weighted": np.where(beyond, -np.expm1(epsilon - grid) * density, 0.0)})
    areas = {"mu": mu, "epsilon": float(epsilon), "tail": float(loss.sf(epsilon)),
             "delta": gaussian_delta(sigma=sigma, epsilon=epsilon, sensitivity=sensitivity)}
    return frame, areas


def loss_distribution_chart(frame: pd.DataFrame, areas: dict, *, title: str | None = None, width: int = 520,
                            height: int = 220) -> alt.LayerChart:
    """The density of the privacy loss L (black line), the region L > ε (pale, its area P[L > ε])
    and inside it the weighted density (1 − e^(ε − L))·f (dark, its area δ(ε)); a rule at ε. Each area
    is named by a label beside it as well as by its colour."""
    eps, tail, delta = areas["epsilon"], areas["tail"], areas["delta"]
    title = title or f"Privacy loss of the Gaussian mechanism: μ = {fmt(areas['mu'])}, ε = {fmt(eps)}"
    x = alt.X("loss:Q", title="privacy loss L = ln p_D(Y)/p_D′(Y), Y drawn on D", scale=alt.Scale(nice=False))
    y = alt.Y("density:Q", title="density of L")
    pale = alt.Chart(frame).mark_area(color=OKABE_ITO[4], opacity=0.45).encode(x=x, y=alt.Y("tail:Q"))
    dark = alt.Chart(frame).mark_area(color=OKABE_ITO[3], opacity=0.85).encode(x=x, y=alt.Y("weighted:Q"))
    line = alt.Chart(frame).mark_line(color="black", strokeWidth=1.8).encode(
        x=x, y=y, tooltip=[alt.Tooltip("loss:Q", format=".3f"), alt.Tooltip("density:Q", format=".4f")])
    rule = alt.Chart(pd.DataFrame({"loss": [eps]})).mark_rule(color="black", strokeDash=[5, 3]).encode(x=x)
    peak = float(frame["density"].max())
    free = max(eps, areas["mu"] + 1.6 * np.sqrt(2 * areas["mu"]))      # right of the bulk of the density
    notes = pd.DataFrame({
        "loss": [eps, free, free],
        "density": [peak * 1.02, peak * 0.62, peak * 0.46],
        "label": [f"ε = {fmt(eps)}", f"pale: P[L > ε] = {tail:.3g}", f"dark: δ(ε) = {delta:.3g}"],
        "colour": ["black", "#0b5394", "#7a2a00"]})
    text = alt.Chart(notes).mark_text(align="left", dx=5, fontSize=11, fontWeight="bold").encode(
        x=x, y=alt.Y("density:Q"), text=alt.Text("label:N"), color=alt.Color("colour:N", scale=None))
    ratio = tail / delta if delta > 0 else float("inf")
    return describe(
        alt.layer(pale, dark, line, rule, text).properties(title=title, width=width, height=height),
        f"{title}. The density of the privacy loss L, a normal with mean μ = {fmt(areas['mu'])} and variance 2μ "
        f"(black line), a dashed rule at ε = {fmt(eps)}, the region where L exceeds ε shaded pale (area "
        f"P[L > ε] = {tail:.3g}) and inside it a darker area under (1 − e^(ε − L)) times the density, whose area "
        f"is δ(ε) = {delta:.3g}.",
        f"Take-away: δ is not the probability that the loss exceeds ε: that probability is {fmt(ratio, 2)} times "
        "larger here. An output with loss L > ε only uses up the part 1 − e^(ε − L) of its probability, and δ "
        "adds up those parts.")
