"""Charts for the bring-your-own-table path: private vs synthetic marginals, utility, ledger,
and the method comparison of notebook 08. Plot functions take data and return charts."""
from __future__ import annotations

from typing import Sequence

import altair as alt
import numpy as np
import pandas as pd

from ._accessible import describe, fmt

__all__ = ["marginal_chart", "marginals_chart", "utility_chart", "ledger_chart", "method_chart",
           "occupancy_chart"]

_TABLES = alt.Scale(domain=["private", "synthetic"], range=["#4c78a8", "#f58518"])


def _shares(original: pd.Series, synthetic: pd.Series, column: str, schema=None, bins: int = 12,
            lower: float | None = None, upper: float | None = None) -> tuple[pd.DataFrame, list[str]]:
    """Tidy shares per value or bin: the schema's leaves (cut-point bins, categories) when given."""
    attr = schema[column] if schema is not None and column in schema.attributes else None
    if attr is not None and attr.kind == "numeric" and attr.taxonomy is not None:
        labels = [str(v) for v in attr.taxonomy.leaves]
        codes = {name: attr.taxonomy.leaf_codes(np.clip(s.to_numpy(float), attr.lower, attr.upper))
                 for name, s in (("private", original), ("synthetic", synthetic))}
    elif pd.api.types.is_numeric_dtype(original) and pd.api.types.is_numeric_dtype(synthetic) and not \
            pd.api.types.is_bool_dtype(original):
        lo = float(min(original.min(), synthetic.min())) if lower is None else float(lower)
        hi = float(max(original.max(), synthetic.max())) if upper is None else float(upper)
        edges = np.linspace(lo, hi if hi > lo else lo + 1.0, bins + 1)
        labels = [f"{a:.3g}–{b:.3g}" for a, b in zip(edges[:-1], edges[1:])]
        codes = {name: np.clip(np.searchsorted(edges, s.to_numpy(float), side="right") - 1, 0, bins - 1)
                 for name, s in (("private", original), ("synthetic", synthetic))}
    else:
        labels = ([str(c) for c in attr.categories] if attr is not None else
                  sorted(set(original.astype(str)) | set(synthetic.astype(str))))
        index = {v: i for i, v in enumerate(labels)}
        codes = {name: np.asarray([index.get(str(v), -1) for v in s], dtype=np.int64)
                 for name, s in (("private", original), ("synthetic", synthetic))}
    rows = []
    for name, c in codes.items():
        c = c[c >= 0]
        share = np.bincount(c, minlength=len(labels)) / max(len(c), 1)
        rows += [{"table": name, "value": lab, "share": float(v)} for lab, v in zip(labels, share)]
    return pd.DataFrame(rows), labels


def marginal_chart(original: pd.DataFrame, synthetic: pd.DataFrame, column: str, *, schema=None,
                   bins: int = 12, lower: float | None = None, upper: float | None = None,
                   width: int = 210, height: int = 130) -> alt.Chart:
    """Share of rows per value (categorical), per declared bin (numeric with a ``schema``) or per
    equal-width bin, in the private and the synthetic table side by side (grouped bars)."""
    for name, frame in (("private", original), ("synthetic", synthetic)):
        if column not in frame.columns:
            raise ValueError(f"column {column!r} is not in the {name} table")
    data, labels = _shares(original[column], synthetic[column], column, schema, bins, lower, upper)
    many = len(labels) > 8 or sum(len(lab) for lab in labels) > width / 7  # labels would touch
    wide = data.pivot(index="value", columns="table", values="share")
    gap = (wide["synthetic"] - wide["private"]).abs() if {"private", "synthetic"} <= set(wide.columns) else None
    return describe(alt.Chart(data).mark_bar().encode(
        x=alt.X("value:N", sort=labels, title=None,
                axis=alt.Axis(labelAngle=-45 if many else 0, labelLimit=70, labelFontSize=9 if many else 10)),
        xOffset=alt.XOffset("table:N", sort=["private", "synthetic"]),
        y=alt.Y("share:Q", title="share of rows", axis=alt.Axis(format="%")),
        color=alt.Color("table:N", scale=_TABLES, title=None, legend=alt.Legend(orient="top")),
        tooltip=["table", "value", alt.Tooltip("share:Q", format=".1%")],
    ).properties(width=width, height=height, title=column),
        f"{column}: grouped bars of the share of rows in each of {len(labels)} values or bins, private table "
        "next to synthetic table.",
        "" if gap is None or gap.empty else
        f"Take-away: the largest gap is {gap.max():.1%} at {gap.idxmax()}.")


def marginals_chart(original: pd.DataFrame, synthetic: pd.DataFrame, columns: Sequence[str], *, schema=None,
                    per_row: int = 3, width: int = 210) -> alt.VConcatChart:
    """Small multiples of :func:`marginal_chart`, ``per_row`` to a row (3 × 210 px fit a
    1400-px-wide JupyterLab with its file browser open), one shared legend on top."""
    charts = [marginal_chart(original, synthetic, c, schema=schema, width=width) for c in columns]
    rows = [alt.hconcat(*charts[i:i + per_row], spacing=18) for i in range(0, len(charts), per_row)]
    return describe(
        alt.vconcat(*rows, spacing=12).resolve_scale(color="shared"),
        f"Small multiples, one per column ({', '.join(columns)}): the share of rows per value in the private "
        "and the synthetic table side by side.",
        "Take-away: where the two bars of a value differ, the synthetic table misrepresents that value.")


def utility_chart(utility: pd.DataFrame) -> alt.Chart:
    """Held-out error of the release's classifier and of the two references (bars)."""
    if not {"model", "error", "private"} <= set(utility.columns):
        raise ValueError("utility needs the columns model, error, private")
    data = utility.assign(kind=np.where(utility["private"], "private release", "reference (not private)"))
    return describe(alt.Chart(data).mark_bar().encode(
        y=alt.Y("model:N", sort=None, title=None), x=alt.X("error:Q", title="test error (lower is better)"),
        color=alt.Color("kind:N", title=None, legend=alt.Legend(orient="bottom")),
        tooltip=["model", alt.Tooltip("error:Q", format=".3f")],
    ).properties(width=320, height=90, title="Utility on held-out rows"),
        "Utility on held-out rows: bars of the test error of "
        + ", ".join(f"{m} {e:.3f}" for m, e in zip(data["model"], data["error"])) + ".",
        "Take-away: compare the private release with the references; lower is better.")


def ledger_chart(ledger: pd.DataFrame) -> alt.Chart:
    """Where did ε go: one bar per ledger label (summed)."""
    if not {"label", "charged"} <= set(ledger.columns):
        raise ValueError("ledger needs the columns label, charged")
    data = ledger.groupby("label", sort=False, as_index=False)["charged"].sum()
    return describe(alt.Chart(data).mark_bar().encode(
        y=alt.Y("label:N", sort=None, title=None), x=alt.X("charged:Q", title="ε charged"),
        tooltip=["label", alt.Tooltip("charged:Q", format=".4g")],
    ).properties(width=320, height=alt.Step(20), title="Budget ledger"),
        "Budget ledger: one bar per label, the ε charged: "
        + "; ".join(f"{lab} {c:.3g}" for lab, c in zip(data["label"], data["charged"])) + ".",
        f"Take-away: the release spent ε = {data['charged'].sum():.3g} in total.")


def method_chart(sweep: pd.DataFrame) -> alt.LayerChart:
    """Mean held-out error of each method against ε (log), with the majority class (grey dashes)
    and the non-private logistic regression (black) as references. ``sweep``: rows with method,
    epsilon, error, majority, nonprivate_lr (the cached benchmark)."""
    need = {"method", "epsilon", "error", "majority", "nonprivate_lr"}
    if not need <= set(sweep.columns):
        raise ValueError(f"sweep needs the columns {sorted(need)}")
    mean = sweep.groupby(["method", "epsilon"], as_index=False)["error"].mean()
    refs = pd.DataFrame({"reference": ["majority class", "non-private logistic regression"],
                         "error": [sweep["majority"].mean(), sweep["nonprivate_lr"].mean()]})
    eps = sorted(sweep["epsilon"].unique())
    lines = alt.Chart(mean).mark_line(point=True).encode(
        x=alt.X("epsilon:Q", scale=alt.Scale(type="log"), title="ε", axis=alt.Axis(values=eps, format="~g")),
        y=alt.Y("error:Q", title="held-out error (mean of seeds)", scale=alt.Scale(zero=False)),
        color=alt.Color("method:N", title=None, legend=alt.Legend(orient="right")),
        tooltip=["method", alt.Tooltip("epsilon:Q", format="~g"), alt.Tooltip("error:Q", format=".3f")])
    rules = alt.Chart(refs).mark_rule().encode(
        y="error:Q",
        strokeDash=alt.StrokeDash("reference:N", title=None, legend=alt.Legend(orient="bottom"),
                                  scale=alt.Scale(domain=list(refs["reference"]), range=[[5, 4], [1, 0]])),
        color=alt.Color("reference:N", scale=alt.Scale(domain=list(refs["reference"]), range=["grey", "black"]),
                        legend=None),
        tooltip=["reference", alt.Tooltip("error:Q", format=".3f")])
    best = mean.loc[mean["error"].idxmin()]
    return describe(
        alt.layer(lines, rules).resolve_scale(color="independent").properties(
            width=420, height=220, title="Every method on the messy table"),
        "Every method on the messy table: lines of the mean held-out error against ε (log axis) for "
        f"{', '.join(map(str, mean['method'].unique()))}; the majority class ({refs['error'].iloc[0]:.3f}, grey "
        f"dashes) and the non-private logistic regression ({refs['error'].iloc[1]:.3f}, black) as references.",
        f"Take-away: the lowest mean error is {best['error']:.3f} ({best['method']} at ε = {fmt(best['epsilon'])}).")


def occupancy_chart(sweep: pd.DataFrame) -> alt.HConcatChart:
    """PrivPfC's chosen grid against ε: cells (log) and expected records per cell, next to its
    held-out error — the grid gets finer than the table can fill (Su et al. 2018, Alg. 2 line 4: τ from n̂)."""
    p = sweep[sweep["method"] == "PrivPfC"].groupby("epsilon", as_index=False)[
        ["cells", "records_per_cell", "error"]].mean()
    eps = sorted(p["epsilon"].unique())
    x = alt.X("epsilon:Q", scale=alt.Scale(type="log"), title="ε", axis=alt.Axis(values=eps, format="~g"))
    base = alt.Chart(p).encode(x=x).properties(width=200, height=150)
    cells = base.mark_line(point=True).encode(y=alt.Y("records_per_cell:Q", scale=alt.Scale(type="log"),
                                                      title="expected records per cell",
                                                      axis=alt.Axis(values=[0.1, 0.3, 1, 3, 10, 30, 100, 300],
                                                                    format="~g")),
                                              tooltip=[alt.Tooltip("cells:Q", format=",.0f"),
                                                       alt.Tooltip("records_per_cell:Q", format=".3g")])
    err = base.mark_line(point=True, color="#e45756").encode(y=alt.Y("error:Q", title="held-out error",
                                                                      scale=alt.Scale(zero=False)),
                                                           tooltip=[alt.Tooltip("error:Q", format=".3f")])
    return describe(
        alt.hconcat(cells.properties(title="Records per cell of the chosen grid"),
                    err.properties(title="PrivPfC's error")),
        "Left: the expected records per cell of PrivPfC's chosen grid against ε (log axes). Right: PrivPfC's "
        "held-out error against ε.",
        f"Take-away: from {fmt(p['records_per_cell'].iloc[0])} records per cell at ε = {fmt(p['epsilon'].iloc[0])} "
        f"to {fmt(p['records_per_cell'].iloc[-1])} at ε = {fmt(p['epsilon'].iloc[-1])}: larger ε picks finer "
        "grids than the table can fill.")
