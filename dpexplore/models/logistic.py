"""Differentially private logistic regression: output and objective perturbation.

Chaudhuri, Monteleoni & Sarwate (2011), "Differentially private empirical risk minimization"
(JMLR 12), Algorithms 1 and 2, as used in the thesis's Chapter 4 (spec
thesis ch. 4; Chaudhuri et al. 2011). Conventions (thesis §4.2):

* labels ±1, loss ℓ(z) = log(1 + e^{−z}) with z = y·θᵀx, |ℓ'| ≤ 1, |ℓ''| ≤ c = 1/4;
* objective J(θ) = (1/N)·Σ ℓ + (λ/(2N))·‖θ‖², with the **thesis λ = N·Λ** (Λ = Chaudhuri's
  regulariser of the averaged objective); ``C`` is scikit-learn's convention, λ = 1/C;
* every row must satisfy ‖x‖₂ ≤ 1: features are mapped to [−1, 1] with **public** bounds (a
  :class:`~dpexplore.domain.PrivacyLeakWarning` when they are read from the data), then rows are
  scaled into the unit ball (``row_norm``); an intercept is a constant feature inside that bound
  and is regularised too.

Output perturbation (thesis §4.3, Thm 4.3.1): the minimiser has L2 sensitivity 2/λ; release
θ* + b with density ∝ exp(−(λε/2)·‖b‖), i.e. ‖b‖ ~ Gamma(D, 2/(λε)), uniform direction. The
release is a point of a public lattice gℤ^D (:func:`output_perturbation_lattice`), never the float
θ* + b, whose low bits depend on the data-dependent θ* (Mironov 2012).

Objective perturbation (thesis §4.4.1), in thesis units:
ε' = ε − log(1 + 2c/λ + c²/λ²); if ε' > 0 then Δ = 0, else NΔ = c/(e^{ε/4} − 1) − λ and ε' = ε/2;
minimise J(θ) + bᵀθ/N + (Δ/2)‖θ‖² with ‖b‖ ~ Gamma(D, 2/ε'). The exact branch boundary is
λ* = c/(e^{ε/2} − 1) (4.876 at ε = 0.1), not the thesis's λ > 1/(2ε) nor its Table 4.1: just
above λ*, ε' ≈ 0 and the noise explodes (the "λ cliff", thesis §4.4.4). In branch 2 the effective
regulariser is c/(e^{ε/4} − 1) (9.876 at ε = 0.1).
"""
from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validation import RandomState, check_epsilon, check_int, check_positive, check_random_state, rule_message
from ..budget import FIT_CALLER_STACKLEVEL, BudgetAccountant, RecordsSpends, prepare_accountant
from ..domain import Schema, check_schema, class_values, observed_attribute
from ..encode import design_matrix
from ..exceptions import PrivacyLeakWarning
from ..mechanisms import LATTICE_BITS, snap_to_lattice
from ._base import DPTags, check_bounds_pair, class_list, fit_input, resolve_bounds

__all__ = ["make_gaussian_toy", "l2_noise", "l1_noise", "output_perturbation_scale",
           "output_perturbation_lattice", "objective_perturbation_parameters", "objective_branch_boundary",
           "PrivateLogisticRegression", "PrivateLRClassifier"]

LOGISTIC_C = 0.25   # bound c on ℓ'' for the logistic loss (thesis §4.2)


#: public grid of the objective-perturbation release (a power of two below the solver's tolerance)
OBJECTIVE_GRID = 2.0 ** -20


def l2_noise(dim: int, scale: float, *, size: int | None = None, random_state: RandomState = None) -> np.ndarray:
    """Draw b ∈ R^dim with density ∝ exp(−‖b‖₂/scale): ‖b‖ ~ Gamma(dim, scale), uniform direction.

    The "Gamma-norm" sampler of Chaudhuri et al. (thesis §2.2.1; exact for the L2 norm only).
    ``size`` draws several vectors at once (shape (size, dim)).
    """
    rng = check_random_state(random_state)
    n = 1 if size is None else int(size)
    direction = rng.standard_normal((n, dim))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    out = direction * rng.gamma(shape=dim, scale=scale, size=(n, 1))
    return out[0] if size is None else out


def l1_noise(dim: int, scale: float, *, size: int | None = None, random_state: RandomState = None) -> np.ndarray:
    """Draw b with density ∝ exp(−‖b‖₁/scale): independent Laplace(scale) coordinates (thesis §2.2.1)."""
    rng = check_random_state(random_state)
    shape = (dim,) if size is None else (int(size), dim)
    return rng.laplace(0.0, scale, size=shape)


def output_perturbation_scale(epsilon: float, lam: float) -> float:
    """Gamma scale 2/(λε) of the output-perturbation noise norm (sensitivity 2/λ, thesis units)."""
    return 2.0 / (check_positive(lam, "lam") * check_epsilon(epsilon))


def output_perturbation_lattice(epsilon: float, lam: float, dim: int) -> tuple[float, float]:
    """Lattice spacing g and noise scale σ of output perturbation released on a public lattice.

    θ* is rounded to gℤ^D (g the largest power of two ≤ Δ/(2**20·√D), Δ = 2/λ: public), which
    moves it by at most g√D/2 in L2, so neighbours' rounded minimisers lie within Δ + g√D; the
    noise b (density ∝ exp(−‖b‖/σ), σ = (Δ + g√D)/ε, at most 1 + 2**-20 times the textbook
    2/(λε)) is rounded to gℤ^D as well, and g·(round(θ*/g) + round(b/g)) is released. The rounded
    noise has P[n] = ∫ over the cell of n of the density, and the density's ratio under a shift
    by d is at most exp(g‖d‖/σ) at every point, so the release is ε-DP (Chaudhuri et al. 2011,
    Alg. 1; thesis §4.3, Alg. 6 and Thm 4.3.1; with the rounding's ε correction as in the
    hardened Laplace sampler, :func:`dpexplore.mechanisms.hardened_laplace_parameters`); every
    released coefficient is a multiple of g, whatever the data.
    """
    delta = 2.0 / check_positive(lam, "lam")
    root = math.sqrt(int(dim))
    grid = 2.0 ** math.floor(math.log2(delta / (2 ** LATTICE_BITS * root)))
    return grid, (delta + grid * root) / check_epsilon(epsilon)


def objective_branch_boundary(epsilon: float, c: float = LOGISTIC_C) -> float:
    """λ* = c/(e^{ε/2} − 1): objective perturbation uses Δ = 0 (branch 1) exactly when λ > λ*."""
    return c / math.expm1(check_epsilon(epsilon) / 2)


def objective_perturbation_parameters(epsilon: float, lam: float, c: float = LOGISTIC_C) -> dict:
    """ε', NΔ, branch, noise-norm scale 2/ε' and effective λ of Chaudhuri et al.'s Algorithm 2.

    In thesis units (λ = N·Λ, so N·Δ is returned and N is not needed). Branch 1: ε' = ε −
    log(1 + 2c/λ + c²/λ²) > 0, Δ = 0. Branch 2: NΔ = c/(e^{ε/4} − 1) − λ, ε' = ε/2.
    """
    epsilon, lam = check_epsilon(epsilon), check_positive(lam, "lam")
    eps_prime = epsilon - math.log1p(2 * c / lam + (c / lam) ** 2)
    if eps_prime > 0:
        n_delta, branch = 0.0, 1
    else:
        n_delta, branch, eps_prime = c / math.expm1(epsilon / 4) - lam, 2, epsilon / 2
    return {"epsilon_prime": eps_prime, "n_delta": n_delta, "branch": branch,
            "noise_scale": 2.0 / eps_prime, "effective_lambda": lam + n_delta}


class PrivateLogisticRegression(DPTags, RecordsSpends, ClassifierMixin, BaseEstimator):
    """ε-DP binary logistic regression by output or objective perturbation (Chaudhuri et al. 2011).

    Parameters: ``epsilon``; ``method`` "objective" | "output"; ``lam`` (thesis λ = N·Λ, the
    precision of a Gaussian prior) or, when ``lam`` is None, λ = 1/``C``; ``bounds`` = public
    feature ranges (a Schema, a (lower, upper) pair of scalars or arrays, or None = read from the
    data with a PrivacyLeakWarning); ``row_norm`` "clip" (default: divide by max(1, ‖x‖)), "bound"
    (divide every row by the public maximum norm √D) or "unit" (divide by ‖x‖) — all per-record
    maps;
    ``fit_intercept`` adds a constant feature inside the norm bound. ``classes``: the two public
    labels [negative, positive] (the model is fitted even when y holds only one of them); None
    reads them from y with a PrivacyLeakWarning.

    Binary only (use scikit-learn's OneVsRestClassifier for more classes, with a budget per
    class); ``decision_function`` and ``predict_proba`` follow scikit-learn's binary shapes.
    Fitted: ``classes_``, ``coef_`` (1×D) and ``intercept_`` in the scaled feature space
    (these are the ε-DP release; output perturbation: multiples of ``grid_``, see
    :func:`output_perturbation_lattice`), ``lambda_``, ``noise_scale_``, ``sensitivity_`` and
    ``grid_`` (output) or
    ``epsilon_prime_``/``n_delta_``/``branch_`` (objective), ``accountant_``. Nothing computed
    from the data alone is kept: the noise vector's norm (which with θ reveals the exact
    minimiser's gradient) and the optimiser's iteration count are not stored: a pickle carries no private value.
    """

    _sklearn_expected_failures = {
        "check_non_transformer_estimators_n_iter": "n_iter_ (the optimiser's iteration count) is computed "
                                                   "from the private data alone and not covered by ε, so it "
                                                   "is not kept on the released model",
    }

    def __init__(self, epsilon: float = 1.0, *, method: str = "objective", classes: Any = None, C: float = 1.0,
                 lam: float | None = None, bounds: Any = None, row_norm: str = "clip",
                 fit_intercept: bool = False, tol: float = 1e-10, max_iter: int = 2000,
                 accountant: Any = None, random_state: RandomState = None):
        self.epsilon = epsilon
        self.method = method
        self.classes = classes
        self.C = C
        self.lam = lam
        self.bounds = bounds
        self.row_norm = row_norm
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.accountant = accountant
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()   # DPTags: non-deterministic unless seeded, dense
        tags.classifier_tags.multi_class = False   # binary (Chaudhuri et al.); use OneVsRestClassifier
        return tags

    # ------------------------------------------------------------------ preprocessing
    def _transform_rows(self, X: np.ndarray) -> np.ndarray:
        """Public map of rows into the unit ball: [−1, 1] per feature, intercept, row scaling."""
        Z = 2 * (np.clip(X, self.lower_, self.upper_) - self.lower_) / (self.upper_ - self.lower_) - 1
        if self.fit_intercept:
            Z = np.hstack([Z, np.ones((Z.shape[0], 1))])
        if self.row_norm == "bound":
            return Z / math.sqrt(Z.shape[1])
        norms = np.linalg.norm(Z, axis=1, keepdims=True)
        if self.row_norm == "clip":
            return Z / np.maximum(norms, 1.0)
        return Z / np.where(norms > 0, norms, 1.0)

    def _check_params(self) -> tuple[float, float]:
        epsilon = check_epsilon(self.epsilon)
        if self.method not in ("objective", "output"):
            raise ValueError(f"method must be 'objective' or 'output', got {self.method!r}")
        if self.row_norm not in ("bound", "clip", "unit"):
            raise ValueError(f"row_norm must be 'bound', 'clip' or 'unit', got {self.row_norm!r}")
        lam = 1.0 / check_positive(self.C, "C") if self.lam is None else check_positive(self.lam, "lam")
        check_positive(self.tol, "tol")
        check_int(self.max_iter, "max_iter", minimum=1)
        check_bounds_pair(self.bounds)
        classes = class_list(self)
        if classes is not None and len(list(classes)) != 2:
            raise ValueError(f"PrivateLogisticRegression is binary: classes must be two labels [negative, "
                             f"positive], got {list(classes)!r}; for more classes wrap it in "
                             "sklearn.multiclass.OneVsRestClassifier (and budget each class)")
        return epsilon, lam

    # ------------------------------------------------------------------ fitting
    def fit(self, X: Any, y: Any) -> "PrivateLogisticRegression":
        """Fit with the chosen perturbation; spends ``epsilon`` once."""
        epsilon, lam = self._check_params()
        Xa, classes, codes = fit_input(self, X, y, self.classes)
        if classes.size > 2:
            raise ValueError(f"Only binary classification is supported: y has {classes.size} classes. Wrap "
                             "PrivateLogisticRegression in sklearn.multiclass.OneVsRestClassifier (and budget "
                             "each class) or use PrivateLRClassifier")
        lo, hi, from_data = resolve_bounds(self.bounds, X, Xa)
        if from_data:
            warnings.warn("PrivateLogisticRegression without public bounds: the feature ranges used to "
                          "scale rows into the unit ball are read from the private data, so the "
                          "release is not differentially private (thesis §4.3: ‖x‖ ≤ 1)",
                          PrivacyLeakWarning, stacklevel=FIT_CALLER_STACKLEVEL)
            hi = np.where(hi > lo, hi, lo + 1.0)
        rng = self._start(epsilon)
        self.classes_ = classes
        self.lower_, self.upper_ = lo, hi
        Z = self._transform_rows(Xa)
        # the theorems need ‖x‖ ≤ 1 (Chaudhuri et al. 2011, §2). The largest row norm is data-dependent, so it is
        # checked here but not stored as a fitted attribute (it would leak).
        if float(np.max(np.linalg.norm(Z, axis=1))) > 1 + 1e-9:
            raise RuntimeError("internal error: a scaled row has norm > 1")
        s = np.where(codes == 1, 1.0, -1.0)   # the second declared class is the positive one
        N, D = Z.shape
        self.lambda_ = lam
        if self.method == "output":
            eps = self._spend(epsilon, f"logistic regression: output perturbation (λ={lam:g})")
            theta = self._minimise(Z, s, lam, np.zeros(D))
            self.sensitivity_ = 2.0 / lam                       # Chaudhuri et al. Cor. 8 (thesis Thm 4.3.1)
            self.grid_, self.noise_scale_ = output_perturbation_lattice(eps, lam, D)
            noise = l2_noise(D, self.noise_scale_, random_state=rng)
            # θ* and b each rounded to the public lattice gℤ^D: the sum of two multiples of the
            # power of two g is exact, so the release is a lattice point fixed by integers
            theta = (snap_to_lattice(theta, resolution=self.grid_)
                     + snap_to_lattice(noise, resolution=self.grid_))
        else:
            eps = self._spend(epsilon, f"logistic regression: objective perturbation (λ={lam:g})")
            par = objective_perturbation_parameters(eps, lam)
            self.epsilon_prime_, self.n_delta_, self.branch_ = par["epsilon_prime"], par["n_delta"], par["branch"]
            self.noise_scale_ = par["noise_scale"]
            noise = l2_noise(D, self.noise_scale_, random_state=rng)
            # argmin Σℓ + ½(λ + NΔ)‖θ‖² + bᵀθ  (= N × the perturbed objective of Alg. 2)
            # The solver returns a float that depends on the data beyond the DP argmin (Chaudhuri et
            # al. 2011, Alg. 2 is stated in exact arithmetic): snapping it to the public grid
            # OBJECTIVE_GRID (below the solver's tolerance) releases a lattice point, a
            # post-processing of the argmin, as for output perturbation.
            theta = snap_to_lattice(self._minimise(Z, s, lam + self.n_delta_, noise), resolution=OBJECTIVE_GRID)
        # ‖noise‖ is not stored: with θ it gives the exact minimiser's gradient
        self.theta_ = theta
        if self.fit_intercept:
            self.coef_, self.intercept_ = theta[None, :-1], np.array([theta[-1]])
        else:
            self.coef_, self.intercept_ = theta[None, :], np.array([0.0])
        return self

    def _minimise(self, Z: np.ndarray, s: np.ndarray, reg: float, linear: np.ndarray) -> np.ndarray:
        """argmin_θ Σ log(1 + e^{−s·θᵀz}) + (reg/2)‖θ‖² + linearᵀθ (strongly convex; L-BFGS)."""
        def f(theta):
            m = s * (Z @ theta)
            value = np.logaddexp(0.0, -m).sum() + 0.5 * reg * theta @ theta + linear @ theta
            grad = -(Z.T @ (s * expit(-m))) + reg * theta + linear
            return value, grad

        res = minimize(f, np.zeros(Z.shape[1]), jac=True, method="L-BFGS-B",
                       options={"maxiter": self.max_iter, "gtol": self.tol, "ftol": 1e-15})
        # the guarantees assume the exact minimiser (thesis §4.3). Strong convexity (reg) bounds
        # the distance to it by ‖∇‖/reg; warn when that exceeds 1% of the sensitivity 2/λ. The
        # norm itself (a true, data-dependent number) is neither stored nor printed.
        if float(np.linalg.norm(f(res.x)[1])) > 0.02:
            warnings.warn("the optimiser stopped before a stationary point; raise max_iter: the "
                          "privacy analysis assumes the exact minimiser",
                          ConvergenceWarning, stacklevel=3)
        return res.x

    # ------------------------------------------------------------------ prediction
    def _check_X(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "theta_")
        return validate_data(self, X, reset=False, dtype=np.float64)

    def transform_rows(self, X: Any) -> np.ndarray:
        """The rows as the model sees them: public scaling into the unit ball (post-processing)."""
        return self._transform_rows(self._check_X(X))

    def decision_function(self, X: Any) -> np.ndarray:
        """θᵀx on the scaled rows; > 0 predicts ``classes_[1]``. Shape (n_samples,)."""
        return self.transform_rows(X) @ self.theta_

    def predict_proba(self, X: Any) -> np.ndarray:
        """[P(classes_[0]), P(classes_[1])] = [1 − σ(θᵀx), σ(θᵀx)]."""
        p = expit(self.decision_function(X))
        return np.column_stack([1 - p, p])

    def predict_log_proba(self, X: Any) -> np.ndarray:
        m = self.decision_function(X)
        return np.column_stack([-np.logaddexp(0, m), -np.logaddexp(0, -m)])

    def predict(self, X: Any) -> np.ndarray:
        """Class with the larger posterior (θᵀx > 0 → ``classes_[1]``)."""
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(int)]



class PrivateLRClassifier(RecordsSpends, ClassifierMixin, BaseEstimator):
    """Objective-perturbation logistic regression (Chaudhuri et al. 2011, Alg. 2) on the public
    encoding of the table (:func:`dpexplore.encode.design_matrix`): numeric columns scaled by
    their public bounds into [0, 1], categoricals one-hot over their public categories (at predict
    time, numbers outside the bounds are clipped and unknown categories get no indicator; ``fit``
    refuses them, as every method does). Binary: one model at ε; q > 2 classes: one-vs-rest,
    ε/q each (sequential composition on the same rows, thesis §2.3.2), all spent from one
    accountant (``accountant`` or a fresh one): ``ledger_`` and ``epsilon_spent_`` after fit.

    Every class of the schema gets its one-vs-rest model, whether or not it occurs in the
    training rows (a class with no rows gets a model fitted on an all-negative target, noise
    included): refusing when a class is absent would reveal that it is, a data-dependent answer
    no ε pays for. ``schema=None`` infers the domain and the classes from the data with a
    :class:`~dpexplore.exceptions.PrivacyLeakWarning` (for scikit-learn's tools; not DP). X may
    be a DataFrame or an array (columns ``x0, x1, …``, or the schema's predictors in order).
    Predictions come back in the type of the training labels. Fitted: ``schema_``, ``models_``
    (one :class:`PrivateLogisticRegression` per one-vs-rest target), ``classes_``.
    """

    def __init__(self, schema: Schema | None = None, epsilon: float = 1.0, random_state: RandomState = None,
                 C: float = 1.0, accountant: BudgetAccountant | None = None):
        self.schema = schema
        self.epsilon = epsilon
        self.random_state = random_state
        self.C = C
        self.accountant = accountant

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None   # fresh noise on every unseeded fit
        tags.input_tags.sparse = False
        return tags

    def _frame(self, X: Any, y: Any = None, *, reset: bool) -> tuple[pd.DataFrame, Any]:
        """scikit-learn's validation (shape, names, NaN, sparse, complex, empty; y's length), then
        X as a DataFrame named like the schema's predictors."""
        frame = isinstance(X, pd.DataFrame)
        kwargs = {"dtype": None if frame else "numeric"}
        if reset:
            Xv, yv = validate_data(self, X, y, **kwargs)
        else:
            Xv, yv = validate_data(self, X, reset=False, **kwargs), None
        if frame:
            if not all(isinstance(c, str) for c in X.columns):   # e.g. integer column labels
                X = X.set_axis([str(c) for c in X.columns], axis=1)
            return X, yv
        schema = self.schema if reset else self.schema_
        if isinstance(schema, Schema) and not (reset and self.schema is None):
            if Xv.shape[1] != len(schema.predictors):
                raise ValueError(f"X has {Xv.shape[1]} columns, the schema has {len(schema.predictors)} "
                                 f"predictors {schema.predictors}: pass a DataFrame with those columns")
            names = schema.predictors
        else:
            names = [f"x{i}" for i in range(Xv.shape[1])]
        return pd.DataFrame(Xv, columns=names), yv

    @staticmethod
    def _infer_schema(X: pd.DataFrame, y: np.ndarray) -> Schema:
        """The domain read from the data (NOT private): observed bounds, categories and classes."""
        labels = np.unique(y)
        if labels.size < 2:
            raise ValueError(rule_message("one_class", "y", classes=labels.size))
        attrs = [observed_attribute(col, X[col]) for col in X.columns]
        warnings.warn("PrivateLRClassifier without a schema: the numeric bounds, category lists and class "
                      "labels are read from the private data, which no ε covers. Pass a Schema with the "
                      "public domain.", PrivacyLeakWarning, stacklevel=FIT_CALLER_STACKLEVEL + 1)
        target = "__target__"
        return Schema(attrs, target, [str(c) for c in labels])

    def fit(self, X: Any, y: Any) -> "PrivateLRClassifier":
        """Validate everything (before any spend), then fit one model per declared class."""
        if self.schema is not None:
            check_schema(self.schema, taxonomies=False)
        check_epsilon(self.epsilon)
        check_positive(self.C, "C")
        if y is None:
            raise ValueError("requires y to be passed, but the target y is None (PrivateLRClassifier is a classifier)")
        frame, yv = self._frame(X, y, reset=True)
        check_classification_targets(yv)
        if self.schema is None:
            schema = self._infer_schema(frame, yv)
        else:
            schema = self.schema
            # X against the public domain; y only against the declared classes (no "every class
            # occurs" or "two classes occur" refusal: that would depend on the private rows)
            schema.validate(frame[schema.predictors] if set(schema.predictors) <= set(frame.columns) else frame)
        codes = schema.encode_target(yv)       # a label outside the declared classes: refused
        rng = check_random_state(self.random_state)
        accountant = prepare_accountant(self.epsilon, self.accountant)  # raises before any spend
        self.schema_ = schema
        Z = design_matrix(frame, schema)
        q = len(schema.classes)
        targets = [1] if q == 2 else list(range(q))
        parts = accountant.split([1.0] * len(targets), total=float(self.epsilon))
        bounds = (np.zeros(Z.shape[1]), np.ones(Z.shape[1]))
        self._open_ledger(accountant)
        # one-vs-rest over every declared class (Chaudhuri et al. 2011, Alg. 2 per part, ε/q each)
        self.models_ = [PrivateLogisticRegression(epsilon=eps, C=self.C, bounds=bounds, fit_intercept=True,
                                                  classes=[0, 1], accountant=accountant, random_state=rng)
                        .fit(Z, (codes == c).astype(int)) for c, eps in zip(targets, parts)]
        self._close_ledger()
        self.classes_ = class_values(list(schema.classes), yv)
        return self

    def predict_proba(self, X: Any) -> np.ndarray:
        """Each one-vs-rest model's positive probability, normalised over the classes (q > 2)."""
        check_is_fitted(self, "models_")
        frame, _ = self._frame(X, reset=False)
        Z = design_matrix(frame, self.schema_)
        pos = np.column_stack([m.predict_proba(Z)[:, 1] for m in self.models_])
        if len(self.classes_) == 2:
            return np.column_stack([1 - pos[:, 0], pos[:, 0]])
        return pos / np.clip(pos.sum(axis=1, keepdims=True), 1e-300, None)

    def predict(self, X: Any) -> np.ndarray:
        """The class of largest probability."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]


def make_gaussian_toy(n_samples: int, n_features: int, *, margin: float = 4.0,
                      random_state: RandomState = None) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """The thesis's toy data (thesis App. A.7): N(0, I_D) vs N(a·1, I_D), a = √(4/D)·Φ⁻¹(0.9).

    Balanced classes (labels 0/1, alternating before shuffling); the Bayes classifier scores 90%.
    Returns (X, y, bounds) with public per-feature bounds [−margin, a + margin] (known from the
    generator, not read from the data; values outside are clipped by the models).
    """
    from scipy.stats import norm

    n = int(n_samples)
    d = int(n_features)
    if n < 2 or d < 1:
        raise ValueError("n_samples must be ≥ 2 and n_features ≥ 1")
    rng = check_random_state(random_state)
    a = math.sqrt(4.0 / d) * norm.ppf(0.9)
    y = rng.permutation(np.arange(n) % 2)
    X = rng.standard_normal((n, d)) + a * y[:, None]
    return X, y, (np.full(d, -margin), np.full(d, a + margin))
