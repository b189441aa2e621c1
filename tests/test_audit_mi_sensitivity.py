"""End-to-end audit: no fitted attribute of the MI k-subset selector is a function of the private N.

Thesis §3.5.2.2 (eq. 3.20, Table 3.2): the MI sensitivity ΔI(N) falls with N. A selector that
computed it from the data's own N released N in ``score_sensitivity_`` and ``subset_sensitivity_``
(exactly: ΔI(299) ≠ ΔI(300)), so neighbours of 300 and 301 records were told apart with
certainty. The audit runs the public API on both neighbours, with the fitted attributes as the
output (each distinct value an event), and bounds ε from below (tests/privacy_audit.py).

* After the fix, ``feature_score="mi"`` needs a declared ``n_min`` and refuses without one for
  every data set alike; with one, both attributes are ΔI(n_min)-based on both sides.
* The broken variant below is the code before the fix (n_min=None → ΔI(N − 1) from the private
  N); the same audit, same seed and number of runs, must flag it.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from dpexplore.select.thesis import PrivateKSubsetSelector
from privacy_audit import assert_flagged, assert_private

EPSILON = 1.0
N_SAMPLES = 1000
CLASSES = [0, 1]


def _neighbours(n: int = 300, d: int = 5, seed: int = 0) -> tuple[tuple, tuple]:
    """(X, y) with n records and its neighbour with one record added."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n + 1)
    X = np.where(rng.random((n + 1, d)) < np.linspace(0.5, 0.9, d), y[:, None], 1 - y[:, None])
    return (X[:n], y[:n]), (X, y)


class _SensitivityFromPrivateN(PrivateKSubsetSelector):
    """The code before the fix: with ``n_min=None`` the MI sensitivity was ΔI(max(N − 1, 2)),
    N the private number of records (a PrivacyLeakWarning, and an exact function of N)."""

    def _mechanism_params(self, X, y):
        declared = self.n_min
        if declared is None:
            self.n_min = max(len(X) - 1, 2)
        try:
            return super()._mechanism_params(X, y)
        finally:
            self.n_min = declared


def _released(selector_class, n_min):
    """run(data, rng) for the audit: the fitted attributes, or the refusal, as one hashable value."""
    def run(data, rng):
        X, y = data
        selector = selector_class(k=2, epsilon=EPSILON, feature_score="mi", n_min=n_min, classes=CLASSES,
                                  random_state=rng)
        try:
            selector.fit(X, y)
        except ValueError as err:
            return f"refused: {err}"
        return f"score_sensitivity_={selector.score_sensitivity_!r}, " \
               f"subset_sensitivity_={selector.subset_sensitivity_!r}"
    return run


def test_mi_selector_attributes_do_not_tell_neighbours_apart():
    data, neighbour = _neighbours()
    before = assert_flagged(_released(_SensitivityFromPrivateN, None), data, neighbour, EPSILON,
                            n_samples=N_SAMPLES, seed=0)
    after = assert_private(_released(PrivateKSubsetSelector, None), data, neighbour, EPSILON,
                           n_samples=N_SAMPLES, seed=0)
    declared = assert_private(_released(PrivateKSubsetSelector, 200), data, neighbour, EPSILON,
                              n_samples=N_SAMPLES, seed=0)
    # before: each neighbour always shows its own value, never the other's
    events = before.table.set_index("event")
    assert (events["count"] * events["count_neighbour"] == 0).all()
    # after: one output on both sides (the same refusal; the same ΔI(200)-based attributes)
    for result, start in ((after, "refused: feature_score='mi' needs n_min"),
                          (declared, "score_sensitivity_=")):
        seen = result.table[result.table["count"] > 0]
        assert len(seen) == 1 and seen["event"].iloc[0].startswith(start)
        assert seen["count"].iloc[0] == seen["count_neighbour"].iloc[0] == N_SAMPLES
    report = pd.DataFrame({"variant": ["before (ΔI(N-1))", "after (n_min=None)", "after (n_min=200)"],
                           "epsilon_lower": [r.epsilon_lower for r in (before, after, declared)]})
    print(report.to_string(index=False))
