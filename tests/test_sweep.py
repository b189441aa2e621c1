"""sweep(): tidy shape, reproducibility, parallel == serial, baselines, summaries, bad input."""
import numpy as np
import pandas as pd
import pytest

from dpexplore.datasets import make_synthetic
from dpexplore.evaluate.sweeps import COLUMNS, baselines, majority_factory, summarise, sweep
from dpexplore.models.histogram import HistogramClassifier
from dpexplore.publish.privpfc import PrivPfC


@pytest.fixture(scope="module")
def data():
    return make_synthetic(n_samples=600, n_numeric=2, n_categorical=2, random_state=3)


class NoisyMajority:
    """A toy ε-dependent classifier: Laplace-noised class counts, predicts the noisy argmax
    for every row; its randomness only comes from random_state (so results are checkable)."""

    def __init__(self, epsilon, random_state=None):
        self.epsilon = epsilon
        self.random_state = random_state

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        self.classes_, counts = np.unique(np.asarray(y), return_counts=True)
        noisy = counts + rng.laplace(0, 1 / self.epsilon, size=counts.size)
        self.pred_ = self.classes_[np.argmax(noisy)]
        self.noise_ = noisy - counts
        return self

    def predict(self, X):
        return np.full(len(X), self.pred_, dtype=object)


def _methods():
    return {"toy": NoisyMajority,
            "privpfc": lambda eps, rs: PrivPfC(eps, theta=50, random_state=rs)}


def test_tidy_shape_and_values(data):
    res = sweep(_methods(), data, [0.1, 1.0], repetitions=3, metrics=["error", "accuracy"],
                random_state=0, progress=False)
    assert list(res.columns) == COLUMNS
    assert len(res) == 2 * 2 * 3 * 2
    assert set(res["method"]) == {"toy", "privpfc"}
    assert set(res["epsilon"]) == {0.1, 1.0}
    assert sorted(res["run"].unique()) == [0, 1, 2]
    wide = res.pivot_table(index=["method", "epsilon", "run"], columns="metric", values="value")
    np.testing.assert_allclose(wide["error"] + wide["accuracy"], 1.0)
    assert res["value"].between(0, 1).all()
    assert (res["seconds"] >= 0).all()


def test_reproducible_and_seed_sensitive(data):
    a = sweep(_methods(), data, [0.05, 1.0], repetitions=3, random_state=42, progress=False)
    b = sweep(_methods(), data, [0.05, 1.0], repetitions=3, random_state=42, progress=False)
    c = sweep(_methods(), data, [0.05, 1.0], repetitions=3, random_state=43, progress=False)
    pd.testing.assert_frame_equal(a.drop(columns="seconds"), b.drop(columns="seconds"))
    assert not np.array_equal(a["value"].to_numpy(), c["value"].to_numpy())


def test_seed_independent_of_other_methods(data):
    """A method's results do not change when another method is added (seed per name, ε, run)."""
    alone = sweep({"toy": NoisyMajority}, data, [0.01], repetitions=4, random_state=7, progress=False)
    both = sweep(_methods(), data, [0.01], repetitions=4, random_state=7, progress=False)
    np.testing.assert_array_equal(alone["value"].to_numpy(),
                                  both[both["method"] == "toy"]["value"].to_numpy())


def test_parallel_equals_serial(data):
    serial = sweep(_methods(), data, [0.1, 1.0], repetitions=3, random_state=5, progress=False)
    parallel = sweep(_methods(), data, [0.1, 1.0], repetitions=3, random_state=5, n_jobs=2, progress=False)
    pd.testing.assert_frame_equal(serial.drop(columns="seconds"), parallel.drop(columns="seconds"))


def test_estimator_with_epsilon_param(data):
    res = sweep({"privpfc": PrivPfC(1.0, theta=50)}, data, [0.5, 2.0], repetitions=2, random_state=1,
                progress=False)
    again = sweep({"privpfc": lambda e, rs: PrivPfC(e, theta=50, random_state=rs)}, data, [0.5, 2.0],
                  repetitions=2, random_state=1, progress=False)
    np.testing.assert_array_equal(res["value"].to_numpy(), again["value"].to_numpy())


def test_cv_uses_every_row_once(data):
    frame, schema = data
    seen = []

    class Spy(NoisyMajority):
        def fit(self, X, y):
            return super().fit(X, y)

        def predict(self, X):
            seen.append(X.index.to_numpy())
            return super().predict(X)

    sweep({"spy": Spy}, data, [1.0], repetitions=1, cv=3, random_state=0, progress=False)
    assert len(seen) == 3
    np.testing.assert_array_equal(np.sort(np.concatenate(seen)), np.sort(frame.index.to_numpy()))


def test_error_falls_with_epsilon_for_privpfc(data):
    res = sweep({"privpfc": lambda e, rs: PrivPfC(e, theta=200, random_state=rs)}, data, [0.01, 10.0],
                repetitions=4, random_state=0, progress=False)
    med = res.groupby("epsilon")["value"].median()
    base = baselines(data, repetitions=4, random_state=0)
    majority = base[base["method"] == "majority"]["value"].median()
    assert med[10.0] < majority - 0.1  # the signal (num_0, cat_0) is found at a large budget
    assert med[10.0] < med[0.01]


def test_baselines_and_summarise(data):
    base = baselines(data, repetitions=3, metrics=["error", "auc"], random_state=0)
    assert list(base.columns) == COLUMNS
    assert set(base["method"]) == {"majority", "non-private"}
    assert np.isinf(base["epsilon"]).all()
    maj = base[(base["method"] == "majority") & (base["metric"] == "error")]["value"]
    assert maj.between(0.45, 0.55).all()  # balanced classes
    auc = base[(base["method"] == "majority") & (base["metric"] == "auc")]["value"]
    np.testing.assert_allclose(auc, 0.5)
    nonpriv = base[(base["method"] == "non-private") & (base["metric"] == "error")]["value"]
    assert nonpriv.max() < maj.min()
    s = summarise(base)
    assert set(s.columns) >= {"method", "epsilon", "metric", "median", "q25", "q75", "n", "seconds"}
    assert (s["q25"] <= s["median"]).all() and (s["median"] <= s["q75"]).all()
    assert (s["n"] == 3).all()
    row = s[(s["method"] == "majority") & (s["metric"] == "error")].iloc[0]
    assert row["median"] == pytest.approx(maj.median())


def test_same_splits_as_baselines(data):
    """Run r of the sweep and of the baselines use the same test rows (paired comparison)."""
    res = sweep({"majority": majority_factory}, data, [1.0],
                repetitions=3, random_state=9, progress=False)
    base = baselines(data, repetitions=3, random_state=9)
    np.testing.assert_array_equal(res["value"].to_numpy(),
                                  base[base["method"] == "majority"]["value"].to_numpy())


def test_does_not_mutate_inputs(data):
    frame, schema = data
    before = frame.copy()
    sweep({"toy": NoisyMajority}, data, [1.0], repetitions=2, random_state=0, progress=False)
    pd.testing.assert_frame_equal(frame, before)


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(epsilons=[0.0]), ValueError, "epsilon"),
    (dict(epsilons=[float("nan")]), ValueError, "epsilon"),
    (dict(epsilons=[]), ValueError, "epsilons"),
    (dict(repetitions=0), ValueError, "repetitions"),
    (dict(cv=1), ValueError, "cv"),
    (dict(n_jobs=0), ValueError, "n_jobs"),
    (dict(metrics="rmse"), ValueError, "unknown metric"),
    (dict(methods={}), TypeError, "non-empty mapping"),
    (dict(methods={"x": 3}), TypeError, "factory"),
    (dict(random_state="seed"), TypeError, "random_state"),
])
def test_bad_input(data, kwargs, exc, match):
    args = dict(methods={"toy": NoisyMajority}, data=data, epsilons=[1.0], repetitions=1,
                random_state=0, progress=False)
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        sweep(**args)


def test_bad_data(data):
    frame, schema = data
    with pytest.raises(TypeError, match="pair"):
        sweep({"toy": NoisyMajority}, frame, [1.0], progress=False)
    one_class = frame.assign(label="0")
    with pytest.raises(ValueError, match="single class"):
        sweep({"toy": NoisyMajority}, (one_class, schema), [1.0], progress=False)
    with pytest.raises(ValueError, match="missing"):
        sweep({"toy": NoisyMajority}, (frame.assign(num_0=np.nan), schema), [1.0], progress=False)
    with pytest.raises(ValueError, match="lacks"):
        sweep({"toy": NoisyMajority}, (frame.drop(columns="cat_1"), schema), [1.0], progress=False)


def test_estimator_without_epsilon_rejected(data):
    with pytest.raises(TypeError, match="epsilon"):
        sweep({"hist": HistogramClassifier()}, data, [1.0], progress=False)


def test_summarise_rejects_bad_input():
    with pytest.raises(ValueError, match="columns"):
        summarise(pd.DataFrame({"a": [1]}))


# ----------------------------------------------------------------------------- seeds and spends
def _seed_metric():
    """A metric that returns the seed each fit received (so the table shows the streams)."""
    return {"seed": lambda est, X, y: float(est.random_state)}


def test_independent_stream_per_method_epsilon_run(data):
    res = sweep({"a": NoisyMajority, "b": NoisyMajority}, data, [0.1, 1.0, 10.0], repetitions=3,
                metrics=_seed_metric(), random_state=11, progress=False)
    assert res["value"].nunique() == len(res) == 2 * 3 * 3  # one distinct seed per (method, ε, run)


def test_seed_independent_of_other_epsilons(data):
    """A (method, ε, run) keeps its seed when the ε grid changes (key = the value of ε)."""
    small = sweep({"toy": NoisyMajority}, data, [1.0], repetitions=3, metrics=_seed_metric(),
                  random_state=4, progress=False)
    large = sweep({"toy": NoisyMajority}, data, [0.1, 1.0, 3.0], repetitions=3, metrics=_seed_metric(),
                  random_state=4, progress=False)
    np.testing.assert_array_equal(small["value"].to_numpy(), large[large["epsilon"] == 1.0]["value"].to_numpy())


def test_parallel_equals_serial_with_cv_and_generator(data):
    kw = dict(epsilons=[0.1, 1.0], repetitions=2, cv=3, progress=False)
    serial = sweep(_methods(), data, random_state=np.random.default_rng(8), **kw)
    parallel = sweep(_methods(), data, random_state=np.random.default_rng(8), n_jobs=2, **kw)
    pd.testing.assert_frame_equal(serial.drop(columns="seconds"), parallel.drop(columns="seconds"))
    other = sweep(_methods(), data, random_state=np.random.default_rng(9), **kw)
    assert not np.array_equal(serial["value"].to_numpy(), other["value"].to_numpy())


def test_no_global_random_state(data):
    np.random.seed(0)
    a = sweep({"toy": NoisyMajority}, data, [0.05], repetitions=3, random_state=2, progress=False)
    np.random.seed(1)
    b = sweep({"toy": NoisyMajority}, data, [0.05], repetitions=3, random_state=2, progress=False)
    pd.testing.assert_frame_equal(a.drop(columns="seconds"), b.drop(columns="seconds"))


def test_results_labelled_non_private(data):
    res = sweep({"toy": NoisyMajority}, data, [1.0], repetitions=1, random_state=0, progress=False)
    base = baselines(data, repetitions=1, random_state=0)
    for table in (res, base):
        assert "non-private" in table.attrs["evaluation"]


def test_spends_are_checked(data):
    """Every fit spends at most its ε: PrivPfC's ledger is its ε; a method overspending stops the sweep."""
    def privpfc(eps, rs):
        return PrivPfC(eps, theta=50, random_state=rs)

    res = sweep({"p": privpfc}, data, [0.3, 2.0], repetitions=1, random_state=0, progress=False,
                metrics={"spent": lambda est, X, y: est.epsilon_spent_})
    np.testing.assert_allclose(res["value"], res["epsilon"])

    class Overspender(NoisyMajority):
        def fit(self, X, y):
            super().fit(X, y)
            self.epsilon_spent_ = 2 * self.epsilon  # e.g. a factory that ignores the ε it is given
            return self

    with pytest.raises(RuntimeError, match="reports spending"):
        sweep({"over": Overspender}, data, [1.0], repetitions=1, random_state=0, progress=False)
    with pytest.raises(RuntimeError, match="reports spending"):
        sweep({"over": Overspender}, data, [1.0], repetitions=2, random_state=0, n_jobs=2, progress=False)


def test_repeated_epsilon_and_tiny_class_rejected(data):
    frame, schema = data
    with pytest.raises(ValueError, match="repeated"):
        sweep({"toy": NoisyMajority}, data, [1.0, 1.0], progress=False)
    lonely = frame.copy()
    lonely.loc[lonely.index[0], "label"] = "1"
    lonely.loc[lonely.index[1:], "label"] = "0"
    with pytest.raises(ValueError, match="at least 2 rows of every class"):
        sweep({"toy": NoisyMajority}, (lonely, schema), [1.0], progress=False)


def test_predictions_of_another_label_type_are_refused_not_scored_zero(data):
    """A method predicting "0"/"1" for an integer 0/1 target got accuracy 0.000
    without complaint; the metric now refuses labels that can never equal y's."""
    frame, schema = data
    int_frame = frame.assign(label=frame["label"].astype(int))

    class StringLabels(NoisyMajority):
        def predict(self, X):
            return np.full(len(X), str(self.pred_), dtype=object)

    with pytest.raises(TypeError, match="type of the training labels"):
        sweep({"strings": StringLabels}, (int_frame, schema), [1.0], repetitions=1, random_state=0,
              progress=False)
    ok = sweep({"ints": NoisyMajority}, (int_frame, schema), [1.0], repetitions=1, random_state=0,
               progress=False, metrics="accuracy")
    assert ok["value"].iloc[0] > 0.3
