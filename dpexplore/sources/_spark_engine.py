"""The Spark engine: a PySpark DataFrame; the checks and the group-by run on the executors.

Leaf codes are Column expressions built from the public schema (a balanced ``when`` tree over
the numeric leaf edges, ``array_position`` in the declared leaves for categories); only the
occupied cells come back to the driver.

Spark's errors while it reads the rows (a cast under ANSI mode, a malformed CSV record in
FAILFAST mode) quote the private value or record: they are replaced by one naming the column and
the rule (:func:`~._base.engine_error`); analysis errors (about columns and types) are passed on.
"""
from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
import threading
from typing import Any, Iterator

import numpy as np
import pandas as pd

from ..counts import CountTable
from ..domain import Schema
from ._base import (Problems, Source, bucket_tree, check_columns, engine_error, numeric_edges,
                    raise_first_problem)

INSTALL_HINT = "install it with: pip install 'dpexplore[spark]'"
JAVA_HINT = ("Spark needs Java: install OpenJDK 17 (e.g. apt-get install openjdk-17-jre-headless) "
             "or set JAVA_HOME to a Java installation")


def _pyspark():
    try:
        import pyspark  # noqa: F401
        from pyspark.sql import DataFrame, functions as F, types as T
    except ImportError:
        raise ImportError(f"dpexplore.sources.spark needs PySpark; {INSTALL_HINT}") from None
    return DataFrame, F, T


def find_java() -> str | None:
    """Path of the java executable Spark would start (JAVA_HOME first, then PATH), or None."""
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = os.path.join(home, "bin", "java")
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("java")


# Spark's start-up chatter on the JVM's stderr, which a notebook stores as pink warning boxes:
# log4j's WARN lines go with an ERROR-level configuration (below); the JVM's own
# "WARNING: Using incubator modules" line (Spark 4 loads jdk.incubator.vector) has no switch.
_LOG4J2 = """status = error
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n
logger.repl.name = org.apache.spark.repl.Main
logger.repl.level = error
"""
_STARTUP_NOISE = re.compile(r"^(WARNING: Using incubator modules|Setting default log level to|"
                            r"To adjust logging level use sc\.setLogLevel)")


def _log4j2_file() -> str:
    path = os.path.join(tempfile.gettempdir(), "dpexplore-spark-log4j2.properties")
    try:
        with open(path) as f:
            current = f.read()
    except OSError:  # not written yet
        current = None
    if current != _LOG4J2:
        with open(path, "w") as f:
            f.write(_LOG4J2)
    return path


def _filtered_stderr() -> tuple[int, int] | None:
    """Point fd 2 at a pipe whose lines, except the JVM's start-up noise, go on to the old fd 2.

    The JVM started meanwhile inherits the pipe for its lifetime; a daemon thread forwards its
    output. Returns ``(saved_fd, write_end)`` to hand to :func:`_restore_stderr`, or None when
    fd 2 cannot be redirected (e.g. no real stderr).
    """
    try:
        sys.stderr.flush()
        saved = os.dup(2)
        read_end, write_end = os.pipe()
        os.dup2(write_end, 2)
    except (OSError, ValueError):
        return None
    forward = os.dup(saved)

    def pump() -> None:   # until the last writer (the JVM) exits
        try:
            with os.fdopen(read_end, "rb") as pipe:
                for line in pipe:
                    if not _STARTUP_NOISE.match(line.decode(errors="replace")):
                        os.write(forward, line)
        finally:
            os.close(forward)
    threading.Thread(target=pump, name="dpexplore-spark-stderr", daemon=True).start()
    return saved, write_end


def _restore_stderr(handles: tuple[int, int] | None) -> None:
    if handles is not None:
        saved, write_end = handles
        os.dup2(saved, 2)
        os.close(saved)
        os.close(write_end)


def local_session(app_name: str = "dpexplore", master: str = "local[*]", **conf: Any):
    """A SparkSession on this machine (UI off, few shuffle partitions), with clear errors when
    PySpark or Java is missing. ``conf`` entries are Spark settings, e.g.
    ``{"spark.driver.memory": "4g"}`` (pass them as ``**{...}``)."""
    _pyspark()
    if find_java() is None:
        raise RuntimeError(f"Java was not found. {JAVA_HINT}")
    from pyspark.sql import SparkSession
    builder = SparkSession.builder.appName(app_name).master(master)
    settings = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "4",
                "spark.ui.showConsoleProgress": "false"}
    settings.update({k: str(v) for k, v in conf.items()})
    quiet = f"-Dlog4j2.configurationFile=file:{_log4j2_file()}"   # errors only, no start-up WARNs
    java = settings.get("spark.driver.extraJavaOptions", "")
    if "log4j2.configurationFile" not in java:
        settings["spark.driver.extraJavaOptions"] = f"{quiet} {java}".strip()
    for k, v in settings.items():
        builder = builder.config(k, v)
    handles = _filtered_stderr()
    try:
        return builder.getOrCreate()
    except Exception as e:  # the JVM did not start (pyspark raises its own runtime errors)
        raise RuntimeError(f"Spark could not start: {e}. {JAVA_HINT}") from e
    finally:
        _restore_stderr(handles)


def _check_alive(frame: Any) -> None:
    session = frame.sparkSession
    sc = getattr(session, "_sc", None)
    if sc is not None and getattr(sc, "_jsc", None) is None:
        raise RuntimeError("the SparkSession of this DataFrame has been stopped; start a session "
                           "(SparkSession.builder.getOrCreate() or dpexplore.sources.local_spark_session()) "
                           "and build the DataFrame again")


class SparkSource(Source):
    """A PySpark DataFrame holding the predictors and the target column ``schema.target``."""

    engine = "spark"

    def __init__(self, frame: Any, schema: Schema):
        DataFrame, F, T = _pyspark()
        super().__init__(schema)
        if not isinstance(frame, DataFrame):
            hint = " (turn a pandas DataFrame into one with spark.createDataFrame(frame))" \
                if isinstance(frame, pd.DataFrame) else ""
            raise TypeError(f"spark_dataframe must be a PySpark DataFrame, got {type(frame).__name__}{hint}")
        _check_alive(frame)
        self._df, self._F, self._T = frame, F, T
        fields = {f.name: f.dataType for f in frame.schema.fields}
        check_columns(list(fields), self.schema, "the Spark DataFrame")
        self._types = fields

    # ------------------------------------------------------------------ expressions
    def _is_numeric(self, col: str) -> bool:
        return isinstance(self._types[col], self._T.NumericType)

    def _text(self, col: str):
        F = self._F
        c = F.col(f"`{col}`")
        if isinstance(self._types[col], self._T.BooleanType):
            return F.when(c, F.lit("True")).when(~c, F.lit("False"))
        return c.cast("string")

    def _missing(self, col: str):
        F = self._F
        c = F.col(f"`{col}`")
        if isinstance(self._types[col], (self._T.FloatType, self._T.DoubleType)):
            return c.isNull() | F.isnan(c)
        return c.isNull()

    def _position(self, col: str, values: Any):
        F = self._F  # array_position is 1-based, 0 when absent
        return (F.array_position(F.array(*[F.lit(str(v)) for v in values]), self._text(col)) - 1).cast("int")

    def _leaf_expr(self, name: str):
        F = self._F
        tax = self.schema[name].taxonomy
        if tax.kind == "categorical":
            return self._position(name, tax.leaves)
        v = F.col(f"`{name}`").cast("double")
        return bucket_tree(numeric_edges(self.schema, name), 0, tax.n_leaves - 1,
                           le=lambda e: v <= F.lit(float(e)),
                           when=lambda c, a, b: F.when(c, a).otherwise(b),
                           const=lambda k: F.lit(int(k)))

    def _run(self, action):
        _check_alive(self._df)
        try:
            return action()
        except Exception as e:  # noqa: BLE001 - py4j and pyspark errors alike
            raise self._failure(e) from None

    def _failure(self, error: Exception) -> Exception:
        """Spark's error as it is when it concerns the query's columns and types, else without
        its text (it may quote a private value or record)."""
        from pyspark.errors import AnalysisException
        if isinstance(error, AnalysisException):
            return error
        cast = "CAST_INVALID_INPUT" in str(error) or "NumberFormatException" in type(error).__name__
        return engine_error(error, "Spark failed on the Spark DataFrame", self.schema, engine="Spark",
                            unreadable=cast, column_pattern=r"CAST\(`?([^`\s)]+)`? AS")

    # ------------------------------------------------------------------ checks
    def _validate(self) -> None:
        _check_alive(self._df)  # before building any Column (that needs a live context)
        F, schema = self._F, self.schema
        parts, keys = [F.count(F.lit(1))], [("n", None)]

        def add(kind: str, col: str, cond) -> None:
            parts.append(F.sum(F.when(cond, 1).otherwise(0)))
            keys.append((kind, col))

        for name, attr in schema.attributes.items():
            add("missing", name, self._missing(name))
            if attr.kind == "categorical":
                add("unknown", name, ~self._text(name).isin(list(attr.categories)))
            elif self._is_numeric(name):
                v = F.col(f"`{name}`").cast("double")
                add("infinite", name, v.isin(float("inf"), float("-inf")))
                add("out_of_range", name, (v < F.lit(attr.lower)) | (v > F.lit(attr.upper)))
        add("missing", schema.target, self._missing(schema.target))
        add("unknown", schema.target, ~self._text(schema.target).isin(list(schema.classes)))
        row = self._run(lambda: self._df.agg(*[p.alias(f"k{i}") for i, p in enumerate(parts)]).collect()[0])
        values = [int(row[f"k{i}"] or 0) for i in range(len(parts))]
        problems = Problems(n_rows=values[0])
        problems.non_numeric = {n for n, a in schema.attributes.items() if a.kind == "numeric" and not self._is_numeric(n)}
        for (kind, col), count in zip(keys[1:], values[1:]):
            getattr(problems, kind)[col] = count
        raise_first_problem(problems, schema)

    def _build(self) -> CountTable:
        self._validate()
        schema = self.schema
        exprs = [self._leaf_expr(n).alias(f"c{i}") for i, n in enumerate(schema.predictors)]
        exprs.append(self._position(schema.target, schema.classes).alias("cls"))
        keys = [f"c{i}" for i in range(len(schema.predictors))] + ["cls"]
        rows = self._run(lambda: self._df.select(*exprs).groupBy(*keys).count().collect())
        m = len(rows)
        data = np.asarray([tuple(r) for r in rows], dtype=np.int64).reshape(m, len(keys) + 1)
        leaves = {n: data[:, i].astype(np.int32) for i, n in enumerate(schema.predictors)}
        return CountTable(schema, leaves, data[:, -2], data[:, -1])

    # ------------------------------------------------------------------ streaming
    def _iter_frames(self, batch_rows: int) -> Iterator[pd.DataFrame]:
        _check_alive(self._df)
        cols = self.columns
        it = self._run(lambda: self._df.select(*[f"`{c}`" for c in cols]).toLocalIterator())
        batch = []
        while True:
            row = self._run(lambda: next(it, None))   # rows are read (and may fail) here
            if row is None:
                break
            batch.append(tuple(row))
            if len(batch) == batch_rows:
                yield pd.DataFrame(batch, columns=cols)
                batch = []
        if batch:
            yield pd.DataFrame(batch, columns=cols)
