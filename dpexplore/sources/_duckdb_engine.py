"""The DuckDB engine: CSV (also .gz), Parquet (a glob of files too), SQL queries and relations.

Out of core: the data is never loaded into Python. One aggregate query checks the table against
the schema; one ``GROUP BY`` computes the leaf code of every predictor (a balanced ``CASE`` tree
over the numeric leaf edges, ``list_position`` in the declared leaves for categories) and the
class code, and returns only the occupied cells.

A CSV file is read with the types the schema declares (:func:`declared_csv_types`), never with
the types DuckDB's sniffer would guess from a sample of the rows: a declared category first seen
after the sample would otherwise fail the guessed cast, and refuse a table whose neighbour with
the same record near the top is released. A value outside the declared domain then meets the
same rule wherever it sits in the file.

DuckDB's errors about a file, the catalog or the SQL text are passed on; an error raised while it
reads the rows (a value it cannot convert, a malformed CSV line) quotes the line and its number,
so it is replaced by one naming the column and the rule (:func:`~._base.engine_error`).
"""
from __future__ import annotations

import glob
import itertools
import os
import re
from pathlib import Path
from typing import Any, Iterator, Sequence

import duckdb
import numpy as np
import pandas as pd

from .._validation import rule_message
from ..domain import Schema, check_schema, declared_dtype
from ._backend import ExpressionSource
from ._base import check_columns, engine_error

_NUMERIC = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
            "UBIGINT", "UHUGEINT", "FLOAT", "DOUBLE", "DECIMAL", "REAL")
_FLOATING = ("FLOAT", "DOUBLE", "REAL")
_counter = itertools.count()
#: errors about a file, the catalog or the SQL text: their messages quote no row
_ROWLESS_ERRORS = (duckdb.IOException, duckdb.CatalogException, duckdb.ParserException, duckdb.BinderException)


_COLUMN = r'converting column "([^"]+)"'


def failure(error: "duckdb.Error", schema: Schema, prefix: str, *, declared: bool = False) -> ValueError:
    """The ValueError to raise ``from None`` for a DuckDB error: its text when it quotes no row,
    else the column and the rule only. ``declared``: the rows are read with the schema's types
    (:func:`declared_csv_types`), so a value that fails its column's cast is a non-number in a
    numeric column, and gets that rule's message, word for word as the pandas path says it."""
    if isinstance(error, _ROWLESS_ERRORS):
        return ValueError(f"{prefix}: {error}")
    unreadable = isinstance(error, duckdb.ConversionException)
    if declared and unreadable:
        found = [c for c in re.findall(_COLUMN, str(error)) if c in schema.numeric]
        if found:
            return ValueError(rule_message("non_numeric", found[0]))
    return engine_error(error, prefix, schema, engine="DuckDB", unreadable=unreadable, column_pattern=_COLUMN)


def declared_csv_types(schema: Schema, header: Sequence[str]) -> dict[str, str]:
    """The type DuckDB reads each column of a CSV file as, from the schema alone: DOUBLE for a
    numeric predictor, VARCHAR for everything else (categories, the target, columns the schema
    does not use, so that none of their values can fail a cast). The categories and classes are
    then matched by their text, as the pandas path matches them."""
    numeric = set(schema.numeric)
    return {str(c): "DOUBLE" if c in numeric else "VARCHAR" for c in header}


def ident(name: str) -> str:
    return '"' + str(name).replace('"', '""') + '"'


def lit(text: str) -> str:
    return "'" + str(text).replace("'", "''") + "'"


def dbl(x: float) -> str:
    # repr round-trips, and DuckDB's string → DOUBLE cast is correctly rounded: the same double
    return f"CAST({lit(repr(float(x)))} AS DOUBLE)"


def _kind(duckdb_type: Any) -> str:
    base = str(duckdb_type).split("(")[0].upper()
    return ("float" if base in _FLOATING else "number" if base in _NUMERIC else
            "bool" if base == "BOOLEAN" else "other")


def _paths(path_or_glob: Any, argument: str) -> list[str]:
    """Local paths/globs must match at least one file (remote URLs are left to DuckDB)."""
    items = list(path_or_glob) if isinstance(path_or_glob, (list, tuple)) else [path_or_glob]
    if not items:
        raise ValueError(f"{argument}: give a path, a glob or a list of paths")
    out = []
    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(f"{argument} must be a path, a glob or a list of them, got {type(item).__name__}")
        text = os.fspath(item)
        if "://" not in text:
            found = glob.glob(text) if glob.has_magic(text) else ([text] if Path(text).is_file() else [])
            if not found:
                what = "no file matches the glob" if glob.has_magic(text) else "file not found"
                raise FileNotFoundError(f"{argument}: {what}: {text!r}")
        out.append(text)
    return out


class DuckDBSource(ExpressionSource):
    """A table that DuckDB reads: a relation plus, where known, a FROM clause to stream from.

    Its expressions are SQL text; the checks and the count are
    :class:`~._backend.ExpressionSource`'s."""

    engine = "duckdb"
    engine_errors = (duckdb.Error,)

    def __init__(self, relation: "duckdb.DuckDBPyRelation", schema: Schema, *, what: str,
                 connection: "duckdb.DuckDBPyConnection | None" = None, from_clause: str | None = None,
                 declared: bool = False):
        super().__init__(schema)
        self._rel, self._con, self._from, self._what = relation, connection, from_clause, what
        self._declared = declared    # read with the schema's types (a CSV file: declared_csv_types)
        try:
            columns, types = list(relation.columns), list(relation.types)
        except duckdb.Error as e:
            raise failure(e, self.schema, f"DuckDB could not read {what}") from None
        check_columns(columns, self.schema, what)
        self._kinds = {c: _kind(t) for c, t in zip(columns, types)}

    # ------------------------------------------------------------------ primitives: SQL text
    def column_kinds(self) -> dict[str, str]:
        return self._kinds

    def col(self, name: str) -> str:
        return ident(name)

    def as_double(self, expr: str) -> str:
        return f"CAST({expr} AS DOUBLE)"

    def literal(self, value: int | str) -> str:
        return lit(value) if isinstance(value, str) else str(int(value))

    def double_literal(self, x: float) -> str:
        return dbl(x)

    def _target_dtype(self) -> np.dtype:
        """Read with the schema's types, the target is text: its type is then the declared
        classes' (:func:`~dpexplore.domain.declared_dtype`), else the column's."""
        return declared_dtype(self.schema.classes) if self._declared else super()._target_dtype()

    def text(self, name: str) -> str:
        c = ident(name)
        if self._kinds[name] == "bool":
            return f"(CASE WHEN {c} THEN 'True' WHEN NOT {c} THEN 'False' END)"
        labels = self.schema.classes if name == self.schema.target else getattr(self.schema[name], "categories", None)
        if self._declared and labels and declared_dtype(labels) == bool:   # the spellings DuckDB reads as booleans
            return f"(CASE lower({c}) WHEN 'true' THEN 'True' WHEN 'false' THEN 'False' ELSE {c} END)"
        return f"CAST({c} AS VARCHAR)"

    def is_missing(self, name: str) -> str:
        c = ident(name)
        if self._kinds[name] == "float":
            return f"({c} IS NULL OR isnan({c}))"
        return f"({c} IS NULL)"

    def is_in(self, expr: str, values: Sequence[str]) -> str:
        return f"({expr} IN ({', '.join(lit(v) for v in values)}))"

    def position(self, expr: str, values: Sequence[str]) -> str:
        # list_position is 1-based and NULL when absent
        return f"(coalesce(list_position([{', '.join(lit(v) for v in values)}]::VARCHAR[], {expr}), 0) - 1)"

    def is_infinite(self, expr: str) -> str:
        return f"isinf({expr})"

    def lt(self, a: str, b: str) -> str:
        return f"({a} < {b})"

    def le(self, a: str, b: str) -> str:
        return f"{a} <= {b}"

    def gt(self, a: str, b: str) -> str:
        return f"({a} > {b})"

    def or_(self, a: str, b: str) -> str:
        return f"({a} OR {b})"

    def not_(self, a: str) -> str:
        return f"(NOT {a})"

    def when(self, cond: str, a: str, b: str) -> str:
        return f"(CASE WHEN {cond} THEN {a} ELSE {b} END)"

    def count_all(self) -> str:
        return "count(*)"

    def count_if(self, cond: str) -> str:
        return f"count(*) FILTER (WHERE {cond})"

    def _query(self, sql: str) -> dict[str, np.ndarray]:
        return self._rel.query("src", sql).fetchnumpy()

    def aggregate(self, aggs: Sequence[str]) -> list[int]:
        row = self._query(f"SELECT {', '.join(f'{a} AS k{i}' for i, a in enumerate(aggs))} FROM src")
        return [int(row[f"k{i}"][0]) for i in range(len(aggs))]

    def group_count(self, keys: Sequence[str]) -> np.ndarray:
        names = [f"k{i}" for i in range(len(keys))]
        got = self._query(f"SELECT {', '.join(names)}, count(*) AS n FROM "
                          f"(SELECT {', '.join(f'{k} AS {n}' for k, n in zip(keys, names))} FROM src) "
                          f"GROUP BY {', '.join(names)}")
        return np.column_stack([np.asarray(got[n], dtype=np.int64) for n in names + ["n"]]).reshape(-1, len(keys) + 1)

    def translate_error(self, error: BaseException) -> BaseException:
        return failure(error, self.schema, f"DuckDB failed on {self._what}", declared=self._declared)

    # ------------------------------------------------------------------ streaming
    def _iter_frames(self, batch_rows: int) -> Iterator[pd.DataFrame]:
        try:
            yield from self._batches(batch_rows)
        except duckdb.Error as e:
            raise self.translate_error(e) from None

    def _batches(self, batch_rows: int) -> Iterator[pd.DataFrame]:
        cols = ", ".join(ident(c) for c in self.columns)
        if self._from is None or self._con is None:  # a relation: DuckDB hands rows in batches
            rows = self._rel.query("src", f"SELECT {cols} FROM src").iter_rows()
            while True:
                batch = list(itertools.islice(rows, batch_rows))
                if not batch:
                    return
                yield pd.DataFrame(batch, columns=self.columns)
        cur = self._con.execute(f"SELECT {cols} FROM {self._from}")
        vectors = max(1, batch_rows // 2048)  # DuckDB hands out chunks of 2048 rows
        while True:
            frame = cur.fetch_df_chunk(vectors)
            if len(frame) == 0:
                return
            yield frame


# ====================================================================== constructors
def _connection(connection: Any) -> "duckdb.DuckDBPyConnection":
    if connection is None:
        return duckdb.connect()
    if not isinstance(connection, duckdb.DuckDBPyConnection):
        raise TypeError(f"connection must be a duckdb connection (duckdb.connect()), got {type(connection).__name__}")
    return connection


def from_files(kind: str, path_or_glob: Any, schema: Schema, connection: Any = None, **options: Any) -> DuckDBSource:
    """A source over Parquet or CSV files. A CSV is read with the schema's types
    (:func:`declared_csv_types`; a ``types`` option of the caller's is applied over them), so no
    sample of the rows decides a column's type."""
    schema = check_schema(schema)
    paths = _paths(path_or_glob, kind)
    con = _connection(connection)
    reader = {"csv": "read_csv", "parquet": "read_parquet"}[kind]
    what = f"{kind} {paths[0] if len(paths) == 1 else paths}"

    def relation(opts: dict[str, Any]) -> tuple[str, "duckdb.DuckDBPyRelation"]:
        settings = "".join(f", {k} := {_sql_value(v)}" for k, v in opts.items())
        clause = f"{reader}([{', '.join(lit(p) for p in paths)}]{settings})"
        try:
            return clause, con.sql(f"SELECT * FROM {clause}")
        except duckdb.Error as e:  # the CSV sniffer reads rows: its errors may quote them
            raise failure(e, schema, f"DuckDB could not read {what}") from None

    from_clause, rel = relation(options)
    key = next((k for k in ("types", "dtypes", "column_types") if k in options), "types")
    given = options.get(key, {})
    declared = kind == "csv" and "columns" not in options and isinstance(given, dict)
    if declared:   # the header's names (as the sniffer reads them), then every column as the schema declares it
        try:
            header = list(rel.columns)
        except duckdb.Error as e:
            raise failure(e, schema, f"DuckDB could not read {what}") from None
        types = {**declared_csv_types(schema, header), **given}
        from_clause, rel = relation({**{k: v for k, v in options.items() if k != key}, key: types})
    return DuckDBSource(rel, schema, what=what, connection=con, from_clause=from_clause, declared=declared)


def _sql_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return lit(v)
    if isinstance(v, dict) and all(isinstance(t, str) for t in v.values()):   # e.g. types := {'age': 'DOUBLE'}
        return "{" + ", ".join(f"{lit(k)}: {lit(t)}" for k, t in v.items()) + "}"
    raise TypeError(f"reader option values must be bool, number, text or a {{column: type}} dict, "
                    f"got {type(v).__name__}")


def from_relation(relation_or_sql: Any, schema: Schema, connection: Any = None) -> DuckDBSource:
    schema = check_schema(schema)
    if isinstance(relation_or_sql, duckdb.DuckDBPyRelation):
        return DuckDBSource(relation_or_sql, schema, what="the DuckDB relation", connection=connection)
    if isinstance(relation_or_sql, pd.DataFrame):
        con = _connection(connection)
        name = f"_dpexplore_frame_{next(_counter)}"
        con.register(name, relation_or_sql)
        return DuckDBSource(con.table(name) if hasattr(con, "table") else con.sql(f"SELECT * FROM {ident(name)}"),
                            schema, what="the DataFrame", connection=con, from_clause=ident(name))
    if isinstance(relation_or_sql, str):
        relation_or_sql = relation_or_sql.strip().rstrip(";").strip()
        con = _connection(connection)
        try:
            rel = con.sql(relation_or_sql)
        except duckdb.Error as e:
            raise failure(e, schema, "DuckDB could not run the query") from None
        if rel is None:
            raise ValueError("relation_or_sql must be a query that returns rows (a SELECT), not a statement")
        return DuckDBSource(rel, schema, what="the query", connection=con, from_clause=f"({relation_or_sql}) AS src")
    raise TypeError("relation_or_sql must be a DuckDB relation, an SQL query (str) or a pandas DataFrame, "
                    f"got {type(relation_or_sql).__name__}")
