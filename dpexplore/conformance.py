"""scikit-learn conformance: which estimators the package has, and which checks may fail by design.

:data:`ESTIMATORS` lists one default-constructed instance factory per public estimator;
``tests/test_sklearn_conformance.py`` runs scikit-learn's own ``parametrize_with_checks`` over all
of them. A check may fail only when the estimator's class lists it in
``_sklearn_expected_failures`` (at most five, each with a one-line reason: a check that contradicts
differential privacy by design, such as identical results from two unseeded fits). The union of
those lists is the public mapping :data:`SKLEARN_EXPECTED_FAILURES`
(``{estimator name: {check name: reason}}``), also available as
``dpexplore.SKLEARN_EXPECTED_FAILURES``.
"""
from __future__ import annotations

from typing import Any, Callable

__all__ = ["ESTIMATORS", "SKLEARN_EXPECTED_FAILURES", "estimator_instances", "expected_failed_checks"]


def _factories() -> dict[str, Callable[[], Any]]:
    from .models import (Binarizer, HistogramClassifier, PrivateGaussianNB, PrivateLogisticRegression,
                         PrivateNaiveBayes, SelectThenTrain)
    from .publish import DiffGen, DiffMulti, PrivPfC, ProjectedHistogram
    from .select.stoddard import (ClusterSelection, ExponentialTopKSelector, PrivateThresholdTesting,
                                  ScorePerturbationSelector, SparseVectorSelector)
    from .select.thesis import IterativeSelector, PrivateKSubsetSelector
    from .evaluate.showdown import PrivateLRClassifier
    classes = [PrivateNaiveBayes, PrivateGaussianNB, PrivateLogisticRegression, PrivateLRClassifier,
               HistogramClassifier, SelectThenTrain, Binarizer, PrivPfC, DiffMulti, DiffGen,
               ProjectedHistogram, PrivateKSubsetSelector, IterativeSelector, ScorePerturbationSelector,
               ExponentialTopKSelector, SparseVectorSelector, PrivateThresholdTesting, ClusterSelection]
    out = {}
    for cls in classes:
        make = getattr(cls, "_sklearn_check_instance", None)  # a classmethod where defaults need help
        out[cls.__name__] = make if make is not None else cls
    return out


def estimator_instances() -> list[Any]:
    """One fresh instance of every public estimator that can be made without arguments (or by
    its ``_sklearn_check_instance``), as the conformance checks use them."""
    out = []
    for make in _factories().values():
        try:
            out.append(make())
        except TypeError:  # reported by test_every_estimator_can_be_made
            continue
    return out


def unmakeable() -> list[str]:
    """Names of estimators that cannot be made for the checks (each is a conformance failure)."""
    bad = []
    for name, make in _factories().items():
        try:
            make()
        except TypeError as err:
            bad.append(f"{name}: {err}")
    return bad


def expected_failed_checks(estimator: Any) -> dict[str, str]:
    """The checks ``estimator`` may fail, with their reasons (for ``parametrize_with_checks``)."""
    return dict(getattr(type(estimator), "_sklearn_expected_failures", {}))


def __getattr__(name: str) -> Any:
    if name == "ESTIMATORS":
        return list(_factories())
    if name == "SKLEARN_EXPECTED_FAILURES":
        return {est: expected_failed_checks(make()) for est, make in _factories().items()}
    raise AttributeError(name)
