"""dpexplore: teach and explore differentially private data publishing and classification.

The core (used by every method): :mod:`~dpexplore.mechanisms`, :mod:`~dpexplore.budget`,
:mod:`~dpexplore.domain`, :mod:`~dpexplore.histogram`, :mod:`~dpexplore.audit`,
:mod:`~dpexplore.datasets`. Methods live in :mod:`~dpexplore.publish`,
:mod:`~dpexplore.models`, :mod:`~dpexplore.select` and :mod:`~dpexplore.evaluate`.
"""
from .budget import BudgetAccountant, BudgetExceededError
from .domain import Attribute, PrivacyLeakWarning, Schema, Taxonomy

__version__ = "0.1.0"

__all__ = ["BudgetAccountant", "BudgetExceededError", "Attribute", "PrivacyLeakWarning", "Schema",
           "Taxonomy", "SKLEARN_EXPECTED_FAILURES", "__version__"]


def __getattr__(name: str):
    # imported on first use: it loads every estimator module
    if name == "SKLEARN_EXPECTED_FAILURES":
        from . import conformance
        return conformance.SKLEARN_EXPECTED_FAILURES
    raise AttributeError(f"module 'dpexplore' has no attribute {name!r}")
