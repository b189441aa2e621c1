"""End-to-end privacy audit of the Gaussian mechanism released through the budget accountant
(README, "Audited end to end").

``gaussian(..., accountant=acc)`` spends (ε, δ) on an accountant with a δ budget and draws
N(0, σ²) noise with σ from the analytic calibration (Balle & Wang 2018, Thm 8). The audit is the
package's pure-ε one: with its sample sizes it cannot see events of probability δ = 10⁻⁶ (which is
what δ allows), so it checks the ε part of the claim on neighbouring values one L2 sensitivity
apart. Its power: the same audit flags noise a third of the calibrated σ while the ledger still
says (ε, δ), and noise calibrated for Δ = 1 on a query whose value moves by 3.
"""
from __future__ import annotations

import numpy as np
import pytest

from dpexplore import mechanisms
from dpexplore.budget import BudgetAccountant

from privacy_audit import assert_flagged, assert_private, long_audit, replaced

EPS, DELTA = 1.0, 1e-6


def _release(sensitivity: float = 1.0, ledgers: list | None = None):
    """n releases of one value through a fresh accountant each call (one spend of (ε, δ))."""
    def run(value: float, rng: np.random.Generator, n: int) -> np.ndarray:
        acc = BudgetAccountant(EPS, delta=DELTA)
        out = mechanisms.gaussian(np.full(n, value), epsilon=EPS, delta=DELTA, sensitivity=sensitivity,
                                  accountant=acc, random_state=rng)
        if ledgers is not None:
            ledgers.append(acc.ledger)
        return out
    return run


def _row(path: str, lower: float, note: str = "") -> None:
    print(f"AUDIT | {path:<40} | claimed (ε, δ) = ({EPS:g}, {DELTA:g}) | lower bound {lower:6.3f} | {note}")


def test_audit_gaussian_through_the_accountant_and_its_power():
    ledgers: list = []
    res = assert_private(_release(ledgers=ledgers), 0.0, 1.0, EPS, n_samples=50_000, batched=True)
    assert ledgers and all(ledger[["epsilon", "delta"]].values.tolist() == [[EPS, DELTA]] for ledger in ledgers)
    original = mechanisms.gaussian_scale
    weak_ledgers: list = []
    with replaced(mechanisms, {"gaussian_scale": lambda **kw: original(**kw) / 3}):
        weak = assert_flagged(_release(ledgers=weak_ledgers), 0.0, 1.0, EPS, n_samples=50_000, batched=True)
    # the ledger cannot tell: it still says (ε, δ); the audit does
    assert all(ledger[["epsilon", "delta"]].values.tolist() == [[EPS, DELTA]] for ledger in weak_ledgers)
    _row("Gaussian, analytic σ", res.epsilon_lower, f"σ / 3: {weak.epsilon_lower:.3f}")


def test_audit_flags_noise_calibrated_for_the_wrong_sensitivity():
    broken = assert_flagged(_release(sensitivity=1.0), 0.0, 3.0, EPS, n_samples=50_000, batched=True)
    sound = assert_private(_release(sensitivity=3.0), 0.0, 3.0, EPS, n_samples=50_000, batched=True)
    _row("Gaussian, Δ = 3 with noise for Δ = 1", broken.epsilon_lower, f"noise for Δ = 3: {sound.epsilon_lower:.3f}")


@long_audit
@pytest.mark.parametrize("calibration", ["analytic", "classical"])
def test_long_audit_gaussian_both_calibrations(calibration):
    eps = 0.5

    def run(value, rng, n):
        acc = BudgetAccountant(eps, delta=DELTA)
        return mechanisms.gaussian(np.full(n, value), epsilon=eps, delta=DELTA, calibration=calibration,
                                   accountant=acc, random_state=rng)

    res = assert_private(run, 0.0, 1.0, eps, n_samples=400_000, batched=True)
    _row(f"Gaussian, {calibration} σ, ε = 0.5", res.epsilon_lower)
