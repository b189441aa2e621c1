"""One declared backend interface: what an engine that runs expressions where the data lives
must provide, and what is written once for every such engine.

:class:`ExpressionSource` writes, once, the checks of the pandas path (:meth:`~ExpressionSource._validate`:
one aggregate of rule violations, then :func:`~._base.raise_first_problem`), a value's leaf code
(:meth:`~ExpressionSource.leaf_expr`), and the count itself (:meth:`~ExpressionSource._build`:
one group-by of (leaf codes × class) that also checks every record, see below). An engine
implements only the primitives declared abstract here: how to name a column, cast it, compare,
branch, count and run, in its own expression language (SQL text for DuckDB, Column objects
for Spark). A new engine is one subclass with these primitives and the parity tests of
tests/test_sources.py (CONTRIBUTING.md, "Adding an engine").

One scan counts and checks: each group-by key is the leaf code, or a negative code for the
rule a value breaks (:data:`MISSING`, :data:`UNKNOWN`, :data:`INFINITE`, :data:`OUT_OF_RANGE`).
The rule counts of the checking aggregate are sums over those codes, so the error raised, and
its message, is the one the checking aggregate (and ``Schema.validate``) gives; only when all
are zero is the table returned. A numeric attribute whose column is not numeric at all is known
from the column types, before any scan: the checking aggregate then raises the pandas path's
first error. Tables under other schemas with the same public domains are counted in the same
group-by by counting at their common refinement (:func:`~._tables.refinement`): the records it
accepts are the ones they accept.
"""
from __future__ import annotations

import abc
from typing import Any, Callable, Sequence, TypeVar

import numpy as np

from ..counts import CountTable, leaf_labels
from ._base import Problems, Source, bucket_tree, numeric_edges, raise_first_problem

__all__ = ["ExpressionSource"]

Expr = Any          # an engine's expression: SQL text (DuckDB), a Column (Spark)
T = TypeVar("T")

#: codes of a value that breaks a rule (leaf codes are ≥ 0): missing, not a declared category or
#: class, infinite, outside the public range
MISSING, UNKNOWN, INFINITE, OUT_OF_RANGE = -2, -1, -3, -4
#: column kinds (:meth:`ExpressionSource.column_kinds`) the pandas path counts as numeric
NUMBER_KINDS = frozenset({"float", "number"})


def cell_problems(schema: Any, codes: np.ndarray, counts: np.ndarray) -> Problems:
    """The rule counts of :class:`~._base.Problems` from a checking group-by: ``codes`` (one
    column per predictor, then the class) with the negative codes above, ``counts`` per row."""
    problems = Problems(n_rows=int(counts.sum()))
    names = schema.predictors + [schema.target]
    for j, name in enumerate(names):
        c = codes[:, j]

        def total(mask: np.ndarray) -> int:
            return int(counts[mask].sum())

        problems.missing[name] = total(c == MISSING)
        if name == schema.target:
            problems.unknown[name] = total(c == UNKNOWN)
        elif schema[name].kind == "categorical":   # a leaf that is not a declared category is unknown
            declared = np.isin(np.asarray(schema[name].taxonomy.leaves, dtype=str),
                               np.asarray(schema[name].categories, dtype=str))
            problems.unknown[name] = total((c == UNKNOWN) | ((c >= 0) & ~declared[np.maximum(c, 0)]))
        else:
            problems.infinite[name] = total(c == INFINITE)
            problems.out_of_range[name] = total((c == INFINITE) | (c == OUT_OF_RANGE))
    columns = dict(zip(names, codes.T))
    involved = [*schema.rules, *schema.rules.values()]
    readable = np.all([columns[n] >= 0 for n in involved], axis=0) if involved else np.ones(len(counts), bool)
    labels = leaf_labels(schema, {n: columns[n][readable] for n in involved})
    for name, broken in schema.rule_breaks(labels).items():
        problems.rules[name] = int(counts[readable][broken].sum())
    return problems


class ExpressionSource(Source):
    """A source whose engine evaluates expressions where the data lives (as PipelineDP's
    ``PipelineBackend`` or Ibis's ``BaseBackend``): the checks, the leaf codes and the count are
    written here once, over the primitives each engine implements."""

    #: the engine's own exception types: raised while a query runs, they go through
    #: :meth:`translate_error` (the engine's text may quote private rows)
    engine_errors: tuple[type[BaseException], ...] = ()

    def _target_dtype(self) -> np.dtype:
        """From :meth:`column_kinds` (the column's type in the engine): integers and other exact
        numbers int64 (classes that are not whole numbers stay text, see
        :func:`dpexplore.domain.class_values`), floating point float64, booleans bool, else text."""
        kind = self.column_kinds()[self.schema.target]
        return np.dtype({"number": np.int64, "float": np.float64, "bool": bool}.get(kind, object))

    # ------------------------------------------------------------------ primitives (per engine)
    @abc.abstractmethod
    def column_kinds(self) -> dict[str, str]:
        """Per column of the table: "float" (floating point, may hold NaN), "number" (other
        numeric types), "bool" or "other", from the column types (public)."""

    @abc.abstractmethod
    def col(self, name: str) -> Expr:
        """The column ``name``."""

    @abc.abstractmethod
    def as_double(self, expr: Expr) -> Expr:
        """``expr`` cast to a double."""

    @abc.abstractmethod
    def literal(self, value: int | str) -> Expr:
        """An integer or text constant."""

    @abc.abstractmethod
    def double_literal(self, x: float) -> Expr:
        """The double ``x`` exactly (the same bits as in Python)."""

    @abc.abstractmethod
    def text(self, name: str) -> Expr:
        """The column's values as the pandas path matches them against categories: their text,
        booleans as "True"/"False"; NULL stays NULL."""

    @abc.abstractmethod
    def is_missing(self, name: str) -> Expr:
        """True where the value is NULL (or NaN in a floating-point column)."""

    @abc.abstractmethod
    def is_in(self, expr: Expr, values: Sequence[str]) -> Expr:
        """True where ``expr`` is one of the texts ``values``."""

    @abc.abstractmethod
    def position(self, expr: Expr, values: Sequence[str]) -> Expr:
        """0-based position of ``expr`` in the texts ``values``, −1 when absent."""

    @abc.abstractmethod
    def is_infinite(self, expr: Expr) -> Expr:
        """True where the double ``expr`` is +∞ or −∞."""

    @abc.abstractmethod
    def lt(self, a: Expr, b: Expr) -> Expr:
        """a < b"""

    @abc.abstractmethod
    def le(self, a: Expr, b: Expr) -> Expr:
        """a ≤ b"""

    @abc.abstractmethod
    def gt(self, a: Expr, b: Expr) -> Expr:
        """a > b"""

    @abc.abstractmethod
    def or_(self, a: Expr, b: Expr) -> Expr:
        """a or b"""

    @abc.abstractmethod
    def not_(self, a: Expr) -> Expr:
        """not a"""

    @abc.abstractmethod
    def when(self, cond: Expr, a: Expr, b: Expr) -> Expr:
        """``a`` where ``cond`` is true, else ``b`` (a NULL condition counts as false)."""

    @abc.abstractmethod
    def count_all(self) -> Expr:
        """The aggregate: number of rows."""

    @abc.abstractmethod
    def count_if(self, cond: Expr) -> Expr:
        """The aggregate: number of rows where ``cond`` is true (0 for none)."""

    @abc.abstractmethod
    def aggregate(self, aggs: Sequence[Expr]) -> list[int]:
        """Evaluate the aggregates over the whole table, in one query."""

    @abc.abstractmethod
    def group_count(self, keys: Sequence[Expr]) -> np.ndarray:
        """One group-by over the integer ``keys``: an int64 array with one row per occupied key
        tuple, the keys then the number of rows (any order)."""

    @abc.abstractmethod
    def translate_error(self, error: BaseException) -> BaseException:
        """The exception to raise, ``from None``, for an engine error raised by a query: the
        engine's own when its text quotes no row, else :func:`~._base.engine_error`."""

    def ensure_alive(self) -> None:
        """Raise a clear error when the engine can no longer run queries (default: it can)."""

    # ------------------------------------------------------------------ written once
    def run(self, action: Callable[[], T]) -> T:
        """Run a query (``action``) with the engine's errors translated (:meth:`translate_error`)."""
        self.ensure_alive()
        try:
            return action()
        except self.engine_errors as error:
            raise self.translate_error(error) from None

    def non_numeric(self) -> set[str]:
        """The numeric attributes whose column type is not numeric (booleans included)."""
        kinds = self.column_kinds()
        return {n for n, a in self.schema.attributes.items() if a.kind == "numeric" and kinds[n] not in NUMBER_KINDS}

    def leaf_expr(self, name: str) -> Expr:
        """The taxonomy leaf code of the column's value, as ``Taxonomy.leaf_codes`` gives it:
        the position of its text among the leaves (categorical), the number of inner leaf
        edges below it (numeric: a balanced tree of comparisons, :func:`~._base.bucket_tree`)."""
        tax = self.schema[name].taxonomy
        if tax.kind == "categorical":
            return self.position(self.text(name), [str(v) for v in tax.leaves])
        v = self.as_double(self.col(name))
        return bucket_tree(numeric_edges(self.schema, name), 0, tax.n_leaves - 1,
                           le=lambda e: self.le(v, self.double_literal(e)), when=self.when, const=self.literal)

    def _out_of_range(self, name: str) -> Expr:
        attr, v = self.schema[name], self.as_double(self.col(name))
        return self.or_(self.lt(v, self.double_literal(attr.lower)), self.gt(v, self.double_literal(attr.upper)))

    def checked_leaf_expr(self, name: str) -> Expr:
        """:meth:`leaf_expr`, or the code of the first rule the value breaks: MISSING; numeric:
        INFINITE, OUT_OF_RANGE (categorical: UNKNOWN is read from the leaf, :func:`cell_problems`)."""
        code = self.leaf_expr(name)
        if self.schema[name].kind == "numeric":
            v = self.as_double(self.col(name))
            code = self.when(self.is_infinite(v), self.literal(INFINITE),
                             self.when(self._out_of_range(name), self.literal(OUT_OF_RANGE), code))
        return self.when(self.is_missing(name), self.literal(MISSING), code)

    def class_expr(self, checked: bool = True) -> Expr:
        """Position of the target's text in the declared classes (UNKNOWN when absent); with
        ``checked``, MISSING for a missing label."""
        target = self.schema.target
        code = self.position(self.text(target), list(self.schema.classes))
        return self.when(self.is_missing(target), self.literal(MISSING), code) if checked else code

    def _and(self, a: Expr, b: Expr) -> Expr:
        """a and b (from the primitives: not (not a or not b))."""
        return self.not_(self.or_(self.not_(a), self.not_(b)))

    def rule_broken(self, name: str) -> Expr:
        """True where the row breaks the partial rule of ``name`` (:meth:`~dpexplore.domain.Attribute.rule_breaks`):
        its source has a mapped value and the column another label, or its source is free and
        the column holds a mapped label."""
        attr = self.schema[name]
        source, column = self.text(attr.source), self.text(name)
        broken = self._and(self.not_(self.is_in(source, list(attr.rule["mapping"]))),
                           self.is_in(column, list(attr.fixing_values)))
        for label, keys in attr.fixing_values.items():
            broken = self.or_(broken, self._and(self.is_in(source, keys), self.not_(self.is_in(column, [label]))))
        return broken

    def _validate(self) -> None:
        """One aggregate: how many values break each rule of the schema; then the pandas path's
        first error, word for word (:func:`~._base.raise_first_problem`)."""
        self.ensure_alive()   # before building any expression (Spark needs a live context for that)
        schema, non_numeric = self.schema, self.non_numeric()
        aggs, keys = [self.count_all()], [("n", "")]

        def add(kind: str, col: str, cond: Expr) -> None:
            aggs.append(self.count_if(cond))
            keys.append((kind, col))

        for name, attr in schema.attributes.items():
            add("missing", name, self.is_missing(name))
            if attr.kind == "categorical":
                add("unknown", name, self.not_(self.is_in(self.text(name), attr.categories)))
            elif name not in non_numeric:
                add("infinite", name, self.is_infinite(self.as_double(self.col(name))))
                add("out_of_range", name, self._out_of_range(name))
        for name in schema.rules:
            add("rules", name, self.rule_broken(name))
        add("missing", schema.target, self.is_missing(schema.target))
        add("unknown", schema.target, self.not_(self.is_in(self.text(schema.target), schema.classes)))
        values = self.run(lambda: self.aggregate(aggs))
        problems = Problems(n_rows=values[0], non_numeric=non_numeric)
        for (kind, col), count in zip(keys[1:], values[1:]):
            getattr(problems, kind)[col] = count
        raise_first_problem(problems, schema)

    def _build(self) -> CountTable:
        """One group-by of (leaf codes × class) that checks every record on the way (the rule
        codes above), unless a table already built by this source checked the same public
        domains (then the plain leaf codes)."""
        self.ensure_alive()
        schema = self.schema
        if self.non_numeric():   # known from the column types: the checking aggregate raises
            self._validate()     # the pandas path's first error (a non-numeric column is one)
        checked = not self._tables.checks_hold(schema)
        leaf = self.checked_leaf_expr if checked else self.leaf_expr
        keys = [leaf(n) for n in schema.predictors] + [self.class_expr(checked)]
        cells = self.run(lambda: self.group_count(keys))
        d, counts = len(schema.predictors), cells[:, -1]
        codes = {n: cells[:, j] for j, n in enumerate(schema.predictors)}
        if checked:
            raise_first_problem(cell_problems(schema, cells[:, :d + 1], counts), schema)
        return CountTable(schema, codes, cells[:, d], counts)
