"""Explorers for Vinterbo's projected histograms (notebook 06).

Thin ipywidgets wrappers: sliders → :class:`~dpexplore.publish.projected.ProjectedHistogram` →
the tables of :mod:`dpexplore.evaluate.projected` → charts of :mod:`dpexplore.plots.projected`.
The evaluation protocol (cross-validated AUC sweeps) lives in :mod:`dpexplore.evaluate.projected`.
"""
from __future__ import annotations

import html
import warnings
from typing import Any

import pandas as pd

from ..domain import Schema
from ..evaluate import projected as evaluation
from ..exceptions import EmptySyntheticWarning
from ..plots import projected as charts
from ..publish.projected import ProjectedHistogram
from ._display import chart_outputs, show_chart

__all__ = ["selection_explorer", "survival_explorer", "auc_explorer"]


def selection_explorer(X: pd.DataFrame, y: Any, schema: Schema, *, seed: int = 0, n_bins: str = "literal"):
    """Sliders ε, k, γ, A (and the bin rule) → the greedy picks with their probabilities, the
    noisy histogram with τ.

    k = 0 or γ = 0 on the sliders mean "heuristic". Fitted models are cached per setting (the
    discretisation and everything ε-independent are recomputed only by the fit itself, on a
    table small enough for that to take milliseconds).
    """
    import ipywidgets as W

    # refits on release only (continuous_update=False): a drag does not queue a fit per step
    eps = W.FloatLogSlider(value=1.0, base=10, min=-1.3, max=1, step=0.05, description="ε", readout_format=".3g",
                           continuous_update=False)
    k = W.IntSlider(value=0, min=0, max=len(schema.predictors), description="k (0=auto)", continuous_update=False)
    gamma = W.FloatSlider(value=0.0, min=0.0, max=0.95, step=0.05, description="γ (0=auto)",
                          continuous_update=False)
    A = W.FloatSlider(value=0.5, min=0.1, max=2.0, step=0.1, description="A", continuous_update=False)
    bins = W.Dropdown(options=[("bw(n, d-1): literal", "literal"), ("bw(n, k): projected", "projected")],
                      value=n_bins, description="bins")
    text = W.HTML()
    out = W.Output()
    cache: dict = {}

    def render(*_):
        key = (round(eps.value, 4), k.value, round(gamma.value, 3), round(A.value, 2), bins.value)
        if key not in cache:   # one fit per setting; the charts' bundles are cached with it
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", EmptySyntheticWarning)
                model = ProjectedHistogram(eps.value, k=k.value or None, gamma=gamma.value or None, A=A.value,
                                           n_bins=bins.value, random_state=seed, schema=schema).fit(X, y)
            view = model.diagnostics(X, y)  # NOT private: a teaching view on the public Iris data
            charts_ = ([charts.selection_chart(view["selection"])] if len(view["selection"]) else [])
            charts_.append(charts.histogram_chart(evaluation.histogram_table(model, X, y), model.threshold_))
            summary = html.escape(charts.summary_text(model, view)).replace("\n", "<br>")
            cache[key] = (f"<div style='font-family:monospace;font-size:12px'>{summary}</div>",
                          chart_outputs(*charts_))
        text.value, out.outputs = cache[key]

    for w in (eps, k, gamma, A, bins):
        w.observe(render, "value")
    render()
    return W.VBox([W.HBox([eps, k, bins]), W.HBox([gamma, A]), text, out])


def survival_explorer(n: int, *, sensitivity: float = 1.0):
    """Sliders ε_h, A, n → P(kept | true count) with τ and the ε-independent floor for empty cells."""
    import ipywidgets as W

    eps = W.FloatLogSlider(value=0.3, base=10, min=-2, max=1, step=0.05, description="ε_h", readout_format=".3g")
    A = W.FloatSlider(value=0.5, min=0.1, max=2.0, step=0.1, description="A")
    size = W.IntSlider(value=int(n), min=20, max=50_000, step=10, description="n")
    out = W.Output()

    def render(*_):
        table = evaluation.survival_table(size.value, [eps.value], A.value, sensitivity)
        show_chart(out, charts.survival_chart(table, floor=0.5 * size.value ** (-A.value / sensitivity)))

    for w in (eps, A, size):
        w.observe(render, "value")
    render()
    return W.VBox([W.HBox([eps, A, size]), out])


def auc_explorer(sweeps: pd.DataFrame):
    """Dropdown over the swept parameter (ε, k, γ) of a precomputed
    :func:`~dpexplore.evaluate.projected.auc_sweep` table."""
    import ipywidgets as W

    param = W.Dropdown(options=list(dict.fromkeys(sweeps["parameter"])), description="parameter")
    out = W.Output()
    # every view precomputed once: a choice only swaps the stored chart
    views = {p: chart_outputs(charts.auc_chart(sweeps[sweeps.parameter == p])) for p in param.options}

    def render(*_):
        out.outputs = views[param.value]

    param.observe(render, "value")
    render()
    return W.VBox([param, out])
