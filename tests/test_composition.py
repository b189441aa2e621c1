"""Composition theorems (dpexplore.composition): the formulas' values, their order and monotonicity."""
import math

import numpy as np
import pytest

from dpexplore import composition as c
from dpexplore.mechanisms import gaussian_privacy_loss, gaussian_scale


def test_known_values():
    assert c.basic_composition(0.1, 10, delta=1e-6) == pytest.approx((1.0, 1e-5))
    # Dwork & Roth Thm 3.20 by hand: √(2·100·ln 1e5)·0.1 + 100·0.1·(e^0.1 − 1)
    eps, delta = c.advanced_composition(0.1, 100, delta_prime=1e-5, delta=1e-7)
    assert eps == pytest.approx(math.sqrt(200 * math.log(1e5)) * 0.1 + 10 * (math.exp(0.1) - 1))
    assert eps == pytest.approx(5.8502, abs=1e-4) and delta == pytest.approx(1e-5 + 100 * 1e-7)
    # Bun & Steinke: ε-DP → ε²/2-zCDP; ρ-zCDP → (ρ + 2√(ρ ln 1/δ), δ)
    assert c.zcdp_of_pure(0.2) == pytest.approx(0.02)
    assert c.zcdp_to_dp(0.5, delta=1e-5) == pytest.approx(0.5 + 2 * math.sqrt(0.5 * math.log(1e5)))
    assert c.zcdp_of_gaussian(sigma=3.0, sensitivity=2.0) == pytest.approx(2 / 9)


def test_gaussian_zcdp_is_the_mean_of_its_privacy_loss():
    sigma = gaussian_scale(epsilon=0.5, delta=1e-5, sensitivity=2.0)
    assert c.zcdp_of_gaussian(sigma=sigma, sensitivity=2.0) == pytest.approx(
        gaussian_privacy_loss(sigma=sigma, sensitivity=2.0).mean())


def test_composed_epsilon_is_the_three_formulas_and_grows_with_k():
    ks = np.array([1, 2, 5, 10, 50, 100, 1000])
    table = c.composed_epsilon(0.1, ks, delta=1e-6)
    assert table["k"].tolist() == ks.tolist()
    for row in table.itertuples():
        assert row.basic == pytest.approx(c.basic_composition(0.1, row.k)[0])
        assert row.advanced == pytest.approx(c.advanced_composition(0.1, row.k, delta_prime=1e-6)[0])
        assert row.zcdp == pytest.approx(c.zcdp_to_dp(row.k * 0.1 ** 2 / 2, delta=1e-6))
    for col in ("basic", "advanced", "zcdp"):
        assert np.all(np.diff(table[col]) > 0)
    # many small steps: advanced and zCDP grow like √k and end far below kε; zCDP below advanced
    big = table.iloc[-1]
    assert big.zcdp < big.advanced < big.basic / 2
    assert table.iloc[0].advanced > table.iloc[0].basic        # one step: advanced is the loosest


def test_monotone_in_epsilon_and_delta():
    eps = [c.advanced_composition(e, 20, delta_prime=1e-5)[0] for e in (0.01, 0.1, 0.5, 1.0)]
    assert np.all(np.diff(eps) > 0)
    by_delta = [c.zcdp_to_dp(0.1, delta=d) for d in (1e-9, 1e-6, 1e-3, 0.1)]
    assert np.all(np.diff(by_delta) < 0)                        # a larger δ buys a smaller ε
    by_delta = [c.advanced_composition(0.1, 50, delta_prime=d)[0] for d in (1e-9, 1e-6, 1e-3)]
    assert np.all(np.diff(by_delta) < 0)


@pytest.mark.parametrize("call,message", [
    (lambda: c.basic_composition(0.0, 3), "epsilon"),
    (lambda: c.basic_composition(1.0, 0), "k"),
    (lambda: c.advanced_composition(1.0, 3, delta_prime=0.0), "delta_prime"),
    (lambda: c.zcdp_to_dp(0.1, delta=1.0), "delta"),
    (lambda: c.zcdp_to_dp(-0.1, delta=0.1), "rho"),
    (lambda: c.composed_epsilon(1.0, [1, -2], delta=1e-5), "k"),
])
def test_bad_arguments_name_themselves(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("epsilon, delta", [(1.0, 1e-6), (0.1, 1e-5), (3.0, 1e-9), (0.03, 0.1)])
def test_dp_to_zcdp_is_the_inverse_of_the_conversion(epsilon, delta):
    rho = c.dp_to_zcdp(epsilon, delta=delta)
    assert c.zcdp_to_dp(rho, delta=delta) == pytest.approx(epsilon, rel=1e-12)
    assert c.zcdp_to_dp(rho * 1.01, delta=delta) > epsilon          # the largest such ρ
    with pytest.raises(ValueError, match="delta"):
        c.dp_to_zcdp(epsilon, delta=0.0)
