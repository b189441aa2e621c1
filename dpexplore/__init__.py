"""dpexplore: teach and explore differentially private data publishing and classification.

The core (used by every method): :mod:`~dpexplore.mechanisms`, :mod:`~dpexplore.budget`,
:mod:`~dpexplore.domain`, :mod:`~dpexplore.histogram`, :mod:`~dpexplore.audit`,
:mod:`~dpexplore.datasets`. Methods live in :mod:`~dpexplore.publish`,
:mod:`~dpexplore.models`, :mod:`~dpexplore.select` and :mod:`~dpexplore.evaluate`.

The names below are imported on first use (``dpexplore._lazy``), so ``import dpexplore`` (e.g.
by the Voilà launcher, :mod:`dpexplore.apps`) does not load NumPy or pandas.
"""
from . import _lazy

__version__ = "0.1.0"

__all__ = ["BudgetAccountant", "BudgetExceededError", "DetachedAccountantError", "Attribute", "PrivacyLeakWarning", "Schema",
           "Taxonomy", "SKLEARN_EXPECTED_FAILURES", "__version__"]

# SKLEARN_EXPECTED_FAILURES loads every estimator module
__getattr__, __dir__ = _lazy.lazy_exports(__name__, {
    "BudgetAccountant": ".budget", "BudgetExceededError": ".budget", "DetachedAccountantError": ".budget",
    "Attribute": ".domain", "PrivacyLeakWarning": ".domain", "Schema": ".domain", "Taxonomy": ".domain",
    "SKLEARN_EXPECTED_FAILURES": ".conformance"}, globals())
