"""Every warning and error class dpexplore raises, in one module (as :mod:`sklearn.exceptions`).

The modules that first defined them (:mod:`dpexplore.domain`, :mod:`dpexplore.budget`,
:mod:`dpexplore.evaluate.roc`, :mod:`dpexplore.publish.projected`,
:mod:`dpexplore.select.stoddard`, :mod:`dpexplore.tables`) re-export the same class objects, so
``isinstance``, ``pytest.warns`` and warning filters work with either import path.

This module imports nothing from dpexplore: every other module may import it.
"""
from __future__ import annotations

__all__ = ["PrivacyLeakWarning", "BudgetExceededError", "DetachedAccountantError", "DegenerateCurveWarning",
           "EmptySyntheticWarning", "NotDifferentiallyPrivateWarning", "InputError", "HighCardinalityWarning",
           "FewRecordsWarning", "SyntheticSizeWarning", "MethodUnavailableError"]


class PrivacyLeakWarning(UserWarning):
    """Something that should be public was derived from the private data."""


class BudgetExceededError(RuntimeError):
    """Raised before a spend that would take the total past the accountant's budget."""


class DetachedAccountantError(BudgetExceededError):
    """Raised before a spend on a copy of an accountant that left its process (pickled, or
    inherited by a forked or joblib worker): its spends would never reach the original."""


class DegenerateCurveWarning(UserWarning):
    """A noisy class total came out ≤ 0: the private curve is replaced by the diagonal."""


class EmptySyntheticWarning(UserWarning):
    """The synthetic table has fewer than two classes: the classifier falls back to its prior."""


class NotDifferentiallyPrivateWarning(UserWarning):
    """The algorithm is shown in the paper as private but is not (kept for teaching only)."""


class InputError(ValueError):
    """A problem with the analyst's input, explained in one line with what to do."""


class HighCardinalityWarning(UserWarning):
    """A categorical column with so many values that most methods spread ε too thin over them."""


class FewRecordsWarning(UserWarning):
    """The release is small (judged on its released synthetic rows): most of it is noise."""


class SyntheticSizeWarning(UserWarning):
    """A synthetic table's default size says little (judged on released values and public
    parameters only): the noisy count behind it has an error bar wide relative to it, or a public
    cap bounded it. The high-side counterpart of :class:`FewRecordsWarning`."""


class MethodUnavailableError(ImportError):
    """A registered method could not be loaded or built; the message names the method, and the
    cause is chained (``raise ... from exc``)."""
