"""The stored showdown notebook 07 opens from, and the peers reference lines.

A tiny sweep recomputed with the same function must have the stored cache's columns, methods,
metrics and ε grid; the stored values must be plausible. The peers CSV (benchmarks/peers.py) is
optional: absent, the charts skip it; present, it is drawn with its δ.
"""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpexplore.evaluate.showdown import (AVAILABILITY_COLUMNS, PEER_COLUMNS, RESULT_COLUMNS, SHOWDOWN_FILES,
                                         SHOWDOWN_SETTINGS, load_peers, load_showdown, save_showdown,
                                         showdown_sweep, showdown_tables)
from dpexplore.evaluate.sweeps import summarise
from dpexplore.plots.showdown import error_chart, ranking_chart
from dpexplore.registry import all_methods
from dpexplore.widgets.showdown import ShowdownExplorer

RESULTS = Path(__file__).resolve().parents[1] / "notebooks" / "results"


@pytest.fixture(scope="module")
def stored():
    if not (RESULTS / SHOWDOWN_FILES["results"]).exists():
        pytest.fail("notebooks/results/07_showdown_results.csv is missing: run benchmarks/showdown_sweep.py")
    return load_showdown(RESULTS)


@pytest.fixture(scope="module")
def tiny(stored):
    """The same function on 400 rows of each table, one run, the stored ε grid."""
    _, _, meta = stored
    data = showdown_tables(rows=400, seed=1)
    return showdown_sweep(data, meta["epsilons"], 1, random_state=1, check_rows=300, progress=False)


def test_stored_cache_matches_a_recomputed_sweep(stored, tiny):
    results, availability, meta = stored
    new, new_availability = tiny
    assert list(results.columns) == list(new.columns) == RESULT_COLUMNS
    assert meta["epsilons"] == SHOWDOWN_SETTINGS["epsilons"]          # the grid the peers use too
    finite = lambda r: r[np.isfinite(r["epsilon"])]                   # noqa: E731
    assert sorted(finite(results)["epsilon"].unique()) == sorted(finite(new)["epsilon"].unique())
    assert set(results["metric"]) == set(new["metric"]) == {"error", "accuracy"}
    for d in ("Adult", "Adult-Multiclass"):
        stored_methods = set(results.loc[results.dataset == d, "method"])
        assert stored_methods == set(new.loc[new.dataset == d, "method"])
        included = set(availability.loc[(availability.dataset == d) & (availability.status == "included"), "method"])
        assert stored_methods == included | {"majority", "non-private"}
    assert list(availability.columns) == list(new_availability.columns) == AVAILABILITY_COLUMNS
    # the registry's showdown methods, in its order, all included: stored and recomputed alike
    shown = [spec.display for spec in all_methods(tag="showdown")]
    for table in (availability, new_availability):
        for d in ("Adult", "Adult-Multiclass"):
            rows = table[table.dataset == d]
            assert list(rows["method"]) == shown and (rows["status"] == "included").all()
    # every (dataset, method, ε, metric) has the stored number of runs
    counts = finite(results).groupby(["dataset", "method", "epsilon", "metric"]).size()
    assert (counts == meta["repetitions"]).all()
    assert {"commit", "created", "seed", "rows"} <= set(meta["settings"])


def test_stored_values_are_plausible(stored):
    results, _, _ = stored
    assert results["value"].between(0, 1).all() and (results["seconds"] >= 0).all()
    wide = results.pivot_table(index=["dataset", "method", "epsilon", "run"], columns="metric", values="value")
    np.testing.assert_allclose(wide["error"] + wide["accuracy"], 1.0, atol=1e-5)
    acc = summarise(results[results.dataset == "Adult"]).query("metric == 'accuracy'").set_index(["method", "epsilon"])
    majority = acc.loc[("majority", np.inf), "median"]
    assert majority == pytest.approx(0.752, abs=0.01)                 # Adult: 75.2% earn <=50K
    assert acc.loc[("non-private", np.inf), "median"] > majority + 0.05
    best_at_1 = acc.xs(1.0, level="epsilon")["median"].max()
    assert majority < best_at_1 < acc.loc[("non-private", np.inf), "median"] + 0.01


def test_save_and_load_round_trip_and_bad_caches(tmp_path, tiny):
    results, availability = tiny
    meta = save_showdown(results, availability, tmp_path, {"seed": 1, "commit": "abc"})
    back, back_availability, back_meta = load_showdown(tmp_path)
    pd.testing.assert_frame_equal(back[RESULT_COLUMNS].reset_index(drop=True),
                                  results[RESULT_COLUMNS].reset_index(drop=True), rtol=1e-5, check_dtype=False)
    assert back_meta == meta and back_meta["settings"]["commit"] == "abc"
    assert list(back_availability["reason"]) == list(availability["reason"])
    assert np.isinf(back.loc[back.method == "majority", "epsilon"]).all()
    # a sidecar that disagrees with the table, or a missing file: a clear error
    (tmp_path / SHOWDOWN_FILES["meta"]).write_text(
        (tmp_path / SHOWDOWN_FILES["meta"]).read_text().replace('"epsilons": [', '"epsilons": [0.5, ', 1))
    with pytest.raises(ValueError, match="grid"):
        load_showdown(tmp_path)
    (tmp_path / SHOWDOWN_FILES["results"]).unlink()
    with pytest.raises(FileNotFoundError, match="showdown_sweep.py"):
        load_showdown(tmp_path)
    with pytest.raises(TypeError, match="mapping"):
        showdown_sweep({}, [1.0], 1)


# ----------------------------------------------------------------------------- peers
PEERS = """library,library_version,method,epsilon,delta,metric,value,n_runs,notes
diffprivlib,0.6.6,GaussianNB,0.1,0,accuracy,0.70,3,bounds declared
diffprivlib,0.6.6,GaussianNB,1.0,0,accuracy,0.78,3,bounds declared
opendp,0.16.0,MST + logistic regression,0.1,1e-06,accuracy,0.77,3,
opendp,0.16.0,MST + logistic regression,1.0,1e-06,accuracy,0.81,3,
opendp,0.16.0,MST + logistic regression,0.3,1e-06,accuracy,,0,could not run here
"""


def _summary():
    rows = []
    for d in ("Adult", "Adult-Multiclass"):
        for m, accs in (("A", (0.72, 0.80)), ("B", (0.75, 0.79))):
            for e, v in zip((0.1, 1.0), accs):
                rows.append(dict(dataset=d, method=m, epsilon=e, metric="accuracy", median=v, q25=v - .01,
                                 q75=v + .01, mean=v, n=3, seconds=1.0))
        for m, v in (("majority", 0.75), ("non-private", 0.85)):
            rows.append(dict(dataset=d, method=m, epsilon=np.inf, metric="accuracy", median=v, q25=v, q75=v,
                             mean=v, n=3, seconds=0.1))
    return pd.DataFrame(rows)


def test_load_peers(tmp_path):
    assert load_peers(tmp_path / "peers.csv") is None                  # not there yet: skipped
    (tmp_path / "peers.csv").write_text(PEERS)
    peers = load_peers(tmp_path / "peers.csv")
    assert list(peers.columns)[:len(PEER_COLUMNS)] == PEER_COLUMNS
    assert len(peers) == 4                                             # the row without a value is dropped
    assert set(peers["label"]) == {"diffprivlib GaussianNB", "opendp MST + logistic regression (δ = 1e-06)"}
    (tmp_path / "bad.csv").write_text("library,method,epsilon\nx,y,1\n")
    with pytest.raises(ValueError, match="lacks the column"):
        load_peers(tmp_path / "bad.csv")


def test_peers_drawn_on_adult_only(tmp_path):
    (tmp_path / "peers.csv").write_text(PEERS)
    peers = load_peers(tmp_path / "peers.csv")
    s = _summary()
    spec = error_chart(s, metric="accuracy", peers=peers).to_dict()
    adult, multi = spec["hconcat"]
    assert len(adult["layer"]) == 6 and len(multi["layer"]) == 4      # peer line + points on Adult only
    assert "δ = 1e-06" in str(spec) and "other libraries" in str(spec)
    # as errors, the peers are 1 - accuracy
    err = s.assign(metric="error", median=1 - s["median"], q25=1 - s["q75"], q75=1 - s["q25"])
    err_spec = error_chart(err, peers=peers).to_dict()
    values = [r["value"] for d in err_spec["datasets"].values() for r in d if "label" in r]
    assert sorted(values) == pytest.approx(sorted(1 - peers["value"]))
    # the ranking at ε = 1 lists the peers (best first) on Adult, not on Adult-Multiclass
    ranking = ranking_chart(s, 1.0, metric="accuracy", peers=peers).to_dict()
    orders = [p["layer"][0]["encoding"]["y"]["sort"] for p in ranking["hconcat"]]
    assert orders[0] == ["peer: opendp MST + logistic regression (δ = 1e-06)", "A", "B", "peer: diffprivlib GaussianNB"]
    assert orders[1] == ["A", "B"]
    # without peers nothing changes
    assert len(error_chart(s, metric="accuracy").to_dict()["hconcat"][0]["layer"]) == 4


def test_explorer_with_peers_precomputes_every_step(tmp_path):
    (tmp_path / "peers.csv").write_text(PEERS)
    ex = ShowdownExplorer(_summary(), metric="accuracy", peers=load_peers(tmp_path / "peers.csv"), epsilon=1.0)
    assert set(ex._bundles) == {0.1, 1.0}
    shown = ex.output.outputs
    ex.epsilon.value = 0.1
    assert ex.output.outputs != shown and ex.epsilon_ == 0.1
    assert "higher is better" in ex.info.value
