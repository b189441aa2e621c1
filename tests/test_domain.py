"""Taxonomies, attributes and schemas: level invariants, domains, clear errors, leak warnings."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from dpexplore.domain import Attribute, PrivacyLeakWarning, Schema, Taxonomy

WORKCLASS = {"type": "categorical", "tree": {"Any": {
    "Worked": {"Without-pay": None, "With-pay": {
        "Gov": ["State-gov", "Federal-gov", "Local-gov"], "Private": None,
        "Self-emp": ["Self-emp-inc", "Self-emp-not-inc"]}},
    "Never-worked": None}}}


def _assert_nested_partitions(tax):
    for d in range(tax.height):
        m = tax.leaf_to_node(d)
        assert set(m) == set(range(tax.level_sizes[d]))          # every node has a leaf: partition
    for d in range(1, tax.height):
        parent = tax.parents(d)
        assert np.array_equal(parent[tax.leaf_to_node(d)], tax.leaf_to_node(d - 1))  # refinement
    assert tax.level_sizes[0] == 1 and tax.level_sizes[-1] == tax.n_leaves
    assert list(tax.level_sizes) == sorted(tax.level_sizes)


def test_unbalanced_tree_is_padded_into_partitions():
    tax = Taxonomy.from_spec("workclass", WORKCLASS)
    assert tax.level_sizes == (1, 2, 3, 5, 8)  # Su et al. 2018 §5.1 (DiffGen's workclass tree, padded)
    _assert_nested_partitions(tax)
    # "Never-worked" is a leaf at depth 1, copied down to every lower level
    assert all("Never-worked" in tax.labels(d) for d in range(1, 5))
    assert list(tax.generalize(["Private", "State-gov", "Never-worked"], 2)) == ["With-pay", "With-pay", "Never-worked"]
    assert list(tax.generalize(["Federal-gov"], 3)) == ["Gov"]
    assert Taxonomy.from_spec("w", tax.to_spec()).level_sizes == tax.level_sizes


def test_numeric_taxonomy_intervals_are_right_closed():
    tax = Taxonomy.from_spec("age", {"type": "numeric", "levels": [[14, 95], [14, 55, 95], [14, 35, 55, 75, 95]]})
    assert tax.labels(1) == ["[14, 55]", "(55, 95]"]
    assert list(tax.leaf_codes([14, 35, 35.5, 95])) == [0, 0, 1, 3]
    assert list(tax.generalize([55, 56], 1)) == ["[14, 55]", "(55, 95]"]
    assert np.array_equal(tax.intervals(1), [[14, 55], [55, 95]])
    _assert_nested_partitions(tax)
    with pytest.raises(ValueError, match="outside its public range"):
        tax.leaf_codes([13])
    with pytest.raises(ValueError, match="keep every edge"):
        Taxonomy.from_spec("bad", {"type": "numeric", "levels": [[0, 10], [0, 5, 10], [0, 4, 10]]})


@settings(max_examples=50, deadline=None)
@given(fanouts=st.lists(st.integers(2, 4), min_size=1, max_size=4),
       values=st.lists(st.floats(0, 100), min_size=1, max_size=50))
def test_property_equal_width_generalisation_is_consistent(fanouts, values):
    tax = Taxonomy.equal_width("x", 0, 100, fanouts)
    _assert_nested_partitions(tax)
    leaf = tax.leaf_codes(values)
    for d in range(tax.height):
        iv = tax.intervals(d)[tax.node_codes(leaf, d)]
        v = np.asarray(values)
        assert np.all(iv[:, 0] <= v) and np.all(v <= iv[:, 1])


def test_attribute_validation_names_the_column():
    age = Attribute.numeric("age", 17, 90)
    with pytest.raises(ValueError, match="'age'.*outside"):
        age.validate(pd.Series([20, 91]))
    with pytest.raises(ValueError, match="'age'.*missing"):
        age.validate(pd.Series([20, np.nan]))
    with pytest.raises(ValueError, match="'age'.*non-numeric"):
        age.validate(pd.Series(["20", "x"]))
    sex = Attribute.categorical("sex", ["Female", "Male"])
    with pytest.raises(ValueError, match="'sex'.*outside"):
        sex.validate(pd.Series(["Male", "Other"]))
    assert sex.taxonomy.level_sizes == (1, 2)
    with pytest.raises(ValueError, match="bounds"):
        Attribute.numeric("x", 5, 5)


def _schema():
    return Schema([Attribute.numeric("age", 0, 100, Taxonomy.equal_width("age", 0, 100, (2, 2))),
                   Attribute.categorical("sex", ["F", "M"])], "y", ["no", "yes"])


def test_schema_validation_errors():
    schema = _schema()
    X = pd.DataFrame({"age": [30, 60], "sex": ["F", "M"]})
    schema.validate(X, pd.Series(["no", "yes"]))
    with pytest.raises(ValueError, match="does not know.*'zip'"):
        schema.validate(X.assign(zip=[1, 2]))
    with pytest.raises(ValueError, match="target: pass it as y"):
        schema.validate(X.assign(y=["no", "yes"]))
    with pytest.raises(ValueError, match="lacks"):
        schema.validate(X[["age"]])
    with pytest.raises(ValueError, match="empty"):
        schema.validate(X.iloc[:0])
    schema.validate(X, pd.Series(["no", "no"]))   # declared classes: holding one of them is fine
    with pytest.raises(ValueError, match="not among"):
        schema.validate(X, pd.Series(["no", "maybe"]))
    with pytest.raises(ValueError, match="NaN"):
        schema.validate(X.assign(age=[np.nan, 3.0]))
    assert list(schema.encode_target(["yes", "no"])) == [1, 0]
    with pytest.raises(KeyError, match="unknown column"):
        schema["zip"]


def test_from_frame_warns_about_what_leaked():
    df = pd.DataFrame({"age": [20, 40, 60], "city": ["a", "b", "a"], "y": ["n", "y", "y"]})
    with pytest.warns(PrivacyLeakWarning, match="age.*city.*class labels"):
        schema = Schema.from_frame(df, "y")
    assert schema["age"].lower == 20 and schema["age"].upper == 60
    assert schema.classes == ("n", "y")


def test_schema_round_trips_through_json(tmp_path):
    schema = _schema()
    schema.to_json(tmp_path / "s.json")
    again = Schema.from_json(tmp_path / "s.json")
    assert again.predictors == schema.predictors and again.classes == schema.classes
    assert again["age"].taxonomy.level_sizes == schema["age"].taxonomy.level_sizes


# --------------------------------------------------------------------------- added
def _random_tree(draw_sizes, prefix="n"):
    """A nested dict tree from a list of child counts (0 = leaf), labels unique by path."""
    counter = iter(range(10**6))

    def build(depth):
        k = draw_sizes(depth)
        if k == 0:
            return None
        return {f"{prefix}{next(counter)}": build(depth + 1) for _ in range(k)}

    return {"Any": build(0) or {"only": None}}


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_property_random_unbalanced_trees_pad_into_nested_partitions(data):
    tree = _random_tree(lambda depth: data.draw(st.integers(0 if depth else 1, 3 if depth < 3 else 0)))
    tax = Taxonomy.from_spec("t", {"type": "categorical", "tree": tree})
    _assert_nested_partitions(tax)
    leaves = list(tax.leaves)
    values = data.draw(st.lists(st.sampled_from(leaves), min_size=1, max_size=30))
    leaf = tax.leaf_codes(values)
    assert [leaves[i] for i in leaf] == values
    for d in range(tax.height):
        # generalising to depth d gives the ancestor at depth d, and each padded leaf keeps its label
        gen = tax.generalize(values, d)
        for v, g in zip(values, gen):
            node = tax.labels(d).index(g)
            assert leaves.index(v) in tax.leaves_of(d, node)
    assert tax.generalize(values, tax.height - 1).tolist() == values
    assert set(tax.generalize(values, 0)) == {"Any"}
    again = Taxonomy.from_spec("t", tax.to_spec())
    assert again.level_sizes == tax.level_sizes and again.leaves == tax.leaves


def test_taxonomy_loads_from_json_text():
    import json
    text = '{"type": "categorical", "tree": {"Any": {"A": ["a1", "a2"], "b": null}}}'
    tax = Taxonomy.from_spec("x", json.loads(text))
    assert tax.level_sizes == (1, 2, 3) and tax.labels(2) == ["a1", "a2", "b"]
    num = Taxonomy.from_spec("n", json.loads('{"type": "numeric", "levels": [[0, 10], [0, 4, 10]]}'))
    assert num.bounds == (0.0, 10.0) and num.level_sizes == (1, 2)


@pytest.mark.parametrize("spec,exc,msg", [
    ([1, 2], TypeError, "mapping"),
    ({"type": "tree"}, ValueError, "categorical' or 'numeric"),
    ({"type": "categorical"}, ValueError, "'tree'"),
    ({"type": "numeric"}, ValueError, "'levels'"),
    ({"type": "categorical", "tree": {"A": [], "B": []}}, ValueError, "one root"),
    ({"type": "categorical", "tree": {"Any": {"G": {"Other": ["x"]}, "H": {"Other": ["y"]}}}}, ValueError,
     "several nodes labelled"),
    ({"type": "categorical", "tree": {"Any": {"G": ["x"], "H": ["x"]}}}, ValueError, "duplicate leaves"),
    ({"type": "numeric", "levels": [[0, 10], [0, 12, 10]]}, ValueError, "increasing"),
    ({"type": "numeric", "levels": [[0, 10], [1, 5, 10]]}, ValueError, "span"),
    ({"type": "numeric", "levels": [["a", "b"]]}, ValueError, "numbers"),
])
def test_bad_taxonomy_specs_are_refused(spec, exc, msg):
    with pytest.raises(exc, match=msg):
        Taxonomy.from_spec("t", spec)


def test_generalisation_errors_and_non_string_categories():
    tax = Taxonomy.from_spec("grade", {"type": "categorical", "tree": {"Any": {"low": ["1", "2"], "high": ["3"]}}})
    assert list(tax.leaf_codes(np.array([1, 3, 2]))) == [0, 2, 1]   # integers match their text
    assert list(tax.generalize(pd.Series([3, 1]), 1)) == ["high", "low"]
    with pytest.raises(ValueError, match="'grade'.*missing"):
        tax.leaf_codes(["1", None])
    with pytest.raises(ValueError, match="'grade'.*outside its declared categories"):
        tax.leaf_codes(["1", "4"])
    with pytest.raises(ValueError, match="depth"):
        tax.generalize(["1"], 3)
    with pytest.raises(ValueError, match="leaf_codes"):
        tax.node_codes([0, 3], 1)
    assert tax.node_codes([], 1).size == 0
    age = Taxonomy.equal_width("age", 0, 100, (2,))
    with pytest.raises(ValueError, match="'age'.*non-numeric"):
        age.leaf_codes(["x"])
    with pytest.raises(ValueError, match="'age'.*NaN"):
        age.leaf_codes([1.0, np.nan])
    with pytest.raises(ValueError, match="fanouts"):
        Taxonomy.equal_width("age", 0, 100, (2.5,))
    with pytest.raises(ValueError, match="bounds must be numbers"):
        Attribute.numeric("age", "low", 100)


def test_validation_does_not_mutate_and_from_frame_leaves_the_frame_alone():
    schema = _schema()
    X = pd.DataFrame({"age": [30, 60], "sex": ["F", "M"]})
    y = pd.Series(["no", "yes"])
    X0, y0 = X.copy(), y.copy()
    schema.validate(X, y)
    schema.leaf_codes(X)
    pd.testing.assert_frame_equal(X, X0)
    pd.testing.assert_series_equal(y, y0)
    df = X.assign(y=["no", "yes"])
    df0 = df.copy()
    with pytest.warns(PrivacyLeakWarning):
        Schema.from_frame(df, "y")
    pd.testing.assert_frame_equal(df, df0)
    with pytest.raises(ValueError, match="lacks"):
        schema.split(df.drop(columns="sex"))
    with pytest.raises(ValueError, match="unknown column"):
        schema.subset(["age", "zip"])
    with pytest.raises(ValueError, match="outside"):
        schema.validate(X.assign(sex=["F", "X"]))


def test_validation_messages_name_the_column_and_rule_never_the_value():
    """A refusal leaves the place where the data lives: no private value in any message."""
    from dpexplore.domain import declared_classes
    secret = "SECRET-4711"
    schema = Schema([Attribute.categorical("city", ["a", "b"]),
                     Attribute.numeric("age", 17, 90, Taxonomy.equal_width("age", 17, 90, (2,)))], "label", ["n", "p"])
    X = pd.DataFrame({"city": ["a", secret], "age": [20, 30]})
    calls = {
        "city.*outside its declared categories": lambda: schema.validate(X, ["n", "p"]),
        "age.*outside its public range \\[17, 90\\]": lambda: schema.validate(X.assign(city="a", age=[20, 4711]),
                                                                               ["n", "p"]),
        "target 'label'.*not among the declared classes": lambda: schema.validate(X.assign(city="a"), ["n", secret]),
        "not among the declared classes \\['n', 'p'\\]": lambda: schema.encode_target(["n", secret]),
        "y has label\\(s\\) that are not among": lambda: declared_classes(["n", secret], ["n", "p"], "m"),
        "'city' has value\\(s\\) outside": lambda: schema["city"].taxonomy.leaf_codes([secret]),
        "different numbers of rows": lambda: schema.validate(X.assign(city="a"), ["n", "p", "n"]),
    }
    for rule, call in calls.items():
        with pytest.raises(ValueError, match=rule) as err:
            call()
        assert secret not in str(err.value) and "4711" not in str(err.value), str(err.value)
