"""Where the private table lives: engines that build its CountTable in one pass, in place.

Each function returns a :class:`Source` (``.schema``, ``.engine``, ``.count_table()`` built once
and cached, ``.iter_frames(batch_rows)`` to stream rows for evaluation). The target column is
``schema.target``; the leaf codes are computed by the engine from the public schema, exactly as
``Schema.leaf_codes`` computes them, and bad values raise the same errors as ``fit(X, y, schema)``
before anything is counted. The same table gives the same CountTable from every engine.
Count once, release many: every later fit of any method on the source reuses its count table;
a view under a coarser or smaller public schema (``with_schema``) is aggregated from it when
that is exact, and otherwise counted once and kept.

>>> src = sources.parquet("people-*.parquet", schema)      # doctest: +SKIP
>>> table = src.count_table()                              # doctest: +SKIP

Engines are imported on first use: DuckDB (a main dependency) and PySpark (the ``[spark]``
extra, with Java) load only when asked for.
"""
from __future__ import annotations

from typing import Any

from ._base import Source

__all__ = ["Source", "pandas", "csv", "parquet", "duckdb", "spark", "local_spark_session"]


def pandas(frame: Any, schema: Any) -> Source:
    """A pandas DataFrame in memory (predictors + the target column); counted with NumPy.

    Examples
    --------
    >>> from dpexplore import datasets, sources
    >>> frame, schema = datasets.make_synthetic(n_samples=100, n_numeric=1, n_categorical=1,
    ...                                         random_state=0)
    >>> table = sources.pandas(frame, schema).count_table()
    >>> int(table.counts.sum())                            # every record lands in one cell
    100
    """
    from ._pandas_engine import PandasSource
    return PandasSource(frame, schema)


def csv(path_or_glob: Any, schema: Any, *, connection: Any = None, **read_options: Any) -> Source:
    """CSV file(s) read by DuckDB out of core: a path, a glob (``"part-*.csv"``) or a list.

    Every column is read with the type the schema declares (numbers as DOUBLE, categories and
    classes as text), never with the type DuckDB would guess from a sample of the rows: a record
    changes nothing but its own cell, wherever it sits in the file, and a value outside the
    declared domain meets the same rule (and message) at line 2 as at line 2,000,000. The
    fitted classes come back in the declared classes' type (``0, 1`` as integers). Compressed
    ``.csv.gz`` works. ``read_options`` go to DuckDB's ``read_csv`` (e.g. ``delim=";"``,
    ``header=True``, ``nullstr="?"``; a ``types={column: type}`` dict overrides the declared
    type of the columns it names).
    """
    from ._duckdb_engine import from_files
    return from_files("csv", path_or_glob, schema, connection, **read_options)


def parquet(path_or_glob: Any, schema: Any, *, connection: Any = None) -> Source:
    """Parquet file(s) read by DuckDB out of core: a path, a glob or a list of paths."""
    from ._duckdb_engine import from_files
    return from_files("parquet", path_or_glob, schema, connection)


def duckdb(relation_or_sql: Any, schema: Any, connection: Any = None) -> Source:
    """A DuckDB relation, an SQL query (run on ``connection``, default a new in-memory database)
    or a pandas DataFrame scanned by DuckDB."""
    from ._duckdb_engine import from_relation
    return from_relation(relation_or_sql, schema, connection)


def spark(spark_dataframe: Any, schema: Any) -> Source:
    """A PySpark DataFrame; the checks and the group-by run on the executors.

    Needs PySpark (``pip install 'dpexplore[spark]'``) and Java; a stopped session is refused.
    """
    from ._spark_engine import SparkSource
    return SparkSource(spark_dataframe, schema)


def local_spark_session(app_name: str = "dpexplore", master: str = "local[*]", **conf: Any) -> Any:
    """A SparkSession on this machine (UI off), or a clear error when PySpark or Java is missing."""
    from ._spark_engine import local_session
    return local_session(app_name, master, **conf)
