"""dpexplore: teach and explore differentially private data publishing and classification.

The core (used by every method): :mod:`~dpexplore.mechanisms`, :mod:`~dpexplore.budget`,
:mod:`~dpexplore.domain`, :mod:`~dpexplore.histogram`, :mod:`~dpexplore.audit`,
:mod:`~dpexplore.datasets`. Methods live in :mod:`~dpexplore.publish`, :mod:`~dpexplore.models`,
:mod:`~dpexplore.select` and :mod:`~dpexplore.evaluate`. Every warning and error class is in
:mod:`~dpexplore.exceptions`, every public cap in :mod:`~dpexplore.limits`, the run-time
switches in :mod:`~dpexplore.config`.

The names below are imported on first use (``dpexplore._lazy``), so ``import dpexplore`` (e.g.
by the Voilà launcher, :mod:`dpexplore.apps`) does not load NumPy or pandas.
"""
from . import _lazy
from ._version import __version__

__all__ = ["BudgetAccountant", "BudgetExceededError", "DetachedAccountantError", "Attribute", "PrivacyLeakWarning", "Schema",
           "Taxonomy", "all_methods", "__version__", "config", "exceptions", "limits"]

__getattr__, __dir__ = _lazy.lazy_exports(__name__, {
    "BudgetAccountant": ".budget", "BudgetExceededError": ".exceptions", "DetachedAccountantError": ".exceptions",
    "Attribute": ".domain", "PrivacyLeakWarning": ".exceptions", "Schema": ".domain", "Taxonomy": ".domain",
    "all_methods": ".registry",
    "config": ".config", "exceptions": ".exceptions", "limits": ".limits"}, globals())
