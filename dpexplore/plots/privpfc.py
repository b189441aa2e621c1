"""Charts for PrivPfC (Su et al. 2018). Pure functions: tidy data in, an altair Chart out.

They never compute anything private: feed them the tidy frames of
:mod:`dpexplore.evaluate.privpfc` (``sensitivity_curve``, ``win_probability_curve``,
``PrivPfC.diagnostics(X, y)`` (not private), ``grid_levels``, ``counts_comparison``) or a results table.
"""
from __future__ import annotations

from typing import Mapping

import altair as alt
import numpy as np
import pandas as pd

from ._accessible import OKABE_ITO, describe, fmt

__all__ = ["sensitivity_chart", "win_probability_chart", "candidates_chart", "selection_chart",
           "grid_levels_chart", "counts_chart", "error_chart", "errors_bar_chart"]


def sensitivity_chart(curve: pd.DataFrame, width: int = 420, height: int = 220) -> alt.Chart:
    """Δ_gq(ε) against ε on a log axis, with the paper's constant 1.1 (Fig. 2 analogue).

    ``curve``: columns epsilon, sensitivity, constant.
    """
    base = alt.Chart(curve).encode(x=alt.X("epsilon:Q", scale=alt.Scale(type="log"), title="ε_pert"))
    exact = base.mark_line().encode(
        y=alt.Y("sensitivity:Q", scale=alt.Scale(zero=False, domain=[0.99, 1.11]), title="sensitivity Δ of the quality"),
        tooltip=[alt.Tooltip("epsilon:Q"), alt.Tooltip("sensitivity:Q", format=".6f")])
    const = base.mark_line(strokeDash=[4, 4], color="gray").encode(y=alt.Y("constant:Q"))
    worst = float(curve["sensitivity"].max())
    return describe(
        (exact + const).properties(width=width, height=height,
                                   title="Lemma 1: exact Δ(ε_pert) (solid) vs the constant 1.1 (dashed)"),
        f"Line chart of the exact sensitivity of PrivPfC's grid quality against ε_pert (log axis, "
        f"{fmt(curve['epsilon'].min())} to {fmt(curve['epsilon'].max())}), with the paper's constant 1.1 dashed.",
        f"Take-away: the exact sensitivity stays at most {worst:.4f}, below the constant 1.1 the paper uses.")


def win_probability_chart(curve: pd.DataFrame, width: int = 420, height: int = 220) -> alt.Chart:
    """P[the cell's majority survives the noise] against its count lead, one line per ε."""
    chart = alt.Chart(curve).mark_line().encode(
        x=alt.X("gap:Q", title="lead of the majority class (records)"),
        y=alt.Y("probability:Q", scale=alt.Scale(domain=[0.5, 1]), title="P[majority still wins]"),
        color=alt.Color("epsilon:N", title="ε_pert"),
        strokeDash=alt.StrokeDash("epsilon:N", title="ε_pert"),
        tooltip=[alt.Tooltip("gap:Q"), alt.Tooltip("epsilon:Q"), alt.Tooltip("probability:Q", format=".4f")],
    ).properties(width=width, height=height, title="How Laplace noise blurs a cell's majority (Eq. 10)")
    eps = sorted(curve["epsilon"].unique())
    return describe(
        chart, "Lines of the probability that a cell's majority class still wins after Laplace noise, against "
        f"its lead in records, one line per ε_pert ({', '.join(fmt(e) for e in eps)}).",
        "Take-away: a larger lead or a larger ε_pert keeps the true majority; a lead of a few records "
        "is a coin flip at small ε_pert.")


def _thin(data: pd.DataFrame, max_points: int) -> pd.DataFrame:
    """Keep the chosen grid, the best grids and an evenly spaced share of the rest (small charts)."""
    if len(data) <= max_points:
        return data
    best = data.nlargest(max_points // 4, "quality").index
    rest = data.index.difference(best)
    step = rest[np.linspace(0, len(rest) - 1, max_points - len(best)).astype(int)]
    keep = best.union(step).union(data.index[data["chosen"]])
    return data.loc[keep]


def candidates_data(candidates: pd.DataFrame, max_points: int = 1500) -> pd.DataFrame:
    """The rows :func:`candidates_chart` draws: the pool thinned to ``max_points``, probabilities to 3 digits."""
    data = _thin(candidates[["grid", "size", "n_refined", "quality", "probability", "chosen"]], max_points).copy()
    data["probability"] = data["probability"].astype(float).map(lambda p: float(f"{p:.3g}"))  # a smaller spec
    return data


def candidates_chart(candidates: pd.DataFrame, tau: float | None = None, n_records: float | None = None,
                     max_points: int = 1500, width: int = 480, height: int = 280,
                     title: str | None = None) -> alt.Chart:
    """Quality of the candidate grids against their number of cells; the chosen grid is ringed.

    ``candidates``: ``PrivPfC.diagnostics(X, y)`` (a non-private teaching view: grid, size, n_refined, quality, probability,
    chosen). With ``n_records`` the quality is shown as expected accuracy (quality / N). Large
    pools are thinned to ``max_points`` (the best quarter plus an even sample of the rest).
    """
    n_all = len(candidates)
    data = candidates_data(candidates, max_points)
    y_field, y_title = "quality", "grid quality (expected correct records)"
    base = alt.Chart(data)
    if n_records:   # computed in the browser: one column less in the spec
        base = base.transform_calculate(**{"expected accuracy": f"datum.quality / {float(n_records)!r}"})
        y_field, y_title = "expected accuracy", "expected accuracy (quality / N)"
    tooltip = [alt.Tooltip("grid:N"), alt.Tooltip("size:Q"), alt.Tooltip("n_refined:Q"),
               alt.Tooltip(f"{y_field}:Q", format=".4f"),
               alt.Tooltip("probability:Q", format=".3g")]
    x = alt.X("size:Q", scale=alt.Scale(type="log"), title="cells in the grid")
    y = alt.Y(f"{y_field}:Q", scale=alt.Scale(zero=False), title=y_title)
    points = base.mark_circle(size=14, opacity=0.5).encode(
        x=x, y=y, color=alt.Color("n_refined:O", title="refined attributes", scale=alt.Scale(scheme="dark2")),
        tooltip=tooltip)
    chosen = base.transform_filter("datum.chosen").mark_point(size=220, shape="circle", color="black",
                                                                strokeWidth=2).encode(x=x, y=y, tooltip=tooltip)
    layers = [points, chosen]
    if tau is not None and tau >= 1:
        layers.append(alt.Chart(pd.DataFrame({"tau": [tau]})).mark_rule(strokeDash=[4, 4], color="red")
                      .encode(x=alt.X("tau:Q")))
    shown = f"{n_all:,} candidate grids" + (f" ({len(data):,} shown)" if len(data) < n_all else "")
    chosen_rows = candidates[candidates["chosen"]] if "chosen" in candidates else candidates.iloc[:0]
    pick = ("" if chosen_rows.empty else
            f" The drawn grid has {int(chosen_rows['size'].iloc[0]):,} cells.")
    return describe(
        alt.layer(*layers).properties(width=width, height=height,
                                      title=title or f"{shown}; chosen one ringed, red line: τ"),
        f"Scatter of {shown}: each grid's quality against its number of cells (log axis), coloured by how "
        "many attributes it refines; the grid the exponential mechanism drew is ringed in black"
        + (f", the dashed line is τ = {fmt(tau)}." if tau is not None and tau >= 1 else "."),
        "Take-away: quality rises with finer grids up to a point; grids much finer than τ cells leave "
        "too few records per cell." + pick)


def selection_data(candidates: pd.DataFrame, top: int = 12) -> pd.DataFrame:
    """The rows :func:`selection_chart` draws: the ``top`` most likely grids and the drawn one."""
    data = candidates.nlargest(top, "probability")
    if "chosen" in candidates and candidates["chosen"].any() and not data["chosen"].any():
        data = pd.concat([data, candidates[candidates["chosen"]]])
    return data[["grid", "probability", "chosen", "size"]]


def selection_chart(candidates: pd.DataFrame, top: int = 12, width: int = 420,
                    label_limit: int = 360) -> alt.Chart:
    """Selection probability of the ``top`` most likely grids (how peaked the EM is).

    The drawn grid is always shown (appended in red if it is not among the ``top``)."""
    data = selection_data(candidates, top)
    drawn = data[data["chosen"]] if "chosen" in data else data.iloc[:0]
    top_p = float(data["probability"].max()) if len(data) else 0.0
    return describe(alt.Chart(data).mark_bar().encode(
        x=alt.X("probability:Q", scale=alt.Scale(domain=[0, 1]), title="selection probability",
                axis=alt.Axis(values=[0, 0.5, 1], format=".1f")),
        y=alt.Y("grid:N", sort="-x", title=None, axis=alt.Axis(labelLimit=label_limit)),
        color=alt.ColorValue(**alt.condition("datum.chosen", alt.value("#d62728"), alt.value("#4c78a8"))),
        tooltip=[alt.Tooltip("grid:N"), alt.Tooltip("size:Q"), alt.Tooltip("probability:Q", format=".4f")],
    ).properties(width=width, title=f"Most likely {min(top, len(candidates))} grids (red: drawn)"),
        f"Bars of the selection probability of the {min(top, len(candidates))} most likely grids, highest first; "
        "the drawn grid is the red bar.",
        f"Take-away: the most likely grid has probability {top_p:.2f}"
        + ("" if drawn.empty else f"; the drawn one {float(drawn['probability'].iloc[0]):.2f}")
        + ": the selection is random, not an argmax.")


def levels_data(levels: pd.DataFrame) -> pd.DataFrame:
    """``grid_levels`` output with the state :func:`grid_levels_chart` colours by."""
    data = levels.copy()
    data["state"] = np.where(data["chosen"] & data["refined"], "chosen depth",
                             np.where(data["chosen"], "root (attribute dropped)", "not used"))
    return data


def grid_levels_chart(levels: pd.DataFrame, width: int = 300) -> alt.Chart:
    """The chosen grid drawn on the taxonomies: one row per attribute, one box per level.

    ``levels``: output of ``grid_levels`` (attribute, depth, level, nodes, chosen, refined).
    """
    data = levels_data(levels)
    base = alt.Chart(data).encode(
        x=alt.X("depth:O", title="depth (0 = root; paper level = depth + 1)"),
        y=alt.Y("attribute:N", sort=list(dict.fromkeys(data["attribute"])), title=None))
    boxes = base.mark_rect(stroke="white").encode(
        color=alt.Color("state:N", scale=alt.Scale(domain=["chosen depth", "root (attribute dropped)", "not used"],
                                                   range=[OKABE_ITO[3], "#c7c7c7", "#f2f2f2"]), title=None),
        tooltip=[alt.Tooltip("attribute:N"), alt.Tooltip("depth:O"), alt.Tooltip("level:O", title="paper level"),
                 alt.Tooltip("nodes:Q")])
    text = base.mark_text(fontSize=10).encode(text=alt.Text("nodes:Q"))
    used = data[data["state"] == "chosen depth"]
    picks = ", ".join(f"{a} at depth {int(d)}" for a, d in zip(used["attribute"], used["depth"]))
    return describe(
        (boxes + text).properties(width=width, title="Chosen grid (numbers: nodes per depth)"),
        "Table of boxes, one row per attribute and one column per taxonomy depth, each box giving the "
        "number of nodes at that depth; the depth the chosen grid uses is red, attributes it drops are grey.",
        f"Take-away: the chosen grid refines {picks or 'no attribute'}.")


def counts_data(comparison: pd.DataFrame) -> pd.DataFrame:
    """``compare_counts`` output with each cell's rank (the facets keep the order of the cells)."""
    order = {cell: i for i, cell in enumerate(dict.fromkeys(comparison["cell"]))}
    return comparison.assign(rank=comparison["cell"].map(order), count=comparison["count"].round(2))


def counts_chart(comparison: pd.DataFrame, width: int = 120, height: int = 160) -> alt.Chart:
    """True vs noisy counts per class for a few cells (NON-PRIVATE diagnostic view)."""
    comparison = counts_data(comparison)
    n_cells = comparison["cell"].nunique()
    return describe(alt.Chart(comparison).mark_bar().encode(
        x=alt.X("kind:N", title=None, sort=["true", "noisy"]),
        y=alt.Y("count:Q", title="records"),
        color=alt.Color("class:N"),
        xOffset=alt.XOffset("class:N"),
        tooltip=[alt.Tooltip("cell:N"), alt.Tooltip("class:N"), alt.Tooltip("kind:N"),
                 alt.Tooltip("count:Q", format=".1f")],
    ).properties(width=width, height=height).facet(
        facet=alt.Facet("cell:N", sort=alt.EncodingSortField("rank", op="min"),
                        title="cells of the release (true counts: non-private diagnostic)"),
        columns=3).resolve_scale(y="independent"),
        f"Grouped bars for {n_cells} cells of the release: each class's true count (a non-private "
        "diagnostic) next to its noisy released count.",
        "Take-away: the noise changes small counts the most, and can swap which class is the majority "
        "of a small cell.")


def error_chart(results: pd.DataFrame, baselines: Mapping[str, float] | None = None,
                width: int = 420, height: int = 260) -> alt.Chart:
    """Test error against ε: median line with an inter-quartile band per method, plus baselines.

    ``results``: columns epsilon, error and optionally method (one row per run).
    ``baselines``: name -> error, drawn as dashed horizontal lines (e.g. majority, non-private).
    """
    data = results.copy()
    if "method" not in data:
        data["method"] = "PrivPfC"
    summary = data.groupby(["method", "epsilon"])["error"].agg(
        median="median", q25=lambda s: s.quantile(0.25), q75=lambda s: s.quantile(0.75)).reset_index()
    eps = sorted(summary["epsilon"].unique().tolist())
    # lines that coincide (the tree often matches the histogram classifier) are drawn side by side:
    # each method's points are shifted by a few percent along the log axis, with its own dash and mark
    methods = list(dict.fromkeys(summary["method"]))
    shift = {m: 1.06 ** (i - (len(methods) - 1) / 2) for i, m in enumerate(methods)}
    summary["x"] = summary["epsilon"] * summary["method"].map(shift)
    pad = 1.06 ** (len(methods) / 2 + 0.5)
    x = alt.X("x:Q", scale=alt.Scale(type="log", domain=[eps[0] / pad, eps[-1] * pad], nice=False),
              axis=alt.Axis(values=eps, labelExpr="format(datum.value, '.3~g')", grid=False), title="ε (total)")
    dashes = [[1, 0], [6, 3], [2, 2], [8, 2, 2, 2]]
    style = dict(
        color=alt.Color("method:N", title="method", legend=alt.Legend(orient="bottom", direction="vertical")),
        strokeDash=alt.StrokeDash("method:N", scale=alt.Scale(domain=methods, range=dashes[:len(methods)]),
                                  legend=None),
        shape=alt.Shape("method:N", scale=alt.Scale(domain=methods,
                                                     range=["circle", "square", "triangle-up", "diamond"][:len(methods)]),
                        legend=None))
    band = alt.Chart(summary).mark_area(opacity=0.18).encode(
        x=x, y=alt.Y("q25:Q"), y2=alt.Y2("q75:Q"), color=alt.Color("method:N", legend=None))
    y = alt.Y("median:Q", title="test error", scale=alt.Scale(zero=False), axis=alt.Axis(format="%"))
    tooltip = [alt.Tooltip("method:N"), alt.Tooltip("epsilon:Q", format=".3g", title="ε"),
               alt.Tooltip("median:Q", format=".4f"),
               alt.Tooltip("q25:Q", format=".4f"), alt.Tooltip("q75:Q", format=".4f")]
    line = alt.Chart(summary).mark_line(strokeWidth=2).encode(
        x=x, y=y, color=style["color"], strokeDash=style["strokeDash"])
    points = alt.Chart(summary).mark_point(filled=True, size=45).encode(
        x=x, y=y, color=alt.Color("method:N", legend=None), shape=style["shape"], tooltip=tooltip)
    layers = [band, line, points]
    if baselines:
        rules = pd.DataFrame({"baseline": list(baselines), "error": list(baselines.values())})
        layers.append(alt.Chart(rules).mark_rule(strokeDash=[5, 4]).encode(
            y=alt.Y("error:Q"), color=alt.Color("baseline:N", title="non-private baseline (dashed)",
                                         scale=alt.Scale(range=["#333333", "#8c564b", "#7f7f7f", "#bcbd22"]),
                                         legend=alt.Legend(orient="bottom", direction="vertical")),
            tooltip=[alt.Tooltip("baseline:N"), alt.Tooltip("error:Q", format=".4f")]))
    best = summary.loc[summary["median"].idxmin()]
    return describe(
        alt.layer(*layers).resolve_scale(color="independent").properties(
            width=width, height=height, title="Test error vs ε (median and inter-quartile range)"),
        f"Lines of the median test error against ε (log axis) for {', '.join(methods)}, each with its "
        "inter-quartile band, its own dash pattern and point shape"
        + (f"; non-private baselines as dashed rules ({', '.join(f'{k} {v:.3f}' for k, v in baselines.items())})."
           if baselines else "."),
        f"Take-away: the error falls as ε grows; the lowest median is {best['median']:.3f} "
        f"({best['method']}, ε = {fmt(best['epsilon'])}).")


def errors_data(errors: Mapping[str, float], baselines: Mapping[str, float] | None = None) -> pd.DataFrame:
    """One row per classifier: error and kind (private release / non-private baseline)."""
    rows = [{"classifier": k, "error": round(float(v), 5), "kind": "private release"} for k, v in errors.items()]
    rows += [{"classifier": k, "error": round(float(v), 5), "kind": "baseline (non-private)"}
             for k, v in (baselines or {}).items()]
    return pd.DataFrame(rows, columns=["classifier", "error", "kind"])


def errors_bar_chart(errors: Mapping[str, float], baselines: Mapping[str, float] | None = None,
                     width: int = 320) -> alt.Chart:
    """Test errors of one release (``errors``: name -> error) next to non-private ``baselines``."""
    data = errors_data(errors, baselines)
    listed = ", ".join(f"{c} {e:.3f}" for c, e in zip(data["classifier"], data["error"]))
    return describe(alt.Chart(data).mark_bar().encode(
        x=alt.X("error:Q", axis=alt.Axis(format="%", tickCount=4), title="test error"),
        y=alt.Y("classifier:N", sort=None, title=None, axis=alt.Axis(labelLimit=180)),
        color=alt.Color("kind:N", scale=alt.Scale(domain=["private release", "baseline (non-private)"],
                                                  range=["#4c78a8", "#bab0ac"]), title=None,
                        legend=alt.Legend(orient="bottom", direction="vertical")),
        tooltip=[alt.Tooltip("classifier:N"), alt.Tooltip("error:Q", format=".2%")],
    ).properties(width=width, title="Test error of this release"),
        f"Bars of the test error of each classifier of this release and of the non-private baselines: {listed}.",
        "Take-away: compare the private bars with the baselines: the gap is the price of privacy at this ε.")
