"""End-to-end audits: a column's type comes from the schema, never from the values around it.

A type that pandas or DuckDB infers from the values is itself an output of the private rows: one
record can change it, and with it whether the release is refused or what type its columns come
back in — an event that tells the neighbours apart with certainty (ε = ∞). Each audit runs the
public API on neighbouring inputs (D and D plus one record) many times and bounds the privacy
loss of the event from below (:func:`privacy_audit.assert_private`); the old behaviour, put
back around the public function, must be flagged (:func:`privacy_audit.assert_flagged`):

* ``build_schema(missing="drop-rows")``: one record with a missing value makes pandas type an
  int column float. The rule drops the record, the column stayed float, and "1.0" was compared
  with the declared "0, 1": refused. The broken variant compares each value's text as pandas
  typed it (the old rule). Three columns: an int target, an int-coded category, a True/False
  target (whose type, not its refusal, told the neighbours apart: bool, or text).
* ``sources.csv``: DuckDB guessed a column's type from a sample of the rows; a declared category
  "X" first seen after row 30,000 failed the guessed integer cast: refused. The broken variant
  reads the file with the guessed types (a DuckDB query over ``read_csv``).

Each audit prints a row: path, claimed ε, measured lower bound and the event's counts.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from dpexplore import sources, tables
from dpexplore.domain import Attribute, Schema
from dpexplore.publish import PrivPfC
from dpexplore.tables import draft as draft_module
from privacy_audit import assert_flagged, assert_private

EPS = 1.0
N = 100            # a certain refusal gives a lower bound ≈ log(N / 5.3) ≈ 2.9 > ε at this size
METHOD = "DiffGen"  # a real publisher, and the fastest on this small domain

rng = np.random.default_rng(0)
BASE = pd.DataFrame({"code": rng.integers(0, 3, 60), "flag": rng.random(60) < 0.4, "y": rng.integers(0, 2, 60)})


def draft_for(target_classes: list) -> pd.DataFrame:
    return pd.DataFrame([["code", "categorical", np.nan, np.nan, False, "0, 1, 2", False],
                         ["flag", "categorical", np.nan, np.nan, False, "False, True", False],
                         ["y", "target", np.nan, np.nan, False, ", ".join(map(str, target_classes)), False]],
                        columns=tables.DRAFT_COLUMNS)


def plus(frame: pd.DataFrame, **record) -> pd.DataFrame:
    return pd.concat([frame, pd.DataFrame([record])], ignore_index=True)


BOOL = BASE.assign(y=BASE["y"].astype(bool))
CASES = {   # (D, D plus one record, declared classes, the record's missing column)
    "missing int label": (BASE, plus(BASE, code=1, flag=True, y=np.nan), [0, 1]),
    "missing int-coded category": (BASE, plus(BASE, code=np.nan, flag=True, y=1), [0, 1]),
    "missing True/False label": (BOOL, plus(BOOL, code=1, flag=True, y=np.nan), [False, True]),
}


def release_outcome(frame: pd.DataFrame, rng, classes) -> str:
    """'refused' when the public API raises, else the released target column's type (the event
    under audit: a refusal, or a type, that one record decides)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            schema, encoded, _ = tables.build_schema(frame, draft_for(classes), missing="drop-rows")
            result = tables.release(encoded, schema, METHOD, EPS, random_state=rng, evaluate=False, progress=False)
        except ValueError:   # InputError is a ValueError
            return "refused"
    return f"released, target {result.synthetic['y'].dtype}"


def _row(path, res):
    seen = res.table[(res.table["count"] + res.table["count_neighbour"]) > 0]
    events = "; ".join(f"{e}: {a} of {res.n_samples} on D, {b} on D+1" for e, a, b
                       in zip(seen["event"], seen["count"], seen["count_neighbour"]))
    print(f"\n| declared-types audit: {path} | ε = {EPS:g} | lower bound {res.epsilon_lower:.3f} "
          f"| point {res.epsilon_hat:.3f} | {events} |")


@pytest.mark.parametrize("case", list(CASES))
def test_drop_rows_gives_every_column_its_declared_type(case):
    data, neighbour, classes = CASES[case]
    res = assert_private(lambda frame, r: release_outcome(frame, r, classes), data, neighbour, EPS, n_samples=N)
    assert "refused" not in set(res.table.loc[res.table["count"] > 0, "event"])
    _row(f"build_schema drop-rows, {case}", res)


def _text_as_pandas_typed(values, declared):
    """The old rule: each value's text as pandas typed the column ("1.0" in a float column)."""
    text = pd.Series(values).astype(str).str.strip()
    return np.asarray([t if t in set(map(str, declared)) else None for t in text], dtype=object)


def _target_as_it_came(monkeypatch):
    """The old encoded target: the column as it came, in the type pandas gave it (object, not
    bool, once one label is missing)."""
    build = tables.build_schema

    def keeping(frame, draft, *args, **kwargs):
        schema, encoded, leaks = build(frame, draft, *args, **kwargs)
        return schema, encoded.assign(y=frame.loc[encoded.index, "y"]), leaks

    monkeypatch.setattr(tables, "build_schema", keeping)


BROKEN = {"missing int label": lambda mp: mp.setattr(draft_module, "match_labels", _text_as_pandas_typed),
          "missing int-coded category": lambda mp: mp.setattr(draft_module, "match_labels", _text_as_pandas_typed),
          "missing True/False label": _target_as_it_came}


@pytest.mark.parametrize("case", list(CASES))
def test_audit_flags_types_read_from_the_values(case, monkeypatch):
    BROKEN[case](monkeypatch)
    data, neighbour, classes = CASES[case]
    res = assert_flagged(lambda frame, r: release_outcome(frame, r, classes), data, neighbour, EPS, n_samples=N)
    _row(f"BROKEN: build_schema drop-rows, {case}, types from the values", res)


# --------------------------------------------------------------------------- sources.csv (DuckDB)
CSV_SCHEMA = Schema([Attribute.categorical("code", ["0", "1", "X"])], "y", ["0", "1"])
ROWS = 30_001        # DuckDB's sniffer reads a sample of 20,480 rows: the record sits past it


@pytest.fixture(scope="module")
def csv_pair(tmp_path_factory):
    """D (codes 0 and 1 only) and D plus one record of the declared category "X", at the end."""
    folder = tmp_path_factory.mktemp("late_category")
    d = pd.DataFrame({"code": np.arange(ROWS) % 2, "y": (np.arange(ROWS) // 2) % 2})
    d.to_csv(folder / "d.csv", index=False)
    plus(d, code="X", y=1).to_csv(folder / "d_plus.csv", index=False)
    return str(folder / "d.csv"), str(folder / "d_plus.csv")


def csv_run(open_source):
    """``run(path, rng)``: PrivPfC fitted from the CSV source; 'refused' when the source raises.
    A source is opened once per file (its count table is built once, as the public API does)."""
    opened = {}

    def run(path, rng):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                source = opened.get(path) or opened.setdefault(path, open_source(path))
                PrivPfC(epsilon=EPS, random_state=int(rng.integers(2 ** 31))).fit(source)
            except ValueError:
                opened.pop(path, None)
                return "refused"
        return "released"
    return run


def test_csv_is_read_with_the_declared_types(csv_pair):
    d, d_plus = csv_pair
    res = assert_private(csv_run(lambda p: sources.csv(p, CSV_SCHEMA)), d, d_plus, EPS, n_samples=N)
    assert set(res.table.loc[res.table["count"] > 0, "event"]) == {"released"}
    _row("sources.csv, a declared category first seen after row 30,000", res)


def test_audit_flags_a_csv_read_with_guessed_types(csv_pair):
    def guessed(path):   # what sources.csv did: the types DuckDB's sniffer guesses from a sample
        return sources.duckdb(f"SELECT * FROM read_csv('{path}')", CSV_SCHEMA)
    res = assert_flagged(csv_run(guessed), *csv_pair, EPS, n_samples=N)
    _row("BROKEN: sources.csv with the sniffer's guessed types", res)
