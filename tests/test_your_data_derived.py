"""The own-table app's derived-column panel (README "Derived columns"): driven as a user does —
values typed into its boxes, Add and remove clicked — it declares the column through
``tables.declare``, shows a bad rule as the app's message without touching the draft, and a
release computes the column from its source in the synthetic table and the exported files."""
import html
import io
import warnings

import numpy as np
import pandas as pd
import pytest

from dpexplore import tables
from dpexplore.budget import BudgetAccountant
from dpexplore.widgets.your_data import YourDataApp

from test_your_data import make_table

SIDES = "warm: red; cold: blue; other: *"


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)                 # the app writes its files next to the notebook


def loaded_app(table: pd.DataFrame | None = None, **kwargs) -> YourDataApp:
    """An app over the generated table, age declared public on [0, 120]."""
    app = YourDataApp(epsilon=2.0, **kwargs)
    assert app.load((make_table() if table is None else table).to_csv(index=False).encode(), "t.csv")
    app.rows["age"]["lower"].value, app.rows["age"]["upper"].value = "0", "120"
    return app


def type_derived(app: YourDataApp, source: str, name: str, edges: str = "", labels: str = "",
                 mapping: str = "") -> bool:
    """Fill the panel and press Add; True when the column was added."""
    before = app.derived
    app.derived_source.value = source
    app.derived_name.value = name
    if not app.derived_edges.disabled:
        app.derived_edges.value, app.derived_labels.value = edges, labels
    if not app.derived_mapping.disabled:
        app.derived_mapping.value = mapping
    app.derived_add.click()
    return app.derived != before


def shown_message(app: YourDataApp) -> str:
    return html.unescape(app.messages.value)


def shown_rows(app: YourDataApp) -> dict[str, list]:
    """The schema view: the first label of each row -> its widgets."""
    return {box.children[0].value: list(box.children) for box in app.schema_box.children[1:]}


def bands(age) -> np.ndarray:
    age = np.asarray(age)
    return np.select([age < 40, age < 65], ["young", "middle"], "old")


def test_the_panel_declares_through_tables_declare_and_the_view_lists_the_column_as_derived():
    app = loaded_app()
    assert app.derived_source.options == ("age", "colour", "score")           # kept predictors, not the target
    assert not app.derived_edges.disabled and app.derived_mapping.disabled     # age is numeric: bands
    plain = app.draft()
    assert type_derived(app, "age", "age_band", "0, 40, 65, 120", "young, middle, old")
    assert app.last_error is None and "'age_band' added" in shown_message(app)
    assert app.derived_name.value == app.derived_edges.value == ""             # the panel is ready for the next
    app.derived_source.value = "colour"
    assert app.derived_edges.disabled and not app.derived_mapping.disabled     # colour is categorical: a mapping
    assert type_derived(app, "colour", "side", mapping=SIDES)
    draft = app.draft()
    assert list(draft["column"]) == ["age", "age_band", "colour", "side", "score", "outcome"]
    row = draft.set_index("column").loc["age_band"]
    assert (row["kind"], row["derived_from"], row["cuts"], row["categories"], row["from_data"]) == \
        ("derived", "age", "0, 40, 65, 120", "young, middle, old", False)
    expected = tables.declare(tables.declare(plain, "age_band", derived_from="age", edges=[0, 40, 65, 120],
                                             labels=["young", "middle", "old"]),
                              "side", derived_from="colour", mapping=SIDES)
    pd.testing.assert_frame_equal(draft, expected)                             # what the script declares
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        schema, encoded, _ = tables.build_schema(app.frame, draft)
    assert list(schema.derived) == ["age_band", "side"] and "age_band" not in schema.predictors
    assert schema["age_band"].source == "age" and schema["age_band"].rule["labels"] == ["young", "middle", "old"]
    assert schema["side"].rule == {"mapping": {"blue": "cold", "green": "other", "red": "warm"}}
    shown = shown_rows(app)
    assert list(shown) == list(draft["column"])                                 # each after its source
    assert [w.value for w in shown["age_band"][1:5]] == ["derived", "from age", "0, 40, 65, 120", "young, middle, old"]
    assert [w.value for w in shown["side"][1:5]] == ["derived", "from colour", "", SIDES]
    assert "age_band" not in app.leak_rows()
    shown["side"][-1].click()                                                   # its remove button
    assert list(app.derived) == ["age_band"] and "side" not in shown_rows(app)
    assert "side" not in list(app.draft()["column"])


BAD = [
    (dict(source="age", name="age_band", edges="10, 40, 120", labels="a, b"), "declared bounds of 'age'"),
    (dict(source="age", name="age_band", edges="0, 40, 120", labels="a, b, c"), "give 2 distinct labels"),
    (dict(source="age", name="age_band", edges="0, forty, 120", labels="a, b"), "increasing numbers"),
    (dict(source="age", name="age", edges="0, 40, 120", labels="a, b"), "cannot be computed from itself"),
    (dict(source="colour", name="side", mapping="warm: red; cold: blue"), "no label to the declared categories"),
    (dict(source="colour", name="side", mapping="warm: red, pink; other: *"), "names 'pink', not declared"),
    (dict(source="colour", name="side", mapping=""), "'colour' is categorical: give a mapping"),
    (dict(source="age", name="", edges="0, 40, 120", labels="a, b"), "type the new column's name"),
    (dict(source="age", name="outcome", edges="0, 40, 120", labels="a, b"), "that is the target's name"),
]


@pytest.mark.parametrize("typed, rule", BAD, ids=[r for _, r in BAD])
def test_a_bad_rule_is_the_apps_message_and_the_draft_is_unchanged(typed, rule):
    app = loaded_app()
    assert type_derived(app, "age", "age_band", "0, 40, 65, 120", "young, middle, old")
    before, view = app.draft(), shown_rows(app)
    assert not type_derived(app, **typed)
    assert rule in app.last_error and "✖" in app.messages.value and "Traceback" not in app.messages.value
    pd.testing.assert_frame_equal(app.draft(), before)
    assert list(app.derived) == ["age_band"] and shown_rows(app).keys() == view.keys()


def test_a_dropped_source_and_a_rule_that_no_longer_fits_are_refused_before_any_spend():
    app = loaded_app(accountant=BudgetAccountant(5.0))
    app.rows["score"]["kind"].value = "drop"
    assert not type_derived(app, "score", "score_band", "0, 0.5, 1", "low, high")
    assert "'score' is dropped" in app.last_error
    assert type_derived(app, "age", "age_band", "0, 40, 65, 120", "young, middle, old")
    app.rows["age"]["upper"].value = "150"                                      # the bands no longer cover it
    assert app.release() is None and "at least 150" in app.last_error
    assert app.accountant.spent == 0 and app.downloads.value == ""


def test_a_release_computes_the_derived_columns_from_their_sources():
    app = loaded_app(random_state=4)
    assert type_derived(app, "age", "age_band", "0, 40, 65, 120", "young, middle, old")
    assert type_derived(app, "colour", "side", mapping=SIDES)
    result = app.release()
    assert result is not None and app.last_error is None
    syn = result.synthetic
    assert list(syn.columns) == ["age", "age_band", "colour", "side", "score", "outcome"]
    assert syn["age_band"].nunique() > 1
    assert (syn["age_band"].to_numpy() == bands(syn["age"])).all()
    assert (syn["side"] == syn["colour"].map({"red": "warm", "blue": "cold", "green": "other"})).all()
    sources = result.sources.set_index("column")
    assert sources.loc[["age_band", "side"], "produced by"].tolist() == ["computed", "computed"]
    assert (sources.loc[["age_band", "side"], "ε"] == 0).all()
    exported = pd.read_csv(io.BytesIO(app.files["synthetic"].read_bytes()))
    assert (exported["age_band"].to_numpy() == bands(exported["age"])).all()
    summary = app.files["summary"].read_text()
    assert "public function of age" in summary and "public function of colour" in summary


def test_a_kept_column_declared_derived_replaces_its_row_until_removed():
    table = make_table()
    table.insert(3, "age_band", np.where(table["age"] < 40, "young", "older"))   # the owner's own bands
    app = loaded_app(table)
    assert "age_band" in app.leak_rows() and shown_rows(app)["age_band"][1].value == "categorical"
    assert type_derived(app, "age", "age_band", "0, 40, 65, 120", "young, middle, old")
    assert shown_rows(app)["age_band"][1].value == "derived" and "age_band" not in app.leak_rows()
    assert "age_band" not in app.derived_source.options                         # not a source: it is derived
    assert app.draft().set_index("column").loc["age_band", "kind"] == "derived"
    app.remove_derived("age_band")
    assert shown_rows(app)["age_band"][1].value == "categorical" and "age_band" in app.leak_rows()
    assert app.draft().set_index("column").loc["age_band", "kind"] == "categorical"


def test_changing_the_target_or_the_table_forgets_the_columns_that_no_longer_fit():
    app = loaded_app()
    assert type_derived(app, "age", "age_band", "0, 40, 65, 120", "young, middle, old")
    assert type_derived(app, "colour", "side", mapping=SIDES)
    app.target.value = "colour"                                                 # side's source is the target now
    assert list(app.derived) == ["age_band"] and "'side'" in shown_message(app)
    assert app.derived_source.options == ("age", "score", "outcome")
    app.load(make_table(300).to_csv(index=False).encode(), "other.csv")         # a new table: a new schema
    assert app.derived == {} and "derived" not in [r[1].value for r in shown_rows(app).values()]
