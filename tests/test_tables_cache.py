"""The stored sweep of notebook 08 (``notebooks/results/08_messy_sweep.csv``, from
``benchmarks/08_your_data_sweep.py``): a small recomputation has the cache's shape, and the cache
is plausible (every method and ε, errors between the non-private reference and chance)."""
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _benchmarks import load_benchmark

from dpexplore.domain import PrivacyLeakWarning

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "notebooks" / "results" / "08_messy_sweep.csv"


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("08_your_data_sweep.py", "bench08")


def test_small_recomputation_matches_the_cache_layout(bench):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        small = bench.sweep(rows=600, reps=1, epsilons=(1.0,), methods=["DiffGen", "PrivPfC"])
    cache = pd.read_csv(CACHE)
    assert list(small.columns) == list(cache.columns) == bench.COLUMNS
    assert len(small) == 2 and small["error"].between(0, 1).all()
    pfc = small[small["method"] == "PrivPfC"].iloc[0]
    assert pfc["cells"] >= 2 and pfc["records_per_cell"] > 0
    assert np.isnan(small[small["method"] == "DiffGen"]["cells"]).all()


def test_the_cache_is_complete_and_plausible(bench):
    cache = pd.read_csv(CACHE)
    from dpexplore import tables
    # every publishing method, under the display name the notebook shows
    assert set(cache["method"]) == {spec.display for spec in tables.METHODS.values() if spec.kind == "publisher"}
    assert set(cache["epsilon"]) == set(bench.EPSILONS)
    assert cache.groupby(["method", "epsilon"]).size().min() >= 3
    mean = cache.groupby(["method", "epsilon"])["error"].mean()
    assert (mean > cache["nonprivate_lr"].mean() - 0.03).all() and (mean < 0.5).all()
    assert cache["majority"].between(0.2, 0.4).all()
    pfc = cache[cache["method"] == "PrivPfC"]
    assert pfc["records_per_cell"].gt(0).all() and pfc["cells"].ge(2).all()
