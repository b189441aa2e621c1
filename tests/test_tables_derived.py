"""Derived columns in the own-table workflow (README "Your own table, scripted"): a column declared
as a public function of another (an age band from age, a grouping of regions) is checked against
its source's declared domain, computed by build_schema, never modelled, and recomputed in every
synthetic table so that it agrees with its source in every row."""
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpexplore import tables
from dpexplore.domain import PrivacyLeakWarning, Schema
from dpexplore.registry import MethodSpec
from dpexplore.tables import InputError

BANDS = dict(edges=[0, 40, 65, 100], labels=["young", "middle", "old"])
SIDES = {"north": "N", "south": "S", "east": "EW", "west": "EW"}
PUBLISHERS = [m for m, spec in tables.METHODS.items() if isinstance(spec, MethodSpec) and spec.kind == "publisher"]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        yield


def people(n: int = 600, seed: int = 0) -> pd.DataFrame:
    """An age, a region, the owner's own age band (wrong in the first 20 rows, missing in one) and
    a target that depends on age."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 90, n)
    band = np.where(age < 40, "young", np.where(age < 65, "middle", "old")).astype(object)
    band[:20] = np.where(band[:20] == "old", "young", "old")          # disagrees with the rule
    band[25] = None
    y = (rng.random(n) < 1 / (1 + np.exp(-(age - 50) / 10))).astype(int)
    return pd.DataFrame({"age": age, "region": rng.choice(list(SIDES), n), "age_band": band, "y": y})


def declared(frame: pd.DataFrame, **bands) -> pd.DataFrame:
    draft, _ = tables.draft_schema(frame, "y")
    draft = tables.declare(draft, "age", lower=0, upper=100, integer=True)
    draft = tables.declare(draft, "region", categories=list(SIDES))
    draft = tables.declare(draft, "y", categories=[0, 1])
    draft = tables.declare(draft, "age_band", derived_from="age", **{**BANDS, **bands})
    return tables.declare(draft, "side", derived_from="region", mapping=SIDES)


def expected_band(age) -> np.ndarray:
    age = np.asarray(age)
    return np.select([age < 40, age < 65], ["young", "middle"], "old")


# ----------------------------------------------------------------------------- declare and build
def test_declare_stores_a_derived_row_and_adds_a_missing_column_after_its_source():
    draft = declared(people())
    assert list(draft["column"]) == ["age", "region", "side", "age_band", "y"]   # 'side' is not in the table
    band = draft.set_index("column").loc["age_band"]
    assert (band["kind"], band["derived_from"], band["cuts"], band["categories"], band["from_data"]) == \
        ("derived", "age", "0, 40, 65, 100", "young, middle, old", False)
    assert draft.set_index("column").loc["side", "groups"] == "N: north; S: south; EW: east, west"
    first, _ = tables.draft_schema(people(), "y")
    assert "derived_from" not in first.columns                             # a draft without one is unchanged


def test_build_schema_declares_the_rule_and_computes_the_column_from_its_source():
    frame = people()
    before = frame.copy()
    schema, encoded, leaks = tables.build_schema(frame, declared(frame))
    pd.testing.assert_frame_equal(frame, before)                             # the input is not modified
    assert leaks == []
    assert schema.predictors == ["age", "region"] and list(schema.derived) == ["side", "age_band"]
    assert schema.columns == ["age", "region", "side", "age_band"]
    assert schema["age_band"].source == "age" and schema["age_band"].rule == {"edges": [0.0, 40.0, 65.0, 100.0],
                                                                              "labels": ["young", "middle", "old"]}
    assert schema["side"].rule == {"mapping": SIDES}
    assert list(encoded.columns) == ["age", "region", "side", "age_band", "y"]
    assert (encoded["age_band"].to_numpy() == expected_band(encoded["age"])).all()
    assert (encoded["side"].to_numpy() == encoded["region"].map(SIDES).to_numpy()).all()
    # the owner's disagreeing labels (and the missing one) are replaced by the rule's, not refused
    assert (encoded["age_band"].iloc[:20].to_numpy() != frame["age_band"].iloc[:20].to_numpy()).all()
    assert Schema.from_dict(schema.to_dict()).columns == schema.columns


def test_the_tables_own_derived_column_is_never_read():
    frame = people()
    schema, encoded, _ = tables.build_schema(frame, declared(frame))
    for other in (frame.assign(age_band=np.nan), frame.drop(columns="age_band")):
        schema_2, encoded_2, _ = tables.build_schema(other, declared(frame))
        assert schema_2.to_dict() == schema.to_dict()
        pd.testing.assert_frame_equal(encoded_2, encoded)


def test_the_band_follows_the_clipped_source():
    frame = people().assign(age=lambda f: f["age"].where(f.index != 3, 140))      # above the bound 100
    _, encoded, _ = tables.build_schema(frame, declared(frame))
    assert encoded.loc[3, "age"] == 100 and encoded.loc[3, "age_band"] == "old"


def test_a_typed_mapping_takes_patterns_and_group_sources():
    frame = people()
    draft = tables.declare(declared(frame), "side", derived_from="region", mapping="north: north; other: *")
    draft = tables.declare(draft, "region", groups="cold: north; warm: south, east, west")
    draft = tables.declare(draft, "side", derived_from="region", mapping={"cold": "top", "warm": "rest"})
    schema, encoded, _ = tables.build_schema(frame, draft)
    assert schema["side"].rule == {"mapping": {"cold": "top", "warm": "rest"}}
    assert (encoded["side"] == np.where(frame["region"] == "north", "top", "rest")).all()
    catch_all = tables.declare(declared(frame), "side", derived_from="region", mapping="far: north; near: *")
    schema, _, _ = tables.build_schema(frame, catch_all)
    assert schema["side"].rule == {"mapping": {"north": "far", "south": "near", "east": "near", "west": "near"}}


def test_a_derived_column_can_be_dropped_or_made_a_predictor_again():
    frame = people()
    draft = tables.declare(tables.declare(declared(frame), "side", kind="drop"), "age_band", kind="categorical",
                           categories=["young", "middle", "old"])
    assert draft.set_index("column").loc["age_band", "derived_from"] == ""
    schema, encoded, _ = tables.build_schema(frame, draft, missing="drop-rows")
    assert schema.predictors == ["age", "region", "age_band"] and not schema.derived
    assert len(encoded) == len(frame) - 1                              # its missing value is read now


# ----------------------------------------------------------------------------- refusals
BAD = [
    (dict(derived_from="height", **BANDS), r"'b'.*source 'height' is not a column"),
    (dict(derived_from="y", **BANDS), r"'b'.*source 'y' is the target"),
    (dict(derived_from="b", **BANDS), r"'b' cannot be computed from itself"),
    (dict(derived_from="age", edges=[0, 65, 40, 100], labels=["a", "b", "c"]), r"'b'.*increasing"),
    (dict(derived_from="age", edges=[10, 50, 100], labels=["a", "b"]), r"'b'.*declared bounds of 'age'"),
    (dict(derived_from="age", edges=[0, 50, 90], labels=["a", "b"]), r"'b'.*declared bounds of 'age'"),
    (dict(derived_from="age", edges=[-5, 0, 50, 100], labels=["a", "b", "c"]), r"'b'.*inner edge inside"),
    (dict(derived_from="age", edges=[0, 50, 100], labels=["a"]), r"'b'.*2 distinct labels, one per band"),
    (dict(derived_from="age", edges=[0, 50, 100], labels=["a", "a"]), r"'b'.*2 distinct labels"),
    (dict(derived_from="age", mapping={"1": "x"}), r"'b'.*'age' is numeric: give bands"),
    (dict(derived_from="region", **BANDS), r"'b'.*'region' is categorical: give a mapping"),
    (dict(derived_from="region", mapping={"north": "N", "south": "S"}),
     r"'b'.*no label to the declared categories 'east', 'west' of 'region'"),
    (dict(derived_from="region", mapping={**SIDES, "nord": "N"}), r"'b'.*names 'nord', not declared categories"),
    (dict(edges=[0, 100], labels=["all"]), r"'b'.*derived_from="),
    (dict(derived_from="age", mapping=SIDES, **BANDS), r"'b'.*not both"),
    (dict(derived_from="age", lower=0, **BANDS), r"'b'.*only, not 'lower'"),
]


@pytest.mark.parametrize("kwargs, rule", BAD)
def test_a_bad_declaration_is_refused_naming_the_column_and_the_rule(kwargs, rule):
    draft = declared(people())
    with pytest.raises(InputError, match=rule):
        tables.declare(draft, "b", **kwargs)


def test_build_schema_checks_the_rule_against_the_source_before_reading_the_data():
    frame = people().assign(region=lambda f: f["region"].where(f.index != 7, None))   # a missing value
    draft = declared(frame)
    with pytest.raises(InputError, match="missing values in 'region'"):
        tables.build_schema(frame, draft)                                # the data check, as before
    for column, change, rule in [("age", dict(lower=50), r"'age_band'.*declared bounds of 'age'"),
                                 ("age", dict(kind="drop"), r"'age_band'.*source 'age' is dropped"),
                                 ("region", dict(categories=list(SIDES) + ["south-west"]),
                                  r"'side'.*no label to the declared categories 'south-west'")]:
        with pytest.raises(InputError, match=rule):                     # the rule first, naming no value
            tables.build_schema(frame, tables.declare(draft, column, **change))


def test_a_derived_row_typed_by_hand_must_name_its_source():
    frame = people()
    draft = declared(frame)
    draft.loc[draft["column"] == "side", "derived_from"] = ""
    with pytest.raises(InputError, match=r"'side'.*name the column it is computed from"):
        tables.build_schema(frame, draft)
    with pytest.raises(InputError, match="declare a derived column with derived_from="):
        tables.declare(draft, "age_band", kind="derived")


# ----------------------------------------------------------------------------- release and export
@pytest.fixture(scope="module")
def built():
    frame = people(800, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)     # the draft's own warning, before declaring
        schema, encoded, _ = tables.build_schema(frame, declared(frame))
    return schema, encoded


@pytest.mark.parametrize("method", PUBLISHERS)
def test_every_synthetic_table_holds_the_derived_columns_consistent_with_their_sources(built, method):
    schema, encoded = built
    result = tables.release(encoded, schema, method, 1.0, random_state=0, progress=False)
    syn = result.synthetic
    assert len(syn) > 0 and list(syn.columns) == ["age", "region", "side", "age_band", "y"]
    assert (syn["age_band"].to_numpy() == expected_band(syn["age"])).all()              # 100% of rows
    assert (syn["side"].to_numpy() == syn["region"].map(SIDES).to_numpy()).all()
    sources = result.sources.set_index("column")
    assert list(sources.index) == ["age", "region", "side", "age_band", "y"]
    assert (sources.loc[["side", "age_band"], "produced by"] == "computed").all()
    assert (sources.loc[["side", "age_band"], "ε"] == 0).all()
    assert not result.ledger["label"].str.contains("age_band|side").any()              # never paid for
    assert set(result.fidelity) == {"tvd_1way", "tvd_2way", "max_1way", "max_2way"}
    assert all(0 <= v <= 1 for v in result.fidelity.values())


def test_the_release_is_the_same_with_or_without_the_derived_columns(built):
    schema, encoded = built
    plain = Schema([schema[n] for n in schema.predictors], schema.target, schema.classes)
    with_derived = tables.release(encoded, schema, "PrivPfC", 1.0, random_state=3, progress=False)
    without = tables.release(encoded[["age", "region", "y"]], plain, "PrivPfC", 1.0, random_state=3, progress=False)
    pd.testing.assert_frame_equal(with_derived.synthetic[["age", "region", "y"]], without.synthetic)
    pd.testing.assert_frame_equal(with_derived.ledger, without.ledger)


def test_the_summary_says_the_column_is_a_public_function_of_its_source(built, tmp_path):
    schema, encoded = built
    result = tables.release(encoded, schema, "DiffGen", 1.0, random_state=0, progress=False)
    text = tables.summary_markdown(result)
    assert ("| age_band | derived | public function of age: [0, 40) young · [40, 65) middle · [65, 100] old |"
            in text)
    assert ("| side | derived | public function of region: north → N · south → S · east → EW · west → EW |"
            in text)
    assert re.search(r"\| age_band \| computed \| 0 \| computed from its source column", text)
    assert "2 computed from another column" in text
    paths = tables.export_release(result, tmp_path)
    exported = pd.read_csv(paths["synthetic"])
    assert (exported["age_band"].to_numpy() == expected_band(exported["age"])).all()
    assert Schema.from_json(paths["schema"]).derived["age_band"].rule == schema["age_band"].rule


def test_the_readme_example_runs(tmp_path, monkeypatch):
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    scripted = re.search(r"### Your own table, scripted.*?```python\n(.*?)```", readme, re.S).group(1)
    derived = re.search(r"\*\*Derived columns\.\*\*.*?```python\n(.*?)```", readme, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(scripted + derived, "README.md", "exec"), namespace)   # "continuing the example above"
    syn, schema = namespace["result"].synthetic, namespace["schema"]
    assert list(schema.derived) == ["visit_band", "planned"] and "visit_band" not in schema.predictors
    assert (syn["visit_band"] == np.select([syn["n_visits"] < 1, syn["n_visits"] < 5], ["none", "1-4"], "5+")).all()
    assert (syn["planned"] == np.where(syn["admission_type"] == "elective", "yes", "no")).all()
