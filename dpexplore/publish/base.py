"""What every publishing method shares: budget preparation and the Release interface."""
from __future__ import annotations

import pandas as pd

from .._validation import check_epsilon
from ..budget import BudgetAccountant

__all__ = ["Release", "prepare_accountant"]


def prepare_accountant(epsilon: float, accountant: BudgetAccountant | None) -> BudgetAccountant:
    """Validate ``epsilon`` and return the accountant to spend it from.

    With no accountant a fresh ``BudgetAccountant(epsilon)`` is made. A given accountant must
    still hold ``epsilon``; otherwise :class:`~dpexplore.budget.BudgetExceededError` is raised
    here, before any data is touched.
    """
    epsilon = check_epsilon(epsilon)
    if accountant is None:
        return BudgetAccountant(epsilon)
    if not isinstance(accountant, BudgetAccountant):
        raise TypeError(f"accountant must be a BudgetAccountant, got {type(accountant).__name__}")
    accountant.require(epsilon)
    return accountant


class Release:
    """Mixin for publishing methods: a fitted method *is* its release.

    Subclasses set ``accountant_`` and ``_ledger_start`` in ``fit`` and define
    ``synthetic(random_state=None)`` (a DataFrame with the schema's columns); ``classifier()`` returns the fitted object itself when it
    can predict.
    """

    method: str = "release"

    @property
    def ledger_(self) -> pd.DataFrame:
        """The spends this release made (rows of the accountant's ledger since fit started)."""
        acc = getattr(self, "accountant_", None)
        if acc is None:
            raise AttributeError("ledger_ is available after fit()")
        return acc.ledger.iloc[getattr(self, "_ledger_start", 0):].reset_index(drop=True)

    @property
    def epsilon_spent_(self) -> float:
        """Total ε charged by this release (sums the ledger's ``charged`` column)."""
        return float(self.ledger_["charged"].sum())

    def classifier(self):
        """The release as a classifier (post-processing of the released counts)."""
        if not hasattr(self, "predict"):
            raise TypeError(f"{type(self).__name__} has no classifier")
        return self
