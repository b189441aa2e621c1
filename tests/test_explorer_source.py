"""Notebook 02's ε explorer over a source: the same outputs as over records, at a cost set by cells."""
from __future__ import annotations

import numpy as np
import pytest

from dpexplore import sources
from dpexplore.datasets import load_adult, train_test_split
from dpexplore.evaluate.privpfc import held_out_cells, run_errors
from dpexplore.histogram import LevelCodes
from dpexplore.publish.privpfc import run_privpfc
from dpexplore.publish.privpfc_scoring import GapScorer, GridScorer
from dpexplore.widgets.privpfc import PrivPfCExplorer


@pytest.fixture(scope="module")
def adult():
    frame, schema = load_adult()
    frame = frame.sample(4000, random_state=1)
    X_tr, X_te, y_tr, y_te = train_test_split(frame, schema, test_size=0.25, random_state=0)
    return X_tr, X_te, y_tr, y_te, schema


def _frame(X, y, schema):
    return X.assign(**{schema.target: np.asarray(y)})


@pytest.mark.parametrize("test_kind", ["pair", "frame", "source"])
def test_explorer_over_a_source_gives_the_record_path_outputs(adult, test_kind):
    X_tr, X_te, y_tr, y_te, schema = adult
    test = {"pair": (X_te, y_te), "frame": _frame(X_te, y_te, schema),
            "source": sources.pandas(_frame(X_te, y_te, schema), schema)}[test_kind]
    options = dict(epsilon=0.5, theta=1000, seed=3, warm=False)
    records = PrivPfCExplorer(X_tr, y_tr, X_te, y_te, schema, **options)
    cells = PrivPfCExplorer.from_source(sources.pandas(_frame(X_tr, y_tr, schema), schema), test, **options)
    assert cells.schema.to_dict() == schema.to_dict()
    refined = 0
    for eps, seed in [(0.5, 3), (0.05, 0), (2.0, 1), (2.0, 7)]:
        for ex in (records, cells):
            ex.epsilon.value, ex.seed.value = eps, seed
        a, b = records.compute(), cells.compute()
        np.testing.assert_array_equal(a["run"].qualities, b["run"].qualities)
        np.testing.assert_array_equal(a["run"].probabilities, b["run"].probabilities)
        assert a["grid"] == b["grid"]
        np.testing.assert_array_equal(a["run"].noisy_counts, b["run"].noisy_counts)
        assert (a["histogram_error"], a["tree_error"]) == (b["histogram_error"], b["tree_error"])
        assert a["comparison"].equals(b["comparison"])                 # the true vs noisy counts panel
        assert a["candidates"].equals(b["candidates"])
        refined += sum(d > 0 for d in a["grid"].values())
    assert refined > 0                     # the check covered grids with more than one cell


def test_explorer_over_a_source_scores_its_cells_not_its_records(adult):
    X_tr, X_te, y_tr, y_te, schema = adult
    doubled = _frame(X_tr, y_tr, schema)
    doubled = doubled.iloc[np.tile(np.arange(len(doubled)), 3)]          # every record three times
    src = sources.pandas(doubled, schema)
    ex = PrivPfCExplorer.from_source(src, (X_te, y_te), epsilon=0.5, theta=300, warm=False)
    table = src.count_table()
    assert ex.scorer.n_rows == 3 * len(X_tr)                             # records: the sum of the counts
    assert len(ex.scorer.y) == len(table.counts) < len(X_tr)             # rows: the occupied cells
    codes, _, weights = ex.test_codes, ex.y_test, ex.test_weights
    assert codes.n_rows == len(weights) < len(X_te) and weights.sum() == len(X_te)


def test_held_out_cells_give_the_record_errors(adult):
    X_tr, X_te, y_tr, y_te, schema = adult
    scorer = GridScorer(LevelCodes(X_tr, schema), schema.encode_target(y_tr), schema.n_classes)
    codes, classes, weights = held_out_cells((X_te, y_te), schema)
    for seed in range(4):
        run = run_privpfc(scorer, epsilon=2.0, theta=300, random_state=seed)
        per_record = run_errors(run, scorer.attributes, schema, LevelCodes(X_te, schema), schema.encode_target(y_te))
        per_cell = run_errors(run, scorer.attributes, schema, codes, classes, weights=weights)
        assert per_cell == per_record
    assert len(weights) < len(X_te) and weights.max() > 1      # the weights carried real multiplicities


def test_gap_scorer_handles_leads_of_a_hundred_million_records(adult):
    X_tr, _, y_tr, _, schema = adult
    table = sources.pandas(_frame(X_tr, y_tr, schema), schema).count_table()
    weights = table.counts * 25_000                                      # 75M records and more
    codes, y = LevelCodes.from_table(table), table.class_codes
    gap = GapScorer(codes, y, schema.n_classes, weights=weights)
    grid = GridScorer(codes, y, schema.n_classes, weights=weights)
    pool = np.array([[0] * len(gap.attributes), [1] + [0] * (len(gap.attributes) - 1),
                     [0] * (len(gap.attributes) - 2) + [1, 1]])
    for eps in (0.01, 0.6, 3.0):
        np.testing.assert_allclose(gap.score(pool, eps), grid.score(pool, eps), rtol=1e-12)
    # one matrix column per distinct lead, not one per possible lead (up to the largest class count)
    assert gap._matrix.shape[1] == len(np.unique(gap._leads)) <= len(table.counts)


def test_from_source_checks_before_counting(adult):
    X_tr, X_te, y_tr, y_te, schema = adult
    src = sources.pandas(_frame(X_tr, y_tr, schema), schema)

    def no_scan(*args, **kwargs):
        raise AssertionError("the source was counted before the arguments were checked")
    src.count_table = no_scan
    with pytest.raises(ValueError, match="shares"):
        PrivPfCExplorer.from_source(src, (X_te, y_te), shares=(0.5, 0.5))
    with pytest.raises(TypeError, match="epsilonn"):
        PrivPfCExplorer.from_source(src, (X_te, y_te), epsilonn=1.0)
    other = sources.pandas(_frame(X_te, y_te, schema), schema.subset(schema.predictors[:3]))
    train = sources.pandas(_frame(X_tr, y_tr, schema), schema)
    with pytest.raises(ValueError, match="schema"):
        PrivPfCExplorer.from_source(train, other, warm=False)
