"""Explorers for Vinterbo's projected histograms (notebook 06) and the experiment helpers they use.

The helpers run the paper's protocol (§4 of the spec): stratified 10-fold CV, every DP step
re-run inside each training fold, AUC for binary targets and the Hand–Till generalised AUC
(one-vs-one macro) for more classes; non-private LR and, when available, DP logistic regression
(one model per class at ε/q, spec "PMLR") as references.
"""
from __future__ import annotations

import html
import warnings
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold

from .._validation import check_random_state
from ..domain import Schema
from ..publish.projected import EmptySyntheticWarning, ProjectedHistogram, survival_probability, threshold
from ..plots import projected as charts
from ._display import chart_outputs, show_chart

__all__ = ["auc", "design_matrix", "NonPrivateLR", "OneVsRestPrivateLR", "cross_validated_auc", "auc_sweep", "broadcast_reference",
           "histogram_table", "survival_table", "selection_explorer", "survival_explorer", "auc_explorer"]


# ============================================================================ evaluation helpers
def auc(y_true: Any, proba: np.ndarray, classes: Sequence) -> float:
    """AUC of the last class for two classes; Hand–Till M (OvO macro) for more (spec trap 18)."""
    classes = list(classes)
    y_true = np.asarray(y_true, dtype=object)
    if len(classes) == 2:
        return float(roc_auc_score(y_true == classes[1], proba[:, 1]))
    p = np.clip(proba, 1e-300, None)
    return float(roc_auc_score(y_true, p / p.sum(axis=1, keepdims=True), multi_class="ovo",
                               average="macro", labels=classes))


def design_matrix(X: pd.DataFrame, schema: Schema) -> np.ndarray:
    """Numeric predictors scaled into [0, 1] by their PUBLIC bounds; categoricals one-hot over the
    full public category list. Every column lies in [0, 1] (the public bounds DP-LR needs)."""
    blocks = []
    for a in schema.predictors:
        attr = schema[a]
        if attr.kind == "numeric":
            u = (X[a].to_numpy(dtype=float) - attr.lower) / (attr.upper - attr.lower)
            blocks.append(np.clip(u, 0, 1)[:, None])
        else:
            codes = pd.Categorical(X[a], categories=list(attr.categories)).codes
            blocks.append(np.eye(len(attr.categories))[codes])
    return np.hstack(blocks)


class NonPrivateLR:
    """The paper's O(M)LR reference: logistic regression on the real training fold (NOT private)."""

    def __init__(self, schema: Schema, C: float = 1.0):
        self.schema, self.C = schema, C

    def fit(self, X: pd.DataFrame, y: Any) -> "NonPrivateLR":
        self.model_ = LogisticRegression(C=self.C, max_iter=2000).fit(design_matrix(X, self.schema), np.asarray(y))
        self.classes_ = self.model_.classes_
        return self

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        return self.model_.predict_proba(design_matrix(X, self.schema))


class OneVsRestPrivateLR:
    """P(M)LR: dpexplore's PrivateLogisticRegression, one binary model per class at ε/q each
    (sequential composition on the same data, spec trap 21) for q > 2; one model at ε for q = 2.
    Each model draws fresh noise from one Generator; the q probabilities are normalised."""

    def __init__(self, schema: Schema, epsilon: float, random_state: Any = None, **params: Any):
        self.schema, self.epsilon, self.random_state, self.params = schema, epsilon, random_state, params

    def fit(self, X: pd.DataFrame, y: Any) -> "OneVsRestPrivateLR":
        from ..models.logistic import PrivateLogisticRegression
        Z = design_matrix(X, self.schema)
        bounds = (np.zeros(Z.shape[1]), np.ones(Z.shape[1]))
        rng = check_random_state(self.random_state)
        y = np.asarray(y, dtype=object)
        self.classes_ = np.asarray(self.schema.classes, dtype=object)
        targets = self.classes_[1:] if len(self.classes_) == 2 else self.classes_
        eps = self.epsilon / len(targets)
        self.models_ = [PrivateLogisticRegression(epsilon=eps, bounds=bounds, random_state=rng, classes=[0, 1],
                                                  **self.params)
                        .fit(Z, (y == c).astype(int)) for c in targets]
        return self

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        Z = design_matrix(X, self.schema)
        pos = np.column_stack([m.predict_proba(Z)[:, list(m.classes_).index(1)] for m in self.models_])
        if len(self.classes_) == 2:
            return np.column_stack([1 - pos[:, 0], pos[:, 0]])
        return pos / np.clip(pos.sum(axis=1, keepdims=True), 1e-300, None)


def cross_validated_auc(frame: pd.DataFrame, schema: Schema, methods: Mapping[str, Callable[[int], Any]], *,
                        folds: int = 10, seed: int = 0, progress: Any = None) -> pd.DataFrame:
    """Stratified k-fold CV: one row per (method, fold) with its AUC.

    ``methods`` maps a name to ``make(seed) -> estimator`` with fit(X, y) / predict_proba(X);
    projected histograms are fitted with the public schema. ``progress`` is a tqdm bar to update.
    """
    X, y = schema.split(frame)
    rows = []
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    for fold, (train, test) in enumerate(splitter.split(X, y)):
        Xtr, ytr, Xte, yte = X.iloc[train], y.iloc[train], X.iloc[test], y.iloc[test]
        for name, make in methods.items():
            model = make(seed * 1000 + fold)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", EmptySyntheticWarning)
                if isinstance(model, ProjectedHistogram):
                    model.fit(Xtr, ytr, schema)
                else:
                    model.fit(Xtr, ytr)
            row = {"method": name, "fold": fold, "auc": auc(yte, model.predict_proba(Xte), schema.classes)}
            if isinstance(model, ProjectedHistogram):
                row.update(k=model.k_, gamma=model.gamma_, n_bins=model.n_bins_, fallback=model.fallback_,
                           selected=", ".join(model.selected_))
            rows.append(row)
            if progress is not None:
                progress.update(1)
    return pd.DataFrame(rows)


def auc_sweep(frame: pd.DataFrame, schema: Schema, dataset: str, parameter: str, values: Sequence, *,
              folds: int = 10, seed: int = 0, dp_lr: bool = False, epsilon: float = 1.0, progress: Any = None,
              **fixed: Any) -> pd.DataFrame:
    """CV AUCs of the projected histogram as ``parameter`` ("epsilon", "k" or "gamma") takes
    ``values``, the others at the baseline (ε = 1) or their heuristic (spec §4 (ii)).

    ``dp_lr``: also run the one-vs-rest PrivateLogisticRegression at each ε (ε sweeps only).
    Columns: dataset, parameter, value, method, fold, auc (+ k, gamma, ... of the histogram).
    """
    if parameter not in ("epsilon", "k", "gamma"):
        raise ValueError(f"parameter must be 'epsilon', 'k' or 'gamma', got {parameter!r}")
    out = []
    for v in values:
        params = {"epsilon": epsilon, **fixed, parameter: v}
        methods: dict[str, Callable[[int], Any]] = {
            "projected histogram": lambda s, p=params: ProjectedHistogram(random_state=s, **p)}
        if dp_lr and parameter == "epsilon":
            methods["DP-LR"] = lambda s, e=v: OneVsRestPrivateLR(schema, e, random_state=s, fit_intercept=True)
        res = cross_validated_auc(frame, schema, methods, folds=folds, seed=seed, progress=progress)
        out.append(res.assign(dataset=dataset, parameter=parameter, value=v))
    return pd.concat(out, ignore_index=True)


def broadcast_reference(reference: pd.DataFrame, dataset: str, parameter: str, values: Sequence) -> pd.DataFrame:
    """Repeat parameter-independent results (e.g. non-private LR) at every swept value, for the chart."""
    return pd.concat([reference.assign(dataset=dataset, parameter=parameter, value=v) for v in values],
                     ignore_index=True)


# ============================================================================ tables for the charts
def histogram_table(model: ProjectedHistogram, X: pd.DataFrame, y: Any, *, max_cells: int = 400) -> pd.DataFrame:
    """Every cell of the projection (if ≤ ``max_cells``): its true count (read from the private
    table: for display only), the released noisy count where the cell survived τ (NaN where it
    was dropped: the sparse release never draws those), and its status."""
    schema = model.schema_
    m = model.n_cells_
    if m > max_cells:
        raise ValueError(f"the projection has {m} cells; the display is limited to {max_cells}")
    codes, sizes = model._codes(X, model.selected_, model.n_bins_)
    cell = np.zeros(len(X), dtype=np.int64)
    for j in range(len(model.selected_)):
        cell = cell * sizes[j] + codes[:, j]
    cell = cell * schema.n_classes + schema.encode_target(y)
    true = np.bincount(cell, minlength=m).astype(float)
    noisy = np.full(m, np.nan)
    noisy[model.counts_.codes] = model.counts_.values
    kept = ~np.isnan(noisy)
    idx = np.unravel_index(np.arange(m), model.counts_.shape)
    labels = [model._level_labels(a) for a in model.selected_]
    cells = [" | ".join(str(lab[i[c]]) for lab, i in zip(labels, idx[:-1])) for c in range(m)]
    status = np.where(kept, np.where(true > 0, "kept", "kept, empty in truth"),
                      np.where(true > 0, "dropped", "empty, dropped"))
    return pd.DataFrame({"cell": cells, "class": model.classes_[idx[-1]], "true_count": true,
                         "noisy_count": noisy, "status": status})


def survival_table(n: float, epsilons: Sequence[float], A: float = 0.5, sensitivity: float = 1.0,
                   z_max: int | None = None) -> pd.DataFrame:
    """P(cell kept | true count z) (eq. 5) for z = 0 … z_max at each ε_h."""
    rows = []
    for eps in epsilons:
        tau = threshold(n, eps, A)
        top = int(z_max if z_max is not None else max(10, np.ceil(2.5 * tau)))
        z = np.arange(top + 1)
        rows.append(pd.DataFrame({"z": z, "probability": survival_probability(z, n, eps, A, sensitivity),
                                  "epsilon_h": f"{eps:.3g}", "tau": tau}))
    return pd.concat(rows, ignore_index=True)


# ============================================================================ widgets
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
                                           n_bins=bins.value, random_state=seed).fit(X, y, schema)
            view = model.diagnostics(X, y)  # NOT private: a teaching view on the public Iris data
            charts_ = ([charts.selection_chart(view["selection"])] if len(view["selection"]) else [])
            charts_.append(charts.histogram_chart(histogram_table(model, X, y), model.threshold_))
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
        table = survival_table(size.value, [eps.value], A.value, sensitivity)
        show_chart(out, charts.survival_chart(table, floor=0.5 * size.value ** (-A.value / sensitivity)))

    for w in (eps, A, size):
        w.observe(render, "value")
    render()
    return W.VBox([W.HBox([eps, A, size]), out])


def auc_explorer(sweeps: pd.DataFrame):
    """Dropdown over the swept parameter (ε, k, γ) of a precomputed :func:`auc_sweep` table."""
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
