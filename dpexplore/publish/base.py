"""What every publishing method shares: budget preparation and the Release interface."""
from __future__ import annotations


from ..budget import RecordsSpends, prepare_accountant

__all__ = ["Release", "prepare_accountant"]  # prepare_accountant lives in budget.py


class Release(RecordsSpends):
    """Mixin for publishing methods: a fitted method *is* its release.

    Subclasses bracket the spends of ``fit`` with ``_open_ledger``/``_close_ledger`` (so
    ``ledger_`` and ``epsilon_spent_`` are this release's own) and define
    ``synthetic(random_state=None)`` (a DataFrame with the schema's columns); ``classifier()``
    returns the fitted object itself when it can predict.
    """

    method: str = "release"

    def classifier(self):
        """The release as a classifier (post-processing of the released counts)."""
        if not hasattr(self, "predict"):
            raise TypeError(f"{type(self).__name__} has no classifier")
        return self
