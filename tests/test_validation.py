"""The shared input checks (dpexplore._validation, domain.check_schema, dpexplore.inputs) and the
environment switch."""
import numpy as np
import pandas as pd
import pytest

from dpexplore import config
from dpexplore._validation import check_frame, check_random_state, check_target


def test_random_state_forms():
    g = np.random.default_rng(0)
    assert check_random_state(g) is g
    assert check_random_state(5).random() == np.random.default_rng(5).random()
    with pytest.raises(TypeError):
        check_random_state(1.5)


def test_frame_and_target_checks():
    with pytest.raises(TypeError, match="DataFrame"):
        check_frame([[1]])
    with pytest.raises(ValueError, match=r"\['b'\]"):
        check_frame(pd.DataFrame({"a": [1, 2], "b": [1, None]}))
    with pytest.raises(ValueError, match="y holds only 1 class: a classifier needs at least 2") as err:
        check_target(["x", "x"])
    assert "'x'" not in str(err.value)
    with pytest.raises(ValueError, match="missing"):
        check_target(pd.Series(["x", None]))


def test_quick_switch(monkeypatch):
    monkeypatch.setenv("DPEXPLORE_QUICK", "1")
    assert config.quick() and config.repetitions(10) == 2
    monkeypatch.setenv("DPEXPLORE_QUICK", "0")
    assert not config.quick() and config.repetitions(10) == 10


# --------------------------------------------------------------------------- added
from dpexplore._validation import check_epsilon, check_fraction_weights, check_positive, check_same_length  # noqa: E402


@pytest.mark.parametrize("bad,exc", [(0, ValueError), (-0.1, ValueError), (float("nan"), ValueError),
                                     (float("inf"), ValueError), (True, TypeError), ("1", TypeError),
                                     (None, TypeError), (np.array([1.0]), TypeError)])
def test_epsilon_must_be_a_finite_positive_number(bad, exc):
    with pytest.raises(exc, match="epsilon"):
        check_epsilon(bad)
    with pytest.raises(exc, match="sensitivity"):
        check_positive(bad, "sensitivity")


def test_numpy_scalars_and_weights():
    assert check_epsilon(np.float32(0.5)) == 0.5 and isinstance(check_epsilon(np.int64(2)), float)
    w = [1, 3]
    assert np.allclose(check_fraction_weights(w), [0.25, 0.75]) and w == [1, 3]
    for bad in ([], [1, 0], [1, np.nan], [[1, 2]]):
        with pytest.raises(ValueError, match="split"):
            check_fraction_weights(bad)
    with pytest.raises(ValueError, match="X and y have different numbers of rows") as err:
        check_same_length([1, 2], [1, 2, 3])
    assert not any(d in str(err.value) for d in "23")     # the row counts are private


def test_frame_and_target_edge_cases():
    with pytest.raises(ValueError, match="empty"):
        check_frame(pd.DataFrame({"a": []}))
    with pytest.raises(ValueError, match="no columns"):
        check_frame(pd.DataFrame(index=[0, 1]))
    with pytest.raises(ValueError, match="empty"):
        check_target([])
    with pytest.raises(ValueError, match="one column"):
        check_target(pd.DataFrame({"a": [0, 1], "b": [1, 0]}))
    assert list(check_target(pd.DataFrame({"a": ["x", "y"]}))) == ["x", "y"]
    X = pd.DataFrame({"a": [1, 2]})
    assert check_frame(X) is X  # returned unchanged, not copied or modified


# --------------------------------------------------------------------------- one wording per rule
from dpexplore._validation import CHECK_TABLE_HINT, rule_message  # noqa: E402


@pytest.mark.parametrize("rule, kw, says", [
    ("missing", {}, r"column 'age' has missing values \(NaN\)"),
    ("category", {}, r"column 'age' has value\(s\) outside its declared categories"),
    ("non_numeric", {}, r"column 'age' is declared numeric but holds non-numeric values"),
    ("infinite", {}, r"column 'age' has infinite values"),
    ("range", {"lower": 17, "upper": 90.5}, r"column 'age' has values outside its public range \[17, 90.5\]; clip"),
    ("class", {"classes": ["no", "yes"]}, r"the target 'age' has label\(s\) that are not among the declared "
                                          r"classes \['no', 'yes'\]"),
    ("unreadable", {"engine": "DuckDB"}, r"column 'age' holds a value that DuckDB cannot read"),
])
def test_rule_message_names_the_column_and_the_rule(rule, kw, says):
    import re
    assert re.search(says, rule_message(rule, "age", **kw))


def test_rule_message_forms_and_unknown_rule():
    assert rule_message("missing", ["a", "b"]).startswith("X has missing values (NaN) in column(s) ['a', 'b']")
    assert rule_message("missing_label", "y") == "y has missing values (NaN): drop those rows first"
    assert rule_message("class", "y", classes=["0", "1"]).startswith("y has label(s)")
    unreadable = rule_message("unreadable", None, engine="Spark")
    assert unreadable.startswith("a column of the table holds a value that Spark") and CHECK_TABLE_HINT in unreadable
    with pytest.raises(ValueError, match="unknown rule"):
        rule_message("typo", "age")


# --------------------------------------------------------------------------- parameter checks
from dpexplore._validation import (check_binary_matrix, check_flag, check_fraction, check_int,  # noqa: E402
                                   format_number)


def test_check_int():
    assert check_int(3, "k") == 3 and type(check_int(np.int64(3), "k")) is int
    assert check_int(None, "n_max", allow_none=True) is None and check_int(-5, "offset", minimum=None) == -5
    for bad in (2.0, 2.5, "2", True, np.bool_(True), None):
        with pytest.raises(TypeError, match=r"^k must be an integer, got"):
            check_int(bad, "k")
    with pytest.raises(ValueError, match=r"^n_min must be an integer ≥ 2, got 1$"):
        check_int(1, "n_min", minimum=2)
    assert check_int(0, "k") == 0   # the default minimum is 0
    with pytest.raises(ValueError, match="≥ 0"):
        check_int(-1, "k")


@pytest.mark.parametrize("kw, interval, inside, outside", [
    ({}, "(0, 1]", [1e-9, 0.5, 1], [0, -0.1, 1.0001]),
    ({"low_open": False}, "[0, 1]", [0, 1], [-1e-9, 1.5]),
    ({"high_closed": False}, "(0, 1)", [0.5], [0, 1]),
    ({"low_open": False, "high_closed": False}, "[0, 1)", [0.0, 0.999], [1.0, -0.5]),
])
def test_check_fraction(kw, interval, inside, outside):
    for v in inside:
        assert check_fraction(v, "share", **kw) == float(v)
    for v in outside + [float("nan"), float("inf")]:
        with pytest.raises(ValueError, match=rf"^share must be a number in {re.escape(interval)}, got"):
            check_fraction(v, "share", **kw)
    for v in ("0.5", True, None, [0.5]):
        with pytest.raises(TypeError, match=rf"share must be a number in {re.escape(interval)}"):
            check_fraction(v, "share", **kw)
    assert isinstance(check_fraction(np.float32(0.5), "share"), float)


def test_check_flag():
    assert check_flag(True, "reuse_budget") is True and check_flag(np.bool_(False), "reuse_budget") is False
    for bad in (0, 1, None, "yes"):
        with pytest.raises(TypeError, match="reuse_budget must be True or False"):
            check_flag(bad, "reuse_budget")


def test_check_binary_matrix():
    a = [[0, 1], [1, 1]]
    out = check_binary_matrix(a)
    assert out.dtype == np.int64 and out.tolist() == a
    frame = pd.DataFrame({"f": [True, False], "g": [1.0, 0.0]})
    assert check_binary_matrix(frame, dtype=float).tolist() == [[1.0, 1.0], [0.0, 0.0]]
    flags = np.array([[True, False]])
    assert check_binary_matrix(flags).tolist() == [[1, 0]] and flags.dtype == bool   # input not changed
    for bad in ([[0, 2]], [[0.5, 1]], [[np.nan, 1]], [["0", "1"]], np.array([[0, 1]], dtype=object)):
        with pytest.raises(ValueError, match=r"X must hold only 0/1 values: binarise it with public cut points"):
            check_binary_matrix(bad)
    for bad in ([0, 1], [[]], np.zeros((0, 2))):
        with pytest.raises(ValueError, match="features must be a non-empty 2-D array of 0/1 features"):
            check_binary_matrix(bad, "features")
    with pytest.raises(ValueError, match=r"first \(dpexplore.encode.Binarizer\) or pass binarize=t$"):
        check_binary_matrix([[3]], hint=" or pass binarize=t")
    ints = np.array([[0, 1], [1, 0]])
    assert not np.shares_memory(check_binary_matrix(ints), ints)             # a new array by default
    assert check_binary_matrix(ints, copy=False) is ints                     # for callers that only read
    assert check_binary_matrix(flags, copy=False).dtype == np.int64 and flags.dtype == bool


def test_format_number_is_the_one_rule_for_public_numbers():
    assert [format_number(x) for x in (17, 90.0, 1e6, -3, np.int64(5), np.float32(0.25), 0.1 + 0.2, 1.5e-7)] == \
        ["17", "90", "1000000", "-3", "5", "0.25", "0.3", "1.5e-07"]
    assert format_number(float("inf")) == "inf"
    from dpexplore.domain import Attribute
    assert "[17, 90.5]" in repr(Attribute.numeric("age", 17, 90.5)) or "[17, 90.5]" in str(Attribute.numeric("age", 17, 90.5))
    assert "[0, 1000000]" in rule_message("range", "income", lower=0, upper=1e6)


def test_the_package_imports_no_scikit_learn_and_no_other_dpexplore_module():
    import ast
    from pathlib import Path

    import dpexplore._validation as validation
    tree = ast.parse(Path(validation.__file__).read_text())
    imported = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert imported <= {"__future__", "numbers", "typing", "numpy", "pandas"}, imported


# --------------------------------------------------------------------------- schema and inputs
import re  # noqa: E402

from dpexplore.domain import Attribute, Schema, Taxonomy, check_schema  # noqa: E402
from dpexplore.inputs import as_frame, check_release_input, check_y, is_source, refuse_sparse, source_input  # noqa: E402


@pytest.fixture
def schema():
    return Schema([Attribute.numeric("age", 17, 90, Taxonomy.equal_width("age", 17, 90, (2, 4))),
                   Attribute.categorical("colour", ["r", "g"], Taxonomy.flat("colour", ["r", "g"]))],
                  "y", ["no", "yes"])


def test_check_schema(schema):
    assert check_schema(schema) is schema
    with pytest.raises(TypeError, match="^schema must be a dpexplore Schema, got dict"):
        check_schema(schema.to_dict())
    bare = Schema([Attribute.numeric("age", 17, 90)], "y", ["no", "yes"])
    with pytest.raises(ValueError, match="attribute 'age' has no taxonomy"):
        check_schema(bare)
    assert check_schema(bare, taxonomies=False) is bare


def test_inputs_are_the_publishers_checks(schema):
    X = pd.DataFrame({"age": [20, 60], "colour": ["r", "g"]})
    y = pd.Series(["no", "yes"])
    X0 = X.copy()
    Xc, yc, sc = check_release_input(X, y, schema)
    assert Xc is X and sc.predictors == ["age", "colour"] and X.equals(X0)
    with pytest.raises(ValueError, match="^y has missing values"):
        check_y(pd.Series(["no", None]))
    with pytest.raises(ValueError, match="Unknown label type"):
        check_y([0.5, 1.5])
    with pytest.raises(TypeError, match="schema must be a dpexplore Schema"):
        check_release_input(X, y, {"age": 1})
    with pytest.raises(ValueError, match="has values outside its public range"):
        check_release_input(X.assign(age=[20, 95]), y, schema)
    import scipy.sparse
    with pytest.raises(TypeError, match="[Ss]parse"):
        refuse_sparse(scipy.sparse.csr_matrix(np.eye(2)))
    assert list(as_frame(np.zeros((2, 2))).columns) == ["x0", "x1"]
    assert not is_source(X) and source_input(X, y, schema) is None
    with pytest.raises(ValueError, match="requires y to be passed"):
        source_input(X, None, schema)


def test_inputs_recognise_a_source(schema):
    from dpexplore import sources
    frame = pd.DataFrame({"age": [20, 60, 30], "colour": ["r", "g", "g"], "y": ["no", "yes", "yes"]})
    src = sources.pandas(frame, schema)
    assert is_source(src)
    table, got = source_input(src, None, None)
    assert got.predictors == schema.predictors and table.n_records == 3
    table, got = source_input(src, None, schema.subset(["colour"]))
    assert got.predictors == ["colour"]
    with pytest.raises(ValueError, match="y must be None when X is a Source"):
        source_input(src, frame["y"], None)
