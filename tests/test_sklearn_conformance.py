"""scikit-learn's own estimator checks as the conformance suite (CONTRIBUTING.md, "Adding a publishing method").

Every registered estimator (``dpexplore.registry``) runs every check of ``parametrize_with_checks``,
built with its spec's ``check_params``; a failure is allowed only where the estimator's class lists
it in ``_sklearn_expected_failures`` (see :mod:`dpexplore.conformance`), with a reason, at most
five per estimator.
"""
from __future__ import annotations

import warnings

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from dpexplore.conformance import SKLEARN_EXPECTED_FAILURES, estimator_instances, expected_failed_checks, unmakeable
from dpexplore.domain import PrivacyLeakWarning

warnings.filterwarnings("ignore", category=PrivacyLeakWarning)  # the checks pass schema-less data


@parametrize_with_checks(estimator_instances(), expected_failed_checks=expected_failed_checks)
def test_sklearn_check(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        check(estimator)


def test_expected_failures_are_few_and_explained():
    table = SKLEARN_EXPECTED_FAILURES
    assert set(table) >= {"PrivateNaiveBayes", "PrivPfC", "DiffMulti", "ProjectedHistogram"}
    for name, checks in table.items():
        assert len(checks) <= 5, f"{name} lists {len(checks)} expected failures (at most 5)"
        for check, reason in checks.items():
            assert check.startswith("check_") and isinstance(reason, str) and len(reason) > 10, (name, check)


def test_every_estimator_can_be_made_for_the_checks():
    assert unmakeable() == []


def test_a_registered_method_that_cannot_be_built_is_an_error(monkeypatch):
    from dpexplore import registry
    from dpexplore.exceptions import MethodUnavailableError

    broken = registry.MethodSpec("Broken", "classifier", "dpexplore.no_such_module:Broken", "p", "b")
    monkeypatch.setattr(registry, "METHODS", registry.METHODS + (broken,))
    with pytest.raises(MethodUnavailableError, match="Broken"):
        estimator_instances()                                   # no silent skip
    assert [line.split(":")[0] for line in unmakeable()] == ["Broken"]
