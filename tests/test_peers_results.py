"""The stored peers benchmark (``notebooks/results/peers.csv``, from ``benchmarks/peers.py``):
columns, grid and plausibility of the values, consistency with its sidecar, and the parts of the
benchmark that run without the peers (the job it hands to them). Never imports diffprivlib or
opendp: they live in their own virtual environments."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _benchmarks import load_benchmark

ROOT = Path(__file__).resolve().parents[1]
CSV = ROOT / "notebooks" / "results" / "peers.csv"
SIDECAR = CSV.with_suffix(".json")


@pytest.fixture(scope="module")
def peers():
    return load_benchmark("peers.py", "peers_benchmark")


@pytest.fixture(scope="module")
def table():
    return pd.read_csv(CSV)


@pytest.fixture(scope="module")
def sidecar():
    return json.loads(SIDECAR.read_text())


def test_columns_exactly_as_07_reads_them(table, peers):
    assert list(table.columns) == ["library", "library_version", "method", "epsilon", "delta", "metric",
                                   "value", "n_runs", "notes", "dataset"] == peers.COLUMNS
    assert set(table["dataset"]) == {"adult"}                 # notebook 07's file: Adult only
    assert set(table["metric"]) == {"accuracy", *peers.FIDELITY_METRICS}
    assert set(table["library"]) == {"diffprivlib", "opendp"}
    assert not table.duplicated(["library", "method", "epsilon", "metric"]).any()


def test_every_method_at_every_epsilon_of_the_grid(table, sidecar, peers):
    grid = sorted(sidecar["epsilons"])
    assert grid == sorted(peers.EPSILONS)          # the showdown's full-mode grid
    for (library, method, metric), g in table.groupby(["library", "method", "metric"]):
        assert sorted(g["epsilon"]) == grid, (library, method, metric)
    assert {"GaussianNB", "LogisticRegression"} <= set(table.loc[table.library == "diffprivlib", "method"])
    assert any("MST" in m for m in table.loc[table.library == "opendp", "method"])


def test_epsilons_match_the_cached_showdown_sweep_if_present(table):
    sweeps = [p for p in (ROOT / "notebooks" / "results").glob("07_*.csv")]
    grids = []
    for path in sweeps:
        frame = pd.read_csv(path)
        if {"epsilon", "method"} <= set(frame.columns):
            eps = pd.to_numeric(frame["epsilon"], errors="coerce")
            grids.append(sorted(set(eps[np.isfinite(eps)].round(12))))
    if not grids:
        pytest.skip("no cached showdown sweep (notebooks/results/07_*.csv) yet")
    assert sorted(set(table["epsilon"].round(12))) in grids


def test_mst_fidelity_is_stored_on_the_public_bins(table, sidecar, peers):
    """MST's synthetic table (drawn with method="sample") against its training part: mean TVD
    over the public bins, 1-way ≤ 2-way, in [0, 1], and shape improves with ε."""
    shape = table[table["metric"].isin(peers.FIDELITY_METRICS)]
    assert set(shape["library"]) == {"opendp"} and (shape["n_runs"] >= 1).all()
    assert shape["value"].between(0.0, 1.0).all()
    wide = shape.pivot_table(index="epsilon", columns="metric", values="value")
    assert (wide["tvd_1way"] <= wide["tvd_2way"]).all()
    assert wide.loc[max(wide.index), "tvd_2way"] < wide.loc[min(wide.index), "tvd_2way"]
    assert wide.loc[1.0, "tvd_1way"] < 0.05                  # MST at ε = 1 keeps the one-way shape
    raw = [r for info in sidecar["peers"].values() for r in info.get("raw", []) if "tvd_1way" in r]
    assert raw and all(r["synthesis"] == peers.MST_SYNTHESIS == "sample" for r in raw)


def test_values_are_plausible_accuracies(table):
    accuracy = table[table["metric"] == "accuracy"]
    done = accuracy[accuracy["n_runs"] > 0]
    assert len(done) == len(accuracy), accuracy.loc[accuracy["n_runs"] == 0, ["method", "epsilon", "notes"]]
    assert done["value"].between(0.0, 1.0).all()
    # a private model on Adult does not beat the non-private logistic regression (≈ 0.85)
    assert (done["value"] <= 0.87).all(), done
    assert (done["n_runs"] == done["n_runs"].astype(int)).all()
    assert done["library_version"].notna().all()
    assert set(done.loc[done.library == "diffprivlib", "library_version"]) == {"0.6.6"}
    assert all(str(v).startswith("0.16") for v in done.loc[done.library == "opendp", "library_version"])
    # more budget does not make a method clearly worse (mean over ≥ 3 runs; loose for the noise;
    # a single MST run per ε varies by several points)
    for _, g in done[done["n_runs"] >= 3].groupby(["library", "method"]):
        g = g.sort_values("epsilon")
        assert g["value"].iloc[-1] >= g["value"].iloc[0] - 0.03, g
    # at ε = 1 the best peer beats the majority class of Adult (75.2%)
    assert done.loc[np.isclose(done.epsilon, 1.0), "value"].max() > 0.76


def test_delta_is_stated_and_small(table, sidecar):
    pure = table[table.library == "diffprivlib"]
    assert (pure["delta"] == 0).all()
    mst = table[(table.library == "opendp") & (table["delta"] > 0) & (table["metric"] == "accuracy")]
    assert len(mst) > 0, "the zCDP MST rows state their δ"
    assert (mst["delta"] < 1.0 / sidecar["n_train"]).all()      # δ ≪ 1/n
    assert (mst["delta"] == sidecar["mst_delta"]).all()


def test_sidecar_matches_the_table(table, sidecar, peers):
    assert sidecar["n_train"] + sidecar["n_test"] == sidecar["n_rows"] == 45222
    raw = [row for info in sidecar["peers"].values() for row in info.get("raw", [])]
    versions = {lib: str(v) for lib, v in table.groupby("library")["library_version"].first().items()}
    methods = [k for k, (lib, label, _) in peers.METHODS.items() if label in set(table["method"])]
    again = peers.summarise(raw, versions, {}, sidecar["epsilons"], sidecar["mst_delta"], methods)
    merged = table.merge(again, on=["library", "method", "epsilon", "metric"], suffixes=("", "_again"))
    assert len(merged) == len(table)
    np.testing.assert_allclose(merged["value"], merged["value_again"])
    assert (merged["n_runs"] == merged["n_runs_again"]).all()
    for row in raw:
        if "epsilon_spent" in row:    # diffprivlib's own accountant, checked against ε
            assert row["epsilon_spent"] <= row["epsilon"] * (1 + 1e-9)


def test_summarise_reports_a_missing_peer_instead_of_a_number(peers):
    raw = [{"method": "dpl_gnb", "epsilon": 0.1, "run": r, "accuracy": a} for r, a in enumerate([0.7, 0.8])]
    out = peers.summarise(raw, {"diffprivlib": "0.6.6"}, {"odp_mst": "interpreter not found"}, [0.1], 1e-6,
                          ["dpl_gnb", "odp_mst"])
    assert list(out.columns) == peers.COLUMNS
    gnb, mst = out.iloc[0], out.iloc[1]
    assert gnb["value"] == pytest.approx(0.75) and gnb["n_runs"] == 2 and gnb["delta"] == 0
    assert math.isnan(mst["value"]) and mst["n_runs"] == 0 and "interpreter not found" in mst["notes"]
    assert mst["delta"] == 1e-6
    assert len(out) == 2                            # no fidelity row without a run that measured it
    shaped = raw + [{"method": "odp_mst", "epsilon": 0.1, "run": 0, "accuracy": 0.7, "tvd_1way": 0.02,
                     "tvd_2way": 0.05}]
    out = peers.summarise(shaped, {"opendp": "0.16.0"}, {}, [0.1], 1e-6, ["odp_mst"])
    assert list(out["metric"]) == ["accuracy", "tvd_1way", "tvd_2way"]
    assert list(out["value"]) == [0.7, 0.02, 0.05] and (out["delta"] == 1e-6).all()


def test_zcdp_conversion_spends_at_most_epsilon(peers):
    for eps in (0.03, 0.1, 1.0, 5.0):
        for delta in (1e-6, 1e-9):
            rho = peers.zcdp_rho(eps, delta)
            assert rho > 0
            assert rho + 2 * math.sqrt(rho * math.log(1 / delta)) == pytest.approx(eps, rel=1e-9)


def test_job_handed_to_the_peers_is_adult_with_the_showdown_splits(peers, tmp_path):
    """What the peer venvs read back (without dpexplore) is the table load_adult returns, split as
    the showdown's sweep splits it, with a public encoding whose rows fit the declared data_norm."""
    from dpexplore.datasets import load_adult
    from dpexplore.evaluate.sweeps import Splits, root_entropy

    frame, schema = load_adult()
    config = peers.write_job(tmp_path, [0.1, 1.0], 2, 1e-6, ["dpl_gnb"])
    back_config, back_schema, numeric, back, runs = peers._load_job(tmp_path)
    assert back_config["n_train"] + back_config["n_test"] == len(frame) == config["n_rows"]
    pd.testing.assert_frame_equal(back.astype(object), frame.astype(object), check_dtype=False)
    assert numeric == [a for a in schema.predictors if schema[a].kind == "numeric"]
    splits = Splits(frame, schema, None, 0.2, root_entropy(2026))
    for r, (tr, te) in enumerate(runs):
        (tr0, te0), = splits.folds(r)
        np.testing.assert_array_equal(tr, tr0)
        np.testing.assert_array_equal(te, te0)
    assert not np.array_equal(runs[0][1], runs[1][1])
    design, data_norm, n_numeric = peers._public_design(back_schema)
    Z = design(back)
    assert n_numeric == 6 and Z.shape[0] == len(frame)
    assert Z.min() >= 0 and Z.max() <= 1
    assert np.linalg.norm(Z, axis=1).max() <= data_norm
    # every categorical value is one of the declared categories: exactly one indicator per column
    is_cat = np.concatenate([np.ones(len(schema[a].categories), bool) if schema[a].kind != "numeric"
                             else np.zeros(1, bool) for a in schema.predictors])
    assert is_cat.size == Z.shape[1]
    np.testing.assert_array_equal(Z[:, is_cat].sum(axis=1), len(schema.predictors) - n_numeric)


# ----------------------------------------------------------------------------- the messy table
MESSY_CSV = ROOT / "benchmarks" / "results" / "peers_messy.csv"
FIDELITY_CSV = ROOT / "benchmarks" / "results" / "fidelity.csv"


def test_job_for_the_messy_table_is_the_fidelity_benchmarks_split(peers, tmp_path):
    """MST meets our publishers on the very rows benchmarks/fidelity.py gave them: its messy table,
    split per record with its default run's generators (the held-out majority shares it stored
    are those of these splits), and the synthetic size is the model's, not the private training size."""
    from dpexplore.datasets import bernoulli_split

    fidelity = load_benchmark("fidelity.py", "fidelity_benchmark_for_peers")
    frame, schema, leaks = fidelity.load_dataset("messy")
    assert leaks == []
    config = peers.write_job(tmp_path, [1.0], 3, 1e-6, ["odp_mst"], dataset="messy")
    assert config["dataset"] == "messy" and config["synthetic_rows"] == "model total"
    back_config, back_schema, _, back, runs = peers._load_job(tmp_path)
    assert back_schema == json.loads(json.dumps(schema.to_dict())) and len(back) == len(frame) == config["n_rows"]
    assert (back[schema.target].to_numpy() == frame[schema.target].astype(str).to_numpy()).all()
    np.testing.assert_allclose(back["weight_kg"].to_numpy(), frame["weight_kg"].to_numpy())
    stored = pd.read_csv(FIDELITY_CSV)
    stored = stored[stored.dataset == "messy"].groupby("seed")["majority"].first()
    y = back[schema.target]
    for r, (tr, te) in enumerate(runs):
        X_tr, X_te, _, _ = bernoulli_split(frame, schema, 0.2, random_state=np.random.default_rng([2026, 1, r]))
        np.testing.assert_array_equal(tr, np.flatnonzero(frame.index.isin(X_tr.index)))
        np.testing.assert_array_equal(te, np.flatnonzero(frame.index.isin(X_te.index)))
        assert len(tr) + len(te) == len(frame) and config["n_train_runs"][r] == len(tr)
        majority = float(np.mean(y.iloc[te] == y.iloc[tr].mode().iloc[0]))
        assert majority == pytest.approx(stored[r], abs=1e-6)
    # every numeric column has the taxonomy whose leaves are MST's cuts and the fidelity bins
    assert all(a.get("taxonomy") for a in back_schema["attributes"] if a["kind"] == "numeric")


def test_summarise_keeps_the_tables_apart(peers):
    raw = [{"method": "odp_mst", "epsilon": 1.0, "run": 0, "accuracy": 0.8},             # before --datasets
           {"dataset": "messy", "method": "odp_mst", "epsilon": 1.0, "run": 0, "accuracy": 0.7,
            "tvd_1way": 0.02, "tvd_2way": 0.05}]
    adult = peers.summarise(raw, {"opendp": "0.16.0"}, {}, [1.0], 1e-6, ["odp_mst"])
    messy = peers.summarise(raw, {"opendp": "0.16.0"}, {}, [1.0], 1e-6, ["odp_mst"], "messy")
    assert list(adult["value"]) == [0.8] and set(adult["dataset"]) == {"adult"}
    assert list(messy["metric"]) == ["accuracy", "tvd_1way", "tvd_2way"]
    assert list(messy["value"]) == [0.7, 0.02, 0.05] and set(messy["dataset"]) == {"messy"}


def test_a_messy_run_keeps_the_stored_adult_rows(peers, tmp_path):
    """``--datasets messy --only odp`` into a file written before ``--datasets`` (no dataset
    column): Adult's rows stay, marked "adult"; a missing interpreter gives messy rows with no value
    and the reason; diffprivlib is not run on the messy table."""
    out = tmp_path / "peers.csv"
    old = pd.read_csv(CSV).drop(columns="dataset")
    old.to_csv(out, index=False)
    peers.main(["--datasets", "messy", "--only", "odp", "--odp-python", str(tmp_path / "no-python"),
                "--epsilons", "1", "--repetitions", "1", "--mst-pure", "--out", str(out)])
    new = pd.read_csv(out, keep_default_na=False, na_values=[""])
    assert list(new.columns) == peers.COLUMNS
    kept = new[new.dataset == "adult"].drop(columns="dataset").reset_index(drop=True)
    pd.testing.assert_frame_equal(kept, old.fillna({"notes": ""}), check_dtype=False)
    messy = new[new.dataset == "messy"]
    assert set(messy["library"]) == {"opendp"} and len(messy) == 2          # zCDP and pure, accuracy only
    assert messy["value"].isna().all() and messy["notes"].str.contains("not found").all()
    sidecar = json.loads(out.with_suffix(".json").read_text())
    assert sidecar["datasets"]["messy"]["synthetic_rows"] == "model total"
    assert "error" in sidecar["peers"]["odp:messy"]


def test_stored_messy_mst_results(peers):
    """The stored MST run on the messy table: both accountings at each ε, accuracy and shape,
    consistent with its sidecar, drawn with method="sample" on fidelity.py's splits."""
    table = pd.read_csv(MESSY_CSV)
    sidecar = json.loads(MESSY_CSV.with_suffix(".json").read_text())
    assert list(table.columns) == peers.COLUMNS and set(table["dataset"]) == {"messy"}
    assert set(table["library"]) == {"opendp"}
    assert set(table["method"]) == {peers.METHODS["odp_mst"][1], peers.METHODS["odp_mst_pure"][1]}
    assert set(table["metric"]) == {"accuracy", *peers.FIDELITY_METRICS}
    assert not table.duplicated(["dataset", "method", "epsilon", "metric"]).any()
    assert (table["n_runs"] == sidecar["repetitions"]).all() and table["value"].between(0, 1).all()
    assert sorted(set(table["epsilon"])) == sorted(sidecar["epsilons"])
    assert "default_rng([2026, 1, run])" in sidecar["datasets"]["messy"]["splits"]
    for _, g in table[table.metric != "accuracy"].groupby("method"):
        wide = g.pivot_table(index="epsilon", columns="metric", values="value")
        assert (wide["tvd_1way"] <= wide["tvd_2way"]).all()
        assert wide["tvd_2way"].is_monotonic_decreasing                       # more budget, closer table
    raw = [r for info in sidecar["peers"].values() for r in info.get("raw", [])]
    assert raw and all(r["dataset"] == "messy" and r["synthesis"] == "sample" for r in raw)
    methods = [k for k, (_, label, _) in peers.METHODS.items() if label in set(table["method"])]
    again = peers.summarise(raw, {"opendp": table["library_version"].iloc[0]}, {}, sidecar["epsilons"],
                            sidecar["mst_delta"], methods, "messy")
    pd.testing.assert_frame_equal(again, table, check_dtype=False)


# ----------------------------------------------------------------------------- the customer table
def test_customer_rule_breaks_are_counted_per_rule():
    """benchmarks/fidelity.py's count of rule breaks: none in the real table (every rule holds in
    every generated row), and each broken row counted for its own rule only."""
    from dpexplore.datasets import CUSTOMER_ADDONS

    fidelity = load_benchmark("fidelity.py", "fidelity_benchmark_for_peers")
    frame, schema, leaks = fidelity.load_dataset("customers")
    assert leaks == [] and len(frame) == fidelity.CUSTOMER_ROWS
    assert fidelity.known_rule_violations(frame) == {"rules_addon_max": 0.0, "rules_addon_mean": 0.0,
                                                     "rules_phone": 0.0}
    broken = frame.copy()
    online = np.flatnonzero(broken["InternetService"] != "No")[:70]
    broken.loc[online, "TechSupport"] = "No internet service"         # 70 rows break one add-on's rule
    broken.loc[np.flatnonzero(broken["PhoneService"] == "No")[:35], "MultipleLines"] = "No"
    shares = fidelity.known_rule_violations(broken)
    assert shares["rules_addon_max"] == pytest.approx(70 / len(frame))
    assert shares["rules_addon_mean"] == pytest.approx(70 / len(frame) / len(CUSTOMER_ADDONS))
    assert shares["rules_phone"] == pytest.approx(35 / len(frame))


def test_job_for_the_customer_table_is_the_fidelity_benchmarks_split(peers, tmp_path):
    """MST gets the customer table with its declared schema (every key and cut from the
    constants) and fidelity.py's splits of that table (its index in fidelity.py's DATASETS)."""
    from dpexplore.datasets import bernoulli_split

    fidelity = load_benchmark("fidelity.py", "fidelity_benchmark_for_peers")
    frame, schema, _ = fidelity.load_dataset("customers")
    config = peers.write_job(tmp_path, [1.0], 2, 1e-6, ["odp_mst_pure"], dataset="customers")
    assert config["synthetic_rows"] == "model total" and "default_rng([2026, 2, run])" in config["splits"]
    _, back_schema, _, back, runs = peers._load_job(tmp_path)
    assert back_schema == json.loads(json.dumps(schema.to_dict()))
    pd.testing.assert_frame_equal(back[schema.categorical], frame[schema.categorical])
    for r, (tr, _) in enumerate(runs):
        X_tr, _, _, _ = bernoulli_split(frame, schema, 0.2, random_state=np.random.default_rng([2026, 2, r]))
        np.testing.assert_array_equal(tr, np.flatnonzero(frame.index.isin(X_tr.index)))


def test_stored_customer_mst_results(peers):
    """The stored MST run on the customer table: pure ε at each ε, accuracy, shape and rule breaks,
    consistent with its sidecar, on fidelity.py's splits of that table."""
    path = ROOT / "benchmarks" / "results" / "peers_customers.csv"
    table = pd.read_csv(path)
    sidecar = json.loads(path.with_suffix(".json").read_text())
    assert list(table.columns) == peers.COLUMNS and set(table["dataset"]) == {"customers"}
    assert set(table["method"]) == {peers.METHODS["odp_mst_pure"][1]} and (table["delta"] == 0).all()
    assert set(table["metric"]) == {"accuracy", *peers.FIDELITY_METRICS, *peers.RULE_METRICS}
    assert (table["n_runs"] == sidecar["repetitions"]).all() and table["value"].between(0, 1).all()
    assert "default_rng([2026, 2, run])" in sidecar["datasets"]["customers"]["splits"]
    wide = table.pivot_table(index="epsilon", columns="metric", values="value")
    assert (wide["rules_addon_mean"] <= wide["rules_addon_max"]).all()
    raw = [r for info in sidecar["peers"].values() for r in info.get("raw", [])]
    again = peers.summarise(raw, {"opendp": table["library_version"].iloc[0]}, {}, sidecar["epsilons"],
                            sidecar["mst_delta"], ["odp_mst_pure"], "customers")
    pd.testing.assert_frame_equal(again, table, check_dtype=False)
