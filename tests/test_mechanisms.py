"""Statistical tests of the mechanisms: moments, distributions and privacy-loss audits."""
import itertools

import numpy as np
import pytest
from scipy import stats

from dpexplore import mechanisms as m
from dpexplore.audit import privacy_loss

N = 200_000


@pytest.mark.parametrize("epsilon,sensitivity", [(0.1, 1.0), (1.0, 1.0), (2.0, 3.0)])
def test_laplace_mean_variance_and_distribution(epsilon, sensitivity):
    x = m.laplace(np.full(N, 5.0), epsilon=epsilon, sensitivity=sensitivity, random_state=1)
    var = m.laplace_variance(epsilon=epsilon, sensitivity=sensitivity)
    assert abs(x.mean() - 5.0) < 4 * np.sqrt(var / N)
    # the variance of the sample variance of Laplace is (μ4 - σ⁴)/n with μ4 = 6·(σ²)²·... = 24b⁴
    b = sensitivity / epsilon
    assert abs(x.var() - var) < 4 * np.sqrt((24 * b**4 - var**2) / N)
    ks = stats.kstest(x - 5.0, lambda t: m.laplace_cdf(t, epsilon=epsilon, sensitivity=sensitivity))
    assert ks.pvalue > 1e-3


def test_laplace_density_cdf_tail_are_consistent():
    t = np.linspace(-20, 20, 4001)
    pdf = m.laplace_pdf(t, epsilon=0.5)
    assert np.trapezoid(pdf, t) == pytest.approx(1 - 2 * m.laplace_tail(20, epsilon=0.5), rel=1e-4)
    assert np.allclose(1 - m.laplace_cdf(t, epsilon=0.5), m.laplace_tail(t, epsilon=0.5))
    # far tail: no 1 - cdf cancellation (1 - cdf would round to 0 here)
    assert m.laplace_tail(50.0, epsilon=1.0) == pytest.approx(0.5 * np.exp(-50.0), rel=1e-12)
    assert isinstance(m.laplace(3.0, epsilon=1.0, random_state=0), float)


@pytest.mark.parametrize("epsilon,sensitivity", [(0.5, 1), (1.0, 2)])
def test_geometric_pmf_matches_samples(epsilon, sensitivity):
    z = m.geometric(np.zeros(N, dtype=int), epsilon=epsilon, sensitivity=sensitivity, random_state=2)
    assert z.dtype.kind == "i"
    ks = np.arange(-8, 9)
    observed = np.array([(z == k).sum() for k in ks])
    expected = m.geometric_pmf(ks, epsilon=epsilon, sensitivity=sensitivity) * N
    chi2 = ((observed - expected) ** 2 / expected).sum()
    assert chi2 < stats.chi2.ppf(0.999, len(ks))
    assert abs(z.var() - m.geometric_variance(epsilon=epsilon, sensitivity=sensitivity)) < \
        0.05 * m.geometric_variance(epsilon=epsilon, sensitivity=sensitivity)
    assert m.geometric_pmf(np.arange(-200, 201), epsilon=epsilon, sensitivity=sensitivity).sum() == pytest.approx(1)


def test_exponential_frequencies_match_exact_probabilities():
    u = np.array([0.0, 1.0, 2.0, 5.0, -np.inf])
    probs = m.exponential_probabilities(u, epsilon=1.0, sensitivity=1.0)
    w = np.exp(u[:4] / 2)
    assert np.allclose(probs[:4], w / w.sum()) and probs[4] == 0
    rng = np.random.default_rng(3)
    picks = np.array([m.exponential(u, epsilon=1.0, sensitivity=1.0, random_state=rng) for _ in range(20_000)])
    freq = np.bincount(picks, minlength=5) / picks.size
    assert np.all(np.abs(freq - probs) < 4 * np.sqrt(probs * (1 - probs) / picks.size) + 1e-12)


def test_exponential_is_stable_for_huge_utilities():
    probs = m.exponential_probabilities([40_000.0, 39_990.0, 0.0], epsilon=1.0, sensitivity=1.1)
    assert np.all(np.isfinite(probs)) and probs.sum() == pytest.approx(1)
    assert probs[0] / probs[1] == pytest.approx(np.exp(10 / 2.2))


def test_exponential_interval_worked_example():
    # DiffMulti Example 4.5: YoB values cut [1930, 1999) into 7 sub-intervals
    edges = np.array([1930, 1947, 1953, 1955, 1957, 1959, 1968, 1999.0])
    utility = np.array([3, 4, 5, 4, 3, 4, 3.0])
    p = m.exponential_interval_probabilities(edges, utility, epsilon=1.0, sensitivity=1.0)
    w = np.diff(edges) * np.exp(utility / 2)
    assert np.allclose(p, w / w.sum())
    # with ε → large, the noise-free best interval (1953, 1955] wins
    p_big = m.exponential_interval_probabilities(edges, utility, epsilon=200.0, sensitivity=1.0)
    assert np.argmax(p_big) == 2 and p_big[2] > 0.99
    rng = np.random.default_rng(4)
    pts = np.array([m.exponential_interval(edges, utility, epsilon=1.0, sensitivity=1.0, random_state=rng)
                    for _ in range(20_000)])
    freq = np.histogram(pts, bins=edges)[0] / pts.size
    assert np.all(np.abs(freq - p) < 4 * np.sqrt(p * (1 - p) / pts.size))


def _exact_subset_distribution(q, k, epsilon, sensitivity):
    subsets = list(itertools.combinations(range(len(q)), k))
    logw = np.array([epsilon * q[list(s)].sum() / (2 * sensitivity) for s in subsets])
    p = np.exp(logw - logw.max())
    return subsets, p / p.sum()


def test_exponential_subset_matches_enumeration():
    q = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0])
    subsets, exact = _exact_subset_distribution(q, 2, 1.0, 2.0)
    rng = np.random.default_rng(5)
    n = 40_000
    counts = dict.fromkeys(subsets, 0)
    for _ in range(n):
        counts[tuple(m.exponential_subset(q, 2, epsilon=1.0, sensitivity=2.0, random_state=rng))] += 1
    freq = np.array([counts[s] for s in subsets]) / n
    assert np.max(np.abs(freq - exact)) < 0.01
    chi2 = n * ((freq - exact) ** 2 / exact).sum()
    assert chi2 < stats.chi2.ppf(0.999, len(subsets) - 1)


def test_exponential_subset_inclusion_is_exact():
    q = np.array([10.0, 2.0, 7.0, 7.0, 0.0, 3.0, 8.0])
    for k in (1, 3, 7):
        subsets, exact = _exact_subset_distribution(q, k, 0.7, k)
        inc = np.zeros(len(q))
        for s, p in zip(subsets, exact):
            inc[list(s)] += p
        got = m.exponential_subset_inclusion(q, k, epsilon=0.7, sensitivity=k)
        assert np.allclose(got, inc) and got.sum() == pytest.approx(k)


@pytest.mark.parametrize("name,call", [
    ("laplace", lambda d, rng, n: m.laplace(np.full(n, d), epsilon=1.0, random_state=rng)),
    ("geometric", lambda d, rng, n: m.geometric(np.full(n, d), epsilon=1.0, random_state=rng)),
])
def test_neighbour_ratio_within_epsilon(name, call):
    result = privacy_loss(call, 10, 11, batched=True, n_samples=200_000, random_state=6)
    assert not result.violates(1.0)
    assert result.epsilon_lower > 0.6  # the audit is sharp enough to see most of the true loss


def test_exponential_neighbour_ratio_within_epsilon():
    # counts of three candidates; a neighbour adds one record to candidate 0 (sensitivity 1)
    mech = lambda u, rng, n: np.array([m.exponential(u, epsilon=1.0, sensitivity=1.0, random_state=rng) for _ in range(n)])
    result = privacy_loss(mech, np.array([3.0, 4.0, 4.0]), np.array([4.0, 4.0, 4.0]), batched=True,
                          n_samples=30_000, random_state=7)
    assert not result.violates(1.0)


def test_audit_detects_underestimated_sensitivity():
    # a "mechanism" that calibrates to sensitivity 1 on a query whose sensitivity is 3
    call = lambda d, rng, n: m.laplace(np.full(n, 3.0 * d), epsilon=1.0, random_state=rng)
    assert privacy_loss(call, 0, 1, batched=True, n_samples=100_000, random_state=8).violates(1.0)


@pytest.mark.parametrize("kwargs,message", [
    ({"epsilon": 0}, "epsilon"), ({"epsilon": -1}, "epsilon"), ({"epsilon": float("nan")}, "epsilon"),
    ({"epsilon": float("inf")}, "epsilon"), ({"epsilon": 1, "sensitivity": 0}, "sensitivity"),
])
def test_bad_parameters_are_rejected(kwargs, message):
    with pytest.raises(ValueError, match=message):
        m.laplace(1.0, **kwargs)


def test_bad_inputs_are_rejected():
    with pytest.raises(ValueError, match="finite"):
        m.laplace([1.0, np.nan], epsilon=1.0)
    with pytest.raises(ValueError, match="integer"):
        m.geometric([1.5], epsilon=1.0)
    with pytest.raises(ValueError, match="positive integer"):
        m.geometric([1], epsilon=1.0, sensitivity=0.5)
    with pytest.raises(ValueError, match="NaN"):
        m.exponential([1.0, np.nan], epsilon=1.0, sensitivity=1.0)
    with pytest.raises(ValueError, match="-inf"):
        m.exponential([-np.inf, -np.inf], epsilon=1.0, sensitivity=1.0)
    with pytest.raises(ValueError, match="one more"):
        m.exponential_interval([0, 1], [1.0, 2.0], epsilon=1.0, sensitivity=1.0)
    with pytest.raises(ValueError, match="k must"):
        m.exponential_subset([1.0, 2.0], 3, epsilon=1.0, sensitivity=1.0)
    with pytest.raises(TypeError, match="random_state"):
        m.laplace(1.0, epsilon=1.0, random_state="seed")


def test_inputs_are_not_mutated_and_seeds_reproduce():
    x = np.arange(5, dtype=float)
    before = x.copy()
    a = m.laplace(x, epsilon=1.0, random_state=42)
    b = m.laplace(x, epsilon=1.0, random_state=42)
    assert np.array_equal(x, before) and np.array_equal(a, b) and not np.array_equal(a, x)
