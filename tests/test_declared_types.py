"""Types come from the schema, never from the values: after ``build_schema``'s missing-value rule,
and on every read of a text file (DuckDB's CSV reader, pandas' ``tables.read_table``).

The privacy side (neighbouring tables, the refusal as an event) is audited in
tests/test_audit_declared_types.py; here: every column has its declared type, a record changes
nothing but itself wherever it sits in a file, and a value outside the declared domain meets the
same rule at line 2 as past DuckDB's sniffing sample.
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from dpexplore import sources, tables
from dpexplore.domain import Attribute, Schema, Taxonomy, declared_dtype, match_labels, typed_labels
from dpexplore.tables import InputError

ROWS = 30_001   # past DuckDB's sniffing sample (20,480 rows)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)   # PrivacyLeakWarning, FewRecordsWarning: not under test
        yield


def base(n: int = 80, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.integers(0, 60, n), "code": rng.integers(0, 3, n), "flag": rng.random(n) < 0.4,
                         "town": rng.choice(["north", "south"], n), "y": rng.integers(0, 2, n)})


def draft(classes=(0, 1)) -> pd.DataFrame:
    return pd.DataFrame([["age", "numeric", 0, 60, True, "", False],
                         ["code", "categorical", np.nan, np.nan, False, "0, 1, 2", False],
                         ["flag", "categorical", np.nan, np.nan, False, "False, True", False],
                         ["town", "categorical", np.nan, np.nan, False, "north, south", False],
                         ["y", "target", np.nan, np.nan, False, ", ".join(map(str, classes)), False]],
                        columns=tables.DRAFT_COLUMNS)


def kind(dtype) -> str:
    """A dtype as the schema declares types: int64, float64, bool, or text (object or pandas' str)."""
    return "text" if dtype == object or pd.api.types.is_string_dtype(dtype) else str(np.dtype(dtype))


def with_row(frame: pd.DataFrame, **record) -> pd.DataFrame:
    return pd.concat([frame, pd.DataFrame([record])], ignore_index=True)


# --------------------------------------------------------------------------- the declared type
def test_declared_dtype_reads_the_declaration_only():
    assert declared_dtype([0, 1]) == np.int64 and declared_dtype(["0", "1", "-7"]) == np.int64
    assert declared_dtype([False, True]) == bool and declared_dtype(["True"]) == bool
    for text in (["01", "02"], ["1.0", "2"], ["+1"], ["1", "x"], [" 1"], ["99999999999999999999"], []):
        assert declared_dtype(text) == object, text
    assert typed_labels(["1", "0"], [0, 1]).tolist() == [1, 0]
    assert typed_labels(["True"], ["False", "True"]).dtype == bool
    assert Attribute.categorical("c", [0, 1]).dtype == np.int64
    assert Attribute.numeric("n", 0, 9, integer=True).dtype == np.int64
    assert Attribute.numeric("n", 0, 9).dtype == np.float64


def test_a_value_matches_its_label_whatever_type_pandas_gave_the_column():
    declared = ["0", "1", "X"]
    got = [match_labels(pd.Series(v), declared).tolist() for v in
           ([0, 1], [0.0, 1.0, np.nan], ["0", "1", "X"], [" 1", "1.0"], pd.array([0, 1, None], dtype="Int64"))]
    assert got == [["0", "1"], ["0", "1", None], ["0", "1", "X"], ["1", "1"], ["0", "1", None]]
    assert match_labels([True, False, "true", "FALSE", 1], ["False", "True"]).tolist() == \
        ["True", "False", "True", "False", None]          # a number is not a boolean
    assert match_labels([1, 1.5, "2"], ["01", "2"]).tolist() == ["01", None, "2"]


# --------------------------------------------------------------------------- build_schema
RECORDS = {   # one record whose missing value makes pandas retype a column of D
    "missing int label": dict(age=3, code=1, flag=True, town="north", y=np.nan),
    "missing int-coded category": dict(age=3, code=np.nan, flag=True, town="north", y=1),
    "missing boolean category": dict(age=3, code=1, flag=np.nan, town="north", y=1),
    "missing integer": dict(age=np.nan, code=1, flag=True, town="north", y=1),
    "text in an integer column": dict(age="?", code=1, flag=True, town="north", y=1),
}


@pytest.mark.parametrize("record", list(RECORDS))
def test_after_drop_rows_every_column_has_its_declared_type(record):
    d = base()
    schema, enc_d, _ = tables.build_schema(d, draft(), missing="drop-rows")
    schema_plus, enc_plus, _ = tables.build_schema(with_row(d, **RECORDS[record]), draft(), missing="drop-rows")
    for name in schema.columns:
        assert kind(enc_plus[name].dtype) == kind(enc_d[name].dtype) == kind(schema[name].dtype), name
    assert enc_plus["y"].dtype == enc_d["y"].dtype == declared_dtype(schema.classes) == np.int64
    pd.testing.assert_frame_equal(enc_plus, enc_d)                  # the record is dropped, nothing else moves
    for enc in (enc_d, enc_plus):
        result = tables.release(enc, schema, "PrivPfC", 1.0, random_state=0, progress=False, evaluate=False)
        assert {c: kind(t) for c, t in result.synthetic.dtypes.items()} == {c: kind(t) for c, t in enc.dtypes.items()}


def test_a_true_false_target_keeps_its_type_when_a_label_is_missing():
    d = base().assign(y=lambda f: f["y"].astype(bool))
    plus = with_row(d, age=3, code=1, flag=True, town="north", y=np.nan)
    assert plus["y"].dtype == object                                  # pandas retyped the column
    for frame in (d, plus):
        schema, enc, _ = tables.build_schema(frame, draft([False, True]), missing="drop-rows")
        assert enc["y"].dtype == bool
        result = tables.release(enc, schema, "DiffGen", 1.0, random_state=0, progress=False, evaluate=False)
        assert result.synthetic["y"].dtype == bool and set(result.synthetic["y"]) <= {False, True}


def test_grouped_and_derived_columns_keep_their_type():
    d = with_row(base(), age=3, code=np.nan, flag=True, town="north", y=1)   # code typed float
    grouped = draft()
    grouped.loc[grouped.column == "code", "groups"] = "0: 0; 1: 1, 2"
    grouped = tables.declare(grouped, "band", derived_from="age", edges=[0, 30, 60], labels=[0, 1])
    schema, enc, _ = tables.build_schema(d, grouped, missing="drop-rows")
    assert enc["code"].dtype == schema["code"].dtype == np.int64 and set(enc["code"]) <= {0, 1}
    assert enc["band"].dtype == schema["band"].dtype == np.int64
    result = tables.release(enc, schema, "DiffGen", 1.0, random_state=1, progress=False, evaluate=False)
    assert result.synthetic["code"].dtype == np.int64 and result.synthetic["band"].dtype == np.int64
    assert (result.synthetic["band"] == (result.synthetic["age"] >= 30).astype(int)).all()


def test_check_table_matches_values_as_build_schema_does():
    frame = with_row(base(), age=3, code=np.nan, flag=True, town="north", y=1)     # code, typed float
    report = tables.check_table(frame, draft(), errors="report")
    assert report["rule"].str.contains("missing values").all() and list(report["column"]) == ["code"]


def test_a_value_outside_the_declared_categories_is_still_refused_by_name():
    d = base()
    for bad in (dict(code=7), dict(code=1.5), dict(code="seven"), dict(flag="maybe"), dict(y=2)):
        frame = d.assign(**{k: d[k].astype(object) for k in bad})
        frame.loc[5, list(bad)] = list(bad.values())
        column = next(iter(bad))
        with pytest.raises(InputError, match=rf"column '{column}' has values that are not among its declared") as err:
            tables.build_schema(frame, draft(), missing="drop-rows")
        assert str(bad[column]) not in str(err.value).replace("'", " ").split()


# --------------------------------------------------------------------------- text files
CSV_SCHEMA = Schema([Attribute.numeric("age", 0, 60, Taxonomy.equal_width("age", 0, 60, (2, 2)), integer=True),
                     Attribute.categorical("code", ["0", "1", "2", "X"]),
                     Attribute.categorical("flag", ["False", "True"])], "y", ["0", "1"])


@pytest.fixture(scope="module")
def big():
    return base(ROWS, seed=1).drop(columns="town")


def _write(frame: pd.DataFrame, record: dict, where: str, path) -> str:
    one = pd.DataFrame([record])
    (pd.concat([one, frame]) if where == "top" else pd.concat([frame, one])).to_csv(path, index=False)
    return str(path)


def test_csv_record_past_the_sniffing_sample_counts_like_one_at_the_top(big, tmp_path):
    record = dict(age=7, code="X", flag=True, y=1)
    tables_ = {where: sources.csv(_write(big, record, where, tmp_path / f"{where}.csv"), CSV_SCHEMA).count_table()
               for where in ("top", "bottom")}
    assert tables_["top"] == tables_["bottom"]
    assert tables_["top"] == sources.pandas(with_row(big, **record), CSV_SCHEMA).count_table()


def test_csv_classes_come_back_in_the_declared_type(big, tmp_path):
    from dpexplore.publish import PrivPfC
    path = _write(big, dict(age=7, code="X", flag=True, y=1), "bottom", tmp_path / "t.csv")
    assert PrivPfC(epsilon=1.0, random_state=0).fit(sources.csv(path, CSV_SCHEMA)).classes_.dtype == np.int64
    text = Schema(CSV_SCHEMA.attributes, "y", ["0", "1", "unknown"])
    assert PrivPfC(epsilon=1.0, random_state=0).fit(sources.csv(path, text)).classes_.dtype == object
    lower = big.assign(flag=big["flag"].map({True: "true", False: "false"}))   # DuckDB's own spelling
    lower.to_csv(tmp_path / "lower.csv", index=False)
    assert sources.csv(tmp_path / "lower.csv", CSV_SCHEMA).count_table() == \
        sources.pandas(big, CSV_SCHEMA).count_table()


@pytest.mark.parametrize("record, rule", [
    (dict(age=7, code="Z", flag=True, y=1), r"column 'code' has value\(s\) outside its declared categories"),
    (dict(age="seven", code="1", flag=True, y=1), "column 'age' is declared numeric but holds non-numeric values"),
    (dict(age=70, code="1", flag=True, y=1), r"column 'age' has values outside its public range \[0, 60\]"),
    (dict(age=7, code="1", flag="maybe", y=1), r"column 'flag' has value\(s\) outside its declared categories"),
    (dict(age=7, code="1", flag=True, y="yes"), r"y has label\(s\) that are not among the declared classes"),
])
def test_csv_value_outside_the_domain_meets_the_same_rule_wherever_it_sits(big, tmp_path, record, rule):
    messages = {}
    for where in ("top", "bottom"):
        with pytest.raises(ValueError) as err:
            sources.csv(_write(big, record, where, tmp_path / f"{where}.csv"), CSV_SCHEMA).count_table()
        messages[where] = str(err.value)
    assert messages["top"] == messages["bottom"] and re.search(rule, messages["top"]), messages
    for value in map(str, record.values()):
        assert f"'{value}'" not in messages["top"] or value in ("1", "True")


def test_read_table_and_build_schema_do_not_depend_on_where_a_record_sits(big, tmp_path):
    record = dict(age=7, code="X", flag=True, y=1)
    d = tables.declare(draft(), "code", categories=["0", "1", "2", "X"]).query("column != 'town'")
    encoded = {}
    for where in ("top", "bottom"):
        frame = tables.read_table(_write(big, record, where, tmp_path / f"{where}.csv"))
        schema, enc, _ = tables.build_schema(frame, d, missing="drop-rows")
        encoded[where] = enc.sort_values(list(enc.columns), kind="stable").reset_index(drop=True)
    pd.testing.assert_frame_equal(encoded["top"], encoded["bottom"])
    assert kind(encoded["top"]["code"].dtype) == "text"              # "X" is declared: the list is text
    assert encoded["top"]["y"].dtype == np.int64 and encoded["top"]["flag"].dtype == bool
