"""The exponential mechanism over intervals draws points of a public lattice (McSherry & Talwar
2007; DiffMulti Eq. 11–12 with the counting measure), and the lattice helpers behind it."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpexplore import mechanisms as m
from dpexplore.domain import Attribute, Schema
from dpexplore.models.logistic import (PrivateLogisticRegression, make_gaussian_toy, output_perturbation_lattice,
                                       output_perturbation_scale)
from dpexplore.publish.diffmulti import private_split_point, split_utilities


def _points(edges, resolution, origin):
    """Every lattice point in [edges[0], edges[-1]) and the interval holding it (brute force)."""
    k = np.arange(math.floor((edges[0] - origin) / resolution) - 1, math.ceil((edges[-1] - origin) / resolution) + 2)
    pts = origin + k * resolution
    pts = pts[(pts >= edges[0]) & (pts < edges[-1])]
    return pts, np.searchsorted(edges, pts, side="right") - 1


# --------------------------------------------------------------------------- the primitive
def test_probabilities_are_the_finite_exponential_mechanism_over_the_lattice():
    edges = np.array([0.0, 0.3, 0.35, 1.1, 2.0])        # [0.3, 0.35) holds no point of 0.25ℤ
    u = np.array([1.0, 9.0, 2.0, 0.0])
    pts, where = _points(edges, 0.25, 0.0)
    w = np.exp(1.5 * u[where] / 2)                     # P[point] ∝ exp(ε·u/2Δ) over the lattice
    per_point = w / w.sum()
    p = m.exponential_interval_probabilities(edges, u, epsilon=1.5, sensitivity=1.0, resolution=0.25)
    expected = np.bincount(where, weights=per_point, minlength=4)
    np.testing.assert_allclose(p, expected, rtol=1e-12)
    assert p[1] == 0.0                                  # a high utility does not help an empty interval
    rng = np.random.default_rng(3)
    draws = np.array([m.exponential_interval(edges, u, epsilon=1.5, sensitivity=1.0, resolution=0.25,
                                             random_state=rng) for _ in range(8000)])
    assert set(np.unique(draws)) <= set(pts)            # only lattice points, never 0.3 + 0.05·U
    freq = np.array([(draws == x).mean() for x in pts])
    assert np.all(np.abs(freq - per_point) < 5 * np.sqrt(per_point * (1 - per_point) / draws.size) + 1e-3)


def test_the_output_support_does_not_depend_on_the_inner_edges():
    # two neighbours' pieces of the same public region: the same set of possible outputs
    outputs = []
    for inner in ([0.1, 0.7], [0.1, 0.4321, 0.7]):
        edges = np.array([0.0, *inner, 1.0])
        u = np.zeros(edges.size - 1)
        rng = np.random.default_rng(0)
        draws = {m.exponential_interval(edges, u, epsilon=1.0, sensitivity=1.0, resolution=1 / 8, random_state=rng)
                 for _ in range(400)}
        outputs.append(draws)
    assert outputs[0] == outputs[1] == {k / 8 for k in range(8)}


def test_default_lattice_follows_the_outer_edges_and_approximates_lengths():
    assert m.lattice_resolution(0.0, 1.0) == 2.0 ** -20
    assert m.lattice_resolution(1930, 1999) == 2.0 ** -14       # 69 / 2**20 lies in [2**-14, 2**-13)
    with pytest.raises(ValueError, match="lower < upper"):
        m.lattice_resolution(1.0, 1.0)
    edges = np.array([0.0, 0.1, 0.35, 1.0])
    u = np.array([0.0, 1.0, 0.5])
    p = m.exponential_interval_probabilities(edges, u, epsilon=1.0, sensitivity=1.0)
    w = np.diff(edges) * np.exp(u / 2)
    np.testing.assert_allclose(p, w / w.sum(), rtol=1e-5)       # counts ≈ lengths · 2**20


def test_a_lattice_of_more_than_2_to_the_32_points_draws_exact_integers():
    rng = np.random.default_rng(1)
    draws = [m.exponential_interval([0.0, 2.0 ** 40], [0.0], epsilon=1.0, sensitivity=1.0, resolution=1.0,
                                    random_state=rng) for _ in range(200)]
    assert all(x.is_integer() and 0 <= x < 2 ** 40 for x in draws)
    assert 0.3 < np.mean(np.array(draws) < 2.0 ** 39) < 0.7


def test_bad_lattices_are_refused_naming_the_rule():
    edges, u = [0.0, 0.5, 1.0], [1.0, 2.0]
    with pytest.raises(ValueError, match="resolution must be a finite number > 0"):
        m.exponential_interval(edges, u, epsilon=1.0, sensitivity=1.0, resolution=0.0)
    with pytest.raises(ValueError, match="resolution must be a finite number > 0"):
        m.exponential_interval(edges, u, epsilon=1.0, sensitivity=1.0, resolution=float("nan"))
    with pytest.raises(TypeError, match="resolution must be a number"):
        m.exponential_interval(edges, u, epsilon=1.0, sensitivity=1.0, resolution="fine")
    with pytest.raises(ValueError, match="at most 2\\*\\*52 steps"):
        m.exponential_interval(edges, u, epsilon=1.0, sensitivity=1.0, resolution=2.0 ** -60)
    with pytest.raises(ValueError, match="floating-point steps"):
        m.check_lattice(1e-7, 0.0, lower=1e9, upper=1e9 + 1)
    with pytest.raises(ValueError, match="origin must be finite"):
        m.exponential_interval(edges, u, epsilon=1.0, sensitivity=1.0, resolution=0.1, origin=float("inf"))
    with pytest.raises(ValueError, match="nothing can be drawn"):   # no lattice point at all
        m.exponential_interval([0.1, 0.2, 0.3], u, epsilon=1.0, sensitivity=1.0, resolution=1.0)


# --------------------------------------------------------------------------- lattice helpers
def test_lattice_index_is_exact_against_the_lattice_points():
    rng = np.random.default_rng(5)
    resolution, origin = 0.1, 17.3                      # neither exact in binary
    k = rng.integers(-10_000, 10_000, 500)
    pts = np.asarray(m.lattice_value(k, resolution=resolution, origin=origin))
    values = np.concatenate([pts, np.nextafter(pts, np.inf), np.nextafter(pts, -np.inf),
                             rng.uniform(-1000, 1000, 500)])
    idx = m.lattice_index(values, resolution=resolution, origin=origin)
    above = np.asarray(m.lattice_value(idx, resolution=resolution, origin=origin))
    below = np.asarray(m.lattice_value(idx - 1, resolution=resolution, origin=origin))
    assert np.all(below < values) and np.all(values <= above)
    np.testing.assert_array_equal(idx[:500], k)                     # a lattice point is its own index
    snapped = m.snap_to_lattice(values, resolution=resolution, origin=origin)
    assert np.all(np.abs(snapped - values) <= resolution / 2 + 1e-9)
    back = m.lattice_value(m.lattice_index(snapped, resolution=resolution, origin=origin),
                           resolution=resolution, origin=origin)
    np.testing.assert_array_equal(back, snapped)                    # snapped values are lattice points
    assert np.isfinite(m.snap_to_lattice(1e300, resolution=2.0 ** -20))


# --------------------------------------------------------------------------- declared resolutions
def test_attribute_resolution_defaults_declarations_and_round_trip():
    assert Attribute.numeric("age", 17, 90, integer=True).lattice == (1.0, 17.0)
    cont = Attribute.numeric("z", -1.0, 3.0)
    assert cont.lattice == (2.0 ** -18, -1.0) and "resolution" not in cont.to_dict()
    cents = Attribute.numeric("price", 0, 500, resolution=0.01)
    assert cents.to_dict()["resolution"] == 0.01
    assert Attribute.from_dict(cents.to_dict()).lattice == (0.01, 0.0)
    decades = Attribute.numeric("year", 1900, 2000, integer=True, resolution=10)
    assert Attribute.from_dict(decades.to_dict()).lattice == (10.0, 1900.0)
    for bad, rule in [(0, "finite number > 0"), (1000, "wider than its range"), (1e-14, "2\\*\\*52 steps")]:
        with pytest.raises(ValueError, match=f"attribute 'price': .*{rule}"):
            Attribute.numeric("price", 0, 500, resolution=bad)
    with pytest.raises(ValueError, match="'year': an integer attribute needs a whole-number resolution"):
        Attribute.numeric("year", 1900, 2000, integer=True, resolution=2.5)


def test_split_points_follow_the_exponential_mechanism_over_a_declared_lattice():
    """Continuous region [0, 1), lattice 1/16: the package's split distribution (its per-piece
    probabilities, uniform inside a piece) equals the brute-force EM over the 15 split points."""
    values = np.array([0.1, 0.3, 0.3, 0.55, 0.8])
    y = np.array([0, 0, 1, 1, 1])
    eps, lattice = 2.0, (1 / 16, 0.0)
    s_all = np.arange(1, 16) / 16                       # strictly between a = 0 and b = 1
    u = np.array([max(np.sum(y[values < s] == 0), np.sum(y[values < s] == 1))
                  + max(np.sum(y[values >= s] == 0), np.sum(y[values >= s] == 1)) for s in s_all], dtype=float)
    brute = np.exp(eps * u / 2) / np.exp(eps * u / 2).sum()
    edges, _, _ = split_utilities(values, y, 2, 0.0, 1.0, integer=False)
    _, probs = private_split_point(values, y, 2, 0.0, 1.0, integer=False, score="max", epsilon=eps, sensitivity=1.0,
                                   domain_width=1.0, random_state=0, return_probabilities=True, lattice=lattice)
    piece = np.searchsorted(edges, s_all, side="left") - 1       # piece k: edges[k] < s ≤ edges[k+1]
    per_point = probs[piece] / np.bincount(piece, minlength=probs.size)[piece]
    np.testing.assert_allclose(per_point, brute, rtol=1e-12)
    rng = np.random.default_rng(2)
    for score in ("max", "ncp"):
        draws = {private_split_point(values, y, 2, 0.0, 1.0, integer=False, score=score, epsilon=eps,
                                     sensitivity=1.0, domain_width=1.0, random_state=rng, lattice=lattice)
                 for _ in range(300)}
        assert draws <= set(s_all)


def test_integer_split_points_keep_their_seeded_draws():
    """On the integers the lattice sampler consumes the generator as the former uniform draw did:
    the same seed gives the same split, so releases on integer attributes are unchanged."""
    values = np.array([3, 5, 5, 9, 12])
    y = np.array([0, 1, 0, 1, 1])
    edges, left, total = split_utilities(values, y, 2, 0, 20, integer=True)
    util = np.stack([left, total - left], axis=1).max(axis=-1).sum(axis=-1)
    for seed in range(200):
        rng = np.random.default_rng(seed)               # the former sampler: length base measure, ⌊a + L·U⌋ + 1
        logw = np.log(np.diff(edges)) + 0.7 * util / 2
        p = np.exp(logw - logw.max())
        i = int(rng.choice(p.size, p=p / p.sum()))
        former = math.floor(rng.uniform(edges[i], edges[i + 1])) + 1
        now = private_split_point(values, y, 2, 0, 20, integer=True, score="max", epsilon=0.7, sensitivity=1.0,
                                  domain_width=19, random_state=seed)
        assert now == former


# --------------------------------------------------------------------------- output perturbation
def test_output_perturbation_releases_lattice_points_with_the_rounding_paid_for():
    X, y, bounds = make_gaussian_toy(200, 3, random_state=0)
    lam, eps = 2.0, 0.5
    grid, scale = output_perturbation_lattice(eps, lam, 3)
    assert grid == 2.0 ** math.floor(math.log2((2 / lam) / (2 ** 20 * math.sqrt(3))))   # public: λ and D only
    textbook = output_perturbation_scale(eps, lam)
    assert textbook < scale <= textbook * (1 + 2.0 ** -20)     # the rounding's ε correction
    model = PrivateLogisticRegression(eps, method="output", lam=lam, bounds=bounds, classes=[0, 1],
                                      random_state=1).fit(X, y)
    assert model.grid_ == grid and model.noise_scale_ == scale
    units = model.theta_ / grid
    np.testing.assert_array_equal(units, np.round(units))       # every coefficient a multiple of g
    other = PrivateLogisticRegression(eps, method="output", lam=lam, bounds=bounds, classes=[0, 1],
                                      random_state=1).fit(X[1:], y[1:])
    assert other.grid_ == grid                                  # the lattice does not follow the data


def test_objective_perturbation_releases_points_of_its_public_grid():
    from dpexplore.models.logistic import OBJECTIVE_GRID

    X, y, bounds = make_gaussian_toy(200, 3, random_state=0)
    for data in ((X, y), (X[1:], y[1:])):               # the grid does not follow the data
        model = PrivateLogisticRegression(0.5, method="objective", lam=0.5, bounds=bounds, classes=[0, 1],
                                          random_state=1).fit(*data)
        units = model.theta_ / OBJECTIVE_GRID
        np.testing.assert_array_equal(units, np.round(units))
        assert np.any(model.theta_ != 0)


def test_declared_resolution_reaches_diffmulti_and_diffgen_splits():
    from dpexplore.publish import DiffGen, DiffMulti

    rng = np.random.default_rng(0)
    schema = Schema([Attribute.numeric("price", 0, 100, resolution=0.25)], "label", ["a", "b"])
    X = pd.DataFrame({"price": rng.uniform(0, 100, 300)})
    y = pd.Series(np.where(X["price"] > 37.1, "b", "a"))
    tree = DiffMulti(5.0, h=20, random_state=1, schema=schema).fit(X, y).tree_
    gen = DiffGen(5.0, steps=4, random_state=1, schema=schema).fit(X, y).history_
    splits = np.concatenate([tree["split"].dropna().to_numpy(float), gen["split"].dropna().to_numpy(float)])
    assert splits.size > 3
    np.testing.assert_array_equal(splits * 4, np.round(splits * 4))   # multiples of 0.25
    assert np.all((splits > 0) & (splits < 100))
