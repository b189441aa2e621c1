"""Bring-your-own-table path: pure functions and the widget, on tables generated here."""
import io
import zipfile

import numpy as np
import pandas as pd
import pytest

from dpexplore.widgets.your_data import (METHODS, InputError, YourDataApp, build_schema, check_table,
                                         draft_schema, read_table, release, summary_markdown, synthetic_csv)


def make_table(n=1500, seed=0):
    """A table dpexplore has never seen: int, float, string predictors, string target."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    return pd.DataFrame({
        "age": (30 + 12 * y + rng.normal(0, 6, n)).round().clip(18, 90).astype(int),
        "colour": np.where(rng.random(n) < 0.8, np.where(y == 1, "red", "blue"), "green"),
        "score": rng.random(n),
        "outcome": np.where(y == 1, "yes", "no"),
    })


@pytest.fixture(scope="module")
def csv_bytes():
    return make_table().to_csv(index=False).encode()


def declared(frame):
    """The draft with every domain declared as public knowledge (wider than the data)."""
    draft, _ = draft_schema(frame, "outcome")
    draft.loc[draft.column == "age", ["lower", "upper"]] = [0, 120]
    draft.loc[draft.column == "score", ["lower", "upper"]] = [0, 1]
    draft["from_data"] = False
    return draft


def test_read_table_from_bytes_path_and_upload(tmp_path, csv_bytes):
    a = read_table(csv_bytes, "t.csv")
    p = tmp_path / "t.csv"
    p.write_bytes(csv_bytes)
    b = read_table(str(p))
    c = read_table(({"name": "t.csv", "content": memoryview(csv_bytes), "size": len(csv_bytes)},))
    for f in (b, c):
        pd.testing.assert_frame_equal(a, f)
    assert list(a.columns) == ["age", "colour", "score", "outcome"]
    assert len(a) == 1500


@pytest.mark.parametrize("content, name, match", [
    (b"PK\x03\x04\x14\x00\x00\x00\x08\x00\xff\xfe\x9c", "t.csv", "binary"),
    (b"a,b\n1,2\n", "table.xlsx", "not a CSV"),
    (b"", "t.csv", "empty"),
    (b"just one column\n1\n2\n", "t.csv", "1 column"),
    (b"a,b\n", "t.csv", "no rows"),
])
def test_read_table_rejects_non_csv(content, name, match):
    with pytest.raises(InputError, match=match):
        read_table(content, name)


def test_read_table_zip_is_not_csv():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("x.csv", "a,b\n" + "1,2\n" * 100)
    with pytest.raises(InputError, match="binary"):
        read_table(buf.getvalue(), "data.csv")


def test_read_missing_path(tmp_path):
    with pytest.raises(InputError, match="no file"):
        read_table(str(tmp_path / "nope.csv"))


def test_check_table_missing_values_and_one_class():
    t = make_table(100)
    t.loc[[3, 7], "score"] = np.nan
    with pytest.raises(InputError, match=r"missing values in 'score' \(2 rows\)"):
        check_table(t, "outcome")
    with pytest.raises(InputError, match="single class"):
        check_table(make_table(100).assign(outcome="yes"), "outcome")
    with pytest.raises(InputError, match="not a column"):
        check_table(make_table(100), "income")


def test_draft_flags_everything_from_data():
    t = make_table(300)
    draft, leaks = draft_schema(t, "outcome")
    assert list(draft.column) == ["age", "colour", "score", "outcome"]
    assert list(draft.kind) == ["numeric", "categorical", "numeric", "target"]
    assert draft.from_data.all()
    assert len(leaks) == 1 and "private data" in leaks[0]
    age = draft.set_index("column").loc["age"]
    assert (age.lower, age.upper) == (t.age.min(), t.age.max()) and age.integer
    assert draft.set_index("column").loc["outcome", "categories"] == "no, yes"


def test_build_schema_declared_bounds_taxonomy_and_clipping():
    t = make_table(300)
    draft = declared(t)
    draft.loc[draft.column == "age", ["lower", "upper"]] = [20, 60]  # narrower than the data: clip
    schema, enc, leaks = build_schema(t, draft, fanouts=(2, 4))
    assert leaks == []
    assert schema.target == "outcome" and list(schema.classes) == ["no", "yes"]
    tax = schema["age"].taxonomy
    assert tax.level_sizes == (1, 2, 8)  # equal-width nesting 2 then 4
    np.testing.assert_allclose(tax.edges(1), [20, 40, 60])
    assert enc.age.min() >= 20 and enc.age.max() <= 60
    assert (enc.age == t.age.clip(20, 60)).all()
    schema.validate(enc[schema.predictors], enc[schema.target])
    pd.testing.assert_frame_equal(t, make_table(300))  # input not mutated


def test_build_schema_reports_leaks_and_drop():
    t = make_table(300)
    draft, _ = draft_schema(t, "outcome")
    draft.loc[draft.column == "score", "kind"] = "drop"
    schema, enc, leaks = build_schema(t, draft)
    assert schema.predictors == ["age", "colour"] and "score" not in enc
    assert any(l.startswith("age: bounds") for l in leaks) and any(l.startswith("outcome: classes") for l in leaks)


def test_non_numeric_declared_numeric():
    t = make_table(200)
    t["colour_code"] = t["colour"]
    draft, _ = draft_schema(t, "outcome")
    draft.loc[draft.column == "colour_code", ["kind", "lower", "upper"]] = ["numeric", 0, 10]
    with pytest.raises(InputError, match="'colour_code' is declared numeric but has non-numeric values"):
        build_schema(t, draft)


def test_undeclared_category_and_bad_bounds():
    t = make_table(200)
    draft = declared(t)
    draft.loc[draft.column == "colour", "categories"] = "red, blue"
    with pytest.raises(InputError, match="'colour' has values \\['green'\\]"):
        build_schema(t, draft)
    draft = declared(t)
    draft.loc[draft.column == "age", ["lower", "upper"]] = [50, 10]
    with pytest.raises(InputError, match="lower < upper"):
        build_schema(t, draft)


@pytest.mark.parametrize("method", list(METHODS))
def test_release_every_method(method):
    t = make_table(1500)
    schema, enc, leaks = build_schema(t, declared(t))
    res = release(enc, schema, method, 2.0, leaks=leaks, random_state=1)
    assert res.ledger["charged"].sum() == pytest.approx(2.0)
    assert res.ledger["label"].astype(str).str.len().gt(0).all()
    syn = res.synthetic
    assert len(syn) > 0 and "outcome" in syn.columns
    assert set(syn["outcome"]) <= {"no", "yes"}
    u = res.utility.set_index("model")["error"]
    majority = u["majority class"]
    assert 0.4 < majority < 0.6
    assert u.iloc[0] < majority - 0.1  # the signal is strong: every method beats the majority at ε = 2
    csv = synthetic_csv(res).decode()
    assert csv.splitlines()[0].split(",") == list(syn.columns)
    md = summary_markdown(res)
    assert "Budget ledger" in md and f"ε = {2:g}" in md and "Every bound" in md


def test_release_reproducible_and_validates_before_spending():
    t = make_table(800)
    schema, enc, _ = build_schema(t, declared(t))
    a = release(enc, schema, "PrivPfC", 1.0, random_state=3)
    b = release(enc, schema, "PrivPfC", 1.0, random_state=3)
    pd.testing.assert_frame_equal(a.synthetic, b.synthetic)
    for eps in (0, -1, float("nan")):
        with pytest.raises(InputError, match="epsilon"):
            release(enc, schema, "PrivPfC", eps)
    with pytest.raises(InputError, match="unknown method"):
        release(enc, schema, "magic", 1.0)


# ----------------------------------------------------------------------------- the widget
def test_app_end_to_end(csv_bytes):
    app = YourDataApp(epsilon=1.0)
    assert app.load(csv_bytes, "t.csv")
    assert app.target.value == "outcome"
    assert "PrivacyLeakWarning" in app.messages.value
    assert set(app.leak_rows()) == {"age", "colour", "score", "outcome"}
    # declaring a bound clears that row's flag
    app._rows["age"]["upper"].value = 120.0
    app._rows["age"]["lower"].value = 0.0
    assert "age" not in app.leak_rows()
    assert app._rows["age"]["flag"].value == ""
    assert "from data" in app._rows["score"]["flag"].value
    res = app.release()
    assert res is not None and app.last_error is None
    assert "synthetic.csv" in app.downloads.value and "summary.md" in app.downloads.value
    assert "PrivacyLeakWarning" in app.messages.value and "score: bounds" in app.messages.value
    assert not any(l.startswith("age") for l in res.leaks)


def test_app_upload_widget_value(csv_bytes):
    app = YourDataApp()
    app.upload.value = ({"name": "t.csv", "type": "text/csv", "size": len(csv_bytes),
                         "content": memoryview(csv_bytes), "last_modified": pd.Timestamp("2026-01-01", tz="UTC").to_pydatetime()},)
    assert app.frame is not None and app.release_button.disabled is False


@pytest.mark.parametrize("case", ["missing", "non_numeric", "one_class", "not_csv"])
def test_app_bad_input_shows_message_and_releases_nothing(case):
    t = make_table(300)
    name = "t.csv"
    if case == "missing":
        t.loc[5, "age"] = np.nan
    elif case == "one_class":
        t["outcome"] = "yes"
    content = t.to_csv(index=False).encode()
    if case == "not_csv":
        content, name = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "picture.png"
    app = YourDataApp()
    app.load(content, name)
    if case == "non_numeric":
        app._rows["colour"]["kind"].value = "numeric"
    res = app.release()
    assert res is None and app.result is None
    assert app.downloads.value == ""
    assert app.last_error and "✖" in app.messages.value and "Traceback" not in app.messages.value
    expected = {"missing": "missing values", "non_numeric": "declared numeric", "one_class": "single class",
                "not_csv": "not a CSV"}[case]
    assert expected in app.last_error


def test_app_bad_path_message():
    app = YourDataApp(path="/nonexistent/table.csv")
    assert not app.load()
    assert "no file" in app.last_error
