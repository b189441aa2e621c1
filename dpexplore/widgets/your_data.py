"""Bring your own table: load a CSV, declare its public schema, release a DP synthetic table.

The path of an analyst with a table dpexplore has never seen:

1. :func:`read_table` — a path or the bytes of an upload → a DataFrame (readable errors for
   files that are not CSV);
2. :func:`check_table` — missing values, a target with one class → readable errors;
3. :func:`draft_schema` — a first schema read from the data (:meth:`Schema.from_frame`), one
   editable row per column, every value marked "from data": those values leak, and the
   :class:`~dpexplore.domain.PrivacyLeakWarning` is emitted (and shown by the app) until the
   analyst declares them;
4. :func:`build_schema` — the reviewed rows → a :class:`~dpexplore.domain.Schema` (numeric
   taxonomies by equal-width nesting over the declared bounds). **Numbers outside the declared
   bounds are clipped** to them (a data-independent transformation, so it costs no ε; integer
   columns are rounded, then clipped); categorical values and classes outside the declared lists
   are **rejected** (an error naming them). Rows still marked "from data" emit a
   :class:`PrivacyLeakWarning` and are listed in the summary;
5. :func:`release` — one publishing method at ε on a training part chosen row by row
   (Bernoulli, so ε holds for add/remove-one-record neighbours), with hardened (exact discrete)
   noise; the release's classifier is scored on the held-out rows (a non-private evaluation,
   for the data owner only);
6. :func:`summary_markdown` / :func:`synthetic_csv` — the one-page summary (with the budget
   ledger) and the table.

:class:`YourDataApp` puts these behind ipywidgets. Every user mistake is a :class:`InputError`
(a ``ValueError``) with a message, caught by the app and shown as text; nothing is released then,
and every check runs before the method is fitted, so no ε is spent either.
"""
from __future__ import annotations

import base64
import csv
import html
import io
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..budget import BudgetAccountant, BudgetExceededError
from ..domain import Attribute, PrivacyLeakWarning, Schema, Taxonomy

__all__ = ["InputError", "read_table", "check_table", "draft_schema", "build_schema", "METHODS",
           "release", "ReleaseResult", "ledger_table", "summary_markdown", "synthetic_csv", "YourDataApp"]

CSV_SUFFIXES = (".csv", ".txt", ".tsv")


class InputError(ValueError):
    """A problem with the analyst's input, explained in words (shown instead of a traceback)."""


# --------------------------------------------------------------------------- 1. reading
def read_table(source: Any, name: str | None = None) -> pd.DataFrame:
    """Read a CSV from a path, from bytes (with its file ``name``) or from a FileUpload value.

    Raises :class:`InputError` for a missing file, a name that does not end in .csv/.txt/.tsv,
    bytes that are not text, a file with no rows or with fewer than two columns.
    """
    if isinstance(source, (tuple, list)) and source and isinstance(source[0], Mapping):
        source = source[0]  # ipywidgets 8 FileUpload.value: a tuple of dicts
    if isinstance(source, Mapping) and "content" not in source and len(source) == 1:
        (key, inner), = source.items()  # ipywidgets 7 FileUpload.value: {name: {"metadata", "content"}}
        if isinstance(inner, Mapping) and "content" in inner:
            source = {"name": key, **inner}
    if isinstance(source, Mapping):
        if "content" not in source:
            raise InputError("the upload has no content: choose a file again")
        name = source.get("name", name)
        source = bytes(source["content"])
    if isinstance(source, (str, Path)):
        path = Path(source).expanduser()
        if not path.is_file():
            raise InputError(f"no file at {str(source)!r}: check the path")
        name = name or path.name
        try:
            content = path.read_bytes()
        except OSError as exc:
            raise InputError(f"cannot read {str(source)!r}: {exc.strerror or exc}") from None
    elif isinstance(source, (bytes, bytearray, memoryview)):
        content = bytes(source)
    else:
        raise InputError(f"cannot read a table from a {type(source).__name__}: give a path or upload a CSV file")
    if name is not None and not str(name).lower().endswith(CSV_SUFFIXES):
        raise InputError(f"{name!r} is not a CSV file (expected a name ending in .csv): "
                         "export your table as comma-separated values first")
    if not content.strip():
        raise InputError(f"{name or 'the file'} is empty")
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"{name or 'the file'} is not a text CSV (it looks binary: a spreadsheet "
                         "or an archive?). Save it as CSV, UTF-8.") from None
    if "\x00" in text:
        raise InputError(f"{name or 'the file'} is not a text CSV (it contains binary data)")
    try:  # comma, semicolon, tab or bar; a single column has none of them
        sep = csv.Sniffer().sniff(text[:20_000], delimiters=",;\t|").delimiter
    except csv.Error:
        sep = ","
    try:
        frame = pd.read_csv(io.StringIO(text), sep=sep, skipinitialspace=True)
    except (ValueError, csv.Error) as exc:  # ParserError and EmptyDataError are ValueErrors
        raise InputError(f"{name or 'the file'} could not be read as CSV: {str(exc).strip()}") from None
    if frame.shape[1] < 2:
        raise InputError(f"{name or 'the file'} has {frame.shape[1]} column: a table needs a target "
                         "and at least one predictor (is the separator a comma?)")
    if len(frame) == 0:
        raise InputError(f"{name or 'the file'} has a header but no rows")
    frame.columns = [str(c).strip() for c in frame.columns]
    if len(set(frame.columns)) != frame.shape[1]:
        raise InputError("column names must be distinct")
    return frame


# --------------------------------------------------------------------------- 2. checks
def check_table(frame: pd.DataFrame, target: str) -> None:
    """Refuse a table dpexplore cannot release from: missing values, an unknown or one-class target."""
    if not isinstance(frame, pd.DataFrame) or frame.empty:
        raise InputError("the table is empty")
    if target not in frame.columns:
        raise InputError(f"target {target!r} is not a column: choose one of {list(frame.columns)}")
    missing = frame.isna().sum()
    missing = missing[missing > 0]
    if len(missing):
        where = ", ".join(f"{c!r} ({n} row{'s' if n > 1 else ''})" for c, n in missing.items())
        raise InputError(f"missing values in {where}. dpexplore does not guess them: remove or "
                         "fill those rows (with a rule that does not look at the other rows) and load again")
    if frame[target].nunique() < 2:
        raise InputError(f"the target {target!r} has a single class ({frame[target].iloc[0]!r}): "
                         "there is nothing to classify. Choose another target column")
    if frame.shape[1] < 2:
        raise InputError("the table needs at least one predictor besides the target")


# --------------------------------------------------------------------------- 3. draft schema
DRAFT_COLUMNS = ["column", "kind", "lower", "upper", "integer", "categories", "from_data"]


def draft_schema(frame: pd.DataFrame, target: str, categorical: Sequence[str] | None = None
                 ) -> tuple[pd.DataFrame, list[str]]:
    """A first schema read from the data, as an editable table, and the leak warnings it raised.

    One row per column (target last, its categories = the classes). ``from_data`` is True for
    every row: the bounds, categories and classes were read from the private table
    (:meth:`Schema.from_frame` emits a :class:`PrivacyLeakWarning`; it is re-emitted to the
    caller and also returned as text).
    """
    check_table(frame, target)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyLeakWarning)
        schema = Schema.from_frame(frame, target, categorical=categorical)
    leaks = [str(w.message) for w in caught if issubclass(w.category, PrivacyLeakWarning)]
    for text in leaks:
        warnings.warn(text, PrivacyLeakWarning, stacklevel=2)
    rows = []
    for name in schema.predictors:
        a = schema[name]
        if a.kind == "numeric":
            rows.append([name, "numeric", a.lower, a.upper, bool(a.integer), "", True])
        else:
            rows.append([name, "categorical", np.nan, np.nan, False, ", ".join(map(str, a.categories)), True])
    rows.append([target, "target", np.nan, np.nan, False, ", ".join(map(str, schema.classes)), True])
    return pd.DataFrame(rows, columns=DRAFT_COLUMNS), leaks


def _split_list(text: Any) -> list[str]:
    if isinstance(text, (list, tuple)):
        return [str(t).strip() for t in text if str(t).strip()]
    return [t.strip() for t in str(text).split(",") if t.strip()]


def build_schema(frame: pd.DataFrame, draft: pd.DataFrame, fanouts: Sequence[int] = (2, 2, 2)
                 ) -> tuple[Schema, pd.DataFrame, list[str]]:
    """Turn a reviewed draft into a Schema and the table encoded to it.

    Numeric columns get an equal-width taxonomy over the declared [lower, upper] and their values
    are clipped to those bounds (integer columns: rounded, then clipped to the integers inside
    them); categorical columns and the target become strings that must all be among the declared
    categories (otherwise :class:`InputError`). Returns (schema, encoded copy of the table, leak
    notes: one per row still marked ``from_data``); when there are leak notes a
    :class:`PrivacyLeakWarning` listing them is emitted. Raises :class:`InputError` with the
    column's name.
    """
    if not isinstance(draft, pd.DataFrame) or not set(DRAFT_COLUMNS) <= set(draft.columns):
        raise InputError(f"the schema table needs the columns {DRAFT_COLUMNS}")
    targets = draft[draft["kind"] == "target"]
    if len(targets) != 1:
        raise InputError("mark exactly one column as the target")
    target = str(targets["column"].iloc[0])
    check_table(frame, target)
    out = frame.copy()
    attrs, leaks = [], []
    for row in draft.itertuples(index=False):
        name, kind = str(row.column), str(row.kind)
        if name not in frame.columns:
            raise InputError(f"the schema names a column {name!r} that the table does not have")
        if bool(row.from_data) and kind != "drop":  # a dropped column's domain is not used
            what = {"numeric": "bounds", "categorical": "categories", "target": "classes"}.get(kind, "domain")
            leaks.append(f"{name}: {what} taken from the data")
        if kind == "numeric":
            values = pd.to_numeric(frame[name], errors="coerce")
            bad = frame[name][values.isna()]
            if len(bad):
                raise InputError(f"column {name!r} is declared numeric but has non-numeric values such as "
                                 f"{bad.iloc[0]!r}: declare it categorical or fix the file")
            try:
                lower, upper = float(row.lower), float(row.upper)
            except (TypeError, ValueError):
                raise InputError(f"column {name!r}: give numbers for the lower and upper bounds") from None
            if not (np.isfinite(lower) and np.isfinite(upper) and lower < upper):
                raise InputError(f"column {name!r}: the public bounds need lower < upper, got [{lower}, {upper}]")
            integer = bool(row.integer)
            try:
                taxonomy = Taxonomy.equal_width(name, lower, upper, fanouts)
            except ValueError as exc:
                raise InputError(f"column {name!r}: {exc}") from None
            attrs.append(Attribute.numeric(name, lower, upper, taxonomy, integer=integer))
            if integer:
                lo, hi = np.ceil(lower), np.floor(upper)
                if lo > hi:
                    raise InputError(f"column {name!r} is declared integer but no integer lies in "
                                     f"[{lower:g}, {upper:g}]: widen the bounds or untick 'integer'")
                out[name] = values.round().clip(lo, hi).astype(np.int64)
            else:
                out[name] = values.clip(lower, upper).astype(float)
        elif kind in ("categorical", "target"):
            cats = _split_list(row.categories)
            if len(cats) != len(set(cats)):
                raise InputError(f"column {name!r}: the categories must be distinct")
            if kind == "target" and len(cats) < 2:
                raise InputError(f"target {name!r}: declare at least two classes")
            if not cats:
                raise InputError(f"column {name!r}: declare its categories (comma-separated)")
            values = frame[name].astype(str).str.strip()
            unknown = sorted(set(values) - set(cats))
            if unknown:
                raise InputError(f"column {name!r} has values {unknown[:5]} that are not among its declared "
                                 f"{'classes' if kind == 'target' else 'categories'}: add them to the list")
            out[name] = values
            if kind == "categorical":
                attrs.append(Attribute.categorical(name, cats))
            else:
                classes = cats
        elif kind == "drop":
            out = out.drop(columns=name)
        else:
            raise InputError(f"column {name!r}: kind must be numeric, categorical, target or drop, got {kind!r}")
    if not attrs:
        raise InputError("keep at least one predictor (all columns are dropped)")
    try:
        schema = Schema(attrs, target, classes)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    if out[target].nunique() < 2:
        raise InputError(f"the target {target!r} has a single class: nothing to classify")
    if leaks:
        warnings.warn("the public schema still uses domains read from the private data, which no ε "
                      "pays for: " + "; ".join(leaks) + ". Declare them (or tick 'public') if they are "
                      "public knowledge.", PrivacyLeakWarning, stacklevel=2)
    return schema, out[schema.predictors + [target]], leaks


# --------------------------------------------------------------------------- 5. release
def _privpfc(eps: float, rs: Any, accountant: Any = None):
    from ..publish.privpfc import PrivPfC

    return PrivPfC(eps, theta=10_000, random_state=rs, accountant=accountant), {"values": "sampled"}


def _diffmulti(eps: float, rs: Any, accountant: Any = None):
    from ..publish.diffmulti import DiffMulti

    return DiffMulti(eps, random_state=rs, accountant=accountant), {"values": "sampled"}


def _diffgen(eps: float, rs: Any, accountant: Any = None):
    from ..publish.diffgen import DiffGen

    return DiffGen(eps, random_state=rs, accountant=accountant), {"values": "sampled"}


def _projected(eps: float, rs: Any, accountant: Any = None):
    from ..publish.projected import ProjectedHistogram

    return ProjectedHistogram(eps, random_state=rs, accountant=accountant), {}


#: Publishing methods offered: name → factory(epsilon, random_state, accountant=None) →
#: (unfitted release, keyword arguments of its ``synthetic``).
METHODS: dict[str, Callable] = {"PrivPfC": _privpfc, "DiffMulti": _diffmulti, "DiffGen": _diffgen,
                                "Projected histogram": _projected}


#: fewest rows a release accepts: with each row held out with probability ≤ 0.5, the training
#: part is empty with probability ≤ 0.5**MIN_ROWS (< 1e-9), the only post-split refusal
MIN_ROWS = 30


@dataclass
class ReleaseResult:
    """What one release produced: the synthetic table, the ledger and the utility figures.

    ``utility`` is a non-private evaluation for the data owner; no exact row count is kept
    (``test_fraction`` is the public probability with which each row was held out).
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


def release(frame: pd.DataFrame, schema: Schema, method: str, epsilon: float, *,
            leaks: Sequence[str] = (), test_size: float = 0.2, random_state: Any = None,
            accountant: BudgetAccountant | None = None, hardened: bool = True,
            evaluate: bool = True) -> ReleaseResult:
    """Release a DP synthetic table of ``frame`` (already encoded by :func:`build_schema`).

    **What ε protects:** the release is ε-DP for *add/remove one record* neighbours (the table
    with or without any one row). Each row is held out for testing independently with the public
    probability ``test_size`` (:func:`dpexplore.datasets.bernoulli_split`, seeded from the
    release's Generator), so adding or removing a record changes the training part by at most
    that record; ``method`` runs on the training part at ``epsilon`` (spent from ``accountant``,
    or a fresh one; every spend is in ``result.ledger``) and gives the synthetic table.
    ``test_size=0`` fits on the whole table (no utility check). A fixed-size or stratified split
    would make one added record *replace* a training row (a substitution: 2ε).
    The classes, domains and bounds come from ``schema``: a class with no training row is still
    released (the publishers use the schema's classes). The only refusal after the split is an
    empty training part, probability ``test_size**n`` ≤ 0.5**30 (an additive δ, documented).

    The release's own classifier, the majority class and a non-private logistic regression are
    scored on the held-out rows: that evaluation is NOT private (it is for the data owner, not
    for publication). ``evaluate=False`` skips it (``result.utility`` is then empty).

    ``hardened`` (default True): every Laplace/geometric draw of the method uses the exact
    discrete sampler (:func:`dpexplore.mechanisms.hardened_noise`, immune to the Mironov 2012
    floating-point attack). ``random_state``: int seed, Generator or None (fresh entropy, the
    right choice for private data). Never publish two releases made with the same int seed:
    their noise is then correlated (the true counts follow from two releases at different ε).
    To make several reproducible releases, pass one Generator (as the app does).
    Every check (method, ε, schema, size, budget) runs before anything is spent; bad input
    raises :class:`InputError` (or ``BudgetExceededError``).
    """
    from .. import mechanisms
    from .._validation import check_epsilon, check_random_state
    from ..datasets import bernoulli_split
    from ..evaluate.sweeps import majority_factory, nonprivate_factory

    if method not in METHODS:
        raise InputError(f"unknown method {method!r}: choose one of {list(METHODS)}")
    try:
        epsilon = check_epsilon(epsilon)
    except (TypeError, ValueError) as exc:
        raise InputError(str(exc)) from None
    if (isinstance(test_size, bool) or not isinstance(test_size, (int, float, np.integer, np.floating))
            or not 0.0 <= float(test_size) <= 0.5):
        raise InputError(f"test_size must be a fraction in [0, 0.5] (each row is held out with that "
                         f"probability), got {test_size!r}")
    for flag, value in (("hardened", hardened), ("evaluate", evaluate)):
        if not isinstance(value, (bool, np.bool_)):
            raise InputError(f"{flag} must be True or False, got {value!r}")
    if not isinstance(schema, Schema):
        raise InputError(f"schema must be a dpexplore Schema (from build_schema), got {type(schema).__name__}")
    if not isinstance(frame, pd.DataFrame):
        raise InputError(f"the table must be a DataFrame (from build_schema), got {type(frame).__name__}")
    missing = [c for c in schema.predictors + [schema.target] if c not in frame.columns]
    if missing:
        raise InputError(f"the table lacks the schema's column(s) {missing}: encode it with build_schema first")
    if len(frame) < MIN_ROWS:
        raise InputError(f"the table has too few rows for a release (at least {MIN_ROWS} are needed): "
                         "add rows, or publish nothing")
    if frame[schema.target].nunique() < 2:
        raise InputError(f"the target {schema.target!r} has a single class: nothing to classify. "
                         "Choose another target column")
    try:
        schema.validate(frame[schema.predictors], frame[schema.target])
    except ValueError as exc:
        raise InputError(f"{exc}. Encode the table with build_schema (it clips numbers to the declared "
                         "bounds) or widen the schema's domain") from None
    if accountant is not None:
        if not isinstance(accountant, BudgetAccountant):
            raise InputError(f"accountant must be a BudgetAccountant, got {type(accountant).__name__}")
        accountant.require(epsilon)  # BudgetExceededError now, before anything is spent
    try:
        rng = check_random_state(random_state)
    except TypeError as exc:
        raise InputError(str(exc)) from None
    # per-record (Bernoulli) membership: add/remove one record ↔ add/remove at most one training row
    X_tr, X_te, y_tr, y_te = bernoulli_split(frame, schema, float(test_size), random_state=rng)
    if len(X_tr) == 0:  # probability test_size**n ≤ 0.5**MIN_ROWS: the δ of the docstring
        raise InputError("every row was drawn into the held-out part (an event of probability "
                         f"{float(test_size)}^n): release again, or use test_size=0")
    fit_seed, synthetic_seed = (int(v) for v in rng.integers(0, 2**31 - 1, size=2))
    factory = METHODS[method]
    est, syn_kwargs = factory(epsilon, fit_seed) if accountant is None else factory(epsilon, fit_seed,
                                                                                      accountant=accountant)
    t0 = time.perf_counter()
    with mechanisms.hardened_noise(bool(hardened)):  # exact discrete noise for every draw of the method
        est.fit(X_tr, y_tr, schema=schema)
        seconds = time.perf_counter() - t0
        synthetic = _as_declared(est.synthetic(random_state=synthetic_seed, **syn_kwargs), schema)
    rows = [{"model": f"{method} (ε = {epsilon:g})", "private": True,
             "error": _error(est if evaluate else None, X_te, y_te)}]
    references = (("majority class", majority_factory), ("non-private logistic regression", nonprivate_factory))
    for label, ref_factory in references if evaluate else ():
        try:
            ref = ref_factory().fit(X_tr, y_tr)
        except ValueError:  # e.g. one class in the training part: no reference figure
            ref = None
        rows.append({"model": label, "private": False, "error": _error(ref, X_te, y_te)})
    return ReleaseResult(method=method, epsilon=epsilon, synthetic=synthetic.reset_index(drop=True),
                         ledger=est.ledger_.copy(), leaks=list(leaks),
                         utility=pd.DataFrame(rows if evaluate else [], columns=["model", "private", "error"]),
                         test_fraction=float(test_size), hardened=bool(hardened), seconds=seconds,
                         schema=schema)


def _error(model: Any, X: pd.DataFrame, y: pd.Series) -> float:
    """Test error of ``model`` on (X, y); NaN without a model or test rows (non-private figure)."""
    if model is None or len(X) == 0:
        return float("nan")
    return float(np.mean(np.asarray(model.predict(X)).astype(str) != np.asarray(y).astype(str)))


def _as_declared(synthetic: pd.DataFrame, schema: Schema) -> pd.DataFrame:
    """Post-processing: integer columns of the schema come back as integers inside their bounds."""
    out = synthetic.copy()
    for name in schema.numeric:
        a = schema[name]
        if a.integer and name in out.columns and pd.api.types.is_numeric_dtype(out[name]):
            out[name] = out[name].round().clip(np.ceil(a.lower), np.floor(a.upper)).astype(np.int64)
    return out


# --------------------------------------------------------------------------- 6. outputs
def synthetic_csv(result: ReleaseResult) -> bytes:
    """The synthetic table as UTF-8 CSV bytes."""
    return result.synthetic.to_csv(index=False).encode("utf-8")


def _md_table(frame: pd.DataFrame) -> str:
    cols = list(frame.columns)
    lines = ["| " + " | ".join(map(str, cols)) + " |", "|" + "---|" * len(cols)]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in row) + " |")
    return "\n".join(lines)


def ledger_table(ledger: pd.DataFrame) -> pd.DataFrame:
    """The ledger per label (methods that spend per split or per node record hundreds of rows):
    label, number of spends, ε charged; a last row with the total."""
    if ledger.empty:
        return pd.DataFrame({"spent on": ["total"], "spends": [0], "ε charged": [0.0]})
    g = ledger.groupby("label", sort=False)["charged"]
    out = pd.DataFrame({"spent on": g.size().index, "spends": g.size().to_numpy(), "ε charged": g.sum().to_numpy()})
    total = pd.DataFrame({"spent on": ["total"], "spends": [len(ledger)], "ε charged": [ledger["charged"].sum()]})
    return pd.concat([out, total], ignore_index=True)


def summary_markdown(result: ReleaseResult, title: str = "Your data") -> str:
    """One page: what was released, the ε ledger (per label), the utility, and the privacy caveats."""
    s = result.schema
    parts = [f"# {title}: differentially private release", "",
             f"- Method: **{result.method}**, total budget **ε = {result.epsilon:g}** "
             f"(spent {result.ledger['charged'].sum():.4g})",
             f"- Target: `{s.target}` with classes {', '.join(map(str, s.classes))}",
             f"- Predictors: {len(s.predictors)} ({len(s.numeric)} numeric, {len(s.categorical)} categorical)",
             f"- What ε protects: **add/remove one record** (the table with or without any one row). "
             f"Each row was held out for testing independently with probability {result.test_fraction:g}, "
             "so one record changes the training part by at most itself",
             f"- Noise: {'exact discrete (hardened) sampler' if result.hardened else 'textbook floating-point sampler'}",
             f"- Synthetic rows released: {len(result.synthetic)} (no exact row count of the private table "
             "is printed: it is not covered by ε)",
             f"- Fit time: {result.seconds:.2f} s", "",
             "## Budget ledger", "", _md_table(ledger_table(result.ledger)), "",
             "## Utility (test error on the held-out rows; not private: for the data owner only, "
             "do not publish this section)", "",
             _md_table(result.utility), "",
             "## Public schema", ""]
    rows = []
    for name in s.predictors:
        a = s[name]
        dom = f"[{a.lower:g}, {a.upper:g}]" if a.kind == "numeric" else ", ".join(map(str, a.categories))
        rows.append({"column": name, "kind": a.kind, "domain": dom})
    parts += [_md_table(pd.DataFrame(rows)), "",
              "Numeric values outside their declared bounds were clipped to them before the release "
              "(categorical values outside their declared lists are refused).", ""]
    if result.leaks:
        parts += ["## ⚠ PrivacyLeakWarning", "",
                  "These parts of the schema were read from the private data and are not covered by ε. "
                  "The guarantee holds only if they are public knowledge:", ""]
        parts += [f"- {leak}" for leak in result.leaks]
    else:
        parts += ["Every bound, category and class was declared as public knowledge."]
    return "\n".join(parts) + "\n"


def _download_link(data: bytes, filename: str, label: str, mime: str) -> str:
    b64 = base64.b64encode(data).decode("ascii")
    return (f'<a download="{html.escape(filename)}" href="data:{mime};base64,{b64}" '
            f'style="margin-right:1.5em">⬇ {html.escape(label)}</a>')


# --------------------------------------------------------------------------- the app
class YourDataApp:
    """ipywidgets front end of the path above; ``.widget`` is the box to display.

    Widgets: a FileUpload and a path box (+ "Load"), the target dropdown, one row per column to
    review its public domain (kind, bounds, categories, and a "public" tick that clears its
    leak flag), the method, ε (log slider), "Release", then messages, the utility table, the
    ledger and two download links. Errors are shown as text in ``messages``; on an error nothing
    is released and nothing is spent.

    ``random_state`` (default None: fresh OS entropy) seeds one Generator for the whole session;
    later releases draw fresh noise from it. Never fix a seed for private data you publish: two
    apps with the same seed draw the same noise, and two releases at ε = 1 and ε = 2 with shared
    noise give back the true counts (2·n̂₂ − n̂₁ = n). A seed is for tests and demos only. ``accountant`` (optional) is a session budget that every release spends from; a
    release it cannot pay for is refused with a message.
    """

    def __init__(self, path: str | None = None, epsilon: float = 1.0, method: str = "PrivPfC",
                 random_state: Any = None, accountant: BudgetAccountant | None = None):
        import ipywidgets as W

        from .._validation import check_random_state

        if accountant is not None and not isinstance(accountant, BudgetAccountant):
            raise TypeError(f"accountant must be a BudgetAccountant, got {type(accountant).__name__}")
        self._W = W
        self.random_state = random_state
        self.accountant = accountant
        self._rng = check_random_state(random_state)
        self.frame: pd.DataFrame | None = None
        self.result: ReleaseResult | None = None
        self.last_error: str | None = None
        self.leak_messages: list[str] = []
        self._rows: dict[str, dict[str, Any]] = {}
        style = {"description_width": "initial"}
        self.upload = W.FileUpload(accept=".csv,.txt,.tsv", multiple=False, description="Upload CSV")
        self.path = W.Text(value=path or "", placeholder="or a path, e.g. my_table.csv", description="Path",
                           layout=W.Layout(width="28em"))
        self.load_button = W.Button(description="Load", button_style="primary")
        self.target = W.Dropdown(options=[], description="Target", style=style)
        self.schema_box = W.VBox()
        self.method = W.Dropdown(options=list(METHODS), value=method, description="Method", style=style)
        self.epsilon = W.FloatLogSlider(value=epsilon, base=10, min=-2, max=1, step=0.1, description="ε",
                                        continuous_update=False, readout_format=".2g")
        self.release_button = W.Button(description="Release", button_style="success", disabled=True)
        self.messages = W.HTML()
        self.results = W.Output()
        self.downloads = W.HTML()
        self.upload.observe(self._on_upload, names="value")
        self.load_button.on_click(self._on_load_click)
        self.target.observe(lambda ch: self._new_target(), names="value")
        self.release_button.on_click(lambda b: self.release())
        self.widget = W.VBox([
            W.HTML("<b>1. Your table</b>"), W.HBox([self.upload, self.path, self.load_button]),
            W.HTML("<b>2. Target and public schema</b> (tick <i>public</i> once a domain is "
                   "something you would know without the data)"),
            self.target, self.schema_box,
            W.HTML("<b>3. Method and budget</b>"), W.HBox([self.method, self.epsilon, self.release_button]),
            self.messages, self.results, self.downloads])

    # ------------------------------------------------------------------ messages
    def _error(self, text: str) -> None:
        self.last_error = text
        self.messages.value = f'<div style="color:#b00020">✖ {html.escape(text)}</div>'

    def _info(self, text: str, warn: Sequence[str] = ()) -> None:
        self.last_error = None
        body = f"<div>✔ {html.escape(text)}</div>"
        if warn:
            body += ('<div style="color:#a15c00">⚠ PrivacyLeakWarning: '
                     + "; ".join(html.escape(w) for w in warn) + "</div>")
        self.messages.value = body

    def _clear_release(self) -> None:
        self.result = None
        self.downloads.value = ""
        self.results.clear_output()

    def _on_upload(self, change: Mapping) -> None:
        if change["new"]:  # clearing the upload is not a new file
            self.load(change["new"])

    def _on_load_click(self, _button: Any = None) -> None:
        path = self.path.value.strip()  # the path box, when filled, is what "Load" means
        self.load(path if path else None)

    # ------------------------------------------------------------------ steps
    def load(self, source: Any = None, name: str | None = None) -> bool:
        """Read ``source`` (or the upload, or the path box); fill the target dropdown."""
        self._clear_release()
        self.release_button.disabled = True
        try:
            if source is None:
                source = self.upload.value if self.upload.value else self.path.value.strip()
                if not source:
                    raise InputError("upload a CSV file or type a path first")
            frame = read_table(source, name)
        except Exception as exc:  # noqa: BLE001 - any failure is a message, never a traceback
            self.frame = None
            self._rows = {}
            self.target.unobserve_all("value")
            self.target.options = []
            self.target.observe(lambda ch: self._new_target(), names="value")
            self.schema_box.children = ()
            self._error(str(exc) if isinstance(exc, InputError) else
                        f"the file could not be read: {type(exc).__name__}: {exc}")
            return False
        self.frame = frame
        cols = list(frame.columns)
        self.target.unobserve_all("value")
        self.target.options = cols
        self.target.value = cols[-1]
        self.target.observe(lambda ch: self._new_target(), names="value")
        return self._new_target()

    def _new_target(self) -> bool:
        self._clear_release()
        self.release_button.disabled = True
        if self.frame is None or self.target.value is None:
            return False
        try:
            with warnings.catch_warnings(record=True) as caught:  # shown in the app, not on stderr
                warnings.simplefilter("always", PrivacyLeakWarning)
                draft, _ = draft_schema(self.frame, self.target.value)
        except Exception as exc:  # noqa: BLE001 - a message, never a traceback
            self._rows = {}
            self.schema_box.children = ()
            self._error(str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}")
            return False
        self._build_rows(draft)
        self.release_button.disabled = False
        leaks = [str(w.message) for w in caught if issubclass(w.category, PrivacyLeakWarning)]
        self._info(f"{len(self.frame)} rows × {self.frame.shape[1]} columns loaded; review the schema below.",
                   warn=[f"{len(self.leak_rows())} domain(s) were read from the data "
                         f"({', '.join(self.leak_rows())}), marked ⚠ from data below"] + leaks)
        return True

    def _build_rows(self, draft: pd.DataFrame) -> None:
        W = self._W
        self._rows = {}
        children = [W.HTML("<small>column · kind · lower · upper · integer · categories / classes · "
                           "public?</small>")]
        for r in draft.itertuples(index=False):
            kind = W.Dropdown(options=["target"] if r.kind == "target" else ["numeric", "categorical", "drop"],
                              value=r.kind, layout=W.Layout(width="9em"))
            lower = W.FloatText(value=0.0 if pd.isna(r.lower) else float(r.lower), layout=W.Layout(width="7em"))
            upper = W.FloatText(value=1.0 if pd.isna(r.upper) else float(r.upper), layout=W.Layout(width="7em"))
            integer = W.Checkbox(value=bool(r.integer), indent=False, layout=W.Layout(width="3em"))
            cats = W.Text(value=str(r.categories), layout=W.Layout(width="22em"))
            public = W.Checkbox(value=not r.from_data, indent=False, layout=W.Layout(width="3em"))
            flag = W.HTML(layout=W.Layout(width="12em"))
            row = {"kind": kind, "lower": lower, "upper": upper, "integer": integer, "categories": cats,
                   "public": public, "flag": flag}
            self._rows[str(r.column)] = row

            def refresh(_=None, row=row):
                numeric = row["kind"].value == "numeric"
                for k in ("lower", "upper", "integer"):
                    row[k].disabled = not numeric
                row["categories"].disabled = numeric or row["kind"].value == "drop"
                row["flag"].value = ("" if row["public"].value or row["kind"].value == "drop" else
                                     '<span style="color:#a15c00">⚠ from data</span>')

            def edited(_=None, row=row):  # editing a domain declares it
                row["public"].value = True

            refresh()
            kind.observe(refresh, names="value")
            public.observe(refresh, names="value")
            for k in ("lower", "upper", "categories"):
                row[k].observe(edited, names="value")
            children.append(W.HBox([W.Label(str(r.column), layout=W.Layout(width="10em")), kind, lower, upper,
                                    integer, cats, public, flag]))
        self.schema_box.children = tuple(children)

    def leak_rows(self) -> list[str]:
        """Columns whose domain is still the one read from the data."""
        return [c for c, r in self._rows.items() if not r["public"].value and r["kind"].value != "drop"]

    def draft(self) -> pd.DataFrame:
        """The schema table as currently declared in the widgets."""
        rows = []
        for c, r in self._rows.items():
            rows.append([c, r["kind"].value, r["lower"].value, r["upper"].value, r["integer"].value,
                         r["categories"].value, not r["public"].value])
        return pd.DataFrame(rows, columns=DRAFT_COLUMNS)

    def release(self) -> ReleaseResult | None:
        """Build the schema from the widgets and release; show the results or the error."""
        self._clear_release()
        if self.frame is None or not self._rows:
            if self.last_error is None:  # keep the message that explains why nothing is loaded
                self._error("load a table first")
            return None
        try:
            with warnings.catch_warnings(record=True):  # the leaks are shown below, not on stderr
                warnings.simplefilter("always", PrivacyLeakWarning)
                schema, encoded, leaks = build_schema(self.frame, self.draft())
            result = release(encoded, schema, self.method.value, self.epsilon.value, leaks=leaks,
                             random_state=self._rng, accountant=self.accountant)
        except (InputError, BudgetExceededError) as exc:
            self._error(str(exc))
            return None
        except Exception as exc:  # noqa: BLE001 - a method refused the data: a message, not a traceback
            self._error(f"{self.method.value} could not run on this table: {type(exc).__name__}: {exc}")
            return None
        self.result = result
        self.leak_messages = leaks
        self._info(f"released {len(result.synthetic)} synthetic rows with {result.method} at ε = "
                   f"{result.epsilon:g}", warn=leaks)
        with self.results:
            from IPython.display import Markdown, display

            display(Markdown(summary_markdown(result)))
        self.downloads.value = (
            _download_link(synthetic_csv(result), "synthetic.csv", "synthetic table (CSV)", "text/csv")
            + _download_link(summary_markdown(result).encode("utf-8"), "summary.md", "one-page summary (Markdown)",
                             "text/markdown"))
        return result
