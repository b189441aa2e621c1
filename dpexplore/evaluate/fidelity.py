"""How well a synthetic table keeps the shape of the real one: total-variation distance over
public bins, one column at a time and for every pair of columns (the target included).

**Not private.** Both functions read the real table: the figures are an evaluation for the data
owner (like the test accuracy of :func:`~dpexplore.evaluate.sweep`), not a release.

The bins are public, never read from either table: a categorical column's declared categories,
a numeric column's leaf intervals (its taxonomy's finest level, or the equal-width bins of its
one-way marginal when it has none: :func:`~dpexplore.domain.marginal_taxonomy`), the
target's declared classes. A value outside the declared domain, or missing, falls in one extra
bin of its own, so a synthetic table that leaves the domain is charged for it.

The total-variation distance of two distributions p and q over the same bins is
½ Σ |p − q| (0: identical, 1: disjoint supports). The k-way figure over a set of columns is the
distance of their joint distributions (half the ℓ1 error of a k-way marginal, the workload
measure of synthetic-data evaluations such as MST's: McKenna, Miklau & Sheldon 2021).

>>> import pandas as pd
>>> from dpexplore.domain import Attribute, Schema
>>> schema = Schema([Attribute.categorical("colour", ["red", "blue"])], "label", ["no", "yes"])
>>> real = pd.DataFrame({"colour": ["red", "red", "blue", "blue"], "label": ["no", "yes", "no", "yes"]})
>>> fake = pd.DataFrame({"colour": ["red", "red", "red", "blue"], "label": ["no", "no", "no", "yes"]})
>>> fidelity(real, fake, schema)
     way         columns   tvd
0  1-way          colour  0.25
1  1-way           label  0.25
2  2-way  colour × label  0.50
>>> fidelity_summary(real, fake, schema)
{'tvd_1way': 0.25, 'tvd_2way': 0.5, 'max_1way': 0.25, 'max_2way': 0.5}

Rules a table follows in every row (a column fixed by another: "No internet service" exactly
when the internet service is "No") are found by :func:`table_rules` (NOT PRIVATE: for the data
owner to confirm and declare) and counted in any table by :func:`rule_violations`.
"""
from __future__ import annotations

from itertools import combinations
from typing import Sequence

import numpy as np
import pandas as pd

from ..domain import Attribute, Schema, check_schema, marginal_taxonomy

__all__ = ["FIDELITY_COLUMNS", "public_bins", "bin_codes", "fidelity", "fidelity_summary", "table_rules",
           "rule_violations"]

#: the columns of :func:`fidelity`'s table
FIDELITY_COLUMNS = ["way", "columns", "tvd"]


def public_bins(schema: Schema) -> dict[str, list[str]]:
    """The public bin labels of every declared column, predictors in schema order then the
    target: categories, leaf intervals of numeric columns, classes. Read from the schema only."""
    check_schema(schema, taxonomies=False)
    bins = {}
    for name in schema.predictors:
        attr = schema[name]
        bins[name] = ([str(c) for c in attr.categories] if attr.kind == "categorical"
                      else [str(label) for label in marginal_taxonomy(attr).leaves])
    bins[schema.target] = [str(c) for c in schema.classes]
    return bins


def _column_codes(values: pd.Series, schema: Schema, name: str) -> np.ndarray:
    """Bin index of each value (see :func:`public_bins`); -1 for a missing value or one outside
    the declared domain."""
    if name == schema.target or schema[name].kind == "categorical":
        labels = [str(c) for c in (schema.classes if name == schema.target else schema[name].categories)]
        text = values.astype(object).where(values.notna(), None)
        return pd.Index(labels, dtype=object).get_indexer(text.map(lambda v: None if v is None else str(v)))
    attr = schema[name]
    tax = marginal_taxonomy(attr)
    number = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    inside = np.isfinite(number) & (number >= attr.lower) & (number <= attr.upper)
    codes = np.full(number.shape, -1, dtype=np.int64)
    codes[inside] = tax.leaf_codes(number[inside])
    return codes


def bin_codes(frame: pd.DataFrame, schema: Schema) -> pd.DataFrame:
    """Each declared column of ``frame`` as public bin indices (-1: missing or outside the
    declared domain). A declared column that ``frame`` lacks is refused, naming it."""
    bins = public_bins(schema)
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"the table must be a DataFrame, got {type(frame).__name__}")
    missing = [c for c in bins if c not in frame.columns]
    if missing:
        raise ValueError(f"the table lacks the schema's column(s) {missing}")
    return pd.DataFrame({name: _column_codes(frame[name], schema, name) for name in bins}, index=frame.index)


def _distribution(codes: Sequence[np.ndarray], sizes: Sequence[int]) -> np.ndarray:
    """Relative frequencies of the joint bins of ``codes`` (-1 → the last bin of each column)."""
    flat = np.zeros(len(codes[0]), dtype=np.int64)
    for c, k in zip(codes, sizes):
        flat = flat * (k + 1) + np.where(c < 0, k, c)
    counts = np.bincount(flat, minlength=int(np.prod([k + 1 for k in sizes])))
    return counts / counts.sum()


def _tvd(real: list[np.ndarray], synthetic: list[np.ndarray], sizes: list[int]) -> float:
    if len(synthetic[0]) == 0:   # an empty synthetic table keeps nothing of the shape
        return 1.0
    return float(0.5 * np.abs(_distribution(real, sizes) - _distribution(synthetic, sizes)).sum())


def fidelity(real: pd.DataFrame, synthetic: pd.DataFrame, schema: Schema, *, ways: Sequence[int] = (1, 2)
             ) -> pd.DataFrame:
    """NOT PRIVATE (reads ``real``): the total-variation distance between ``real`` and
    ``synthetic`` over the schema's public bins, for every column (``way`` "1-way") and every
    pair of columns, the target included ("2-way"). Columns ``way``, ``columns`` (names joined
    by " × ") and ``tvd`` in [0, 1]. An empty synthetic table scores 1; an empty real one is
    refused. Neither input is modified."""
    if any(w not in (1, 2) for w in ways) or not ways:
        raise ValueError(f"ways must hold 1 and/or 2, got {list(ways)!r}")
    real_codes, syn_codes = bin_codes(real, schema), bin_codes(synthetic, schema)
    if len(real_codes) == 0:
        raise ValueError("the real table is empty: there is no shape to compare with")
    sizes = {name: len(labels) for name, labels in public_bins(schema).items()}
    rows = []
    for way in sorted(set(ways)):
        for group in combinations(list(sizes), way):
            rows.append({"way": f"{way}-way", "columns": " × ".join(group),
                         "tvd": _tvd([real_codes[c].to_numpy() for c in group],
                                     [syn_codes[c].to_numpy() for c in group], [sizes[c] for c in group])})
    return pd.DataFrame(rows, columns=FIDELITY_COLUMNS)


def fidelity_summary(real: pd.DataFrame, synthetic: pd.DataFrame, schema: Schema) -> dict[str, float]:
    """NOT PRIVATE (reads ``real``): the mean and the largest 1-way and 2-way total-variation
    distance of :func:`fidelity` (``tvd_1way``, ``tvd_2way``, ``max_1way``, ``max_2way``)."""
    table = fidelity(real, synthetic, schema)
    out = {}
    for stat, how in (("tvd", "mean"), ("max", "max")):
        for way in (1, 2):
            values = table.loc[table["way"] == f"{way}-way", "tvd"]
            out[f"{stat}_{way}way"] = float(values.agg(how)) if len(values) else float("nan")
    return out


# --------------------------------------------------------------------------- rules in the data
def _fixing_labels(real: pd.DataFrame, source: str, column: str) -> dict[str, str]:
    """{u: v}: the values u of ``source`` such that every row with source == u has column == v
    and column == v only when the source is one of them (several u may share a v)."""
    pair = real[[source, column]].dropna().astype(str)
    table = pd.crosstab(pair[source], pair[column])
    mapping: dict[str, str] = {}
    for v in table.columns:
        only_v = [u for u in table.index if table.loc[u, v] > 0 and table.loc[u, v] == table.loc[u].sum()]
        if only_v and table.loc[only_v, v].sum() == table[v].sum():
            mapping.update({str(u): str(v) for u in only_v})
    return mapping


def _rule(real: pd.DataFrame, schema: Schema, source: str, column: str) -> Attribute | None:
    """The rule by which ``source`` fixes ``column`` in every row of ``real``, or None."""
    if real[column].dropna().astype(str).nunique() < 2:
        return None
    mapping = {u: v for u, v in _fixing_labels(real, source, column).items() if u in schema[source].categories}
    free = [c for c in schema[column].categories if c not in set(mapping.values())]
    if mapping and len(mapping) == len(schema[source].categories):     # a function of the source
        return Attribute.derived(column, source, mapping=mapping)
    if mapping and free:
        return Attribute.derived(column, source, mapping=mapping, otherwise=free)
    return None


def table_rules(real: pd.DataFrame, schema: Schema) -> list[Attribute]:
    """NOT PRIVATE (reads ``real``): the rules that hold in every row of ``real`` between two
    categorical predictors of ``schema`` (declared without a rule): values u of a source column
    such that every row with that value has one label v in another column, and that label occurs
    only with them (structural zeros both ways, e.g. "No internet service" exactly when the
    internet service is "No"). Each is an :meth:`Attribute.derived
    <dpexplore.domain.Attribute.derived>`, several source values merged: partial (``otherwise``:
    the column's other declared categories), or full when it maps every declared category of its
    source (:meth:`~dpexplore.domain.Attribute.declaration` prints it).

    One rule per fixed column, and a source is never fixed itself: a column that nothing fixes
    is a source first; of two columns that fix each other, the one with fewer categories, then
    the earlier one. Rows with a missing value are ignored. A rule found here may be a
    coincidence of this table: declare only those you know (:meth:`Schema.replace
    <dpexplore.domain.Schema.replace>`).

    >>> from dpexplore.domain import Attribute, Schema
    >>> schema = Schema([Attribute.categorical("net", ["DSL", "Fibre", "No"]),
    ...                  Attribute.categorical("security", ["No", "Yes", "No service"])], "y", ["0", "1"])
    >>> real = pd.DataFrame({"net": ["No", "DSL", "Fibre", "No", "DSL"],
    ...                      "security": ["No service", "Yes", "No", "No service", "No"]})
    >>> [rule.declaration() for rule in table_rules(real, schema)]
    ["Attribute.derived('security', 'net', mapping={'No': 'No service'}, otherwise=['No', 'Yes'])"]
    >>> rule_violations(real.assign(security=["No", "Yes", "No", "No service", "No service"]), table_rules(real, schema))
    {'security': 0.4}
    """
    check_schema(schema, taxonomies=False)
    columns = [n for n in schema.predictors if schema[n].kind == "categorical" and schema[n].source is None]
    missing = [c for c in columns if c not in real.columns]
    if missing:
        raise ValueError(f"the table lacks the schema's column(s) {missing}")
    found = {(a, b): rule for a in columns for b in columns if a != b
             for rule in [_rule(real, schema, a, b)] if rule is not None}
    fixed = {b for _, b in found}
    order = sorted(columns, key=lambda n: (n in fixed, len(schema[n].categories), schema.predictors.index(n)))
    rules: dict[str, Attribute] = {}
    for column in order:                         # a column's sources come before it: never fixed later
        for source in order[:order.index(column)]:
            if source not in rules and (source, column) in found:
                rules[column] = found[source, column]
                break
    return [rules[n] for n in schema.predictors if n in rules]


def rule_violations(table: pd.DataFrame, rules: Sequence[Attribute]) -> dict[str, float]:
    """The share of rows of ``table`` (a real or synthetic table) that break each rule (a rule
    column from :meth:`Attribute.derived <dpexplore.domain.Attribute.derived>`, e.g. from
    :func:`table_rules` or :attr:`Schema.rules <dpexplore.domain.Schema.rules>`), by its column:
    :meth:`~dpexplore.domain.Attribute.rule_breaks` (values compared as text). 0.0 for an empty
    table."""
    out = {}
    for rule in rules:
        missing = [c for c in (rule.source, rule.name) if c not in table.columns]
        if missing:
            raise ValueError(f"the table lacks the column(s) {missing} of the rule on {rule.name!r}")
        broken = rule.rule_breaks(table[rule.source], table[rule.name])
        out[rule.name] = float(broken.mean()) if broken.size else 0.0
    return out
