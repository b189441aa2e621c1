"""The publisher contract: the :class:`Publisher` base (one ``fit``, one ``synthetic``) and the
:class:`Release` mixin. Complete synthetic tables are :mod:`dpexplore.publish.complete`'s; the
input checks are :mod:`dpexplore.inputs`' (shared with the models and selectors).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin

from .._validation import check_random_state
from ..inputs import check_release_input, source_classes, source_input
from ..budget import RecordsSpends, prepare_accountant
from ..domain import Schema, class_values
from ..sensitivity import ADD_REMOVE
from .complete import CompleteSynthetic

if TYPE_CHECKING:
    from ..counts import CountTable

__all__ = ["Publisher", "Release", "Modelled"]

class Release(RecordsSpends):
    """Mixin for publishing methods: a fitted method *is* its release.

    Subclasses bracket the spends of ``fit`` with ``_open_ledger``/``_close_ledger`` (so
    ``ledger_`` and ``epsilon_spent_`` are this release's own); :class:`Publisher` adds
    ``synthetic(*, n=None, random_state=None, values=None)`` (a DataFrame with every declared
    column, see :class:`CompleteSynthetic`). ``classifier()`` returns the fitted object itself
    when it can predict. Put ``Release`` before the scikit-learn bases so that its tags apply.
    """

    method: str = "release"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True           # categorical columns may hold strings
        tags.input_tags.categorical = True
        tags.input_tags.sparse = False
        tags.input_tags.allow_nan = False
        tags.non_deterministic = getattr(self, "random_state", None) is None  # DP noise
        if tags.classifier_tags is not None:
            tags.classifier_tags.poor_score = True  # noise and coarse grids cost accuracy by design
        return tags

    def classifier(self):
        """The release as a classifier (post-processing of the released counts)."""
        if not hasattr(self, "predict"):
            raise TypeError(f"{type(self).__name__} has no classifier")
        return self


# =========================================================================== the publisher contract
@dataclass(frozen=True)
class Modelled:
    """What a publisher's ``_release`` modelled, for the marginals that complete its synthetic
    table (:meth:`CompleteSynthetic._fill_marginals`): the predictors its release carries
    (``columns``; the others are filled from marginals or uniformly), those it released at single
    leaves of their marginal (``exact``: a marginal adds nothing there) and, for a method whose
    marginals' domain is known only during its release, the filler it built then (``filler``)."""

    columns: Sequence[str]
    exact: Sequence[str] = ()
    filler: Any = None


class Publisher(Release, CompleteSynthetic, ClassifierMixin, BaseEstimator):
    """Base of every publishing method: one ``fit``, one ``synthetic``, the scikit-learn contract.

    Every parameter, the public ``schema`` included, is an ``__init__`` argument stored unchanged
    (``get_params``, ``clone`` and grid searches see it). :meth:`fit` is a template method: its
    order (checks, then the ledger, then the method's spends, then the marginals) is written here
    once, and a subclass fills in the steps:

    * ``_check_params()``: every parameter of the method (the base checks ``marginal_share`` and
      ``max_synthetic_rows``);
    * ``_records_data(X, y, schema)`` (``fit(X, y)``, records checked against ``self.schema``) or
      ``_table_data(table, schema, source)`` (``fit(source)``, the source's
      :class:`~dpexplore.counts.CountTable`): the method's fit data, with every check that can fail
      on the data or on public sizes (nothing is spent yet);
    * ``_release(data, accountant, rng, epsilon)``: the method itself, spending ``epsilon`` (the
      method's part, :meth:`_model_epsilon`) through ``accountant``; it returns a :class:`Modelled`;
    * ``_finish_fit(data)`` (optional): post-processing of the release, no spend.

    The base sets ``schema_`` and ``classes_`` (the schema's classes in the type of ``y``, or of
    the source's target column) before ``_release``, opens and closes the ledger, and pays the
    marginals; it consumes no randomness of its own. :meth:`synthetic` checks its arguments
    against ``synthetic_values`` (the first entry is the default) and calls
    ``_synthetic(n=..., random_state=..., values=...)``.
    """

    synthetic_values: tuple[str, ...] = ("sampled",)
    # the neighbour relation ε is stated for (dpexplore.sensitivity); a method that offers another
    # takes a ``neighbours`` parameter
    neighbours: str = ADD_REMOVE
    _needs_taxonomy = True                        # fit(source): every predictor needs a taxonomy

    # ------------------------------------------------------------------ fit
    def fit(self, X: Any, y: Any = None) -> "Publisher":
        """Release from ``X`` (spends ``epsilon``); returns the fitted release.

        ``fit(X, y)``: records (a DataFrame or an array) with the constructor's ``schema`` (None:
        read from the data with a :class:`~dpexplore.domain.PrivacyLeakWarning`). ``fit(source)``:
        a :class:`dpexplore.sources.Source`, whose schema names the target (``self.schema``, when
        set, must be the source's or a subset of its predictors). Every check runs before the
        first spend.
        """
        self._check_params()
        self._check_complete_params()
        got = source_input(X, y, self.schema, estimator=self, needs_taxonomy=self._needs_taxonomy)
        if got is None:
            X, y, schema = check_release_input(X, y, self.schema, estimator=self)
            data = self._records_data(X, y, schema)
            classes, filler = class_values(schema.classes, y), self._prepare_filler(schema, X=X, y=y)
        else:
            table, schema = got
            data = self._table_data(table, schema, X)
            classes, filler = source_classes(X, schema), self._prepare_filler(schema, table=table)
        accountant = prepare_accountant(self.epsilon, self.accountant)
        self.schema_, self.classes_ = schema, classes
        self._open_ledger(accountant)
        rng = check_random_state(self.random_state)
        modelled = self._release(data, accountant, rng, self._model_epsilon())
        # after the method's own release (a DP output): the marginals it keeps ε for (extension)
        self._fill_marginals(modelled.columns, accountant, rng, modelled.filler or filler, exact=modelled.exact)
        self._close_ledger()
        self._finish_fit(data)
        self._fit_table_classifier(rng)
        return self

    def _check_params(self) -> None:
        raise NotImplementedError

    def _records_data(self, X: pd.DataFrame, y: pd.Series, schema: Schema) -> Any:
        """The fit data from validated records (every value in the schema's public domain)."""
        raise NotImplementedError

    def _table_data(self, table: "CountTable", schema: Schema, source: Any) -> Any:
        """The fit data from the count table of ``source`` (built where the data lives)."""
        raise NotImplementedError

    def _release(self, data: Any, accountant: Any, rng: np.random.Generator, epsilon: float) -> Modelled:
        """The method's release from its fit data, spending ``epsilon`` through ``accountant``."""
        raise NotImplementedError

    def _finish_fit(self, data: Any) -> None:
        """Post-processing after the ledger is closed (e.g. a classifier on the released counts)."""

    def _fit_table_classifier(self, rng: np.random.Generator) -> None:
        """Post-processing after :meth:`_finish_fit`: a classifier fitted on a synthetic table
        drawn with ``rng``, where the method has one
        (:meth:`~dpexplore.publish.histogram_release.HistogramRelease._fit_table_classifier`)."""

    # ------------------------------------------------------------------ synthetic
    def synthetic(self, *, n: int | None = None, random_state: Any = None, values: str | None = None
                  ) -> pd.DataFrame:
        """A synthetic table from the release: every declared column in schema order, ``n`` rows
        (default: the release's DP total raised to the public floor
        :data:`~dpexplore.limits.MIN_SYNTHETIC_ROWS` and capped at ``max_synthetic_rows``,
        :func:`synthetic_size`), drawn with ``random_state``; ``values`` is one of
        ``synthetic_values`` (the first is the default). Post-processing only: no ε is spent."""
        if values is None:
            values = self.synthetic_values[0]
        if values not in self.synthetic_values:
            raise ValueError(f"values must be {' or '.join(map(repr, self.synthetic_values))}, got {values!r}")
        return self._synthetic(n=n, random_state=random_state, values=values)

    def _synthetic(self, *, n: int | None, random_state: Any, values: str) -> pd.DataFrame:
        raise NotImplementedError
