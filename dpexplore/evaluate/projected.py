"""The evaluation protocol of Vinterbo's projected histograms, and the tables behind its charts.

Vinterbo, "Differentially private projected histograms: construction and use for prediction",
ECML PKDD 2012, §3.1: stratified k-fold cross-validation with every private step re-run inside
each training fold, the AUC for binary targets and Hand & Till's M (one-vs-one macro AUC) for
more classes; non-private logistic regression and DP logistic regression
(:class:`~dpexplore.models.PrivateLRClassifier`, one model per class at ε/q) as references.
The chart tables: a projection's true and noisy cell counts (a NON-PRIVATE teaching view) and
the probability that a cell survives the threshold τ (eq. 5).
"""
from __future__ import annotations

import warnings
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold

from ..domain import Schema
from ..encode import design_matrix
from ..exceptions import EmptySyntheticWarning
from ..models.logistic import PrivateLRClassifier
from ..publish.projected import ProjectedHistogram
from ..publish.sparse_histogram import survival_probability, threshold

__all__ = ["auc", "NonPrivateLR", "cross_validated_auc", "auc_sweep", "broadcast_reference",
           "histogram_table", "survival_table"]


# ============================================================================ evaluation protocol
def auc(y_true: Any, proba: np.ndarray, classes: Sequence) -> float:
    """AUC of the last class for two classes; for more, Hand & Till's (2001) M: the one-vs-one
    AUCs averaged over class pairs (Vinterbo 2012, §3.1)."""
    classes = list(classes)
    y_true = np.asarray(y_true, dtype=object)
    if len(classes) == 2:
        return float(roc_auc_score(y_true == classes[1], proba[:, 1]))
    p = np.clip(proba, 1e-300, None)
    return float(roc_auc_score(y_true, p / p.sum(axis=1, keepdims=True), multi_class="ovo",
                               average="macro", labels=classes))


class NonPrivateLR:
    """The paper's O(M)LR reference (Vinterbo 2012, §3.1): logistic regression on the real
    training fold over :func:`~dpexplore.encode.design_matrix` (NOT private)."""

    def __init__(self, schema: Schema, C: float = 1.0):
        self.schema, self.C = schema, C

    def fit(self, X: pd.DataFrame, y: Any) -> "NonPrivateLR":
        self.model_ = LogisticRegression(C=self.C, max_iter=2000).fit(design_matrix(X, self.schema), np.asarray(y))
        self.classes_ = self.model_.classes_
        return self

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        return self.model_.predict_proba(design_matrix(X, self.schema))


def cross_validated_auc(frame: pd.DataFrame, schema: Schema, methods: Mapping[str, Callable[[int], Any]], *,
                        folds: int = 10, seed: int = 0, progress: Any = None) -> pd.DataFrame:
    """Stratified k-fold CV: one row per (method, fold) with its AUC.

    ``methods`` maps a name to ``make(seed) -> estimator`` with fit(X, y) / predict_proba(X); an
    estimator with a ``schema`` parameter left at None gets ``schema`` (the public domain) before
    it is fitted. ``progress`` is a tqdm bar to update.
    """
    X, y = schema.split(frame)
    rows = []
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    for fold, (train, test) in enumerate(splitter.split(X, y)):
        Xtr, ytr, Xte, yte = X.iloc[train], y.iloc[train], X.iloc[test], y.iloc[test]
        for name, make in methods.items():
            model = make(seed * 1000 + fold)
            if "schema" in getattr(model, "get_params", dict)() and model.get_params()["schema"] is None:
                model.set_params(schema=schema)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", EmptySyntheticWarning)
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
    ``values``, the others at the baseline (ε = 1) or their heuristic (Vinterbo 2012, §3.1).

    ``dp_lr``: also run :class:`~dpexplore.models.PrivateLRClassifier` (one-vs-rest, ε/q per class
    for q > 2 classes) at each ε (ε sweeps only).
    Columns: dataset, parameter, value, method, fold, auc (+ k, gamma, ... of the histogram).
    """
    if parameter not in ("epsilon", "k", "gamma"):
        raise ValueError(f"parameter must be 'epsilon', 'k' or 'gamma', got {parameter!r}")
    out = []
    for v in values:
        params = {"epsilon": epsilon, **fixed, parameter: v}
        methods: dict[str, Callable[[int], Any]] = {
            "projected histogram": lambda s, p=params: ProjectedHistogram(random_state=s, schema=schema, **p)}
        if dp_lr and parameter == "epsilon":
            methods["DP-LR"] = lambda s, e=v: PrivateLRClassifier(schema, epsilon=e, random_state=s)
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
