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
from typing import Any, Iterator, Sequence

import numpy as np
import pandas as pd

from ..domain import Schema
from ._backend import ExpressionSource
from ._base import check_columns, engine_error

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


def check_alive(frame: Any) -> None:
    """Raise a clear error when the DataFrame's SparkSession has been stopped."""
    session = frame.sparkSession
    sc = getattr(session, "_sc", None)
    if sc is not None and getattr(sc, "_jsc", None) is None:
        raise RuntimeError("the SparkSession of this DataFrame has been stopped; start a session "
                           "(SparkSession.builder.getOrCreate() or dpexplore.sources.local_spark_session()) "
                           "and build the DataFrame again")


def _kind(data_type: Any, T: Any) -> str:
    if isinstance(data_type, (T.FloatType, T.DoubleType)):
        return "float"
    if isinstance(data_type, T.NumericType):
        return "number"
    return "bool" if isinstance(data_type, T.BooleanType) else "other"


class SparkSource(ExpressionSource):
    """A PySpark DataFrame holding the predictors and the target column ``schema.target``.

    Its expressions are Column objects; the checks and the count are
    :class:`~._backend.ExpressionSource`'s."""

    engine = "spark"
    engine_errors = (Exception,)   # py4j's and pyspark's errors alike

    def __init__(self, frame: Any, schema: Schema):
        DataFrame, F, T = _pyspark()
        super().__init__(schema)
        if not isinstance(frame, DataFrame):
            hint = " (turn a pandas DataFrame into one with spark.createDataFrame(frame))" \
                if isinstance(frame, pd.DataFrame) else ""
            raise TypeError(f"spark_dataframe must be a PySpark DataFrame, got {type(frame).__name__}{hint}")
        check_alive(frame)
        self._df, self._F = frame, F
        self._kinds = {f.name: _kind(f.dataType, T) for f in frame.schema.fields}
        check_columns(list(self._kinds), self.schema, "the Spark DataFrame")

    # ------------------------------------------------------------------ primitives: Columns
    def column_kinds(self) -> dict[str, str]:
        return self._kinds

    def col(self, name: str):
        return self._F.col(f"`{name}`")

    def as_double(self, expr):
        return expr.cast("double")

    def literal(self, value: int | str):
        return self._F.lit(value if isinstance(value, str) else int(value))

    def double_literal(self, x: float):
        return self._F.lit(float(x))

    def text(self, name: str):
        F, c = self._F, self.col(name)
        if self._kinds[name] == "bool":
            return F.when(c, F.lit("True")).when(~c, F.lit("False"))
        return c.cast("string")

    def is_missing(self, name: str):
        c = self.col(name)
        return (c.isNull() | self._F.isnan(c)) if self._kinds[name] == "float" else c.isNull()

    def is_in(self, expr, values: Sequence[str]):
        return expr.isin(list(values))

    def position(self, expr, values: Sequence[str]):
        F = self._F  # array_position is 1-based, 0 when absent
        return (F.array_position(F.array(*[F.lit(str(v)) for v in values]), expr) - 1).cast("int")

    def is_infinite(self, expr):
        return expr.isin(float("inf"), float("-inf"))

    def lt(self, a, b):
        return a < b

    def le(self, a, b):
        return a <= b

    def gt(self, a, b):
        return a > b

    def or_(self, a, b):
        return a | b

    def not_(self, a):
        return ~a

    def when(self, cond, a, b):
        return self._F.when(cond, a).otherwise(b)

    def count_all(self):
        return self._F.count(self._F.lit(1))

    def count_if(self, cond):
        return self._F.sum(self._F.when(cond, 1).otherwise(0))

    def aggregate(self, aggs) -> list[int]:
        row = self._df.agg(*[a.alias(f"k{i}") for i, a in enumerate(aggs)]).collect()[0]
        return [int(row[f"k{i}"] or 0) for i in range(len(aggs))]   # a sum over no rows is NULL

    def group_count(self, keys) -> np.ndarray:
        names = [f"k{i}" for i in range(len(keys))]
        rows = self._df.select(*[k.alias(n) for k, n in zip(keys, names)]).groupBy(*names).count().collect()
        return np.asarray([tuple(r) for r in rows], dtype=np.int64).reshape(len(rows), len(keys) + 1)

    def translate_error(self, error: BaseException) -> BaseException:
        """Spark's error as it is when it concerns the query's columns and types, else without
        its text (it may quote a private value or record)."""
        from pyspark.errors import AnalysisException
        if isinstance(error, AnalysisException):
            return error
        cast = "CAST_INVALID_INPUT" in str(error) or "NumberFormatException" in type(error).__name__
        return engine_error(error, "Spark failed on the Spark DataFrame", self.schema, engine="Spark",
                            unreadable=cast, column_pattern=r"CAST\(`?([^`\s)]+)`? AS")

    def ensure_alive(self) -> None:
        check_alive(self._df)

    # ------------------------------------------------------------------ streaming
    def _iter_frames(self, batch_rows: int) -> Iterator[pd.DataFrame]:
        cols = self.columns
        it = self.run(lambda: self._df.select(*[f"`{c}`" for c in cols]).toLocalIterator())
        batch = []
        while True:
            row = self.run(lambda: next(it, None))   # rows are read (and may fail) here
            if row is None:
                break
            batch.append(tuple(row))
            if len(batch) == batch_rows:
                yield pd.DataFrame(batch, columns=cols)
                batch = []
        if batch:
            yield pd.DataFrame(batch, columns=cols)
