"""Differentially private Naive Bayes (thesis seed 002, Chapter 3) and its binarising front end.

Spec: specs/feature-selection-nb-lr.md §3 and traps 2–5.

* :class:`PrivateNaiveBayes` — Bernoulli NB as the thesis's Algorithm 1 (corrected, §3.3): the
  2·C·D on/off counts get independent Laplace(D/ε) noise (adding one record changes exactly one of
  the two counts of every feature in its own class, so Δ = D, §3.2), are clamped at the
  ``clamp_quantile`` quantile of that noise (post-processing, eq. 3.15), smoothed with a
  pseudo-count, and the class priors are post-processed from the same noisy counts (no extra ε).
* :class:`PrivateGaussianNB` — Gaussian NB for numeric features with **public** bounds (the thesis
  leaves real-valued DP-NB as future work, §12): noisy per-class counts, sums and sums of squares
  of the features rescaled to [−1, 1].
* :class:`Binarizer` — public one-hot encoding of a :class:`~dpexplore.domain.Schema` table:
  categoricals over the schema's categories, numerics over public cut points (trap 5: no cut
  point or category list is read from the data).
"""
from __future__ import annotations

import math
import numbers
import warnings
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validation import RandomState, check_epsilon, check_fraction_weights
from ..domain import Attribute, PrivacyLeakWarning, Schema, declared_classes
from ..mechanisms import laplace, laplace_scale
from ..budget import RecordsSpends

__all__ = ["laplace_quantile", "Binarizer", "PrivateNaiveBayes", "PrivateGaussianNB"]


def laplace_quantile(q: float, scale: float) -> float:
    """The q-quantile of Laplace(0, b): b·ln(2q) below the median, −b·ln(2(1−q)) above (§3.3 line 3)."""
    if not 0 < q < 1:
        raise ValueError(f"quantile must be in (0, 1), got {q!r}")
    return scale * math.log(2 * q) if q < 0.5 else -scale * math.log(2 * (1 - q))


# =========================================================================== shared input checks
def _fit_input(est: BaseEstimator, X: Any, y: Any, classes: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X as floats, classes_, class codes): scikit-learn's validation, then the declared classes.

    ``validate_data`` refuses sparse, complex, empty, NaN and 2-D y with scikit-learn's messages
    and sets ``n_features_in_`` / ``feature_names_in_``; ``check_classification_targets`` refuses
    regression targets. Classes come from ``classes`` (public), or from y with a
    :class:`~dpexplore.domain.PrivacyLeakWarning` (:func:`~dpexplore.domain.declared_classes`).
    Everything here runs before the first spend.
    """
    if y is None:
        raise ValueError(f"requires y to be passed, but the target y is None ({type(est).__name__} is a classifier)")
    Xa, ya = validate_data(est, X, y, dtype=np.float64)
    check_classification_targets(ya)
    values, codes = declared_classes(ya, est.classes, type(est).__name__)
    if values.size < 2:
        raise ValueError(f"y has {values.size} class: a classifier needs at least 2 (declare them with classes=[...])")
    return Xa, values, codes


def _class_list(est: Any) -> Any:
    """``classes`` checked early (before any spend): None or at least two distinct labels."""
    classes = getattr(est, "classes", None)
    if classes is None:
        return None
    if isinstance(classes, (str, bytes)) or not hasattr(classes, "__iter__"):
        raise TypeError(f"classes must be a list of labels, got {type(classes).__name__}")
    text = [str(c) for c in classes]
    if len(text) < 2 or len(set(text)) != len(text):
        raise ValueError(f"classes must hold at least two distinct labels, got {list(classes)!r}")
    return classes


class _DPTags:
    """Truthful scikit-learn tags: dense numeric input, randomised unless seeded."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None   # fresh noise on every unseeded fit
        tags.input_tags.sparse = False
        return tags


class _NBBase(_DPTags, RecordsSpends, ClassifierMixin, BaseEstimator):
    """predict / predict_proba from a joint log-likelihood; ledger of the last fit."""

    def _check_X(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "classes_")
        return validate_data(self, X, reset=False, dtype=np.float64)

    def predict_log_proba(self, X: Any) -> np.ndarray:
        jll = self._joint_log_likelihood(self._check_X(X))
        return jll - logsumexp(jll, axis=1, keepdims=True)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Posterior class probabilities (post-processing of the released parameters)."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X: Any) -> np.ndarray:
        """argmax_c of the log posterior."""
        jll = self._joint_log_likelihood(self._check_X(X))
        return self.classes_[np.argmax(jll, axis=1)]



# =========================================================================== Bernoulli NB
class PrivateNaiveBayes(_NBBase):
    """ε-DP Bernoulli Naive Bayes on 0/1 features: thesis Algorithm 1 (spec §3.3).

    Noise Laplace(D/ε) on each of the 2·C·D on/off counts (Δ = D = number of features given to
    ``fit``: after feature selection that is k, trap 2); clamp at t = the ``clamp_quantile``
    quantile of that noise (0.65 → 0.357·D/ε; 0.5 → 0; must be ≥ 0.5 so counts stay ≥ 0);
    θ_dc = (Ñ¹+a)/(Ñ¹+Ñ⁰+2a) with a = ``pseudo_count``; Ñ_c = mean_d(Ñ¹_dc+Ñ⁰_dc) and
    π_c = (Ñ_c+a)/(Σ Ñ + C·a). Noise is never resampled (trap 3).

    ``classes``: the public class labels (every declared class gets its noisy counts, whether
    or not it occurs in y); None reads them from y with a PrivacyLeakWarning. ``binarize``: None
    (X must hold only 0/1) or a public cut point: ``X > binarize`` becomes 1 (a per-record map,
    as scikit-learn's BernoulliNB; never a cut point read from the data).

    Fitted: ``classes_``, ``theta_`` (C×D), ``class_prior_``, ``noisy_on_counts_``,
    ``noisy_off_counts_`` (clamped), ``sensitivity_``, ``noise_scale_``, ``clamp_threshold_``,
    ``clamped_fraction_`` (all post-processing of the noisy counts), ``accountant_``.
    """

    def __init__(self, epsilon: float = 1.0, *, classes: Any = None, binarize: float | None = None,
                 clamp_quantile: float = 0.65, pseudo_count: float = 1.0,
                 accountant: Any = None, random_state: RandomState = None):
        self.epsilon = epsilon
        self.classes = classes
        self.binarize = binarize
        self.clamp_quantile = clamp_quantile
        self.pseudo_count = pseudo_count
        self.accountant = accountant
        self.random_state = random_state

    @classmethod
    def _sklearn_check_instance(cls) -> "PrivateNaiveBayes":
        # the checks pass real-valued (standardised) X: a public cut point at 0
        return cls(binarize=0.0)

    def _check_params(self) -> tuple[float, float, float]:
        """(ε, clamp quantile, pseudo-count), validated; raises before anything is spent."""
        epsilon = check_epsilon(self.epsilon)
        q = self.clamp_quantile
        if isinstance(q, bool) or not isinstance(q, numbers.Real) or not 0.5 <= q < 1:
            raise ValueError(f"clamp_quantile must be in [0.5, 1) so that clamped counts are ≥ 0, got {q!r}")
        a = self.pseudo_count
        if isinstance(a, bool) or not isinstance(a, numbers.Real) or not (np.isfinite(a) and a > 0):
            raise ValueError(f"pseudo_count must be a finite number > 0, got {a!r}")
        b = self.binarize
        if b is not None and (isinstance(b, bool) or not isinstance(b, numbers.Real) or not np.isfinite(b)):
            raise ValueError(f"binarize must be None (X holds 0/1) or a finite public cut point, got {b!r}")
        _class_list(self)
        return epsilon, float(q), float(a)

    def _binary(self, X: np.ndarray) -> np.ndarray:
        """0/1 features: the public rule X > ``binarize``, or X itself checked to be 0/1."""
        if self.binarize is not None:
            return (X > self.binarize).astype(float)
        if not np.isin(X, (0.0, 1.0)).all():
            raise ValueError("X must hold only 0/1 values (binarize=None): binarise numeric and categorical "
                             "columns with public cut points first (dpexplore.models.naive_bayes.Binarizer), "
                             "or pass a public cut point binarize=t (X > t becomes 1)")
        return X

    def _check_X(self, X: Any) -> np.ndarray:
        return self._binary(super()._check_X(X))

    def fit(self, X: Any, y: Any) -> "PrivateNaiveBayes":
        """Release the noisy on/off counts (spends ``epsilon`` once) and post-process them."""
        epsilon, q, a = self._check_params()
        Xa, classes, codes = _fit_input(self, X, y, self.classes)
        Xa = self._binary(Xa)
        rng = self._start(epsilon)
        C, D = classes.size, Xa.shape[1]
        self.classes_ = classes
        # Alg. 1 lines 5–6: on-counts and off-counts per declared class (absent classes included:
        # their counts are 0 + noise, released like any other, §3.2)
        class_sizes = np.bincount(codes, minlength=C).astype(float)
        on = np.eye(C)[codes].T @ Xa          # (C, D) on-counts, exact integers in float
        off = class_sizes[:, None] - on
        # §3.2: one added record changes one of (on, off) for each of the D features: Δ = D
        self.sensitivity_ = float(D)
        eps = self._spend(epsilon, f"naive Bayes: on/off counts (Δ = {D})")
        self.noise_scale_ = laplace_scale(epsilon=eps, sensitivity=self.sensitivity_)
        noisy = laplace(np.stack([on, off]), epsilon=eps, sensitivity=self.sensitivity_, random_state=rng)
        # Alg. 1 lines 3, 7–8: clamp at a quantile of the noise (post-processing, eq. 3.15)
        self.clamp_threshold_ = laplace_quantile(q, self.noise_scale_) if q > 0.5 else 0.0
        self.clamped_fraction_ = float(np.mean(noisy < self.clamp_threshold_))
        noisy = np.maximum(noisy, self.clamp_threshold_)
        self.noisy_on_counts_, self.noisy_off_counts_ = noisy[0], noisy[1]
        # line 9: add-one (pseudo-count) smoothing; line 10–11: priors from the same counts
        self.theta_ = (noisy[0] + a) / (noisy[0] + noisy[1] + 2 * a)
        class_estimate = (noisy[0] + noisy[1]).mean(axis=1)
        self.class_count_ = class_estimate
        self.class_prior_ = (class_estimate + a) / (class_estimate.sum() + C * a)
        return self

    def _joint_log_likelihood(self, X: np.ndarray) -> np.ndarray:
        log_t, log_1t = np.log(self.theta_), np.log1p(-self.theta_)
        return np.log(self.class_prior_) + X @ log_t.T + (1 - X) @ log_1t.T


# =========================================================================== Gaussian NB
def _check_bounds_pair(bounds: Any) -> None:
    """Early check of ``bounds`` given as a (lower, upper) pair: finite and lower < upper.

    Needs no data (the number of features is checked later), so it can run before any spend.
    """
    if bounds is None or isinstance(bounds, Schema):
        return
    try:
        lo, hi = bounds
        lo, hi = np.broadcast_arrays(np.asarray(lo, dtype=float), np.asarray(hi, dtype=float))
    except (TypeError, ValueError):
        raise ValueError("bounds must be a Schema or a pair (lower, upper) of scalars or per-feature arrays") from None
    if lo.ndim > 1 or not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)) and np.all(lo < hi)):
        raise ValueError("bounds need finite lower < upper for every feature")


def _resolve_bounds(bounds: Any, X: Any, a: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """(lower, upper, from_data): public bounds from a Schema, a (lower, upper) pair, or the data."""
    D = a.shape[1]
    if bounds is None:
        return a.min(axis=0), a.max(axis=0), True
    if isinstance(bounds, Schema):
        if not isinstance(X, pd.DataFrame):
            raise TypeError("bounds given as a Schema need X as a DataFrame with its column names")
        names = bounds.check_columns(list(X.columns), "X columns")
        lo, hi = [], []
        for name in names:
            attr = bounds.attributes[name]
            if attr.kind != "numeric":
                raise ValueError(f"column {name!r} is categorical: one-hot it with Binarizer first")
            lo.append(attr.lower)
            hi.append(attr.upper)
        return np.array(lo), np.array(hi), False
    try:
        lo, hi = bounds
    except (TypeError, ValueError):
        raise ValueError("bounds must be a Schema or a pair (lower, upper) of scalars or per-feature arrays") from None
    try:
        lo = np.broadcast_to(np.asarray(lo, dtype=float), (D,)).copy()
        hi = np.broadcast_to(np.asarray(hi, dtype=float), (D,)).copy()
    except ValueError:
        raise ValueError(f"bounds must be scalars or arrays of length {D} (one per feature of X), got "
                         f"shapes {np.shape(lo)} and {np.shape(hi)}") from None
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)) and np.all(lo < hi)):
        raise ValueError("bounds need finite lower < upper for every feature")
    return lo, hi, False


class PrivateGaussianNB(_NBBase):
    """ε-DP Gaussian Naive Bayes for numeric features with public bounds (spec §12 extension).

    Features are clipped to the public ``bounds`` and rescaled to [−1, 1] (a per-record map).
    Under add/remove-one a record changes one class's count by 1, its D sums by ≤ 1 each (L1 ≤ D)
    and its D sums of squares by ≤ 1 each (L1 ≤ D). ``budget_split`` divides ε between the
    three releases (Laplace each); means and variances are post-processed, with variances floored
    at ``var_floor`` (in the rescaled units). ``bounds=None`` reads them from the data with a
    :class:`~dpexplore.domain.PrivacyLeakWarning` (not DP). ``classes``: the public class labels
    (a declared class absent from y is still a class of the model, from its noisy statistics);
    None reads them from y with a PrivacyLeakWarning.
    """

    def __init__(self, epsilon: float = 1.0, *, classes: Any = None, bounds: Any = None, var_floor: float = 0.01,
                 budget_split: Sequence[float] = (1.0, 1.0, 1.0), accountant: Any = None,
                 random_state: RandomState = None):
        self.epsilon = epsilon
        self.classes = classes
        self.bounds = bounds
        self.var_floor = var_floor
        self.budget_split = budget_split
        self.accountant = accountant
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # three noisy statistics per class share ε: at the default ε = 1 on a few hundred rows the
        # training accuracy can sit just below the checks' fixed 0.83 (0.82 on their blobs)
        tags.classifier_tags.poor_score = True
        return tags

    def _check_params(self) -> tuple[float, np.ndarray, float]:
        """(ε, budget weights, variance floor), validated; raises before anything is spent."""
        epsilon = check_epsilon(self.epsilon)
        weights = check_fraction_weights(self.budget_split, "budget_split")
        if weights.size != 3:
            raise ValueError("budget_split needs three weights: counts, sums, sums of squares")
        vf = self.var_floor
        if isinstance(vf, bool) or not isinstance(vf, numbers.Real) or not (np.isfinite(vf) and vf > 0):
            raise ValueError(f"var_floor must be a finite number > 0, got {vf!r}")
        _check_bounds_pair(self.bounds)
        _class_list(self)
        return epsilon, weights, float(vf)

    def fit(self, X: Any, y: Any) -> "PrivateGaussianNB":
        """Release noisy counts, sums and sums of squares per class (three spends)."""
        epsilon, weights, vf = self._check_params()
        Xa, classes, codes = _fit_input(self, X, y, self.classes)
        lo, hi, from_data = _resolve_bounds(self.bounds, X, Xa)
        if from_data:
            warnings.warn("PrivateGaussianNB without public bounds: the feature ranges are read "
                          "from the private data, so the release is not differentially private",
                          PrivacyLeakWarning, stacklevel=2)
            hi = np.where(hi > lo, hi, lo + 1.0)
        rng = self._start(epsilon)
        C, D = classes.size, Xa.shape[1]
        self.classes_ = classes
        self.lower_, self.upper_ = lo, hi
        Z = self._scale(Xa)
        counts = np.bincount(codes, minlength=C).astype(float)
        onehot = np.eye(C)[codes].T
        sums, squares = onehot @ Z, onehot @ Z ** 2
        e_count, e_sum, e_sq = self.accountant_.split(weights, total=epsilon)
        e_count = self._spend(e_count, "Gaussian NB: class counts (Δ = 1)")
        e_sum = self._spend(e_sum, f"Gaussian NB: sums (Δ = {D})")
        e_sq = self._spend(e_sq, f"Gaussian NB: sums of squares (Δ = {D})")
        n = np.maximum(laplace(counts, epsilon=e_count, sensitivity=1.0, random_state=rng), 1.0)
        s = laplace(sums, epsilon=e_sum, sensitivity=float(D), random_state=rng)
        sq = laplace(squares, epsilon=e_sq, sensitivity=float(D), random_state=rng)
        mean = np.clip(s / n[:, None], -1.0, 1.0)
        var = np.clip(sq / n[:, None] - mean ** 2, vf, 1.0)
        self.class_count_ = n
        self.class_prior_ = n / n.sum()
        self.theta_, self.var_ = mean, var   # in the rescaled [−1, 1] units
        return self

    def _scale(self, X: np.ndarray) -> np.ndarray:
        return 2 * (np.clip(X, self.lower_, self.upper_) - self.lower_) / (self.upper_ - self.lower_) - 1

    def _joint_log_likelihood(self, X: np.ndarray) -> np.ndarray:
        Z = self._scale(X)
        ll = -0.5 * (np.log(2 * np.pi * self.var_)[None, :, :]
                     + (Z[:, None, :] - self.theta_[None, :, :]) ** 2 / self.var_[None, :, :]).sum(axis=2)
        return np.log(self.class_prior_) + ll


# =========================================================================== Binarizer
class Binarizer(TransformerMixin, BaseEstimator):
    """One-hot encode a table using only its public schema (spec trap 5; thesis App. A.8).

    Categorical columns: one 0/1 column per category of the schema (``"attr=value"``). Numeric
    columns: one 0/1 column per interval between public cut points (``"attr=[lo, hi)"``, last
    interval closed): ``cut_points[attr]`` if given, else the leaves of the attribute's taxonomy,
    else ``n_bins`` equal-width intervals over its public bounds. ``depths[attr]`` generalises an
    attribute first to that level of its public taxonomy (e.g. native country → region), which
    removes many near-empty indicator columns. ``fit`` reads no data values, only column names;
    ``transform`` rejects values outside the public domain. ``schema=None`` infers the domain
    from ``X`` in ``fit`` (observed min/max and categories, with a PrivacyLeakWarning: not DP),
    so the transformer also works inside scikit-learn's tools. X may be a DataFrame or an array
    (columns ``x0, x1, …`` without a schema, the schema's columns in order with one).
    Fitted: ``schema_`` (the schema used), ``columns_``, ``edges_``, ``feature_names_out_``.
    """

    def __init__(self, schema: Schema | None = None, *, columns: Sequence[str] | None = None,
                 cut_points: Mapping[str, Sequence[float]] | None = None, n_bins: int | None = None,
                 depths: Mapping[str, int] | None = None):
        self.schema = schema
        self.columns = columns
        self.cut_points = cut_points
        self.n_bins = n_bins
        self.depths = depths

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        tags.input_tags.categorical = True
        tags.transformer_tags.preserves_dtype = []    # the output is 0/1 indicators (int8)
        tags.requires_fit = True
        return tags

    def _as_frame(self, X: Any, *, reset: bool) -> pd.DataFrame:
        """scikit-learn's validation of X, then X as a DataFrame with the schema's column names."""
        frame = isinstance(X, pd.DataFrame)
        inferred = self.schema is None
        if reset or "n_features_in_" in self.__dict__:
            Xv = validate_data(self, X, reset=reset, dtype="numeric" if inferred and not frame else None)
        else:
            Xv = np.asarray(X)
        if frame:
            return X if all(isinstance(c, str) for c in X.columns) else X.set_axis([str(c) for c in X.columns], axis=1)
        if inferred:
            names = [f"x{i}" for i in range(Xv.shape[1])]
        elif reset:   # an array holds the schema's predictors (or the chosen ``columns``) in order
            names = next((c for c in (self.schema.predictors, list(self.columns or []))
                          if Xv.ndim == 2 and len(c) == Xv.shape[1]), self.schema.predictors)
        else:
            names = self.__dict__.get("_input_columns") or self.columns_
        if not inferred:
            if Xv.ndim != 2 or Xv.shape[1] != len(names):
                raise ValueError(f"X has {Xv.shape[-1]} columns, expected {len(names)} ({names}): pass a "
                                 "DataFrame with the schema's column names")
        return pd.DataFrame(Xv, columns=names)

    @staticmethod
    def _infer_schema(X: pd.DataFrame) -> Schema:
        """A schema read from the data (NOT private): observed bounds and categories."""
        attrs = []
        for col in X.columns:
            v = X[col]
            if pd.api.types.is_numeric_dtype(v) and not pd.api.types.is_bool_dtype(v):
                lo, hi = float(v.min()), float(v.max())
                attrs.append(Attribute.numeric(str(col), lo, hi if hi > lo else lo + 1.0))
            else:
                attrs.append(Attribute.categorical(str(col), sorted(set(v.astype(str)))))
        warnings.warn("Binarizer without a schema: the numeric bounds and category lists that define the "
                      "indicator columns are read from the private data, which no ε covers. Pass a Schema "
                      "with the public domain.", PrivacyLeakWarning, stacklevel=3)
        return Schema(attrs, "__target__", ["0", "1"])   # the classes are a placeholder, never used

    def fit(self, X: Any = None, y: Any = None) -> "Binarizer":
        """Fix the output columns from the schema (no data value is read; without a schema the
        domain is read from ``X`` with a PrivacyLeakWarning)."""
        if self.schema is not None and not isinstance(self.schema, Schema):
            raise TypeError(f"schema must be a dpexplore Schema or None, got {type(self.schema).__name__}")
        if self.schema is None and X is None:
            raise ValueError("Binarizer needs a schema (the public domain), or X to infer one from (not private)")
        for attr in ("n_features_in_", "feature_names_in_"):
            self.__dict__.pop(attr, None)
        frame = None if X is None else self._as_frame(X, reset=True)
        self._input_columns = None if frame is None else list(frame.columns)
        schema = self._infer_schema(frame) if self.schema is None else self.schema
        self.schema_ = schema
        if self.n_bins is not None and (isinstance(self.n_bins, bool) or not isinstance(self.n_bins, numbers.Integral)
                                        or self.n_bins < 1):
            raise ValueError(f"n_bins must be a positive integer or None, got {self.n_bins!r}")
        names = list(schema.predictors if self.columns is None else
                     schema.check_columns(self.columns, "columns"))
        cuts = dict(self.cut_points or {})
        schema.check_columns(cuts, "cut_points")
        depths = dict(self.depths or {})
        schema.check_columns(depths, "depths")
        self.edges_: dict[str, np.ndarray] = {}
        self.depths_: dict[str, int] = {}
        out: list[str] = []
        for name in names:
            attr = schema.attributes[name]
            if name in depths:
                tax, depth = attr.taxonomy, depths[name]
                if tax is None or isinstance(depth, bool) or not isinstance(depth, numbers.Integral) \
                        or not 1 <= depth < tax.height:
                    raise ValueError(f"depths[{name!r}] must be an integer in [1, {getattr(tax, 'height', 1) - 1}] "
                                     "(a level of the attribute's taxonomy below the root)")
                self.depths_[name] = int(depth)
                out += [f"{name}={label}" for label in tax.labels(int(depth))]
                continue
            if attr.kind == "categorical":
                out += [f"{name}={c}" for c in attr.categories]
                continue
            if name in cuts:
                inner = np.asarray(sorted(float(c) for c in cuts[name]))
                inner = inner[(inner > attr.lower) & (inner < attr.upper)]
                edges = np.concatenate([[attr.lower], inner, [attr.upper]])
            elif self.n_bins is None and attr.taxonomy is not None:
                tax = attr.taxonomy
                edges = np.asarray(tax.edges(tax.height - 1), dtype=float)
            else:
                edges = np.linspace(attr.lower, attr.upper, (self.n_bins or 4) + 1)
            self.edges_[name] = edges
            out += [f"{name}=[{_fmt(lo)}, {_fmt(hi)}{']' if j == len(edges) - 2 else ')'}"
                    for j, (lo, hi) in enumerate(zip(edges[:-1], edges[1:]))]
        self.columns_ = names
        self.feature_names_out_ = np.asarray(out, dtype=object)
        if frame is not None:
            schema.check_columns(list(frame.columns), "X columns")
        return self

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        """0/1 indicator DataFrame (int8), one column per category / interval."""
        check_is_fitted(self, "columns_")
        X = self._as_frame(X, reset=False)
        if len(X) == 0:
            raise ValueError("X is empty: at least one row is needed")
        missing = [c for c in self.columns_ if c not in X.columns]
        if missing:
            raise ValueError(f"X lacks column(s) {missing}")
        blocks = []
        for name in self.columns_:
            attr = self.schema_.attributes[name]
            attr.validate(X[name])
            if name in self.depths_:
                tax, depth = attr.taxonomy, self.depths_[name]
                codes = tax.node_codes(tax.leaf_codes(X[name].to_numpy()), depth)
                blocks.append(codes[:, None] == np.arange(tax.level_sizes[depth])[None, :])
            elif attr.kind == "categorical":
                values = X[name].astype(str).to_numpy()
                blocks.append(values[:, None] == np.asarray(attr.categories, dtype=object)[None, :])
            else:
                edges = self.edges_[name]
                v = X[name].to_numpy(dtype=float)
                idx = np.clip(np.searchsorted(edges[1:-1], v, side="right"), 0, len(edges) - 2)
                blocks.append(idx[:, None] == np.arange(len(edges) - 1)[None, :])
        data = np.concatenate(blocks, axis=1).astype(np.int8)
        return pd.DataFrame(data, columns=list(self.feature_names_out_), index=X.index)

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Names ``"attr=category"`` / ``"attr=[lo, hi)"`` of the output columns."""
        check_is_fitted(self, "columns_")
        return self.feature_names_out_.copy()


def _fmt(x: float) -> str:
    return f"{x:g}"
