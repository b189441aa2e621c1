"""The method showdown: every private classifier of dpexplore on one table, and a verdict computed
from the results ("which one when").

:func:`candidate_methods` lists a factory(epsilon, random_state) per method, each taking the raw
table (publishing methods get the public schema from :func:`~dpexplore.evaluate.sweeps.sweep`;
the models are wrapped with a public-schema encoder). :func:`available_methods` fits each one
once on a small sample and keeps those that import and work, with the reason for any excluded.
:func:`which_one_when` turns a :func:`~dpexplore.evaluate.sweeps.summarise` table into the
per-ε verdict: the best median (lowest error; highest accuracy or AUC), the runner-up, whether
the best beats the majority class by more than its own spread, and the fastest method within a
tolerance of the best. Nothing in it is typed in: change the results and the verdict changes.
"""
from __future__ import annotations

import warnings
from functools import partial
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin

from ..budget import BudgetAccountant, RecordsSpends, prepare_accountant
from ..domain import Schema

__all__ = ["candidate_methods", "available_methods", "which_one_when", "PrivateLRClassifier", "HIGHER_IS_BETTER"]


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
    DP Bernoulli naive Bayes (the other half), both with the schema's declared classes (with more
    than two, the selection scores the last class against the rest)."""
    from sklearn.pipeline import make_pipeline

    from ..models.naive_bayes import Binarizer, PrivateNaiveBayes
    from ..models.pipeline import SelectThenTrain
    from ..select.thesis import PrivateKSubsetSelector

    return make_pipeline(Binarizer(schema), SelectThenTrain(PrivateKSubsetSelector(k=10), PrivateNaiveBayes(),
                                                            classes=list(schema.classes), epsilon=epsilon,
                                                            random_state=random_state))


class PrivateLRClassifier(RecordsSpends, ClassifierMixin, BaseEstimator):
    """Objective-perturbation logistic regression (Chaudhuri et al. 2011) on the public encoding
    of the table: numeric columns scaled by their public bounds into [0, 1], categoricals one-hot
    over their public categories (at predict time, numbers outside the bounds are clipped and
    unknown categories get no indicator; ``fit`` refuses them, as every method does). Binary: one
    model at ε; q > 2 classes: one-vs-rest, ε/q each (sequential composition on the same rows),
    all spent from one accountant (``accountant`` or a fresh one): ``ledger_`` and
    ``epsilon_spent_`` after fit.

    Every class of the schema gets its one-vs-rest model, whether or not it occurs in the
    training rows (a class with no rows gets a model fitted on an all-negative target, noise
    included): refusing when a class is absent would reveal that it is, a data-dependent answer
    no ε pays for. ``schema=None`` infers the domain and the classes from the data with a
    :class:`~dpexplore.domain.PrivacyLeakWarning` (for scikit-learn's tools; not DP). X may be a
    DataFrame or an array (columns ``x0, x1, …``, or the schema's predictors in order).
    Predictions come back in the type of the training labels.
    """

    def __init__(self, schema: Schema | None = None, epsilon: float = 1.0, random_state: Any = None,
                 C: float = 1.0, accountant: BudgetAccountant | None = None):
        self.schema = schema
        self.epsilon = epsilon
        self.random_state = random_state
        self.C = C
        self.accountant = accountant

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None   # fresh noise on every unseeded fit
        tags.input_tags.sparse = False
        return tags

    def _frame(self, X: Any, y: Any = None, *, reset: bool) -> tuple[pd.DataFrame, Any]:
        """scikit-learn's validation (shape, names, NaN, sparse, complex, empty; y's length), then
        X as a DataFrame named like the schema's predictors."""
        from sklearn.utils.validation import validate_data

        frame = isinstance(X, pd.DataFrame)
        kwargs = {"dtype": None if frame else "numeric"}
        if reset:
            Xv, yv = validate_data(self, X, y, **kwargs)
        else:
            Xv, yv = validate_data(self, X, reset=False, **kwargs), None
        if frame:
            if not all(isinstance(c, str) for c in X.columns):   # e.g. integer column labels
                X = X.set_axis([str(c) for c in X.columns], axis=1)
            return X, yv
        schema = self.schema if reset else self.schema_
        if isinstance(schema, Schema) and not (reset and self.schema is None):
            if Xv.shape[1] != len(schema.predictors):
                raise ValueError(f"X has {Xv.shape[1]} columns, the schema has {len(schema.predictors)} "
                                 f"predictors {schema.predictors}: pass a DataFrame with those columns")
            names = schema.predictors
        else:
            names = [f"x{i}" for i in range(Xv.shape[1])]
        return pd.DataFrame(Xv, columns=names), yv

    @staticmethod
    def _infer_schema(X: pd.DataFrame, y: np.ndarray) -> Schema:
        """The domain read from the data (NOT private): observed bounds, categories and classes."""
        from ..domain import PrivacyLeakWarning, observed_attribute

        labels = np.unique(y)
        if labels.size < 2:
            raise ValueError(f"y has {labels.size} class: a classifier needs at least 2 (declare them in a Schema)")
        attrs = [observed_attribute(col, X[col]) for col in X.columns]
        warnings.warn("PrivateLRClassifier without a schema: the numeric bounds, category lists and class "
                      "labels are read from the private data, which no ε covers. Pass a Schema with the "
                      "public domain.", PrivacyLeakWarning, stacklevel=3)
        target = "__target__"
        return Schema(attrs, target, [str(c) for c in labels])

    def _design(self, X: pd.DataFrame) -> np.ndarray:
        schema = self.__dict__.get("schema_", self.schema)
        blocks = []
        for a in schema.predictors:
            attr = schema[a]
            if attr.kind == "numeric":
                u = (X[a].to_numpy(dtype=float) - attr.lower) / (attr.upper - attr.lower)
                blocks.append(np.clip(u, 0, 1)[:, None])
            else:
                codes = pd.Index([str(c) for c in attr.categories], dtype=object).get_indexer(
                    np.asarray(X[a].astype(str), dtype=object))
                # a value outside the public categories (at predict time) gets no indicator at all,
                # not the last category's (numpy's index -1)
                onehot = np.zeros((len(codes), len(attr.categories)))
                known = codes >= 0
                onehot[np.flatnonzero(known), codes[known]] = 1.0
                blocks.append(onehot)
        return np.hstack(blocks)

    def fit(self, X: Any, y: Any) -> "PrivateLRClassifier":
        """Validate everything (before any spend), then fit one model per declared class."""
        from sklearn.utils.multiclass import check_classification_targets

        from .._validation import check_epsilon, check_positive, check_random_state
        from ..domain import class_values
        from ..models.logistic import PrivateLogisticRegression

        if self.schema is not None and not isinstance(self.schema, Schema):
            raise TypeError(f"schema must be a dpexplore Schema or None, got {type(self.schema).__name__}")
        check_epsilon(self.epsilon)
        check_positive(self.C, "C")
        if y is None:
            raise ValueError("requires y to be passed, but the target y is None (PrivateLRClassifier is a classifier)")
        frame, yv = self._frame(X, y, reset=True)
        check_classification_targets(yv)
        if self.schema is None:
            schema = self._infer_schema(frame, yv)
        else:
            schema = self.schema
            # X against the public domain; y only against the declared classes (no "every class
            # occurs" or "two classes occur" refusal: that would depend on the private rows)
            schema.validate(frame[schema.predictors] if set(schema.predictors) <= set(frame.columns) else frame)
        codes = schema.encode_target(yv)       # a label outside the declared classes: refused
        rng = check_random_state(self.random_state)
        accountant = prepare_accountant(self.epsilon, self.accountant)  # raises before any spend
        self.schema_ = schema
        Z = self._design(frame)
        q = len(schema.classes)
        targets = [1] if q == 2 else list(range(q))
        parts = accountant.split([1.0] * len(targets), total=float(self.epsilon))
        bounds = (np.zeros(Z.shape[1]), np.ones(Z.shape[1]))
        self._open_ledger(accountant)
        # one-vs-rest over every declared class (Chaudhuri et al. Alg. 2 per part, ε/q each)
        self.models_ = [PrivateLogisticRegression(epsilon=eps, C=self.C, bounds=bounds, fit_intercept=True,
                                                  classes=[0, 1], accountant=accountant, random_state=rng)
                        .fit(Z, (codes == c).astype(int)) for c, eps in zip(targets, parts)]
        self._close_ledger()
        self.classes_ = class_values(list(schema.classes), yv)
        return self

    def predict_proba(self, X: Any) -> np.ndarray:
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "models_")
        frame, _ = self._frame(X, reset=False)
        Z = self._design(frame)
        pos = np.column_stack([m.predict_proba(Z)[:, 1] for m in self.models_])
        if len(self.classes_) == 2:
            return np.column_stack([1 - pos[:, 0], pos[:, 0]])
        return pos / np.clip(pos.sum(axis=1, keepdims=True), 1e-300, None)

    def predict(self, X: Any) -> np.ndarray:
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]


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
    from .sweeps import _fit

    frame, schema = data
    n = min(n_rows, len(frame))
    if n < len(frame):
        _, sample, _, y = train_test_split(frame, schema, test_size=n, random_state=random_state)
    else:
        sample, y = frame[schema.predictors], frame[schema.target]
    classes = set(map(str, schema.classes))
    ok, rows = {}, []
    for name, factory in candidates.items():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = factory(epsilon, random_state)
                _fit(est, sample, y, schema)
                pred = np.asarray(est.predict(sample.iloc[:50]))
            if pred.shape != (min(50, n),) or not set(map(str, pred)) <= classes:
                raise ValueError(f"predict returned {pred[:3]!r}..., not class labels")
            ok[name] = factory
            rows.append({"method": name, "status": "included", "reason": ""})
        except Exception as exc:  # noqa: BLE001 - any failure excludes the method, with its reason
            rows.append({"method": name, "status": "excluded", "reason": f"{type(exc).__name__}: {exc}"[:200]})
    return ok, pd.DataFrame(rows)


# --------------------------------------------------------------------------- verdict
#: Metrics where a larger value is better (the others, like "error", are minimised).
HIGHER_IS_BETTER = frozenset({"accuracy", "auc"})


def which_one_when(summary: pd.DataFrame, *, metric: str = "error", tolerance: float = 0.01,
                   higher_is_better: bool | None = None) -> pd.DataFrame:
    """Per dataset (if a ``dataset`` column is present) and ε: the verdict, from the results.

    ``summary`` is :func:`~dpexplore.evaluate.sweeps.summarise` output (majority and non-private
    rows carry ε = inf). ``higher_is_better`` defaults to True for "accuracy" and "auc", False
    otherwise (errors). Columns: best (best median ``metric``; ties go to the faster method), its
    median and quartiles, runner-up, ``beats_majority`` (the best's worse quartile is still better
    than the majority's median; None without a majority row), ``gap_to_nonprivate`` (best minus
    non-private median) and ``fastest_good`` (the fastest method whose median is within
    ``tolerance`` of the best).
    """
    need = {"method", "epsilon", "metric", "median", "q25", "q75", "seconds"}
    if not isinstance(summary, pd.DataFrame) or not need <= set(summary.columns):
        raise ValueError(f"summary needs the columns {sorted(need)} (use summarise())")
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not tolerance >= 0:
        raise ValueError(f"tolerance must be a number >= 0, got {tolerance!r}")
    higher = (metric in HIGHER_IS_BETTER) if higher_is_better is None else bool(higher_is_better)
    sign = -1.0 if higher else 1.0  # rank on sign * median: smaller is better
    s = summary[summary["metric"] == metric]
    if s.empty:
        raise ValueError(f"no rows for metric {metric!r}")
    keys = ["dataset"] if "dataset" in s.columns else []
    rows = []
    for key, group in (s.groupby(keys, sort=False) if keys else [((), s)]):
        ref = group[np.isinf(group["epsilon"])].groupby("method")["median"].median()
        private = group[np.isfinite(group["epsilon"])]
        for eps, g in private.groupby("epsilon"):
            g = g.assign(_rank=sign * g["median"]).sort_values(["_rank", "seconds"], kind="mergesort")
            best, second = g.iloc[0], (g.iloc[1] if len(g) > 1 else None)
            good = g[g["_rank"] <= best["_rank"] + tolerance]
            fastest = good.sort_values("seconds", kind="mergesort").iloc[0]
            worse_quartile = best["q25"] if higher else best["q75"]
            majority = ref.get("majority", np.nan)
            row = dict(zip(keys, key if isinstance(key, tuple) else (key,)))
            row.update({"epsilon": eps, "best": best["method"], "median": best["median"],
                        "q25": best["q25"], "q75": best["q75"],
                        "runner_up": None if second is None else second["method"],
                        "runner_up_median": np.nan if second is None else second["median"],
                        "majority": majority,
                        "beats_majority": None if np.isnan(majority) else bool(sign * worse_quartile < sign * majority),
                        "gap_to_nonprivate": best["median"] - ref.get("non-private", np.nan),
                        "fastest_good": fastest["method"], "fastest_seconds": fastest["seconds"]})
            rows.append(row)
    return pd.DataFrame(rows)
