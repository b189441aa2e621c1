"""Shared data and engine fixtures for the engine-parity tests (tests/test_counts.py,
test_sources*.py, test_fit_source*.py): one generated table, its schema, the brute-force
reference, and the same table handed to every engine.

A test module takes the pytest fixtures by importing them (``from _fixtures import frame,
schema``); ``fit_frame`` is the larger table the method-fit tests use, imported as ``frame``.
"""
from __future__ import annotations

import warnings

import duckdb
import numpy as np
import pandas as pd
import pytest

from dpexplore import Attribute, Schema, Taxonomy, sources
from dpexplore.sources._base import Source


def make_schema() -> Schema:
    x_tax = Taxonomy.from_spec("x", {"type": "numeric", "levels": [
        [0.0, 1.0], [0.0, 0.30000000000000004, 1.0], [0.0, 0.1, 0.30000000000000004, 0.7, 1.0]]})
    color_tax = Taxonomy.from_spec("color", {"type": "categorical", "tree": {
        "Any": {"warm": ["red", "orange"], "cool": ["blue", "green"]}}})
    return Schema([
        Attribute.numeric("age", 0, 100, Taxonomy.equal_width("age", 0, 100, (2, 5)), integer=True),
        Attribute.numeric("x", 0.0, 0.9, x_tax),  # public range narrower than the taxonomy
        Attribute.categorical("color", ["red", "orange", "blue"], color_tax),  # "green" is a leaf, not a category
        Attribute.categorical("code", ["1", "2", "3"]),  # stored as integers in the frame
        Attribute.categorical("flag", ["False", "True"]),  # stored as booleans
    ], "label", ["a", "b", "c"])  # "c" never occurs


def make_frame(n: int = 400, seed: int = 0) -> pd.DataFrame:
    """Random rows plus every numeric edge (and its neighbouring doubles) and every category."""
    rng = np.random.default_rng(seed)
    age_edges = list(range(0, 101, 10)) + [9, 11, 55, 99, 1]
    x_edges = [0.0, 5e-324, 0.1, np.nextafter(0.1, 0), np.nextafter(0.1, 1), 0.3, 0.30000000000000004,
               np.nextafter(0.30000000000000004, 1), 0.7, np.nextafter(0.7, 0), np.nextafter(0.7, 1), 0.9]
    edge_rows = max(len(age_edges), len(x_edges))
    age = np.concatenate([np.resize(age_edges, edge_rows), rng.integers(0, 101, n)])
    x = np.concatenate([np.resize(x_edges, edge_rows), rng.uniform(0, 0.9, n)])
    m = len(age)
    return pd.DataFrame({
        "age": age.astype(np.int64),
        "x": x.astype(float),
        "color": rng.choice(["red", "orange", "blue"], m).astype(object),
        "code": rng.integers(1, 4, m).astype(np.int64),
        "flag": rng.random(m) < 0.3,
        "label": rng.choice(["a", "b"], m, p=[0.8, 0.2]).astype(object),
    })


def reference(frame: pd.DataFrame, schema: Schema):
    """Brute force: per-row codes from Schema.leaf_codes, then np.unique on the code rows."""
    codes = schema.leaf_codes(frame[schema.predictors])
    y = schema.encode_target(frame[schema.target])
    rows = np.column_stack([codes[n] for n in schema.predictors] + [y])
    uniq, counts = np.unique(rows, axis=0, return_counts=True)
    return uniq, counts


@pytest.fixture(scope="module")
def schema():
    return make_schema()


@pytest.fixture(scope="module")
def frame():
    return make_frame()


@pytest.fixture(scope="module")
def fit_frame():
    return make_frame(n=1500, seed=3)


# the same rows broken in one way each: every engine must raise what Schema.validate raises
BAD_INPUTS = {
    "nan-numeric": lambda f: f.assign(age=f["age"].astype(float).where(f.index != 3)),
    "null-category": lambda f: f.assign(color=f["color"].where(f.index != 4, None)),
    "out-of-range": lambda f: f.assign(x=f["x"].where(f.index != 5, 0.95)),
    "below-range": lambda f: f.assign(age=f["age"].where(f.index != 6, -1)),
    "infinite": lambda f: f.assign(x=f["x"].where(f.index != 5, np.inf)),
    "unknown-category": lambda f: f.assign(color=f["color"].where(~f.index.isin([2, 7]), "green")
                                           .where(f.index != 9, "Violet")),
    "unknown-int-category": lambda f: f.assign(code=f["code"].where(f.index != 2, 7)),
    "unknown-class": lambda f: f.assign(label=f["label"].where(f.index != 1, "z")),
    "null-class": lambda f: f.assign(label=f["label"].where(f.index != 1, None)),
    "non-numeric": lambda f: f.assign(age=f["age"].astype(str)),
    "empty": lambda f: f.iloc[:0],
    "several": lambda f: f.assign(code=f["code"].where(f.index != 2, 9), x=f["x"].where(f.index != 5, 2.0)),
}


def write_parquet(frame: pd.DataFrame, path) -> None:
    con = duckdb.connect()
    con.register("f", frame)
    con.execute(f"COPY (SELECT * FROM f) TO '{path}' (FORMAT parquet)")
    con.close()


def to_spark(spark, frame: pd.DataFrame):
    """The frame as a Spark DataFrame, missing text as NULL (not "nan")."""
    with warnings.catch_warnings():  # PySpark warns about pandas ≥ 3 on conversion
        warnings.simplefilter("ignore")
        text = {c: frame[c].astype(object).where(frame[c].notna(), None)
                for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])
                and not pd.api.types.is_bool_dtype(frame[c])}
        return spark.createDataFrame(frame.assign(**text))


def engine_sources(frame: pd.DataFrame, schema: Schema, tmp_path) -> dict[str, Source]:
    """The table through pandas, DuckDB on Parquet and a DuckDB SQL query."""
    write_parquet(frame, tmp_path / "t.parquet")
    con = duckdb.connect()
    con.register("people", frame)
    return {"pandas": sources.pandas(frame, schema),
            "duckdb-parquet": sources.parquet(str(tmp_path / "t.parquet"), schema),
            "duckdb-sql": sources.duckdb("SELECT * FROM people", schema, connection=con)}


class TableSource(Source):
    """A Source holding a given CountTable; any row access raises."""

    engine = "test"

    def __init__(self, table):
        super().__init__(table.schema)
        self._count_table = table

    def _build(self):
        raise AssertionError("the table was already built: fit must not rebuild it")

    def _validate(self):
        raise AssertionError("fit must not re-read the rows")

    def _iter_frames(self, batch_rows):
        raise AssertionError("fit must not read rows")
