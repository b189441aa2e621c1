"""End-to-end privacy audits of the models (README, "Audited end to end"): PrivateNaiveBayes, PrivateGaussianNB,
PrivateLogisticRegression (output and objective perturbation), SelectThenTrain and the showdown's
PrivateLRClassifier.

Each audit fits the estimator through its public API on two neighbouring tables (D' = D plus one
record of a rare class at a domain edge) many times and bounds ε from below
(tests/privacy_audit.py). The release is reduced to a small output on which the neighbours'
difference concentrates: a bucket of one released noisy count or coefficient around its values on
D and D' (the tail buckets carry the largest ratio). Each audit also runs against

* a broken variant with the noise divided (``weakened_noise(3)``: every sampler of
  dpexplore.mechanisms at 3ε; the logistic regressions draw their Gamma-norm noise with their own
  ``l2_noise``, weakened here by ÷20, see :func:`weakened_l2`: under add/remove one record moves
  the minimiser by at most ‖ℓ'‖/λ, so these designs realise ≈ ε/4 of the calibrated ε and
  ÷3 would stay below the claim), and
* the "label read from y" variant (``classes=None`` / no schema, the neighbour adds a class),

and must flag both. Run with ``-s`` to see one table row per audit.
"""
from __future__ import annotations

import warnings
from contextlib import contextmanager

import numpy as np
import pandas as pd
import pytest

from dpexplore.domain import Attribute, PrivacyLeakWarning, Schema
from dpexplore.models import PrivateLRClassifier
from dpexplore.models import PrivateGaussianNB, PrivateLogisticRegression, PrivateNaiveBayes, SelectThenTrain
from dpexplore.select.thesis import PrivateKSubsetSelector

from privacy_audit import assert_flagged, assert_private, long_audit, weakened_noise

EPS = 1.0


@pytest.fixture(autouse=True)
def _one_blas_thread():
    # thousands of tiny L-BFGS fits: threaded BLAS only adds overhead (×7 on a loaded 2-core box)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        yield


def _row(path: str, claimed: float, ok, broken, label=None) -> None:
    cells = [f"{path:<44}", f"claimed ε = {claimed:g}", f"lower bound {ok.epsilon_lower:6.3f}",
             f"broken (noise) {broken.epsilon_lower:6.3f}"]
    if label is not None:
        cells.append(f"label from y {label.epsilon_lower:6.3f}")
    print("AUDIT | " + " | ".join(cells))


def _bucket(value: float, centre: float) -> int:
    """Which of four public buckets around the count on D a released count falls in."""
    return int(np.digitize(value, [centre - 0.5, centre + 0.5, centre + 1.5]))


@contextmanager
def weakened_l2(factor: float = 10.0):
    """The logistic regressions' Gamma-norm noise with its scale divided by ``factor`` (while the
    accountant still records ε): the broken variant of Chaudhuri et al.'s mechanisms."""
    from dpexplore.models import logistic

    original = logistic.l2_noise

    def weak(dim, scale, **kwargs):
        return original(dim, scale / factor, **kwargs)

    logistic.l2_noise = weak
    try:
        yield
    finally:
        logistic.l2_noise = original


def _quiet(fn):
    def run(data, rng):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(data, rng)
    return run


# =========================================================================== Bernoulli NB
# D: 10 + 10 records of classes 0 and 1, one record of the rare class 2 (feature off);
# D': the same plus one class-2 record with the feature on (the domain edge x = 1).
NB_X = np.array([[1]] * 5 + [[0]] * 5 + [[1]] * 5 + [[0]] * 5 + [[0]])
NB_Y = np.array([0] * 10 + [1] * 10 + [2])
NB_D, NB_D2 = (NB_X, NB_Y), (np.vstack([NB_X, [[1]]]), np.append(NB_Y, 2))
NB_CENTRE = 0.0        # class 2's on-count of feature 0 on D (1 on D')


def _nb_run(classes):
    @_quiet
    def run(data, rng):
        m = PrivateNaiveBayes(EPS, classes=classes, random_state=rng).fit(*data)
        rare = list(m.classes_).index(2) if 2 in list(m.classes_) else 0
        return len(m.classes_), _bucket(m.noisy_on_counts_[rare, 0], NB_CENTRE)
    return run


def test_audit_naive_bayes():
    run = _nb_run([0, 1, 2])
    ok = assert_private(run, NB_D, NB_D2, EPS, n_samples=1500, seed=0)
    with weakened_noise(3):
        broken = assert_flagged(run, NB_D, NB_D2, EPS, n_samples=1500, seed=1)
    # label read from y: D without class 2, D' adds it → a 2-class vs a 3-class model
    D, D2 = (NB_X[:20], NB_Y[:20]), (NB_X[:21], NB_Y[:21])
    label = assert_flagged(_nb_run(None), D, D2, EPS, n_samples=200, seed=2)
    _row("PrivateNaiveBayes (noisy on/off counts)", EPS, ok, broken, label)


# =========================================================================== Gaussian NB
# public bounds [0, 1]; the budget is put mostly on the class counts (shares 8:1:1), whose
# noisy value for the rare class 1 is the audited output; D' adds a class-1 record at x = 1.
GNB_X = np.array([[0.5]] * 20 + [[0.5]] * 2)
GNB_Y = np.array([0] * 20 + [1] * 2)
GNB_D, GNB_D2 = (GNB_X, GNB_Y), (np.vstack([GNB_X, [[1.0]]]), np.append(GNB_Y, 1))


def _gnb_run(classes):
    @_quiet
    def run(data, rng):
        m = PrivateGaussianNB(EPS, classes=classes, bounds=(0.0, 1.0), shares=(8, 1, 1),
                              random_state=rng).fit(*data)
        return len(m.classes_), _bucket(m.class_count_[-1], 2.0)
    return run


def test_audit_gaussian_naive_bayes():
    run = _gnb_run([0, 1])
    ok = assert_private(run, GNB_D, GNB_D2, EPS, n_samples=1500, seed=0)
    with weakened_noise(3):
        broken = assert_flagged(run, GNB_D, GNB_D2, EPS, n_samples=1500, seed=1)
    D = (np.vstack([GNB_X, [[0.5]]]), np.append(GNB_Y, 0))
    D2 = (np.vstack([D[0], [[1.0]]]), np.append(D[1], 2))      # D plus one record of a third class
    label = assert_flagged(_gnb_run(None), D, D2, EPS, n_samples=200, seed=2)
    _row("PrivateGaussianNB (noisy class counts)", EPS, ok, broken, label)


# =========================================================================== logistic regression
# 1 feature, public bounds [−1, 1] (the identity map); D: 4 records of class 0 at x = 1 and one
# of the rare class 1 at x = −1; D': one more class-1 record at the edge x = 1 (misclassified by
# D's model, so its gradient is near the bound |ℓ'| ≤ 1). Output: a bucket of the released
# coefficient around its exact (ε → ∞) values on D and D'.
LR_X = np.array([[1.0]] * 4 + [[-1.0]])
LR_Y = np.array([0] * 4 + [1])
LR_D, LR_D2 = (LR_X, LR_Y), (np.vstack([LR_X, [[1.0]]]), np.append(LR_Y, 1))


def _lr_edges(method, lam):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, b = (PrivateLogisticRegression(1e9, method=method, lam=lam, bounds=(-1, 1), classes=[0, 1],
                                          random_state=0).fit(*d).coef_[0, 0] for d in (LR_D, LR_D2))
    lo, hi = min(a, b), max(a, b)
    return [lo - (hi - lo), (lo + hi) / 2, hi + (hi - lo)]


@pytest.mark.parametrize("method", ["output", "objective"])
def test_audit_logistic_regression(method):
    lam = 2.0
    edges = _lr_edges(method, lam)

    def make_run(classes):
        @_quiet
        def run(data, rng):
            try:
                m = PrivateLogisticRegression(EPS, method=method, lam=lam, bounds=(-1, 1), classes=classes,
                                              random_state=rng).fit(*data)
            except ValueError:
                return "refused", -1
            return str(m.classes_.tolist()), int(np.digitize(m.coef_[0, 0], edges))
        return run

    run = make_run([0, 1])
    ok = assert_private(run, LR_D, LR_D2, EPS, n_samples=400, seed=0)
    with weakened_l2(20):
        broken = assert_flagged(run, LR_D, LR_D2, EPS, n_samples=400, seed=1)
    # label read from y: D holds class 0 only (refused: "1 class"), D' adds a class-1 record (fitted)
    label = assert_flagged(make_run(None), (LR_X[:4], LR_Y[:4]), (LR_X[:5], LR_Y[:5]), EPS,
                           n_samples=100, seed=2)
    _row(f"PrivateLogisticRegression ({method}; ÷20)", EPS, ok, broken, label)


# =========================================================================== SelectThenTrain
# two identical binary features, k = 1 chosen by the k-subset mechanism (20% of ε), then NB on
# the chosen one (80%); D' adds a record of the rare class 1 with both features on. Output: the
# chosen feature and a bucket of class 1's noisy on-count.
ST_X = np.array([[1, 1]] * 6 + [[0, 0]] * 6 + [[0, 0]])
ST_Y = np.array([0] * 12 + [1])
ST_D, ST_D2 = (ST_X, ST_Y), (np.vstack([ST_X, [[1, 1]]]), np.append(ST_Y, 1))


def _st_run(classes):
    @_quiet
    def run(data, rng):
        m = SelectThenTrain(PrivateKSubsetSelector(k=1), PrivateNaiveBayes(), classes=classes, epsilon=EPS,
                            selection_share=0.2, random_state=rng).fit(*data)
        rare = len(m.classes_) - 1
        return (len(m.classes_), int(m.get_support(indices=True)[0]),
                _bucket(m.model_.noisy_on_counts_[rare, 0], 0.0))
    return run


def test_audit_select_then_train():
    run = _st_run([0, 1])
    ok = assert_private(run, ST_D, ST_D2, EPS, n_samples=1200, seed=0)
    with weakened_noise(3):
        broken = assert_flagged(run, ST_D, ST_D2, EPS, n_samples=1200, seed=1)
    D = (ST_X[:12], ST_Y[:12] % 2 + np.arange(12) % 2)          # classes 0 and 1 only
    D2 = (np.vstack([D[0], [[1, 1]]]), np.append(D[1], 2))      # plus one record of class 2
    label = assert_flagged(_st_run(None), D, D2, EPS, n_samples=200, seed=2)
    _row("SelectThenTrain (k-subset + NB)", EPS, ok, broken, label)


# =========================================================================== PrivateLRClassifier
LRC_SCHEMA = Schema([Attribute.numeric("x", 0.0, 1.0)], "label", ["0", "1"])
LRC_X = pd.DataFrame({"x": [1.0] * 4 + [0.0]})
LRC_Y = pd.Series(["0"] * 4 + ["1"])
LRC_D = (LRC_X, LRC_Y)
LRC_D2 = (pd.concat([LRC_X, pd.DataFrame({"x": [1.0]})], ignore_index=True),
          pd.concat([LRC_Y, pd.Series(["1"])], ignore_index=True))


def _lrc_run(schema, u, edges):
    @_quiet
    def run(data, rng):
        m = PrivateLRClassifier(schema, EPS, random_state=rng).fit(*data)
        return len(m.classes_), int(np.digitize(m.models_[0].theta_ @ u, edges))
    return run


def test_audit_private_lr_classifier():
    # 1 numeric column + intercept: θ is 2-D; the output is a bucket of θ projected on the
    # direction in which D' moves the exact minimiser (public: computed from the two tables)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, b = (PrivateLRClassifier(LRC_SCHEMA, 1e9, random_state=0).fit(*d).models_[0].theta_
                for d in (LRC_D, LRC_D2))
    u = (b - a) / np.linalg.norm(b - a)
    lo, hi = a @ u, b @ u
    edges = [lo - (hi - lo), (lo + hi) / 2, hi + (hi - lo)]
    run = _lrc_run(LRC_SCHEMA, u, edges)
    ok = assert_private(run, LRC_D, LRC_D2, EPS, n_samples=300, seed=0)
    with weakened_l2(20):
        broken = assert_flagged(run, LRC_D, LRC_D2, EPS, n_samples=300, seed=1)
    # no schema: classes read from y; D' adds a record of a third class
    D2 = (LRC_D2[0], pd.concat([LRC_Y, pd.Series(["2"])], ignore_index=True))
    label = assert_flagged(_lrc_run(None, u, edges), LRC_D, D2, EPS, n_samples=100, seed=2)
    _row("PrivateLRClassifier (one-vs-rest objective; ÷20)", EPS, ok, broken, label)


@long_audit
def test_audit_naive_bayes_long():
    run = _nb_run([0, 1, 2])
    res = assert_private(run, NB_D, NB_D2, EPS, n_samples=20_000, seed=10)
    print(f"AUDIT | PrivateNaiveBayes long: lower bound {res.epsilon_lower:.3f} at claimed ε = {EPS}")
