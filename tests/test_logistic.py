"""DP logistic regression (Chaudhuri et al. 2011): exact formulas, sensitivity, norms, sklearn contract."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsRestClassifier
from sklearn.utils import estimator_checks as ec

from dpexplore.budget import BudgetAccountant
from dpexplore.domain import PrivacyLeakWarning
from dpexplore.models.logistic import (PrivateLogisticRegression, l1_noise, l2_noise, make_gaussian_toy,
                                       objective_branch_boundary, objective_perturbation_parameters,
                                       output_perturbation_scale)


@pytest.mark.parametrize("eps, lam, branch, eps_prime, scale, eff", [
    # thesis §4.4.1, Alg. 7: exact values, tabulated by us (c = 1/4)
    (0.1, 0.1, 2, 0.05, 40.0, 9.876),
    (0.1, 1.0, 2, 0.05, 40.0, 9.876),
    (0.1, 5.0, 1, 0.0024, 826.6, 5.0),
    (0.1, 10.0, 1, 0.0506, 39.5, 10.0),
    (0.1, 100.0, 1, 0.0950, 21.1, 100.0),
    (0.1, 1000.0, 1, 0.0995, 20.1, 1000.0),
    (1.0, 0.1, 2, 0.5, 4.0, 0.880),
    (1.0, 1.0, 1, 0.554, 3.61, 1.0),
    (1.0, 10.0, 1, 0.951, 2.10, 10.0),
])
def test_objective_perturbation_exact_table(eps, lam, branch, eps_prime, scale, eff):
    p = objective_perturbation_parameters(eps, lam)
    assert p["branch"] == branch
    assert p["epsilon_prime"] == pytest.approx(eps_prime, abs=6e-4)
    assert p["noise_scale"] == pytest.approx(scale, rel=3e-3)     # the table above is rounded to 3 digits
    assert p["effective_lambda"] == pytest.approx(eff, abs=1e-3)


def test_branch_boundary_and_privacy_identity():
    c = 0.25
    assert objective_branch_boundary(0.1) == pytest.approx(4.876, abs=1e-3)
    for eps in (0.05, 0.1, 1.0, 10.0):
        lam_star = objective_branch_boundary(eps)
        assert objective_perturbation_parameters(eps, lam_star * 1.001)["branch"] == 1
        assert objective_perturbation_parameters(eps, lam_star * 0.999)["branch"] == 2
        # branch 2: the effective regulariser makes log(1 + 2c/λ + c²/λ²) = ε/2 exactly (Chaudhuri Alg. 2)
        eff = objective_perturbation_parameters(eps, lam_star / 2)["effective_lambda"]
        assert math.log1p(2 * c / eff + (c / eff) ** 2) == pytest.approx(eps / 2)
    # the thesis's rule λ > 1/(2ε) is only an approximation: at ε = 10 it says 0.05, the truth is 0.00169
    assert objective_branch_boundary(10.0) == pytest.approx(0.25 / math.expm1(5))


def test_output_sensitivity_bound_on_neighbours():
    rng = np.random.default_rng(0)
    lam = 2.0
    X, y, bounds = make_gaussian_toy(80, 3, random_state=1)
    model = PrivateLogisticRegression(1e9, method="output", lam=lam, bounds=bounds, random_state=0)
    model.fit(X, y)
    Z = model.transform_rows(X)
    s = np.where(y == 1, 1.0, -1.0)
    theta = model._minimise(Z, s, lam, np.zeros(3))
    worst = 0.0
    for _ in range(30):
        i = rng.integers(len(X))
        keep = np.arange(len(X)) != i             # remove one record (add/remove neighbours)
        theta_n = model._minimise(Z[keep], s[keep], lam, np.zeros(3))
        worst = max(worst, np.linalg.norm(theta - theta_n))
    assert 0 < worst <= 2 / lam                    # Chaudhuri et al. Cor. 8: Δ₂ = 2/λ
    assert model.sensitivity_ == 2 / lam
    assert output_perturbation_scale(0.1, 10.0) == pytest.approx(2.0)


def test_l2_noise_is_gamma_norm_with_uniform_direction():
    b = l2_noise(5, 3.0, size=20_000, random_state=0)
    norms = np.linalg.norm(b, axis=1)
    # Gamma(5, 3): mean 15, variance 45
    assert abs(norms.mean() - 15) < 4 * math.sqrt(45 / norms.size)
    assert np.all(np.abs((b / norms[:, None]).mean(0)) < 4 * math.sqrt(1 / 5 / norms.size))
    l1 = l1_noise(2, 1.0, size=20_000, random_state=0)
    assert abs(np.abs(l1).sum(1).mean() - 2.0) < 4 * math.sqrt(2 / l1.shape[0])


@pytest.mark.parametrize("row_norm", ["clip", "bound", "unit"])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_rows_scaled_into_unit_ball(row_norm, fit_intercept):
    X, y, bounds = make_gaussian_toy(300, 4, random_state=0)
    X = X * 3     # values beyond the public bounds are clipped
    m = PrivateLogisticRegression(1.0, row_norm=row_norm, bounds=bounds, fit_intercept=fit_intercept,
                                  random_state=0).fit(X, y)
    norms = np.linalg.norm(m.transform_rows(X), axis=1)
    assert norms.max() <= 1 + 1e-12 and not hasattr(m, "max_row_norm_")   # data-dependent: not stored
    assert m.coef_.shape == (1, 4) and m.intercept_.shape == (1,)


def test_leak_warning_only_without_public_bounds():
    X, y, bounds = make_gaussian_toy(200, 2, random_state=0)
    with pytest.warns(PrivacyLeakWarning):
        PrivateLogisticRegression(1.0, random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        PrivateLogisticRegression(1.0, bounds=bounds, classes=[0, 1], random_state=0).fit(X, y)


def test_classes_read_from_y_warn_and_declared_classes_do_not():
    # the class list is public: np.unique(y) used to give it silently
    X, y, bounds = make_gaussian_toy(200, 2, random_state=0)
    with pytest.warns(PrivacyLeakWarning, match="class labels"):
        PrivateLogisticRegression(1.0, bounds=bounds, random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        m = PrivateLogisticRegression(1.0, bounds=bounds, classes=[0, 1], random_state=0).fit(X, y)
    assert list(m.classes_) == [0, 1]


def test_declared_class_absent_from_y_is_still_a_class_of_the_model():
    # y holds only class 0: with classes=[0, 1] the fit is the same DP release (no refusal that
    # depends on which labels occur), and class 1 is the positive class
    X, y, bounds = make_gaussian_toy(200, 2, random_state=0)
    acc = BudgetAccountant(1.0)
    m = PrivateLogisticRegression(1.0, bounds=bounds, classes=[0, 1], accountant=acc,
                                  random_state=0).fit(X, np.zeros_like(y))
    assert list(m.classes_) == [0, 1] and m.predict_proba(X).shape == (200, 2)
    assert acc.spent == pytest.approx(1.0)
    # declared order decides which class is positive
    m2 = PrivateLogisticRegression(1e9, lam=1.0, bounds=bounds, classes=[1, 0], random_state=0).fit(X, y)
    assert list(m2.classes_) == [1, 0] and np.mean(m2.predict(X) == y) > 0.8
    with pytest.raises(ValueError, match="two labels"):
        PrivateLogisticRegression(1.0, bounds=bounds, classes=[0, 1, 2]).fit(X, y)


def test_no_true_quantity_on_the_fitted_model_or_in_warnings():
    # noise_norm_ (with θ it gives the exact minimiser's gradient), n_iter_ and
    # the gradient norm in the convergence warning were true, data-dependent numbers
    import pickle
    import re

    from sklearn.exceptions import ConvergenceWarning

    X, y, bounds = make_gaussian_toy(300, 3, random_state=0)
    for method in ("output", "objective"):
        m = PrivateLogisticRegression(1.0, method=method, bounds=bounds, classes=[0, 1], random_state=0).fit(X, y)
        assert not {"noise_norm_", "n_iter_"} & set(vars(m))
        assert b"noise_norm" not in pickle.dumps(m) and b"n_iter" not in pickle.dumps(m)
    with pytest.warns(ConvergenceWarning) as rec:
        PrivateLogisticRegression(1.0, method="output", lam=1e-3, bounds=bounds, classes=[0, 1], max_iter=1,
                                  random_state=0).fit(X, y)
    assert not any(re.search(r"\d\.\d", str(w.message)) for w in rec)


def _noise_norm(m, X, y):
    """‖b‖ recomputed from the private data (a test-only, non-private view): objective: the
    gradient of the unperturbed objective at the released θ is −b; output: ‖θ − θ*‖."""
    from scipy.special import expit

    Z = m.transform_rows(X)
    s = np.where(y == m.classes_[1], 1.0, -1.0)
    if m.method == "objective":
        grad = -(Z.T @ (s * expit(-s * (Z @ m.theta_)))) + (m.lambda_ + m.n_delta_) * m.theta_
        return float(np.linalg.norm(grad))
    return float(np.linalg.norm(m.theta_ - m._minimise(Z, s, m.lambda_, np.zeros(Z.shape[1]))))


def test_large_epsilon_matches_nonprivate_map_with_lambda_equal_one_over_C():
    X, y, bounds = make_gaussian_toy(500, 3, random_state=2)
    for lam in (0.5, 20.0):
        m = PrivateLogisticRegression(1e12, method="objective", lam=lam, bounds=bounds, random_state=0).fit(X, y)
        assert m.branch_ == 1
        ref = LogisticRegression(C=1 / lam, fit_intercept=False, tol=1e-12, max_iter=5000).fit(m.transform_rows(X), y)
        np.testing.assert_allclose(m.coef_, ref.coef_, rtol=1e-4, atol=1e-6)
        o = PrivateLogisticRegression(1e12, method="output", C=1 / lam, bounds=bounds, random_state=0).fit(X, y)
        np.testing.assert_allclose(o.coef_, ref.coef_, rtol=1e-4, atol=1e-6)


def test_objective_noise_enters_the_objective_and_budget_is_recorded():
    X, y, bounds = make_gaussian_toy(400, 2, random_state=3)
    acc = BudgetAccountant(1.0)
    m = PrivateLogisticRegression(0.5, method="objective", lam=0.01, bounds=bounds, accountant=acc,
                                  random_state=0).fit(X, y)
    assert m.branch_ == 2 and m.epsilon_prime_ == pytest.approx(0.25)
    assert m.lambda_ + m.n_delta_ == pytest.approx(0.25 / math.expm1(0.5 / 4))
    # the released θ is a stationary point of Σℓ + ½(λ + NΔ)‖θ‖² + bᵀθ, so the gradient of the
    # unperturbed part equals −b: the very vector drawn from the seeded generator (first draw)
    Z = m.transform_rows(X)
    s = np.where(y == 1, 1.0, -1.0)
    from scipy.special import expit
    grad = -(Z.T @ (s * expit(-s * (Z @ m.theta_)))) + (m.lambda_ + m.n_delta_) * m.theta_
    b = l2_noise(Z.shape[1], m.noise_scale_, random_state=np.random.default_rng(0))
    np.testing.assert_allclose(grad, -b, rtol=1e-4, atol=1e-6)
    assert list(m.ledger_["epsilon"]) == [0.5] and acc.spent == pytest.approx(0.5)


def test_binary_shapes_and_one_vs_rest():
    X, y, bounds = make_gaussian_toy(600, 2, random_state=0)
    m = PrivateLogisticRegression(5.0, lam=10.0, bounds=bounds, random_state=0).fit(X, np.where(y == 1, "b", "a"))
    assert m.decision_function(X).shape == (600,)
    P = m.predict_proba(X)
    assert P.shape == (600, 2) and np.allclose(P.sum(1), 1)
    assert set(m.predict(X)) <= {"a", "b"}
    np.testing.assert_array_equal(m.predict(X) == "b", m.decision_function(X) > 0)
    y3 = np.random.default_rng(0).integers(0, 3, 600)
    with pytest.raises(ValueError, match="OneVsRest"):
        PrivateLogisticRegression(1.0, bounds=bounds).fit(X, y3)
    ovr = OneVsRestClassifier(PrivateLogisticRegression(1.0, bounds=bounds, random_state=0)).fit(X, y3)
    assert ovr.predict_proba(X).shape == (600, 3) and ovr.decision_function(X).shape == (600, 3)


def test_toy_data_accuracy_near_bayes_with_enough_data():
    X, y, bounds = make_gaussian_toy(40_000, 2, random_state=0)
    m = PrivateLogisticRegression(1.0, lam=100.0, bounds=bounds, random_state=0).fit(X[:20_000], y[:20_000])
    assert m.score(X[20_000:], y[20_000:]) > 0.88      # Bayes accuracy 0.90


def test_bad_input_before_spend():
    X, y, bounds = make_gaussian_toy(100, 2, random_state=0)
    acc = BudgetAccountant(1.0)
    for kwargs, Xb, yb, match in [
        ({"epsilon": 0}, X, y, "epsilon"),
        ({"method": "input"}, X, y, "method"),
        ({"C": -1.0}, X, y, "C"),
        ({"lam": 0.0}, X, y, "lam"),
        ({"row_norm": "l1"}, X, y, "row_norm"),
        ({}, np.where(X > 0, np.nan, X), y, "NaN"),
        ({}, X, np.zeros_like(y), "class"),
        ({}, X, y[:-1], "inconsistent numbers of samples"),
        ({}, X, y + 0.5, "Unknown label type"),
        ({"classes": [0, 1, 2]}, X, y, "two labels"),
        ({"classes": [0, 1]}, X, y + 5, "not among the declared classes"),
        ({"bounds": (0, 0)}, X, y, "bounds"),
    ]:
        with pytest.raises((ValueError, TypeError), match=match):
            PrivateLogisticRegression(**{"epsilon": 0.5, "bounds": bounds, **kwargs}, accountant=acc).fit(Xb, yb)
    assert acc.ledger.empty


API_CHECKS = [ec.check_parameters_default_constructible, ec.check_get_params_invariance, ec.check_set_params,
              ec.check_no_attributes_set_in_init, ec.check_estimators_unfitted]
# data checks that apply to a binary classifier (the multiclass ones do not)
DATA_CHECKS = [ec.check_fit2d_predict1d, ec.check_fit_idempotent, ec.check_n_features_in,
               ec.check_estimators_nan_inf, ec.check_fit_score_takes_y, ec.check_dont_overwrite_parameters,
               ec.check_dict_unchanged, ec.check_estimators_pickle, ec.check_classifiers_one_label,
               ec.check_classifier_data_not_an_array, ec.check_methods_subset_invariance,
               ec.check_methods_sample_order_invariance, ec.check_fit_check_is_fitted,
               ec.check_estimators_dtypes, ec.check_decision_proba_consistency]


@pytest.mark.parametrize("check", API_CHECKS + DATA_CHECKS, ids=lambda c: c.__name__)
def test_sklearn_checks(check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        check("PrivateLogisticRegression", PrivateLogisticRegression(epsilon=10.0, random_state=0))


@pytest.mark.parametrize("method", ["output", "objective"])
def test_noise_norm_is_gamma_with_the_exact_scale(method):
    # output: ‖b‖ ~ Gamma(D, 2/(λε)) (sensitivity 2/λ); objective: ‖b‖ ~ Gamma(D, 2/ε′)
    X, y, bounds = make_gaussian_toy(60, 3, random_state=0)
    eps, lam = 0.5, 4.0
    scale = 2 / (lam * eps) if method == "output" else 2 / objective_perturbation_parameters(eps, lam)["epsilon_prime"]
    rng = np.random.default_rng(0)
    norms = []
    for _ in range(400):
        m = PrivateLogisticRegression(eps, method=method, lam=lam, bounds=bounds, random_state=rng).fit(X, y)
        assert m.noise_scale_ == pytest.approx(scale)
        norms.append(_noise_norm(m, X, y))
    norms = np.array(norms)
    assert abs(norms.mean() - 3 * scale) < 4 * math.sqrt(3 * scale ** 2 / norms.size)


def test_inputs_not_mutated_and_convergence_warning():
    X, y, bounds = make_gaussian_toy(300, 3, random_state=0)
    X0, y0 = X.copy(), y.copy()
    PrivateLogisticRegression(1.0, method="output", bounds=bounds, fit_intercept=True, random_state=0).fit(X, y)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)
    from sklearn.exceptions import ConvergenceWarning
    with pytest.warns(ConvergenceWarning, match="exact minimiser"):
        PrivateLogisticRegression(1.0, method="output", lam=1e-3, bounds=bounds, max_iter=1,
                                  random_state=0).fit(X, y)


def test_per_feature_bounds_of_the_wrong_length_are_rejected_before_spend():
    X, y, bounds = make_gaussian_toy(100, 3, random_state=0)
    acc = BudgetAccountant(1.0)
    with pytest.raises(ValueError, match="length 3"):
        PrivateLogisticRegression(0.5, bounds=(np.zeros(4), np.ones(4)), accountant=acc).fit(X, y)
    assert acc.ledger.empty


def test_grid_search_over_epsilon_and_method_cross_val_clone_pickle():
    # scikit-learn's tools, each fit's ε in its own ledger
    import pickle

    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV, cross_val_score, cross_validate

    X, y, bounds = make_gaussian_toy(400, 2, random_state=0)
    est = PrivateLogisticRegression(bounds=bounds, classes=[0, 1], random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        gs = GridSearchCV(est, {"epsilon": [0.5, 2.0], "method": ["output", "objective"]}, cv=3).fit(X, y)
        best = gs.best_estimator_
        assert best.ledger_["epsilon"].sum() == pytest.approx(gs.best_params_["epsilon"])
        assert cross_val_score(clone(est), X, y, cv=3).mean() > 0.6
        fitted = cross_validate(clone(est), X, y, cv=3, return_estimator=True)["estimator"]
        assert len({id(m.accountant_) for m in fitted}) == 3
        assert all(list(m.ledger_["epsilon"]) == [1.0] for m in fitted)
        c = clone(best)
        assert c.get_params()["method"] == best.method and not hasattr(c, "theta_")
        p = pickle.loads(pickle.dumps(best))
        np.testing.assert_array_equal(p.predict(X), best.predict(X))
        # DataFrames: names are checked at predict
        import pandas as pd

        frame = pd.DataFrame(X, columns=["a", "b"])
        m = clone(est).fit(frame, y)
        assert list(m.feature_names_in_) == ["a", "b"]
        with pytest.raises(ValueError, match="feature names"):
            m.predict(frame.rename(columns={"a": "z"}))
