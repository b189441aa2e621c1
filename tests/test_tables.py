"""The analyst's own-table workflow (dpexplore.tables; README "Your own table, scripted"): one test per problem met on a
generated messy table; each fails on the code before this module existed."""
import gzip
import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from dpexplore import tables
from dpexplore.budget import BudgetAccountant
from dpexplore.datasets import make_messy_table
from dpexplore.domain import PrivacyLeakWarning, Schema, cut_taxonomy, long_tail_cuts
from dpexplore.tables import HighCardinalityWarning, InputError

COUNTS = ["n_visits", "n_emergency", "n_inpatient"]
KEEP = COUNTS + ["admission_type", "gender", "weight_kg", "readmitted"]


@pytest.fixture(scope="module")
def messy():
    return make_messy_table(1500, random_state=3, n_codes=300)


@pytest.fixture(autouse=True)
def _quiet_and_in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the app writes its files next to the notebook: here, tmp
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        yield


def declared(frame, target="readmitted", **extra):
    """Draft, then declare every row (counts on [0, 60] with the long-tail cuts)."""
    draft, _ = tables.draft_schema(frame, target)
    for c in draft.column:
        kw = dict(lower=0, upper=60, cuts="long-tail") if c in COUNTS else {}
        if c == "weight_kg":
            kw = dict(lower=30, upper=200, integer=False)
        draft = tables.declare(draft, c, **{**kw, **extra.get(c, {})})
    return draft


def built(messy, **kw):
    sub = tables.select_columns(messy, KEEP)
    return tables.build_schema(sub, declared(sub), missing="drop-rows", **kw)


# ----------------------------------------------------------------------------- the generator
def test_make_messy_table_reproduces_the_issue_table():
    t = make_messy_table(3000, random_state=0)
    assert t.shape == (3000, 51) and t.isna().any().sum() >= 30
    assert t["readmitted"].dtype == np.int64 and set(t["readmitted"]) == {0, 1}
    assert 0.2 < t["readmitted"].mean() < 0.4
    assert t["n_visits"].median() <= 3 and t["n_visits"].max() > 40          # a long tail
    assert t["diag_code"].nunique() > 1000 and t["weight_kg"].dtype == object
    assert {"?", "unknown"} <= set(t["weight_kg"].astype(str))
    pd.testing.assert_frame_equal(t, make_messy_table(3000, random_state=0))
    dup = make_messy_table(50, random_state=0, duplicate_names=True)
    assert list(dup.columns).count("n_visits") == 2


# ----------------------------------------------------------------------------- 1. gzip, parquet
def test_gzip_csv_from_path_and_upload(tmp_path, messy):
    path = tmp_path / "table.csv.gz"
    messy.to_csv(path, index=False)                      # pandas compresses by the suffix
    a = tables.read_table(path)
    b = tables.read_table(gzip.compress(messy.to_csv(index=False).encode()), "table.csv.gz")
    assert a.shape == messy.shape and list(a.columns) == list(messy.columns)
    pd.testing.assert_frame_equal(a, b)


def test_parquet_through_duckdb(tmp_path, messy):
    import duckdb

    path = tmp_path / "table.parquet"
    small = messy[KEEP]
    con = duckdb.connect()
    con.register("small", small)
    con.execute(f"COPY small TO '{path}' (FORMAT PARQUET)")
    con.close()
    a = tables.read_table(path)
    b = tables.read_table(path.read_bytes(), "upload.parquet")
    assert list(a.columns) == KEEP and len(a) == len(messy)
    pd.testing.assert_frame_equal(a, b)
    with pytest.raises(InputError, match="Parquet"):
        tables.read_table(b"PAR1 broken", "x.parquet")


# ----------------------------------------------------------------------------- 2. columns
def test_unselected_columns_may_have_missing_values(tmp_path, messy):
    path = tmp_path / "t.csv"
    messy.to_csv(path, index=False)
    with pytest.raises(InputError, match="missing values in .*drop those columns"):
        tables.check_table(messy, "readmitted")
    picked = tables.read_table(path, columns=KEEP)
    assert list(picked.columns) == KEEP
    dropped = tables.read_table(path, drop=[c for c in messy.columns if c not in KEEP])
    pd.testing.assert_frame_equal(picked, dropped)
    with pytest.raises(InputError, match="no column named 'nope'"):
        tables.read_table(path, columns=["nope", "readmitted"])
    schema, enc, _ = built(messy)
    assert schema.predictors == KEEP[:-1] and not enc.isna().any().any()


# ----------------------------------------------------------------------------- 3. mixed types
def test_numeric_column_with_stray_strings(messy):
    sub = tables.select_columns(messy, KEEP)
    draft, notes = tables.draft_schema(sub, "readmitted")
    row = draft.set_index("column").loc["weight_kg"]
    assert row.kind == "numeric" and not row.integer               # not categorical in text order
    assert any("'weight_kg' is numeric except" in n and "'?'" in n and "'unknown'" in n for n in notes)
    with pytest.raises(InputError, match=r"'weight_kg' is declared numeric but has non-numeric values: "
                                         r".*missing='drop-rows'.*check_table") as err:
        tables.build_schema(sub, declared(sub))
    assert "'?'" not in str(err.value) and "unknown" not in str(err.value)   # the values are private
    shown = tables.check_table(sub, declared(sub), errors="report")           # ... shown here, not private
    hit = shown[shown["column"] == "weight_kg"].iloc[0]
    assert "'?'" in hit["examples"] and "'unknown'" in hit["examples"] and "non-numeric" in hit["rule"]
    schema, enc, _ = tables.build_schema(sub, declared(sub), missing="drop-rows")
    assert schema["weight_kg"].kind == "numeric" and enc["weight_kg"].dtype == float
    assert len(enc) < len(sub)
    pd.testing.assert_frame_equal(sub, tables.select_columns(messy, KEEP))  # not mutated


# ----------------------------------------------------------------------------- 4. declaring
def test_typing_the_drafted_value_declares_it(messy):
    sub = tables.select_columns(messy, ["n_visits", "gender", "readmitted"])
    draft, _ = tables.draft_schema(sub, "readmitted")
    shown = draft.set_index("column").loc["n_visits"]
    same = tables.declare(draft, "n_visits", lower=shown.lower, upper=shown.upper)
    assert not same.set_index("column").loc["n_visits", "from_data"]
    assert draft.set_index("column").loc["n_visits", "from_data"]          # the input is untouched
    same = tables.declare(tables.declare(same, "gender"), "readmitted", categories=[0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        _, _, leaks = tables.build_schema(sub, same)
    assert leaks == []


def test_app_typing_the_shown_value_clears_the_flag(messy, tmp_path):
    from dpexplore.widgets.your_data import YourDataApp

    path = tmp_path / "t.csv"
    messy[["n_visits", "gender", "readmitted"]].to_csv(path, index=False)
    app = YourDataApp(random_state=0)
    assert app.load(str(path))
    row = app._rows["n_visits"]
    assert "from data" in row["flag"].value
    row["lower"].value, row["upper"].value = row["lower"].placeholder, row["upper"].placeholder
    assert row["flag"].value == "" and "n_visits" not in app.leak_rows()


# ----------------------------------------------------------------------------- 5. cut points
def test_long_tail_cuts_are_public_and_fit_counts(messy):
    assert long_tail_cuts(0, 40) == [1, 2, 4, 8, 16, 32]                    # bounds only, no data
    tax = cut_taxonomy("n", 0, 40, long_tail_cuts(0, 40), integer=True)
    assert list(tax.leaves) == ["0", "1", "2–3", "4–7", "8–15", "16–31", "32–40"]
    schema, enc, _ = built(messy)
    draft, _ = tables.draft_schema(tables.select_columns(messy, KEEP), "readmitted")
    assert draft.set_index("column").loc["n_visits", "cuts"] == "long-tail"
    leaves = schema["n_visits"].taxonomy.leaf_codes(enc["n_visits"])
    share_first = np.bincount(leaves).max() / len(leaves)
    equal = tables.parse_cuts("n_visits", "equal", 0, 60, True, (2, 2, 2))
    share_equal = np.bincount(equal.leaf_codes(enc["n_visits"])).max() / len(leaves)
    assert share_first < 0.4 < 0.7 < share_equal       # equal-width: nearly everything in one bin
    typed = tables.parse_cuts("n", "1, 2, 4, 11", 0, 40, True, (2,))
    assert list(typed.leaves) == ["0", "1", "2–3", "4–10", "11–40"]
    with pytest.raises(InputError, match="outside"):
        tables.parse_cuts("n", "1, 99", 0, 40, True, (2,))
    with pytest.raises(InputError, match="not understood"):
        tables.parse_cuts("n", "few", 0, 40, True, (2,))


# ----------------------------------------------------------------------------- 6. progress
def test_release_shows_a_progress_bar(messy, monkeypatch):
    import tqdm.auto

    bars = []

    class Spy(tqdm.auto.tqdm):
        def __init__(self, *a, **kw):
            bars.append(kw)
            super().__init__(*a, **kw)
            kw["steps"] = 0

        def update(self, n=1):
            bars[-1]["steps"] += n
            return super().update(n)

    monkeypatch.setattr(tqdm.auto, "tqdm", Spy)
    schema, enc, _ = built(messy)
    tables.release(enc, schema, "DiffGen", 1.0, random_state=0, evaluate=False)
    assert bars and bars[-1]["total"] == 4 and bars[-1]["steps"] == 4 and not bars[-1]["disable"]
    tables.release(enc, schema, "DiffGen", 1.0, random_state=0, evaluate=False, progress=False)
    assert bars[-1]["disable"]


# ----------------------------------------------------------------------------- 7. plausible tables
PUBLISHERS = [name for name, spec in tables.METHODS.items() if spec.kind == "publisher"]


@pytest.mark.parametrize("method", PUBLISHERS)
def test_every_declared_column_and_how_it_was_produced(messy, method):
    schema, enc, _ = built(messy)
    res = tables.release(enc, schema, method, 1.0, random_state=1, progress=False)
    assert list(res.synthetic.columns) == schema.predictors + [schema.target]
    src = res.sources.set_index("column")
    assert list(src.index) == schema.predictors + [schema.target]
    assert set(src["produced by"]) <= {"modelled", "marginal", "uniform", "left out"}
    assert not (src["produced by"] == "uniform").any()           # the workflow pays the marginals
    md = tables.summary_markdown(res)
    assert "How each synthetic column was produced" in md
    assert len(res.synthetic) <= tables.MAX_SYNTHETIC_ROWS
    assert res.ledger["charged"].sum() <= 1.0 + 1e-9


def test_methods_are_the_registrys_and_named_by_class(messy):
    from dpexplore.registry import all_methods

    assert list(tables.METHODS) == [s.name for s in all_methods(tag="tables")]
    assert PUBLISHERS == [s.name for s in all_methods("publisher", tag="tables")]
    schema, enc, _ = built(messy)
    new = tables.release(enc, schema, "ProjectedHistogram", 1.0, random_state=2, progress=False)
    assert new.method == "ProjectedHistogram"
    with pytest.raises(InputError, match="unknown method 'Projected histogram'"):
        tables.method_name("Projected histogram")             # a display name is not a method name
    assert tables.method_name("DiffGen") == "DiffGen"
    with pytest.raises(InputError, match="unknown method 'Naive Bayes'.*PrivateNaiveBayes"):
        tables.method_name("Naive Bayes")


def test_naive_bayes_releases_a_model_and_no_synthetic_table(messy):
    schema, enc, _ = built(messy)
    acc = BudgetAccountant(2.0)
    res = tables.release(enc, schema, "PrivateNaiveBayes", 1.0, random_state=1, accountant=acc, progress=False)
    assert res.released == "model" and len(res.synthetic) == 0
    assert list(res.synthetic.columns) == schema.predictors + [schema.target]
    assert acc.spent == pytest.approx(1.0) and res.ledger["charged"].sum() == pytest.approx(1.0)
    model = res.estimator
    # the declared classes, in order, in the type of the table's target (int here)
    assert [str(c) for c in model[-1].classes_] == list(schema.classes)
    assert model[-1].classes_.dtype == enc[schema.target].dtype
    assert np.isfinite(res.utility.set_index("private").loc[True, "error"])
    md = tables.summary_markdown(res)
    assert "no synthetic table" in md and "Synthetic rows released" not in md
    assert "How each synthetic column was produced" not in md and "Budget ledger" in md
    again = tables.release(enc, schema, "PrivateNaiveBayes", 1.0, random_state=1, progress=False)
    np.testing.assert_array_equal(again.estimator[-1].theta_, model[-1].theta_)


# ----------------------------------------------------------------------------- 8. targets
def test_int_bool_and_str_targets_give_the_same_release(messy):
    sub = tables.select_columns(messy, KEEP)
    out = {}
    for kind, target in (("int", sub["readmitted"]), ("bool", sub["readmitted"].astype(bool)),
                         ("str", sub["readmitted"].astype(str))):
        frame = sub.assign(readmitted=target)
        classes = ["False", "True"] if kind == "bool" else ["0", "1"]
        draft = declared(frame, readmitted=dict(categories=classes))
        schema, enc, _ = tables.build_schema(frame, draft, missing="drop-rows")
        res = tables.release(enc, schema, "ProjectedHistogram", 1.0, random_state=4, progress=False)
        out[kind] = res.synthetic
        # the declared classes' type, whatever type the column came in: "0, 1" are integers
        assert res.synthetic["readmitted"].dtype == enc["readmitted"].dtype == (bool if kind == "bool" else np.int64)
    for kind in ("bool", "str"):
        pd.testing.assert_frame_equal(out[kind].drop(columns="readmitted"), out["int"].drop(columns="readmitted"))
        assert (out[kind]["readmitted"].astype(int) == out["int"]["readmitted"]).all()


# ----------------------------------------------------------------------------- 9/12. caps and ε
def test_epsilon_outside_the_range_is_an_error_before_any_spend(messy):
    schema, enc, _ = built(messy)
    acc = BudgetAccountant(100.0)
    for eps in (0, -1, 1e-9, 1e6, float("inf")):
        with pytest.raises(InputError, match=r"outside \[0.01, 10\]"):
            tables.release(enc, schema, "PrivPfC", eps, accountant=acc)
    assert acc.spent == 0


def test_app_does_not_clamp_epsilon(messy, tmp_path):
    from dpexplore.widgets.your_data import YourDataApp

    path = tmp_path / "t.csv"
    messy[["n_visits", "gender", "readmitted"]].to_csv(path, index=False)
    acc = BudgetAccountant(100.0)
    app = YourDataApp(accountant=acc)
    app.load(str(path))
    for eps in (0.0, -1.0, 1e6):
        app.epsilon.value = eps
        assert app.release() is None and "outside [0.01, 10]" in app.last_error
    assert acc.spent == 0 and app.downloads.value == ""


# ----------------------------------------------------------------------------- 10. high cardinality
def test_high_cardinality_column_warns_and_groups(messy):
    sub = tables.select_columns(messy, ["diag_code", "gender", "readmitted"])
    draft, notes = tables.draft_schema(sub, "readmitted")
    assert any("'diag_code' has" in n and "taxonomy" in n for n in notes)
    with pytest.warns(HighCardinalityWarning, match="Group them"):
        tables.build_schema(sub, declared(sub))
    grouped = declared(sub, diag_code=dict(groups="low: D00*, D01*; other: *"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", HighCardinalityWarning)
        schema, enc, _ = tables.build_schema(sub, grouped)
    assert schema["diag_code"].categories == ("low", "other") and set(enc["diag_code"]) == {"low", "other"}
    with pytest.raises(InputError, match="in no group.*catch-all"):
        tables.build_schema(sub, declared(sub, diag_code=dict(groups="low: D00*")))


# ----------------------------------------------------------------------------- 11. duplicates
def test_duplicate_column_names_are_refused_or_numbered(tmp_path):
    path = tmp_path / "dup.csv"
    make_messy_table(100, random_state=0, duplicate_names=True).to_csv(path, index=False)
    with pytest.raises(InputError, match="names a column twice.*'n_visits' at columns 2, 3"):
        tables.read_table(path)
    t = tables.read_table(path, duplicates="rename")
    assert "n_visits_2" in t.columns and "n_visits.1" not in t.columns


# ----------------------------------------------------------------------------- 13. messages
def test_messages_show_values_not_numpy_reprs(messy):
    sub = tables.select_columns(messy, ["n_visits", "readmitted"])
    messages = []
    for call in (lambda: tables.check_table(sub.assign(readmitted=np.int64(0)), "readmitted"),
                 lambda: tables.build_schema(sub, declared(sub, readmitted=dict(categories=[0])))
                 , lambda: tables.build_schema(sub, declared(sub, readmitted=dict(categories=[0, 2])))):
        with pytest.raises(InputError) as err:
            call()
        messages.append(str(err.value))
    assert all("np." not in m and "int64" not in m for m in messages)
    assert "(0)" in messages[0] and "NOT PRIVATE" in messages[0]      # check_table shows values...
    assert "values that are not among its declared classes" in messages[2] and "'1'" not in messages[2]


# ----------------------------------------------------------------------------- 14. export
def test_export_writes_files_and_links_them(messy, tmp_path):
    schema, enc, leaks = built(messy)
    res = tables.release(enc, schema, "DiffGen", 1.0, random_state=0, progress=False, leaks=leaks)
    paths = tables.export_release(res, tmp_path / "out")
    assert {p.name for p in paths.values()} == {"diffgen_eps_1_synthetic.csv", "diffgen_eps_1_ledger.csv",
                                                 "diffgen_eps_1_schema.json", "diffgen_eps_1_summary.md",
                                                 "diffgen_eps_1_utility_not_private.md"}
    assert "NOT PRIVATE" in paths["utility"].read_text() and "## Utility" not in paths["summary"].read_text()
    back = Schema.from_dict(json.loads(paths["schema"].read_text()))
    assert back.predictors == schema.predictors and back.classes == schema.classes
    assert len(pd.read_csv(paths["synthetic"])) == len(res.synthetic)
    assert pd.read_csv(paths["ledger"])["charged"].sum() == pytest.approx(res.ledger["charged"].sum())


def test_app_links_files_instead_of_base64(messy, tmp_path):
    from dpexplore.widgets.your_data import YourDataApp

    path = tmp_path / "t.csv"
    messy[["n_visits", "gender", "readmitted"]].to_csv(path, index=False)
    app = YourDataApp(random_state=0, export_dir="releases")
    app.load(str(path))
    assert app.release() is not None
    assert "base64" not in app.downloads.value and len(app.downloads.value) < 2_000
    hrefs = re.findall(r'href="([^"]+)"', app.downloads.value)
    assert len(hrefs) == 5 and all(h.startswith("releases/") and (tmp_path / h).is_file() for h in hrefs)
    assert sum("not_private" in h for h in hrefs) == 1             # the utility file says what it is


# ----------------------------------------------------------------------------- 15. grid occupancy
def test_privpfc_grid_occupancy_is_reported(messy):
    schema, enc, _ = built(messy)
    res = tables.release(enc, schema, "PrivPfC", 1.0, random_state=0, progress=False)
    o = res.occupancy
    assert o["cells"] == res.estimator.counts_.size
    assert o["records per cell"] == pytest.approx(res.estimator.n_hat_ / o["cells"])
    assert "records per cell" in tables.summary_markdown(res)


# --------------------------------------------------------------------------- the app of notebook 08
def test_app_target_dropdown_shows_its_value(messy, tmp_path):
    from dpexplore.widgets.your_data import YourDataApp

    path = tmp_path / "t.csv"
    messy[["n_visits", "gender", "readmitted"]].to_csv(path, index=False)
    app = YourDataApp()
    assert app.load(str(path))
    assert app.target.index is not None and app.target.options[app.target.index] == "readmitted"
    app.target.value = "gender"                       # choosing another target redrafts
    assert app.target.options[app.target.index] == "gender"
    assert list(app._rows)[-1] == "gender"


def test_app_groups_a_column_by_a_typed_taxonomy(messy, tmp_path):
    from dpexplore.widgets.your_data import YourDataApp

    path = tmp_path / "t.csv"
    messy[["diag_code", "gender", "readmitted"]].to_csv(path, index=False)
    app = YourDataApp(random_state=0, method="DiffGen")
    import html
    assert app.load(str(path)) and "'diag_code' has" in html.unescape(app.messages.value)  # the hint
    app._rows["diag_code"]["categories"].value = "low: D00*, D01*; other: *"
    res = app.release()
    assert res is not None and res.schema["diag_code"].categories == ("low", "other")
    assert set(res.synthetic["diag_code"]) <= {"low", "other"} and "diag_code" not in app.leak_rows()


def test_values_in_no_group_are_named_by_check_table_only(messy):
    """build_schema refuses a value in no group naming the column; the non-private check_table
    with the same draft shows which values and rows."""
    sub = tables.select_columns(messy, ["diag_code", "gender", "readmitted"])
    draft = tables.declare(declared(sub), "diag_code", groups="low: D00*, D01*")
    codes = sorted(set(sub["diag_code"]) - {c for c in sub["diag_code"] if c.startswith(("D00", "D01"))})
    with pytest.raises(InputError, match="'diag_code' has values in no group.*check_table") as err:
        tables.build_schema(sub, draft)
    assert not any(c in str(err.value) for c in codes)
    report = tables.check_table(sub, draft, errors="report")
    hit = report[report["column"] == "diag_code"].iloc[0]
    assert "no group" in hit["rule"] and repr(codes[0]) in hit["examples"]
    assert str(sub.index[~sub["diag_code"].str.startswith(("D00", "D01"))][0]) in hit["rows"]


def test_app_dropdown_reads_the_registry_and_releases_a_model(messy, tmp_path):
    import html

    from dpexplore.widgets.your_data import YourDataApp

    app = YourDataApp(random_state=0, method="PrivateNaiveBayes", export_dir=tmp_path / "out")
    # labels are the display names, values the registry's names (what release() takes)
    assert list(app.method.options) == [(s.display, n) for n, s in tables.METHODS.items()]
    assert ("Projected histogram", "ProjectedHistogram") in app.method.options
    path = tmp_path / "t.csv"
    messy[["n_visits", "gender", "readmitted"]].to_csv(path, index=False)
    assert app.load(str(path))
    for name in ("n_visits", "gender"):
        app._rows[name]["public"].value = True
    app._rows["readmitted"]["public"].value = True
    res = app.release()
    assert res is not None and res.released == "model" and len(res.synthetic) == 0
    assert "a model (no synthetic table)" in html.unescape(app.messages.value)


# ----------------------------------------------------------------------------- shape next to accuracy
def test_release_compares_the_synthetic_shape_with_the_training_part(messy):
    from dpexplore.evaluate.fidelity import fidelity_summary

    schema, enc, leaks = built(messy)
    before = enc.copy()
    res = tables.release(enc, schema, "PrivPfC", 1.0, random_state=4, progress=False, leaks=leaks, test_size=0.0)
    pd.testing.assert_frame_equal(enc, before)                          # the input is not modified
    # test_size=0: the training part is the whole table, so the figures can be recomputed here
    assert res.fidelity == pytest.approx(fidelity_summary(enc, res.synthetic, schema))
    assert set(res.fidelity) == {"tvd_1way", "tvd_2way", "max_1way", "max_2way"}
    assert 0 < res.fidelity["tvd_1way"] <= res.fidelity["max_1way"] <= 1
    page = tables.utility_markdown(res)
    assert page.startswith("# NOT PRIVATE") and "## Shape" in page
    assert f"| each column (1-way) | {res.fidelity['tvd_1way']:.2f} | {res.fidelity['max_1way']:.2f} |" in page
    assert "TVD" not in tables.summary_markdown(res)                   # not in the page to share
    assert tables.release(enc, schema, "PrivPfC", 1.0, random_state=4, progress=False, evaluate=False,
                          test_size=0.0).fidelity == {}
    model = tables.release(enc, schema, "PrivateNaiveBayes", 1.0, random_state=4, progress=False)
    assert model.fidelity == {} and "## Shape" not in tables.utility_markdown(model)


def test_app_shows_the_shape_with_the_not_private_utility(messy, tmp_path):
    from dpexplore.widgets.your_data import YourDataApp

    path = tmp_path / "t.csv"
    messy[["n_visits", "gender", "readmitted"]].to_csv(path, index=False)
    app = YourDataApp(random_state=0, export_dir="releases")
    app.load(str(path))
    result = app.release()
    assert result is not None and result.fidelity
    text = app.files["utility"].read_text()
    assert "NOT PRIVATE" in text and "## Shape" in text
    assert "always predicting the majority class" in text      # where its classifier stands, in words


def _utility(ours: float, majority: float) -> pd.DataFrame:
    return pd.DataFrame({"model": ["DiffGen (ε = 1)", "majority class", "non-private logistic regression"],
                         "private": [True, False, False], "error": [ours, majority, 0.2]})


@pytest.mark.parametrize("ours, majority, opening", [
    (0.2961, 0.2662, "Below always predicting the majority class: the release's classifier errs on 0.30 of the "
                     "held-out rows, the majority class on 0.27. Do not use this classifier to predict"),
    (0.2681, 0.2662, "Level with always predicting the majority class: the release's classifier errs on 0.27"),
    (0.2049, 0.2662, "Above always predicting the majority class: the release's classifier errs on 0.20 of"),
])
def test_majority_verdict_says_in_words_where_the_classifier_stands(ours, majority, opening):
    from dpexplore.tables.export import majority_verdict

    assert majority_verdict(_utility(ours, majority)).startswith(opening)   # compared as shown: rounded


def test_majority_verdict_is_silent_without_both_errors():
    from dpexplore.tables.export import majority_verdict

    assert majority_verdict(_utility(float("nan"), 0.27)) == ""         # no held-out row
    assert majority_verdict(_utility(0.3, 0.27).iloc[[0, 2]]) == ""      # no majority-class reference
    assert majority_verdict(_utility(0.3, 0.27).iloc[0:0]) == ""         # not evaluated


def test_utility_page_says_when_the_release_is_below_the_majority_class(messy):
    import dataclasses

    schema, enc, leaks = built(messy)
    res = tables.release(enc, schema, "DiffGen", 1.0, random_state=4, progress=False, leaks=leaks)
    errors = res.utility.set_index("model")["error"]
    page = tables.utility_markdown(res)
    ours, floor = round(res.utility["error"].iloc[0], 2), round(errors["majority class"], 2)
    word = "Below" if ours > floor else "Level with" if ours == floor else "Above"
    assert f"{word} always predicting the majority class: the release's classifier errs on {ours:.2f}" in page
    below = dataclasses.replace(res, utility=_utility(0.35, 0.30))
    assert "Below always predicting the majority class" in tables.utility_markdown(below)
    assert "majority" not in tables.summary_markdown(below)                # the page to share holds no error


def test_utility_page_names_the_classifier_fitted_on_the_completed_table(messy):
    """A release that classifies with the regression on its completed table says so on the NOT
    PRIVATE page (its errors are that regression's); one with its own classifier does not."""
    from dpexplore.tables.export import TABLE_CLASSIFIER_NOTE

    schema, enc, leaks = built(messy)
    table = tables.release(enc, schema, "DiffGen", 1.0, random_state=4, progress=False, leaks=leaks)
    own = tables.release(enc, schema, "DiffGen", 1.0, random_state=4, progress=False, leaks=leaks,
                         marginal_share=0.0)
    assert table.estimator.classifier_data_ == "synthetic" and own.estimator.classifier_data_ == "release"
    assert TABLE_CLASSIFIER_NOTE in tables.utility_markdown(table)
    assert TABLE_CLASSIFIER_NOTE not in tables.utility_markdown(own)
