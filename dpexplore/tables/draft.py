"""Drafting, editing and building the public schema of the analyst's table.

:func:`draft_schema` reads a first schema from the data: one editable row per column, every row
flagged ``from_data`` (those values leak; a :class:`PrivacyLeakWarning` says so) plus notes that
say what to do about missing values, text in numeric columns and columns with thousands of
values. :func:`declare` sets a row's values and marks it declared: it cannot tell where a typed
value came from, so type values from a public source (a data dictionary, the system's rules), never
copied from the draft, which read them from the data. :func:`build_schema` turns the reviewed
rows into a :class:`~dpexplore.domain.Schema` and the table encoded to it: typed cut points per
numeric column (``"long-tail"`` by default for counts: 0 | 1 | 2–3 | 4–7 | …, read from the
declared bounds only), a typed taxonomy that groups a categorical column's values, and the
derived columns: public functions of another column (an age band from age), computed, never
modelled (:meth:`~dpexplore.domain.Attribute.derived`).
"""
from __future__ import annotations

import fnmatch
import math
import re
import warnings
import weakref
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..domain import (Attribute, PrivacyLeakWarning, Schema, Taxonomy, cut_taxonomy, equal_cuts,
                      long_tail_cuts, match_labels, observed_attribute, typed_labels)
from .._validation import CHECK_TABLE_HINT, format_number, rule_message
from ..evaluate.fidelity import table_rules
from ._common import HIGH_CARDINALITY, HighCardinalityWarning, InputError, show, show_list
from .read import read_table, repeated_names

__all__ = ["DRAFT_COLUMNS", "built_dropping_rows", "check_table", "draft_schema", "declare", "build_schema",
           "parse_cuts", "parse_groups", "schema_leaks"]

#: the columns every draft has (``cuts`` and ``groups`` are optional: empty means the default)
DRAFT_COLUMNS = ["column", "kind", "lower", "upper", "integer", "categories", "from_data"]
_ALL_COLUMNS = ["column", "kind", "lower", "upper", "integer", "categories", "cuts", "groups", "from_data"]
#: the draft column that names a derived row's source (added by :func:`declare` when first used)
DERIVED_FROM = "derived_from"
MISSING_RULES = ("error", "drop-rows")
#: what build_schema read from the data for each schema it built (the summary states it)
_BUILT: "weakref.WeakKeyDictionary[Schema, tuple[str, ...]]" = weakref.WeakKeyDictionary()
#: the schemas build_schema built with missing="drop-rows" (a public choice of the analyst)
_DROPPED_ROWS: "weakref.WeakSet[Schema]" = weakref.WeakSet()


def built_dropping_rows(schema: Any) -> bool:
    """Whether :func:`build_schema` built ``schema`` with ``missing="drop-rows"`` in this session
    (the analyst's public choice of rule, not a fact about the rows)."""
    try:
        return schema in _DROPPED_ROWS
    except TypeError:
        return False


def schema_leaks(schema: Schema) -> list[str] | None:
    """What :func:`build_schema` read from the private data for ``schema`` (its leak notes, [] if
    every row was declared); None for a schema :func:`build_schema` did not build in this session
    (its provenance is unknown here)."""
    leaks = _BUILT.get(schema)
    return None if leaks is None else list(leaks)


# --------------------------------------------------------------------------- checks
def _check_unique_columns(frame: pd.DataFrame, among: Sequence[Any] | None = None) -> None:
    """Refuse a table that names a column twice (only the names in ``among`` when given)."""
    where = repeated_names(frame.columns, among)
    if where:
        raise InputError(f"the table names a column twice ({where}): rename one (read_table(..., "
                         "duplicates='rename') numbers the repeats) or leave it out (select_columns)")


def _check_target(frame: pd.DataFrame, target: Any) -> None:
    if not isinstance(frame, pd.DataFrame) or frame.empty:
        raise InputError("the table is empty: load a table with rows first")
    _check_unique_columns(frame)
    if target not in frame.columns:
        raise InputError(f"target {show(target)} is not a column: choose one of {show_list(list(frame.columns), 8)}")
    if frame[target].isna().any():
        raise InputError(f"the target {show(target)} has missing values: remove those rows in the file or "
                         "build with missing='drop-rows'")
    if frame[target].nunique() < 2:
        raise InputError(f"the target {show(target)} has a single class ({show(frame[target].iloc[0])}): "
                         "there is nothing to classify. Choose another target column")
    if frame.shape[1] < 2:
        raise InputError("the table needs at least one predictor besides the target")


#: the columns of check_table's report
CHECK_COLUMNS = ["column", "rule", "rows", "examples"]


def check_table(frame_or_path: Any, schema: Any, *, errors: str = "raise") -> pd.DataFrame:
    """**NOT PRIVATE**: diagnose your table on your own machine, offending values and rows shown.

    What it returns or raises copies private values and row labels: read it yourself, where the
    data lives; never share it or put it next to a release. The private path (:func:`build_schema`,
    :func:`~dpexplore.tables.release`, :mod:`dpexplore.sources`) refuses the same problems naming
    only the column and the rule, and points here.

    ``frame_or_path``: a DataFrame, or a file :func:`~dpexplore.tables.read_table` reads (CSV,
    CSV.gz, Parquet). ``schema``: a :class:`~dpexplore.domain.Schema` (every declared column
    against its domain, as a release checks it), a draft (from :func:`draft_schema` /
    :func:`declare`: bounds, categories or groups, classes), or the target column's name before a
    schema exists (the target exists and holds two classes; no column has missing values: select
    the columns you need first). ``errors="raise"`` (default) raises :class:`InputError` listing
    the problems; ``"report"`` returns them. Returns a DataFrame with one row per (column, rule):
    ``rows`` (index labels; for a file, 0 is the first row under the header) and ``examples``
    (offending values), empty when the table passes.
    """
    if errors not in ("raise", "report"):
        raise InputError(f"errors must be 'raise' or 'report', got {show(errors)}")
    frame = frame_or_path if isinstance(frame_or_path, pd.DataFrame) else read_table(frame_or_path)
    _check_unique_columns(frame)
    if isinstance(schema, Schema):
        report = _check_rules(frame, _schema_rules(schema)) + _check_declared_rules(frame, schema)
    elif isinstance(schema, pd.DataFrame):
        report = _check_rules(frame, _draft_rules(schema))
    elif isinstance(schema, str):
        report = _check_target_column(frame, schema)
    else:
        raise InputError(f"schema must be a Schema, a draft table or the target column's name, "
                         f"got {type(schema).__name__}")
    report = pd.DataFrame(report, columns=CHECK_COLUMNS)
    if errors == "raise" and len(report):
        problems = " | ".join(_problem_text(p) for p in report.itertuples(index=False))
        raise InputError(f"NOT PRIVATE diagnosis of your table (it shows private values: do not share it): "
                         f"{problems}")
    return report


def _schema_rules(schema: Schema) -> list[tuple[str, str, dict]]:
    """(column, kind, domain) of every declared column and the target."""
    rules = []
    for name, a in schema.attributes.items():
        rules.append((name, a.kind, {"lower": a.lower, "upper": a.upper} if a.kind == "numeric"
                      else {"categories": list(a.categories)}))
    rules.append((schema.target, "target", {"classes": list(schema.classes)}))
    return rules


def _check_declared_rules(frame: pd.DataFrame, schema: Schema) -> list[dict]:
    """One problem per rule column of the schema (:attr:`~dpexplore.domain.Schema.rules`) with
    rows that break it: the rows, and the offending (source → column) value pairs."""
    out = []
    for name, source in schema.rules.items():
        if name not in frame.columns or source not in frame.columns:
            continue
        broken = schema[name].rule_breaks(frame[source], frame[name])
        if broken.any():
            pairs = (frame[source].astype(str) + " → " + frame[name].astype(str))[broken]
            out.append({"column": name, "rule": rule_message("rule", name, statement=schema[name].rule_text()),
                        "rows": show_list(list(frame.index[broken]), 8), "examples": show_list(sorted(set(pairs)), 8)})
    return out


def _draft_rules(draft: pd.DataFrame) -> list[tuple[str, str, dict]]:
    """The same rules read from a draft's typed values (groups: a value must match one)."""
    if not set(DRAFT_COLUMNS) <= set(draft.columns):
        raise InputError(f"the schema table needs the columns {DRAFT_COLUMNS}: start from draft_schema")
    rules = []
    for r in draft.to_dict("records"):
        name, kind = r["column"], r["kind"]
        if kind == "numeric":
            try:
                rules.append((name, kind, {"lower": float(r["lower"]), "upper": float(r["upper"])}))
            except (TypeError, ValueError):
                raise InputError(f"column {name!r}: give numbers for the lower and upper bounds") from None
        elif kind in ("categorical", "target"):
            groups = r.get("groups", "")
            if kind == "categorical" and not _blank(groups):
                rules.append((name, kind, {"groups": parse_groups(name, groups)}))
            else:
                cats = [c.strip() for c in str("" if _blank(r["categories"]) else r["categories"]).split(",")
                        if c.strip()]
                rules.append((name, kind, {"classes" if kind == "target" else "categories": cats}))
    return rules


def _check_rules(frame: pd.DataFrame, rules: list[tuple[str, str, dict]]) -> list[dict]:
    """One problem per (column, rule) broken, the rule worded as the private path words it."""
    out = []

    def found(column: str, text: str, bad: pd.Series, values: pd.Series) -> None:
        out.append({"column": column, "rule": text, "rows": show_list(list(frame.index[bad.to_numpy()]), 8),
                    "examples": show_list(sorted(pd.unique(values[bad]), key=str), 8)})

    def add(column: str, rule: str, bad: pd.Series, values: pd.Series, **domain: Any) -> None:
        if bad.any():
            found(column, rule_message(rule, f"the target {column!r}" if rule == "missing_label" else column,
                                       **domain), bad, values)

    for name, kind, domain in rules:
        if name not in frame.columns:
            out.append({"column": name, "rows": "", "examples": "",
                        "rule": f"{name!r} is not a column of the table: it has {show_list(list(frame.columns), 8)}"})
            continue
        s = frame[name]
        na = s.isna()
        add(name, "missing_label" if kind == "target" else "missing", na, s)
        present = ~na
        if kind == "numeric":
            if pd.api.types.is_bool_dtype(s):
                add(name, "non_numeric", present, s)
                continue
            v = pd.to_numeric(s if pd.api.types.is_numeric_dtype(s) else s.astype(str).str.strip(),
                              errors="coerce").astype(float)
            add(name, "non_numeric", present & v.isna(), s)
            add(name, "infinite", np.isinf(v), s)
            add(name, "range", np.isfinite(v) & ((v < domain["lower"]) | (v > domain["upper"])), s, **domain)
            continue
        if "groups" in domain:   # matched as build_schema matches them
            patterns = [p for _, ps in domain["groups"] for p in ps]
            in_group = _value_text(s).map(lambda t: any(fnmatch.fnmatchcase(t, p) for p in patterns))
            if (present & ~in_group).any():
                found(name, f"column {name!r} has values in no group: add them, or end with a catch-all group "
                            "'other: *'", present & ~in_group, s)
            continue
        labels = domain["classes" if kind == "target" else "categories"]
        unmatched = present & pd.Series([v is None for v in match_labels(s, labels)], index=s.index)
        if kind == "target":
            add(name, "class", unmatched, s, classes=labels)
        else:
            add(name, "category", unmatched, s)
    return out


def _check_target_column(frame: pd.DataFrame, target: str) -> list[dict]:
    """Before a schema exists: a target that exists and holds two classes, no missing values."""
    if frame.empty:
        return [{"column": "", "rule": "the table is empty: load a table with rows first", "rows": "",
                 "examples": ""}]
    if target not in frame.columns:
        return [{"column": target, "rows": "", "examples": "",
                 "rule": f"target {show(target)} is not a column: choose one of {show_list(list(frame.columns), 8)}"}]
    out = []
    for name in frame.columns:
        na = frame[name].isna()
        if na.any():
            out.append({"column": name, "rows": show_list(list(frame.index[na.to_numpy()]), 8), "examples": "",
                        "rule": f"missing values in {name!r} ({int(na.sum())} row{'s' if na.sum() > 1 else ''}): "
                                "drop those columns (drop=[...] or kind 'drop'), or drop those rows with "
                                "missing='drop-rows' (a per-record rule, no ε)"})
    present = frame[target].dropna()
    if present.nunique() < 2:
        single = show_list(sorted(pd.unique(present), key=str))
        out.append({"column": target, "rows": "", "examples": "",
                    "rule": f"the target {show(target)} has a single class ({single}): there is nothing to "
                            "classify. Choose another target column"})
    return out


def _problem_text(problem: Any) -> str:
    """The rule, then the offending values and rows (this text is not private)."""
    extra = [f"{label} {text}" for label, text in (("values", problem.examples), ("rows", problem.rows)) if text]
    return problem.rule + (f" ({'; '.join(extra)})" if extra else "")


# --------------------------------------------------------------------------- draft
def _numeric_view(s: pd.Series) -> tuple[pd.Series, pd.Series] | None:
    """(numeric values, text values) when ``s`` is numbers with at most a few stray strings."""
    present = s.dropna()
    if pd.api.types.is_bool_dtype(s):
        return None
    if pd.api.types.is_numeric_dtype(s):
        return present.astype(float), present.iloc[:0]
    if len(present) == 0:
        return None
    num = pd.to_numeric(present.astype(str).str.strip(), errors="coerce")
    text = present[num.isna()]
    if num.notna().mean() >= 0.9:
        return num.dropna(), text
    return None


def draft_schema(frame: pd.DataFrame, target: str, categorical: Sequence[str] | None = None
                 ) -> tuple[pd.DataFrame, list[str]]:
    """A first schema read from the data, as an editable table, and notes for the analyst.

    One row per column (target last; its categories are the classes), every row ``from_data``:
    bounds, categories and classes were read from the private table, and a
    :class:`PrivacyLeakWarning` is emitted. A numeric column with a few text values ("?",
    "unknown") is drafted numeric and a note names the text values; columns with missing values,
    with more than :data:`HIGH_CARDINALITY` values or with no value get a note saying what to do.
    Default ``cuts``: "long-tail" for integer columns starting at 0 (counts), "equal" otherwise.
    A rule that holds in every row between two categorical columns (one fixed by the other:
    :func:`~dpexplore.evaluate.fidelity.table_rules`) gets a note with its ready-to-paste
    declaration. The notes start with the leak warning's text.
    """
    _check_target(frame, target)
    categorical = set(categorical or [])
    rows, notes = [], []
    for name in frame.columns:
        if name == target:
            continue
        s = frame[name]
        n_missing = int(s.isna().sum())
        view = None if name in categorical else _numeric_view(s)
        if s.dropna().empty:
            rows.append([name, "drop", np.nan, np.nan, False, "", "", "", True])
            notes.append(f"{name!r} has no value: it is drafted as 'drop'")
            continue
        if view is not None:
            values, text = view
            a = observed_attribute(name, values, fanouts=None)
            integer = bool(np.all(np.mod(values.to_numpy(float), 1) == 0))
            cuts = "long-tail" if integer and a.lower == 0 else "equal"
            rows.append([name, "numeric", a.lower, a.upper, integer, "", cuts, "", True])
            if len(text):
                notes.append(f"{name!r} is numeric except {len(text)} text value(s) "
                             f"({show_list(sorted(set(map(str, text))))}): they count as missing; drop those "
                             "rows with missing='drop-rows', declare the column categorical, or drop it")
        else:
            a = observed_attribute(name, s.dropna().astype(str), categorical=True)
            rows.append([name, "categorical", np.nan, np.nan, False, ", ".join(a.categories), "", "", True])
            if len(a.categories) > HIGH_CARDINALITY:
                notes.append(_high_cardinality_text(name, len(a.categories), a.categories))
        if n_missing:
            notes.append(f"{name!r} has missing values in {n_missing} row(s): drop the column, or drop "
                         "those rows with missing='drop-rows' (a per-record rule, no ε)")
    classes = sorted(map(str, frame[target].astype(str).unique()))
    notes += _rule_notes(frame, rows, target, classes)
    rows.append([target, "target", np.nan, np.nan, False, ", ".join(classes), "", "", True])
    leak = ("the draft read the domain from the private data (bounds, category lists and the target's "
            "classes): no ε pays for them. Type the values you would know without the data (from a public "
            "source, not copied from the draft) to declare each row")
    warnings.warn(leak, PrivacyLeakWarning, stacklevel=2)
    return pd.DataFrame(rows, columns=_ALL_COLUMNS), [leak] + notes


def _rule_notes(frame: pd.DataFrame, rows: list, target: str, classes: list[str]) -> list[str]:
    """One note per rule the drafted categorical columns (at most :data:`HIGH_CARDINALITY`
    values each) follow in every row (NOT PRIVATE: read from the data, like the draft), with its
    declaration ready to paste."""
    observed = {r[0]: sorted(map(str, frame[r[0]].dropna().astype(str).unique())) for r in rows if r[1] == "categorical"}
    categorical = [Attribute.categorical(name, cats) for name, cats in observed.items() if len(cats) <= HIGH_CARDINALITY]
    if len(categorical) < 2:
        return []
    return [f"{rule.rule_text()}, in every row (read from the data). If you know this rule (not a coincidence "
            f"of this table), declare it after build_schema: schema = schema.replace({rule.declaration()}); "
            "every synthetic table then keeps it, and no ε is spent on the rows it fixes"
            for rule in table_rules(frame, Schema(categorical, target, classes))]


def _high_cardinality_text(name: str, k: int, categories: Sequence[str]) -> str:
    example = sorted(categories)[0]
    prefix = re.sub(r"\d.*$", "", str(example)) or str(example)[:1]
    return (f"{name!r} has {k} values: DiffGen, DiffMulti and the projected histograms spread ε over every "
            f"value and can do worse than the majority class. Group them with a taxonomy "
            f"(groups='A: {prefix}0*; B: {prefix}1*; other: *') or drop the column")


def declare(draft: pd.DataFrame, column: str, *, derived_from: str | None = None, edges: Any = None,
            labels: Any = None, mapping: Any = None, **values: Any) -> pd.DataFrame:
    """A copy of ``draft`` with ``column``'s row set to ``values`` and marked declared (public).

    ``values``: kind, lower, upper, integer, categories (list or text), cuts (list, "long-tail",
    "equal" or "equal:k"), groups (mapping group → values/patterns, or text "A: a, b; B: c*").
    With no values, the row as drafted is declared public knowledge: do that only when a public
    source gives those same values (the draft read them from the data; a value copied from it stays
    data-dependent).

    A derived column, a public function of another (:meth:`~dpexplore.domain.Attribute.derived`):
    ``derived_from`` names its source column, with ``edges`` e0 < e1 < … < ek covering the
    source's declared bounds and one of ``labels`` per band (a value v gets the label of the band
    e_i ≤ v < e_(i+1), the last band closed) for a numeric source, or ``mapping``
    {source category: label} for a categorical one (or typed groups "label: category, pattern*;
    …", each declared category taking its first match). The row is kind "derived" (edges in
    ``cuts``, labels in ``categories``, the mapping in ``groups``); a column the table lacks gets
    a new row after its source. It is not a predictor: :func:`build_schema` computes it from its
    source. A bad rule raises :class:`InputError` here, naming the column and the rule.

    >>> import pandas as pd
    >>> draft = pd.DataFrame({"column": ["age", "income"], "kind": ["numeric", "target"],
    ...                       "lower": [17, None], "upper": [90, None], "integer": [True, False],
    ...                       "categories": ["", "<=50K, >50K"], "from_data": [False, False]})
    >>> draft = declare(draft, "age band", derived_from="age", edges=[17, 30, 50, 90],
    ...                 labels=["young", "middle", "old"])
    >>> list(draft["column"])
    ['age', 'age band', 'income']
    >>> draft.loc[1, ["kind", "derived_from", "cuts", "categories"]].tolist()
    ['derived', 'age', '17, 30, 50, 90', 'young, middle, old']
    """
    if not isinstance(draft, pd.DataFrame) or "column" not in draft.columns:
        raise InputError("draft must be the table from draft_schema")
    out = draft.copy()
    for col in ("cuts", "groups"):
        if col not in out.columns:
            out.insert(len(out.columns) - 1, col, "")
    if derived_from is not None or edges is not None or labels is not None or mapping is not None:
        return _declare_derived(out, column, derived_from, edges, labels, mapping, values)
    where = out["column"] == column
    if not where.any():
        raise InputError(f"the draft has no column {show(column)}: choose one of {show_list(list(out['column']), 8)}")
    unknown = [k for k in values if k not in _ALL_COLUMNS or k in ("column", "from_data")]
    if unknown:
        raise InputError(f"declare() cannot set {show_list(unknown)}: use kind, lower, upper, integer, "
                         "categories, cuts or groups (derived_from with edges and labels, or mapping, for a "
                         "derived column)")
    if values.get("kind") == "derived":
        raise InputError(f"column {show(column)}: declare a derived column with derived_from= and edges= with "
                         "labels= (bands of a number) or mapping= (categories to labels)")
    for key, value in values.items():
        if key == "categories" and not isinstance(value, str):
            value = ", ".join(map(str, value))
        elif key == "cuts" and not isinstance(value, str):
            value = ", ".join(f"{float(v):g}" for v in value)
        elif key == "groups" and isinstance(value, Mapping):
            value = "; ".join(f"{g}: " + (v if isinstance(v, str) else ", ".join(map(str, v)))
                              for g, v in value.items())
        out[key] = out[key].astype(object)
        out.loc[where, key] = value
    if "kind" in values and values["kind"] != "drop" and DERIVED_FROM in out.columns:
        out.loc[where, DERIVED_FROM] = ""         # no longer computed: read from the table
    out.loc[where, "from_data"] = False
    return out


def _declare_derived(out: pd.DataFrame, column: str, source: Any, edges: Any, labels: Any, mapping: Any,
                     values: Mapping[str, Any]) -> pd.DataFrame:
    """:func:`declare` for a derived column: the row stored as typed text, then checked."""
    name = show(column)
    if values:
        raise InputError(f"derived column {name}: give derived_from= with edges= and labels= (bands of a "
                         f"number) or mapping= (categories to labels) only, not {show_list(list(values))}")
    if source is None:
        raise InputError(f"derived column {name}: name the column it is computed from with derived_from=")
    if (edges is None) == (mapping is None) or (mapping is not None and labels is not None):
        raise InputError(f"derived column {name}: give edges= and labels= (bands of a number) or mapping= "
                         "(categories to labels), not both")
    row = {"kind": "derived", "lower": np.nan, "upper": np.nan, "integer": False, "categories": "", "cuts": "",
           "groups": "", DERIVED_FROM: str(source), "from_data": False}
    if mapping is not None:
        row["groups"] = _mapping_text(name, mapping)
    else:
        row["cuts"] = _edges_text(name, edges)
        row["categories"] = _labels_text(name, labels)
    if DERIVED_FROM not in out.columns:
        out.insert(len(out.columns) - 1, DERIVED_FROM, "")
    where = out["column"] == column
    if where.any():
        for key, value in row.items():
            out[key] = out[key].astype(object)
            out.loc[where, key] = value
    else:                                   # a column the table lacks: a new row after its source
        after = np.flatnonzero((out["column"] == str(source)).to_numpy())
        at = int(after[0]) + 1 if len(after) else len(out)
        new = pd.DataFrame([{c: row.get(c, "") for c in out.columns} | {"column": column}], columns=out.columns)
        out = pd.concat([out.iloc[:at], new, out.iloc[at:]], ignore_index=True)
    records = out.to_dict("records")
    _derived_attribute(next(r for r in records if r["column"] == column), {r["column"]: r for r in records})
    return out


def _edges_text(name: str, edges: Any) -> str:
    """Typed band edges, numbers written in full (no digit lost: they must cover the bounds)."""
    if isinstance(edges, str):
        return edges
    try:
        numbers = [float(e) for e in edges]
    except (TypeError, ValueError):
        raise InputError(f"derived column {name}: edges must be numbers, e.g. edges=[17, 30, 50, 90]") from None
    return _numbers_text(numbers)


def _numbers_text(numbers: Sequence[float]) -> str:
    return ", ".join(format_number(e) if e.is_integer() else repr(e) for e in numbers)


def _labels_text(name: str, labels: Any) -> str:
    if labels is None:
        raise InputError(f"derived column {name}: give one label per band with labels=")
    if isinstance(labels, str):
        return labels
    labels = [str(v).strip() for v in labels]
    if any("," in v for v in labels):
        raise InputError(f"derived column {name}: a label cannot hold a comma (the draft lists labels "
                         "comma-separated)")
    return ", ".join(labels)


def _mapping_text(name: str, mapping: Any) -> str:
    """{source category: label} as typed groups "label: category, category; …"."""
    if isinstance(mapping, str):
        return mapping
    if not isinstance(mapping, Mapping) or not mapping:
        raise InputError(f"derived column {name}: mapping must be a non-empty dict {{source category: label}}")
    by_label: dict[str, list[str]] = {}
    for category, label in mapping.items():
        category, label = str(category).strip(), str(label).strip()
        if any(ch in category for ch in ",;") or any(ch in label for ch in ",;:"):
            raise InputError(f"derived column {name}: the draft types a mapping as 'label: category, category; "
                             "…', so a category cannot hold ',' or ';' and a label neither ',', ';' nor ':'")
        by_label.setdefault(label, []).append(category)
    return "; ".join(f"{label}: {', '.join(cats)}" for label, cats in by_label.items())


def _derived_attribute(row: Mapping[str, Any], rows: Mapping[Any, Mapping[str, Any]]) -> Attribute:
    """The :meth:`~dpexplore.domain.Attribute.derived` of a draft row of kind "derived", checked
    against its source's declared row (``rows``: every draft row by column). Reads the draft
    only, never the data: every message names the column and the rule."""
    name = row["column"]
    source = "" if _blank(row.get(DERIVED_FROM)) else str(row[DERIVED_FROM]).strip()
    if not source:
        raise InputError(f"derived column {name!r}: name the column it is computed from (derived_from)")
    if source == name:
        raise InputError(f"derived column {name!r} cannot be computed from itself: choose another source column")
    if source not in rows:
        raise InputError(f"derived column {name!r}: its source {source!r} is not a column of the draft: choose "
                         f"one of {show_list([c for c in rows if c != name], 8)}")
    src = rows[source]
    why = {"target": "is the target", "drop": "is dropped: keep it, or drop this column too",
           "derived": "is itself derived: compute both from the column it comes from"}.get(src["kind"])
    if why:
        raise InputError(f"derived column {name!r}: its source {source!r} {why} (a derived column is computed "
                         "from a kept numeric or categorical column)")
    if src["kind"] == "numeric":
        if not _blank(row.get("groups")):
            raise InputError(f"derived column {name!r}: {source!r} is numeric: give bands (edges and labels), "
                             "not a mapping")
        lower, upper = _declared_bounds(src)
        edges = _parse_edges(name, row.get("cuts"))
        inner = edges[1:-1]
        if edges[0] > lower or edges[-1] < upper or any(not lower < e <= upper for e in inner):
            raise InputError(f"derived column {name!r}: its edges must run from at most {format_number(lower)} "
                             f"to at least {format_number(upper)} (the declared bounds of {source!r}), every "
                             f"inner edge inside them: got {_numbers_text(edges)}")
        labels = _typed_categories(row.get("categories"))
        if len(labels) != len(edges) - 1 or len(set(labels)) != len(labels):
            raise InputError(f"derived column {name!r}: give {len(edges) - 1} distinct labels, one per band "
                             f"between its {len(edges)} edges (got {len(labels)})")
        return Attribute.derived(name, source, edges=edges, labels=labels)
    if _blank(row.get("groups")):
        raise InputError(f"derived column {name!r}: {source!r} is categorical: give a mapping of its categories "
                         "to labels, not bands")
    categories = _source_categories(src)
    pairs = parse_groups(name, row["groups"])
    literal = [v for _, values in pairs for v in values if not any(ch in v for ch in "*?[")]
    unknown = [v for v in literal if v not in categories]
    if unknown:
        raise InputError(f"derived column {name!r}: its mapping names {show_list(unknown)}, not declared "
                         f"categories of {source!r} ({show_list(categories, 8)})")
    rule = {c: next((g for g, pats in pairs if any(fnmatch.fnmatchcase(c, p) for p in pats)), None)
            for c in categories}
    missing = [c for c, label in rule.items() if label is None]
    if missing:
        raise InputError(f"derived column {name!r}: its mapping gives no label to the declared categories "
                         f"{show_list(missing)} of {source!r}: add them, or end with a catch-all 'other: *'")
    return Attribute.derived(name, source, mapping=rule)


def _parse_edges(name: str, text: Any) -> list[float]:
    try:
        edges = [float(t) for t in re.split(r"[,;\s]+", "" if _blank(text) else str(text).strip()) if t]
    except ValueError:
        edges = []
    if len(edges) < 2 or not all(math.isfinite(e) for e in edges) or any(b <= a for a, b in zip(edges, edges[1:])):
        raise InputError(f"derived column {name!r}: its edges must be at least two increasing numbers, "
                         "e.g. edges=[17, 30, 50, 90]")
    return edges


def _typed_categories(value: Any) -> list[str]:
    """A typed list of categories ("a, b, c" or a list) as stripped, non-empty texts."""
    return [str(c).strip() for c in (value if isinstance(value, (list, tuple))
                                     else str("" if _blank(value) else value).split(",")) if str(c).strip()]


def _source_categories(row: Mapping[str, Any]) -> list[str]:
    """The categories a categorical row declares: its group names when grouped, else its list."""
    if not _blank(row.get("groups")):
        return [g for g, _ in parse_groups(row["column"], row["groups"])]
    categories = _typed_categories(row.get("categories"))
    if not categories:
        raise InputError(f"column {row['column']!r}: declare its categories (comma-separated), or type groups")
    return categories


def _declared_bounds(row: Mapping[str, Any]) -> tuple[float, float]:
    """The public [lower, upper] a numeric row declares, checked (numbers, finite, lower < upper)."""
    name = row["column"]
    try:
        lower, upper = float(row["lower"]), float(row["upper"])
    except (TypeError, ValueError):
        raise InputError(f"column {name!r}: give numbers for the lower and upper bounds") from None
    if not (np.isfinite(lower) and np.isfinite(upper) and lower < upper):
        raise InputError(f"column {name!r}: the public bounds need lower < upper, got "
                         f"[{lower:g}, {upper:g}]: type the range you know without the data")
    return lower, upper


# --------------------------------------------------------------------------- parsing typed values
def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value)) or str(value).strip() == ""


def parse_cuts(name: str, text: Any, lower: float, upper: float, integer: bool,
               fanouts: Sequence[int]) -> Taxonomy:
    """The taxonomy of a numeric column from its typed cut points: blank or "equal" → nested
    equal-width intervals (``fanouts``), "equal:k" → k equal bins, "long-tail" → 0 | 1 | 2–3 | …
    from the declared lower bound, or numbers "1, 2, 4, 11" (a cut c separates < c from ≥ c).
    Integer columns get whole-number bins ("2007", "2008–2009"), never fractional ones: blank or
    "equal" then gives each node of the equal-width nesting the integers it holds
    (:func:`integer_equal_width`)."""
    spec = "" if _blank(text) else str(text).strip().lower()
    try:
        if spec in ("", "equal") and integer:
            return integer_equal_width(name, lower, upper, fanouts)
        if spec in ("", "equal"):
            return Taxonomy.equal_width(name, lower, upper, fanouts)
        if spec.startswith("equal:"):
            k = int(spec.split(":", 1)[1])
            if k < 2:
                raise ValueError
            return cut_taxonomy(name, lower, upper, equal_cuts(lower, upper, k, integer), integer=integer)
        if spec in ("long-tail", "longtail", "long tail"):
            return cut_taxonomy(name, lower, upper, long_tail_cuts(lower, upper), integer=integer)
        cuts = [float(t) for t in re.split(r"[,;\s]+", spec) if t]
    except ValueError as exc:
        detail = str(exc)
        if detail.startswith("column "):
            raise InputError(detail) from None
        raise InputError(f"column {name!r}: cut points {str(text)!r} are not understood: type numbers like "
                         "'1, 2, 4, 11', 'long-tail', 'equal' or 'equal:8'") from None
    try:
        return cut_taxonomy(name, lower, upper, cuts, integer=integer)
    except ValueError as exc:
        raise InputError(str(exc)) from None


def integer_equal_width(name: str, lower: float, upper: float, fanouts: Sequence[int]) -> Taxonomy:
    """``Taxonomy.equal_width`` for an integer column: every integer keeps the node (a, b] it has
    there at every depth, but the nodes are labelled and cut as integers ("0–7", "8–15"; an edge
    between k and k + 1 is k + ½) and a node that holds no integer is left out. Reads only the
    declared bounds."""
    nested = Taxonomy.equal_width(name, lower, upper, fanouts)
    lo, hi = math.ceil(lower), math.floor(upper)
    # an integer v lies in (a, b] iff floor(a) < v ≤ floor(b): the first integer after a leaf is floor(b) + 1
    firsts = sorted({lo} | {int(np.floor(e)) + 1 for e in nested.edges(nested.height - 1)[1:-1]
                            if lo < np.floor(e) + 1 <= hi})
    lasts = [f - 1 for f in firsts[1:]] + [hi]
    edges = [float(lower)] + [f - 0.5 for f in firsts[1:]] + [float(upper)]
    labels, maps, edge_levels = [], [], []
    for depth in range(nested.height):
        nodes, leaf_to_node = np.unique(nested.node_codes(nested.leaf_codes(firsts), depth), return_inverse=True)
        groups = [np.flatnonzero(leaf_to_node == k) for k in range(len(nodes))]
        labels.append([str(firsts[g[0]]) if firsts[g[0]] == lasts[g[-1]] else f"{firsts[g[0]]}–{lasts[g[-1]]}"
                       for g in groups])
        maps.append(leaf_to_node)
        edge_levels.append([edges[0]] + [edges[g[0]] for g in groups[1:]] + [edges[-1]])
    return Taxonomy(name, "numeric", labels[-1], labels, maps, edges=edge_levels)


def parse_groups(name: str, text: Any) -> list[tuple[str, list[str]]]:
    """Typed groups "A: a1, a2; B: b*; other: *" → [(group, [value or pattern, …]), …]."""
    if isinstance(text, Mapping):
        pairs = [(str(g), [v] if isinstance(v, str) else list(map(str, v))) for g, v in text.items()]
    else:
        pairs = []
        for part in str(text).split(";"):
            if not part.strip():
                continue
            if ":" not in part:
                raise InputError(f"column {name!r}: groups are typed 'group: value, value*; other: *', "
                                 f"got {part.strip()!r}")
            g, vals = part.split(":", 1)
            pairs.append((g.strip(), [v.strip() for v in vals.split(",") if v.strip()]))
    groups = [g for g, _ in pairs]
    if not pairs or any(not g for g in groups) or len(set(groups)) != len(groups):
        raise InputError(f"column {name!r}: give distinct, named groups, e.g. 'A: a1, a2; other: *'")
    return pairs


def _apply_groups(name: str, values: pd.Series, pairs: list[tuple[str, list[str]]]) -> pd.Series:
    """Each value → the first group one of whose values or patterns (fnmatch) matches it; a value
    in no group is refused naming the column, not the value (:func:`check_table` shows it)."""
    uniq = pd.unique(values)
    mapping = {}
    for v in uniq:
        for g, pats in pairs:
            if any(fnmatch.fnmatchcase(v, p) for p in pats):
                mapping[v] = g
                break
    if any(v not in mapping for v in uniq):
        raise InputError(f"column {name!r} has values in no group: add them, or end with a catch-all group "
                         f"'other: *'; {CHECK_TABLE_HINT.replace('schema', 'draft')}")
    return values.map(mapping)


def _value_text(values: pd.Series) -> pd.Series:
    """Each value's text as typed groups match it: stripped; True/False for booleans; a whole
    number as an integer ("1", whether pandas typed the column int, or float because of a missing
    value elsewhere)."""
    def text(v: Any) -> str:
        if isinstance(v, (bool, np.bool_)):
            return str(bool(v))
        if isinstance(v, (float, np.floating)) and math.isfinite(v) and float(v).is_integer():
            return str(int(v))
        return str(v).strip()
    return values.map(text) if len(values) else values.astype(str)


def _typed_column(labels: Any, declared: Sequence[str], index: pd.Index) -> pd.Series:
    """Declared labels (texts) as a column of their declared type
    (:func:`~dpexplore.domain.declared_dtype`: int, bool, else text)."""
    typed = pd.Series(typed_labels(labels, declared), index=index)
    return typed.astype(str) if typed.dtype == object else typed


# --------------------------------------------------------------------------- build
def build_schema(frame: pd.DataFrame, draft: pd.DataFrame, fanouts: Sequence[int] = (2, 2, 2), *,
                 missing: str = "error") -> tuple[Schema, pd.DataFrame, list[str]]:
    """Turn a reviewed draft into a Schema and the table encoded to it.

    Numeric columns: values clipped to the declared [lower, upper] (integer columns rounded, then
    clipped), taxonomy from the typed ``cuts`` (see :func:`parse_cuts`; blank: equal-width
    nesting of ``fanouts``). Categorical columns: strings that must all be declared, or the typed
    ``groups`` (the column is released at the group level; the categories are the group names).
    The target keeps its values (int, bool or text); its classes are the declared categories.
    A derived column (kind "derived": :func:`declare` with ``derived_from``) is checked against
    its source's declared domain before the data is read, and is not a predictor: the encoded
    table holds it computed from its source's encoded values. The table's own column of that
    name, if it has one, is never read: labels there that disagree with the declared rule are the
    owner's data, not a privacy matter, and are replaced by the rule's (nothing is refused on
    their account; :func:`~dpexplore.tables.release` recomputes the column in its synthetic
    table the same way). ``missing="drop-rows"`` drops every row with a missing value — or a
    text value in a numeric column — in a column that is kept: a rule applied to each record on
    its own, so it costs no ε; the default refuses them with a message. Returns (schema, encoded copy, leak notes: one
    per kept row still ``from_data``; a :class:`PrivacyLeakWarning` lists them). Every check
    raises :class:`InputError` naming the column and the rule, never a value or a count of the
    private rows (:func:`check_table` shows those, on your own machine); the inputs are not
    modified. Nothing here refuses a table for its number of rows or of classes, before or after
    dropping rows: those would tell neighbouring tables apart (:func:`~dpexplore.tables.release`
    answers them with noise). A rule that drops every row (a kept column missing in every row)
    gives an empty table without a word here, for the same reason; :func:`~dpexplore.tables.release`
    refuses an empty table, as it refuses every empty one, and its message names this rule.

    **Types come from the schema.** After the rule, every column has its declared type
    (:attr:`~dpexplore.domain.Attribute.dtype`), whatever type pandas gave it from the values
    around it (one missing value makes an int column float, one text value makes it text): integer
    columns int64, other numbers float64, categories and classes the type of their declared list
    (``[0, 1]`` int64, ``[False, True]`` bool, anything else text). A value matches a declared
    category or class by its text or, for a number, by its value: 1, 1.0 and "1" all match "1"
    (:func:`~dpexplore.domain.match_labels`).
    """
    if missing not in MISSING_RULES:
        raise InputError(f"missing must be one of {MISSING_RULES}, got {show(missing)}")
    if not isinstance(draft, pd.DataFrame) or not set(DRAFT_COLUMNS) <= set(draft.columns):
        raise InputError(f"the schema table needs the columns {DRAFT_COLUMNS}: start from draft_schema")
    if not isinstance(frame, pd.DataFrame):
        raise InputError(f"the table must be a DataFrame, got {type(frame).__name__}")
    targets = draft[draft["kind"] == "target"]
    if len(targets) != 1:
        raise InputError("mark exactly one column as the target")
    target = str(targets["column"].iloc[0])
    rows = list(draft.to_dict("records"))
    named = [row["column"] for row in rows]
    if len(set(named)) != len(named):
        twice = sorted({n for n in named if named.count(n) > 1}, key=str)
        raise InputError(f"the schema table has several rows for {show_list(twice)}: keep one row per column")
    _check_unique_columns(frame, named)   # a repeated column the draft does not name is left out
    for row in rows:
        computed = row["kind"] == "derived" or (row["kind"] == "drop" and not _blank(row.get(DERIVED_FROM)))
        if row["column"] not in frame.columns and not computed:
            raise InputError(f"the schema names a column {show(row['column'])} that the table does not have")
        if row["kind"] not in ("numeric", "categorical", "target", "derived", "drop"):
            raise InputError(f"column {show(row['column'])}: kind must be numeric, categorical, target, derived or "
                             f"drop, got {show(row['kind'])}")
    by_column = {r["column"]: r for r in rows}
    derived = {r["column"]: _derived_attribute(r, by_column) for r in rows if r["kind"] == "derived"}
    kept = [r for r in rows if r["kind"] not in ("drop", "derived")]
    hint = CHECK_TABLE_HINT.replace("schema", "draft")
    if not any(r["kind"] != "target" for r in kept):
        raise InputError("keep at least one predictor (all columns are dropped)")
    # 1. missing values and text in numeric columns, in the kept columns only
    bad = pd.Series(False, index=frame.index)
    numeric: dict[str, pd.Series] = {}
    for r in kept:
        name = r["column"]
        s = frame[name]
        na = s.isna()
        if r["kind"] == "numeric":
            num = pd.to_numeric(s.astype(str).str.strip() if s.dtype == object else s, errors="coerce")
            if (num.isna() & ~na).any() and missing == "error":
                raise InputError(f"column {name!r} is declared numeric but has non-numeric values: read them "
                                 "as missing with missing='drop-rows' (drops those rows, no ε), declare the "
                                 f"column categorical, or drop it; {hint}")
            numeric[name] = num
            na = num.isna()
        if na.any() and missing == "error":
            raise InputError(f"missing values in {name!r}: drop the column (kind 'drop'), or drop those rows "
                             f"with missing='drop-rows' (a per-record rule, no ε); {hint}")
        bad |= na
    keep_rows = ~bad
    out = frame.loc[keep_rows, [r["column"] for r in kept]].copy()  # may hold no row, or one class
    # 2. domains
    built: dict[str, Attribute] = dict(derived)
    leaks, classes = [], None
    for r in rows:
        name, kind = r["column"], r["kind"]
        if bool(r["from_data"]) and kind != "drop":
            what = {"numeric": "bounds", "categorical": "categories", "target": "classes", "derived": "labels"}[kind]
            leaks.append(f"{name}: {what} taken from the data")
    for r in kept:
        name, kind = r["column"], r["kind"]
        if kind == "numeric":
            values = numeric[name][keep_rows]
            lower, upper = _declared_bounds(r)
            integer = bool(r["integer"])
            if integer and np.ceil(lower) > np.floor(upper):
                raise InputError(f"column {name!r} is declared integer but no integer lies in "
                                 f"[{lower:g}, {upper:g}]: widen the bounds or untick 'integer'")
            try:
                taxonomy = parse_cuts(name, r.get("cuts", ""), lower, upper, integer, fanouts)
            except ValueError as exc:
                raise InputError(str(exc) if isinstance(exc, InputError) else f"column {name!r}: {exc}") from None
            built[name] = Attribute.numeric(name, lower, upper, taxonomy, integer=integer)
            if integer:
                out[name] = values.round().clip(np.ceil(lower), np.floor(upper)).astype(np.int64)
            else:
                out[name] = values.clip(lower, upper).astype(float)
            continue
        groups = r.get("groups", "")
        if kind == "categorical" and not _blank(groups):
            pairs = parse_groups(name, groups)
            names = [g for g, _ in pairs]
            out[name] = _typed_column(_apply_groups(name, _value_text(out[name]), pairs), names, out.index)
            built[name] = Attribute.categorical(name, names)
            continue
        cats = _typed_categories(r["categories"])
        word = "classes" if kind == "target" else "categories"
        if len(cats) != len(set(cats)):
            raise InputError(f"column {name!r}: the {word} must be distinct")
        if kind == "target" and len(cats) < 2:
            raise InputError(f"target {name!r}: declare at least two classes (comma-separated)")
        if not cats:
            raise InputError(f"column {name!r}: declare its categories (comma-separated), or type groups")
        labels = match_labels(out[name], cats)      # 1, 1.0 and "1" alike: the type pandas chose does not count
        if any(v is None for v in labels):
            raise InputError(f"column {name!r} has values that are not among its declared {word}: add them to "
                             f"the list{'' if kind == 'target' else ' or group them'}; {hint}")
        out[name] = _typed_column(labels, cats, out.index)
        if kind == "target":
            classes = cats
        else:
            if len(cats) > HIGH_CARDINALITY:
                warnings.warn(_high_cardinality_text(name, len(cats), cats), HighCardinalityWarning, stacklevel=2)
            built[name] = Attribute.categorical(name, cats)
    for name, attr in derived.items():      # computed from the encoded source: the table's own column unread
        out[name] = attr.derive(out[attr.source])
    attrs = [built[r["column"]] for r in rows if r["kind"] not in ("drop", "target")]
    try:
        schema = Schema(attrs, target, classes)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    _BUILT[schema] = tuple(leaks)
    if missing == "drop-rows":
        _DROPPED_ROWS.add(schema)
    if leaks:
        warnings.warn("the public schema still uses domains read from the private data, which no ε pays for: "
                      + "; ".join(leaks) + ". Type the values you know without the data (or tick 'public').",
                      PrivacyLeakWarning, stacklevel=2)
    return schema, out[schema.columns + [target]], leaks
