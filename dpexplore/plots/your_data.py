"""Charts for the bring-your-own-table path: real vs synthetic marginals, utility, ledger."""
from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

__all__ = ["marginal_chart", "utility_chart", "ledger_chart"]


def marginal_chart(original: pd.DataFrame, synthetic: pd.DataFrame, column: str, *, bins: int = 20,
                   lower: float | None = None, upper: float | None = None) -> alt.Chart:
    """Share of rows per value (categorical) or per bin (numeric) in the original and the
    synthetic table, side by side. Bins use the public ``[lower, upper]`` when given."""
    for name, frame in (("original", original), ("synthetic", synthetic)):
        if column not in frame.columns:
            raise ValueError(f"column {column!r} is not in the {name} table")
    a, b = original[column], synthetic[column]
    if pd.api.types.is_numeric_dtype(a) and pd.api.types.is_numeric_dtype(b):
        lo = float(np.min([a.min(), b.min()])) if lower is None else float(lower)
        hi = float(np.max([a.max(), b.max()])) if upper is None else float(upper)
        edges = np.linspace(lo, hi if hi > lo else lo + 1.0, bins + 1)
        mids = (edges[:-1] + edges[1:]) / 2
        rows = []
        for name, s in (("original", a), ("synthetic", b)):
            counts, _ = np.histogram(np.clip(s.to_numpy(float), edges[0], edges[-1]), bins=edges)
            share = counts / max(counts.sum(), 1)
            rows += [{"table": name, column: m, "share": v} for m, v in zip(mids, share)]
        return alt.Chart(pd.DataFrame(rows)).mark_line(point=True, interpolate="step-after").encode(
            x=alt.X(f"{column}:Q", title=column), y=alt.Y("share:Q", title="share of rows"),
            color=alt.Color("table:N", title=None), tooltip=["table", column, alt.Tooltip("share:Q", format=".3f")],
        ).properties(width=300, height=180, title=column)
    rows = []
    for name, s in (("original", a), ("synthetic", b)):
        share = s.astype(str).value_counts(normalize=True)
        rows += [{"table": name, column: k, "share": float(v)} for k, v in share.items()]
    return alt.Chart(pd.DataFrame(rows)).mark_bar().encode(
        x=alt.X(f"{column}:N", title=column), xOffset="table:N", y=alt.Y("share:Q", title="share of rows"),
        color=alt.Color("table:N", title=None), tooltip=["table", column, alt.Tooltip("share:Q", format=".3f")],
    ).properties(width=300, height=180, title=column)


def utility_chart(utility: pd.DataFrame) -> alt.Chart:
    """Held-out error of the release's classifier and of the two references (bars)."""
    if not {"model", "error", "private"} <= set(utility.columns):
        raise ValueError("utility needs the columns model, error, private")
    data = utility.assign(kind=np.where(utility["private"], "private release", "reference (not private)"))
    return alt.Chart(data).mark_bar().encode(
        y=alt.Y("model:N", sort=None, title=None), x=alt.X("error:Q", title="test error (lower is better)"),
        color=alt.Color("kind:N", title=None), tooltip=["model", alt.Tooltip("error:Q", format=".3f")],
    ).properties(width=360, height=90, title="Utility on held-out rows")


def ledger_chart(ledger: pd.DataFrame) -> alt.Chart:
    """Where did ε go: one bar per spend of the ledger."""
    if not {"label", "charged"} <= set(ledger.columns):
        raise ValueError("ledger needs the columns label, charged")
    return alt.Chart(ledger).mark_bar().encode(
        y=alt.Y("label:N", sort=None, title=None), x=alt.X("charged:Q", title="ε charged"),
        tooltip=["label", alt.Tooltip("charged:Q", format=".4g")],
    ).properties(width=360, height=alt.Step(22), title="Budget ledger")
