"""Run many methods at many ε, many times, and collect one tidy table of their utility.

``sweep(methods, data, epsilons, repetitions)`` fits every method at every ε on ``repetitions``
train/test splits (or ``cv``-fold cross-validation) and returns one row per
(method, ε, run, metric): the long format altair plots directly.

Reproducibility: the seed of every (method, ε, run) comes from one ``numpy.random.SeedSequence``
(``random_state``) with a spawn key built from the method's name, the value of ε and the run,
so a result depends neither on the order the tasks run in nor on which other methods and budgets
are swept. That is why ``n_jobs > 1`` (worker processes) gives exactly the serial table. The
split of run ``r`` is shared by every method and every ε (paired comparison).

Budget: each fit is one release at its ε (a fresh budget per (method, ε, run, fold): these are
repeated experiments, not one release). After every fit the ε the estimator reports having spent
(``epsilon_spent_``, summed over the steps of a Pipeline) is checked against the ε it was given;
a method that spent more stops the sweep with an error.

Utility is measured on a held-out test set without noise: that evaluation is **not** private
(it is what a data owner does before choosing a method; see ``private_auc`` for a private one).
The returned table says so in ``results.attrs["evaluation"]``.
"""
from __future__ import annotations

import numbers
import time
import zlib
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any, Callable, Mapping, Sequence

import multiprocessing
import numpy as np
import pandas as pd

from .._validation import check_epsilon, check_frame, check_int
from ..domain import Schema

__all__ = ["sweep", "summarise", "baselines", "majority_factory", "nonprivate_factory", "Splits",
           "root_entropy", "COLUMNS", "EVALUATION_NOTE"]

COLUMNS = ["method", "epsilon", "run", "metric", "value", "seconds"]

#: ``attrs["evaluation"]`` of every table sweep() and baselines() return.
EVALUATION_NOTE = ("non-private: utility measured without noise on held-out test rows (for the data "
                   "owner choosing a method; not a release)")

Metric = Callable[[Any, pd.DataFrame, pd.Series], float]


# --------------------------------------------------------------------------- metrics
def _comparable_predictions(est: Any, X: pd.DataFrame, y: pd.Series) -> np.ndarray:
    """``est.predict(X)``, refused when its labels cannot equal y's (e.g. "0"/"1" against 0/1):
    every prediction would then count as wrong and the error would be silently 1."""
    pred = np.asarray(est.predict(X))
    truth = np.asarray(y)
    text = lambda a: pd.api.types.infer_dtype(a, skipna=True) in ("string", "bytes")  # noqa: E731
    if len(pred) and text(pred) != text(truth):
        raise TypeError(f"{type(est).__name__} predicts labels such as {pred[0]!r} but y holds labels such as "
                        f"{truth[0]!r}: predictions must come back in the type of the training labels")
    return pred


def _error(est: Any, X: pd.DataFrame, y: pd.Series) -> float:
    return float(np.mean(_comparable_predictions(est, X, y) != np.asarray(y)))


def _accuracy(est: Any, X: pd.DataFrame, y: pd.Series) -> float:
    return 1.0 - _error(est, X, y)


def _auc(est: Any, X: pd.DataFrame, y: pd.Series) -> float:
    from sklearn.metrics import roc_auc_score

    classes = list(getattr(est, "classes_", []))
    if len(classes) != 2:
        raise ValueError("metric 'auc' needs a binary target (the estimator saw "
                         f"{len(classes)} classes)")
    proba = np.asarray(est.predict_proba(X))[:, 1]
    return float(roc_auc_score(np.asarray(y) == classes[1], proba))


_BUILTIN: dict[str, Metric] = {"error": _error, "accuracy": _accuracy, "auc": _auc}


def resolve_metrics(metrics: str | Sequence | Mapping) -> dict[str, Metric]:
    """Normalise ``metrics``: a name ("error", "accuracy", "auc"), a list of names, or a mapping
    name → callable(fitted_estimator, X_test, y_test) → float."""
    if isinstance(metrics, str):
        metrics = [metrics]
    if isinstance(metrics, Mapping):
        items = list(metrics.items())
    else:
        try:
            names = list(metrics)
        except TypeError:
            raise TypeError(f"metrics must be a name, a list of names or a mapping, got {metrics!r}") from None
        items = []
        for m in names:
            if not isinstance(m, str) or m not in _BUILTIN:
                raise ValueError(f"unknown metric {m!r}: use one of {sorted(_BUILTIN)} or pass a "
                                 "mapping name -> callable(estimator, X_test, y_test)")
            items.append((m, _BUILTIN[m]))
    if not items:
        raise ValueError("metrics must name at least one metric")
    out = {}
    for name, fn in items:
        if isinstance(fn, str):
            if fn not in _BUILTIN:
                raise ValueError(f"unknown metric {fn!r}: use one of {sorted(_BUILTIN)}")
            fn = _BUILTIN[fn]
        if not callable(fn):
            raise TypeError(f"metric {name!r} must be callable(estimator, X_test, y_test)")
        out[str(name)] = fn
    return out


# --------------------------------------------------------------------------- inputs
def _check_data(data: Any) -> tuple[pd.DataFrame, Schema]:
    if not (isinstance(data, tuple) and len(data) == 2):
        raise TypeError("data must be a (frame, schema) pair, as returned by dpexplore.datasets.load_adult()")
    frame, schema = data
    check_frame(frame, "data frame")
    if not isinstance(schema, Schema):
        raise TypeError(f"data[1] must be a dpexplore Schema, got {type(schema).__name__}")
    missing = [c for c in list(schema.predictors) + [schema.target] if c not in frame.columns]
    if missing:
        raise ValueError(f"the data frame lacks the schema's column(s) {missing}")
    if frame[schema.target].nunique() < 2:
        raise ValueError(f"target {schema.target!r} has a single class: nothing to classify")
    return frame, schema


def _check_methods(methods: Any) -> dict[str, Any]:
    if not isinstance(methods, Mapping) or not methods:
        raise TypeError("methods must be a non-empty mapping name -> factory(epsilon, random_state) "
                        "or name -> estimator with an 'epsilon' parameter")
    out = {}
    for name, m in methods.items():
        if not isinstance(name, str):
            raise TypeError(f"method names must be strings, got {name!r}")
        if hasattr(m, "fit") and not isinstance(m, type):
            if not hasattr(m, "set_params") or "epsilon" not in m.get_params():
                raise TypeError(f"method {name!r} is an estimator without an 'epsilon' parameter: "
                                "pass a factory(epsilon, random_state) instead")
        elif not callable(m):
            raise TypeError(f"method {name!r} must be a factory(epsilon, random_state) or an estimator")
        out[name] = m
    return out


def _check_epsilons(epsilons: Any) -> list[float]:
    eps = np.atleast_1d(np.asarray(epsilons, dtype=object))
    if eps.ndim != 1 or eps.size == 0:
        raise ValueError("epsilons must be a non-empty list of budgets > 0")
    return [check_epsilon(e, "epsilons") for e in eps]


def root_entropy(random_state: Any) -> int:
    """The entropy a sweep's seeds derive from: the int seed itself, a draw from a Generator, or
    fresh OS entropy for None."""
    if random_state is None:
        return int(np.random.SeedSequence().entropy)
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**63 - 1))
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool) and random_state >= 0:
        return int(random_state)
    raise TypeError("random_state must be None, a non-negative int seed or a numpy.random.Generator, "
                    f"got {random_state!r}")


# --------------------------------------------------------------------------- one task
def _seed(entropy: int, key: tuple[int, ...]) -> int:
    """An int seed for ``key``, independent of the order tasks run in (SeedSequence spawn key)."""
    return int(np.random.SeedSequence(entropy, spawn_key=key).generate_state(1, np.uint32)[0])


def _name_key(name: str) -> int:
    return zlib.crc32(name.encode("utf-8"))


def _epsilon_key(epsilon: float | None) -> tuple[int, int]:
    """The 64 bits of ε as two words of a spawn key (None, for the baselines: (0, 0))."""
    if epsilon is None:
        return (0, 0)
    bits = int(np.float64(epsilon).view(np.uint64))
    return (bits >> 32, bits & 0xFFFFFFFF)


def _epsilon_spent(est: Any) -> float | None:
    """ε the fitted estimator reports having spent (summed over a Pipeline's steps), or None."""
    parts = [est]
    steps = getattr(est, "steps", None)
    if isinstance(steps, list):
        parts = [step for _, step in steps]
    spent = None
    for part in parts:
        try:
            value = getattr(part, "epsilon_spent_")
        except Exception:  # noqa: BLE001 - not fitted / not a spending object: nothing reported
            continue
        if isinstance(value, numbers.Real):
            spent = float(value) + (spent or 0.0)
    return spent


def _check_spent(est: Any, name: str, epsilon: float | None) -> None:
    if epsilon is None:
        return
    spent = _epsilon_spent(est)
    if spent is not None and spent > epsilon * (1 + 1e-9):
        raise RuntimeError(f"method {name!r} reports spending ε = {spent:g} when given ε = {epsilon:g}: "
                           "its results would be mislabelled; check how its factory passes epsilon "
                           "(and that it does not share an accountant across fits)")


def _make(method: Any, epsilon: float, seed: int) -> Any:
    if hasattr(method, "fit") and not isinstance(method, type):
        from sklearn.base import clone

        est = clone(method)
        params = {"epsilon": epsilon}
        if "random_state" in est.get_params():
            params["random_state"] = seed
        return est.set_params(**params)
    est = method(epsilon, seed)
    if not hasattr(est, "fit") or not hasattr(est, "predict"):
        raise TypeError(f"the factory returned {type(est).__name__}, which has no fit/predict")
    return est


def fit_with_schema(est: Any, X: pd.DataFrame, y: pd.Series, schema: Schema) -> None:
    """``est.fit(X, y)`` with the public ``schema``: an estimator with a ``schema`` parameter left
    at None gets it first (``set_params``), so publishing methods use the declared schema and
    never read one from the data."""
    get_params = getattr(est, "get_params", None)
    if get_params is not None:
        params = get_params(deep=False)
        if "schema" in params and params["schema"] is None:
            est.set_params(schema=schema)
    est.fit(X, y)


class Splits:
    """The train/test indices of each run (holdout or k-fold), recomputed identically anywhere."""

    def __init__(self, frame: pd.DataFrame, schema: Schema, cv: int | None, test_size: float, entropy: int):
        self.frame, self.schema, self.cv, self.test_size, self.entropy = frame, schema, cv, test_size, entropy
        self._cache: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {}

    def folds(self, run: int) -> list[tuple[np.ndarray, np.ndarray]]:
        if run not in self._cache:
            from sklearn.model_selection import StratifiedKFold, train_test_split

            seed = _seed(self.entropy, (0, run))
            y = self.frame[self.schema.target].to_numpy()
            idx = np.arange(len(y))
            if self.cv is None:
                tr, te = train_test_split(idx, test_size=self.test_size, random_state=seed, stratify=y)
                self._cache[run] = [(tr, te)]
            else:
                skf = StratifiedKFold(n_splits=self.cv, shuffle=True, random_state=seed)
                self._cache[run] = list(skf.split(idx, y))
        return self._cache[run]


def _run_task(state: dict, task: tuple[str, int, int]) -> list[tuple]:
    name, e_idx, run = task
    frame, schema, splits, metrics = state["frame"], state["schema"], state["splits"], state["metrics"]
    epsilon = state["epsilons"][e_idx]
    method = state["methods"][name]
    seed = _seed(splits.entropy, (1, _name_key(name), *_epsilon_key(epsilon), run))
    values = {m: [] for m in metrics}
    seconds = 0.0
    for fold, (tr, te) in enumerate(splits.folds(run)):
        X_tr, y_tr = frame.iloc[tr][schema.predictors], frame.iloc[tr][schema.target]
        X_te, y_te = frame.iloc[te][schema.predictors], frame.iloc[te][schema.target]
        est = _make(method, epsilon, _seed(seed, (fold,)) if splits.cv else seed)
        t0 = time.perf_counter()
        fit_with_schema(est, X_tr, y_tr, schema)
        seconds += time.perf_counter() - t0
        _check_spent(est, name, epsilon)
        for m, fn in metrics.items():
            values[m].append(float(fn(est, X_te, y_te)))
    eps_out = state["epsilon_labels"][e_idx]
    return [(name, eps_out, run, m, float(np.mean(v)), seconds) for m, v in values.items()]


_WORKER_STATE: dict | None = None


def _init_worker(state: dict) -> None:
    global _WORKER_STATE
    _WORKER_STATE = state


def _worker(task: tuple[str, int, int]) -> tuple[tuple, list[tuple]]:
    assert _WORKER_STATE is not None
    return task, _run_task(_WORKER_STATE, task)


def _execute(state: dict, tasks: list[tuple[str, int, int]], n_jobs: int, progress: bool,
             desc: str) -> pd.DataFrame:
    from tqdm.auto import tqdm

    results: dict[tuple, list[tuple]] = {}
    bar = tqdm(total=len(tasks), desc=desc, disable=not progress, leave=False)
    try:
        if n_jobs == 1:
            for task in tasks:
                results[task] = _run_task(state, task)
                bar.update()
        else:
            # fork keeps factories that cannot be pickled (lambdas, notebook closures) usable
            methods = multiprocessing.get_all_start_methods()
            ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
            with ProcessPoolExecutor(max_workers=n_jobs, mp_context=ctx, initializer=_init_worker,
                                     initargs=(state,)) as pool:
                futures = [pool.submit(_worker, t) for t in tasks]
                try:
                    for fut in as_completed(futures):
                        task, rows = fut.result()
                        results[task] = rows
                        bar.update()
                except BaseException:
                    for fut in futures:  # a failed task: do not wait for the others to finish
                        fut.cancel()
                    raise
    finally:
        bar.close()
    rows = [r for t in tasks for r in results[t]]  # task order, whatever order they finished in
    out = pd.DataFrame(rows, columns=COLUMNS)
    out["run"] = out["run"].astype(int)
    out.attrs["evaluation"] = EVALUATION_NOTE
    return out


def _prepare(methods, data, repetitions, cv, test_size, metrics, n_jobs, random_state):
    frame, schema = _check_data(data)
    methods = _check_methods(methods)
    repetitions = check_int(repetitions, "repetitions", minimum=1)
    if cv is not None:
        cv = check_int(cv, "cv", minimum=2)
        smallest = int(frame[schema.target].value_counts().min())
        if smallest < cv:
            raise ValueError(f"cv={cv} folds need at least {cv} rows of every class; the rarest has {smallest}")
    else:
        if not (isinstance(test_size, float) and 0.0 < test_size < 1.0):
            raise ValueError(f"test_size must be a fraction in (0, 1), got {test_size!r}")
        smallest = int(frame[schema.target].value_counts().min())
        if smallest < 2:
            raise ValueError("a stratified holdout needs at least 2 rows of every class; the rarest has "
                             f"{smallest}: drop that class or merge it with another")
    metrics = resolve_metrics(metrics)
    if n_jobs is None:
        n_jobs = 1
    n_jobs = check_int(n_jobs, "n_jobs", minimum=1) if n_jobs != -1 else (multiprocessing.cpu_count() or 1)
    entropy = root_entropy(random_state)
    state = {"frame": frame, "schema": schema, "methods": methods, "metrics": metrics,
             "splits": Splits(frame, schema, cv, test_size, entropy)}
    return state, repetitions, n_jobs


def sweep(methods: Mapping[str, Any], data: tuple[pd.DataFrame, Schema], epsilons: Sequence[float],
          repetitions: int = 5, *, cv: int | None = None, test_size: float = 0.2,
          metrics: str | Sequence[str] | Mapping[str, Metric] = "error", n_jobs: int = 1,
          random_state: Any = None, progress: bool = True) -> pd.DataFrame:
    """Fit every method at every ε, ``repetitions`` times; return a tidy utility table.

    Parameters
    ----------
    methods : mapping name → factory(epsilon, random_state) returning an unfitted estimator with
        ``fit``/``predict``, or name → estimator with an ``epsilon`` parameter (cloned, then
        ``set_params(epsilon=..., random_state=...)``). An estimator with a ``schema`` parameter
        left at None gets the public schema (``set_params(schema=...)``) before ``fit(X, y)``, so
        publishing methods never read it from the data.
    data : (frame, schema), e.g. ``load_adult()``.
    epsilons : budgets > 0.
    repetitions : number of runs per (method, ε); run ``r`` uses the same split for every method.
    cv : None (a stratified holdout of ``test_size`` per run) or k (stratified k-fold per run:
        the value is the mean over the folds and ``seconds`` their total).
    metrics : "error" (default), "accuracy", "auc" (binary), a list of them, or a mapping
        name → callable(estimator, X_test, y_test).
    n_jobs : worker processes (1: serial, -1: one per core); the table is identical either way.
    random_state : int seed (reproducible: the same seed gives the same table, serial or
        parallel, except the measured ``seconds``), Generator or None.
    progress : show a tqdm.auto progress bar.

    Returns
    -------
    DataFrame with columns ``method, epsilon, run, metric, value, seconds`` (``seconds``: fit
    time). The evaluation on the test set is not private (``attrs["evaluation"]`` says so).
    Raises ``RuntimeError`` if a fitted method reports spending more than its ε.
    """
    epsilons = _check_epsilons(epsilons)
    if len(set(epsilons)) != len(epsilons):
        raise ValueError(f"epsilons has repeated budgets {epsilons}: list each ε once (use repetitions for more runs)")
    state, repetitions, n_jobs = _prepare(methods, data, repetitions, cv, test_size, metrics,
                                          n_jobs, random_state)
    state["epsilons"] = epsilons
    state["epsilon_labels"] = epsilons
    tasks = [(name, e, r) for name in state["methods"] for e in range(len(epsilons)) for r in range(repetitions)]
    return _execute(state, tasks, n_jobs, progress, "sweep")


# --------------------------------------------------------------------------- baselines
class _Majority:
    """Predicts the most frequent training class (the error any method must beat; costs no ε
    only because it is a reference line, computed non-privately)."""

    def fit(self, X: pd.DataFrame, y: Any) -> "_Majority":
        values, counts = np.unique(np.asarray(y), return_counts=True)
        self.classes_ = values
        self.majority_ = values[np.argmax(counts)]
        self.prior_ = counts / counts.sum()
        return self

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return np.full(len(X), self.majority_, dtype=object if self.classes_.dtype == object else self.classes_.dtype)

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        return np.tile(self.prior_, (len(X), 1))


def majority_factory(epsilon: float | None = None, random_state: Any = None) -> _Majority:
    """Factory of the majority-class baseline (ignores ε)."""
    return _Majority()


def nonprivate_factory(epsilon: float | None = None, random_state: Any = None) -> Any:
    """Factory of the non-private reference: one-hot categories + scaled numbers → logistic
    regression (scikit-learn, no noise; ignores ε)."""
    from sklearn.compose import make_column_selector, make_column_transformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    pre = make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), make_column_selector(dtype_exclude="number")),
        (StandardScaler(), make_column_selector(dtype_include="number")),
    )
    return make_pipeline(pre, LogisticRegression(max_iter=1000))


def baselines(data: tuple[pd.DataFrame, Schema], repetitions: int = 5, *, cv: int | None = None,
              test_size: float = 0.2, metrics: str | Sequence[str] | Mapping[str, Metric] = "error",
              references: Mapping[str, Callable] | None = None, random_state: Any = None,
              progress: bool = False) -> pd.DataFrame:
    """The reference lines of a sweep: majority class and a non-private classifier.

    Same splits as :func:`sweep` with the same ``random_state``, ``repetitions`` and ``cv``;
    same columns, with ``epsilon = inf`` (no privacy). ``references`` replaces the default
    ``{"majority": majority_factory, "non-private": nonprivate_factory}``.
    """
    if references is None:
        references = {"majority": majority_factory, "non-private": nonprivate_factory}
    state, repetitions, _ = _prepare(references, data, repetitions, cv, test_size, metrics, 1, random_state)
    state["epsilons"] = [None]
    state["epsilon_labels"] = [np.inf]
    tasks = [(name, 0, r) for name in state["methods"] for r in range(repetitions)]
    return _execute(state, tasks, 1, progress, "baselines")


# --------------------------------------------------------------------------- summary
def summarise(results: pd.DataFrame) -> pd.DataFrame:
    """Median, quartiles, mean and count of ``value`` (and median ``seconds``) per
    (method, ε, metric): one row per group, ready for an error-band chart."""
    if not isinstance(results, pd.DataFrame) or not set(COLUMNS) <= set(results.columns):
        raise ValueError(f"results must be a DataFrame from sweep() with columns {COLUMNS}")
    if results.empty:
        raise ValueError("results is empty")
    g = results.groupby(["method", "epsilon", "metric"], sort=False)
    out = g["value"].agg(median="median", q25=lambda v: v.quantile(0.25),
                         q75=lambda v: v.quantile(0.75), mean="mean", n="size")
    out["seconds"] = g["seconds"].median()
    return out.reset_index()

