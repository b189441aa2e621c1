"""The shared input checks and the environment switch."""
import numpy as np
import pandas as pd
import pytest

from dpexplore import _config
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
    with pytest.raises(ValueError, match="fewer than 2 distinct classes") as err:
        check_target(["x", "x"])
    assert "'x'" not in str(err.value)
    with pytest.raises(ValueError, match="missing"):
        check_target(pd.Series(["x", None]))


def test_quick_switch(monkeypatch):
    monkeypatch.setenv("DPEXPLORE_QUICK", "1")
    assert _config.quick() and _config.repetitions(10) == 2
    monkeypatch.setenv("DPEXPLORE_QUICK", "0")
    assert not _config.quick() and _config.repetitions(10) == 10


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
