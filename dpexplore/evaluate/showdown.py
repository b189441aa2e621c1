"""The method showdown: every private classifier of dpexplore on one table, and a verdict computed
from the results ("which one when").

:func:`candidate_methods` lists a factory(epsilon, random_state) per method, each taking the raw
table (publishing methods get the public schema from :func:`~dpexplore.evaluate.sweep.sweep`;
the models are wrapped with a public-schema encoder). :func:`available_methods` fits each one
once on a small sample and keeps those that import and work, with the reason for any excluded.
:func:`which_one_when` turns a :func:`~dpexplore.evaluate.sweep.summarise` table into the
per-ε verdict: the lowest median error, the runner-up, whether the best beats the majority class
by more than its own spread, and the fastest method within a tolerance of the best.
"""
from __future__ import annotations

import warnings
from functools import partial
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from ..domain import Schema

__all__ = ["candidate_methods", "available_methods", "which_one_when", "PrivateLRClassifier"]


# --------------------------------------------------------------------------- factories
def _privpfc(epsilon: float, random_state: Any):
    from ..publish.privpfc import PrivPfC

    return PrivPfC(epsilon, random_state=random_state)


def _diffmulti(epsilon: float, random_state: Any):
    from ..publish.diffmulti import DiffMulti

    return DiffMulti(epsilon, random_state=random_state)


def _diffgen(epsilon: float, random_state: Any):
    from ..publish.diffgen import DiffGen

    return DiffGen(epsilon, random_state=random_state)


def _projected(epsilon: float, random_state: Any):
    from ..publish.projected import ProjectedHistogram

    return ProjectedHistogram(epsilon, random_state=random_state)


def _nb(schema: Schema, epsilon: float, random_state: Any):
    """Thesis pipeline: public one-hot encoding → DP k-subset selection (k = 10, half of ε) →
    DP Bernoulli naive Bayes (the other half)."""
    from sklearn.pipeline import make_pipeline

    from ..models.naive_bayes import Binarizer, PrivateNaiveBayes
    from ..models.pipeline import SelectThenTrain
    from ..select.thesis import PrivateKSubsetSelector

    return make_pipeline(Binarizer(schema), SelectThenTrain(PrivateKSubsetSelector(k=10), PrivateNaiveBayes(),
                                                            epsilon=epsilon, random_state=random_state))


class PrivateLRClassifier:
    """Objective-perturbation logistic regression (Chaudhuri et al. 2011) on the public encoding
    of the table: numeric columns scaled by their public bounds into [0, 1], categoricals one-hot
    over their public categories. Binary: one model at ε; q > 2 classes: one-vs-rest, ε/q each
    (sequential composition on the same rows)."""

    def __init__(self, schema: Schema, epsilon: float, random_state: Any = None, C: float = 1.0):
        self.schema, self.epsilon, self.random_state, self.C = schema, epsilon, random_state, C

    def _design(self, X: pd.DataFrame) -> np.ndarray:
        blocks = []
        for a in self.schema.predictors:
            attr = self.schema[a]
            if attr.kind == "numeric":
                u = (X[a].to_numpy(dtype=float) - attr.lower) / (attr.upper - attr.lower)
                blocks.append(np.clip(u, 0, 1)[:, None])
            else:
                codes = pd.Categorical(X[a].astype(str), categories=[str(c) for c in attr.categories]).codes
                blocks.append(np.eye(len(attr.categories))[codes])
        return np.hstack(blocks)

    def fit(self, X: pd.DataFrame, y: Any) -> "PrivateLRClassifier":
        from .._validation import check_random_state
        from ..models.logistic import PrivateLogisticRegression

        Z = self._design(X)
        rng = check_random_state(self.random_state)
        y = np.asarray(y, dtype=object)
        self.classes_ = np.asarray(self.schema.classes, dtype=object)
        targets = self.classes_[1:] if len(self.classes_) == 2 else self.classes_
        bounds = (np.zeros(Z.shape[1]), np.ones(Z.shape[1]))
        self.models_ = [PrivateLogisticRegression(epsilon=self.epsilon / len(targets), C=self.C, bounds=bounds,
                                                  fit_intercept=True, random_state=rng)
                        .fit(Z, (y == c).astype(int)) for c in targets]
        return self

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        Z = self._design(X)
        pos = np.column_stack([m.predict_proba(Z)[:, list(m.classes_).index(1)] for m in self.models_])
        if len(self.classes_) == 2:
            return np.column_stack([1 - pos[:, 0], pos[:, 0]])
        return pos / np.clip(pos.sum(axis=1, keepdims=True), 1e-300, None)

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


def _lr(schema: Schema, epsilon: float, random_state: Any) -> PrivateLRClassifier:
    return PrivateLRClassifier(schema, epsilon, random_state)


def candidate_methods(schema: Schema) -> dict[str, Callable]:
    """Every private classifier of dpexplore as name → factory(epsilon, random_state)."""
    if not isinstance(schema, Schema):
        raise TypeError(f"schema must be a dpexplore Schema, got {type(schema).__name__}")
    return {"PrivPfC": _privpfc, "DiffMulti": _diffmulti, "DiffGen": _diffgen, "Projected histogram": _projected,
            "k-subset + NB": partial(_nb, schema), "Private LR": partial(_lr, schema)}


def available_methods(candidates: Mapping[str, Callable], data: tuple[pd.DataFrame, Schema], *,
                      n_rows: int = 2000, epsilon: float = 1.0, random_state: int = 0
                      ) -> tuple[dict[str, Callable], pd.DataFrame]:
    """Keep the methods that import, fit and predict on a stratified sample of ``n_rows`` rows.

    Returns (the working methods, a table method / status / reason). A method that raises is
    excluded with its error message, so a notebook runs even while a method is missing.
    """
    from ..datasets import train_test_split
    from .sweep import _fit

    frame, schema = data
    n = min(n_rows, len(frame))
    _, sample, _, _ = train_test_split(frame, schema, test_size=n, random_state=random_state) \
        if n < len(frame) else (None, frame[schema.predictors], None, None)
    y = frame.loc[sample.index, schema.target]
    ok, rows = {}, []
    for name, factory in candidates.items():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = factory(epsilon, random_state)
                _fit(est, sample, y, schema)
                pred = np.asarray(est.predict(sample.iloc[:50]))
            if pred.shape != (min(50, n),) or not set(pred) <= set(schema.classes):
                raise ValueError(f"predict returned {pred[:3]!r}..., not class labels")
            ok[name] = factory
            rows.append({"method": name, "status": "included", "reason": ""})
        except Exception as exc:  # noqa: BLE001 - any failure excludes the method, with its reason
            rows.append({"method": name, "status": "excluded", "reason": f"{type(exc).__name__}: {exc}"[:200]})
    return ok, pd.DataFrame(rows)


# --------------------------------------------------------------------------- verdict
def which_one_when(summary: pd.DataFrame, *, metric: str = "error", tolerance: float = 0.01) -> pd.DataFrame:
    """Per dataset (if a ``dataset`` column is present) and ε: the verdict, from the results.

    ``summary`` is :func:`~dpexplore.evaluate.sweep.summarise` output (majority and non-private
    rows carry ε = inf). Columns: best (lowest median ``metric``), its median and quartiles,
    runner-up, ``beats_majority`` (best's 75th percentile below the majority's median),
    ``gap_to_nonprivate`` and ``fastest_good`` (the fastest method whose median is within
    ``tolerance`` of the best).
    """
    need = {"method", "epsilon", "metric", "median", "q25", "q75", "seconds"}
    if not isinstance(summary, pd.DataFrame) or not need <= set(summary.columns):
        raise ValueError(f"summary needs the columns {sorted(need)} (use summarise())")
    s = summary[summary["metric"] == metric]
    if s.empty:
        raise ValueError(f"no rows for metric {metric!r}")
    keys = ["dataset"] if "dataset" in s.columns else []
    rows = []
    for key, group in (s.groupby(keys, sort=False) if keys else [((), s)]):
        ref = group[np.isinf(group["epsilon"])].set_index("method")["median"]
        private = group[np.isfinite(group["epsilon"])]
        for eps, g in private.groupby("epsilon"):
            g = g.sort_values(["median", "seconds"])
            best, second = g.iloc[0], (g.iloc[1] if len(g) > 1 else None)
            good = g[g["median"] <= best["median"] + tolerance]
            fastest = good.sort_values("seconds").iloc[0]
            row = dict(zip(keys, key if isinstance(key, tuple) else (key,)))
            row.update({"epsilon": eps, "best": best["method"], "median": best["median"],
                        "q25": best["q25"], "q75": best["q75"],
                        "runner_up": None if second is None else second["method"],
                        "runner_up_median": np.nan if second is None else second["median"],
                        "majority": ref.get("majority", np.nan),
                        "beats_majority": bool(best["q75"] < ref.get("majority", np.inf)),
                        "gap_to_nonprivate": best["median"] - ref.get("non-private", np.nan),
                        "fastest_good": fastest["method"], "fastest_seconds": fastest["seconds"]})
            rows.append(row)
    return pd.DataFrame(rows)
