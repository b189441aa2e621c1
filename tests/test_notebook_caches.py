"""The cached sweeps shipped for notebooks 04, 05 and 06 (notebooks/results/0{4,5,6}_*.csv).

Each test recomputes a tiny version with the benchmark script's own functions and checks that the
shipped file has the same columns, covers the grid the notebook reads, holds plausible values,
and agrees with the recomputation where the two share a setting (seeded runs, looser bands where
the shipped file averages more runs).
"""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _benchmarks import load_benchmark

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "notebooks" / "results"


def _csv(name: str) -> pd.DataFrame:
    path = RESULTS / name
    assert path.exists(), f"{path} missing: run the benchmark script named in its notebook cell"
    return pd.read_csv(path)


# --------------------------------------------------------------------------- 04
def test_04_caches_match_a_tiny_recomputation():
    b04 = load_benchmark("04_thesis_sweeps.py")
    data = b04.adult_binary()
    tiny = b04.accuracy_against_k(*data, [5], reps=1, lr_reps=1)
    shipped = _csv("04_accuracy_k.csv")
    assert list(shipped.columns) == list(tiny.columns)
    assert sorted(shipped["k"].unique()) == b04.K_GRID
    assert set(shipped["pipeline"]) == set(tiny["pipeline"])
    assert shipped[["median", "q25", "q75"]].stack().between(0.5, 1.0).all()
    assert (shipped["q25"] <= shipped["median"]).all() and (shipped["median"] <= shipped["q75"]).all()
    # seed 0 is one of the shipped runs: its accuracy lies within the shipped spread (± 0.03)
    for row in tiny.itertuples():
        ref = shipped[(shipped.k == 5) & (shipped.pipeline == row.pipeline)].iloc[0]
        assert ref.q25 - 0.03 <= row.median <= ref.q75 + 0.03, row.pipeline
    base = _csv("04_baselines.csv")
    assert list(base.columns) == ["baseline", "accuracy"] and len(base) == 4
    assert base["accuracy"].iloc[0] == pytest.approx(max(data[3].mean(), 1 - data[3].mean()))
    # the lesson: a handful of privately selected features beats the majority class at ε = 0.1
    best = shipped[shipped.pipeline == "private k-subset (count) + DP-NB"]["median"].max()
    assert best > base["accuracy"].iloc[0] + 0.03

    eps = _csv("04_accuracy_epsilon.csv")
    assert list(eps.columns) == ["epsilon", "pipeline", "median", "q25", "q75", "runs"]
    assert sorted(eps["epsilon"].unique()) == b04.EPS_GRID and len(eps) == 3 * len(b04.EPS_GRID)

    lam_tiny = b04.accuracy_against_lambda([100], reps=1, n_test=2_000)
    lam = _csv("04_accuracy_lambda.csv")
    assert list(lam.columns) == list(lam_tiny.columns)
    assert sorted(lam["lam"].unique()) == sorted(b04.LAMBDA_GRID)
    assert lam[["median", "q25", "q75"]].stack().between(0.0, 1.0).all()
    # at λ = 100 objective perturbation beats the majority on the toy data (best 0.9)
    obj = lam[(lam.lam == 100) & (lam.pipeline == "objective perturbation")]["median"].iloc[0]
    assert 0.6 < obj <= 0.95
    assert lam_tiny[lam_tiny.pipeline == "objective perturbation"]["median"].iloc[0] == pytest.approx(obj, abs=0.1)


# --------------------------------------------------------------------------- 05
def test_05_caches_match_a_tiny_recomputation():
    b05 = load_benchmark("05_private_roc_cache.py")
    B_train, y_train, B_test, y_test, s = b05.adult_leaves()
    sel, refs = b05.selection_accuracy(B_train, y_train, B_test, y_test, s, [1.0], reps=1)
    shipped = _csv("05_selection_accuracy.csv")
    assert list(shipped.columns) == list(sel.columns)
    assert sorted(shipped["epsilon"].unique()) == b05.SELECTION_EPS
    assert set(shipped["method"]) == set(sel["method"])
    assert shipped["accuracy"].between(0.5, 1.0).all()
    # seeded: run 0 at ε = 1 is the same selection and the same fit
    merged = sel.merge(shipped, on=["method", "epsilon", "run"], suffixes=("", "_shipped"))
    assert len(merged) == 3
    np.testing.assert_allclose(merged["accuracy"], merged["accuracy_shipped"], atol=1e-6)
    pd.testing.assert_frame_equal(refs, _csv("05_selection_references.csv"), atol=1e-6)

    pipes = _csv("05_private_pipelines.csv")
    assert list(pipes.columns) == ["pipeline", "run", "accuracy"] and pipes["accuracy"].between(0.5, 1).all()
    assert pipes["pipeline"].nunique() == 3

    quality_tiny = b05.selection_quality(B_train, y_train, s, reps=1, quantiles=(0.5,))
    quality = _csv("05_selection_quality.csv")
    assert list(quality.columns) == list(quality_tiny.columns)
    assert quality["f1"].between(0, 1).all() and quality["tau"].nunique() == 6
    shared = quality_tiny.merge(quality, on=["method", "tau", "run"], suffixes=("", "_shipped"))
    np.testing.assert_allclose(shared["f1"], shared["f1_shipped"], atol=1e-6)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        audit_tiny = b05.audit(200, cluster=False)
    audit = _csv("05_audit.csv")
    assert set(audit_tiny.columns) <= set(audit.columns)
    assert audit["n_samples"].iloc[0] == 20_000
    verdict = dict(zip(audit["selector"], audit["violates"]))
    assert verdict["PTT (Alg. 2, as printed)"] and any("luster" in k and v for k, v in verdict.items())
    assert not audit[audit["sound"]]["violates"].any()
    assert bool(audit_tiny.set_index("selector").loc["PTT (Alg. 2, as printed)", "violates"])


# --------------------------------------------------------------------------- 06
def test_06_cache_matches_a_tiny_recomputation():
    from dpexplore.datasets import load_iris

    b06 = load_benchmark("06_projected_sweeps.py")
    iris, schema = load_iris()
    tiny = b06.sweeps({"Iris": (iris, schema, 3)}, grids={"epsilon": [1.0]})
    shipped = _csv("06_auc_sweeps.csv")
    assert set(tiny.columns) <= set(shipped.columns)
    assert set(shipped["dataset"]) == {"Iris", "Adult"}
    for parameter, values in b06.GRIDS.items():
        got = sorted(shipped[shipped.parameter == parameter]["value"].unique())
        assert got == pytest.approx(sorted(values)), parameter
    assert shipped["auc"].between(0, 1).all()
    assert {"projected histogram", "LR (non-private)", "projection only (ε = 10⁴)", "DP-LR"} <= set(shipped["method"])
    # non-private LR on Iris is near perfect; the projected histogram at ε = 1 is far above chance on Adult
    lr = shipped[(shipped.dataset == "Iris") & (shipped.method == "LR (non-private)")]["auc"].median()
    assert lr > 0.95
    adult = shipped[(shipped.dataset == "Adult") & (shipped.method == "projected histogram")
                    & (shipped.parameter == "epsilon") & (shipped.value == 1.0)]["auc"].median()
    assert adult > 0.7
    # same protocol: the tiny 3-fold reference is in the range of the shipped 10-fold one
    tiny_lr = tiny[tiny.method == "LR (non-private)"]["auc"].median()
    assert tiny_lr == pytest.approx(lr, abs=0.05)


# --------------------------------------------------------------------------- 14
def test_14_svt_audit_cache_matches_a_recomputation():
    b14 = load_benchmark("14_svt_audit.py")
    shipped = _csv("14_svt_audit.csv")
    assert list(shipped.columns) == ["variant", "pair", "n_samples", "claimed_epsilon", "epsilon_lower", "epsilon_hat",
                                     "violates"]
    assert set(shipped["variant"]) == set(b14.VARIANTS) and sorted(shipped["n_samples"].unique()) == list(b14.DRAWS)
    assert len(shipped) == len(b14.VARIANTS) * 4 * len(b14.DRAWS)
    # each row has its own seed: a recomputation gives the shipped bound exactly
    for variant, pair, n in [("no query noise", "threshold ± 1", 500), ("AboveThreshold", "below then above", 1_000),
                             ("no halting", "opposite blocks", 250)]:
        row = b14.audit_row(variant, pair, n)
        ref = shipped[(shipped.variant == variant) & (shipped.pair == pair) & (shipped.n_samples == n)].iloc[0]
        assert row["epsilon_lower"] == pytest.approx(ref["epsilon_lower"], rel=1e-5) and row["violates"] == ref["violates"]
    # the lesson notebook 14 reads: every broken variant refuted, AboveThreshold never, the released value last
    first = shipped[shipped["violates"]].groupby("variant")["n_samples"].min()
    assert "AboveThreshold" not in first.index and set(first.index) == set(b14.VARIANTS) - {"AboveThreshold"}
    assert first.idxmax() == "released value"


# --------------------------------------------------------------------------- 10
def test_10_reconstruction_cache_matches_a_tiny_recomputation():
    b10 = load_benchmark("10_reconstruction_grid.py")
    secret = b10.attacked_records()
    tiny = b10.grid(secret, queries=[100, 400], noise=[0, 10], reps=1)
    shipped = pd.read_csv(RESULTS / "10_reconstruction.csv")
    assert list(shipped.columns) == list(tiny.columns)
    assert sorted(shipped["n_queries"].unique()) == b10.QUERIES and sorted(shipped["noise"].unique()) == b10.NOISE
    assert (shipped.groupby(["n_queries", "noise"]).size() == 10).all()
    assert shipped["rate"].between(0, 1).all()
    # the secret the notebook attacks, and seeded runs: the first run of a setting is the same again
    assert shipped["secret"].dropna().nunique() == 1
    assert np.array(shipped["secret"].dropna().iloc[0].split(), dtype=int).tolist() == secret.tolist()
    first = shipped[shipped.rep == 0].set_index(["n_queries", "noise"])
    for row in tiny.itertuples():
        assert first.loc[(row.n_queries, row.noise), "rate"] == pytest.approx(row.rate)
        assert first.loc[(row.n_queries, row.noise), "guess"] == row.guess
    # the lesson: exact answers give the column back, errors far past √n leave about a coin flip
    mean = shipped.groupby(["n_queries", "noise"])["rate"].mean()
    assert all(mean[(k, 0)] == 1.0 for k in (100, 200, 400, 800))
    assert all(mean[(k, 100)] < 0.6 for k in b10.QUERIES)
    assert mean[(400, 2)] > 0.95 > 0.75 > mean[(400, 10)]


# --------------------------------------------------------------------------- 07
def test_07_stored_fidelity_charts_are_what_the_script_draws_now():
    """Notebook 07 shows ``07_fidelity_charts.json`` instead of drawing the charts per visitor:
    they must be what ``benchmarks/showdown_charts.py`` draws from the stored results (a stale file
    after a benchmark rewrote 07_fidelity.csv or the peers files fails here)."""
    import json

    charts = load_benchmark("showdown_charts.py")
    stored = json.loads((RESULTS / charts.CHARTS).read_text(encoding="utf-8"))
    drawn = {name: chart.to_dict() for name, chart in charts.draw(RESULTS).items()}
    assert json.loads(json.dumps(drawn, sort_keys=True)) == stored


def test_07_rule_breaks_are_the_stored_runs_means_with_mst_beside():
    """Notebook 07's rule table: each cell is the mean over the stored runs of one file (rules not
    declared, declared) or MST's stored value; declared rules are kept in every row; MST, with the
    plain schema, has no declared values and comes last at each ε."""
    from dpexplore.evaluate.showdown_results import FIDELITY_FILES, RULE_BREAKS, rule_breaks

    breaks = rule_breaks(RESULTS)
    plain = pd.read_csv(RESULTS / "07_fidelity_customers.csv")
    declared = pd.read_csv(RESULTS / FIDELITY_FILES["rules"])
    for runs, kind in ((plain, "not declared"), (declared, "declared")):
        at_one = runs[(runs["method"] == "DiffMulti") & (runs["epsilon"] == 1)]
        for measure in ("tvd_2way", *RULE_BREAKS):
            assert breaks.loc[("DiffMulti", 1.0), (kind, measure)] == pytest.approx(at_one[measure].mean())
    assert (breaks["declared"].dropna().filter(like="rules_") == 0).all().all()
    peers = pd.read_csv(RESULTS / "peers_customers.csv")
    for eps, group in breaks.groupby(level="epsilon"):
        mst = group.index.get_level_values("method")[-1]
        assert mst.startswith("opendp MST") and group.loc[mst]["declared"].isna().all().all()
        stored = peers[(peers["epsilon"] == eps) & (peers["metric"] == "rules_addon_max")]["value"]
        assert group.loc[mst][("not declared", "rules_addon_max")].iloc[0] == pytest.approx(stored.iloc[0])
