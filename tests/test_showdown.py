"""which_one_when, the showdown charts and ShowdownExplorer on a hand-made summary."""
import numpy as np
import pandas as pd
import pytest

from dpexplore.datasets import make_synthetic
from dpexplore.evaluate.showdown import available_methods, candidate_methods, which_one_when
from dpexplore.plots.showdown import error_chart, ranking_chart, runtime_chart
from dpexplore.widgets.showdown import ShowdownExplorer


def summary():
    rows = []
    for d, offset in (("A", 0.0), ("B", 0.1)):
        for m, errs, sec in (("fast", (0.30, 0.20), 0.1), ("slow", (0.25, 0.195), 5.0), ("bad", (0.5, 0.45), 1.0)):
            for e, v in zip((0.1, 1.0), errs):
                rows.append(dict(dataset=d, method=m, epsilon=e, metric="error", median=v + offset,
                                 q25=v + offset - 0.01, q75=v + offset + 0.01, mean=v, n=3, seconds=sec))
        rows.append(dict(dataset=d, method="majority", epsilon=np.inf, metric="error", median=0.4 + offset,
                         q25=0.4, q75=0.4, mean=0.4, n=3, seconds=0.0))
        rows.append(dict(dataset=d, method="non-private", epsilon=np.inf, metric="error", median=0.15 + offset,
                         q25=0.15, q75=0.15, mean=0.15, n=3, seconds=0.5))
    return pd.DataFrame(rows)


def test_which_one_when():
    v = which_one_when(summary(), tolerance=0.01).set_index(["dataset", "epsilon"])
    assert v.loc[("A", 0.1), "best"] == "slow" and v.loc[("A", 0.1), "runner_up"] == "fast"
    assert v.loc[("A", 0.1), "fastest_good"] == "slow"        # fast is 0.05 worse: not within 0.01
    assert v.loc[("A", 1.0), "best"] == "slow" and v.loc[("A", 1.0), "fastest_good"] == "fast"  # within 0.005
    assert v.loc[("A", 1.0), "gap_to_nonprivate"] == pytest.approx(0.045)
    assert v["beats_majority"].all()
    s = summary()
    s.loc[(s.method == "slow") & (s.epsilon == 0.1) & (s.dataset == "B"), "q75"] = 0.6
    v = which_one_when(s).set_index(["dataset", "epsilon"])
    assert not v.loc[("B", 0.1), "beats_majority"]
    with pytest.raises(ValueError, match="metric"):
        which_one_when(summary(), metric="auc")


def _y_sorts(spec):
    """The explicit y orders of every panel of a ranking chart."""
    return [layer["encoding"]["y"]["sort"] for panel in spec["hconcat"] for layer in panel["layer"][:1]]


def test_charts_and_explorer():
    s = summary()
    for chart in (error_chart(s), runtime_chart(s), ranking_chart(s, 1.0)):
        spec = chart.to_dict()
        assert "Infinity" not in str(spec)
    with pytest.raises(ValueError, match="no results"):
        ranking_chart(s, 0.5)
    ex = ShowdownExplorer(s, epsilon=0.08)          # snaps to the nearest swept budget (log scale)
    assert ex.epsilon_ == 0.1
    # a step of the slider is one swept ε, so every step changes the picture
    assert list(ex.epsilon.options) == [("0.1", 0.1), ("1", 1.0)]
    first = ex.output.outputs
    ex.epsilon.value = 1.0
    assert ex.epsilon_ == 1.0 and ex.output.outputs != first
    (data,) = [d for d in ex.chart.to_dict()["datasets"].values() if d and "kind" in d[0]][:1]
    assert {r["epsilon"] for r in data} == {1.0}


def test_ranking_is_best_first_and_deterministic():
    # alphabetical in Lab, best first in Voilà; now an explicit order per panel
    s = summary()
    assert _y_sorts(ranking_chart(s, 1.0).to_dict()) == [["slow", "fast", "bad"]] * 2
    assert _y_sorts(ranking_chart(s, 0.1).to_dict()) == [["slow", "fast", "bad"]] * 2
    tie = s.copy()
    tie.loc[tie.method == "fast", "median"] = tie.loc[tie.method == "slow", "median"].to_numpy()
    assert _y_sorts(ranking_chart(tie, 1.0).to_dict())[0] == ["fast", "slow", "bad"]   # tie: faster first


def test_runtime_chart_draws_every_method():
    # bars on a log axis start at the axis minimum, so the fastest method's bar
    # (and in Voilà every bar) was empty; now dots on stems from a baseline below every time
    spec = runtime_chart(summary()).to_dict()
    (data,) = spec["datasets"].values()
    assert {r["method"] for r in data} == {"fast", "slow", "bad"}
    assert all(r["start"] < r["seconds"] for r in data)
    assert spec["layer"][0]["encoding"]["x"]["scale"]["domain"][0] <= min(r["start"] for r in data)
    assert "yOffset" not in str(spec)


def test_available_methods_raises_on_a_broken_method_and_excludes_a_missing_package():
    import warnings

    from dpexplore.domain import PrivacyLeakWarning
    from dpexplore.exceptions import MethodUnavailableError
    from dpexplore.registry import MethodSpec

    data = make_synthetic(n_samples=400, n_numeric=2, n_categorical=2, n_classes=3, random_state=0)
    cands = dict(candidate_methods(data[1]))
    optional = MethodSpec("Optional", "classifier", "dpexplore.registry:MethodSpec", "p", "b",
                          requires=("no_such_package_xyz",))
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)     # every method gets the public schema
        ok, table = available_methods({"PrivPfC": cands["PrivPfC"], "k-subset + NB": cands["k-subset + NB"],
                                       "optional": lambda eps, rs: optional.build(epsilon=eps)}, data, n_rows=300)
    # with the schema's three declared classes the k-subset selection scores the last class against
    # the rest, so the thesis pipeline runs; the method whose optional package is absent is excluded
    assert list(ok) == ["PrivPfC", "k-subset + NB"]
    t = table.set_index("method")
    assert t.loc["optional", "status"] == "excluded" and "no_such_package_xyz" in t.loc["optional", "reason"]
    assert (t.loc[["PrivPfC", "k-subset + NB"], "status"] == "included").all()

    def broken(eps, rs):
        raise RuntimeError("not installed")

    # any other failure is an error naming the method, with the cause chained (no silent skip)
    with pytest.raises(MethodUnavailableError, match="broken failed the availability check") as info:
        available_methods({"PrivPfC": cands["PrivPfC"], "broken": broken}, data, n_rows=300)
    assert isinstance(info.value.__cause__, RuntimeError)

    class Wrong:
        def fit(self, X, y):
            return self

        def predict(self, X):
            return np.full(len(X), "not a class", dtype=object)

    with pytest.raises(MethodUnavailableError, match="not class labels"):
        available_methods({"wrong": lambda eps, rs: Wrong()}, data, n_rows=300)


# ----------------------------------------------------------------------------- the verdict is computed
def test_verdict_follows_the_results():
    """Nothing is typed in: change a result and the verdict changes with it."""
    s = summary()
    s.loc[(s.method == "bad") & (s.epsilon == 1.0) & (s.dataset == "A"), ["median", "q25", "q75"]] = [0.1, 0.09, 0.11]
    v = which_one_when(s).set_index(["dataset", "epsilon"])
    assert v.loc[("A", 1.0), "best"] == "bad" and v.loc[("A", 1.0), "median"] == pytest.approx(0.1)
    assert v.loc[("B", 1.0), "best"] == "slow"


def test_which_one_when_higher_is_better_and_missing_majority():
    s = summary()
    acc = s.assign(metric="accuracy", median=1 - s["median"], q25=1 - s["q75"], q75=1 - s["q25"])
    v = which_one_when(acc, metric="accuracy").set_index(["dataset", "epsilon"])
    e = which_one_when(s).set_index(["dataset", "epsilon"])
    assert (v["best"] == e["best"]).all() and (v["fastest_good"] == e["fastest_good"]).all()
    assert (v["beats_majority"] == e["beats_majority"]).all()
    assert v.loc[("A", 1.0), "gap_to_nonprivate"] == pytest.approx(-0.045)
    no_ref = which_one_when(s[s.method != "majority"])
    assert no_ref["beats_majority"].isna().all()  # unknown, not True
    with pytest.raises(ValueError, match="tolerance"):
        which_one_when(s, tolerance=-1)


# ----------------------------------------------------------------------------- private LR candidate
def test_private_lr_spends_its_epsilon_once():
    from dpexplore.budget import BudgetAccountant, BudgetExceededError
    from dpexplore.models import PrivateLRClassifier

    frame, schema = make_synthetic(n_samples=600, n_numeric=2, n_categorical=2, n_classes=3, random_state=1)
    X, y = frame[schema.predictors], frame[schema.target]
    before = X.copy()
    m = PrivateLRClassifier(schema, 0.9, random_state=0).fit(X, y)
    np.testing.assert_allclose(m.ledger_["charged"], [0.3, 0.3, 0.3])  # one-vs-rest: ε/q each
    assert m.epsilon_spent_ == pytest.approx(0.9)
    pd.testing.assert_frame_equal(X, before)
    again = PrivateLRClassifier(schema, 0.9, random_state=0).fit(X, y)
    np.testing.assert_array_equal(m.predict(X), again.predict(X))
    assert set(m.predict(X)) <= set(schema.classes)
    # a shared accountant: refused before spending when it cannot pay
    acc = BudgetAccountant(1.0)
    PrivateLRClassifier(schema, 0.6, random_state=0, accountant=acc).fit(X, y)
    with pytest.raises(BudgetExceededError):
        PrivateLRClassifier(schema, 0.6, random_state=0, accountant=acc).fit(X, y)
    assert acc.spent == pytest.approx(0.6)
    # a label outside the schema's classes: refused before anything is spent
    acc = BudgetAccountant(1.0)
    with pytest.raises(ValueError, match="not among"):
        PrivateLRClassifier(schema, 0.6, random_state=0, accountant=acc).fit(X, y.replace("2", "7"))
    assert acc.spent == 0


def test_private_lr_fits_every_declared_class_whatever_occurs():
    # the old fit refused when a schema class had no training row, a refusal that
    # depends on the private rows. Now every class gets its one-vs-rest part, at ε/q, regardless.
    from dpexplore.budget import BudgetAccountant
    from dpexplore.models import PrivateLRClassifier

    frame, schema = make_synthetic(n_samples=600, n_numeric=2, n_categorical=2, n_classes=3, random_state=1)
    X, y = frame[schema.predictors], frame[schema.target]
    keep = (y != "2").to_numpy()
    acc = BudgetAccountant(1.0)
    m = PrivateLRClassifier(schema, 0.6, random_state=0, accountant=acc).fit(X[keep], y[keep])
    full = PrivateLRClassifier(schema, 0.6, random_state=0).fit(X, y)
    assert len(m.models_) == len(full.models_) == 3
    assert list(m.classes_) == list(full.classes_) == ["0", "1", "2"]
    np.testing.assert_allclose(m.ledger_["charged"], [0.2, 0.2, 0.2])
    assert acc.spent == pytest.approx(0.6) and m.predict_proba(X).shape == (600, 3)
    # only one class present, binary schema: still the one release, no data-dependent refusal
    frame2, schema2 = make_synthetic(n_samples=200, n_numeric=1, n_categorical=1, random_state=2)
    X2, y2 = frame2[schema2.predictors], frame2[schema2.target]
    one = y2 == schema2.classes[0]
    m2 = PrivateLRClassifier(schema2, 1.0, random_state=0).fit(X2[one], y2[one])
    assert len(m2.models_) == 1 and list(m2.classes_) == list(schema2.classes)


def test_private_lr_without_schema_warns_and_takes_arrays():
    import pickle
    import warnings

    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV, cross_val_score

    from dpexplore.domain import PrivacyLeakWarning
    from dpexplore.models import PrivateLRClassifier

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    X = rng.normal(0, 1, (300, 3)) + 2.0 * y[:, None]
    with pytest.warns(PrivacyLeakWarning, match="without a schema"):
        m = PrivateLRClassifier(epsilon=5.0, random_state=0).fit(X, y)
    assert list(m.schema_.predictors) == ["x0", "x1", "x2"] and m.score(X, y) > 0.8
    assert m.schema is None                       # the parameter is not overwritten
    with pytest.raises(ValueError, match="features"):
        m.predict(X[:, :2])
    # with a schema, an array is read in the schema's predictor order
    frame, schema = make_synthetic(n_samples=300, n_numeric=2, n_categorical=0, random_state=3)
    Xf, yf = frame[schema.predictors], frame[schema.target]
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        a = PrivateLRClassifier(schema, 1.0, random_state=0).fit(Xf.to_numpy(), yf)
        b = PrivateLRClassifier(schema, 1.0, random_state=0).fit(Xf, yf)
        np.testing.assert_array_equal(a.predict(Xf.to_numpy()), b.predict(Xf))
        # scikit-learn's tools: clone, pickle, cross_val_score, GridSearchCV over ε and C
        c = pickle.loads(pickle.dumps(b))
        np.testing.assert_array_equal(c.predict(Xf), b.predict(Xf))
        assert clone(b).get_params()["schema"].to_dict() == schema.to_dict()
        assert cross_val_score(PrivateLRClassifier(schema, 1.0, random_state=0), Xf, yf, cv=3).shape == (3,)
        gs = GridSearchCV(PrivateLRClassifier(schema, random_state=0), {"epsilon": [0.5, 2.0], "C": [0.5, 1.0]},
                          cv=2).fit(Xf, yf)
        assert gs.best_estimator_.ledger_["epsilon"].sum() == pytest.approx(gs.best_params_["epsilon"])


def test_private_lr_labels_and_unknown_categories():
    from dpexplore.models import PrivateLRClassifier

    frame, schema = make_synthetic(n_samples=400, n_numeric=1, n_categorical=1, random_state=2)
    X, y = frame[schema.predictors], frame[schema.target].astype(int)  # integer labels 0/1
    m = PrivateLRClassifier(schema, 5.0, random_state=0).fit(X, y)
    assert set(m.predict(X)) <= {0, 1} and m.score(X, y) > 0.5
    from dpexplore.encode import design_matrix
    Z = design_matrix(X.assign(cat_0="never seen"), m.schema_)
    cat_cols = Z[:, 1:]
    assert (cat_cols == 0).all()  # no indicator, not the last category's
    from sklearn.base import clone
    assert clone(m).get_params()["epsilon"] == 5.0


def test_ranking_chart_best_first_for_accuracy():
    s = summary()
    acc = s.assign(metric="accuracy", median=1 - s["median"], q25=1 - s["q75"], q75=1 - s["q25"])
    assert _y_sorts(ranking_chart(acc, 1.0, metric="accuracy").to_dict()) == [["slow", "fast", "bad"]] * 2
    worst = acc.assign(median=1 - acc["median"])      # accuracy ranked as if it were an error
    assert _y_sorts(ranking_chart(worst, 1.0, metric="accuracy").to_dict())[0] == ["bad", "fast", "slow"]
