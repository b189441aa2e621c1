"""Releasing the analyst's table: one registered method at ε (a publisher's synthetic table, or a
private model), with a progress bar, on a training part chosen record by record; what each
synthetic column was made from; grid occupancy. The methods offered are the registry's
(:mod:`dpexplore.registry`, tag "tables")."""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from .._validation import CHECK_TABLE_HINT
from ..budget import BudgetAccountant, check_accountant
from ..domain import Schema, class_values, typed_labels
from ..evaluate.fidelity import fidelity_summary
from ..limits import OWN_TABLE_SYNTHETIC_ROWS as MAX_SYNTHETIC_ROWS
from ..registry import MethodSpec, all_methods
from ._common import FEW_RECORDS, FewRecordsWarning, InputError, check_epsilon_range, show
from .draft import built_dropping_rows
from .read import repeated_names

__all__ = ["METHODS", "MAX_SYNTHETIC_ROWS", "DEFAULT_MARGINAL_SHARE", "ReleaseResult", "release",
           "method_name", "column_sources", "grid_occupancy"]

#: share of ε the workflow gives the marginals that shape a synthetic table, for every publisher
#: (a documented extension beyond the papers; 0 = the papers' budget, unmodelled columns uniform).
#: 0.7: PrivPfC's grid choice keeps its accuracy with the rest, and the other publishers'
#: classifiers are fitted on the tables these marginals complete; against 0.5, the 2-way TVD of
#: DiffMulti, DiffGen and the projected histogram fell by up to a quarter at ε = 0.1 and up to a
#: fifth at ε = 1 on Adult, the generated messy table and the customer table (benchmarks/fidelity.py,
#: README "Synthetic tables")
DEFAULT_MARGINAL_SHARE = 0.7

#: Methods offered: registry name (the class name) → :class:`~dpexplore.registry.MethodSpec`, every
#: method the registry tags "tables". A method of your own (e.g. a deliberately broken variant in
#: an audit) may be added as a factory(epsilon, random_state, accountant=None) → (unfitted
#: publisher, keyword arguments of its ``synthetic``); as a registered publisher, it takes the public
#: schema as a parameter (``get_params``/``set_params``: the release sets ``schema`` when it is
#: ``None``) and is fitted as ``fit(X, y)``.
METHODS: dict[str, MethodSpec | Callable] = {spec.name: spec for spec in all_methods(tag="tables")}


def method_name(method: str) -> str:
    """``method`` if it is a key of :data:`METHODS` (the class name), else an :class:`InputError`."""
    if isinstance(method, str) and method in METHODS:
        return method
    raise InputError(f"unknown method {show(method)}: choose one of {', '.join(METHODS)}")


def _build(spec: MethodSpec, schema: Schema, epsilon: float, seed: int, accountant: BudgetAccountant | None,
           marginal_share: float, max_rows: int) -> Any:
    """The unfitted method, with the public schema; a publisher also gets the share of ε for the
    unmodelled columns' marginals and the public cap on its synthetic rows."""
    params: dict[str, Any] = {"epsilon": epsilon, "random_state": seed}
    if accountant is not None:
        params["accountant"] = accountant
    if spec.kind == "publisher":
        params.update(marginal_share=marginal_share, max_synthetic_rows=max_rows)
    return spec.build(schema, **params)


@dataclass
class ReleaseResult:
    """What one release produced: the synthetic table (every declared column, in schema order,
    target in the type it came in), the ledger, how each column was produced and the utility.

    ``utility`` is a NON-PRIVATE evaluation for the data owner (exact test errors on the held-out
    rows): :func:`~dpexplore.tables.export_release` writes it to its own file, labelled so, rounded,
    never into the shareable summary. ``fidelity`` is NON-PRIVATE too, and goes with it: how close the
    synthetic table's shape is to the training part's (mean and largest total-variation distance over
    the schema's public bins, 1-way and 2-way: :func:`~dpexplore.evaluate.fidelity.fidelity_summary`);
    empty for a model or an unevaluated release. No exact row count is kept (``test_fraction`` is the public
    probability with which each row was held out). ``released`` is "synthetic table" for a
    publishing method and "model" for a classifier (e.g. PrivateNaiveBayes): a model releases its
    noisy parameters, held in ``estimator``, and no synthetic rows.
    """

    method: str
    epsilon: float
    synthetic: pd.DataFrame
    ledger: pd.DataFrame
    utility: pd.DataFrame
    leaks: list[str]
    test_fraction: float
    hardened: bool
    seconds: float
    schema: Schema = field(repr=False)
    sources: pd.DataFrame = field(default_factory=pd.DataFrame)
    occupancy: dict = field(default_factory=dict)
    marginal_share: float = 0.0
    estimator: Any = field(default=None, repr=False)
    released: str = "synthetic table"
    fidelity: dict = field(default_factory=dict)


def column_sources(est: Any, schema: Schema, synthetic: pd.DataFrame) -> pd.DataFrame:
    """Per declared column: how the synthetic column was produced ("modelled" by the method,
    "marginal" from a paid DP marginal (given a chosen parent column when ε allows the choice),
    "uniform" over the declared domain, "computed"
    from its source by a derived column's public rule, with no ε, or "left out") and the ε
    behind it when the publisher reports it (``column_sources_``). Without that attribute:
    PrivPfC's columns left at the root of its grid are "uniform"; others "modelled" when
    present."""
    reported = getattr(est, "column_sources_", None)
    rows = []
    grid = getattr(est, "grid_", None)
    for name in schema.predictors:
        src, eps = None, np.nan
        if isinstance(reported, dict) and name in reported:
            entry = reported[name]
            if isinstance(entry, dict):
                src, eps = entry.get("source"), entry.get("epsilon", np.nan)
            elif isinstance(entry, (tuple, list)):
                src, eps = entry[0], (entry[1] if len(entry) > 1 else np.nan)
            else:
                src = str(entry)
        if src is None:
            if name not in synthetic.columns:
                src = "left out"
            elif isinstance(grid, dict) and name in grid:
                src = "modelled" if grid[name] > 0 else "uniform"
            else:
                src = "modelled"
        rows.append({"column": name, "produced by": str(src), "ε": float(eps) if eps is not None else np.nan})
    for name in schema.derived:
        rows.append({"column": name, "produced by": "computed" if name in synthetic.columns else "left out",
                     "ε": 0.0})
    entry = reported.get(schema.target) if isinstance(reported, dict) else None
    eps = entry.get("epsilon", np.nan) if isinstance(entry, dict) else np.nan
    rows.append({"column": schema.target, "produced by": "modelled", "ε": float(eps)})
    return pd.DataFrame(rows)


def grid_occupancy(est: Any) -> dict:
    """Cells of the released histogram and the expected records per cell (n̂ / cells, both
    released values): PrivPfC on a small table picks grids so fine that cells hold < 1 record
    (Su et al. 2018, Alg. 2 line 4). A noisy count n̂ below 0 is shown as 0 (post-processing of
    a released value; ``"clamped"`` says so). Empty dict when the publisher has no single grid."""
    counts, n_hat = getattr(est, "counts_", None), getattr(est, "n_hat_", None)
    if counts is None or n_hat is None or not isinstance(getattr(est, "grid_", None), dict):
        return {}
    cells, shown = int(np.asarray(counts).size), max(float(n_hat), 0.0)
    return {"cells": cells, "n_hat": shown, "records per cell": shown / max(cells, 1), "clamped": float(n_hat) < 0}


def _error(model: Any, X: pd.DataFrame, y: pd.Series) -> float:
    """Test error of ``model`` on (X, y); NaN without a model or test rows (non-private figure)."""
    if model is None or len(X) == 0:
        return float("nan")
    return float(np.mean(np.asarray(model.predict(X)).astype(str) != np.asarray(y).astype(str)))


def _as_declared(synthetic: pd.DataFrame, schema: Schema, like: Any) -> pd.DataFrame:
    """Post-processing: every column in its declared type (:attr:`~dpexplore.domain.Attribute.dtype`):
    integer columns as integers inside their bounds, categories as declared (``[0, 1]`` gives
    0 and 1, not "0" and "1"); derived columns computed from their final source values
    (:meth:`~dpexplore.domain.Attribute.derive`: they agree in every row), the declared columns in
    schema order, the target in the caller's type (int, bool or text: :func:`class_values`)."""
    out = synthetic.copy()
    for name in schema.numeric:
        a = schema[name]
        if a.integer and name in out.columns and pd.api.types.is_numeric_dtype(out[name]):
            out[name] = out[name].round().clip(np.ceil(a.lower), np.floor(a.upper)).astype(np.int64)
    for name in schema.categorical:
        a = schema[name]
        if a.dtype != object and name in out.columns and out[name].astype(str).isin(a.categories).all():
            out[name] = typed_labels(out[name].astype(str), a.categories)
    for name, a in schema.derived.items():
        if a.source in out.columns:
            out[name] = a.derive(out[a.source])
    cols = [c for c in schema.columns + [schema.target] if c in out.columns]
    out = out[cols]
    out[schema.target] = labels_like(out[schema.target], schema, like)
    return out.reset_index(drop=True)


def labels_like(labels: Any, schema: Schema, like: Any) -> np.ndarray:
    """Class labels (any of the schema's classes, as text or in any type) in the type of the
    caller's target column ``like`` (int, bool or text: :func:`class_values`, from its dtype)."""
    values = class_values(schema.classes, like)
    lookup = dict(zip(map(str, schema.classes), values))
    return np.asarray([lookup[str(v)] for v in labels], dtype=values.dtype)


def _no_training_record(test_size: float) -> str:
    return ("the training part holds no record (each row is held out with probability "
            f"{float(test_size):g}) and the publishing methods need at least one: nothing was spent. Use "
            "test_size=0 for a small table")


def _empty_table(schema: Schema) -> str:
    """The refusal of a table with no row (certain, whatever the method: README, "What the package
    refuses"). When :func:`build_schema` built ``schema`` with ``missing="drop-rows"`` (a public
    choice), the message names that rule; it names no column and no count, and says nothing the
    refusal itself does not."""
    if built_dropping_rows(schema):
        return ("the table holds no record: build_schema's missing='drop-rows' rule dropped every row (each "
                "had a missing value, or text in a numeric column, in a kept column; one column missing in "
                "every row is enough). Drop such columns (kind 'drop') or keep fewer, and build again: nothing "
                "was spent. dpexplore.tables.check_table(frame, draft) shows the missing values per column on "
                "your own machine (a non-private diagnosis: do not share its output)")
    return "the table holds no record: load a table with rows (nothing was spent)"


def release(frame: pd.DataFrame, schema: Schema, method: str, epsilon: float, *,
            leaks: Sequence[str] = (), test_size: float = 0.2, random_state: Any = None,
            accountant: BudgetAccountant | None = None, hardened: bool = True,
            evaluate: bool = True, marginal_share: float | None = None,
            max_rows: int = MAX_SYNTHETIC_ROWS, progress: bool = True) -> ReleaseResult:
    """Release a DP synthetic table of ``frame`` (encoded by :func:`build_schema`), or a DP model.

    ``method`` is a key of :data:`METHODS`, the registry's class name ("PrivPfC", "DiffMulti",
    "DiffGen", "ProjectedHistogram", "PrivateNaiveBayes"). A publishing method releases a
    synthetic table; "PrivateNaiveBayes" releases a classifier (its noisy counts, on the schema's
    one-hot encoding) and no synthetic table (``result.released == "model"``).

    **What ε protects:** add/remove one record. Each row is held out for testing independently
    with the public probability ``test_size`` (:func:`dpexplore.datasets.bernoulli_split`), so a
    record changes the training part by at most itself; ``method`` runs on the training part at
    ``epsilon`` (in :data:`EPSILON_RANGE`, else an error: nothing is clamped), spent from
    ``accountant`` or a fresh one; every spend is in ``result.ledger``. ``marginal_share`` (a
    fraction of ε; None: :data:`DEFAULT_MARGINAL_SHARE`, 0.7)
    pays the DP marginals that shape the synthetic table, when the publisher supports it (an
    extension beyond the papers, in the ledger);
    ``max_rows`` caps the synthetic table (public). ``progress`` shows a tqdm.auto bar (split,
    fit, synthesis, evaluation).

    The release's classifier, the majority class and a non-private logistic regression are
    scored on the held-out rows, and a synthetic table's shape is compared with the training
    part's (``result.fidelity``): NOT private (for the data owner only; ``evaluate=False`` skips
    both). ``hardened``: exact discrete noise for every draw. ``random_state``: never publish two
    releases made with the same int seed. Every check runs before anything is spent; bad input
    raises :class:`InputError` (or ``BudgetExceededError``).

    **No refusal reads the private rows.** A tiny table, or a target holding only one of the
    declared classes, is released like any other: the noise is the answer. A
    :class:`FewRecordsWarning` is raised from the release's synthetic row count (a released
    value), never from the table's. Refused are only: a value outside the declared domain
    (missing, unknown category or class, outside the bounds; the message names the column and
    the rule, never the value: :func:`~dpexplore.tables.check_table` shows them on your own
    machine), and a training part with no record, which every publishing method needs: that
    happens with probability test_size^n for n records (an additive δ ≤ test_size^n beyond ε;
    certain for an empty table; with ``test_size=0``, only an empty table).

    Examples
    --------
    >>> from dpexplore import datasets, tables
    >>> frame, schema = datasets.make_synthetic(n_samples=1000, n_numeric=2, n_categorical=2,
    ...                                         random_state=0)
    >>> result = tables.release(frame, schema, "PrivPfC", 1.0, random_state=0, evaluate=False,
    ...                         progress=False)
    >>> bool(result.ledger["charged"].sum() <= 1.0 + 1e-9)
    True
    >>> list(result.synthetic.columns)
    ['num_0', 'num_1', 'cat_0', 'cat_1', 'label']
    """
    from sklearn.pipeline import Pipeline
    from tqdm.auto import tqdm

    from .. import mechanisms
    from .._validation import check_random_state
    from ..datasets import bernoulli_split
    from ..evaluate.sweeps import majority_factory, nonprivate_factory

    method = method_name(method)
    epsilon = check_epsilon_range(epsilon)
    if marginal_share is None:
        marginal_share = DEFAULT_MARGINAL_SHARE
    if (isinstance(test_size, bool) or not isinstance(test_size, (int, float, np.integer, np.floating))
            or not 0.0 <= float(test_size) <= 0.5):
        raise InputError(f"test_size must be a fraction in [0, 0.5] (each row is held out with that "
                         f"probability), got {show(test_size)}")
    if (isinstance(marginal_share, bool) or not isinstance(marginal_share, (int, float, np.integer, np.floating))
            or not 0.0 <= float(marginal_share) < 1.0):
        raise InputError(f"marginal_share must be a fraction of ε in [0, 1), got {show(marginal_share)}")
    if isinstance(max_rows, bool) or not isinstance(max_rows, (int, np.integer)) or max_rows < 1:
        raise InputError(f"max_rows must be a positive whole number (a public cap), got {show(max_rows)}")
    for flag, value in (("hardened", hardened), ("evaluate", evaluate), ("progress", progress)):
        if not isinstance(value, (bool, np.bool_)):
            raise InputError(f"{flag} must be True or False, got {show(value)}")
    if not isinstance(schema, Schema):
        raise InputError(f"schema must be a dpexplore Schema (from build_schema), got {type(schema).__name__}")
    if not isinstance(frame, pd.DataFrame):
        raise InputError(f"the table must be a DataFrame (from build_schema), got {type(frame).__name__}")
    missing = [c for c in schema.predictors + [schema.target] if c not in frame.columns]
    if missing:
        raise InputError(f"the table lacks the schema's column(s) {missing}: encode it with build_schema first")
    twice = repeated_names(frame.columns, schema.columns + [schema.target])
    if twice:   # column names are public: pandas would hand a two-column frame to every check
        raise InputError(f"the table names a column twice ({twice}): keep one of each, e.g. "
                         "frame.loc[:, ~frame.columns.duplicated()], or rename the repeat")
    # no refusal from the number of rows or of classes: either would tell neighbours apart
    like = frame[schema.target]
    data = frame.copy()
    data[schema.target] = like.astype(str)  # int, bool and text targets give the same release
    if len(data) == 0:  # the publishing methods need a record: refused for certain (README)
        raise InputError(_empty_table(schema))
    try:
        schema.validate(data[schema.predictors], data[schema.target])
    except ValueError as exc:  # the column and the rule, never the value
        raise InputError(f"{exc}. Encode the table with build_schema (it clips numbers to the declared "
                         f"bounds) or widen the schema's domain; {CHECK_TABLE_HINT}") from None
    if accountant is not None:
        check_accountant(accountant, InputError).require(epsilon)  # BudgetExceededError now, before anything is spent
    try:
        rng = check_random_state(random_state)
    except TypeError as exc:
        raise InputError(str(exc)) from None
    bar = tqdm(total=4, desc=f"{method} release", disable=not progress, leave=True)
    try:
        bar.set_postfix_str("split")
        X_tr, X_te, y_tr, y_te = bernoulli_split(data, schema, float(test_size), random_state=rng)
        if len(X_tr) == 0:  # probability test_size**n for n records: an additive δ (see the docstring)
            raise InputError(_no_training_record(test_size))
        fit_seed, synthetic_seed = (int(v) for v in rng.integers(0, 2**31 - 1, size=2))
        entry = METHODS[method]
        if isinstance(entry, MethodSpec):
            est = _build(entry, schema, epsilon, fit_seed, accountant, float(marginal_share), int(max_rows))
            syn_kwargs, publishes = dict(entry.synthetic_kwargs), entry.kind == "publisher"
        else:   # a factory of your own: (unfitted publisher, synthetic keyword arguments)
            est, syn_kwargs = (entry(epsilon, fit_seed) if accountant is None
                               else entry(epsilon, fit_seed, accountant=accountant))
            if est.get_params().get("schema") is None:    # the table's public schema, as a registered method's
                est.set_params(schema=schema)
            publishes = True
        bar.update(1)
        bar.set_postfix_str("fit")
        # the release is fitted on labels in the caller's type: its classes_ and predictions keep it
        y_fit = pd.Series(labels_like(y_tr, schema, like), index=y_tr.index, name=y_tr.name)
        t0 = time.perf_counter()
        with mechanisms.hardened_noise(bool(hardened)):  # exact discrete noise for every draw
            est.fit(X_tr, y_fit)
            seconds = time.perf_counter() - t0
            bar.update(1)
            bar.set_postfix_str("synthetic table" if publishes else "no synthetic table (a model)")
            raw = (est.synthetic(random_state=synthetic_seed, **syn_kwargs) if publishes
                   else pd.DataFrame(columns=schema.predictors + [schema.target]))
        synthetic = _as_declared(raw, schema, like)
        if publishes and len(synthetic) < FEW_RECORDS:  # the released size, never the table's
            warnings.warn(f"the release holds {len(synthetic)} synthetic rows: with so few records most of "
                          "what it shows is noise. Collect more rows, or publish nothing", FewRecordsWarning,
                          stacklevel=2)
        bar.update(1)
        bar.set_postfix_str("evaluation")
        rows = [{"model": f"{method} (ε = {epsilon:.3g})", "private": True,
                 "error": _error(est if evaluate else None, X_te, y_te)}]
        references = (("majority class", majority_factory), ("non-private logistic regression", nonprivate_factory))
        for label, ref_factory in references if evaluate else ():
            try:
                ref = ref_factory().fit(X_tr, y_tr)
            except ValueError:  # e.g. one class in the training part: no reference figure
                ref = None
            rows.append({"model": label, "private": False, "error": _error(ref, X_te, y_te)})
        # the synthetic table against the rows it was made from (public bins; reads the real rows)
        shape = (fidelity_summary(X_tr.assign(**{schema.target: y_tr}), synthetic, schema)
                 if evaluate and publishes else {})
        bar.update(1)
        bar.set_postfix_str("done")
    finally:
        bar.close()
    model = est[-1] if isinstance(est, Pipeline) else est   # a pipeline: the encoding, then the model
    return ReleaseResult(method=method, epsilon=epsilon, synthetic=synthetic, ledger=model.ledger_.copy(),
                         leaks=list(leaks),
                         utility=pd.DataFrame(rows if evaluate else [], columns=["model", "private", "error"]),
                         test_fraction=float(test_size), hardened=bool(hardened), seconds=seconds, schema=schema,
                         sources=column_sources(est, schema, synthetic) if publishes else pd.DataFrame(),
                         occupancy=grid_occupancy(est), marginal_share=float(marginal_share), estimator=est,
                         released="synthetic table" if publishes else "model", fidelity=shape)
