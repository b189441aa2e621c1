"""What every engine shares: the Source object and the pandas path's checks, in its order.

An engine computes, where the data lives, how many values break each rule of the schema
(missing, outside the declared categories, non-numeric, infinite, outside the public range,
unknown class); :func:`raise_first_problem` then raises the error that
``Schema.validate(X, y)`` would raise on the same table, with the same message. No count table
is returned, and nothing released, before that. The engines that run expressions share one
implementation of these checks and of the count (:mod:`dpexplore.sources._backend`).

Messages leave the place where the data lives: they name the column and the rule
(:func:`dpexplore._validation.rule_message`, one wording for every engine), never a value, a line
or a count. An engine's own error raised while it reads the private rows (a CSV line DuckDB
cannot convert, a Spark cast) quotes them, so it is replaced by :func:`engine_error`, chained
``from None``.
"""
from __future__ import annotations

import abc
import copy
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import pandas as pd

from .._validation import CHECK_TABLE_HINT, rule_message
from ..counts import CountTable
from ..domain import Schema, check_schema
from ..limits import DEFAULT_BATCH_ROWS
from ._tables import CountCache
from .bins import default_bins

__all__ = ["Source", "Problems", "raise_first_problem", "engine_error", "check_columns", "numeric_edges",
           "bucket_tree", "DEFAULT_BATCH_ROWS"]


@dataclass
class Problems:
    """Per-column counts of rule violations (private numbers: only their being > 0 is used)."""

    n_rows: int
    missing: dict[str, int] = field(default_factory=dict)      # predictors and target
    non_numeric: set[str] = field(default_factory=set)          # numeric attributes, by column type
    infinite: dict[str, int] = field(default_factory=dict)
    out_of_range: dict[str, int] = field(default_factory=dict)
    unknown: dict[str, int] = field(default_factory=dict)       # categories; the target: classes
    rules: dict[str, int] = field(default_factory=dict)         # rows breaking a column's rule (Schema.rules)


def raise_first_problem(problems: Problems, schema: Schema) -> None:
    """Raise what ``Schema.validate(X, y)`` raises first, word for word: the column and the
    rule (:func:`~dpexplore._validation.rule_message`), never a value."""
    if problems.n_rows == 0:
        raise ValueError(rule_message("empty"))
    nan_cols = [n for n in schema.predictors if problems.missing.get(n, 0)]
    if nan_cols:
        raise ValueError(rule_message("missing", nan_cols))
    for name, attr in schema.attributes.items():
        if attr.kind == "categorical":
            if problems.unknown.get(name, 0):
                raise ValueError(rule_message("category", name))
            continue
        if name in problems.non_numeric:
            raise ValueError(rule_message("non_numeric", name))
        if problems.infinite.get(name, 0):
            raise ValueError(rule_message("infinite", name))
        if problems.out_of_range.get(name, 0):
            raise ValueError(rule_message("range", name, lower=attr.lower, upper=attr.upper))
    for name in schema.rules:
        if problems.rules.get(name, 0):
            raise ValueError(rule_message("rule", name, statement=schema[name].rule_text()))
    if problems.missing.get(schema.target, 0):
        raise ValueError(rule_message("missing_label", "y"))
    if problems.unknown.get(schema.target, 0):
        raise ValueError(rule_message("class", schema.target, classes=schema.classes))


def engine_error(error: BaseException, prefix: str, schema: Schema, *, engine: str,
                 unreadable: bool = False, column_pattern: str | None = None) -> ValueError:
    """The error to raise, ``from None``, when ``engine`` fails while reading the private rows:
    ``prefix`` (what failed) and the column and the rule, never the engine's own text (it may
    quote a private line, its number or a value).

    ``unreadable``: the failure is a value the engine could not convert to its column's type;
    ``column_pattern`` (a regular expression with one group) finds the column in the engine's
    text, and only one of the schema's columns (public names) is ever repeated.
    """
    if not unreadable:
        return ValueError(f"{prefix} ({type(error).__name__}; the engine's message is withheld because it may "
                          f"quote private rows). {CHECK_TABLE_HINT}")
    columns = schema.predictors + [schema.target]
    found = [m for m in re.findall(column_pattern, str(error)) if m in columns] if column_pattern else []
    return ValueError(f"{prefix}: " + rule_message("unreadable", found[0] if found else None, engine=engine))


def check_columns(columns: list[str], schema: Schema, what: str) -> None:
    """Every predictor and the target must be columns of the table (extra columns are fine)."""
    needed = schema.predictors + [schema.target]
    missing = [c for c in needed if c not in columns]
    if missing:
        shown = columns[:30] + (["..."] if len(columns) > 30 else [])
        raise ValueError(f"{what} lacks column(s) {missing} that the schema declares (predictors and "
                         f"target {schema.target!r}); its columns are {shown}")


def numeric_edges(schema: Schema, name: str) -> list[float]:
    """Inner leaf edges e_1..e_{L-1} of a numeric taxonomy: leaf code = #{inner edges < value}.

    This is ``Taxonomy.leaf_codes``: searchsorted(edges, v, side="left") - 1, clipped to
    0..L-1, i.e. leaves (e_k, e_k+1], the first one closed at the lower bound.
    """
    tax = schema[name].taxonomy
    return [float(e) for e in tax.edges(tax.height - 1)[1:-1]]


def bucket_tree(edges: list[float], lo: int, hi: int, le: Callable[[float], Any],
                when: Callable[[Any, Any, Any], Any], const: Callable[[int], Any]) -> Any:
    """A balanced CASE tree giving the leaf code in lo..hi: code ≤ mid ⇔ value ≤ e_{mid+1}.

    ``le(e)`` builds "value <= e", ``when(cond, a, b)`` a conditional, ``const(k)`` a literal:
    the same tree is rendered as SQL text (DuckDB) or as Spark Column expressions.
    """
    if lo == hi:
        return const(lo)
    mid = (lo + hi) // 2
    return when(le(edges[mid]), bucket_tree(edges, lo, mid, le, when, const),
                bucket_tree(edges, mid + 1, hi, le, when, const))


class Source(abc.ABC):
    """A private table where it lives, with its public schema.

    ``count_table()`` builds the :class:`~dpexplore.counts.CountTable` once (one group-by in
    the engine, which also checks every record against the schema) and caches it; the source and
    its :meth:`with_schema` views share one cache, so every later fit of any method on them
    reuses it (count once, release many). ``iter_frames`` streams the rows as pandas DataFrames
    (predictors + target) for evaluation on big test sets. The repr shows the engine and the
    schema only: the record count is private.
    """

    engine: str = "?"

    def __init__(self, schema: Schema):
        self.schema = check_schema(schema)
        self._count_table: CountTable | None = None
        self._tables = CountCache()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(engine={self.engine!r}, {self.schema!r})"

    @property
    def columns(self) -> list[str]:
        """The predictors and the target, in schema order."""
        return self.schema.predictors + [self.schema.target]

    @property
    def target_like(self) -> np.ndarray:
        """An empty array in the type of the target column: int64, float64, bool, or object for
        text (and any type an engine cannot map). Read from the column's declared type in the
        engine, never from its values: public format information, so that ``classes_``,
        predictions and synthetic targets come back in the type of the caller's labels
        (:func:`dpexplore.domain.class_values`)."""
        return np.empty(0, dtype=self._target_dtype())

    def _target_dtype(self) -> np.dtype:
        """The NumPy dtype of the target column's type (engines override; default: text)."""
        return np.dtype(object)

    def count_table(self, along: Sequence[Schema] = ()) -> CountTable:
        """The exact counts over occupied (leaf codes × class) cells (built once, cached).

        Raises the pandas path's ValueError (same message) for missing values, values outside
        the public domain, unknown categories or classes, before anything is built. A table
        under a schema this source (or a view of it) has counted before is not counted again;
        under a coarser or smaller one it is aggregated from the finer table when that is exact.

        ``along``: public schemas of views (:meth:`with_schema`) whose tables a later step will
        ask for. When this table needs a scan, that scan counts at the common refinement of this
        schema, those and the public equal-width bins (:func:`~dpexplore.sources.bins.default_bins`,
        which a projected histogram fitted later counts): each of their tables is then
        aggregated from it, without another scan (:meth:`CountCache.get_along`).
        """
        if self._count_table is None:
            along = [self._view_schema(s) for s in along] + default_bins(self.schema)
            self._count_table = self._tables.get_along(self.schema, along, self._scan)
        return self._count_table

    def _scan(self, schema: Schema) -> CountTable:
        """:meth:`_build` under ``schema`` (this schema or a finer one with its public domains)."""
        return self._build() if schema is self.schema else self.with_schema(schema)._build()

    def _view_schema(self, schema: Schema) -> Schema:
        """``schema`` checked as :meth:`with_schema` checks it: the same target, a subset of the predictors."""
        schema = check_schema(schema)
        if schema.target != self.schema.target or not set(schema.predictors) <= set(self.schema.predictors):
            raise ValueError("with_schema needs the same target and a subset of the source's predictors")
        return schema

    def with_schema(self, schema: Schema) -> "Source":
        """The same data and engine under another public schema (e.g. a method's own bins).

        The view shares this source's count tables: its own is derived from one already built
        when the schema is that one or coarser (a subset of the predictors, leaves that are
        unions of the built leaves, the same public domains), else counted once by the engine
        and kept. The schema must have the same target and a subset of the predictors."""
        schema = self._view_schema(schema)
        view = copy.copy(self)   # shares the engine's handle and the cache
        view.schema, view._count_table = schema, None
        return view

    def validate(self) -> None:
        """Check the table against the schema (one aggregate where the data lives)."""
        self._validate()

    def iter_frames(self, batch_rows: int = DEFAULT_BATCH_ROWS) -> Iterator[pd.DataFrame]:
        """The rows (predictors + target columns) as DataFrames of about ``batch_rows`` rows."""
        if isinstance(batch_rows, bool) or not isinstance(batch_rows, int) or batch_rows < 1:
            raise ValueError(f"batch_rows must be a positive integer, got {batch_rows!r}")
        return self._iter_frames(batch_rows)

    # every engine implements these three (engines that run expressions where the data lives
    # get the first two from dpexplore.sources._backend.ExpressionSource)
    @abc.abstractmethod
    def _validate(self) -> None:
        """Raise the pandas path's ValueError for any row the schema does not allow."""

    @abc.abstractmethod
    def _build(self) -> CountTable:
        """One group-by over (leaf codes × class) where the data lives, after the checks."""

    @abc.abstractmethod
    def _iter_frames(self, batch_rows: int) -> Iterator[pd.DataFrame]:
        """Stream the predictors and the target in batches of about ``batch_rows`` rows."""
