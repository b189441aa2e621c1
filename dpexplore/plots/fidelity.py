"""Accuracy or shape? Each publisher's classification accuracy against how closely its synthetic
table keeps the real table's shape (mean total-variation distance over public bins, 1-way and
2-way: :mod:`dpexplore.evaluate.fidelity`), at each ε, with other libraries' synthesizers (MST,
McKenna, Miklau & Sheldon 2021) as grey reference points.

Read a panel as "which one when": the higher a point, the better the release's classifier (use it
to predict); the further left, the closer its synthetic table to the real one (use the table for
counts and cross-tabulations). Plot functions take data and return charts.
"""
from __future__ import annotations

from typing import Sequence

import altair as alt
import numpy as np
import pandas as pd

from ._accessible import OKABE_ITO, SHAPES, cycle, describe, fmt

__all__ = ["FIDELITY_WAYS", "fidelity_points", "fidelity_chart"]

#: the shape measures a chart can draw, with their axis titles
FIDELITY_WAYS = {"tvd_1way": "mean 1-way TVD (each column)", "tvd_2way": "mean 2-way TVD (each pair of columns)"}
_NEED = {"method", "epsilon", "accuracy", *FIDELITY_WAYS}
_PEER_COLOR = "#555555"


def fidelity_points(results: pd.DataFrame, peers: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per (method, ε): the median over runs of ``accuracy``, ``tvd_1way`` and
    ``tvd_2way`` with their smallest and largest run (``*_lo``, ``*_hi``), ``kind``
    "dpexplore"; then the ``peers`` (:func:`~dpexplore.evaluate.showdown_results.load_peers`:
    ``label, epsilon, metric, value``) that report all three metrics at one of the same ε,
    ``kind`` "peer". ``results`` holds one row per run (``benchmarks/fidelity.py``) of a single
    table: a ``dataset`` column with several values is refused."""
    if not isinstance(results, pd.DataFrame) or not _NEED <= set(results.columns):
        raise ValueError(f"results need the columns {sorted(_NEED)} (benchmarks/fidelity.py writes them)")
    if "dataset" in results.columns and results["dataset"].nunique() > 1:
        raise ValueError(f"results hold several tables {sorted(results['dataset'].unique())}: pass one")
    if results.empty:
        raise ValueError("no results to draw")
    metrics = ["accuracy", *FIDELITY_WAYS]
    grouped = results.groupby(["method", "epsilon"], sort=False)[metrics]
    points = grouped.median().join(grouped.min().add_suffix("_lo")).join(grouped.max().add_suffix("_hi"))
    points = points.reset_index().assign(kind="dpexplore", runs=grouped.size().to_numpy())
    if peers is not None and len(peers):
        wide = peers[peers["metric"].isin(metrics) & peers["epsilon"].isin(set(points["epsilon"]))].pivot_table(
            index=["label", "epsilon"], columns="metric", values="value", aggfunc="mean")
        wide = wide.dropna(subset=[m for m in metrics if m in wide.columns])
        if set(metrics) <= set(wide.columns) and len(wide):
            wide = wide.reset_index().rename(columns={"label": "method"})
            for m in metrics:
                wide[f"{m}_lo"] = wide[f"{m}_hi"] = wide[m]
            points = pd.concat([points, wide.assign(kind="peer", runs=np.nan)[points.columns]], ignore_index=True)
    return points


def fidelity_chart(results: pd.DataFrame, *, peers: pd.DataFrame | None = None,
                   ways: Sequence[str] = ("tvd_1way", "tvd_2way"), majority: float | None = None,
                   title: str | None = None) -> alt.TopLevelMixin:
    """Test accuracy (y) against the synthetic table's distance to the real one (x, mean TVD over
    public bins; 0 = the same shape) for each publishing method: one panel per ε (columns) and per
    measure in ``ways`` (rows). A filled point per method (its own colour and shape), at the median
    of the runs, with thin lines from the smallest to the largest run on both axes; ``peers`` as grey
    hollow points (one shape each); the majority class (``majority``, else the median of a
    ``majority`` column) as a dashed line: a classifier below it is worse than guessing.
    See :func:`fidelity_points` for ``results`` and ``peers``."""
    ways = list(ways)
    if not ways or any(w not in FIDELITY_WAYS for w in ways):
        raise ValueError(f"ways must name some of {list(FIDELITY_WAYS)}, got {ways!r}")
    points = fidelity_points(results, peers)
    if majority is None and "majority" in results.columns:
        majority = float(results["majority"].median())
    ours = points[points["kind"] == "dpexplore"]
    methods = list(dict.fromkeys(ours["method"]))
    peer_names = list(dict.fromkeys(points.loc[points["kind"] == "peer", "method"]))
    epsilons = sorted(set(ours["epsilon"]))
    # one legend: colour and shape share the domain (the peers in grey)
    legend = alt.Legend(orient="bottom", direction="vertical", labelLimit=360, symbolOpacity=1)
    names = methods + peer_names
    color = alt.Color("method:N", title="method", legend=legend, scale=alt.Scale(
        domain=names, range=cycle(OKABE_ITO[:7], len(methods)) + [_PEER_COLOR] * len(peer_names)))
    shape = alt.Shape("method:N", title="method", legend=legend,
                      scale=alt.Scale(domain=names, range=cycle(SHAPES, len(names))))
    low = min(points["accuracy_lo"].min(), majority if majority is not None else np.inf)
    high = points["accuracy_hi"].max()
    y_scale = alt.Scale(domain=[float(np.floor(low * 50) / 50), float(np.ceil(high * 50) / 50)], zero=False)
    rows = []
    for way in ways:
        panels = []
        for eps in epsilons:   # each panel its own distance axis from 0: the choice is made at one ε
            here = points[np.isclose(points["epsilon"], eps)]
            x_scale = alt.Scale(domain=[0.0, max(float(np.ceil(here[f"{way}_hi"].max() * 20) / 20), 0.05)])
            x = alt.X(f"{way}:Q", scale=x_scale, title=f"{FIDELITY_WAYS[way]} ← closer shape")
            y = alt.Y("accuracy:Q", scale=y_scale, title="test accuracy (higher: better classifier)")
            tooltip = [alt.Tooltip("method:N"), alt.Tooltip("epsilon:Q", title="ε", format=".3g"),
                       alt.Tooltip("accuracy:Q", format=".3f"), alt.Tooltip("tvd_1way:Q", format=".3f"),
                       alt.Tooltip("tvd_2way:Q", format=".3f")]
            base = alt.Chart(here[here["kind"] == "dpexplore"])
            layers = [
                base.mark_rule(strokeWidth=1, opacity=0.6).encode(
                    x=x, y=alt.Y("accuracy_lo:Q", scale=y_scale), y2=alt.Y2("accuracy_hi:Q"), color=color),
                base.mark_rule(strokeWidth=1, opacity=0.6).encode(
                    x=alt.X(f"{way}_lo:Q", scale=x_scale), x2=alt.X2(f"{way}_hi:Q"), y=y, color=color),
                base.mark_point(filled=True, size=110, opacity=1).encode(
                    x=x, y=y, color=color, shape=shape, tooltip=tooltip)]
            peer_rows = here[here["kind"] == "peer"]
            if len(peer_rows):
                layers.append(alt.Chart(peer_rows).mark_point(filled=False, size=110, strokeWidth=2).encode(
                    x=x, y=y, color=color, shape=shape, tooltip=tooltip))
            if majority is not None:
                floor = alt.Chart(pd.DataFrame({"accuracy": [majority], "label": ["majority class"]}))
                layers += [floor.mark_rule(strokeDash=[5, 4], color="black").encode(y=y),
                           floor.mark_text(align="left", baseline="top", dy=3, x=3, fontSize=10,
                                           color="black").encode(y=y, text=alt.Text("label:N"))]
            panels.append(alt.layer(*layers).properties(width=250, height=200, title=f"ε = {fmt(eps)}"))
        rows.append(alt.hconcat(*panels) if len(panels) > 1 else panels[0])
    chart = alt.vconcat(*rows) if len(rows) > 1 else rows[0]
    chart = chart.resolve_scale(color="shared", shape="shared").properties(title=title or "")
    return describe(chart, _what(title, methods, peer_names, epsilons, ways, majority), _takeaway(points, epsilons))


def _what(title: str | None, methods: list[str], peers: list[str], epsilons: list[float], ways: list[str],
          majority: float | None) -> str:
    measures = " and ".join(FIDELITY_WAYS[w] for w in ways)
    return (f"{title + '. ' if title else ''}Scatter plots, one per ε ({', '.join(fmt(e) for e in epsilons)})"
            f"{' and measure' if len(ways) > 1 else ''}: test accuracy against the {measures} between each "
            f"synthetic table and the real one, for {', '.join(methods)}, each with its own colour and shape, "
            "at the median of the runs with thin lines from the smallest to the largest run"
            + (f"; {', '.join(peers)} as grey hollow points" if peers else "")
            + (f"; the majority class ({fmt(majority)}) as a black dashed line" if majority is not None else "")
            + ". Higher is a better classifier, further left a closer shape.")


def _takeaway(points: pd.DataFrame, epsilons: list[float]) -> str:
    parts = []
    for eps in epsilons:
        here = points[np.isclose(points["epsilon"], eps)]
        ours = here[here["kind"] == "dpexplore"]
        top, close = ours.loc[ours["accuracy"].idxmax()], ours.loc[ours["tvd_1way"].idxmin()]
        text = (f"at ε = {fmt(eps)}, the best classifier is {top['method']} (accuracy {top['accuracy']:.3f}), "
                f"the closest table {close['method']} (1-way TVD {close['tvd_1way']:.3f}, "
                f"2-way {close['tvd_2way']:.3f})")
        for peer in here[here["kind"] == "peer"].itertuples():
            text += (f"; {peer.method}: accuracy {peer.accuracy:.3f}, TVD {peer.tvd_1way:.3f} / "
                     f"{peer.tvd_2way:.3f}")
        parts.append(text)
    return "Take-away: " + "; ".join(parts) + "."
