"""Input checks shared by every public entry point.

Each check raises before any privacy budget is spent and names the offending argument, so the
message tells the user what to fix. None of them mutates its input.

A message about the private rows names the column and the rule it breaks, never a value, a line
or a count of the table: a refusal message leaves the place where the data lives, and no ε pays
for what it says. :func:`rule_message` words each rule once, for the pandas path and for every
engine of :mod:`dpexplore.sources`; the offending values themselves are shown only by the
non-private diagnosis :func:`dpexplore.tables.check_table`, on the data owner's machine.

Parameter checks raise ``TypeError`` for a value of the wrong type and ``ValueError`` for one
out of its range (as :func:`sklearn.utils.check_scalar`). This module, the bottom of the core,
imports no other part of dpexplore and no scikit-learn; :func:`dpexplore.domain.check_schema`
checks schemas and :mod:`dpexplore.inputs` the ``fit``/``predict`` inputs.
"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import pandas as pd

RandomState = int | np.random.Generator | None

#: where an analyst sees the offending values and rows (on their own machine, not private)
CHECK_TABLE_HINT = ("dpexplore.tables.check_table(table, schema) shows the offending rows on your own machine "
                    "(a non-private diagnosis: do not share its output)")


def format_number(x: Any) -> str:
    """A public number as messages and labels print it: whole numbers in full (``1000000``, not
    ``1e+06``), others with ``:g`` (``0.25``, ``1.5e-07``)."""
    x = float(x)
    return str(int(x)) if x.is_integer() else f"{x:g}"


def rule_message(rule: str, column: Any = None, *, lower: Any = None, upper: Any = None,
                 classes: Any = None, engine: str = "the engine", table: str = "X", statement: str = "") -> str:
    """The one wording of each rule a private value can break: the column and the rule, never
    the value. ``column`` is a column name (a list of names for ``"missing"`` on ``table``).

    Rules: ``"empty"`` (``table`` has no row), ``"one_class"`` (labels ``column`` hold ``classes``
    (a number, below 2) classes and none are declared), ``"missing"`` (NaN in a predictor),
    ``"missing_label"`` (NaN in the target),
    ``"category"`` (outside the declared categories), ``"non_numeric"``, ``"infinite"``,
    ``"range"`` (outside [lower, upper]), ``"class"`` (a label not among ``classes``),
    ``"rule"`` (a row breaks the declared rule of ``column``, ``statement``, in words: names and declared
    labels only),
    ``"unreadable"`` (the ``engine`` cannot read a value as the type its column was given: a
    DataFrame's or a file's own types; a CSV that :func:`dpexplore.sources.csv` reads gets the
    schema's types, and a non-number in a numeric column then meets ``"non_numeric"``).
    """
    if rule == "empty":
        return f"{table} is empty: at least one row is needed"
    if rule == "one_class":
        return (f"{column} holds only {classes} class: a classifier needs at least 2; declare the classes "
                "(classes=[...] or a Schema) to fit labels that hold fewer")
    if rule == "missing":
        if isinstance(column, (list, tuple)):
            return (f"{table} has missing values (NaN) in column(s) {list(column)}: drop or impute them before "
                    "a private release")
        return f"column {column!r} has missing values (NaN): drop or impute them before a private release"
    if rule == "missing_label":
        return f"{column} has missing values (NaN): drop those rows first"
    if rule == "category":
        return (f"column {column!r} has value(s) outside its declared categories: declare them, or group them "
                "into declared ones")
    if rule == "non_numeric":
        return f"column {column!r} is declared numeric but holds non-numeric values"
    if rule == "infinite":
        return f"column {column!r} has infinite values: clip them to the declared bounds or drop those rows"
    if rule == "range":
        return (f"column {column!r} has values outside its public range [{format_number(lower)}, {format_number(upper)}]; "
                "clip them or widen the declared bounds")
    if rule == "class":
        who = f"the target {column!r}" if column not in (None, "y") else "y"
        return (f"{who} has label(s) that are not among the declared classes {list(classes)}; "
                "declare every class the target can take")
    if rule == "rule":
        return (f"column {column!r} has row(s) that break its declared rule ({statement}): fix those rows, or "
                "declare the rule the data follows; " + CHECK_TABLE_HINT)
    if rule == "unreadable":
        where = f"column {column!r}" if column is not None else "a column of the table"
        return (f"{where} holds a value that {engine} cannot read as the type the column was given (the "
                "engine's own message is withheld: it quotes private rows). Give the column a type that holds "
                "every value it may take (declare it in the schema) or fix the data; " + CHECK_TABLE_HINT)
    raise ValueError(f"unknown rule {rule!r}")


def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """Return ``epsilon`` as a float after checking that it is a finite number > 0."""
    return check_positive(epsilon, name)


def check_positive(value: Any, name: str) -> float:
    """Return ``value`` as a float after checking that it is a finite number > 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return value


def check_finite(value: Any, name: str) -> float:
    """Return ``value`` as a float after checking that it is a finite real number."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    if not np.isfinite(float(value)):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def check_int(value: Any, name: str, *, minimum: int | None = 0, allow_none: bool = False) -> int | None:
    """Return ``value`` as an int after checking that it is an integer (not a bool) ≥ ``minimum``
    (no lower bound when ``minimum`` is None); ``None`` passes when ``allow_none``."""
    if value is None and allow_none:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be an integer ≥ {minimum}, got {value!r}")
    return int(value)


def check_fraction(value: Any, name: str, *, low_open: bool = True, high_closed: bool = True) -> float:
    """Return ``value`` as a float after checking that it is a real number in the unit interval:
    (0, 1] by default, [0, …) with ``low_open=False``, (…, 1) with ``high_closed=False``."""
    interval = ("(" if low_open else "[") + "0, 1" + ("]" if high_closed else ")")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number in {interval}, got {value!r}")
    v = float(value)
    above = v > 0 if low_open else v >= 0
    below = v <= 1 if high_closed else v < 1
    if not (np.isfinite(v) and above and below):
        raise ValueError(f"{name} must be a number in {interval}, got {value!r}")
    return v


def check_flag(value: Any, name: str) -> bool:
    """Return ``value`` as a bool after checking that it is True or False (not 0/1 or None)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_binary_matrix(a: Any, name: str = "X", *, dtype: Any = np.int64, hint: str = "",
                        copy: bool = True) -> np.ndarray:
    """``a`` (an array, a list or a DataFrame) as a new non-empty 2-D array of ``dtype`` after
    checking that every entry is 0 or 1 (booleans count as 0/1). ``hint`` is appended to the
    message (e.g. another way the caller accepts to binarise). ``copy=False``, for callers that
    only read the result: ``a`` itself when it already is such an array of ``dtype``."""
    if isinstance(a, pd.DataFrame):   # mixed bool/number columns: one numeric array, not objects
        kinds = {t.kind for t in a.dtypes}
        arr = a.to_numpy(dtype=bool if kinds <= {"b"} else float) if kinds <= set("biuf") else a.to_numpy()
    else:
        arr = np.asarray(a)
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty 2-D array of 0/1 features")
    if arr.dtype != bool and (arr.dtype.kind not in "iuf" or not is_zero_one(arr)):
        raise ValueError(f"{name} must hold only 0/1 values: binarise it with public cut points first "
                         f"(dpexplore.encode.Binarizer){hint}")
    return arr.astype(dtype, copy=copy)


def check_bits(bits: Any, name: str) -> np.ndarray:
    """``bits`` (0/1 numbers or booleans, any shape) as a new int64 array, after checking it is
    non-empty and holds only 0 and 1."""
    b = np.asarray(bits)
    if b.size == 0 or (b.dtype != bool and (b.dtype.kind not in "iuf" or not is_zero_one(b))):
        raise ValueError(f"{name} must be a non-empty array of 0/1 values (or booleans)")
    return b.astype(np.int64)


def check_random_state(random_state: RandomState) -> np.random.Generator:
    """Turn ``None``, an int seed or a ``numpy.random.Generator`` into a Generator.

    A Generator is returned as is (so a caller can thread one generator through several calls);
    global numpy random state is never used.
    """
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return np.random.default_rng(int(random_state))
    raise TypeError(
        "random_state must be None, an int seed or a numpy.random.Generator, "
        f"got {type(random_state).__name__}"
    )


def check_fraction_weights(weights: Any, name: str = "split") -> np.ndarray:
    """Check positive finite weights and return them normalised to sum to 1."""
    w = np.asarray(weights, dtype=float)
    if w.ndim != 1 or w.size == 0:
        raise ValueError(f"{name} must be a non-empty sequence of weights, got {weights!r}")
    if not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise ValueError(f"{name} must contain finite weights > 0, got {weights!r}")
    return w / w.sum()


def check_frame(X: Any, name: str = "X") -> pd.DataFrame:
    """Check that ``X`` is a non-empty DataFrame without missing values; return it unchanged."""
    if not isinstance(X, pd.DataFrame):
        raise TypeError(f"{name} must be a pandas DataFrame, got {type(X).__name__}")
    if len(X) == 0:
        raise ValueError(rule_message("empty", table=name))
    if X.shape[1] == 0:
        raise ValueError(f"{name} has no columns")
    missing = X.columns[X.isna().any(axis=0).to_numpy()]
    if len(missing):
        raise ValueError(rule_message("missing", list(missing), table=name))
    return X


def check_target(y: Any, name: str = "y", min_classes: int = 2) -> pd.Series:
    """Check a label vector: 1-D, no missing values, at least ``min_classes`` classes."""
    if isinstance(y, pd.DataFrame):
        if y.shape[1] != 1:
            raise ValueError(f"{name} must be one column, got {y.shape[1]}")
        y = y.iloc[:, 0]
    s = y if isinstance(y, pd.Series) else pd.Series(np.asarray(y))
    if s.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional")
    if len(s) == 0:
        raise ValueError(rule_message("empty", table=name))
    if s.isna().any():
        raise ValueError(rule_message("missing_label", name))
    if s.nunique() < min_classes:
        raise ValueError(rule_message("one_class", name, classes=s.nunique()))
    return s


def check_same_length(X: Any, y: Any, names: tuple[str, str] = ("X", "y")) -> None:
    """Raise if ``X`` and ``y`` do not have the same number of rows."""
    if len(X) != len(y):  # the counts are private: the message does not show them
        raise ValueError(f"{names[0]} and {names[1]} have different numbers of rows: pass the labels of the "
                         "same records")


def check_scores(scores: Any, name: str = "scores") -> np.ndarray:
    """``scores`` as a new 1-D float array, after checking it is non-empty and finite."""
    q = np.asarray(scores, dtype=float)
    if q.ndim != 1 or q.size == 0 or not np.all(np.isfinite(q)):
        raise ValueError(f"{name} must be a non-empty 1-D array of finite numbers")
    return q


def is_zero_one(a: Any) -> bool:
    """True when every entry of ``a`` is 0 or 1 (``np.isin(a, (0, 1)).all()``, empty → True),
    without isin's sort of the whole matrix: min/max for integers, two comparisons for floats
    (NaN and 0.5 fail both)."""
    a = np.asarray(a)
    if a.size == 0:
        return True
    if a.dtype.kind in "iu":
        return bool(a.min() >= 0 and a.max() <= 1)
    if a.dtype.kind == "f":
        return bool(((a == 0) | (a == 1)).all())
    return bool(np.isin(a, (0, 1)).all())
