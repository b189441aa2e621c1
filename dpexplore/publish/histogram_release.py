"""What the histogram releases share: noisy class counts over public cells (PrivPfC's grid,
DiffMulti's and DiffGen's regions, the projected histogram), the check that they are fitted, the
classifier read from them and the synthetic table drawn from their cells.

The synthetic table follows one rule for all (:meth:`HistogramRelease._synthetic`): its size from
the release's DP total (:func:`~dpexplore.publish.complete.synthetic_size`), the rows of each
released cell from its noisy counts, then the columns the release does not model
(:meth:`~dpexplore.publish.complete.CompleteSynthetic._complete`). Post-processing only. With
marginals that carry relations (two-way tables with chosen parents), a release may classify with
a logistic regression fitted on its completed synthetic table
(:meth:`HistogramRelease._fit_table_classifier`).
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression

from .._validation import check_random_state, rule_message
from ..encode import design_matrix
from ..exceptions import FewRecordsWarning, SyntheticSizeWarning
from ..limits import TABLE_CLASSIFIER_ROWS
from ..inputs import check_release_features
from .complete import synthetic_size

__all__ = ["HistogramRelease"]


class HistogramRelease:
    """Mixin for a :class:`~dpexplore.publish.base.Publisher` whose release is noisy class counts
    over public cells. A subclass names the fitted attribute that holds its counts
    (``_released``) and implements:

    * ``_predict_proba(X)``: class probabilities of the rows of ``X`` (columns follow ``classes_``);
    * ``_size_total()``: the release's DP total and the public standard deviation of its noise
      (:func:`~dpexplore.publish.complete.count_noise_sd`), for the size rule (with marginals paid,
      averaged with their totals: :meth:`~dpexplore.publish.complete.CompleteSynthetic._record_total`);
    * ``_count_scale()``: the public Laplace scale of each count the synthetic rows are copied
      from, the noise band that raking keeps them in;
    * ``_synthetic_rows(size, rng, values, shuffle)``: the modelled columns and the target of
      ``size`` rows, the released cells ({column: cells}, or None) and each row's cell.
    """

    _released = "counts_"
    #: whether :meth:`_fit_table_classifier` may replace the release's own classifier
    _table_classifier = False

    def _check_fitted(self) -> None:
        if not hasattr(self, self._released):   # NotFittedError is an AttributeError too
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet: call fit(X, y) or fit(source)")

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities of each row of ``X`` (columns follow ``classes_``): post-processing
        of the release (``classifier_data_`` says which classifier: "release", the method's own,
        or "synthetic", :meth:`_fit_table_classifier`)."""
        self._check_fitted()
        if getattr(self, "classifier_data_", "release") == "synthetic":
            return self._table_proba(X)
        return self._predict_proba(X)

    def _uses_table_classifier(self) -> bool:
        """Whether the marginals carry relations for the table's classifier (public: the method
        and whether ε allowed parent choices)."""
        return self._table_classifier and bool(getattr(self, "joint_marginals_", None))

    def _fit_table_classifier(self, rng: np.random.Generator) -> None:
        """After the fit, where the method allows it (``_table_classifier``) and the marginals were
        measured as two-way tables with chosen parents: a logistic regression (scikit-learn's
        default L2, on :func:`~dpexplore.encode.design_matrix`'s public encoding) fitted on a
        synthetic table drawn with ``rng`` (the size rule's rows, at most
        :data:`~dpexplore.limits.TABLE_CLASSIFIER_ROWS`; ``table_model_``), which then classifies
        (``classifier_data_`` "synthetic"). The table holds the release's cells, the records a
        threshold or an empty region dropped put back by the marginals, and every predictor
        given its parent. At ε = 1 (``benchmarks/ablations.py``, ``own-classifier`` against
        ``none``), DiffMulti, DiffGen and the projected histogram reach 0.762 / 0.753 / 0.753 on
        the customer table where their own classifiers reached 0.743 / 0.742 / 0.742 (majority
        0.742, ten runs), 0.739 / 0.737 / 0.743 on the generated table against 0.688 / 0.692 /
        0.687 (majority 0.687). Where ε allows no parent choice the columns are drawn
        one-way, their relations to the class lost, and a regression on the table fell below the
        methods' own (0.717–0.726 against 0.742–0.744 on the customer table at ε = 0.1): the
        release's classifier stays. PrivPfC keeps its own, its grid being chosen for
        classification (a regression on its table was 0.017 below it on Adult at ε = 1).
        Post-processing of the release: no ε."""
        self.classifier_data_ = "release"
        if not self._uses_table_classifier():
            return
        total, noise_sd = self._record_total()
        with warnings.catch_warnings():      # its size is said when the user draws a table
            warnings.simplefilter("ignore", (FewRecordsWarning, SyntheticSizeWarning))
            size = synthetic_size(total, None, min(self.max_synthetic_rows, TABLE_CLASSIFIER_ROWS), noise_sd=noise_sd)
            table = self.synthetic(n=size, random_state=rng)
        labels = self.schema_.encode_target(table[self.schema_.target])
        if np.unique(labels).size < 2:
            return
        self.table_model_ = LogisticRegression(max_iter=1000).fit(
            design_matrix(table[self.schema_.predictors], self.schema_), labels)
        self.classifier_data_ = "synthetic"

    def _table_proba(self, X: Any) -> np.ndarray:
        """Class probabilities from ``table_model_``, the values checked against the public
        schema as every publisher checks them (:func:`~dpexplore.inputs.check_release_features`)."""
        predictors = self.schema_.predictors
        X = check_release_features(self, X, predictors)
        missing = [name for name in predictors if X[name].isna().any()]
        if missing:
            raise ValueError(rule_message("missing", missing))
        proba = np.zeros((len(X), len(self.classes_)))
        proba[:, self.table_model_.classes_] = self.table_model_.predict_proba(design_matrix(X, self.schema_))
        return proba

    def predict(self, X: Any) -> np.ndarray:
        """The most probable class of each row, in the type of the training labels."""
        best = np.argmax(self.predict_proba(X), axis=1)    # checks that the release is fitted first
        return self.classes_[best]

    def _synthetic(self, *, n: int | None, random_state: Any, values: str) -> pd.DataFrame:
        self._check_fitted()
        total, noise_sd = self._record_total()      # the release's total, with the marginals' when paid
        size = synthetic_size(total, n, self.max_synthetic_rows, noise_sd=noise_sd)
        rng = check_random_state(random_state)
        frame, cells, row_cells = self._synthetic_rows(size, rng, values, shuffle=random_state is not None)
        return self._complete(frame, rng, generalized=values == "generalized", cells=cells, row_cells=row_cells)
