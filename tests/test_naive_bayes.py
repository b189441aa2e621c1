"""DP Naive Bayes (thesis Algorithm 1), Gaussian NB, the public Binarizer and the ε-splitting pipeline."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.stats import kstest, laplace as laplace_dist
from sklearn.naive_bayes import BernoulliNB
from sklearn.utils import estimator_checks as ec

from dpexplore.budget import BudgetAccountant
from dpexplore.datasets import load_adult, make_synthetic
from dpexplore.domain import PrivacyLeakWarning
from dpexplore.models.naive_bayes import Binarizer, PrivateGaussianNB, PrivateNaiveBayes, laplace_quantile
from dpexplore.models.pipeline import SelectThenTrain
from dpexplore.select.thesis import PrivateKSubsetSelector


def _binary(n: int = 3000, d: int = 5, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    p = np.where(y[:, None] == 1, 0.8, 0.3)
    return (rng.random((n, d)) < p).astype(int), y


def test_thesis_clamp_values():
    # thesis §3.3.2, eq. 3.15: 65% quantile of Lap(D/ε): D=600 → 214 at ε=1, 2140 at ε=0.1
    assert laplace_quantile(0.65, 600 / 1.0) == pytest.approx(214.0, abs=0.1)
    assert laplace_quantile(0.65, 600 / 0.1) == pytest.approx(2140.0, abs=1)
    assert laplace_quantile(0.5, 3.0) == 0.0
    assert laplace_quantile(0.2, 1.0) == pytest.approx(np.log(0.4))


def test_noise_scale_is_D_over_epsilon_and_laplace_distributed():
    # big counts so the clamp at 0 (quantile 0.5) never bites: noisy − true is the raw noise
    n, d, eps = 40_000, 4, 0.5
    X = np.ones((n, d), dtype=int)
    X[: n // 4] = 0
    X[n // 2: 3 * n // 4] = 0
    y = np.r_[np.zeros(n // 2), np.ones(n // 2)].astype(int)
    on = np.array([[X[y == c, j].sum() for j in range(d)] for c in (0, 1)], dtype=float)
    off = np.array([(y == c).sum() for c in (0, 1)], dtype=float)[:, None] - on
    rng = np.random.default_rng(0)
    noise = []
    for _ in range(300):
        m = PrivateNaiveBayes(eps, clamp_quantile=0.5, random_state=rng).fit(X, y)
        assert m.sensitivity_ == d and m.noise_scale_ == pytest.approx(d / eps)
        noise.append(np.r_[(m.noisy_on_counts_ - on).ravel(), (m.noisy_off_counts_ - off).ravel()])
    noise = np.concatenate(noise)
    b = d / eps
    assert kstest(noise, laplace_dist(scale=b).cdf).pvalue > 1e-4
    assert abs(noise.var() - 2 * b * b) < 4 * np.sqrt(20 * b ** 4 / noise.size)  # Var of s² ≈ (24−4)b⁴/n


def test_clamp_at_quantile_of_noise():
    # zero true on-counts: a fraction ≈ q of the noisy values falls below the q-quantile and is clamped
    n, d, eps, q = 200, 50, 1.0, 0.65
    X = np.zeros((n, d), dtype=int)
    y = np.r_[np.zeros(n // 2), np.ones(n // 2)].astype(int)
    m = PrivateNaiveBayes(eps, clamp_quantile=q, random_state=1).fit(X, y)
    t = -(d / eps) * np.log(2 * (1 - q))
    assert m.clamp_threshold_ == pytest.approx(t)
    assert m.noisy_on_counts_.min() >= t and m.noisy_off_counts_.min() >= t
    frac_on = np.mean(m.noisy_on_counts_ == t)
    assert abs(frac_on - q) < 4 * np.sqrt(q * (1 - q) / (2 * d))
    assert np.all((m.theta_ > 0) & (m.theta_ < 1))


def test_large_epsilon_recovers_add_one_smoothing():
    X, y = _binary()
    m = PrivateNaiveBayes(1e9, random_state=0).fit(X, y)
    for c in (0, 1):
        Xc = X[y == c]
        np.testing.assert_allclose(m.theta_[c], (Xc.sum(0) + 1) / (len(Xc) + 2), rtol=1e-5)
    counts = np.bincount(y)
    np.testing.assert_allclose(m.class_prior_, (counts + 1) / (counts.sum() + 2), rtol=1e-5)
    ref = BernoulliNB(alpha=1.0).fit(X, y)
    assert np.mean(ref.predict(X) == m.predict(X)) > 0.99
    proba = m.predict_proba(X[:10])
    np.testing.assert_allclose(proba.sum(1), 1)


def test_nb_bad_input_before_spend():
    X, y = _binary(n=100)
    acc = BudgetAccountant(1.0)
    for kwargs, Xb, yb, match in [
        ({"epsilon": -1}, X, y, "epsilon"),
        ({"clamp_quantile": 0.3}, X, y, "clamp_quantile"),
        ({"pseudo_count": 0}, X, y, "pseudo_count"),
        ({}, X * 2, y, "0/1"),
        ({}, np.where(X == 1, np.nan, 0.0), y, "NaN"),
        ({}, X, np.zeros_like(y), "class"),
        ({}, X[:0], y[:0], "0 sample"),
        ({}, X, y[:-1], "inconsistent numbers of samples"),
        ({}, X, y + 0.5, "Unknown label type"),
        ({"classes": [0]}, X, y, "two distinct"),
        ({"classes": [0, 1]}, X, y + 3, "not among the declared classes"),
        ({"binarize": np.nan}, X, y, "binarize"),
    ]:
        with pytest.raises((ValueError, TypeError), match=match):
            PrivateNaiveBayes(**{"epsilon": 0.5, **kwargs}, accountant=acc).fit(Xb, yb)
    assert acc.ledger.empty


def test_gaussian_nb_public_bounds_and_ledger():
    rng = np.random.default_rng(0)
    n = 20_000
    y = rng.integers(0, 2, n)
    X = rng.normal(0, 1, (n, 3)) + 1.5 * y[:, None]
    acc = BudgetAccountant(1.0)
    m = PrivateGaussianNB(1.0, bounds=(-5, 7), accountant=acc, random_state=0).fit(X, y)
    assert len(m.ledger_) == 3 and acc.spent == pytest.approx(1.0)
    mean_scaled = 2 * (np.array([X[y == c].mean(0) for c in (0, 1)]) + 5) / 12 - 1
    np.testing.assert_allclose(m.theta_, mean_scaled, atol=0.05)
    assert m.score(X, y) > 0.85
    with pytest.warns(PrivacyLeakWarning):
        PrivateGaussianNB(1.0, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="bounds"):
        PrivateGaussianNB(1.0, bounds=(1, 1)).fit(X, y)
    frame, schema = make_synthetic(500, n_numeric=2, n_categorical=0, random_state=0)
    Xf, yf = schema.split(frame)
    g = PrivateGaussianNB(1.0, bounds=schema, random_state=0).fit(Xf, yf)
    assert g.lower_.tolist() == [schema.attributes[c].lower for c in Xf.columns]


def test_binarizer_is_public_one_hot():
    frame, schema = load_adult()
    X, _ = schema.split(frame.iloc[:500])
    b = Binarizer(schema).fit()           # no data needed
    B = b.transform(X)
    assert set(np.unique(B.to_numpy())) <= {0, 1}
    np.testing.assert_array_equal(B.sum(axis=1), len(schema.predictors))   # one 1 per attribute
    assert list(B.columns) == list(b.get_feature_names_out())
    cut = Binarizer(schema, columns=["age", "sex"], cut_points={"age": [30, 50]}).fit()
    assert list(cut.get_feature_names_out()) == ["age=[14, 30)", "age=[30, 50)", "age=[50, 95]",
                                                "sex=Female", "sex=Male"]
    Bc = cut.transform(X)
    np.testing.assert_array_equal(Bc["age=[30, 50)"], ((X["age"] >= 30) & (X["age"] < 50)).astype(int))
    gen = Binarizer(schema, columns=["native-country"], depths={"native-country": 1}).fit()
    assert gen.transform(X).shape[1] == 6
    with pytest.raises(ValueError):
        Binarizer(schema, columns=["nope"]).fit()
    with pytest.raises(ValueError):
        Binarizer(schema, depths={"sex": 5}).fit()
    with pytest.raises(ValueError, match="outside"):
        Binarizer(schema, columns=["age"]).fit().transform(X.assign(age=200))


def test_pipeline_splits_epsilon_and_uses_k_as_sensitivity():
    X, y = _binary(n=2000, d=12)
    acc = BudgetAccountant(0.4)
    p = SelectThenTrain(PrivateKSubsetSelector(k=3), PrivateNaiveBayes(), epsilon=0.4,
                        selection_share=0.25, accountant=acc, random_state=0).fit(X, y)
    assert list(p.ledger_["epsilon"]) == pytest.approx([0.1, 0.3])
    assert acc.spent == pytest.approx(0.4)
    assert p.model_.sensitivity_ == 3                  # Δ = k selected features, not D = 12
    assert p.get_support().sum() == 3 and p.predict(X).shape == (2000,)
    allf = SelectThenTrain(None, PrivateNaiveBayes(), epsilon=0.4, random_state=0).fit(X, y)
    assert list(allf.ledger_["epsilon"]) == [0.4] and allf.model_.sensitivity_ == 12
    with pytest.raises(ValueError, match="selection_share"):
        SelectThenTrain(PrivateKSubsetSelector(k=3), PrivateNaiveBayes(), selection_share=1.0).fit(X, y)


@pytest.mark.parametrize("score", ["count", "mi"])
@pytest.mark.parametrize("frame", [False, True])
def test_fit_scores_releases_what_fit_releases(score, frame):
    """fit_scores(q, X, y) with q the selector's own scores of (X, y): the same subset, model,
    ledger and predictions as fit(X, y) for the same seed (the thesis explorer scores once)."""
    import pandas as pd
    X, y = _binary(n=1500, d=10, seed=3)
    if frame:
        X = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    selector = PrivateKSubsetSelector(k=3, feature_score=score, n_min=1000, classes=[0, 1])
    q = selector.true_scores(X, y)
    for seed in (0, 1, 2):
        make = lambda: SelectThenTrain(selector, PrivateNaiveBayes(clamp_quantile=0.7), epsilon=0.3,
                                       selection_share=0.4, classes=[0, 1],
                                       random_state=np.random.default_rng(seed))
        a, b = make().fit(X, y), make().fit_scores(q, X, y)
        np.testing.assert_array_equal(a.get_support(), b.get_support())
        np.testing.assert_array_equal(a.model_.noisy_on_counts_, b.model_.noisy_on_counts_)
        np.testing.assert_array_equal(a.model_.noisy_off_counts_, b.model_.noisy_off_counts_)
        assert a.ledger_.equals(b.ledger_)
        np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


def test_fit_scores_refuses_bad_scores_before_any_spend():
    X, y = _binary(n=300, d=6)
    acc = BudgetAccountant(1.0)
    pipe = SelectThenTrain(PrivateKSubsetSelector(k=2), PrivateNaiveBayes(), epsilon=0.5, classes=[0, 1],
                           accountant=acc, random_state=0)
    with pytest.raises(ValueError, match="one score per feature of X"):
        pipe.fit_scores(np.ones(5), X, y)
    with pytest.raises(ValueError, match="finite"):
        pipe.fit_scores(np.r_[np.ones(5), np.nan], X, y)
    with pytest.raises(TypeError, match="fit_scores needs a selector"):
        SelectThenTrain(None, PrivateNaiveBayes(), accountant=acc).fit_scores(np.ones(6), X, y)
    assert acc.ledger.empty and acc.spent == 0


API_CHECKS = [ec.check_parameters_default_constructible, ec.check_get_params_invariance, ec.check_set_params,
              ec.check_no_attributes_set_in_init, ec.check_estimators_unfitted]
# data checks that apply to an estimator accepting real-valued features (Gaussian NB)
DATA_CHECKS = [ec.check_fit2d_predict1d, ec.check_fit_idempotent, ec.check_n_features_in,
               ec.check_estimators_nan_inf, ec.check_fit_score_takes_y,
               ec.check_dont_overwrite_parameters, ec.check_dict_unchanged, ec.check_estimators_pickle,
               ec.check_classifiers_one_label, ec.check_classifier_data_not_an_array,
               ec.check_methods_subset_invariance, ec.check_methods_sample_order_invariance,
               ec.check_fit_check_is_fitted, ec.check_estimators_dtypes, ec.check_classifiers_classes]


@pytest.mark.parametrize("Est", [PrivateNaiveBayes, PrivateGaussianNB, SelectThenTrain])
@pytest.mark.parametrize("check", API_CHECKS, ids=lambda c: c.__name__)
def test_sklearn_api_checks(Est, check):
    if check is ec.check_estimators_unfitted and Est is SelectThenTrain:
        est = SelectThenTrain(None, PrivateNaiveBayes())
    else:
        est = Est()
    check(Est.__name__, est)


@pytest.mark.parametrize("check", DATA_CHECKS, ids=lambda c: c.__name__)
def test_sklearn_data_checks_gaussian_nb(check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        check("PrivateGaussianNB", PrivateGaussianNB(epsilon=1e6, random_state=0))


def test_count_release_has_l1_sensitivity_D_under_add_remove():
    # thesis §3.3.3: one added record changes exactly one of (on, off) for each of the D features of
    # its own class, so the L1 change of the released 2·C·D counts is exactly D (priors: free)
    X, y = _binary(n=300, d=7, seed=3)
    rng = np.random.default_rng(0)

    def counts(Xa, ya):
        m = PrivateNaiveBayes(1e12, clamp_quantile=0.5, random_state=0).fit(Xa, ya)
        assert len(m.ledger_) == 1                   # one spend: class sizes are post-processed
        return np.stack([m.noisy_on_counts_, m.noisy_off_counts_])

    base = counts(X, y)
    for _ in range(10):
        rec, c = rng.integers(0, 2, 7), rng.integers(0, 2)
        diff = counts(np.vstack([X, rec]), np.append(y, c)) - base
        assert np.abs(diff).sum() == pytest.approx(7, abs=1e-6)
        assert np.abs(diff[:, 1 - c]).sum() == pytest.approx(0, abs=1e-6)   # other class untouched


def test_nb_inputs_not_mutated_and_seed_reproducible():
    X, y = _binary(n=200, d=4)
    X0, y0 = X.copy(), y.copy()
    a = PrivateNaiveBayes(0.5, random_state=3).fit(X, y)
    b = PrivateNaiveBayes(0.5, random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.theta_, b.theta_)
    PrivateGaussianNB(0.5, bounds=(0, 1), random_state=0).fit(X.astype(float), y)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)


def test_pipeline_bad_model_parameters_cost_nothing():
    # the selector would spend ε_FS first: the model's parameters must be checked before that
    from dpexplore.models.logistic import PrivateLogisticRegression

    X, y = _binary(n=300, d=6)
    for model in (PrivateNaiveBayes(clamp_quantile=0.2), PrivateNaiveBayes(pseudo_count=-1),
                  PrivateLogisticRegression(method="input"), PrivateLogisticRegression(bounds=(1, 0)),
                  PrivateGaussianNB(var_floor=0)):
        acc = BudgetAccountant(1.0)
        with pytest.raises((ValueError, TypeError)):
            SelectThenTrain(PrivateKSubsetSelector(k=2), model, epsilon=1.0, accountant=acc).fit(X, y)
        assert acc.ledger.empty, model
    acc = BudgetAccountant(1.0)
    with pytest.raises(ValueError, match="1 class"):      # bad data: refused before the selector spends
        SelectThenTrain(PrivateKSubsetSelector(k=2), PrivateNaiveBayes(), epsilon=1.0,
                        accountant=acc).fit(X, np.zeros_like(y))
    assert acc.ledger.empty


def test_pipeline_with_logistic_regression_and_per_feature_bounds():
    from sklearn.model_selection import cross_val_score

    from dpexplore.models.logistic import PrivateLogisticRegression

    X, y = _binary(n=3000, d=12, seed=1)
    X0 = X.copy()
    lr = PrivateLogisticRegression(method="output", lam=50.0, bounds=(np.zeros(12), np.ones(12)))
    p = SelectThenTrain(PrivateKSubsetSelector(k=4), lr, epsilon=2.0, random_state=0).fit(X, y)
    assert p.model_.n_features_in_ == 4 and p.n_features_in_ == 12
    np.testing.assert_array_equal(p.model_.lower_, np.zeros(4))
    assert list(p.ledger_["epsilon"]) == pytest.approx([1.0, 1.0])
    assert p.score(X, y) > 0.7
    np.testing.assert_array_equal(X, X0)
    scores = cross_val_score(SelectThenTrain(PrivateKSubsetSelector(k=3), PrivateNaiveBayes(), epsilon=1.0,
                                             random_state=0), X, y, cv=3)
    assert scores.shape == (3,) and np.all(scores > 0.6)


@pytest.mark.parametrize("check", DATA_CHECKS, ids=lambda c: c.__name__)
def test_sklearn_data_checks_pipeline_without_selector(check):
    # with a selector the features must be 0/1, which the generic checks do not generate
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        check("SelectThenTrain", SelectThenTrain(None, PrivateGaussianNB(), epsilon=1e6, random_state=0))


# ----------------------------------------------------------- declared classes, scikit-learn's tools
@pytest.mark.parametrize("make", [lambda **k: PrivateNaiveBayes(**k), lambda **k: PrivateGaussianNB(bounds=(0, 1), **k)],
                         ids=["bernoulli", "gaussian"])
def test_nb_classes_are_declared_not_read_from_y(make):
    # old code: classes_ = np.unique(y), silently: a 3rd-class record changed the model's shape
    X, y = _binary(n=400)
    with pytest.warns(PrivacyLeakWarning, match="class labels"):
        make(epsilon=1.0, random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        m = make(epsilon=1.0, classes=[0, 1, 2], random_state=0).fit(X, y)
    # the declared class 2 is absent from y but is a class of the model (its noisy statistics)
    assert list(m.classes_) == [0, 1, 2]
    assert m.predict_proba(X).shape == (400, 3) and m.class_prior_.shape == (3,)
    # the output shape does not depend on whether class 2 occurs
    X2, y2 = np.vstack([X, X[:1]]), np.append(y, 2)
    m2 = make(epsilon=1.0, classes=[0, 1, 2], random_state=0).fit(X2, y2)
    assert m2.theta_.shape == m.theta_.shape and list(m2.classes_) == list(m.classes_)


def test_nb_declared_classes_keep_the_declared_order_and_dtype():
    X, y = _binary(n=400)
    m = PrivateNaiveBayes(1e6, classes=["1", "0"], random_state=0).fit(X, y)
    assert list(m.classes_) == [1, 0] and m.classes_.dtype.kind == "i"
    assert np.mean(m.predict(X) == y) > 0.7
    ys = np.where(y == 1, "yes", "no").astype(object)
    m = PrivateNaiveBayes(1e6, classes=["no", "yes", "maybe"], random_state=0).fit(X, ys)
    assert list(m.classes_) == ["no", "yes", "maybe"] and set(m.predict(X)) <= {"no", "yes"}


def test_nb_binarize_is_a_public_cut_point():
    # real-valued X used to be refused outright; binarize=t maps X > t to 1 (public rule)
    X, y = _binary(n=2000)
    Xr = X + np.random.default_rng(0).uniform(-0.4, 0.4, X.shape)
    with pytest.raises(ValueError, match="0/1"):
        PrivateNaiveBayes(1.0, classes=[0, 1]).fit(Xr, y)
    a = PrivateNaiveBayes(1.0, classes=[0, 1], binarize=0.5, random_state=0).fit(Xr, y)
    b = PrivateNaiveBayes(1.0, classes=[0, 1], random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.theta_, b.theta_)          # same counts, same seed
    np.testing.assert_array_equal(a.predict(Xr), b.predict(X))
    # 0/1 data are unchanged by binarize=0.0 (BernoulliNB's default rule)
    c = PrivateNaiveBayes(1.0, classes=[0, 1], binarize=0.0, random_state=0).fit(X, y)
    np.testing.assert_array_equal(c.theta_, b.theta_)


def test_pipeline_passes_one_class_list_to_both_steps():
    X, y = _binary(n=600, d=6)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        p = SelectThenTrain(PrivateKSubsetSelector(k=2), PrivateNaiveBayes(), classes=[0, 1], epsilon=1.0,
                            random_state=0).fit(X, y)
        assert p.selector_.classes == [0, 1] and p.model_.classes == [0, 1] and list(p.classes_) == [0, 1]
        # declared on the model only: the selector gets the same list
        p = SelectThenTrain(PrivateKSubsetSelector(k=2), PrivateNaiveBayes(classes=[0, 1]), epsilon=1.0,
                            random_state=0).fit(X, y)
        assert p.selector_.classes == [0, 1]
    with pytest.warns(PrivacyLeakWarning, match="class labels"):      # nothing declared: the steps warn
        SelectThenTrain(PrivateKSubsetSelector(k=2), PrivateNaiveBayes(), epsilon=1.0, random_state=0).fit(X, y)
    acc = BudgetAccountant(1.0)
    with pytest.raises(ValueError, match="not among the declared classes"):   # before the selector spends
        SelectThenTrain(PrivateKSubsetSelector(k=2), PrivateNaiveBayes(), classes=[0, 1], epsilon=1.0,
                        accountant=acc).fit(X, y + 2)
    assert acc.ledger.empty


# --------------------------------------------------------------------------- sklearn's tools
def _tool_cases():
    return [
        ("PrivateNaiveBayes", PrivateNaiveBayes(classes=[0, 1], random_state=0), "clamp_quantile", [0.5, 0.65]),
        ("PrivateGaussianNB", PrivateGaussianNB(classes=[0, 1], bounds=(0, 1), random_state=0), "var_floor",
         [0.01, 0.05]),
        ("SelectThenTrain", SelectThenTrain(PrivateKSubsetSelector(k=2), PrivateNaiveBayes(), classes=[0, 1],
                                            random_state=0), "selection_share", [0.3, 0.5]),
    ]


@pytest.mark.parametrize("name,est,param,values", _tool_cases(), ids=[c[0] for c in _tool_cases()])
def test_grid_search_cross_val_clone_pickle(name, est, param, values):
    import pickle

    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV, cross_val_score, cross_validate

    X, y = _binary(n=600, d=5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)      # everything declared: no leak warning
        gs = GridSearchCV(est, {"epsilon": [0.5, 2.0], param: values}, cv=3).fit(X, y)
        best = gs.best_estimator_
        assert best.ledger_["epsilon"].sum() == pytest.approx(gs.best_params_["epsilon"])
        assert best.epsilon_spent_ == pytest.approx(gs.best_params_["epsilon"])
        scores = cross_val_score(clone(est).set_params(epsilon=1.0), X, y, cv=3)
        assert scores.shape == (3,) and np.all(scores > 0.5)
        # every fit has its own accountant and ledger holding exactly its ε
        res = cross_validate(clone(est).set_params(epsilon=1.0), X, y, cv=3, return_estimator=True)
        fitted = res["estimator"]
        assert len({id(m.accountant_) for m in fitted}) == 3
        assert all(m.ledger_["epsilon"].sum() == pytest.approx(1.0) for m in fitted)
        # clone keeps the parameters, not the fit; pickle keeps the fit
        c = clone(best)
        assert c.get_params()[param] == best.get_params()[param] and not hasattr(c, "classes_")
        p = pickle.loads(pickle.dumps(best))
        np.testing.assert_array_equal(p.predict(X), best.predict(X))
        assert p.ledger_["epsilon"].sum() == pytest.approx(gs.best_params_["epsilon"])


def test_binarizer_in_sklearn_tools_and_arrays():
    import pickle

    from sklearn.base import clone
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline

    frame, schema = make_synthetic(n_samples=400, n_numeric=2, n_categorical=1, random_state=0)
    X, y = frame[schema.predictors], frame[schema.target]
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        b = Binarizer(schema).fit(X)
        assert b.n_features_in_ == 3 and list(b.feature_names_in_) == schema.predictors
        out = b.transform(X)
        p = pickle.loads(pickle.dumps(b))
        assert out.equals(p.transform(X)) and out.equals(clone(b).fit(X).transform(X))
        # an array holds the schema's columns in order
        Xn = X[schema.numeric]
        bn = Binarizer(schema, columns=schema.numeric).fit(Xn.to_numpy())
        assert bn.transform(Xn.to_numpy()).to_numpy().tolist() == \
            Binarizer(schema, columns=schema.numeric).fit(Xn).transform(Xn).to_numpy().tolist()
        pipe = make_pipeline(Binarizer(schema), SelectThenTrain(
            PrivateKSubsetSelector(k=2), PrivateNaiveBayes(), classes=list(schema.classes), epsilon=1.0,
            random_state=0))
        assert cross_val_score(pipe, X, y, cv=3).shape == (3,)
    # without a schema the domain is read from the data: warned
    with pytest.warns(PrivacyLeakWarning, match="without a schema"):
        Binarizer().fit(np.random.default_rng(0).normal(size=(20, 2)))


# --------------------------------------------------------------------------- one name for a share of ε
def test_share_parameters_split_epsilon():
    """``shares`` (PrivateGaussianNB) and ``selection_share`` (SelectThenTrain) divide ε."""
    import pickle

    X, y = _binary(n=400, d=4)
    nb = PrivateGaussianNB(classes=[0, 1], bounds=(0, 1), shares=(8, 1, 1), random_state=0).fit(X, y)
    assert list(nb.ledger_["epsilon"]) == pytest.approx([0.8, 0.1, 0.1])
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(nb)).theta_, nb.theta_)
    pipe = SelectThenTrain(PrivateKSubsetSelector(k=2), PrivateNaiveBayes(), classes=[0, 1], epsilon=1.0,
                           selection_share=0.25, random_state=0).fit(X, y)
    assert pipe.epsilon_selection_ == pytest.approx(0.25) and pipe.epsilon_training_ == pytest.approx(0.75)
