"""End-to-end privacy audits of the sparse vector technique, randomized response and the Gaussian
mechanism (README, "Audited end to end").

* AboveThreshold (``dpexplore.svt.above_threshold``, through its accountant): ``assert_private``
  at ε = 1 on the neighbours of ``dpexplore.svt_audit.SVT_NEIGHBOURS``, and the same audit flags
  ``weakened_noise(3)`` (proof of power);
* the variants Lyu, Su & Li (2017) catalogue as broken (``dpexplore.svt_audit``): the package's
  audit (``audit_svt``) refutes each at its claimed ε = 1 on the pair built against it, and passes
  the sound one on every pair;
* randomized response and the Gaussian mechanism: within ε, and flagged when weakened.

Each audit prints one table row: path, pair, claimed ε, measured lower bound.
"""
from __future__ import annotations

import numpy as np
import pytest

from dpexplore import mechanisms
from dpexplore.svt import above_threshold
from dpexplore.svt_audit import (SVT_NEIGHBOURS, audit_svt, svt_releasing_values, svt_without_halting,
                                 svt_without_query_noise)

from privacy_audit import assert_flagged, assert_private, long_audit, weakened_noise

EPS = 1.0
MARGIN = 1.2      # a broken variant's lower bound must reach 1.2·ε
VARIANTS = {"AboveThreshold (D&R Alg. 1)": above_threshold,
            "no query noise (Lyu Alg. 5)": svt_without_query_noise,
            "no halting (Lyu Alg. 6)": svt_without_halting,
            "released value (Lyu Alg. 3)": svt_releasing_values}


def _row(path: str, pair: str, lower: float, note: str = "") -> None:
    print(f"AUDIT | {path:<30} | {pair:<17} | claimed ε {EPS:4.2f} | lower bound {lower:6.3f} | {note}")


def _run(pair: str):
    event = SVT_NEIGHBOURS[pair][2]
    return lambda queries, rng: event(above_threshold(queries, 0.0, epsilon=EPS, random_state=rng))


def test_audit_above_threshold_and_its_power():
    D, D2, _ = SVT_NEIGHBOURS["below then above"]
    res = assert_private(_run("below then above"), D, D2, EPS, n_samples=4000)
    with weakened_noise(3):
        weak = assert_flagged(_run("below then above"), D, D2, EPS, n_samples=4000)
    assert weak.epsilon_lower >= MARGIN * EPS
    _row("AboveThreshold", "below then above", res.epsilon_lower, f"weakened ×3: {weak.epsilon_lower:.3f}")


def test_the_package_audit_passes_above_threshold_on_every_pair():
    table = audit_svt(above_threshold, epsilon=EPS, n_samples=2000, random_state=0)
    for row in table.itertuples():
        _row("AboveThreshold", row.pair, row.epsilon_lower)
    assert list(table["pair"]) == list(SVT_NEIGHBOURS) and not table["violates"].any()


@pytest.mark.parametrize("variant,pair,n_samples", [
    (svt_without_query_noise, "threshold ± 1", 1000),
    (svt_without_halting, "opposite blocks", 1000),
    (svt_releasing_values, "released value", 40_000),
])
def test_the_package_audit_refutes_each_broken_variant(variant, pair, n_samples):
    table = audit_svt(variant, epsilon=EPS, pairs=[pair], n_samples=n_samples, random_state=0)
    lower = float(table["epsilon_lower"].iloc[0])
    _row(variant.__name__, pair, lower, "refuted" if lower > EPS else "NOT refuted")
    assert table["violates"].all() and lower >= MARGIN * EPS


def test_the_variants_claim_epsilon_but_the_sound_one_spends_it():
    from dpexplore import BudgetAccountant
    from dpexplore.exceptions import NotDifferentiallyPrivateWarning

    for variant in (svt_without_query_noise, svt_without_halting, svt_releasing_values):
        with pytest.warns(NotDifferentiallyPrivateWarning, match="NOT differentially private"):
            out = variant([0.0, 5.0, 5.0], 1.0, epsilon=1e6, random_state=0)
        np.testing.assert_array_equal(~np.isnan(out) if out.dtype.kind == "f" else out,
                                      [False, True] if variant is svt_releasing_values else [False, True, True])
    acc = BudgetAccountant(1.0)
    above_threshold([0.0, 5.0], 1.0, epsilon=1.0, random_state=0, accountant=acc)
    assert acc.spent == 1.0
    with pytest.raises(ValueError, match="unknown pair"):
        audit_svt(above_threshold, pairs=["nowhere"])


def test_audit_randomized_response_and_gaussian_with_their_power():
    rr = lambda bit, rng, n: mechanisms.randomized_response(np.full(n, bit), epsilon=EPS, random_state=rng)
    gauss = lambda v, rng, n: mechanisms.gaussian(np.full(n, v), epsilon=EPS, delta=1e-6, random_state=rng)
    for name, run, pair in [("randomized response", rr, (0, 1)), ("Gaussian, δ = 1e-6", gauss, (0.0, 1.0))]:
        res = assert_private(run, *pair, EPS, n_samples=50_000, batched=True)
        with weakened_noise(3):
            weak = assert_flagged(run, *pair, EPS, n_samples=50_000, batched=True)
        _row(name, f"{pair[0]} vs {pair[1]}", res.epsilon_lower, f"weakened ×3: {weak.epsilon_lower:.3f}")


@long_audit
def test_long_audit_every_variant_on_every_pair():
    for name, variant in VARIANTS.items():
        table = audit_svt(variant, epsilon=EPS, n_samples=40_000, random_state=1)
        for row in table.itertuples():
            _row(name, row.pair, row.epsilon_lower, "refuted" if row.violates else "")
        assert table["violates"].any() == (variant is not above_threshold)
