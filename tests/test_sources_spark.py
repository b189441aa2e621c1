"""The Spark engine (local mode, one session for the module): the same CountTable as pandas/DuckDB.

Skipped only when Java cannot be found (PySpark comes with the [test] extra).
"""
import re
import warnings

import duckdb
import numpy as np
import pandas as pd
import pytest

from dpexplore import sources
from dpexplore.counts import CountTable
from dpexplore.sources import _spark_engine
from _fixtures import BAD_INPUTS, frame, reference, schema, to_spark  # noqa: F401 (pytest fixtures)
from test_audit_refusals import (NUM_SCHEMA, OUT_OF_DOMAIN, SECRET, _chain, assert_names_rule_not_values,
                                secret_frame)

pytestmark = pytest.mark.skipif(_spark_engine.find_java() is None,
                                reason="Spark needs Java and none was found (JAVA_HOME or java on PATH); "
                                       "install openjdk-17-jre-headless")


def test_spark_gives_the_identical_count_table(spark, frame, schema):
    table = sources.spark(to_spark(spark, frame), schema).count_table()
    assert table == CountTable.from_frame(frame[schema.predictors], frame[schema.target], schema)
    assert table == sources.duckdb(frame, schema).count_table()
    uniq, counts = reference(frame, schema)
    np.testing.assert_array_equal(table.class_codes, uniq[:, -1])
    np.testing.assert_array_equal(table.counts, counts)


def test_spark_reads_parquet_written_by_duckdb(spark, frame, schema, tmp_path):
    con = duckdb.connect()
    con.register("f", frame)
    con.execute(f"COPY (SELECT * FROM f) TO '{tmp_path / 't.parquet'}' (FORMAT parquet)")
    src = sources.spark(spark.read.parquet(str(tmp_path / "t.parquet")), schema)
    assert src.engine == "spark"
    assert src.count_table() == sources.parquet(tmp_path / "t.parquet", schema).count_table()
    whole = np.concatenate([f["age"].to_numpy() for f in src.iter_frames(batch_rows=100)])
    assert sorted(whole.tolist()) == sorted(frame["age"].tolist())


def test_spark_bucket_expression_bit_exact(spark, schema):
    values = [0.0, 5e-324, 0.1, float(np.nextafter(0.1, 0)), float(np.nextafter(0.1, 1)), 0.3,
              0.30000000000000004, float(np.nextafter(0.30000000000000004, 1)), 0.7, 0.9]
    df = spark.createDataFrame([(v,) for v in values], "x double")
    src = object.__new__(_spark_engine.SparkSource)
    src.schema, src._kinds, src._F = schema, {"x": "float"}, _spark_engine._pyspark()[1]
    got = [r["c"] for r in df.select(src.leaf_expr("x").alias("c"), "x").orderBy("x").collect()]
    np.testing.assert_array_equal(got, schema["x"].taxonomy.leaf_codes(sorted(values)))


@pytest.mark.parametrize("case", sorted(set(BAD_INPUTS) - {"empty"}))
def test_spark_bad_values_raise_the_fit_message(spark, case, frame, schema):
    bad = BAD_INPUTS[case](frame.copy())
    with pytest.raises(ValueError) as fit_error:
        schema.validate(bad[schema.predictors], bad["label"])
    src = sources.spark(to_spark(spark, bad), schema)
    with pytest.raises(ValueError, match=re.escape(str(fit_error.value))):
        src.count_table()


def test_missing_column_and_wrong_type(spark, frame, schema):
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['label'\]"):
        sources.spark(to_spark(spark, frame.drop(columns="label")), schema)
    with pytest.raises(TypeError, match="spark.createDataFrame"):
        sources.spark(frame, schema)


@pytest.mark.parametrize("case", list(OUT_OF_DOMAIN))
def test_spark_out_of_domain_messages_name_column_and_rule_not_values(spark, case):
    plant, column, rule = OUT_OF_DOMAIN[case]
    with pytest.raises(ValueError) as err:
        sources.spark(to_spark(spark, plant(secret_frame())), NUM_SCHEMA).count_table()
    assert_names_rule_not_values(err.value, column, rule, "4711")


def test_spark_read_errors_quote_no_private_record(spark, tmp_path):
    """Spark's own errors on the rows quote them (a cast under ANSI mode, a malformed CSV record
    in FAILFAST mode): the source replaces them, ``from None``."""
    from pyspark.sql import functions as F
    frame = secret_frame().astype({"age": str})
    frame.loc[7, "age"] = SECRET
    cast = to_spark(spark, frame).withColumn("age", F.col("age").cast("int"))
    frame.to_csv(tmp_path / "t.csv", index=False)
    failfast = spark.read.csv(str(tmp_path / "t.csv"), header=True, mode="FAILFAST",
                              schema="age INT, city STRING, label STRING")
    for df in (cast, failfast):
        src = sources.spark(df, NUM_SCHEMA)
        with pytest.raises(ValueError) as err:
            src.count_table()
        text = _chain(err.value)
        assert SECRET not in text and "check_table" in text and "Spark" in text, text
        assert err.value.__cause__ is None and err.value.__suppress_context__


def test_spark_csv_with_inferred_types_counts_a_late_record_like_an_early_one(spark, tmp_path):
    """dpexplore reads no text file through Spark (a Spark source is the caller's DataFrame); a
    CSV read with ``inferSchema=True`` infers from every row (``samplingRatio`` 1.0), so a declared
    category first seen after row 30,000 gives the table it gives at the top, as DuckDB's
    declared-type read does (tests/test_declared_types.py)."""
    from dpexplore.domain import Attribute, Schema
    schema = Schema([Attribute.categorical("code", ["0", "1", "X"])], "y", ["0", "1"])
    n = 30_001
    d = pd.DataFrame({"code": (np.arange(n) % 2).astype(object), "y": (np.arange(n) // 2) % 2})
    late = pd.DataFrame({"code": ["X"], "y": [1]})
    got = {}
    for where, rows in (("top", [late, d]), ("bottom", [d, late])):
        pd.concat(rows).to_csv(tmp_path / f"{where}.csv", index=False)
        df = spark.read.csv(str(tmp_path / f"{where}.csv"), header=True, inferSchema=True)
        got[where] = sources.spark(df, schema).count_table()
    assert got["top"] == got["bottom"] == sources.csv(tmp_path / "bottom.csv", schema).count_table()


def test_missing_java_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(_spark_engine, "find_java", lambda: None)
    with pytest.raises(RuntimeError, match="Java was not found.*openjdk-17-jre-headless"):
        sources.local_spark_session()


def test_stopped_session_is_refused_zz_last(spark, frame, schema):
    """Runs last in this module (file order): it stops the module's session."""
    df = to_spark(spark, frame)
    src = sources.spark(df, schema)
    spark.stop()
    with pytest.raises(RuntimeError, match="SparkSession of this DataFrame has been stopped"):
        sources.spark(df, schema)
    with pytest.raises(RuntimeError, match="has been stopped"):
        src.count_table()
