"""What the histogram releases share: noisy class counts over public cells (PrivPfC's grid,
DiffMulti's and DiffGen's regions, the projected histogram), the check that they are fitted, the
classifier read from them and the synthetic table drawn from their cells.

The synthetic table follows one rule for all (:meth:`HistogramRelease._synthetic`): its size from
the release's DP total (:func:`~dpexplore.publish.complete.synthetic_size`), the rows of each
released cell from its noisy counts, then the columns the release does not model
(:meth:`~dpexplore.publish.complete.CompleteSynthetic._complete`). Post-processing only.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.exceptions import NotFittedError

from .._validation import check_random_state
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

    def _check_fitted(self) -> None:
        if not hasattr(self, self._released):   # NotFittedError is an AttributeError too
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet: call fit(X, y) or fit(source)")

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities of each row of ``X`` (columns follow ``classes_``): post-processing
        of the release."""
        self._check_fitted()
        return self._predict_proba(X)

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
