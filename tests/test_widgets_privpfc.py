"""PrivPfC explorer (notebook 02): fast rescoring, small charts, layout, the stored sweep."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _benchmarks import load_benchmark

from dpexplore.datasets import load_adult, load_adult_multiclass, train_test_split
from dpexplore.publish.privpfc import PrivPfC, grid_threshold, run_privpfc
from dpexplore.publish.privpfc_scoring import GapScorer
from dpexplore.widgets.privpfc import PRESETS, PrivPfCExplorer

ROOT = Path(__file__).resolve().parents[1]


def _split(loader=load_adult, n=4000):
    frame, schema = loader()
    frame = frame.sample(n, random_state=1)
    return (*train_test_split(frame, schema, test_size=0.25, random_state=0), schema)


@pytest.fixture(scope="module")
def adult():
    return _split()


def test_explorer_release_is_the_estimator_release(adult):
    X_tr, X_te, y_tr, y_te, schema = adult
    ex = PrivPfCExplorer(X_tr, y_tr, X_te, y_te, schema, epsilon=0.5, theta=300, seed=4)
    model = PrivPfC(epsilon=0.5, theta=300, random_state=4, schema=schema).fit(X_tr, y_tr)
    assert [ex.last_run.grid[i] for i in range(len(schema.predictors))] == [model.grid_[a] for a in schema.predictors]
    assert np.allclose(ex.last_run.noisy_counts, model.counts_)


def test_warm_explorer_counts_no_grid_when_epsilon_steps(adult, monkeypatch):
    X_tr, X_te, y_tr, y_te, schema = adult
    ex = PrivPfCExplorer(X_tr, y_tr, X_te, y_te, schema, theta=1000)
    stored = len(ex.scorer._top)
    assert stored >= len(ex.last_run.pool)
    calls = []
    monkeypatch.setattr(ex.scorer, "_score_into", lambda *a: calls.append(a) or GapScorer._score_into(ex.scorer, *a))
    for value in (0.3, 0.1, 2.0):
        ex.epsilon.value = value
    # a slider step rescores the stored counts; only the odd grid that a noisy N̂ lets in is counted
    assert sum(len(c[0]) for c in calls) <= 0.05 * stored


def test_explorer_chart_is_small_and_shows_the_drawn_grid(adult):
    X_tr, X_te, y_tr, y_te, schema = adult
    ex = PrivPfCExplorer(X_tr, y_tr, X_te, y_te, schema, theta=10_000, warm=False)
    res = ex.compute()
    assert len(res["candidates"]) > 1000
    spec = ex.charts(res).to_dict()
    assert len(json.dumps(spec)) < 45_000        # the old explorer sent 1,500 points (about 350 kB on Adult)
    points = max(spec["datasets"].values(), key=len)
    assert len(points) <= 151 and any(p["chosen"] for p in points)
    assert len(ex.out.outputs) == 1 and "application/vnd.vegalite.v5+json" in ex.out.outputs[0]["data"]


def test_explorer_layout_and_presets(adult):
    X_tr, X_te, y_tr, y_te, schema = adult
    ex = PrivPfCExplorer(X_tr, y_tr, X_te, y_te, schema, theta=300, warm=False,
                         baselines={"majority (non-private)": 0.24})
    assert ex.preset.value == "3/37/60 (paper)"          # the paper's split is named, not "(custom)"
    for w in (ex.epsilon, ex.preset, ex.sel_share, ex.pert_share, ex.theta):
        assert w.layout.flex == "0 0 auto" and w.style.description_width == "130px"   # never squeezed
    assert ex.epsilon.readout_format == ".3g" and ex.epsilon.continuous_update is False
    assert "row wrap" in ex.widget.children[0].layout.flex_flow
    ex.preset.value = "3/10/87 (Fig. 9)"
    assert (ex.sel_share.value, ex.pert_share.value) == PRESETS["3/10/87 (Fig. 9)"]
    ex.sel_share.value = 0.2
    assert ex.preset.value == "(custom)"
    ex.sel_share.value, ex.pert_share.value = 0.37, 0.60
    assert ex.preset.value == "3/37/60 (paper)"
    for bad in ((0.5, 0.5), (0.5, 0.5, 0.0)):      # run_privpfc's rule: three positive weights
        with pytest.raises(ValueError, match="shares must"):
            PrivPfCExplorer(X_tr, y_tr, X_te, y_te, schema, shares=bad, warm=False)
    weights = PrivPfCExplorer(X_tr, y_tr, X_te, y_te, schema, shares=(3, 10, 87), warm=False)
    assert weights.preset.value == "3/10/87 (Fig. 9)"    # normalised, as run_privpfc does


def test_first_view_beats_the_majority_and_a_failure_is_flagged(adult):
    X_tr, X_te, y_tr, y_te, schema = adult
    majority = float(np.mean(y_te != y_tr.value_counts().idxmax()))
    ex = PrivPfCExplorer(X_tr, y_tr, X_te, y_te, schema, theta=1000, warm=False,
                         baselines={"majority (non-private)": majority})
    assert ex.compute()["histogram_error"] < majority - 0.03
    assert "no better than always predicting" not in ex.status.value
    ex.baselines = {"majority (non-private)": 0.0}        # any release is then "no better"
    ex.update()
    assert "no better than always predicting" in ex.status.value


def test_stored_sweep_of_notebook_02_is_plausible_and_reproducible():
    bench = load_benchmark("02_privpfc_sweep.py")
    stored = pd.read_csv(ROOT / "notebooks" / "results" / "02_privpfc_errors.csv")
    assert list(stored.columns) == bench.COLUMNS
    assert set(stored["dataset"]) == {"Adult", "Adult-Multiclass"}
    assert sorted(stored["epsilon"].unique()) == list(bench.EPSILONS)
    hist = stored[stored["method"] == "PrivPfC histogram classifier"]
    assert hist.groupby(["dataset", "epsilon"])["seed"].nunique().min() >= 10
    medians = hist.groupby(["dataset", "epsilon"])["error"].median()
    assert medians["Adult"].between(0.14, 0.22).all() and medians["Adult-Multiclass"].between(0.10, 0.16).all()
    assert medians["Adult"][1.0] <= medians["Adult"][0.05]
    # the script's own sweep, small: the same rows of the same seeds
    small = bench.sweep(1, epsilons=(1.0,), theta=300)
    assert list(small.columns) == bench.COLUMNS and len(small) == 2 * 3
    frame, schema = load_adult()
    X_tr, X_te, y_tr, y_te = train_test_split(frame, schema, test_size=0.2, random_state=0)
    model = PrivPfC(epsilon=1.0, theta=300, random_state=0, schema=schema).fit(X_tr, y_tr)
    row = small.query("dataset == 'Adult' and method == 'PrivPfC histogram classifier'")
    assert row["error"].iloc[0] == pytest.approx(1 - model.score(X_te, y_te), abs=1e-12)


def test_later_redraws_swap_the_data_of_the_first_chart(adult):
    X_tr, X_te, y_tr, y_te, schema = adult
    ex = PrivPfCExplorer(X_tr, y_tr, X_te, y_te, schema, theta=1000, warm=False)
    first = ex._swap.template[0]
    ex.epsilon.value = 0.05
    res = ex.compute()
    spec = ex.charts(res).to_dict()
    assert ex._swap.template[0] is first                       # no new altair objects per redraw
    data = {frozenset(v[0]): v for v in spec["datasets"].values() if v}
    chosen = [p for p in data[frozenset(["grid", "size", "n_refined", "quality", "probability", "chosen"])]
              if p["chosen"]]
    assert [p["grid"] for p in chosen] == res["candidates"].loc[res["candidates"]["chosen"], "grid"].tolist()
    errors = data[frozenset(["classifier", "error", "kind"])]
    assert errors[0]["error"] == pytest.approx(res["histogram_error"], abs=1e-5)
    assert data[frozenset(["tau"])][0]["tau"] == pytest.approx(res["run"].tau)


def test_fast_redraw_sends_the_spec_altair_would_build(adult):
    X_tr, X_te, y_tr, y_te, schema = adult
    ex = PrivPfCExplorer(X_tr, y_tr, X_te, y_te, schema, theta=1000, warm=False)
    assert ex._swap.skeleton is not None
    ex.epsilon.value = 0.05
    sent = ex.out.outputs[0]["data"]
    mime = next(k for k in sent if "vegalite" in k)
    rebuilt = ex.charts(ex.compute()).to_dict()
    by_columns = {frozenset(v[0]): v for v in rebuilt["datasets"].values()}
    got = {frozenset(v[0]): v for v in sent[mime]["datasets"].values()}
    assert got.keys() == by_columns.keys()
    for cols, rows in by_columns.items():
        pd.testing.assert_frame_equal(pd.DataFrame(got[cols]), pd.DataFrame(rows), check_dtype=False,
                                      check_exact=False, rtol=1e-12)

    def structure(spec):   # the spec without its data, dataset names replaced by their columns
        text = json.dumps({k: v for k, v in spec.items() if k not in ("datasets", "$schema")})
        for name, rows in spec["datasets"].items():
            text = text.replace(name, "|".join(sorted(rows[0])))
        return text
    assert structure(sent[mime]) == structure(rebuilt)
