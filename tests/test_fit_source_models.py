"""fit(source) for PrivateNaiveBayes: the CountTable's occupied cells as weighted 0/1 records.

The public features are ``Binarizer(schema)`` (one column per category / taxonomy leaf), a
function of each record's leaf codes, so ``binarize_table`` gives them from the table. Checked:
the Binarizer follows the taxonomy's own leaf rule; the weighted path equals the record path
seed for seed; pandas / DuckDB (Parquet, SQL) give the same release (Spark in
tests/test_fit_source_spark.py); no row is read once the table exists; the work depends on the
occupied cells, not the rows; bad input is refused before any spend.
"""
import copy

import numpy as np
import pandas as pd
import pytest

from dpexplore import sources
from dpexplore.budget import BudgetAccountant
from dpexplore.counts import CountTable
from dpexplore.models import naive_bayes as nb
from dpexplore.models.naive_bayes import Binarizer, PrivateGaussianNB, PrivateNaiveBayes, binarize_table
from dpexplore.models.pipeline import SelectThenTrain
from dpexplore.select.thesis import PrivateKSubsetSelector
from _fixtures import TableSource, engine_sources, make_frame, schema  # noqa: F401 (pytest fixtures)
from _fixtures import fit_frame as frame  # noqa: F401 (a pytest fixture)


def nb_release(model):
    """Everything the fitted NB releases or derives (all post-processing of the noisy counts)."""
    return (list(model.classes_), list(model.feature_names_in_), model.noisy_on_counts_.copy(),
            model.noisy_off_counts_.copy(), model.theta_.copy(), model.class_prior_.copy(),
            model.clamp_threshold_, model.clamped_fraction_, model.sensitivity_)


def assert_same_nb(a, b):
    assert a[0] == b[0] and a[1] == b[1] and a[6:] == b[6:]
    for x, y in zip(a[2:6], b[2:6]):
        np.testing.assert_array_equal(x, y)


def record_fit(frame, schema, binarizer=None, **params):
    """The record path on the binarised records: what fit(source) must reproduce."""
    b = (binarizer or Binarizer(schema)).fit()
    X, y = frame[schema.predictors], frame[schema.target]
    return PrivateNaiveBayes(classes=list(schema.classes), **params).fit(b.transform(X), y), b


# ---------------------------------------------------------------------------- Binarizer ↔ leaf codes
def test_binarizer_numeric_columns_follow_taxonomy_leaves(frame, schema):
    """Values on a leaf edge (age = 10, x = 0.1 …; make_frame holds every edge) go to the leaf the
    taxonomy puts them in: (lo, hi], first leaf closed. The former [lo, hi) rule put them one
    column higher, so the output was not a function of the leaf codes."""
    b = Binarizer(schema).fit()
    X = frame[schema.predictors]
    B = b.transform(X)
    leaves = schema.leaf_codes(X)
    for name in schema.numeric:
        tax = schema[name].taxonomy
        cols = [f"{name}={label}" for label in tax.labels(tax.height - 1)]
        assert list(B[cols].columns) == cols and name in b.leaf_columns_
        np.testing.assert_array_equal(B[cols].to_numpy().argmax(axis=1), leaves[name])
    assert (X["age"] == 10).any() and B.loc[X["age"] == 10, "age=[0, 10]"].all()
    assert B.loc[X["x"] == 0.1, "x=[0, 0.1]"].all()
    # cut points / n_bins keep their [lo, hi) intervals
    cut = Binarizer(schema, columns=["age"], cut_points={"age": [10, 50]}).fit()
    assert list(cut.get_feature_names_out()) == ["age=[0, 10)", "age=[10, 50)", "age=[50, 100]"]
    assert cut.transform(X).loc[X["age"] == 10, "age=[10, 50)"].all()


@pytest.mark.parametrize("make", [
    lambda s: Binarizer(s),
    lambda s: Binarizer(s, columns=["color", "age"], depths={"age": 1}),
    lambda s: Binarizer(s, depths={"color": 1, "x": 2}).fit(),
])
def test_binarize_table_equals_transform_of_records(frame, schema, make):
    """binarize_table = the Binarizer applied to each cell; weighted sums = record sums."""
    table = CountTable.from_frame(frame[schema.predictors], frame[schema.target], schema)
    binarizer = make(schema)
    matrix, class_codes, weights = binarize_table(table, binarizer)
    fitted = binarizer if hasattr(binarizer, "columns_") else copy.deepcopy(binarizer).fit()
    cells = table.as_weighted_frame()[schema.predictors]
    assert matrix.dtype == np.int8 and matrix.shape == (table.n_occupied, len(fitted.get_feature_names_out()))
    np.testing.assert_array_equal(matrix, fitted.transform(cells).to_numpy())
    np.testing.assert_array_equal(class_codes, table.class_codes)
    np.testing.assert_array_equal(weights, table.counts)
    B = fitted.transform(frame[schema.predictors]).to_numpy()
    y = schema.encode_target(frame[schema.target])
    onehot = np.eye(schema.n_classes)[y]
    np.testing.assert_array_equal(nb.on_counts(matrix.astype(float), class_codes, weights, schema.n_classes),
                                  onehot.T @ B)


def test_binarize_table_refuses_what_a_table_cannot_give(frame, schema):
    table = CountTable.from_frame(frame[schema.predictors], frame[schema.target], schema)
    with pytest.raises(ValueError, match="cut_points/n_bins"):
        binarize_table(table, Binarizer(schema, cut_points={"age": [30]}))
    with pytest.raises(ValueError, match="cut_points/n_bins"):
        binarize_table(table, Binarizer(schema, n_bins=3))
    with pytest.raises(ValueError, match="does not hold"):
        binarize_table(table.project(["age", "x"]), Binarizer(schema))
    with pytest.raises(ValueError, match="declares 'age' differently"):
        other = schema.subset(["age"])
        other.attributes["age"] = type(schema["age"]).numeric("age", 0, 99, schema["age"].taxonomy, integer=True)
        binarize_table(table, Binarizer(other))
    with pytest.raises(ValueError, match="needs the public schema"):
        binarize_table(table, Binarizer())
    with pytest.raises(TypeError, match="CountTable"):
        binarize_table(frame, Binarizer(schema))


# ---------------------------------------------------------------------------- fit(source) = record path
def test_nb_source_equals_record_path(frame, schema):
    """Same spends, same noise draws in the same order: identical noisy counts, seed for seed."""
    X = frame[schema.predictors]
    src = sources.pandas(frame, schema)
    for seed in range(3):
        for params in (dict(epsilon=1.0), dict(epsilon=0.3, clamp_quantile=0.5, pseudo_count=2.0)):
            ref, b = record_fit(frame, schema, random_state=seed, **params)
            model = PrivateNaiveBayes(random_state=seed, **params).fit(src)
            assert_same_nb(nb_release(model), nb_release(ref))
            np.testing.assert_array_equal(model.predict(model.binarizer_.transform(X)), ref.predict(b.transform(X)))
            np.testing.assert_array_equal(model.predict_proba(b.transform(X)), ref.predict_proba(b.transform(X)))
            assert model.epsilon_spent_ == pytest.approx(params["epsilon"]) and len(model.ledger_) == 1
    assert list(model.classes_) == ["a", "b", "c"]             # every declared class; "c" never occurs
    assert model.n_features_in_ == len(b.get_feature_names_out())
    # a chosen binarizer (taxonomy levels, a subset of columns) and a public cut point binarize=t
    chosen = Binarizer(schema, columns=["color", "age", "flag"], depths={"age": 1, "color": 1})
    ref, _ = record_fit(frame, schema, binarizer=copy.deepcopy(chosen), random_state=5, binarize=0.5)
    model = PrivateNaiveBayes(random_state=5, binarize=0.5).fit(src, binarizer=chosen)
    assert_same_nb(nb_release(model), nb_release(ref))
    assert "columns_" not in chosen.__dict__                    # the caller's binarizer is not fitted in place
    # a record fit after a source fit leaves no stale binarizer_
    refit = PrivateNaiveBayes(random_state=0, classes=list(schema.classes)).fit(src)   # agrees with the schema
    assert not hasattr(refit.fit(Binarizer(schema).fit().transform(X), frame[schema.target]), "binarizer_")


def test_nb_engine_equivalence(frame, schema, tmp_path):
    ref, b = record_fit(frame, schema, epsilon=2.0, random_state=13)
    X = b.transform(frame[schema.predictors])
    for name, src in engine_sources(frame, schema, tmp_path).items():
        model = PrivateNaiveBayes(epsilon=2.0, random_state=13).fit(src)
        assert_same_nb(nb_release(model), nb_release(ref))
        np.testing.assert_array_equal(model.predict(X), ref.predict(X))


def test_nb_fit_from_table_never_reads_rows(frame, schema):
    table = CountTable.from_frame(frame[schema.predictors], frame[schema.target], schema)
    model = PrivateNaiveBayes(epsilon=1.0, random_state=2).fit(TableSource(table))
    assert_same_nb(nb_release(model), nb_release(record_fit(frame, schema, epsilon=1.0, random_state=2)[0]))


def test_nb_work_depends_on_cells_not_records(frame, schema, monkeypatch):
    """The same occupied cells with every count ×1000: the same array sizes go into the counts."""
    small = CountTable.from_frame(frame[schema.predictors], frame[schema.target], schema)
    big = CountTable(schema, small.leaf_codes, small.class_codes, small.counts * 1000)
    shapes = []
    original = nb.on_counts

    def spy(X, class_codes, weights, n_classes):
        shapes.append((X.shape, class_codes.shape, weights.shape))
        return original(X, class_codes, weights, n_classes)

    monkeypatch.setattr(nb, "on_counts", spy)
    fits = [PrivateNaiveBayes(epsilon=1.0, clamp_quantile=0.5, random_state=0).fit(TableSource(t))
            for t in (small, big)]
    assert shapes[0] == shapes[1] and shapes[0][0][0] == small.n_occupied
    assert fits[0].noisy_on_counts_.shape == fits[1].noisy_on_counts_.shape


def test_nb_source_bad_input_before_any_spend(frame, schema):
    acc = BudgetAccountant(10.0)
    src = sources.pandas(frame, schema)
    with pytest.raises(ValueError, match="y must be None"):
        PrivateNaiveBayes(accountant=acc).fit(src, frame[schema.target])
    with pytest.raises(ValueError, match="requires y to be passed"):
        PrivateNaiveBayes(accountant=acc).fit(frame[schema.predictors])
    with pytest.raises(ValueError, match="differ from the source's schema classes"):
        PrivateNaiveBayes(accountant=acc, classes=["b", "a", "c"]).fit(src)
    with pytest.raises(ValueError, match="cut_points/n_bins"):
        PrivateNaiveBayes(accountant=acc).fit(src, binarizer=Binarizer(schema, n_bins=4))
    with pytest.raises(TypeError, match="dpexplore Binarizer"):
        PrivateNaiveBayes(accountant=acc).fit(src, binarizer="onehot")
    with pytest.raises(TypeError, match="for fit\\(source\\) only"):
        PrivateNaiveBayes(accountant=acc).fit(np.zeros((4, 2)), [0, 1, 0, 1], binarizer=Binarizer(schema))
    with pytest.raises(ValueError, match="clamp_quantile"):
        PrivateNaiveBayes(accountant=acc, clamp_quantile=0.2).fit(src)
    bad = frame.assign(color=frame["color"].where(frame.index != 3, "green"))   # a leaf, not a category
    with pytest.raises(ValueError, match="outside its declared categories"):
        PrivateNaiveBayes(accountant=acc).fit(sources.pandas(bad, schema))
    broken = sources.pandas(frame, schema)
    broken.schema = copy.deepcopy(schema)
    broken.schema["x"].taxonomy = None
    with pytest.raises(ValueError, match="attribute 'x' has no taxonomy"):
        PrivateNaiveBayes(accountant=acc).fit(broken)
    with pytest.raises(TypeError, match="PrivateGaussianNB cannot fit a Source"):
        PrivateGaussianNB(accountant=acc).fit(src)
    assert acc.spent == 0


def test_nb_source_fit_clone_pickle(frame, schema):
    import pickle

    from sklearn.base import clone
    src = sources.pandas(frame, schema)
    model = PrivateNaiveBayes(epsilon=1.0, random_state=4).fit(src)
    again = pickle.loads(pickle.dumps(model))
    X = model.binarizer_.transform(frame[schema.predictors])
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    assert_same_nb(nb_release(clone(model).fit(src)), nb_release(model))
    with pytest.raises(ValueError, match="feature names"):
        model.predict(frame[schema.predictors])                 # raw records: binarise them first


# ---------------------------------------------------------------------------- selectors: fit(source)
from dpexplore.domain import Schema  # noqa: E402
from dpexplore.select import scores as sc  # noqa: E402
from dpexplore.select.stoddard import (ClusterSelection, ExponentialTopKSelector,  # noqa: E402
                                       PrivateThresholdTesting, ScorePerturbationSelector,
                                       SparseVectorSelector)
from dpexplore.select.thesis import IterativeSelector  # noqa: E402

SELECTOR_CASES = [
    (PrivateKSubsetSelector, dict(k=3, epsilon=1.0)),
    (PrivateKSubsetSelector, dict(k=4, epsilon=2.0, feature_score="mi", n_min=500)),
    (PrivateKSubsetSelector, dict(k=3, epsilon=1.0, mechanism="noisy_scores")),
    (ScorePerturbationSelector, dict(k=3, epsilon=1.0, feature_score="PI")),
    (ScorePerturbationSelector, dict(threshold=300.0, epsilon=0.5, feature_score="TC", max_ones=5)),
    (ExponentialTopKSelector, dict(k=3, epsilon=1.0, feature_score="DC")),
    (ExponentialTopKSelector, dict(k=2, epsilon=1.0, feature_score="IG", method="peeling", n_min=500)),
    (SparseVectorSelector, dict(threshold=150.0, cutoff=3, epsilon=0.5, feature_score="TC")),
    (SparseVectorSelector, dict(threshold=1380.0, cutoff=2, epsilon=0.5, feature_score="PI")),
]


@pytest.fixture(scope="module")
def binary_data(schema):
    """Two classes, the label tied to age and color (so the label scores carry signal)."""
    two = Schema(list(schema.attributes.values()), "label", ["a", "b"])
    rng = np.random.default_rng(11)
    frame = make_frame(n=1500, seed=5)
    p = np.where(frame["age"] > 60, 0.7, 0.1) + np.where(frame["color"] == "blue", 0.2, 0.0)
    return frame.assign(label=np.where(rng.random(len(frame)) < p, "b", "a").astype(object)), two


def selector_record_fit(cls, params, frame, schema, seed):
    """The record path on Binarizer(schema) columns with the schema's classes."""
    B = Binarizer(schema).fit().transform(frame[schema.predictors])
    return cls(classes=list(schema.classes), random_state=seed, **params).fit(B, frame[schema.target]), B


def selector_release(sel):
    return (sel.get_support().tolist(), sel.ledger_[["label", "epsilon"]].to_dict("list"),
            list(sel.feature_names_in_), list(sel.classes_),
            None if "noisy_scores_" not in sel.__dict__ else sel.noisy_scores_.tolist())


@pytest.mark.parametrize("cls,params", SELECTOR_CASES, ids=lambda v: getattr(v, "__name__", str(v)))
def test_selector_source_equals_record_path(cls, params, frame, schema, binary_data):
    """Same scores (weighted cells = records), same spends, same draws: identical selections."""
    seen = set()
    for fr, sch in ((frame, schema), binary_data):
        src = sources.pandas(fr, sch)
        for seed in range(4):
            ref, B = selector_record_fit(cls, params, fr, sch, seed)
            sel = cls(random_state=seed, **params).fit(src)
            assert selector_release(sel) == selector_release(ref)
            assert sel.epsilon_spent_ == pytest.approx(params["epsilon"])
            assert sel.n_features_in_ == B.shape[1] and list(sel.binarizer_.get_feature_names_out()) == list(B.columns)
            pd.testing.assert_frame_equal(sel.transform(sel.binarizer_.transform(fr[sch.predictors])),
                                          ref.transform(B))
            seen.add(tuple(sel.get_support(indices=True)))
    assert len(seen) > 1           # the seeds matter: the comparison is not trivially constant


def test_scores_weighted_equal_records(binary_data):
    """Every score on the weighted cells equals the score on the records; weights=None = ones."""
    fr, sch = binary_data
    table = CountTable.from_frame(fr[sch.predictors], fr[sch.target], sch)
    matrix, codes, weights = binarize_table(table)
    B = Binarizer(sch).fit().transform(fr[sch.predictors]).to_numpy()
    y = (fr[sch.target] == "b").to_numpy().astype(int)
    assert matrix.shape[0] < B.shape[0]
    for f in (sc.total_count, sc.difference_count, sc.purity_index, sc.information_gain):
        np.testing.assert_allclose(f(matrix, codes, weights=weights), f(B, y), rtol=1e-12)
        np.testing.assert_array_equal(f(B, y, weights=np.ones(len(y))), f(B, y))
    np.testing.assert_array_equal(np.stack(sc.binary_class_counts(matrix, codes, weights)),
                                  np.stack(sc.binary_class_counts(B, y)))
    with pytest.raises(ValueError, match="different numbers of rows"):
        sc.total_count(B, weights=np.ones(3))
    with pytest.raises(ValueError, match="weights must be 1-D"):
        sc.total_count(B, weights=np.ones((len(y), 1)))
    with pytest.raises(ValueError, match="non-negative"):
        sc.purity_index(B, y, weights=-np.ones(len(y)))


@pytest.mark.parametrize("cls,params", [SELECTOR_CASES[0], SELECTOR_CASES[3], SELECTOR_CASES[5], SELECTOR_CASES[7]],
                         ids=lambda v: getattr(v, "__name__", str(v)))
def test_selector_engine_equivalence(cls, params, binary_data, tmp_path):
    fr, sch = binary_data
    ref, _ = selector_record_fit(cls, params, fr, sch, 21)
    for name, src in engine_sources(fr, sch, tmp_path).items():
        assert selector_release(cls(random_state=21, **params).fit(src)) == selector_release(ref), name


def test_selector_fit_from_table_never_reads_rows(binary_data):
    fr, sch = binary_data
    table = CountTable.from_frame(fr[sch.predictors], fr[sch.target], sch)
    for cls, params in SELECTOR_CASES[:1] + SELECTOR_CASES[3:4]:
        sel = cls(random_state=3, **params).fit(TableSource(table))
        assert selector_release(sel) == selector_release(selector_record_fit(cls, params, fr, sch, 3)[0])


def test_selector_source_bad_input_before_any_spend(frame, schema):
    acc = BudgetAccountant(10.0)
    src = sources.pandas(frame, schema)
    with pytest.raises(ValueError, match="y must be None"):
        PrivateKSubsetSelector(k=2, accountant=acc).fit(src, frame[schema.target])
    with pytest.raises(ValueError, match="differ from the source's schema classes"):
        ScorePerturbationSelector(k=2, classes=["b", "a", "c"], accountant=acc).fit(src)
    with pytest.raises(ValueError, match="exceeds the number of features"):
        PrivateKSubsetSelector(k=99, accountant=acc).fit(src)
    with pytest.raises(ValueError, match="k must be at most"):
        ExponentialTopKSelector(k=99, accountant=acc).fit(src)
    with pytest.raises(ValueError, match="max_ones=2 is below the 5 ones"):
        ScorePerturbationSelector(k=2, max_ones=2, accountant=acc).fit(src)
    with pytest.raises(ValueError, match="needs n_min"):
        PrivateKSubsetSelector(k=2, feature_score="mi", accountant=acc).fit(src)
    with pytest.raises(ValueError, match="binarize must be None"):
        SparseVectorSelector(binarize="x", accountant=acc).fit(src)
    broken = sources.pandas(frame, schema)
    broken.schema = copy.deepcopy(schema)
    broken.schema["x"].taxonomy = None
    with pytest.raises(ValueError, match="attribute 'x' has no taxonomy"):
        PrivateKSubsetSelector(k=2, accountant=acc).fit(broken)
    for demo in (IterativeSelector(k=2), PrivateThresholdTesting(), ClusterSelection()):
        with pytest.raises(TypeError, match="cannot fit a Source: .*NOT differentially private"):
            demo.fit(src)
    with pytest.raises(TypeError, match="IterativeSelector cannot fit a Source"):
        SelectThenTrain(IterativeSelector(k=2), PrivateNaiveBayes(), epsilon=1.0, accountant=acc).fit(src)
    with pytest.raises(TypeError, match="trains a PrivateNaiveBayes model"):
        SelectThenTrain(PrivateKSubsetSelector(k=2), PrivateGaussianNB(), epsilon=1.0, accountant=acc).fit(src)
    with pytest.raises(ValueError, match="differ from the source's schema classes"):
        SelectThenTrain(PrivateKSubsetSelector(k=2), PrivateNaiveBayes(), epsilon=1.0, classes=["a", "b"],
                        accountant=acc).fit(src)
    with pytest.raises(ValueError, match="clamp_quantile"):
        SelectThenTrain(PrivateKSubsetSelector(k=2), PrivateNaiveBayes(clamp_quantile=0.1), epsilon=1.0,
                        accountant=acc).fit(src)
    assert acc.spent == 0


@pytest.mark.parametrize("selector", [PrivateKSubsetSelector(k=4), ExponentialTopKSelector(k=3, feature_score="PI"),
                                      SparseVectorSelector(threshold=200.0, cutoff=4), None],
                         ids=["ksubset", "em", "svt", "none"])
def test_select_then_train_source_equals_record_path(selector, binary_data, tmp_path):
    fr, sch = binary_data
    B = Binarizer(sch).fit().transform(fr[sch.predictors])
    for seed in range(3):
        ref = SelectThenTrain(selector, PrivateNaiveBayes(), epsilon=2.0, classes=list(sch.classes),
                              random_state=seed).fit(B, fr[sch.target])
        for name, src in engine_sources(fr, sch, tmp_path).items():
            pipe = SelectThenTrain(selector, PrivateNaiveBayes(), epsilon=2.0, random_state=seed).fit(src)
            assert pipe.ledger_[["label", "epsilon"]].equals(ref.ledger_[["label", "epsilon"]]), name
            np.testing.assert_array_equal(pipe.get_support(), ref.get_support())
            assert_same_nb(nb_release(pipe.model_), nb_release(ref.model_))
            np.testing.assert_array_equal(pipe.predict_proba(pipe.binarizer_.transform(fr[sch.predictors])),
                                          ref.predict_proba(B))
            assert list(pipe.classes_) == ["a", "b"] and pipe.epsilon_spent_ == pytest.approx(2.0)
