"""Charts of the method showdown: a metric against ε with its spread, reference lines (majority
class, non-private, other libraries' methods at the same ε), the ranking at one ε, run times.

Several tables (a ``dataset`` column) are drawn side by side with ``hconcat``, one panel per
table in the order they appear: each panel gets its own explicit order of methods (best first,
ties broken by speed then name), so the ranking reads the same in JupyterLab, Voilà and a PNG.
"""
from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from ._accessible import DASHES, OKABE_ITO, cycle, describe, fmt

__all__ = ["error_chart", "runtime_chart", "ranking_chart", "ranking_order", "HIGHER_IS_BETTER"]

_NEED = {"method", "epsilon", "median", "q25", "q75"}
#: Metrics where larger is better (the ranking puts the largest first).
HIGHER_IS_BETTER = frozenset({"accuracy", "auc"})
_PEER_COLOR = "#555555"


def _check(summary: pd.DataFrame) -> None:
    if not isinstance(summary, pd.DataFrame) or not _NEED <= set(summary.columns):
        raise ValueError(f"summary needs the columns {sorted(_NEED)} (use summarise())")


def _panels(frame: pd.DataFrame) -> list[tuple[str | None, pd.DataFrame]]:
    """(dataset, rows) per dataset in order of appearance; [(None, frame)] without the column."""
    if "dataset" not in frame.columns:
        return [(None, frame)]
    return [(d, frame[frame["dataset"] == d]) for d in dict.fromkeys(frame["dataset"])]


def _peers_for(peers: pd.DataFrame | None, dataset: str | None, metric: str, peers_dataset: str) -> pd.DataFrame:
    """The peer rows to draw on ``dataset``'s panel, in ``metric`` (error = 1 − accuracy)."""
    if peers is None or len(peers) == 0:
        return pd.DataFrame(columns=["label", "epsilon", "value"])
    p = peers[peers["dataset"] == dataset] if "dataset" in peers.columns else \
        (peers if dataset in (None, peers_dataset) else peers.iloc[:0])
    if metric in set(p["metric"]):
        p = p[p["metric"] == metric]
    elif metric == "error" and "accuracy" in set(p["metric"]):
        p = p[p["metric"] == "accuracy"].assign(value=lambda f: 1.0 - f["value"])
    else:
        p = p.iloc[:0]
    label = p["label"] if "label" in p.columns else p["library"] + " " + p["method"]
    return pd.DataFrame({"label": label, "epsilon": p["epsilon"].astype(float), "value": p["value"].astype(float)})


def error_chart(summary: pd.DataFrame, *, metric: str = "error", title: str | None = None,
                peers: pd.DataFrame | None = None, peers_dataset: str = "Adult") -> alt.TopLevelMixin:
    """Median ``metric`` (line + points) and interquartile band per method against ε (log axis);
    methods with ε = inf (majority class, non-private) are dashed horizontal rules.

    ``peers``: other libraries' results (:func:`~dpexplore.evaluate.showdown.load_peers`:
    ``label, epsilon, metric, value``, optionally ``dataset``), drawn in grey as dotted lines with
    hollow markers, one shape per peer, with a legend; without a ``dataset`` column they belong to
    the panel ``peers_dataset``. One panel per ``dataset``, side by side.
    """
    _check(summary)
    s = summary[summary["metric"] == metric] if "metric" in summary.columns else summary
    # one colour-blind-safe colour and one dash pattern per private method, shared by the panels; the
    # legends sit under the panels, so that long peer names never widen the chart past the page
    methods = list(dict.fromkeys(s.loc[np.isfinite(s["epsilon"]), "method"]))
    legend = dict(orient="bottom", direction="vertical", symbolOpacity=1, labelLimit=360, symbolStrokeWidth=2)
    panels = []
    for dataset, rows in _panels(s):
        data = rows.assign(reference=~np.isfinite(rows["epsilon"]))
        data["epsilon"] = data["epsilon"].where(~data["reference"])  # inf → null: JSON has no inf
        x = alt.X("epsilon:Q", scale=alt.Scale(type="log"), title="ε (log scale)",
                  axis=alt.Axis(values=sorted(set(data["epsilon"].dropna())), format=".2g"))
        lines_legend = alt.Legend(**legend, symbolType="stroke")   # the legend shows each dash pattern
        color = alt.Color("method:N", title="method", legend=lines_legend,
                          scale=alt.Scale(domain=methods, range=cycle(OKABE_ITO[:7], len(methods))))
        dash = alt.StrokeDash("method:N", title="method", legend=lines_legend,
                              scale=alt.Scale(domain=methods, range=cycle(DASHES, len(methods))))
        private, reference = alt.datum.reference == False, alt.datum.reference == True  # noqa: E712
        base = alt.Chart(data)
        band = base.mark_area(opacity=0.18).encode(
            x=x, y=alt.Y("q25:Q"), y2=alt.Y2("q75:Q"), color=color).transform_filter(private)
        line = base.mark_line(point=True, strokeWidth=2).encode(
            x=x, y=alt.Y("median:Q", title=f"test {metric} (median, band = quartiles)",
                         scale=alt.Scale(zero=False)), color=color, strokeDash=dash,
            tooltip=[alt.Tooltip("method"), alt.Tooltip("epsilon:Q", format=".3g"),
                     alt.Tooltip("median:Q", format=".3f"),
                     alt.Tooltip("q25:Q", format=".3f"), alt.Tooltip("q75:Q", format=".3f")]).transform_filter(private)
        rule = base.mark_rule(strokeDash=[5, 4], color="black").encode(
            y=alt.Y("median:Q"),
            tooltip=[alt.Tooltip("method"), alt.Tooltip("median:Q", format=".3f")]).transform_filter(reference)
        label = base.mark_text(align="left", dx=4, dy=-6, color="black").encode(
            y=alt.Y("median:Q"), text=alt.Text("method:N"), x=alt.XValue(2)).transform_filter(reference)
        layers = [band, line, rule, label]
        p = _peers_for(peers, dataset, metric, peers_dataset)
        if len(p):
            shape = alt.Shape("label:N", title="other libraries (grey)", legend=alt.Legend(**legend))
            pb = alt.Chart(p)
            layers += [pb.mark_line(color=_PEER_COLOR, strokeDash=[2, 2], strokeWidth=1).encode(
                           x=alt.X("epsilon:Q", scale=alt.Scale(type="log")), y=alt.Y("value:Q"),
                           detail=alt.Detail("label:N")),
                       pb.mark_point(color=_PEER_COLOR, filled=False, size=60).encode(
                           x=alt.X("epsilon:Q", scale=alt.Scale(type="log")), y=alt.Y("value:Q"), shape=shape,
                           tooltip=[alt.Tooltip("label"), alt.Tooltip("epsilon:Q", format=".3g"),
                                    alt.Tooltip("value:Q", format=".3f", title=metric)])]
        panel = alt.layer(*layers).properties(width=330, height=240, title=dataset or "")
        panels.append(panel)
    chart = panels[0] if len(panels) == 1 else alt.hconcat(*panels).resolve_scale(
        color="shared", shape="shared", strokeDash="shared")
    private = s[np.isfinite(s["epsilon"])]
    by_panel = private.groupby(private["dataset"] if "dataset" in private.columns else np.zeros(len(private)))["median"]
    top = private.loc[by_panel.idxmax() if metric in HIGHER_IS_BETTER else by_panel.idxmin()]
    best = "; ".join(f"{(str(r.dataset) + ': ') if 'dataset' in private.columns else ''}{r.method} "
                     f"{r.median:.3f} at ε = {fmt(r.epsilon)}" for r in top.itertuples())
    n_panels = len(panels)
    return describe(
        chart.properties(title=title or ""),
        f"{title + '. ' if title else ''}{'One panel per table' if n_panels > 1 else 'One panel'}: lines of the "
        f"median test {metric} against ε (log axis) for {', '.join(methods)}, each with its quartile band, its "
        "own colour and dash pattern; the majority class and the non-private model are black dashed lines"
        + ("; other libraries are grey dotted lines with hollow markers" if peers is not None and len(peers) else "")
        + ".",
        f"Take-away: {'higher' if metric in HIGHER_IS_BETTER else 'lower'} is better; the best medians are "
        f"{best}.")


def runtime_chart(summary: pd.DataFrame) -> alt.Chart:
    """Median fit time per method (log axis): one dot per method and dataset, on a line from the
    axis (a log axis has no zero, so bars would start at an arbitrary value and can vanish)."""
    if not isinstance(summary, pd.DataFrame) or not {"method", "seconds", "epsilon"} <= set(summary.columns):
        raise ValueError("summary needs the columns method, seconds, epsilon")
    keys = ["dataset", "method"] if "dataset" in summary.columns else ["method"]
    t = summary[np.isfinite(summary["epsilon"])].groupby(keys, as_index=False, sort=False)["seconds"].median()
    t = t[t["seconds"] > 0]
    if t.empty:
        raise ValueError("no positive fit times to draw")
    lo = 10.0 ** np.floor(np.log10(t["seconds"].min()) - 1e-9)   # strictly below the fastest
    hi = 10.0 ** np.ceil(np.log10(t["seconds"].max() * 1.01))
    t = t.assign(start=lo)
    order = t.groupby("method", sort=False)["seconds"].median().sort_values(kind="mergesort").index.tolist()
    y = alt.Y("method:N", sort=order, title=None)
    x = alt.X("seconds:Q", scale=alt.Scale(type="log", domain=[lo, hi]), title="median fit time (s, log scale)")
    color = alt.Color("dataset:N", title="table") if "dataset" in t.columns else alt.ColorValue("#4c78a8")
    tooltip = [alt.Tooltip(k) for k in keys] + [alt.Tooltip("seconds:Q", format=".2f")]
    base = alt.Chart(t)
    stem = base.mark_rule(opacity=0.5).encode(y=y, x=x, x2=alt.X2("start:Q"), color=color)
    shape = alt.Shape("dataset:N", title="table") if "dataset" in t.columns else alt.ShapeValue("circle")
    dot = base.mark_point(filled=True, size=90, opacity=0.9).encode(y=y, x=x, color=color, shape=shape,
                                                                    tooltip=tooltip)
    slow, fast = t.loc[t["seconds"].idxmax()], t.loc[t["seconds"].idxmin()]
    return describe(
        alt.layer(stem, dot).properties(width=360, height=alt.Step(26), title="Run time per method"),
        "Dot plot of the median fit time of each method on a log axis"
        + (", one dot per table (colour and shape)" if "dataset" in t.columns else "") + ".",
        f"Take-away: the fastest is {fast['method']} ({fast['seconds']:.2f} s), the slowest {slow['method']} "
        f"({slow['seconds']:.2f} s).")


def ranking_order(rows: pd.DataFrame, metric: str = "error") -> list[str]:
    """Methods best first (median; ties: faster, then by name): a deterministic order."""
    sign = -1.0 if metric in HIGHER_IS_BETTER else 1.0
    key = rows.assign(_rank=sign * rows["median"],
                      _sec=rows["seconds"] if "seconds" in rows.columns else 0.0)
    return key.sort_values(["_rank", "_sec", "method"], kind="mergesort")["method"].tolist()


def ranking_chart(summary: pd.DataFrame, epsilon: float, *, metric: str = "error",
                  peers: pd.DataFrame | None = None, peers_dataset: str = "Adult") -> alt.TopLevelMixin:
    """At one ε: each method's median ``metric`` (bar) and quartiles (black line), best first
    (lowest error; highest accuracy or AUC), the majority-class and non-private medians as dashed
    rules, and other libraries' results at that ε (``peers``) as grey bars marked "peer".
    One panel per ``dataset``, side by side."""
    _check(summary)
    s = summary[summary["metric"] == metric] if "metric" in summary.columns else summary
    at = s[np.isclose(s["epsilon"], epsilon)]
    if at.empty:
        grid = sorted(set(s["epsilon"][np.isfinite(s["epsilon"])]))
        raise ValueError(f"no results at ε = {epsilon:g}; the sweep has {[float(e) for e in grid]}")
    panels, leaders = [], []
    for dataset, rows in _panels(s):
        here = rows[np.isclose(rows["epsilon"], epsilon)].assign(kind="dpexplore")
        p = _peers_for(peers, dataset, metric, peers_dataset)
        p = p[np.isclose(p["epsilon"], epsilon)]
        if len(p):
            here = pd.concat([here, pd.DataFrame({"method": "peer: " + p["label"], "median": p["value"],
                                                  "kind": "peer"})], ignore_index=True)
        refs = rows[~np.isfinite(rows["epsilon"])][["method", "median"]]
        order = ranking_order(here, metric)
        y = alt.Y("method:N", sort=order, title=None, axis=alt.Axis(labelLimit=260))
        bars = alt.Chart(here).mark_bar(
            opacity=0.75).encode(
            y=y, x=alt.X("median:Q", title=f"test {metric} at ε = {epsilon:.3g}"),
            color=alt.condition(alt.datum.kind == "peer", alt.value(_PEER_COLOR), alt.Color("method:N", legend=None)),
            tooltip=[alt.Tooltip("method"), alt.Tooltip("median:Q", format=".3f"), alt.Tooltip("q25:Q", format=".3f"),
                     alt.Tooltip("q75:Q", format=".3f")])
        spread = alt.Chart(here[here["kind"] == "dpexplore"]).mark_rule(color="black").encode(
            y=y, x=alt.X("q25:Q"), x2=alt.X2("q75:Q"))
        rules = alt.Chart(refs).mark_rule(strokeDash=[5, 4], color="black").encode(
            x=alt.X("median:Q"), tooltip=[alt.Tooltip("method"), alt.Tooltip("median:Q", format=".3f")])
        # the smaller reference is labelled to the left of its line, the larger to the right
        low = refs["median"] <= refs["median"].median() if len(refs) > 1 else refs["median"] > np.inf
        names = [alt.Chart(part).mark_text(align=align, baseline="top", dx=dx, y=-14, fontSize=10).encode(
                     x=alt.X("median:Q"), text=alt.Text("method:N"))
                 for part, align, dx in ((refs[low], "right", -3), (refs[~low], "left", 3)) if len(part)]
        panels.append(alt.layer(bars, spread, rules, *names).properties(width=300, height=alt.Step(22), title=dataset or ""))
        leaders.append(f"{(dataset + ': ') if dataset else ''}{order[0]} first, then {', '.join(order[1:3])}")
    chart = panels[0] if len(panels) == 1 else alt.hconcat(*panels)
    return describe(
        chart, f"Bars of each method's median test {metric} at ε = {epsilon:.3g}, best first, with the quartiles "
        "as black lines, the majority class and the non-private model as dashed lines"
        + (" and other libraries as grey bars" if peers is not None and len(peers) else "")
        + ("; one panel per table." if len(panels) > 1 else "."),
        f"Take-away at ε = {epsilon:.3g}: " + "; ".join(leaders) + ".")
