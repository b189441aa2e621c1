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

from ..counts import CountTable, _check_schema
from ..domain import Schema
from ._base import (Problems, Source, bucket_tree, check_columns, engine_error, numeric_edges,
                    raise_first_problem)

_NUMERIC = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
            "UBIGINT", "UHUGEINT", "FLOAT", "DOUBLE", "DECIMAL", "REAL")
_FLOATING = ("FLOAT", "DOUBLE", "REAL")
_counter = itertools.count()
#: errors about a file, the catalog or the SQL text: their messages quote no row
_ROWLESS_ERRORS = (duckdb.IOException, duckdb.CatalogException, duckdb.ParserException, duckdb.BinderException)


def _failure(error: "duckdb.Error", schema: Schema, prefix: str) -> ValueError:
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


def _base_type(t: Any) -> str:
    return str(t).split("(")[0].upper()


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


class DuckDBSource(Source):
    """A table that DuckDB reads: a relation plus, where known, a FROM clause to stream from."""

    engine = "duckdb"

    def __init__(self, relation: "duckdb.DuckDBPyRelation", schema: Schema, *, what: str,
                 connection: "duckdb.DuckDBPyConnection | None" = None, from_clause: str | None = None):
        super().__init__(schema)
        self._rel, self._con, self._from, self._what = relation, connection, from_clause, what
        try:
            columns, types = list(relation.columns), list(relation.types)
        except duckdb.Error as e:
            raise _failure(e, self.schema, f"DuckDB could not read {what}") from None
        check_columns(columns, self.schema, what)
        self._types = {c: _base_type(t) for c, t in zip(columns, types)}

    # ------------------------------------------------------------------ SQL pieces
    def _run(self, sql: str) -> dict[str, np.ndarray]:
        try:
            return self._rel.query("src", sql).fetchnumpy()
        except duckdb.Error as e:
            raise _failure(e, self.schema, f"DuckDB failed on {self._what}") from None

    def _text(self, col: str) -> str:
        """The value as the pandas path matches it: its text (bools as True/False)."""
        c = ident(col)
        if self._types[col] == "BOOLEAN":
            return f"(CASE WHEN {c} THEN 'True' WHEN NOT {c} THEN 'False' END)"
        return f"CAST({c} AS VARCHAR)"

    def _missing(self, col: str) -> str:
        c = ident(col)
        if self._types[col] in _FLOATING:
            return f"({c} IS NULL OR isnan({c}))"
        return f"({c} IS NULL)"

    def _in_list(self, col: str, values: Sequence[str]) -> str:
        return f"{self._text(col)} IN ({', '.join(lit(v) for v in values)})"

    def _is_numeric(self, col: str) -> bool:
        return self._types[col] in _NUMERIC

    def _position(self, col: str, values: Sequence[str]) -> str:
        return f"(list_position([{', '.join(lit(v) for v in values)}]::VARCHAR[], {self._text(col)}) - 1)"

    def _leaf_expr(self, name: str) -> str:
        tax = self.schema[name].taxonomy
        if tax.kind == "categorical":
            return self._position(name, [str(v) for v in tax.leaves])
        v = f"CAST({ident(name)} AS DOUBLE)"
        return bucket_tree(numeric_edges(self.schema, name), 0, tax.n_leaves - 1,
                           le=lambda e: f"{v} <= {dbl(e)}",
                           when=lambda c, a, b: f"(CASE WHEN {c} THEN {a} ELSE {b} END)",
                           const=lambda k: str(int(k)))

    # ------------------------------------------------------------------ checks
    def _validate(self) -> None:
        schema, parts, keys = self.schema, ["count(*)"], [("n", None)]

        def add(kind: str, col: str, cond: str) -> None:
            parts.append(f"count(*) FILTER (WHERE {cond})")
            keys.append((kind, col))

        for name, attr in schema.attributes.items():
            add("missing", name, self._missing(name))
            if attr.kind == "categorical":
                add("unknown", name, f"NOT ({self._in_list(name, attr.categories)})")
            elif self._is_numeric(name):
                v = f"CAST({ident(name)} AS DOUBLE)"
                add("infinite", name, f"isinf({v})")
                add("out_of_range", name, f"({v} < {dbl(attr.lower)} OR {v} > {dbl(attr.upper)})")
        add("missing", schema.target, self._missing(schema.target))
        add("unknown", schema.target, f"NOT ({self._in_list(schema.target, schema.classes)})")
        row = self._run(f"SELECT {', '.join(f'{p} AS k{i}' for i, p in enumerate(parts))} FROM src")
        values = [int(row[f"k{i}"][0]) for i in range(len(parts))]
        problems = Problems(n_rows=values[0])
        problems.non_numeric = {n for n, a in schema.attributes.items() if a.kind == "numeric" and not self._is_numeric(n)}
        for (kind, col), count in zip(keys[1:], values[1:]):
            getattr(problems, kind)[col] = count
        raise_first_problem(problems, schema)

    def _build(self) -> CountTable:
        self._validate()
        schema = self.schema
        exprs = [f"{self._leaf_expr(n)} AS c{i}" for i, n in enumerate(schema.predictors)]
        exprs.append(f"{self._position(schema.target, schema.classes)} AS cls")
        keys = [f"c{i}" for i in range(len(schema.predictors))] + ["cls"]
        sql = (f"SELECT {', '.join(keys)}, count(*) AS n FROM (SELECT {', '.join(exprs)} FROM src) "
               f"GROUP BY {', '.join(keys)} ORDER BY {', '.join(keys)}")
        got = self._run(sql)
        leaves = {n: np.asarray(got[f"c{i}"], dtype=np.int32) for i, n in enumerate(schema.predictors)}
        return CountTable(schema, leaves, np.asarray(got["cls"], dtype=np.int64), np.asarray(got["n"], dtype=np.int64))

    # ------------------------------------------------------------------ streaming
    def _iter_frames(self, batch_rows: int) -> Iterator[pd.DataFrame]:
        try:
            yield from self._batches(batch_rows)
        except duckdb.Error as e:
            raise _failure(e, self.schema, f"DuckDB failed on {self._what}") from None

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
    schema = _check_schema(schema)
    paths = _paths(path_or_glob, kind)
    con = _connection(connection)
    reader = {"csv": "read_csv", "parquet": "read_parquet"}[kind]
    opts = "".join(f", {k} := {_sql_value(v)}" for k, v in options.items())
    from_clause = f"{reader}([{', '.join(lit(p) for p in paths)}]{opts})"
    what = f"{kind} {paths[0] if len(paths) == 1 else paths}"
    try:
        rel = con.sql(f"SELECT * FROM {from_clause}")
    except duckdb.Error as e:  # the CSV sniffer reads rows: its errors may quote them
        raise _failure(e, schema, f"DuckDB could not read {what}") from None
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
    schema = _check_schema(schema)
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
            raise _failure(e, schema, "DuckDB could not run the query") from None
        if rel is None:
            raise ValueError("relation_or_sql must be a query that returns rows (a SELECT), not a statement")
        return DuckDBSource(rel, schema, what="the query", connection=con, from_clause=f"({relation_or_sql}) AS src")
    raise TypeError("relation_or_sql must be a DuckDB relation, an SQL query (str) or a pandas DataFrame, "
                    f"got {type(relation_or_sql).__name__}")
