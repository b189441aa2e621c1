"""Bring-your-own-table path: pure functions and the widget, on tables generated here."""
import base64
import io
import re
import warnings
import zipfile

import numpy as np
import pandas as pd
import pytest

from dpexplore import mechanisms
from dpexplore.budget import BudgetAccountant
from dpexplore.domain import PrivacyLeakWarning
from dpexplore.tables import DEFAULT_MARGINAL_SHARE
from dpexplore.widgets import your_data
from dpexplore.widgets.your_data import (METHODS, InputError, YourDataApp, build_schema, check_table,
                                         draft_schema, read_table, release, summary_markdown, synthetic_csv)
from _stand_ins import SchemaParameter


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


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    """The app writes its files next to the notebook (the working directory): here, a tmp dir."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="module")
def csv_bytes():
    return make_table().to_csv(index=False).encode()


def declared(frame):
    """The draft with every domain declared as public knowledge (wider than the data)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
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
    (b"PK\x03\x04\x14\x00\x00\x00\x08\x00\xff\xfe\x9c", "t.csv", "zip archive or a spreadsheet"),
    (b"\xff\xfe\x00a\x00,\x9c", "t.csv", "binary"),
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
    with pytest.raises(InputError, match="zip archive"):
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
    with pytest.warns(PrivacyLeakWarning, match="private data"):
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
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # everything declared: no leak warning
        schema, enc, leaks = build_schema(t, draft, fanouts=(2, 4))
    assert leaks == []
    assert schema.target == "outcome" and list(schema.classes) == ["no", "yes"]
    tax = schema["age"].taxonomy
    assert tax.level_sizes == (1, 2, 8)  # equal-width nesting 2 then 4
    np.testing.assert_allclose(tax.edges(1), [20, 40.5, 60])   # an integer column: 20–40 | 41–60
    assert tax.labels(1) == ["20–40", "41–60"]
    assert enc.age.min() >= 20 and enc.age.max() <= 60
    assert (enc.age == t.age.clip(20, 60)).all()
    schema.validate(enc[schema.predictors], enc[schema.target])
    pd.testing.assert_frame_equal(t, make_table(300))  # input not mutated


def test_build_schema_reports_leaks_and_drop():
    t = make_table(300)
    with pytest.warns(PrivacyLeakWarning):
        draft, _ = draft_schema(t, "outcome")
    draft.loc[draft.column == "score", "kind"] = "drop"
    with pytest.warns(PrivacyLeakWarning, match="age: bounds taken from the data"):
        schema, enc, leaks = build_schema(t, draft)
    assert schema.predictors == ["age", "colour"] and "score" not in enc
    assert any(l.startswith("age: bounds") for l in leaks) and any(l.startswith("outcome: classes") for l in leaks)
    assert not any(l.startswith("score") for l in leaks)  # a dropped column's domain is not used


def test_non_numeric_declared_numeric():
    t = make_table(200)
    t["colour_code"] = t["colour"]
    draft = declared(t)
    draft.loc[draft.column == "colour_code", ["kind", "lower", "upper"]] = ["numeric", 0, 10]
    with pytest.raises(InputError, match="'colour_code' is declared numeric but has non-numeric values"):
        build_schema(t, draft)


def test_undeclared_category_and_bad_bounds():
    t = make_table(200)
    draft = declared(t)
    draft.loc[draft.column == "colour", "categories"] = "red, blue"
    with pytest.raises(InputError, match="'colour' has values that are not among its declared categories") as err:
        build_schema(t, draft)
    assert "green" not in str(err.value) and "check_table" in str(err.value)
    draft = declared(t)
    draft.loc[draft.column == "age", ["lower", "upper"]] = [50, 10]
    with pytest.raises(InputError, match="lower < upper"):
        build_schema(t, draft)


@pytest.mark.parametrize("method", [name for name, spec in METHODS.items() if spec.kind == "publisher"])
def test_release_every_method(method):
    t = make_table(1500)
    schema, enc, leaks = build_schema(t, declared(t))
    res = release(enc, schema, method, 2.0, leaks=leaks, random_state=1)
    # the method's share of ε, and up to the default marginal share (unspent when nothing needs a marginal)
    share = DEFAULT_MARGINAL_SHARE
    assert res.marginal_share == share
    assert 2.0 * (1 - share) - 1e-9 <= res.ledger["charged"].sum() <= 2.0 + 1e-9
    assert list(res.synthetic.columns) == schema.predictors + [schema.target]  # every declared column
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
    for eps in (0, -1, float("nan"), 1e-9, 1e6):
        with pytest.raises(InputError, match="outside \\[0.01, 10\\]"):
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
    app._rows["age"]["upper"].value = "120"
    app._rows["age"]["lower"].value = "0"
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
    if case == "missing":  # a column with missing values starts unticked: the user ticks it
        t.loc[5, "age"] = np.nan
    elif case == "one_class":
        t["outcome"] = "yes"
    content = t.to_csv(index=False).encode()
    if case == "not_csv":
        content, name = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "picture.png"
    app = YourDataApp()
    app.load(content, name)
    if case == "missing":
        app.columns.value = tuple(app.columns.value) + ("age",)
        app.apply_columns.click()
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


# ----------------------------------------------------------------------------- more of the contract
def test_integer_bounds_round_then_clip():
    t = make_table(300).assign(age=lambda d: d.age + 0.4)  # 18.4 ... : not integers in the file
    draft = declared(t)
    draft.loc[draft.column == "age", ["lower", "upper", "integer"]] = [20.5, 40.5, True]
    schema, enc, _ = build_schema(t, draft)
    assert enc.age.dtype == np.int64 and enc.age.min() == 21 and enc.age.max() == 40
    schema.validate(enc[schema.predictors], enc[schema.target])  # inside the declared bounds
    draft.loc[draft.column == "age", ["lower", "upper"]] = [20.2, 20.8]
    with pytest.raises(InputError, match="no integer"):
        build_schema(t, draft)


def test_release_with_accountant_and_fresh_noise():
    t = make_table(800)
    schema, enc, _ = build_schema(t, declared(t))
    acc = BudgetAccountant(1.5)
    res = release(enc, schema, "PrivPfC", 1.0, random_state=0, accountant=acc)
    assert acc.spent == pytest.approx(1.0) and res.ledger["charged"].sum() == pytest.approx(1.0)
    with pytest.raises(your_data.BudgetExceededError):
        release(enc, schema, "PrivPfC", 1.0, random_state=0, accountant=acc)
    assert acc.spent == pytest.approx(1.0)  # refused before spending
    rng = np.random.default_rng(5)  # one Generator through several releases: independent noise
    a = release(enc, schema, "PrivPfC", 1.0, random_state=rng)
    b = release(enc, schema, "PrivPfC", 1.0, random_state=rng)
    assert not a.synthetic.equals(b.synthetic)


def test_summary_is_one_page_with_the_ledger():
    t = make_table(1500)
    schema, enc, _ = build_schema(t, declared(t))
    res = release(enc, schema, "DiffMulti", 1.0, random_state=0)
    assert len(res.ledger) > 50  # DiffMulti spends per split: hundreds of ledger rows ...
    md = summary_markdown(res)
    assert len(md.splitlines()) < 60  # ... summarised per label on one page
    for label in res.ledger["label"].unique():
        assert f"| {label} |" in md
    total = re.search(r"\| total \| (\d+) \| ([0-9.e-]+) \|", md)
    assert total and int(total.group(1)) == len(res.ledger)
    assert float(total.group(2)) == pytest.approx(res.ledger["charged"].sum(), rel=1e-3)
    assert "clipped" in md and "not private" in md


def _downloads(app):
    """The files behind the app's download links (written next to the notebook, linked by a
    relative href, never inlined as base64): name -> bytes."""
    assert "base64" not in app.downloads.value
    links = re.findall(r'href="([^"]+)" download="([^"]+)"', app.downloads.value)
    from pathlib import Path
    return {name.split("_", 3)[-1]: Path(href).read_bytes() for href, name in links}


def test_app_downloads_table_and_summary_with_ledger(csv_bytes):
    acc = BudgetAccountant(10.0)
    app = YourDataApp(epsilon=1.0, accountant=acc)
    assert app.load(csv_bytes, "t.csv")
    for c in ("age", "score"):
        app._rows[c]["public"].value = True
    res = app.release()
    files = _downloads(app)
    assert set(files) == {"synthetic.csv", "summary.md", "ledger.csv", "schema.json", "utility_not_private.md"}
    assert "NOT PRIVATE" in files["utility_not_private.md"].decode()
    pd.testing.assert_frame_equal(pd.read_csv(io.BytesIO(files["synthetic.csv"])),
                                  pd.read_csv(io.BytesIO(synthetic_csv(res))))
    summary = files["summary.md"].decode()
    assert "## Budget ledger" in summary
    for label in res.ledger["label"]:
        assert label in summary
    assert "colour: categories taken from the data" in summary  # the leak travels into the file
    first_spend = acc.spent
    assert 0.9 - 1e-9 <= first_spend <= 1.0 + 1e-9   # unmodelled columns' share may go unspent
    # a second release draws fresh noise from the app's generator, and spends again
    second = app.release()
    assert not second.synthetic.equals(res.synthetic) and acc.spent > first_spend + 0.9 - 1e-9
    # with an explicit seed (tests and demos only) the first release of a new app is reproducible
    seeded = YourDataApp(epsilon=1.0, random_state=0)
    seeded.load(csv_bytes, "t.csv")
    for c in ("age", "score"):
        seeded._rows[c]["public"].value = True
    first = seeded.release()
    again = YourDataApp(epsilon=1.0, random_state=0)
    again.load(csv_bytes, "t.csv")
    for c in ("age", "score"):
        again._rows[c]["public"].value = True
    pd.testing.assert_frame_equal(again.release().synthetic, first.synthetic)


def test_app_budget_exceeded_is_a_message(csv_bytes):
    acc = BudgetAccountant(0.5)
    app = YourDataApp(epsilon=1.0, accountant=acc)
    app.load(csv_bytes, "t.csv")
    assert app.release() is None
    assert "exceed" in app.last_error or "remains" in app.last_error
    assert acc.spent == 0 and app.downloads.value == ""


BAD = ["missing", "non_numeric", "one_class", "not_csv", "binary_csv", "ragged", "undeclared_class"]


def _bad_app(case, accountant):
    t = make_table(300)
    name = "t.csv"
    if case == "missing":
        t["score"] = t["score"].astype(object)
        t.loc[5, "score"] = None
    elif case == "one_class":
        t["outcome"] = "yes"
    content = t.to_csv(index=False).encode()
    if case == "not_csv":
        content, name = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "picture.png"
    elif case == "binary_csv":
        content = b"PK\x03\x04\x14\x00\x00\x00\x08\x00\xff\xfe\x9c"
    elif case == "ragged":
        content = b"a,b,c\n1,2,3\n4,5,6,7,8\n9,10,11\n"
    app = YourDataApp(accountant=accountant)
    app.load(content, name)
    if case == "missing":  # the user keeps the column with a missing value
        app.columns.value = tuple(app.columns.value) + ("score",)
        app.apply_columns.click()
    if case == "non_numeric":
        app._rows["colour"]["kind"].value = "numeric"
    elif case == "undeclared_class":
        app._rows["outcome"]["categories"].value = "yes"
    return app


@pytest.mark.parametrize("case", BAD)
def test_bad_input_spends_nothing_and_fits_nothing(case, monkeypatch):
    fitted = []

    def spy(eps, rs, accountant=None):
        fitted.append(eps)
        raise AssertionError("the method must not be reached on bad input")

    monkeypatch.setitem(METHODS, "PrivPfC", spy)
    acc = BudgetAccountant(5.0)
    app = _bad_app(case, acc)
    assert app.release() is None and app.result is None
    assert fitted == [] and acc.spent == 0 and acc.ledger.empty
    assert app.downloads.value == "" and app.last_error
    assert "✖" in app.messages.value and "Traceback" not in app.messages.value


def test_upload_then_path_and_widget7_upload(tmp_path, csv_bytes):
    p = tmp_path / "good.csv"
    p.write_bytes(csv_bytes)
    app = YourDataApp()
    app.upload.value = ({"name": "bad.png", "type": "image/png", "size": 3, "content": memoryview(b"\x89PN"),
                         "last_modified": pd.Timestamp("2026-01-01", tz="UTC").to_pydatetime()},)
    assert app.frame is None and "not a CSV" in app.last_error
    app.path.value = str(p)
    app.load_button.click()  # Load reads the path box, not the failed upload
    assert app.frame is not None and app.last_error is None
    old_style = {"t.csv": {"metadata": {"name": "t.csv"}, "content": csv_bytes}}  # ipywidgets 7
    assert len(read_table(old_style)) == 1500


def test_never_seen_semicolon_table_end_to_end():
    """Another table built here: semicolon separator, three classes, a float-coded category."""
    rng = np.random.default_rng(7)
    n = 900
    y = rng.integers(0, 3, n)
    t = pd.DataFrame({"income": np.round(20_000 + 15_000 * y + rng.normal(0, 5_000, n), 2),
                      "site": rng.choice([1.0, 2.0, 3.0], n), "plan": np.where(y == 2, "gold", "basic"),
                      "tier": np.array(["low", "mid", "high"])[y]})
    content = t.to_csv(index=False, sep=";").encode()
    frame = read_table(content, "tiers.csv")
    assert list(frame.columns) == ["income", "site", "plan", "tier"]
    with pytest.warns(PrivacyLeakWarning):
        draft, _ = draft_schema(frame, "tier", categorical=["site"])
    draft.loc[draft.column == "income", ["lower", "upper"]] = [0, 100_000]
    draft["from_data"] = False
    schema, enc, _ = build_schema(frame, draft)
    assert schema.categorical == ["site", "plan"] and len(schema.classes) == 3
    res = release(enc, schema, "PrivPfC", 2.0, random_state=0)
    assert set(res.synthetic["tier"]) <= {"low", "mid", "high"}
    assert res.synthetic["income"].between(0, 100_000).all()


# --------------------------------------- the release's privacy rules (README, "What ε protects, …")
class _Spy(SchemaParameter):
    """A stand-in publisher that records what the release gives it (training rows, noise mode)."""

    calls: list = []

    def __init__(self, eps, rs, accountant=None):
        from dpexplore.budget import BudgetAccountant as _A
        self.eps, self.acc = eps, accountant or _A(eps)

    def fit(self, X, y):
        from dpexplore import mechanisms
        self.acc.spend(self.eps, "spy")
        self.ledger_ = self.acc.ledger
        _Spy.calls.append({"index": list(X.index), "hardened": mechanisms._HARDENED.get(),
                           "noise": mechanisms.laplace(0.0, epsilon=1.0, random_state=0)})
        self.classes_ = list(self.schema.classes)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0], dtype=object)

    def synthetic(self, random_state=None):
        return pd.DataFrame({"age": [30], "colour": ["red"], "score": [0.5], "outcome": [self.classes_[0]]})


def _spy_release(monkeypatch, frame, **kw):
    monkeypatch.setitem(METHODS, "spy", lambda eps, rs, accountant=None: (_Spy(eps, rs, accountant), {}))
    schema, enc, _ = build_schema(frame, declared(frame))
    _Spy.calls = []
    res = release(enc, schema, "spy", 1.0, **kw)
    return res, _Spy.calls[-1]


def test_split_membership_is_per_record_so_a_neighbour_adds_at_most_one_training_row(monkeypatch):
    """Item 3: the old stratified fixed-size split made an added record replace a training row."""
    t = make_table(200)
    extra = pd.DataFrame({"age": [90], "colour": ["green"], "score": [1.0], "outcome": ["yes"]}, index=[200])
    t2 = pd.concat([t, extra])
    for seed in range(8):
        _, a = _spy_release(monkeypatch, t, random_state=seed)
        _, b = _spy_release(monkeypatch, t2, random_state=seed)
        assert set(a["index"]) <= set(b["index"])                 # nothing pushed out
        assert set(b["index"]) - set(a["index"]) <= {200}         # at most the new record added


def test_release_uses_hardened_noise_by_default(monkeypatch):
    """Item 9: the release's draws come from the exact sampler (outputs on the power-of-two grid)."""
    t = make_table(200)
    _, call = _spy_release(monkeypatch, t, random_state=0)
    g = mechanisms.hardened_laplace_parameters(epsilon=1.0)[0]
    assert call["hardened"] is True and call["noise"] / g == round(call["noise"] / g)
    res, call = _spy_release(monkeypatch, t, random_state=0, hardened=False)
    assert call["hardened"] is False and not res.hardened
    assert not mechanisms._HARDENED.get()                          # the switch does not leak out


def test_summary_prints_no_exact_row_count_and_states_the_neighbour_relation():
    """Item 5: the old summary printed 'Training rows: <exact count>'."""
    t = make_table(640)
    schema, enc, _ = build_schema(t, declared(t))
    res = release(enc, schema, "PrivPfC", 1.0, random_state=0)
    md = summary_markdown(res)
    assert "Training rows" not in md and not re.search(r"on \d+ held-out rows", md)
    assert not hasattr(res, "n_train") and not hasattr(res, "n_test")
    assert "add/remove one record" in md and "hardened" in md
    counts = {str(k) for k in range(100, 641)}
    body = md.split("## Public schema")[0]                         # the schema's bins are public
    numbers = set(re.findall(r"(?<![.\d])\d{3}(?![.\d\]])", body))  # whole numbers, not bounds/decimals
    released = {str(len(res.synthetic)), str(res.occupancy.get("cells")), f"{res.occupancy.get('n_hat', 0):,.0f}"}
    assert numbers & counts <= released          # only released (noisy) sizes


def test_app_never_defaults_to_a_fixed_seed(csv_bytes):
    """Item 6: YourDataApp(random_state=0) by default gave every session the same noise."""
    syn = []
    for _ in range(2):
        app = YourDataApp(epsilon=1.0)
        assert app.random_state is None
        app.load(csv_bytes, "t.csv")
        for c in ("age", "score"):
            app._rows[c]["public"].value = True
        syn.append(app.release().synthetic)
    assert not syn[0].equals(syn[1])


def test_rare_class_missing_from_training_is_not_refused(monkeypatch):
    """A class whose only row is held out: the release goes on with the schema's classes."""
    t = make_table(200)
    t.loc[0, "outcome"] = "maybe"
    frame = t.copy()
    draft = declared(frame)
    draft.loc[draft.column == "outcome", "categories"] = "no, yes, maybe"
    schema, enc, _ = build_schema(frame, draft)
    monkeypatch.setitem(METHODS, "spy", lambda eps, rs, accountant=None: (_Spy(eps, rs, accountant), {}))
    held_out = 0
    for seed in range(30):
        _Spy.calls = []
        res = release(enc, schema, "spy", 1.0, random_state=seed)
        held_out += 0 not in _Spy.calls[-1]["index"]
        assert list(schema.classes) == ["no", "yes", "maybe"] and len(res.synthetic) == 1
    assert held_out > 0


@pytest.mark.parametrize("case, match", [("empty", "the table holds no record"),
                                         ("outside", "outside|bounds|domain"), ("test_size", "test_size")])
def test_release_bad_input_fails_before_any_spend(case, match, monkeypatch):
    fitted = []
    monkeypatch.setitem(METHODS, "spy", lambda eps, rs, accountant=None: fitted.append(eps))
    t = make_table(300)
    schema, enc, _ = build_schema(t, declared(t))
    kw = {}
    if case == "empty":
        enc = enc.iloc[:0]
    elif case == "outside":
        enc = enc.copy()
        enc.loc[enc.index[0], "age"] = 500   # not clipped: not encoded with build_schema
    else:
        kw["test_size"] = 0.9
    acc = BudgetAccountant(5.0)
    with pytest.raises(InputError, match=match):
        release(enc, schema, "spy", 1.0, accountant=acc, **kw)
    assert fitted == [] and acc.spent == 0


def test_bernoulli_split_is_per_record_and_validates():
    from dpexplore.datasets import bernoulli_split
    t = make_table(2000)
    schema, enc, _ = build_schema(t, declared(t))
    X_tr, X_te, y_tr, y_te = bernoulli_split(enc, schema, 0.25, random_state=0)
    assert len(X_tr) + len(X_te) == 2000 and set(X_tr.index).isdisjoint(X_te.index)
    assert abs(len(X_te) / 2000 - 0.25) < 0.04
    longer = pd.concat([enc, enc.iloc[:1].set_axis([9999])])      # one more record, same seed
    X2_tr = bernoulli_split(longer, schema, 0.25, random_state=0)[0]
    assert set(X2_tr.index) - {9999} == set(X_tr.index)
    assert len(bernoulli_split(enc, schema, 0.0, random_state=0)[1]) == 0
    for bad in (1.0, -0.1, "0.2", True):
        with pytest.raises((TypeError, ValueError), match="test_fraction"):
            bernoulli_split(enc, schema, bad)


@pytest.mark.parametrize("case", ["few_rows", "one_class"])
def test_tiny_and_one_class_tables_are_released(case):
    """Refusing them would tell neighbouring tables apart (tests/test_audit_refusals.py audits it)."""
    t = make_table(300)
    schema, enc, _ = build_schema(t, declared(t))
    enc = enc.iloc[:10] if case == "few_rows" else enc.assign(outcome="yes")
    res = release(enc, schema, "DiffGen", 1.0, random_state=0, progress=False)
    assert list(res.synthetic.columns) == schema.predictors + ["outcome"]
    assert 0.9 - 1e-9 <= res.ledger["charged"].sum() <= 1.0 + 1e-9   # unmodelled columns' share may go unspent


def test_every_method_pays_the_default_marginal_share_unless_told():
    """0.7 of ε pays the shape marginals, whatever the method, unless a share is passed; the app's
    share field starts at it and keeps a typed share whatever the method."""
    assert DEFAULT_MARGINAL_SHARE == 0.7
    t = make_table(1500)
    schema, enc, leaks = build_schema(t, declared(t))
    for method in ("PrivPfC", "ProjectedHistogram"):
        for share in (None, 0.1):
            res = release(enc, schema, method, 2.0, leaks=leaks, random_state=1, progress=False, evaluate=False,
                          marginal_share=share)
            assert res.marginal_share == (DEFAULT_MARGINAL_SHARE if share is None else share)
            paid = res.ledger.loc[res.ledger["label"].astype(str).str.startswith("marginal: "), "charged"].sum()
            assert paid == pytest.approx(2.0 * res.marginal_share)
    app = YourDataApp(method="DiffGen")
    assert app.marginal_share.value == DEFAULT_MARGINAL_SHARE
    app.marginal_share.value = 0.3                       # typed: kept whatever the method
    app.method.value = "DiffMulti"
    assert app.marginal_share.value == 0.3
    assert YourDataApp(method="PrivPfC", marginal_share=0.0).marginal_share.value == 0.0
