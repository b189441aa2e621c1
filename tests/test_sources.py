"""Engines that build the CountTable where the data lives: pandas and DuckDB (files, SQL, relations).

Engine equivalence: the same generated table (every numeric leaf edge and its neighbouring
doubles, every category, integer and boolean categories, a class absent from the data) gives
the identical CountTable from every engine and input form, equal to a brute-force reference
(Schema.leaf_codes + np.unique). Spark: tests/test_sources_spark.py.
"""
import re

import duckdb
import numpy as np
import pandas as pd
import pytest

from dpexplore import sources
from dpexplore.counts import CountTable
from dpexplore.sources._duckdb_engine import DuckDBSource
from _fixtures import BAD_INPUTS, frame, reference, schema, write_parquet  # noqa: F401 (pytest fixtures)


@pytest.fixture(scope="module")
def expected(frame, schema):
    return CountTable.from_frame(frame[schema.predictors], frame[schema.target], schema)


@pytest.fixture(scope="module")
def files(frame, tmp_path_factory):
    d = tmp_path_factory.mktemp("tables")
    frame.to_csv(d / "t.csv", index=False)
    frame.to_csv(d / "t.csv.gz", index=False, compression="gzip")
    write_parquet(frame, d / "t.parquet")
    half = len(frame) // 2
    (d / "parts").mkdir()
    write_parquet(frame.iloc[:half], d / "parts" / "p-0.parquet")
    write_parquet(frame.iloc[half:], d / "parts" / "p-1.parquet")
    return d


def all_sources(frame, schema, files):
    con = duckdb.connect()
    con.register("people", frame)
    return {
        "pandas": sources.pandas(frame, schema),
        "duckdb-frame": sources.duckdb(frame, schema),
        "duckdb-sql": sources.duckdb("SELECT * FROM people WHERE true;", schema, connection=con),
        "duckdb-relation": sources.duckdb(con.sql("SELECT * FROM people"), schema),
        "csv": sources.csv(str(files / "t.csv"), schema),
        "csv.gz": sources.csv(files / "t.csv.gz", schema),
        "parquet": sources.parquet(str(files / "t.parquet"), schema),
        "parquet-glob": sources.parquet(str(files / "parts" / "p-*.parquet"), schema),
        "parquet-list": sources.parquet([files / "parts" / "p-0.parquet", files / "parts" / "p-1.parquet"], schema),
    }


@pytest.mark.parametrize("kind", ["pandas", "duckdb-frame", "duckdb-sql", "duckdb-relation", "csv", "csv.gz",
                                  "parquet", "parquet-glob", "parquet-list"])
def test_engines_give_the_identical_count_table(kind, frame, schema, files, expected):
    src = all_sources(frame, schema, files)[kind]
    table = src.count_table()
    assert table == expected
    uniq, counts = reference(frame, schema)  # and both equal the brute-force reference
    np.testing.assert_array_equal(np.column_stack([table.leaf_codes[n] for n in schema.predictors]
                                                  + [table.class_codes]), uniq)
    np.testing.assert_array_equal(table.counts, counts)
    assert src.count_table() is table  # built once, cached
    assert src.engine == ("pandas" if kind == "pandas" else "duckdb")
    assert str(table.n_records) not in repr(src)


def test_numeric_leaf_codes_bit_exact_at_edges(schema):
    """The engine's bucket expression equals Taxonomy.leaf_codes value by value."""
    values = {
        "age": np.array([0, 1, 9, 10, 11, 19.999999999999996, 20, 20.000000000000004, 50, 99.99999999999999, 100.0]),
        "x": np.array([0.0, 5e-324, 0.1, np.nextafter(0.1, 0), np.nextafter(0.1, 1), 0.3, 0.30000000000000004,
                       np.nextafter(0.30000000000000004, 1), np.nextafter(0.30000000000000004, 0),
                       0.7, np.nextafter(0.7, 0), np.nextafter(0.7, 1), 0.9]),
    }
    con = duckdb.connect()
    for name, v in values.items():
        f = pd.DataFrame({name: v})
        con.register("v", f)
        rel = con.sql("SELECT * FROM v")
        src = object.__new__(DuckDBSource)
        src.schema, src._kinds = schema, {name: "float"}
        got = rel.query("src", f"SELECT {src.leaf_expr(name)} AS c FROM src").fetchnumpy()["c"]
        np.testing.assert_array_equal(got, schema[name].taxonomy.leaf_codes(v), err_msg=name)


def test_iter_frames_stream_every_row(frame, schema, files, expected):
    for kind, src in all_sources(frame, schema, files).items():
        parts = list(src.iter_frames(batch_rows=2048 if kind != "duckdb-relation" else 100))
        assert len(parts) >= 1 and all(list(p.columns) == src.columns for p in parts)
        whole = pd.concat(parts, ignore_index=True)
        back = CountTable.from_frame(whole[schema.predictors], whole[schema.target], schema)
        assert back == expected, kind
    with pytest.raises(ValueError, match="batch_rows"):
        sources.pandas(frame, schema).iter_frames(0)


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_values_raise_the_fit_message(case, frame, schema, tmp_path):
    bad = BAD_INPUTS[case](frame.copy())
    with pytest.raises(ValueError) as fit_error:  # what every method's fit(X, y, schema) says
        schema.validate(bad[schema.predictors], bad["label"])
    message = re.escape(str(fit_error.value))
    srcs = [sources.pandas(bad, schema), sources.duckdb(bad, schema)]
    if case not in ("non-numeric", "empty", "null-class", "null-category"):  # CSV has no typed NULL/str column here
        bad.to_csv(tmp_path / "bad.csv", index=False)
        srcs.append(sources.csv(tmp_path / "bad.csv", schema))
    write_parquet(bad, tmp_path / "bad.parquet")
    srcs.append(sources.parquet(tmp_path / "bad.parquet", schema))
    for src in srcs:
        with pytest.raises(ValueError, match=message):
            src.count_table()
        assert src._count_table is None


def test_missing_files_and_columns_are_clear(frame, schema, tmp_path):
    with pytest.raises(FileNotFoundError, match="parquet: file not found: .*nope.parquet"):
        sources.parquet(tmp_path / "nope.parquet", schema)
    with pytest.raises(FileNotFoundError, match="csv: no file matches the glob"):
        sources.csv(str(tmp_path / "none-*.csv"), schema)
    frame.drop(columns=["x", "label"]).to_csv(tmp_path / "part.csv", index=False)
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['x', 'label'\]"):
        sources.csv(tmp_path / "part.csv", schema)
    with pytest.raises(ValueError, match=r"frame lacks column\(s\) \['label'\]"):
        sources.pandas(frame.drop(columns="label"), schema)
    (tmp_path / "broken.parquet").write_text("not parquet")
    with pytest.raises(ValueError, match="DuckDB could not read parquet"):
        sources.parquet(tmp_path / "broken.parquet", schema)
    with pytest.raises(ValueError, match="DuckDB could not run the query"):
        sources.duckdb("SELECT * FROM no_such_table", schema)


def test_wrong_argument_types(frame, schema):
    with pytest.raises(TypeError, match="frame must be a pandas DataFrame"):
        sources.pandas(frame.to_numpy(), schema)
    with pytest.raises(TypeError, match="schema must be a dpexplore Schema"):
        sources.pandas(frame, {"target": "label"})
    with pytest.raises(TypeError, match="relation_or_sql must be"):
        sources.duckdb(42, schema)
    with pytest.raises(TypeError, match="connection must be a duckdb connection"):
        sources.duckdb("SELECT 1", schema, connection="db")
    with pytest.raises(TypeError, match="spark_dataframe must be a PySpark DataFrame"):
        pytest.importorskip("pyspark")
        sources.spark(frame, schema)


def test_extra_columns_are_ignored_and_inputs_not_mutated(frame, schema, expected):
    wide = frame.assign(note="free text", weight=np.nan)
    before = wide.copy()
    assert sources.pandas(wide, schema).count_table() == expected
    assert sources.duckdb(wide, schema).count_table() == expected
    pd.testing.assert_frame_equal(wide, before)


def test_adult_engines_agree(tmp_path):
    from dpexplore.datasets import load_adult
    df, schema = load_adult()
    write_parquet(df, tmp_path / "adult.parquet")
    table = sources.parquet(tmp_path / "adult.parquet", schema).count_table()
    assert table == sources.pandas(df, schema).count_table()
    # a method's grid counts from the table equal the record path (PrivPfC's statistic)
    from dpexplore.histogram import LevelCodes, class_counts
    grid = {n: 1 for n in schema.predictors}
    codes = LevelCodes(df[schema.predictors], schema)
    y = schema.encode_target(df[schema.target])
    want = class_counts(codes.cell_codes(grid), y, int(np.prod(codes.grid_shape(grid))), 2)
    np.testing.assert_array_equal(table.grid_counts(grid), want)


@pytest.mark.parametrize("kind", ["pandas", "duckdb-sql", "parquet"])
def test_with_schema_recounts_the_same_data_under_another_public_schema(kind, frame, schema, files):
    """A method's own public bins (ProjectedHistogram) are counted by the same engine: the view
    counts like a fresh source under the new schema, and leaves the original's cache alone."""
    src = all_sources(frame, schema, files)[kind]
    original = src.count_table()
    subset = schema.subset(schema.predictors[:2])
    view = src.with_schema(subset)
    X, y = subset.split(frame)
    assert view.count_table() == CountTable.from_frame(X, y, subset)
    assert src.count_table() is original and src.schema is schema
    with pytest.raises(ValueError, match="same target"):
        src.with_schema(schema.with_target(schema.predictors[0], ["a", "b"]))
