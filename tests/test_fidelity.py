"""dpexplore.evaluate.fidelity: total-variation distance over public bins, 1-way and 2-way."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpexplore.domain import Attribute, Schema, cut_taxonomy
from dpexplore.evaluate.fidelity import FIDELITY_COLUMNS, bin_codes, fidelity, fidelity_summary, public_bins


def schema_with(cuts=(50,)) -> Schema:
    age = Attribute.numeric("age", 0, 100, cut_taxonomy("age", 0, 100, list(cuts), integer=True), integer=True)
    colour = Attribute.categorical("colour", ["red", "blue", "green"])
    return Schema([age, colour], "y", ["0", "1"])


def table(ages, colours, ys) -> pd.DataFrame:
    return pd.DataFrame({"age": ages, "colour": colours, "y": ys})


def test_identical_tables_are_at_distance_zero():
    rng = np.random.default_rng(0)
    real = table(rng.integers(0, 101, 200), rng.choice(["red", "blue", "green"], 200), rng.integers(0, 2, 200))
    out = fidelity(real, real.sample(frac=1.0, random_state=1), schema_with())   # row order does not matter
    assert list(out.columns) == FIDELITY_COLUMNS
    assert list(out["way"]) == ["1-way"] * 3 + ["2-way"] * 3
    assert list(out["columns"]) == ["age", "colour", "y", "age × colour", "age × y", "colour × y"]
    np.testing.assert_allclose(out["tvd"], 0.0, atol=1e-15)
    assert fidelity_summary(real, real, schema_with()) == {"tvd_1way": 0.0, "tvd_2way": 0.0,
                                                           "max_1way": 0.0, "max_2way": 0.0}


def test_disjoint_supports_are_at_distance_one():
    real = table([10, 20, 30], ["red"] * 3, [0, 0, 0])
    fake = table([60, 70, 80, 90], ["blue", "green", "blue", "green"], [1, 1, 1, 1])
    out = fidelity(real, fake, schema_with()).set_index("columns")["tvd"]
    np.testing.assert_allclose(out, 1.0)


def test_a_small_case_computed_by_hand():
    #                age bin:  [0,50) [0,50) [50,100] [50,100]    colour      y
    real = table([10, 20, 60, 70], ["red", "red", "blue", "green"], [0, 1, 0, 1])
    fake = table([10, 60, 60, 60], ["red", "blue", "blue", "blue"], [0, 0, 0, 1])
    out = fidelity(real, fake, schema_with()).set_index("columns")["tvd"]
    # age: real (1/2, 1/2), fake (1/4, 3/4) → ½(1/4 + 1/4)
    assert out["age"] == pytest.approx(0.25)
    # colour: real (2/4, 1/4, 1/4), fake (1/4, 3/4, 0) → ½(1/4 + 2/4 + 1/4)
    assert out["colour"] == pytest.approx(0.5)
    # y: real (1/2, 1/2), fake (3/4, 1/4)
    assert out["y"] == pytest.approx(0.25)
    # age × colour: real {(lo,red): 2, (hi,blue): 1, (hi,green): 1}/4, fake {(lo,red): 1, (hi,blue): 3}/4
    assert out["age × colour"] == pytest.approx(0.5 * (1 + 2 + 1) / 4)
    # age × y: real {(lo,0),(lo,1),(hi,0),(hi,1)} 1 each, fake {(lo,0): 1, (hi,0): 2, (hi,1): 1}
    assert out["age × y"] == pytest.approx(0.5 * (0 + 1 + 1 + 0) / 4)
    # colour × y: real {(red,0),(red,1),(blue,0),(green,1)}, fake {(red,0): 1, (blue,0): 2, (blue,1): 1}
    assert out["colour × y"] == pytest.approx(0.5 * (0 + 1 + 1 + 1 + 1) / 4)
    summary = fidelity_summary(real, fake, schema_with())
    assert summary["tvd_1way"] == pytest.approx((0.25 + 0.5 + 0.25) / 3)
    assert summary["tvd_2way"] == pytest.approx((0.5 + 0.25 + 0.5) / 3)
    assert summary["max_1way"] == pytest.approx(0.5) and summary["max_2way"] == pytest.approx(0.5)


def test_bins_come_from_the_schema_never_from_the_data():
    real = table([10, 20, 30, 40], ["red"] * 4, [0] * 4)
    fake = table([41, 42, 43, 44], ["red"] * 4, [0] * 4)     # other values, the same public bin
    assert fidelity(real, fake, schema_with((50,))).set_index("columns").loc["age", "tvd"] == 0.0
    # the schema's finer bins separate them: the distance follows the declared bins only
    assert fidelity(real, fake, schema_with((25,))).set_index("columns").loc["age", "tvd"] == pytest.approx(0.5)
    bins = public_bins(schema_with((25, 50)))
    assert bins == {"age": ["0–24", "25–49", "50–100"], "colour": ["red", "blue", "green"], "y": ["0", "1"]}
    # a category the schema declares but neither table holds is still a bin (no bin is read from data)
    codes = bin_codes(real, schema_with())
    assert set(codes["colour"]) == {0} and codes.shape == (4, 3)


def test_values_outside_the_domain_and_missing_values_count_against_the_synthetic_table():
    real = table([10, 60], ["red", "blue"], [0, 1])
    fake = table([10, 150], ["red", None], [0, 1])            # 150 is above the declared bound
    codes = bin_codes(fake, schema_with())
    assert list(codes["age"]) == [0, -1] and list(codes["colour"]) == [0, -1]
    out = fidelity(real, fake, schema_with()).set_index("columns")["tvd"]
    assert out["age"] == pytest.approx(0.5) and out["colour"] == pytest.approx(0.5)


def test_int_target_matches_declared_text_classes_and_inputs_are_untouched():
    real = table([10, 60], ["red", "blue"], np.array([0, 1]))
    fake = table([10, 60], ["red", "blue"], np.array(["0", "1"], dtype=object))
    before = (real.copy(), fake.copy())
    assert fidelity_summary(real, fake, schema_with())["tvd_2way"] == 0.0
    pd.testing.assert_frame_equal(real, before[0])
    pd.testing.assert_frame_equal(fake, before[1])


def test_empty_synthetic_table_scores_one_and_bad_input_is_refused():
    real = table([10, 60], ["red", "blue"], [0, 1])
    out = fidelity(real, real.iloc[:0], schema_with())
    np.testing.assert_allclose(out["tvd"], 1.0)
    with pytest.raises(ValueError, match="real table is empty"):
        fidelity(real.iloc[:0], real, schema_with())
    with pytest.raises(ValueError, match=r"lacks the schema's column\(s\) \['colour'\]"):
        fidelity(real, real.drop(columns="colour"), schema_with())
    with pytest.raises(TypeError, match="Schema"):
        fidelity(real, real, {"age": [0, 100]})
    with pytest.raises(ValueError, match="ways"):
        fidelity(real, real, schema_with(), ways=(3,))
    assert list(fidelity(real, real, schema_with(), ways=(2,))["way"].unique()) == ["2-way"]
