"""The smaller defects found when two unseen tables went through the own-table workflow: one test
per defect, each failing on the code before the fix."""
from __future__ import annotations

import dataclasses
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from dpexplore import tables
from dpexplore.datasets import load_adult, make_messy_table
from dpexplore.registry import all_methods
from dpexplore.domain import Attribute, PrivacyLeakWarning, Schema, Taxonomy, cut_taxonomy
from dpexplore.tables import FewRecordsWarning, InputError
from dpexplore.tables.draft import schema_leaks
from dpexplore.tables.export import resolution_decimals, rounded_to_resolution

COUNTS = ["n_visits", "n_emergency"]
KEEP = COUNTS + ["admission_type", "weight_kg", "readmitted"]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        yield


@pytest.fixture(scope="module")
def messy():
    return tables.select_columns(make_messy_table(1200, random_state=5, n_codes=50), KEEP)


def declared(frame: pd.DataFrame) -> pd.DataFrame:
    draft, _ = tables.draft_schema(frame, "readmitted")
    for c in draft.column:
        kw = dict(lower=0, upper=60, integer=True, cuts="long-tail") if c in COUNTS else {}
        if c == "weight_kg":
            kw = dict(lower=30, upper=200, integer=False, cuts=[60, 80, 100, 120])
        draft = tables.declare(draft, c, **kw)
    return draft


# ----------------------------------------------------------------------------- duplicated names
def test_a_frame_with_a_duplicated_column_name_gets_a_clear_error_naming_it():
    dup = make_messy_table(60, random_state=0, duplicate_names=True)[["n_visits", "gender", "readmitted"]]
    assert list(dup.columns).count("n_visits") == 2
    with pytest.raises(InputError, match=r"names a column twice \('n_visits' at columns 1, 2\)"):
        tables.draft_schema(dup, "readmitted")
    clean = dup.loc[:, ~dup.columns.duplicated()]
    draft = declared(clean.assign(weight_kg=80.0)).query("column != 'weight_kg'")
    with pytest.raises(InputError, match="names a column twice.*'n_visits'"):
        tables.build_schema(dup, draft)
    with pytest.raises(InputError, match="names a column twice.*'n_visits'"):
        tables.check_table(dup, "readmitted")
    # a repeated column the draft leaves out is no obstacle: build_schema does not read it
    other = pd.DataFrame({"n_visits": clean["n_visits"], "x": 0, "x2": 1, "readmitted": clean["readmitted"]})
    other.columns = ["n_visits", "x", "x", "readmitted"]
    schema, encoded, _ = tables.build_schema(other, draft.query("column != 'gender'"))
    assert list(encoded.columns) == ["n_visits", "readmitted"]
    with pytest.raises(InputError, match="several rows for 'n_visits'"):
        tables.build_schema(clean, pd.concat([draft, draft.iloc[:1]]))


def test_read_table_accepts_a_repeated_header_name_that_columns_or_drop_leaves_out(tmp_path):
    path = tmp_path / "dup.csv"
    make_messy_table(80, random_state=0, duplicate_names=True).to_csv(path, index=False)
    with pytest.raises(InputError, match="names a column twice.*'n_visits' at columns 2, 3"):
        tables.read_table(path)
    with pytest.raises(InputError, match="names a column twice"):           # kept: still ambiguous
        tables.read_table(path, columns=["n_visits", "gender", "readmitted"])
    kept = tables.read_table(path, columns=["gender", "n_meds", "readmitted"])
    assert list(kept.columns) == ["gender", "n_meds", "readmitted"]
    dropped = tables.read_table(path, drop=["n_visits"])                      # every copy goes
    assert "n_visits" not in dropped.columns and not any(c.startswith("n_visits") for c in dropped.columns)
    assert dropped.shape[1] == 50
    renamed = tables.read_table(path, duplicates="rename", drop=["n_visits"])  # numbered repeats stay
    assert "n_visits_2" in renamed.columns


# ----------------------------------------------------------------------------- integer bins
@pytest.mark.parametrize("cuts", ["", "equal"])
def test_equal_cuts_on_an_integer_column_give_whole_number_bins(cuts):
    years = tables.parse_cuts("year", cuts, 2007, 2009, True, (2, 2, 2))
    assert years.leaves == ("2007", "2008", "2009")
    np.testing.assert_array_equal(years.leaf_codes([2007, 2008, 2009]), [0, 1, 2])
    counts = tables.parse_cuts("n", cuts, 0, 60, True, (2, 2, 2))
    assert counts.leaves == ("0–7", "8–15", "16–22", "23–30", "31–37", "38–45", "46–52", "53–60")
    for depth in range(counts.height):                 # the edges between bins are whole numbers + ½
        assert all((e - 0.5).is_integer() for e in counts.edges(depth)[1:-1])
    # every integer keeps the equal-width bin (a, b] it had, at every depth
    v, same = np.arange(61), Taxonomy.equal_width("n", 0, 60, (2, 2, 2))
    for depth in range(counts.height):
        np.testing.assert_array_equal(counts.node_codes(counts.leaf_codes(v), depth),
                                      same.node_codes(same.leaf_codes(v), depth))
    assert tables.parse_cuts("w", cuts, 0, 60, False, (2, 2, 2)).leaves[0] == "[0, 7.5]"   # decimals as before


def test_a_drafted_year_column_builds_whole_number_bins():
    frame = pd.DataFrame({"year": [2007, 2008, 2009, 2008] * 5, "y": [0, 1] * 10})
    draft, _ = tables.draft_schema(frame, "y")
    assert draft.set_index("column").loc["year", "cuts"] == "equal"
    schema, _, _ = tables.build_schema(frame, draft)
    assert schema["year"].taxonomy.leaves == ("2007", "2008", "2009")


# ----------------------------------------------------------------------------- the summary
def test_summary_says_what_an_undeclared_draft_read_from_the_data(messy):
    draft, _ = tables.draft_schema(messy, "readmitted")          # nothing declared: bounds = min/max
    schema, encoded, leaks = tables.build_schema(messy, draft, missing="drop-rows")
    assert leaks and schema_leaks(schema) == leaks
    result = tables.release(encoded, schema, "DiffGen", 1.0, random_state=0, progress=False, evaluate=False)
    md = tables.summary_markdown(result)                         # no leaks= given to release
    assert "Every bound, category and class was declared" not in md
    assert "PrivacyLeakWarning" in md and "n_visits: bounds taken from the data" in md
    # a schema fully declared through build_schema: the sentence holds
    schema, encoded, leaks = tables.build_schema(messy, declared(messy), missing="drop-rows")
    assert leaks == [] and schema_leaks(schema) == []
    result = tables.release(encoded, schema, "DiffGen", 1.0, random_state=0, progress=False, evaluate=False)
    assert "Every bound, category and class was declared as public knowledge." in tables.summary_markdown(result)
    # a schema not built here: the summary does not vouch for it
    frame, adult = load_adult()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FewRecordsWarning)       # a tiny release: the wording is tested
        result = tables.release(frame.iloc[:400], adult, "DiffGen", 1.0, random_state=0, progress=False,
                                evaluate=False)
    md = tables.summary_markdown(result)
    assert schema_leaks(adult) is None
    assert "declared as public knowledge" not in md and "chosen without looking at the data" in md


def test_summary_states_the_epsilon_spent_and_why_less(messy):
    schema, encoded, _ = tables.build_schema(messy, declared(messy), missing="drop-rows")
    result = tables.release(encoded, schema, "DiffMulti", 1.0, random_state=0, progress=False, evaluate=False)
    spent = result.ledger["charged"].sum()
    md = tables.summary_markdown(result)
    assert f"budget **ε = 1**, spent **ε = {spent:.4g}** (the ledger's total)" in md
    # the share for one-way marginals unused (every column modelled): said, with its amount
    unpaid = result.ledger[~result.ledger["label"].str.startswith("marginal: ")]
    share = tables.DEFAULT_MARGINAL_SHARE
    unpaid = unpaid.assign(charged=unpaid["charged"] * (1 - share) / unpaid["charged"].sum())
    modelled = result.sources.assign(**{"produced by": "modelled"})
    md = tables.summary_markdown(dataclasses.replace(result, ledger=unpaid, sources=modelled))
    assert f"spent **ε = {1 - share:g}**" in md
    assert (f"the share set aside for one-way marginals (ε = {share:g}) went unused, as the method modelled "
            "every column") in md
    short = unpaid.assign(charged=unpaid["charged"] * 0.95 / (1 - share))   # any other shortfall: its amount
    md = tables.summary_markdown(dataclasses.replace(result, ledger=short, sources=result.sources))
    assert "spent **ε = 0.95**" in md and "ε = 0.05 was left unspent" in md and "went unused" not in md


@pytest.mark.parametrize("method", ["PrivPfC", "DiffGen"])
def test_sources_table_shows_each_columns_own_epsilon(messy, method):
    schema, encoded, _ = tables.build_schema(messy, declared(messy), missing="drop-rows")
    result = tables.release(encoded, schema, method, 1.0, random_state=1, progress=False, evaluate=False)
    md = tables.summary_markdown(result)
    section = md.split("## How each synthetic column was produced")[1].split("## Budget ledger")[0]
    rows = dict(re.findall(r"^\| (\S+) \| (?:modelled|marginal|uniform|left out) \| ([^|]+) \|", section, re.M))
    assert set(rows) == set(schema.predictors + [schema.target])
    src = result.sources.set_index("column")
    modelled = src.index[src["produced by"] == "modelled"]
    assert len(modelled) > 1 and (method != "PrivPfC" or (src["produced by"] == "marginal").any())
    for c in src.index:              # a modelled column never shows the model's total as its own ε
        if c in modelled:
            assert rows[c].strip() == "shared"
        else:                        # a marginal's own ε, as the ledger charged it
            own = float(rows[c])
            assert own == pytest.approx(src.loc[c, "ε"], rel=1e-3)
            assert own == pytest.approx(result.ledger.loc[result.ledger["label"] == f"marginal: {c}",
                                                          "charged"].sum(), rel=1e-3)
    model_eps = src.loc[modelled[0], "ε"]
    assert f"The {len(modelled)} modelled columns (target included) come from one model of them together: " \
           f"they share its ε = {model_eps:.3g}, spent once for all of them" in section


# ----------------------------------------------------------------------------- digits
def test_synthetic_floats_are_written_with_the_digits_of_their_resolution(messy):
    schema, encoded, _ = tables.build_schema(messy, declared(messy), missing="drop-rows")
    result = tables.release(encoded, schema, "DiffGen", 1.0, random_state=0, progress=False, evaluate=False)
    text = tables.synthetic_csv(result).decode()
    written = pd.read_csv(pd.io.common.StringIO(text))
    d = resolution_decimals(schema["weight_kg"].resolution)
    assert d == 4                                               # resolution 2⁻¹³ ≈ 0.000122
    at = text.splitlines()[0].split(",").index("weight_kg")
    cells = [line.split(",")[at] for line in text.splitlines()[1:]]
    digits = [len(v.split(".")[1]) if "." in v else 0 for v in cells]
    assert max(digits) <= d and max(digits) > 0
    np.testing.assert_allclose(written["weight_kg"], result.synthetic["weight_kg"], atol=0.5 * 10 ** -d)
    assert written["n_visits"].dtype == np.int64                # integers stay integers
    assert [resolution_decimals(r) for r in (1.0, 0.1, 0.25, 0.01, 2.0 ** -13)] == [0, 1, 1, 2, 4]
    declared_res = Schema([Attribute.numeric("w", 0, 10, resolution=0.1)], "y", ["a", "b"])
    out = rounded_to_resolution(pd.DataFrame({"w": [1.23456789], "y": ["a"]}), declared_res)
    assert out["w"].iloc[0] == 1.2


# ----------------------------------------------------------------------------- predict-time domain
PUBLISHERS = [spec.name for spec in all_methods("publisher", tag="tables")]


@pytest.fixture(scope="module")
def adult_releases():
    frame, schema = load_adult()
    out = {}
    for method in PUBLISHERS:
        try:
            out[method] = tables.release(frame.iloc[:2000], schema, method, 1.0, random_state=0, progress=False,
                                         evaluate=False).estimator
        except ValueError as exc:      # a method that refuses Adult's public domain (before any spend)
            out[method] = exc
    return frame[schema.predictors].iloc[2000:2010].reset_index(drop=True), schema, out


@pytest.mark.parametrize("method", PUBLISHERS)
def test_predict_clips_numbers_and_refuses_unknown_categories_for_every_publisher(adult_releases, method):
    X, schema, releases = adult_releases
    est = releases[method]
    if isinstance(est, ValueError):
        pytest.skip(f"{method} refuses Adult's public domain: {est}")
    for name in schema.numeric:                  # a number outside its bounds: as if at the bound
        for value, bound in ((schema[name].upper * 10 + 7, schema[name].upper),
                             (schema[name].lower - 1000, schema[name].lower)):
            far = X.assign(**{name: X[name].astype(float).where(X.index != 0, value)})
            at = X.assign(**{name: X[name].astype(float).where(X.index != 0, bound)})
            before = far.copy()
            np.testing.assert_array_equal(est.predict(far), est.predict(at))
            pd.testing.assert_frame_equal(far, before)          # the input is not modified
    for name in schema.categorical:              # refused for every column, whatever the grid holds
        odd = X.assign(**{name: X[name].astype(object).where(X.index != 3, "NEVER-DECLARED")})
        with pytest.raises(ValueError, match=rf"column '{re.escape(name)}' has value\(s\) outside its declared "
                                             r"categories") as err:
            est.predict(odd)
        assert "NEVER-DECLARED" not in str(err.value)


# ----------------------------------------------------------------------------- ledger file size
def test_exported_ledger_groups_a_partitions_spends_and_keeps_the_total(messy, tmp_path):
    schema, encoded, _ = tables.build_schema(messy, declared(messy), missing="drop-rows")
    result = tables.release(encoded, schema, "DiffMulti", 1.0, random_state=0, progress=False, evaluate=False)
    assert len(result.ledger) > 300                    # one row per spend: per node and per split
    paths = tables.export_release(result, tmp_path)
    exported = pd.read_csv(paths["ledger"], keep_default_na=False)
    assert list(exported.columns) == ["label", "scope", "spends", "epsilon", "charged"]
    assert len(exported) < len(result.ledger) / 5
    assert exported["spends"].sum() == len(result.ledger)
    assert exported["charged"].sum() == pytest.approx(result.ledger["charged"].sum(), rel=1e-9)
    assert exported["scope"].str.len().max() < 120
    assert paths["ledger"].stat().st_size < 50_000


# ============================================================================= the 333-row and 7,000-row tables
# An analyst's edge cases: one test per case, each failing on the code before the fix.
def _caught(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    return out, [w for w in caught if not issubclass(w.category, PrivacyLeakWarning)]


def test_synthetic_size_warns_on_the_high_side_from_public_figures_only():
    """The size rule's high side mirrors its low side: a count whose error bar (two standard
    deviations of its noise, from ε) is wider than half of it, or a count above the public cap,
    warns; the inputs are the released count, its public noise and the public cap."""
    from dpexplore.exceptions import SyntheticSizeWarning
    from dpexplore.publish.complete import count_noise_sd, synthetic_size
    assert count_noise_sd(0.5) == pytest.approx(2 ** 0.5 / 0.5) and count_noise_sd(0.0) == 0.0
    assert count_noise_sd(1.0, n_counts=8) == pytest.approx(4.0)
    size, caught = _caught(lambda: synthetic_size(5000.4, noise_sd=1000))           # ± 2000 < 2500: quiet
    assert size == 5000 and caught == []
    size, caught = _caught(lambda: synthetic_size(41663.7, noise_sd=11000))
    assert size == 41664 and [w.category for w in caught] == [SyntheticSizeWarning]
    assert "41664 rows follow the release's noisy record count (41664 ± 22000" in str(caught[0].message)
    size, caught = _caught(lambda: synthetic_size(5000, cap=1000, noise_sd=1))
    assert size == 1000 and "above the public cap max_synthetic_rows=1000" in str(caught[0].message)
    size, caught = _caught(lambda: synthetic_size(120.0, noise_sd=1e6))              # the low side, as before
    assert size == 300 and [w.category for w in caught] == [FewRecordsWarning]
    size, caught = _caught(lambda: synthetic_size(1e6, n=500, noise_sd=1e9))         # n= chosen: no rule
    assert size == 500 and caught == []


@pytest.mark.parametrize("method", PUBLISHERS)
def test_every_publisher_passes_its_public_count_noise_to_the_size_rule(method, monkeypatch):
    import importlib
    from dpexplore.publish.complete import count_noise_sd
    frame, schema = load_adult()
    est = tables.METHODS[method].build(schema, epsilon=0.5, random_state=0)
    module = importlib.import_module(type(est)._synthetic.__module__)      # where its size rule is called
    seen = []
    rule = module.synthetic_size
    monkeypatch.setattr(module, "synthetic_size", lambda *a, **kw: seen.append(kw["noise_sd"]) or rule(*a, **kw))
    est.fit(*schema.split(frame.iloc[:3000]))
    est.synthetic(random_state=0, n=10)
    assert len(seen) == 1 and 0 < seen[0] < np.inf
    # where the total is a sum of noisy leaf counts (regions) or one noisy record count: its noise
    if hasattr(est, "leaf_epsilon_"):
        own = count_noise_sd(est.leaf_epsilon_, np.size(est.noisy_counts_))
    elif "record count" in getattr(est, "epsilon_split_", {}):
        own = count_noise_sd(est.epsilon_split_["record count"])
    # with marginals paid, their totals narrow it (an inverse-variance mean); without, its own
    assert seen[0] < own if getattr(est, "marginals_", None) else seen == [own]


def test_a_release_at_a_tiny_epsilon_says_its_size_is_noise():
    """333 records at ε = 0.01 gave 41,664 synthetic rows without a word; the 7,032-row table
    36,066 (DiffMulti) and 19,166 (PrivPfC). Every such release now warns, on one side or the
    other, unless its size is near the record count: with marginals paid it comes from every
    released total (4,457–5,776 rows for the ~5,600 training records at ε = 0.01). At ε = 1 on a few
    thousand rows, nothing is said."""
    from dpexplore.exceptions import SyntheticSizeWarning
    for rows, methods in ((333, ("DiffMulti", "PrivPfC")), (7032, ("DiffMulti", "PrivPfC"))):
        table = tables.select_columns(make_messy_table(rows, random_state=1, n_codes=50), KEEP)
        schema, encoded, _ = tables.build_schema(table, declared(table), missing="drop-rows")
        for method in methods:
            for seed in range(3):
                result, caught = _caught(lambda: tables.release(encoded, schema, method, 0.01, random_state=seed,
                                                                progress=False, evaluate=False))
                kinds = {w.category for w in caught}
                size, n = len(result.synthetic), 0.8 * len(encoded)      # the training part (test_size 0.2)
                if abs(size - n) > 0.5 * n:                          # a size far from n always says so
                    assert kinds & {SyntheticSizeWarning, FewRecordsWarning}, (rows, method, seed, size)
                if size > 300 and not kinds:                         # not raised to the floor, no word
                    assert abs(size - n) <= 0.25 * n, (rows, method, seed, size)
    table = tables.select_columns(make_messy_table(3000, random_state=1, n_codes=50), KEEP)
    schema, encoded, _ = tables.build_schema(table, declared(table), missing="drop-rows")
    for method in ("DiffMulti", "PrivPfC"):
        _, caught = _caught(lambda: tables.release(encoded, schema, method, 1.0, random_state=0, progress=False,
                                                   evaluate=False))
        assert not any(issubclass(w.category, SyntheticSizeWarning) for w in caught), method


def test_the_estimator_at_a_vanishing_epsilon_warns_and_is_capped():
    from dpexplore.exceptions import SyntheticSizeWarning
    from dpexplore.publish import PrivPfC
    frame, schema = load_adult()
    model = PrivPfC(epsilon=1e-9, random_state=0, schema=schema, max_synthetic_rows=2000)
    model.fit(*schema.split(frame.iloc[:2000]))
    assert model.n_hat_ > 2000                   # this seed: a noisy count far above the cap
    table, caught = _caught(lambda: model.synthetic(random_state=0))
    assert len(table) == 2000 and [w.category for w in caught] == [SyntheticSizeWarning]
    assert "above the public cap max_synthetic_rows=2000" in str(caught[0].message)
    assert caught[0].filename == __file__        # points at the caller's line


def test_a_duplicated_column_that_reaches_release_is_named():
    from dpexplore.budget import BudgetAccountant
    from dpexplore.datasets import make_synthetic
    from dpexplore.publish import PrivPfC
    frame, schema = make_synthetic(n_samples=200, n_numeric=1, n_categorical=1, random_state=0)
    for column in ("cat_0", "label"):
        twice = pd.concat([frame, frame[[column]]], axis=1)
        acc = BudgetAccountant(2.0)
        with pytest.raises(InputError, match=rf"names a column twice \('{column}' at columns \d, 4\): keep one") as err:
            tables.release(twice, schema, "PrivPfC", 1.0, accountant=acc, progress=False)
        assert "1-dimensional" not in str(err.value) and "build_schema" not in str(err.value) and acc.spent == 0
    X, y = schema.split(frame)
    with pytest.raises(ValueError, match=r"X names the column\(s\) \['cat_0'\] more than once"):
        schema.validate(pd.concat([X, X[["cat_0"]]], axis=1), y)
    with pytest.raises(ValueError, match="'cat_0'"):           # the estimator names it too
        PrivPfC(epsilon=1.0, random_state=0, schema=schema).fit(pd.concat([X, X[["cat_0"]]], axis=1), y)


def test_the_summary_shows_no_negative_count():
    tiny = tables.select_columns(make_messy_table(30, random_state=3, n_codes=5), KEEP)
    schema, encoded, _ = tables.build_schema(tiny, declared(tiny), missing="drop-rows")
    for seed in range(20):
        result, _ = _caught(lambda: tables.release(encoded, schema, "PrivPfC", 0.01, random_state=seed,
                                                   progress=False, evaluate=False))
        if result.estimator.n_hat_ < 0:
            break
    else:
        pytest.fail("no seed gave a negative noisy count")
    assert result.occupancy["clamped"] and result.occupancy["n_hat"] == 0 == result.occupancy["records per cell"]
    line = next(line for line in tables.summary_markdown(result).splitlines() if line.startswith("- Grid:"))
    assert "about 0 training records (the noisy record count came out below 0 and is shown as 0" in line
    assert "post-processing" in line and not re.search(r"-\d", line)


def test_schema_from_json_takes_a_path_or_the_text(tmp_path):
    frame, schema = load_adult()
    text = schema.to_json()
    assert Schema.from_json(text).to_dict() == schema.to_dict()
    schema.to_json(tmp_path / "s.json")
    assert (tmp_path / "s.json").read_text() == text
    for path in (tmp_path / "s.json", str(tmp_path / "s.json")):
        assert Schema.from_json(path).to_dict() == schema.to_dict()
    assert Schema.from_json("  \n" + text).classes == schema.classes
    with pytest.raises(FileNotFoundError, match="no schema file at .*nope.json.*or the JSON text itself"):
        Schema.from_json(tmp_path / "nope.json")
    with pytest.raises(ValueError, match="the JSON text is not valid JSON"):
        Schema.from_json("{not json")
    assert Schema.from_json.__doc__ and ">>> Schema.from_json(" in Schema.from_json.__doc__


def test_declared_integer_categories_stay_integers():
    table = tables.select_columns(make_messy_table(600, random_state=2, n_codes=50), KEEP)
    table = table.assign(emergency=(table["n_emergency"] > 0).astype(np.int64)).drop(columns="n_emergency")
    draft = tables.declare(declared(table.assign(n_emergency=0)).query("column != 'n_emergency'"),
                           "emergency", kind="categorical", categories=[0, 1])
    schema, encoded, _ = tables.build_schema(table, draft, missing="drop-rows")
    assert encoded["emergency"].dtype == np.int64 and set(encoded["emergency"]) <= {0, 1}
    for method in ("PrivPfC", "DiffGen"):
        result, _ = _caught(lambda: tables.release(encoded, schema, method, 1.0, random_state=0, progress=False,
                                                   evaluate=False))
        assert result.synthetic["emergency"].dtype == np.int64 and set(result.synthetic["emergency"]) <= {0, 1}
    assert Schema.from_json(schema.to_json())["emergency"].dtype == np.int64
