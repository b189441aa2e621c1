"""The method showdown: every private classifier of dpexplore on one table, and a verdict computed
from the results ("which one when").

:func:`candidate_methods` lists a factory(epsilon, random_state) per method the registry
(:mod:`dpexplore.registry`) tags "showdown", each built with the public schema and taking the raw
table. :func:`available_methods` fits each one once on a small sample: a method whose optional
package is missing is excluded with the reason; any other failure is an error.
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

from ..domain import Schema, check_schema
from ..exceptions import EmptySyntheticWarning, MethodUnavailableError
from ..models.logistic import PrivateLRClassifier
from ..registry import MethodSpec, all_methods
from .showdown_results import (AVAILABILITY_COLUMNS, HIGHER_IS_BETTER, PEER_COLUMNS, RESULT_COLUMNS,
                               SHOWDOWN_FILES, load_peers, load_showdown, which_one_when)

__all__ = ["candidate_methods", "available_methods", "which_one_when", "PrivateLRClassifier", "HIGHER_IS_BETTER",
           "showdown_sweep", "showdown_tables", "save_showdown", "load_showdown", "load_peers", "SHOWDOWN_FILES",
           "SHOWDOWN_SETTINGS", "RESULT_COLUMNS", "PEER_COLUMNS", "AVAILABILITY_COLUMNS"]


# --------------------------------------------------------------------------- the methods
def _make(spec: MethodSpec, schema: Schema, epsilon: float, random_state: Any) -> Any:
    """One unfitted instance of a registered method, with the public schema (a sweep factory)."""
    return spec.build(schema, epsilon=epsilon, random_state=random_state)


def candidate_methods(schema: Schema) -> dict[str, Callable]:
    """Every method the registry tags "showdown", as display name → factory(epsilon, random_state)
    returning an unfitted estimator that takes the raw table (``fit(X, y)``)."""
    check_schema(schema, taxonomies=False)
    return {spec.display: partial(_make, spec, schema) for spec in all_methods(tag="showdown")}


def available_methods(candidates: Mapping[str, Callable], data: tuple[pd.DataFrame, Schema], *,
                      n_rows: int = 2000, epsilon: float = 1.0, random_state: int = 0
                      ) -> tuple[dict[str, Callable], pd.DataFrame]:
    """Check that each method fits and predicts class labels on a stratified sample of ``n_rows``.

    Returns (the working methods, a table method / status / reason). A method whose declared
    optional package is not installed is excluded, with the reason ("needs …"); any other
    failure raises :class:`~dpexplore.exceptions.MethodUnavailableError` naming the method, with
    the cause chained: a broken method is an error, not a silent skip.
    """
    from ..datasets import train_test_split

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
                # a small sample can leave a synthetic table with one class: the check is about
                # whether the method runs, not how well (every other warning is shown)
                warnings.simplefilter("ignore", EmptySyntheticWarning)
                est = factory(epsilon, random_state)
                est.fit(sample, y)
                pred = np.asarray(est.predict(sample.iloc[:50]))
            if pred.shape != (min(50, n),) or not set(map(str, pred)) <= classes:
                raise ValueError(f"predict returned {pred[:3]!r}..., not class labels")
        except MethodUnavailableError as exc:
            if exc.name is None:       # not a missing optional package: the method is broken
                raise
            rows.append({"method": name, "status": "excluded", "reason": str(exc)[:200]})
            continue
        except Exception as exc:
            raise MethodUnavailableError(f"{name} failed the availability check (fit and predict on {n} rows): "
                                         f"{type(exc).__name__}: {exc}") from exc
        ok[name] = factory
        rows.append({"method": name, "status": "included", "reason": ""})
    return ok, pd.DataFrame(rows, columns=["method", "status", "reason"])


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
    return out, pd.concat(availability, ignore_index=True)[AVAILABILITY_COLUMNS]


def save_showdown(results: pd.DataFrame, availability: pd.DataFrame, directory: str | Path,
                  settings: Mapping[str, Any]) -> dict:
    """Write :func:`showdown_sweep`'s tables to ``directory`` (:data:`SHOWDOWN_FILES`) with a JSON
    sidecar: ``settings`` (ε grid, repetitions, seed, … and whatever the caller adds, e.g. the
    commit), the versions of the packages that produced it and the table shapes. Returns the
    sidecar's content."""
    import platform
    import sklearn

    from .._version import __version__

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
    availability[AVAILABILITY_COLUMNS].to_csv(directory / SHOWDOWN_FILES["availability"], index=False)
    (directory / SHOWDOWN_FILES["meta"]).write_text(json.dumps(meta, indent=2, default=str) + "\n")
    return meta
