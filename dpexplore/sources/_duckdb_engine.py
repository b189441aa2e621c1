"""The DuckDB engine: CSV (also .gz), Parquet (a glob of files too), SQL queries and relations.

Out of core: the data is never loaded into Python. One aggregate query checks the table against
the schema; one ``GROUP BY`` computes the leaf code of every predictor (a balanced ``CASE`` tree
over the numeric leaf edges, ``list_position`` in the declared leaves for categories) and the
class code, and returns only the occupied cells.

DuckDB's errors about a file, the catalog or the SQL text are passed on; an error raised while it
reads the rows (a value it cannot convert, a malformed CSV line) quotes the line and its number,
so it is replaced by one naming the column and the rule (:func:`~._base.engine_error`).
"""
from __future__ import annotations

import glob
import itertools
import os
from pathlib import Path
from typing import Any, Iterator, Sequence

import duckdb
import numpy as np
import pandas as pd

from .._validation.schema import check_schema
from ..domain import Schema
from ._backend import ExpressionSource
from ._base import check_columns, engine_error

_NUMERIC = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
            "UBIGINT", "UHUGEINT", "FLOAT", "DOUBLE", "DECIMAL", "REAL")
_FLOATING = ("FLOAT", "DOUBLE", "REAL")
_counter = itertools.count()
#: errors about a file, the catalog or the SQL text: their messages quote no row
_ROWLESS_ERRORS = (duckdb.IOException, duckdb.CatalogException, duckdb.ParserException, duckdb.BinderException)


def failure(error: "duckdb.Error", schema: Schema, prefix: str) -> ValueError:
    """The ValueError to raise ``from None`` for a DuckDB error: its text when it quotes no row,
    else the column and the rule only."""
    if isinstance(error, _ROWLESS_ERRORS):
        return ValueError(f"{prefix}: {error}")
    return engine_error(error, prefix, schema, engine="DuckDB",
                        unreadable=isinstance(error, duckdb.ConversionException),
                        column_pattern=r'converting column "([^"]+)"')


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
                 connection: "duckdb.DuckDBPyConnection | None" = None, from_clause: str | None = None):
        super().__init__(schema)
        self._rel, self._con, self._from, self._what = relation, connection, from_clause, what
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

    def text(self, name: str) -> str:
        c = ident(name)
        if self._kinds[name] == "bool":
            return f"(CASE WHEN {c} THEN 'True' WHEN NOT {c} THEN 'False' END)"
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
        return failure(error, self.schema, f"DuckDB failed on {self._what}")

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
    schema = check_schema(schema)
    paths = _paths(path_or_glob, kind)
    con = _connection(connection)
    reader = {"csv": "read_csv", "parquet": "read_parquet"}[kind]
    opts = "".join(f", {k} := {_sql_value(v)}" for k, v in options.items())
    from_clause = f"{reader}([{', '.join(lit(p) for p in paths)}]{opts})"
    what = f"{kind} {paths[0] if len(paths) == 1 else paths}"
    try:
        rel = con.sql(f"SELECT * FROM {from_clause}")
    except duckdb.Error as e:  # the CSV sniffer reads rows: its errors may quote them
        raise failure(e, schema, f"DuckDB could not read {what}") from None
    return DuckDBSource(rel, schema, what=what, connection=con, from_clause=from_clause)


def _sql_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return lit(v)
    raise TypeError(f"reader option values must be bool, number or text, got {type(v).__name__}")


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
