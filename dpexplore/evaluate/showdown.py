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

:func:`showdown_sweep` runs the whole comparison (availability check, sweep, baselines) on several
tables; :func:`save_showdown` / :func:`load_showdown` store and read it as CSV files plus a JSON
sidecar with the settings and versions (notebook 07 opens from that cache; ``benchmarks/
showdown_sweep.py`` writes it). :func:`load_peers` reads the stored peers benchmark (other
libraries at the same ε), or returns None when it is absent. Reading and the verdict live in
:mod:`~dpexplore.evaluate.showdown_results` (no scikit-learn), re-exported here.
"""
from __future__ import annotations

import json
import warnings
from functools import partial
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin

from ..budget import BudgetAccountant, RecordsSpends, prepare_accountant
from ..domain import Schema
from .showdown_results import (_AVAILABILITY_COLUMNS, HIGHER_IS_BETTER, PEER_COLUMNS, RESULT_COLUMNS,  # noqa: F401
                               SHOWDOWN_FILES, load_peers, load_showdown, which_one_when)

__all__ = ["candidate_methods", "available_methods", "which_one_when", "PrivateLRClassifier", "HIGHER_IS_BETTER",
           "showdown_sweep", "showdown_tables", "save_showdown", "load_showdown", "load_peers", "SHOWDOWN_FILES",
           "SHOWDOWN_SETTINGS",
           "RESULT_COLUMNS", "PEER_COLUMNS"]


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


#: The stored run's settings (``benchmarks/showdown_sweep.py``; notebook 07's recompute path).
#: ``rows``: a stratified sample of each table (None: all 45,222 rows).
SHOWDOWN_SETTINGS = {"epsilons": [0.03, 0.1, 0.3, 1.0], "repetitions": 3, "rows": 12000, "seed": 2026}


def showdown_tables(rows: int | None = None, seed: int = 2026) -> dict[str, tuple[pd.DataFrame, Schema]]:
    """Adult and Adult-Multiclass as name → (frame, schema); with ``rows``, a stratified sample
    of that many rows of each (the same rows for a given ``seed``)."""
    from ..datasets import load_adult, load_adult_multiclass, train_test_split

    out = {"Adult": load_adult(), "Adult-Multiclass": load_adult_multiclass()}
    if rows is not None:
        for name, (frame, schema) in out.items():
            if rows < len(frame):
                _, X, _, y = train_test_split(frame, schema, test_size=rows, random_state=seed)
                out[name] = (X.assign(**{schema.target: y}).reset_index(drop=True), schema)
    return out


def showdown_sweep(datasets: Mapping[str, tuple[pd.DataFrame, Schema]], epsilons: Sequence[float],
                   repetitions: int, *, random_state: int = 2026, n_jobs: int = 1,
                   metrics: Sequence[str] = ("error", "accuracy"), check_rows: int = 2000,
                   progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The whole showdown on each table of ``datasets`` (name → (frame, schema)).

    Per table: :func:`available_methods` on ``check_rows`` rows, then
    :func:`~dpexplore.evaluate.sweeps.sweep` of the working methods and
    :func:`~dpexplore.evaluate.sweeps.baselines` on the same splits (seed ``random_state``).
    Returns ``(results, availability)``: results has :data:`RESULT_COLUMNS`, availability
    ``dataset, method, status, reason``. The evaluation is not private (the analyst's benchmark).
    """
    from .sweeps import EVALUATION_NOTE, baselines, sweep

    if not isinstance(datasets, Mapping) or not datasets:
        raise TypeError("datasets must be a non-empty mapping name -> (frame, schema), e.g. "
                        "{'Adult': load_adult()}")
    results, availability = [], []
    for name, data in datasets.items():
        if not (isinstance(data, tuple) and len(data) == 2 and isinstance(data[1], Schema)):
            raise TypeError(f"datasets[{name!r}] must be a (frame, schema) pair, as load_adult() returns")
        methods, table = available_methods(candidate_methods(data[1]), data, n_rows=check_rows,
                                           random_state=random_state)
        availability.append(table.assign(dataset=name))
        if methods:
            results.append(sweep(methods, data, epsilons, repetitions, metrics=list(metrics), n_jobs=n_jobs,
                                 random_state=random_state, progress=progress).assign(dataset=name))
        results.append(baselines(data, repetitions, metrics=list(metrics), random_state=random_state)
                       .assign(dataset=name))
    out = pd.concat(results, ignore_index=True)[RESULT_COLUMNS]
    out.attrs["evaluation"] = EVALUATION_NOTE
    return out, pd.concat(availability, ignore_index=True)[_AVAILABILITY_COLUMNS]


def save_showdown(results: pd.DataFrame, availability: pd.DataFrame, directory: str | Path,
                  settings: Mapping[str, Any]) -> dict:
    """Write :func:`showdown_sweep`'s tables to ``directory`` (:data:`SHOWDOWN_FILES`) with a JSON
    sidecar: ``settings`` (ε grid, repetitions, seed, … and whatever the caller adds, e.g. the
    commit), the versions of the packages that produced it and the table shapes. Returns the
    sidecar's content."""
    import platform
    import sklearn

    from .. import __version__

    if not set(RESULT_COLUMNS) <= set(results.columns):
        raise ValueError(f"results must have the columns {RESULT_COLUMNS} (use showdown_sweep())")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    finite = results[np.isfinite(results["epsilon"])]
    meta = {"settings": dict(settings),
            "epsilons": sorted(float(e) for e in finite["epsilon"].unique()),
            "repetitions": int(results["run"].nunique()),
            "datasets": list(dict.fromkeys(results["dataset"])),
            "methods": {d: list(dict.fromkeys(g["method"])) for d, g in finite.groupby("dataset", sort=False)},
            "metrics": list(dict.fromkeys(results["metric"])),
            "rows": int(len(results)),
            "evaluation": results.attrs.get("evaluation", ""),
            "versions": {"dpexplore": __version__, "python": platform.python_version(), "numpy": np.__version__,
                         "pandas": pd.__version__, "scikit-learn": sklearn.__version__}}
    results[RESULT_COLUMNS].to_csv(directory / SHOWDOWN_FILES["results"], index=False, float_format="%.6g")
    availability[_AVAILABILITY_COLUMNS].to_csv(directory / SHOWDOWN_FILES["availability"], index=False)
    (directory / SHOWDOWN_FILES["meta"]).write_text(json.dumps(meta, indent=2, default=str) + "\n")
    return meta
