"""dpexplore.publish.privpfc_scoring: PrivPfC's grid quality, candidate pool and the two scorers."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from dpexplore.datasets import load_adult, load_adult_multiclass, train_test_split
from dpexplore.histogram import LevelCodes
from dpexplore.publish import privpfc, privpfc_scoring
from dpexplore.publish.privpfc_scoring import (GapScorer, GridScorer, cell_quality, describe_grid, enumerate_grids,
                                               grid_quality)


def _split(loader=load_adult, n=2500):
    frame, schema = loader()
    frame = frame.sample(n, random_state=1)
    X, _, y, _ = train_test_split(frame, schema, test_size=0.25, random_state=0)
    return X, y, schema


@pytest.mark.parametrize("loader", [load_adult, load_adult_multiclass])
def test_gap_scorer_gives_the_grid_scorer_qualities_at_any_epsilon(loader):
    X, y, schema = _split(loader)
    args = (LevelCodes(X, schema), schema.encode_target(y), schema.n_classes)
    ref, fast = GridScorer(*args), GapScorer(*args)
    small = enumerate_grids(ref.level_sizes, 300, 200)
    large = enumerate_grids(ref.level_sizes, 2000, 3000)
    fast.add(small)
    for eps in (0.003, 0.06, 0.6, 5.0):
        assert np.allclose(fast.score(small, eps), ref.score(small, eps), rtol=1e-12, atol=1e-9)
    n_before = len(fast._top)
    # grids counted later extend the qualities already cached for an ε_pert
    assert np.allclose(fast.score(large, 0.6), ref.score(large, 0.6), rtol=1e-12, atol=1e-9)
    assert len(fast._top) > n_before and len(fast._cache[0.6]) == len(fast._top)
    assert np.allclose(fast.score(large[::-1], 0.06), ref.score(large[::-1], 0.06), rtol=1e-12, atol=1e-9)


def test_gap_scorer_quality_is_eq_5_on_the_true_counts_and_names_its_grids():
    X, y, schema = _split(load_adult_multiclass, 1500)
    scorer = GapScorer(LevelCodes(X, schema), schema.encode_target(y), schema.n_classes)
    pool = enumerate_grids(scorer.level_sizes, 40, 500)
    rows = scorer.add(pool)
    for grid, row in zip(pool, rows):
        # Eq. 5 summed over the grid's cells (Def. 5), from the grid's true (cell, class) counts
        assert scorer.score(grid[None], 0.2)[0] == pytest.approx(grid_quality(scorer.counts(grid), 0.2), rel=1e-12)
        assert scorer.names[row] == describe_grid(grid, scorer.attributes)
    # adding the same grids again counts nothing and returns the same rows
    assert np.array_equal(scorer.add(pool[::-1]), rows[::-1]) and len(scorer.names) == len(pool)


def test_gap_scorer_warm_counts_every_pool_the_caps_reach():
    X, y, schema = _split(load_adult, 1500)
    scorer = GapScorer(LevelCodes(X, schema), schema.encode_target(y), schema.n_classes)
    scorer.warm(200, [50.5, 50.9, 400.0])                       # τ = 50.5 and 50.9 give one pool
    expected = {tuple(g) for tau in (50, 400) for g in enumerate_grids(scorer.level_sizes, 200, tau)}
    assert len(scorer.names) == len(expected)


def test_gap_scorer_refuses_grids_it_cannot_key():
    class Codes:      # 21 attributes of two levels: 8**21 > 2**62
        attributes = [f"a{i}" for i in range(21)]
        level_sizes = {a: (1, 2) for a in attributes}
        n_rows = 1
        schema = {a: type("A", (), {"taxonomy": None})() for a in attributes}

        def codes(self, a, d):
            return np.zeros(1, dtype=np.int64)

    with pytest.raises(ValueError, match="at most 8 taxonomy levels and 20 attributes"):
        GapScorer(Codes(), [0], 2)


def test_quality_functions_keep_their_old_home_and_the_modules_do_not_import_each_other():
    for name in ("GridScorer", "win_probability", "cell_quality", "grid_quality", "exact_cell_quality",
                 "quality_sensitivity", "enumerate_grids", "describe_grid", "CONSTANT_SENSITIVITY"):
        assert getattr(privpfc, name) is getattr(privpfc_scoring, name), name
    assert cell_quality([[10, 0]], 1.0)[0] == pytest.approx(10 - 10 * 0.5 * np.exp(-10) * 6)   # n¹ − G·a(G), Eq. 10
    code = "import sys, dpexplore.publish.privpfc_scoring; print('dpexplore.publish.privpfc' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_the_plot_frames_of_the_evaluation_module():
    from dpexplore.evaluate import privpfc as evaluation

    curve = evaluation.sensitivity_curve([0.01, 1.0])
    assert list(curve["constant"]) == [1.1, 1.1] and (curve["sensitivity"] <= 1.1).all()
    wins = evaluation.win_probability_curve([0, 5], [0.5, 1.0])
    assert wins.loc[wins.gap == 0, "probability"].tolist() == [0.5, 0.5]
