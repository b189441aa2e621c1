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
  categoricals over the schema's categories, numerics over public cut points or taxonomy leaves
  (trap 5: no cut point or category list is read from the data).
* :func:`binarize_table` — the same 0/1 features from a :class:`~dpexplore.counts.CountTable`
  (occupied cells as weighted records): ``PrivateNaiveBayes().fit(source)`` and count-based scores.
"""
from __future__ import annotations

import math
import numbers
import warnings
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin, clone
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validation import RandomState, check_epsilon, check_fraction_weights, is_zero_one
from ..domain import PrivacyLeakWarning, Schema, declared_classes, observed_attribute
from ..mechanisms import laplace, laplace_scale
from ..budget import RecordsSpends

__all__ = ["laplace_quantile", "Binarizer", "binarize_table", "PrivateNaiveBayes", "PrivateGaussianNB"]


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
def _on_counts(X: np.ndarray, class_codes: np.ndarray, weights: np.ndarray | None, n_classes: int) -> np.ndarray:
    """On-counts per class, shape (C, D): Σ over (weighted) rows of class c of X (0/1).

    Records are rows of weight 1; a CountTable's cells are rows weighted by their counts
    (:func:`binarize_table`). Exact integers in float64, so both give identical counts.
    """
    onehot = np.eye(n_classes)[class_codes]
    if weights is not None:
        onehot = onehot * np.asarray(weights, dtype=np.float64)[:, None]
    return onehot.T @ X


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
    ``clamped_fraction_`` (all post-processing of the noisy counts), ``accountant_``; after
    ``fit(source)`` also ``binarizer_`` (the public Binarizer that defines the features).
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
        if not is_zero_one(X):
            raise ValueError("X must hold only 0/1 values (binarize=None): binarise numeric and categorical "
                             "columns with public cut points first (dpexplore.models.naive_bayes.Binarizer), "
                             "or pass a public cut point binarize=t (X > t becomes 1)")
        return X

    def _check_X(self, X: Any) -> np.ndarray:
        return self._binary(super()._check_X(X))

    def fit(self, X: Any, y: Any = None, *, binarizer: Binarizer | None = None) -> "PrivateNaiveBayes":
        """Release the noisy on/off counts (spends ``epsilon`` once) and post-process them.

        ``fit(X, y)``: X holds 0/1 features (or ``binarize=t``). ``fit(source)`` with a
        :class:`dpexplore.sources.Source` (pandas, DuckDB, Spark; y=None, the target and schema
        come from it): the features are ``binarizer`` (default ``Binarizer(source.schema)``)
        applied to the records, computed from the source's CountTable by
        :func:`binarize_table` — the occupied cells as weighted records, so after the table is
        built the cost depends on the cells, not the rows. Same release, seed for seed, as
        ``fit(binarizer.fit().transform(X), y)`` with ``classes=schema.classes``. Classes are the
        schema's (strings, in its order; a declared ``classes`` must agree). The fitted model
        keeps that binarizer as ``binarizer_`` and predicts on 0/1 features like any fit:
        ``model.predict(model.binarizer_.transform(X_test))``. Nothing per-record is read:
        ``clamp_quantile`` is a quantile of the public noise distribution and the clamp acts on
        the noisy counts only, so the weighted path spends exactly what the record path spends.
        """
        epsilon, q, a = self._check_params()
        from ..publish.base import _is_source, set_fit_features, source_input
        self.__dict__.pop("binarizer_", None)
        if not _is_source(X):
            if binarizer is not None:
                raise TypeError("binarizer= is for fit(source) only: with records, transform X yourself "
                                "(binarizer.fit().transform(X)) and pass the 0/1 features")
            Xa, classes, codes = _fit_input(self, X, y, self.classes)
            Xa = self._binary(Xa)
            C = classes.size
            class_sizes = np.bincount(codes, minlength=C).astype(float)
            on = _on_counts(Xa, codes, None, C)
            return self._release(classes, on, class_sizes, epsilon, q, a)
        table, schema = source_input(X, y, None, needs_taxonomy=True)
        if binarizer is None:
            binarizer = Binarizer(schema)
        if isinstance(binarizer, Binarizer) and binarizer.schema is None:
            binarizer = clone(binarizer).set_params(schema=schema)
        declared = _class_list(self)
        if declared is not None and [str(c) for c in declared] != list(schema.classes):
            raise ValueError(f"classes={list(declared)!r} differ from the source's schema classes "
                             f"{list(schema.classes)!r}: leave classes=None (the schema declares them)")
        matrix, class_codes, weights = binarize_table(table, binarizer)   # checks the binarizer
        fitted = binarizer if "columns_" in binarizer.__dict__ else clone(binarizer).fit()
        Xa = self._binary(matrix.astype(np.float64))
        C = schema.n_classes
        set_fit_features(self, pd.DataFrame(columns=list(fitted.get_feature_names_out())))
        classes = np.asarray(list(schema.classes), dtype=object)
        class_sizes = np.bincount(class_codes, weights=weights, minlength=C).astype(float)
        on = _on_counts(Xa, class_codes, weights, C)
        self._release(classes, on, class_sizes, epsilon, q, a)
        self.binarizer_ = fitted
        return self

    def _release(self, classes: np.ndarray, on: np.ndarray, class_sizes: np.ndarray,
                 epsilon: float, q: float, a: float) -> "PrivateNaiveBayes":
        """Alg. 1 from the exact on-counts (C, D) and class sizes (C,): one spend, then post-processing."""
        rng = self._start(epsilon)
        C, D = on.shape
        self.classes_ = classes
        # Alg. 1 lines 5–6: on-counts and off-counts per declared class (absent classes included:
        # their counts are 0 + noise, released like any other, §3.2)
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

    def fit(self, X: Any, y: Any = None) -> "PrivateGaussianNB":
        """Release noisy counts, sums and sums of squares per class (three spends).

        ``fit(source)`` is refused: the sums and sums of squares need each record's numeric
        value, and a CountTable holds only taxonomy leaves (use PrivateNaiveBayes on the source,
        or ``fit(X, y)`` on records).
        """
        from ..publish.base import _is_source
        if _is_source(X):
            raise TypeError("PrivateGaussianNB cannot fit a Source: its sums and sums of squares need the raw "
                            "numeric values, while a source gives counts over taxonomy leaves. Use "
                            "PrivateNaiveBayes().fit(source), or fit(X, y) on records in memory")
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
    interval closed) when ``cut_points[attr]`` or ``n_bins`` is given; else one per leaf of the
    attribute's taxonomy, assigned exactly as the taxonomy assigns values (``"attr=(lo, hi]"``,
    the taxonomy's leaf labels, first leaf closed), so that the output is a function of each
    record's leaf codes and :func:`binarize_table` gives it from a CountTable. Without a
    taxonomy: ``n_bins`` (default 4) equal-width intervals over the public bounds. ``depths[attr]`` generalises an
    attribute first to that level of its public taxonomy (e.g. native country → region), which
    removes many near-empty indicator columns. ``fit`` reads no data values, only column names;
    ``transform`` rejects values outside the public domain. ``schema=None`` infers the domain
    from ``X`` in ``fit`` (observed min/max and categories, with a PrivacyLeakWarning: not DP),
    so the transformer also works inside scikit-learn's tools. X may be a DataFrame or an array
    (columns ``x0, x1, …`` without a schema, the schema's columns in order with one).
    Fitted: ``schema_`` (the schema used), ``columns_``, ``edges_``, ``depths_``,
    ``leaf_columns_`` (numeric columns binarised on their taxonomy leaves), ``feature_names_out_``.
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
        attrs = [observed_attribute(col, X[col]) for col in X.columns]
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
        self.leaf_columns_: list[str] = []
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
                # the taxonomy's leaves, with its own rule: (lo, hi], first leaf closed
                tax = attr.taxonomy
                self.edges_[name] = np.asarray(tax.edges(tax.height - 1), dtype=float)
                self.leaf_columns_.append(name)
                out += [f"{name}={label}" for label in tax.labels(tax.height - 1)]
                continue
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
            elif name in self.leaf_columns_:
                tax = attr.taxonomy
                codes = tax.leaf_codes(X[name].to_numpy())
                blocks.append(codes[:, None] == np.arange(tax.n_leaves)[None, :])
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


# =========================================================================== count table → 0/1 matrix
def binarize_table(table: Any, binarizer: Binarizer | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A :class:`~dpexplore.counts.CountTable` as weighted 0/1 records: ``(matrix, class_codes, weights)``.

    ``matrix`` (int8, shape (m, D)) holds ``binarizer.transform`` of each occupied cell, one row
    per cell (m = occupied cells, private); ``class_codes`` (int64) the class positions in
    ``table.schema.classes``; ``weights`` (int64) the cell counts (**private**). Any count over
    records of the binarised table is the weighted sum over these rows — e.g. on-counts per class
    ``(onehot(class_codes) * weights).T @ matrix`` — at a cost in m, not in rows.

    ``binarizer`` (default ``Binarizer(table.schema)``) must be a function of the leaf codes: its
    schema must declare the table's attributes with the same domains, categorical columns and
    ``depths`` are fine, numeric columns must use their taxonomy leaves (``cut_points`` and
    ``n_bins`` need the raw values and are refused). It is fitted (no data read) when it is not.
    Columns come out in the binarizer's order (``get_feature_names_out()``).
    """
    from ..counts import CountTable
    if not isinstance(table, CountTable):
        raise TypeError(f"table must be a dpexplore CountTable (source.count_table()), got {type(table).__name__}")
    schema = table.schema
    if binarizer is None:
        binarizer = Binarizer(schema)
    if not isinstance(binarizer, Binarizer):
        raise TypeError(f"binarizer must be a dpexplore Binarizer, got {type(binarizer).__name__}")
    if "columns_" not in binarizer.__dict__:
        if binarizer.schema is None:
            raise ValueError("binarizer needs the public schema: Binarizer(source.schema) (without one it "
                             "reads the domain from records, which a count table does not hold)")
        binarizer = clone(binarizer).fit()
    used = binarizer.schema_
    for name in binarizer.columns_:
        if name not in schema.attributes:
            raise ValueError(f"the binarizer encodes {name!r}, which the count table does not hold "
                             f"(its predictors: {schema.predictors})")
        if used[name].to_dict() != schema[name].to_dict():
            raise ValueError(f"the binarizer's schema declares {name!r} differently from the count table's "
                             "schema: build it as Binarizer(source.schema, ...)")
        if name in binarizer.edges_ and name not in binarizer.leaf_columns_:
            raise ValueError(f"numeric column {name!r} is binarised on cut_points/n_bins, which need the raw "
                             "values: from a count table numeric columns use their taxonomy leaves (drop "
                             f"cut_points/n_bins for it) or a level of the taxonomy (depths={{{name!r}: d}})")
    m = table.counts.shape[0]
    offset = 0
    rows = np.arange(m)
    index = np.empty((m, len(binarizer.columns_)), dtype=np.int64)
    for j, name in enumerate(binarizer.columns_):
        attr, leaves = schema[name], table.leaf_codes[name]
        tax = attr.taxonomy
        if name in binarizer.depths_:
            depth = binarizer.depths_[name]
            idx, width = tax.node_codes(leaves, depth), tax.level_sizes[depth]
        elif attr.kind == "categorical":
            # leaf position → category position (a leaf that is not a declared category cannot
            # occur: the engines refuse such values before counting)
            position = {c: i for i, c in enumerate(attr.categories)}
            lookup = np.asarray([position.get(str(leaf), -1) for leaf in tax.leaves], dtype=np.int64)
            idx, width = lookup[leaves], len(attr.categories)
            if idx.size and idx.min() < 0:
                raise ValueError(f"column {name!r}: the count table holds a taxonomy leaf that is not a declared "
                                 "category")
        else:
            idx, width = leaves, tax.n_leaves
        index[:, j] = offset + np.asarray(idx, dtype=np.int64)
        offset += width
    if offset != len(binarizer.feature_names_out_):   # a broken invariant, not bad input
        raise RuntimeError("binarize_table: column count differs from the binarizer's output")
    matrix = np.zeros((m, offset), dtype=np.int8)
    for j in range(index.shape[1]):
        matrix[rows, index[:, j]] = 1
    return matrix, table.class_codes.astype(np.int64, copy=True), table.counts.astype(np.int64, copy=True)
