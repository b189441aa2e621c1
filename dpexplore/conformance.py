"""scikit-learn conformance: which estimators the package has, and which checks may fail by design.

The estimators are the registered classes (:func:`dpexplore.registry.all_methods`; a composite
entry is made of registered classes and is checked through them), each built by
:meth:`~dpexplore.registry.MethodSpec.check_instance` with its ``check_params``;
``tests/test_sklearn_conformance.py`` runs scikit-learn's own ``parametrize_with_checks`` over all
of them. A spec that cannot be built raises (no silent skip). A check may fail only when the
estimator's class lists it in ``_sklearn_expected_failures`` (at most five, each with a one-line
reason: a check that contradicts differential privacy by design, such as identical results from
two unseeded fits). The union of those lists is the public mapping
:data:`SKLEARN_EXPECTED_FAILURES` (``{estimator name: {check name: reason}}``).
"""
from __future__ import annotations

from typing import Any

from .registry import MethodSpec, all_methods

__all__ = ["ESTIMATORS", "SKLEARN_EXPECTED_FAILURES", "estimator_instances", "expected_failed_checks"]


def checked_methods() -> list[MethodSpec]:
    """The registered classes scikit-learn's checks run on (every entry but the composites)."""
    return [spec for spec in all_methods() if not spec.composite]


def estimator_instances() -> list[Any]:
    """One fresh instance of every registered estimator class, as the conformance checks use
    them; :class:`~dpexplore.exceptions.MethodUnavailableError` (or the constructor's error) when
    one cannot be made."""
    return [spec.check_instance() for spec in checked_methods()]


def unmakeable() -> list[str]:
    """Names of registered estimators that cannot be made for the checks, with the error (each
    is a conformance failure); empty when every one can be made."""
    bad = []
    for spec in checked_methods():
        try:
            spec.check_instance()
        except Exception as err:  # noqa: BLE001 - reported, one line per estimator
            bad.append(f"{spec.name}: {type(err).__name__}: {err}")
    return bad


def expected_failed_checks(estimator: Any) -> dict[str, str]:
    """The checks ``estimator`` may fail, with their reasons (for ``parametrize_with_checks``)."""
    return dict(getattr(type(estimator), "_sklearn_expected_failures", {}))


def __getattr__(name: str) -> Any:
    if name == "ESTIMATORS":
        return [spec.name for spec in checked_methods()]
    if name == "SKLEARN_EXPECTED_FAILURES":
        return {spec.name: expected_failed_checks(spec.check_instance()) for spec in checked_methods()}
    raise AttributeError(name)
