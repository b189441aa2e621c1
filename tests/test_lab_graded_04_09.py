"""The audit-graded exercises of notebooks 05 and 06, and the stored results the 04–09 checks read.

tests/test_lab.py feeds every registered example through its check; here each wrong example of an
audit-graded exercise is refused for the reason it is wrong: a leak by the privacy audit, a
useless release by the usefulness check. And the planted leaks that make a pass meaningful are
caught.
"""
from __future__ import annotations

import numpy as np
import pytest

from dpexplore.lab import _stored, nb05, nb06
from dpexplore.lab._grading import event, flags_leak, within_claim


def _selector(scale_factor: float):
    """Score perturbation with Laplace(scale_factor/ε) on every score."""
    def select(tc, threshold, epsilon, rng):
        return np.asarray(tc, dtype=float) + rng.laplace(0.0, scale_factor / epsilon, len(tc)) > threshold
    return select


def _ptt_audit(selector) -> bool:
    return within_claim(nb05._audited(selector), nb05.TC_D, nb05.TC_NEIGHBOURS, nb05.AUDIT_EPSILON,
                        n_samples=nb05.AUDIT_SAMPLES, seed=nb05.AUDIT_SEED)


def test_05_5_the_audit_catches_the_planted_ptt_leak():
    assert nb05._audit_catches_ptt()


def test_05_5_noise_for_one_score_is_refused_by_the_audit_not_by_usefulness():
    # Laplace(1/ε) ignores that one record moves two scores: useful, but the audit sees e^(>1)
    assert nb05._useful(_selector(1.0))
    assert not _ptt_audit(_selector(1.0))


def test_05_5_score_perturbation_passes_and_so_does_more_noise():
    assert _ptt_audit(_selector(2.0)) and nb05._useful(_selector(2.0))
    assert _ptt_audit(_selector(4.0)) and nb05._useful(_selector(4.0))   # the substitution-safe scale


def test_05_5_a_selector_drowned_in_noise_is_private_but_not_useful():
    assert _ptt_audit(_selector(100.0))
    assert not nb05._useful(_selector(100.0))


def _histogram_audit(release) -> bool:
    return within_claim(nb06._audited(release), nb06.TABLE, nb06.NEIGHBOURS, nb06.HISTOGRAM_EPSILON,
                        n_samples=nb06.HISTOGRAM_SAMPLES, seed=nb06.HISTOGRAM_SEED)


def test_06_3_noise_on_occupied_cells_only_is_refused_by_the_audit():
    assert nb06._audit_catches_leak()
    assert nb06._useful(nb06._occupied_only)          # looks fine on its output...
    assert not _histogram_audit(nb06._occupied_only)  # ...but a kept cell proves a record exists


def test_06_3_no_threshold_is_private_but_floods_the_table():
    assert _histogram_audit(nb06._no_threshold)
    assert not nb06._useful(nb06._no_threshold)


def test_06_3_the_right_release_passes_both():
    assert _histogram_audit(nb06._every_cell) and nb06._useful(nb06._every_cell)


def test_flags_leak_and_within_claim_agree_on_a_deterministic_release():
    def exact(counts, rng):          # no noise: the two neighbours always give different events
        return event(np.asarray(counts) > 0)
    assert flags_leak(exact, (0.0, 1.0), [(1.0, 1.0)], 1.0, n_samples=200, seed=0)
    assert not within_claim(exact, (0.0, 1.0), [(1.0, 1.0)], 1.0, n_samples=200, seed=0)


def test_event_refuses_a_release_of_the_wrong_shape():
    with pytest.raises(ValueError):
        event(np.zeros((2, 2)))
    assert event([True, False, 1]) == "101"


def test_stored_results_are_found_from_any_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)       # not notebooks/: the checkout's notebooks/results is used
    path = _stored.results_path("04_accuracy_epsilon.csv")
    assert path.parent.name == "results" and path.is_file()
    (tmp_path / "results").mkdir()    # a notebook's own results folder comes first
    (tmp_path / "results" / "04_accuracy_epsilon.csv").write_text("epsilon\n1\n")
    assert _stored.results_path("04_accuracy_epsilon.csv") == tmp_path / "results" / "04_accuracy_epsilon.csv"
    with pytest.raises(FileNotFoundError):
        _stored.results_path("no_such_result.csv")
