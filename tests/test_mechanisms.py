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


def _permute_and_flip_by_enumeration(u, epsilon, sensitivity, monotone):
    """McKenna & Sheldon 2020, Alg. 1 averaged over every visiting order: stop at i w.p. p_i."""
    t = epsilon * np.asarray(u, dtype=float) / (sensitivity if monotone else 2.0 * sensitivity)
    p = np.exp(t - t.max())
    out = np.zeros(len(u))
    orders = list(itertools.permutations(range(len(u))))
    for order in orders:
        going_on = 1.0 / len(orders)
        for i in order:
            out[i] += going_on * p[i]
            going_on *= 1.0 - p[i]
    return out


@pytest.mark.parametrize("u,monotone", [([0.0, 1.0], True), ([3.0, 1.0, 2.0, 2.5, -np.inf], False),
                                        ([0.0, 0.0, 0.0], True), ([5.0, 4.0, 1.0, 0.0, 2.0, 3.0], True)])
def test_permute_and_flip_probabilities_and_draws_follow_the_algorithm(u, monotone):
    """The exact probabilities are Alg. 1's over all visiting orders, and the draws (the noisy
    max with exponential noise) follow them."""
    probs = m.permute_and_flip_probabilities(u, epsilon=1.3, sensitivity=1.0, monotone=monotone)
    assert probs == pytest.approx(_permute_and_flip_by_enumeration(u, 1.3, 1.0, monotone), abs=1e-12)
    rng = np.random.default_rng(4)
    picks = [m.permute_and_flip(u, epsilon=1.3, sensitivity=1.0, random_state=rng, monotone=monotone)
             for _ in range(20_000)]
    freq = np.bincount(picks, minlength=len(u)) / len(picks)
    assert np.all(np.abs(freq - probs) < 4 * np.sqrt(probs * (1 - probs) / len(picks)) + 1e-12)


def test_permute_and_flip_scores_at_least_the_exponential_mechanism_on_average():
    """McKenna & Sheldon 2020, Thm. 2: never a lower expected score at the same ε; a clear leader
    is taken more often (the parent choice of the marginals relies on it)."""
    rng = np.random.default_rng(5)
    for _ in range(50):
        u = rng.integers(0, 40, size=rng.integers(2, 25)).astype(float)
        pf = m.permute_and_flip_probabilities(u, epsilon=0.3, sensitivity=1.0, monotone=True)
        em = m.exponential_probabilities(u, epsilon=0.3, sensitivity=1.0, monotone=True)
        assert pf @ u >= em @ u - 1e-9
    leader = np.r_[20.0, np.zeros(18)]
    assert (m.permute_and_flip_probabilities(leader, epsilon=0.1, sensitivity=1.0, monotone=True)[0]
            > m.exponential_probabilities(leader, epsilon=0.1, sensitivity=1.0, monotone=True)[0] + 0.05)


def test_permute_and_flip_neighbour_ratio_within_epsilon_and_a_doubled_epsilon_is_flagged():
    """The tight pair of a monotone score: a neighbour raises candidate 0 from a tie, so P(1)
    falls from 1/2 to e^(−ε)/2. At the claimed ε the audit stays below it; the factor-2 reading
    of the monotone rule applied to a score that is not monotone (ε doubled) is flagged."""
    def mech(u, rng, n, epsilon=1.0):
        return np.array([m.permute_and_flip(u, epsilon=epsilon, sensitivity=1.0, random_state=rng,
                                            monotone=True) for _ in range(n)])
    pair = np.array([0.0, 0.0]), np.array([1.0, 0.0])
    ok = privacy_loss(mech, *pair, batched=True, n_samples=30_000, random_state=15)
    assert not ok.violates(1.0) and ok.epsilon_lower > 0.8
    bad = privacy_loss(lambda u, rng, n: mech(u, rng, n, epsilon=2.0), *pair, batched=True,
                       n_samples=30_000, random_state=15)
    assert bad.violates(1.0)


def test_permute_and_flip_never_takes_an_excluded_candidate_and_refuses_bad_input():
    rng = np.random.default_rng(6)
    assert {m.permute_and_flip([1.0, -np.inf, 0.0], epsilon=0.01, sensitivity=1.0, random_state=rng)
            for _ in range(300)} == {0, 2}
    for kwargs, message in [({"epsilon": 0}, "epsilon"), ({"epsilon": 1, "sensitivity": 0}, "sensitivity")]:
        with pytest.raises(ValueError, match=message):
            m.permute_and_flip([0.0, 1.0], **{"sensitivity": 1.0, **kwargs})
    with pytest.raises(ValueError, match="NaN"):
        m.permute_and_flip([0.0, np.nan], epsilon=1.0, sensitivity=1.0)


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


# --------------------------------------------------------------------------- added: closed forms
@pytest.mark.parametrize("epsilon,sensitivity", [(0.3, 1), (1.0, 1), (2.0, 3)])
def test_geometric_variance_formula_is_the_pmf_second_moment(epsilon, sensitivity):
    alpha = np.exp(-epsilon / sensitivity)
    k = np.arange(-3000, 3001)
    pmf = m.geometric_pmf(k, epsilon=epsilon, sensitivity=sensitivity)
    assert pmf.sum() == pytest.approx(1, rel=1e-12)
    assert (pmf * k).sum() == pytest.approx(0, abs=1e-12)
    second = (pmf * k.astype(float) ** 2).sum()
    assert m.geometric_variance(epsilon=epsilon, sensitivity=sensitivity) == pytest.approx(second, rel=1e-9)
    assert second == pytest.approx(2 * alpha / (1 - alpha) ** 2, rel=1e-9)
    assert m.geometric_pmf(0.5, epsilon=epsilon, sensitivity=sensitivity) == 0.0  # integers only


@pytest.mark.parametrize("epsilon,sensitivity", [(0.5, 1), (1.5, 2)])
def test_geometric_mean_and_variance_within_confidence_bounds(epsilon, sensitivity):
    rng = np.random.default_rng(11)
    z = m.geometric(np.full(N, 7), epsilon=epsilon, sensitivity=sensitivity, random_state=rng) - 7
    var = m.geometric_variance(epsilon=epsilon, sensitivity=sensitivity)
    assert abs(z.mean()) < 4 * np.sqrt(var / N)
    # sampling sd of the sample variance: sqrt((μ4 - σ⁴)/n), μ4 from the exact pmf
    k = np.arange(-2000, 2001).astype(float)
    mu4 = (m.geometric_pmf(k, epsilon=epsilon, sensitivity=sensitivity) * k**4).sum()
    assert abs(z.var() - var) < 4 * np.sqrt((mu4 - var**2) / N)


def test_geometric_is_accurate_for_tiny_epsilon():
    # 1 - exp(-ε) would round to 0 here; the sampler and the helpers use expm1
    eps = 1e-17
    assert m.geometric_variance(epsilon=eps) == pytest.approx(2 / eps**2, rel=1e-6)
    z = m.geometric(np.zeros(10, dtype=int), epsilon=eps, random_state=0)
    assert z.dtype.kind == "i" and np.all(z != 0)


def test_laplace_variance_formula():
    assert m.laplace_variance(epsilon=0.5, sensitivity=2.0) == pytest.approx(2 * (2.0 / 0.5) ** 2)
    t = np.linspace(-60, 60, 200_001)
    pdf = m.laplace_pdf(t, epsilon=0.5, sensitivity=2.0)
    assert np.trapezoid(pdf * t**2, t) == pytest.approx(m.laplace_variance(epsilon=0.5, sensitivity=2.0), rel=1e-3)


def test_exponential_returns_probabilities_and_uses_the_factor_two():
    u = np.array([1.0, 3.0])
    idx, probs = m.exponential(u, epsilon=2.0, sensitivity=1.0, random_state=0, return_probabilities=True)
    assert idx in (0, 1)
    # factor 2: P[1]/P[0] = exp(ε·(3-1)/(2Δ)) = e², not e⁴
    assert probs[1] / probs[0] == pytest.approx(np.exp(2.0))
    assert np.array_equal(u, [1.0, 3.0])  # not mutated
    with pytest.raises(ValueError, match="overflow"):
        m.exponential([1e308, 0.0], epsilon=10.0, sensitivity=1e-3)


def test_exponential_interval_points_fall_in_chosen_intervals_and_bad_input():
    edges = np.array([0.0, 1.0, 1.0, 3.0])      # a zero-length interval is never chosen
    u = np.array([0.0, 50.0, 1.0])
    p = m.exponential_interval_probabilities(edges, u, epsilon=1.0, sensitivity=1.0)
    assert p[1] == 0 and p.sum() == pytest.approx(1)
    assert p[2] / p[0] == pytest.approx(2 * np.exp(0.5))  # length 2 vs 1, utility +1
    rng = np.random.default_rng(12)
    pts = np.array([m.exponential_interval(edges, u, epsilon=1.0, sensitivity=1.0, random_state=rng)
                    for _ in range(5000)])
    assert np.all((pts >= 0) & (pts <= 3))
    point, probs = m.exponential_interval(edges, u, epsilon=1.0, sensitivity=1.0, random_state=1,
                                          return_probabilities=True)
    assert np.allclose(probs, p)
    with pytest.raises(ValueError, match="nothing can be drawn"):
        m.exponential_interval([0, 1, 1, 2], [-np.inf, 5.0, -np.inf], epsilon=1.0, sensitivity=1.0)
    with pytest.raises(ValueError, match="sorted"):
        m.exponential_interval([0, 2, 1], [1.0, 1.0], epsilon=1.0, sensitivity=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        m.exponential_interval([0, 1], [1.0], epsilon=0.0, sensitivity=1.0)


def test_exponential_interval_neighbour_ratio_within_epsilon():
    # utility of each interval moves by at most 1 between neighbours; the edges are public here
    edges = np.array([0.0, 2.0, 3.0, 7.0, 10.0])
    u, un = np.array([0.0, 4.0, 0.0, 4.0]), np.array([1.0, 3.0, 1.0, 5.0])  # exact loss 0.86 (2ε: 1.76)

    def mech(util, rng, n):
        p = m.exponential_interval_probabilities(edges, util, epsilon=1.0, sensitivity=1.0)
        i = rng.choice(p.size, size=n, p=p)
        return rng.uniform(edges[i], edges[i + 1])

    ok = privacy_loss(mech, u, un, batched=True, bins=edges, n_samples=100_000, random_state=13)
    assert not ok.violates(1.0)
    # the same draw with the factor 2 dropped is a 2ε mechanism: the audit sees it
    bad = privacy_loss(lambda util, rng, n: mech(2 * util, rng, n), u, un, batched=True, bins=edges,
                       n_samples=100_000, random_state=13)
    assert bad.violates(1.0)


def test_exponential_subset_neighbour_ratio_within_epsilon():
    q, qn = np.array([3.0, 1.0, 4.0, 1.0]), np.array([2.0, 2.0, 4.0, 0.0])  # each score moves ≤ 1
    mech = lambda s, rng, n: np.array([str(m.exponential_subset(s, 2, epsilon=1.0, sensitivity=2.0,
                                                                   random_state=rng)) for _ in range(n)])
    res = privacy_loss(mech, q, qn, batched=True, n_samples=20_000, random_state=14)
    assert not res.violates(1.0)


def test_audit_detects_geometric_with_understated_sensitivity():
    call = lambda d, rng, n: m.geometric(np.full(n, 2 * d), epsilon=1.0, sensitivity=1, random_state=rng)
    res = privacy_loss(call, 0, 1, batched=True, n_samples=50_000, random_state=15)
    assert res.violates(1.0) and res.epsilon_lower > 1.3   # true loss is 2ε


def test_audit_does_not_flag_a_mechanism_whose_loss_is_exactly_epsilon():
    """Randomised response has loss exactly ε: at 95% confidence at most ~5% of audits may flag it.

    With 100 seeded audits, a flagged count above 12 has probability < 1e-3 if the audit is
    honest; an audit that compared its point estimate with ε would flag about half of them.
    """
    eps = 1.0
    p = np.exp(eps) / (1 + np.exp(eps))
    rr = lambda d, rng, n: (rng.random(n) < (p if d else 1 - p)).astype(int)
    rng = np.random.default_rng(16)
    flagged = sum(privacy_loss(rr, 1, 0, batched=True, n_samples=1000, random_state=rng).violates(eps)
                  for _ in range(100))
    assert flagged <= 12
    # a lower confidence bound, not an estimate: it stays below the true ε...
    res = privacy_loss(rr, 1, 0, batched=True, n_samples=200_000, random_state=17)
    assert res.epsilon_lower < eps < res.epsilon_lower + 0.1   # ...and close to it with many samples
    assert res.epsilon_hat == pytest.approx(eps, abs=0.03)


def test_audit_pools_rare_and_unseen_outputs_and_checks_its_arguments():
    call = lambda d, rng, n: m.geometric(np.full(n, d), epsilon=1.0, random_state=rng)
    res = privacy_loss(call, 0, 1, batched=True, n_samples=20_000, random_state=18)
    assert res.table["event"].iloc[-1] == "(rare events)"
    assert res.table["count"].sum() == 20_000 and res.table["count_neighbour"].sum() == 20_000
    for kwargs, msg in [({"confidence": 1.0}, "confidence"), ({"n_samples": 10}, "n_samples"),
                        ({"bins": [0, 0, 1]}, "bins"), ({"bins": 0}, "bins"), ({"min_count": -1}, "min_count")]:
        with pytest.raises(ValueError, match=msg):
            privacy_loss(call, 0, 1, batched=True, **kwargs)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 0, -2, 1.5])
def test_geometric_sensitivity_must_be_a_positive_integer(bad):
    with pytest.raises(ValueError, match="sensitivity"):
        m.geometric([1], epsilon=1.0, sensitivity=bad)
    with pytest.raises(ValueError, match="sensitivity"):
        m.geometric_variance(epsilon=1.0, sensitivity=bad)


def test_bad_value_types_name_the_argument():
    with pytest.raises(TypeError, match="value"):
        m.laplace(["a"], epsilon=1.0)
    with pytest.raises(TypeError, match="sensitivity"):
        m.geometric([1], epsilon=1.0, sensitivity="1")
    with pytest.raises(TypeError, match="epsilon"):
        m.laplace(1.0, epsilon="1")
    with pytest.raises(ValueError, match="finite integers"):
        m.geometric([1.0, np.nan], epsilon=1.0)
    x = np.array([3, 4])
    m.geometric(x, epsilon=1.0, random_state=0)
    assert np.array_equal(x, [3, 4])


# ------------------------------------ hardened noise (Mironov 2012; Canonne, Kamath & Steinke 2020)
@pytest.mark.parametrize("t,s", [(3 * 1024, 1024), (1025, 1024), (7, 3)])
def test_discrete_laplace_matches_pmf_chi_square_and_moments(t, s):
    k = m.discrete_laplace(t, s, size=100_000, random_state=2)
    assert k.dtype == np.int64
    lim = int(np.ceil(6 * t / s))
    support = np.arange(-lim, lim + 1)
    observed = np.array([(k == v).sum() for v in support] + [(np.abs(k) > lim).sum()])
    p = m.discrete_laplace_pmf(support, t, s)
    expected = np.append(p, 1 - p.sum()) * k.size
    keep = expected > 5
    obs = np.append(observed[keep], observed[~keep].sum())  # the rare cells pooled into one
    exp = np.append(expected[keep], max(expected[~keep].sum(), 1e-9))
    assert stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue > 1e-3
    var = 2 * np.exp(-s / t) / np.expm1(-s / t) ** 2
    assert abs(k.mean()) < 5 * np.sqrt(var / k.size)
    assert abs(k.var() - var) / var < 0.05


def test_hardened_laplace_outputs_lie_on_the_grid_and_epsilon_is_corrected():
    g, t, s, eps_eff = m.hardened_laplace_parameters(epsilon=0.5, sensitivity=2.0, size=4)
    assert g == 2.0 ** np.floor(np.log2(2.0 / (1024 * 4)))       # a power of two
    assert eps_eff <= 0.5 and eps_eff > 0.5 * (1 - 1e-3)        # rounding accounted, ε never exceeded
    assert (2.0 + 4 * g) * s / (g * t) == pytest.approx(eps_eff)
    x = m.laplace(np.array([0.3, 10.123456789, -7.0, 1e6]), epsilon=0.5, sensitivity=2.0,
                  random_state=0, hardened=True)
    for _ in range(3):
        assert np.all(np.mod(x / g, 1.0) == 0.0)                 # exactly on the grid
    big = m.laplace(np.full(50_000, 2.5), epsilon=1.0, random_state=1, hardened=True)
    assert abs(big.var() - 2.0) < 0.05 and abs(big.mean() - 2.5) < 0.02  # ≈ Laplace(1): variance 2b²


def test_hardened_noise_context_switches_every_call_and_nests():
    assert m.laplace(1.0, epsilon=1.0, random_state=3) == m.laplace(1.0, epsilon=1.0, random_state=3,
                                                                     hardened=False)
    with m.hardened_noise():
        a = m.laplace(1.0, epsilon=1.0, random_state=3)
        c = m.geometric(5, epsilon=1.0, random_state=3)
        with m.hardened_noise(False):
            b = m.laplace(1.0, epsilon=1.0, random_state=3)
    assert a == m.laplace(1.0, epsilon=1.0, random_state=3, hardened=True)
    assert c == m.geometric(5, epsilon=1.0, random_state=3, hardened=True) and isinstance(c, int)
    assert b == m.laplace(1.0, epsilon=1.0, random_state=3, hardened=False)
    g = m.hardened_laplace_parameters(epsilon=1.0)[0]
    assert a / g == round(a / g)
    with pytest.raises(TypeError, match="hardened"):
        m.laplace(1.0, epsilon=1.0, hardened="yes")


def test_hardened_geometric_matches_pmf():
    x = m.geometric(np.zeros(100_000, dtype=int), epsilon=0.7, random_state=4, hardened=True)
    support = np.arange(-8, 9)
    freq = np.array([(x == v).mean() for v in support])
    assert np.allclose(freq, m.geometric_pmf(support, epsilon=0.7), atol=4e-3)


def _low_bit_event(z):
    """Mironov's observation: outputs in [0.25, 0.5) that are odd multiples of 2**-54."""
    inside = (z >= 0.25) & (z < 0.5)
    odd = np.mod(z / 2.0 ** -54, 2.0) == 1.0
    return np.where(inside & odd, "odd low bit", np.where(inside, "even", "elsewhere"))


def test_textbook_float_sampler_leaks_through_low_bits_hardened_does_not():
    """From 0, Z itself is returned (half the outputs in [0.25, 0.5) have an odd last bit); from 1,
    fl(1 + Z) is a multiple of 2**-53 there: those outputs are impossible, the loss is infinite."""
    def run(hardened):
        def mech(data, rng, n):
            return _low_bit_event(m.laplace(np.full(n, float(data)), epsilon=1.0, random_state=rng,
                                            hardened=hardened))
        return mech
    textbook = privacy_loss(run(False), 0, 1, n_samples=20_000, batched=True, random_state=0)
    assert textbook.epsilon_lower > 3.0                      # a claimed ε = 1 is broken
    hardened = privacy_loss(run(True), 0, 1, n_samples=20_000, batched=True, random_state=0)
    assert hardened.epsilon_lower <= 1.0


def test_hardened_laplace_audit_within_epsilon_and_flags_understated_sensitivity():
    def mech(sens):
        return lambda data, rng, n: m.laplace(np.full(n, float(data)), epsilon=1.0, sensitivity=sens,
                                              random_state=rng, hardened=True)
    edges = np.linspace(-3, 4, 15)
    ok = privacy_loss(mech(1.0), 0, 1, n_samples=40_000, batched=True, bins=edges, random_state=1)
    assert ok.epsilon_lower <= 1.0 and ok.epsilon_hat > 0.6
    bad = privacy_loss(mech(1 / 3), 0, 1, n_samples=40_000, batched=True, bins=edges, random_state=1)
    assert bad.epsilon_lower > 1.0


# ----------------------------------------------------------------------------- hardened lattice, for any input
def test_hardened_laplace_never_fails_after_the_draw():
    """A 10**6-entry count vector with a largest count of 2**22 = 4,194,304 (|value|/grid = 2**52
    on the size-10**6 lattice g = 2**-30) used to raise after the spend; now it is released, on
    the lattice, with Laplace-sized errors, and so is a count of 2**40."""
    counts = np.zeros(10 ** 6)
    counts[[0, 1, 2]] = [4_194_303, 4_194_304, 2.0 ** 40]
    g = m.hardened_laplace_parameters(epsilon=1.0, size=counts.size)[0]
    assert g == 2.0 ** -30 and counts[1] / g == 2.0 ** 52
    out = m.laplace(counts, epsilon=1.0, random_state=5, hardened=True)
    assert np.all(out / g == np.round(out / g))
    assert np.all(np.abs(out[:3] - counts[:3]) < 40) and abs(out[3:].std() - np.sqrt(2)) < 0.01
    # integer inputs: a lattice that does not shrink with the size (g = 2**-10 at Δ = 1)
    out_int = m.laplace(counts, epsilon=1.0, random_state=5, hardened=True, integer=True)
    assert np.all(out_int / 2.0 ** -10 == np.round(out_int / 2.0 ** -10))
    assert np.all(np.abs(out_int[:3] - counts[:3]) < 40)


def test_hardened_output_is_a_function_of_the_exact_lattice_integer():
    """Beyond 2**53 grid units the float returned is the float nearest g·(k + K), computed from
    the exact integer k + K (post-processing), for any finite input: no overflow, no error."""
    v = np.array([2.0 ** 70 + 2.0 ** 20, -3.0 ** 40, 1e300, 12.5])
    g, t, s, _ = m.hardened_laplace_parameters(epsilon=0.5, size=v.size)
    noise = m.discrete_laplace(t, s, size=v.shape, random_state=9)
    out = m.laplace(v, epsilon=0.5, random_state=9, hardened=True)
    k = [min(int(x / g), 2 ** 1000) for x in v]                    # v/g is exact; the public clamp
    expected = [float(ki + int(ni)) * g for ki, ni in zip(k, noise)]
    assert list(out) == expected and np.all(np.isfinite(out))


def test_integer_lattice_and_public_size():
    g1, t1, s1, e1 = m.hardened_laplace_parameters(epsilon=0.5, sensitivity=2.0, integer=True)
    assert g1 == 2.0 ** -9 and e1 <= 0.5 and e1 > 0.5 * (1 - 1e-6)   # no rounding term: ε almost exact
    assert m.hardened_laplace_parameters(epsilon=0.5, sensitivity=2.0, size=10 ** 15, integer=True)[0] == g1
    with pytest.raises(ValueError, match="integers"):
        m.laplace([1.0, 2.5], epsilon=1.0, hardened=True, integer=True)
    # size: the public length the lattice is built for, at least the length of value
    g = m.hardened_laplace_parameters(epsilon=1.0, size=5000)[0]
    x = m.laplace(np.array([0.3, 7.0]), epsilon=1.0, size=5000, random_state=2, hardened=True)
    assert np.all(x / g == np.round(x / g)) and g < m.hardened_laplace_parameters(epsilon=1.0, size=2)[0]
    with pytest.raises(ValueError, match="smaller than the 3 entries"):
        m.laplace(np.zeros(3), epsilon=1.0, size=2, hardened=True)
    with pytest.raises(ValueError, match="size"):
        m.laplace(np.zeros(3), epsilon=1.0, size=-1, hardened=True)


@pytest.mark.parametrize("integer", [False, True])
def test_tiny_epsilon_keeps_the_exact_sampler_in_range(integer):
    """Where t/s would pass 2**40 grid units the denominator s shrinks and then the grid grows,
    so t < 2**50 and ε_effective ≤ ε still hold; beyond what any lattice can do: a refusal that
    depends on public inputs only."""
    for eps in (1e-6, 1e-9, 1e-11):
        g, t, s, eff = m.hardened_laplace_parameters(epsilon=eps, size=1000, integer=integer)
        assert t < 2 ** 50 and eff <= eps and eff > 0.99 * eps
        fine = m.hardened_laplace_parameters(epsilon=1.0, size=1000, integer=integer)[0]
        if eps == 1e-11:     # 2**20/ε grid units: s shrinks (integers); g grows too (size 1000)
            assert s < 1024 and (g == fine) == integer
        x = m.laplace(np.arange(1000.0), epsilon=eps, size=1000, random_state=1, hardened=True, integer=integer)
        assert np.all(x / g == np.round(x / g))
    with pytest.raises(ValueError, match="too small for the hardened sampler"):
        m.hardened_laplace_parameters(epsilon=1e-16 if integer else 1e-12, size=1000, integer=integer)
    assert abs(m.geometric(0, epsilon=1e-13, random_state=1, hardened=True)) < 1e15
    with pytest.raises(ValueError, match="too small"):
        m.geometric(0, epsilon=1e-16, hardened=True)


@pytest.mark.parametrize("lower,t,s", [(0, 3 * 1024, 1024), (5, 1025, 1024), (40, 7, 3)])
def test_discrete_laplace_tail_is_the_conditioned_law(lower, t, s):
    k = m.discrete_laplace_tail(lower, t, s, size=60_000, random_state=4)
    assert k.dtype == np.int64 and k.min() >= lower
    support = np.arange(lower, lower + int(np.ceil(8 * t / s)) + 1)
    pmf = m.discrete_laplace_pmf(support, t, s) / m.discrete_laplace_tail_probability(lower, t, s)
    observed = np.array([(k == v).sum() for v in support] + [(k > support[-1]).sum()])
    expected = np.append(pmf, max(1 - pmf.sum(), 0.0)) * k.size
    keep = expected > 5
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], max(expected[~keep].sum(), 1e-9))
    assert stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue > 1e-3
    # P[K ≥ lower] against the pmf summed, for lower on both sides of 0
    for low in (-6, -1, 0, 1, 9):
        grid = np.arange(low, low + 200 * t // s + 50)
        assert m.discrete_laplace_tail_probability(low, t, s) == pytest.approx(
            m.discrete_laplace_pmf(grid, t, s).sum(), rel=1e-9, abs=1e-12)
    with pytest.raises(ValueError, match="lower"):
        m.discrete_laplace_tail(-1, t, s)


# --------------------------------------------------------------------------- randomized response
@pytest.mark.parametrize("epsilon", [0.1, np.log(3), 2.0])
def test_randomized_response_keeps_each_bit_with_probability_p(epsilon):
    p = m.randomized_response_probability(epsilon=epsilon)
    assert p / (1 - p) == pytest.approx(np.exp(epsilon))            # the two outputs' ratio is e^ε
    assert m.randomized_response_epsilon(p) == pytest.approx(epsilon)
    bits = np.r_[np.ones(N // 2, int), np.zeros(N // 2, int)]
    reports = m.randomized_response(bits, epsilon=epsilon, random_state=11)
    kept = np.array([(reports[bits == b] == b).mean() for b in (0, 1)])
    assert np.all(np.abs(kept - p) < 4 * np.sqrt(p * (1 - p) / (N // 2)))


@pytest.mark.parametrize("epsilon,share", [(0.5, 0.3), (2.0, 0.8)])
def test_randomized_response_estimate_is_unbiased_with_its_variance(epsilon, share):
    n, reps = 400, 3000
    bits = (np.arange(n) < share * n).astype(int)              # the respondents' true proportion is `share`
    rng = np.random.default_rng(12)
    estimates = np.array([m.randomized_response_estimate(m.randomized_response(bits, epsilon=epsilon, random_state=rng),
                                                         epsilon=epsilon) for _ in range(reps)])
    var = m.randomized_response_variance(n, epsilon=epsilon)
    assert abs(estimates.mean() - share) < 4 * np.sqrt(var / reps)
    assert estimates.var() == pytest.approx(var, rel=4 * np.sqrt(2 / reps))
    # Warner's population variance adds the sampling variance π(1 − π)/n
    assert m.randomized_response_variance(n, epsilon=epsilon, proportion=share) == pytest.approx(
        var + share * (1 - share) / n)


def test_local_error_exceeds_the_central_laplace_error_by_about_root_n():
    """At the same ε, randomized response's estimate of a proportion has standard error ~1/√n,
    the central Laplace count's ~1/n: the ratio grows like √n (it is √(n·p(1−p)ε²/(2(2p−1)²)))."""
    eps = 1.0
    ratio = [np.sqrt(m.randomized_response_variance(n, epsilon=eps) / (m.laplace_variance(epsilon=eps) / n ** 2))
             for n in (100, 10_000)]
    assert ratio[1] / ratio[0] == pytest.approx(10.0)
    # and the samplers agree: the empirical errors of both estimates at n = 2500
    n, rng = 2500, np.random.default_rng(13)
    bits = (np.arange(n) % 3 == 0).astype(int)
    local = [m.randomized_response_estimate(m.randomized_response(bits, epsilon=eps, random_state=rng), epsilon=eps)
             - bits.mean() for _ in range(400)]
    central = m.laplace(np.full(400, bits.sum(), float), epsilon=eps, random_state=rng) / n - bits.mean()
    assert np.std(local) / np.std(central) == pytest.approx(
        np.sqrt(m.randomized_response_variance(n, epsilon=eps) * n ** 2 / m.laplace_variance(epsilon=eps)), rel=0.2)


def test_randomized_response_audit_matches_epsilon_and_flags_a_larger_p():
    call = lambda bit, rng, n: m.randomized_response(np.full(n, bit), epsilon=1.0, random_state=rng)
    result = privacy_loss(call, 0, 1, batched=True, n_samples=100_000, random_state=14)
    assert not result.violates(1.0) and result.epsilon_lower > 0.85    # the loss is exactly ε
    broken = lambda bit, rng, n: m.randomized_response(np.full(n, bit), epsilon=1.5, random_state=rng)
    assert privacy_loss(broken, 0, 1, batched=True, n_samples=100_000, random_state=15).violates(1.0)


def test_randomized_response_rejects_bad_input():
    with pytest.raises(ValueError, match="0/1"):
        m.randomized_response([0, 2], epsilon=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        m.randomized_response([0, 1], epsilon=0.0)
    with pytest.raises(ValueError, match="reports"):
        m.randomized_response_estimate([], epsilon=1.0)
    with pytest.raises(ValueError, match=r"p must be"):
        m.randomized_response_epsilon(0.4)
    bits = np.array([0, 1, 1])
    m.randomized_response(bits, epsilon=1.0, random_state=0)
    assert bits.tolist() == [0, 1, 1] and isinstance(m.randomized_response(1, epsilon=1.0, random_state=0), int)


# --------------------------------------------------------------------------- Gaussian and (ε, δ)
def _hockey_stick(sigma, epsilon, sensitivity):
    """δ(ε) = ∫ max(0, p(y) − e^ε q(y)) dy for p = N(0, σ²), q = N(Δ, σ²), by quadrature."""
    from scipy import integrate

    gap = lambda y: max(0.0, stats.norm.pdf(y, 0, sigma) - np.exp(epsilon) * stats.norm.pdf(y, sensitivity, sigma))
    crossing = sensitivity / 2 - epsilon * sigma ** 2 / sensitivity     # p > e^ε q left of it
    return integrate.quad(gap, -np.inf, crossing, epsabs=1e-14, epsrel=1e-10)[0]


@pytest.mark.parametrize("sigma,epsilon,sensitivity", [(1.0, 1.0, 1.0), (3.0, 0.2, 2.0), (0.5, 4.0, 1.0)])
def test_gaussian_delta_is_the_hockey_stick_divergence(sigma, epsilon, sensitivity):
    assert m.gaussian_delta(sigma=sigma, epsilon=epsilon, sensitivity=sensitivity) == pytest.approx(
        _hockey_stick(sigma, epsilon, sensitivity), rel=1e-6, abs=1e-12)


@pytest.mark.parametrize("epsilon,delta", [(0.5, 0.05), (1.0, 0.01), (4.0, 0.02)])
def test_gaussian_delta_matches_monte_carlo_of_the_privacy_loss(epsilon, delta):
    """Audit-style: sample the mechanism on D (value 0) and D' (value Δ), compute each output's
    privacy loss, and recover δ(ε) both as E[(1 − e^{ε − L})₊] and as P[L > ε] − e^ε P[L' < −ε]
    (δ large enough for Monte Carlo to see it)."""
    sens, n = 2.0, 400_000
    sigma = m.gaussian_scale(epsilon=epsilon, delta=delta, sensitivity=sens)
    y = m.gaussian(np.zeros(n), epsilon=epsilon, delta=delta, sensitivity=sens, random_state=16)
    y2 = m.gaussian(np.full(n, sens), epsilon=epsilon, delta=delta, sensitivity=sens, random_state=17)
    loss = (sens ** 2 - 2 * y * sens) / (2 * sigma ** 2)              # ln p_D(y)/p_D'(y)
    loss2 = (sens ** 2 - 2 * (sens - y2) * sens) / (2 * sigma ** 2)    # ln p_D'(y)/p_D(y)
    pld = m.gaussian_privacy_loss(sigma=sigma, sensitivity=sens)
    assert stats.kstest(loss, pld.cdf).pvalue > 1e-3 and stats.kstest(loss2, pld.cdf).pvalue > 1e-3
    exact = m.gaussian_delta(sigma=sigma, epsilon=epsilon, sensitivity=sens)
    assert exact == pytest.approx(delta, rel=1e-6)                  # the analytic σ meets δ exactly
    excess = np.maximum(0.0, 1 - np.exp(epsilon - loss))
    assert abs(excess.mean() - exact) < 4 * excess.std() / np.sqrt(n) < 0.1 * exact
    above, below = (loss > epsilon).mean(), (loss2 < -epsilon).mean()
    se = np.sqrt(above * (1 - above) / n + np.exp(2 * epsilon) * below * (1 - below) / n)
    assert abs(above - np.exp(epsilon) * below - exact) < 4 * se
    # δ is NOT the probability that the loss exceeds ε: that probability is larger
    assert pld.sf(epsilon) > 1.5 * exact and above > 1.5 * exact


def test_gaussian_calibrations():
    for eps in (0.1, 0.5, 0.9):
        for delta in (1e-2, 1e-6):
            classical = m.gaussian_scale(epsilon=eps, delta=delta, calibration="classical")
            analytic = m.gaussian_scale(epsilon=eps, delta=delta)
            assert analytic < classical                                    # less noise, same guarantee
            assert m.gaussian_delta(sigma=classical, epsilon=eps) <= delta   # Thm A.1 holds for ε < 1
            assert m.gaussian_delta(sigma=analytic, epsilon=eps) <= delta
            assert m.gaussian_delta(sigma=analytic * (1 - 1e-6), epsilon=eps) > delta   # and it is the smallest
    # the classical formula beyond ε < 1 fails: at ε = 20, δ = 1e-6 its σ gives δ(ε) ≈ 160·δ
    sigma = np.sqrt(2 * np.log(1.25 / 1e-6)) / 20.0
    assert m.gaussian_delta(sigma=sigma, epsilon=20.0) > 100 * 1e-6
    with pytest.raises(ValueError, match="epsilon < 1"):
        m.gaussian_scale(epsilon=1.0, delta=1e-5, calibration="classical")
    assert m.gaussian_scale(epsilon=2.0, delta=1e-5, sensitivity=3.0) == pytest.approx(
        3 * m.gaussian_scale(epsilon=2.0, delta=1e-5), rel=1e-9)           # σ is linear in Δ


def test_gaussian_samples_have_the_calibrated_scale_and_reject_bad_input():
    sigma = m.gaussian_scale(epsilon=0.5, delta=1e-4, calibration="classical")
    x = m.gaussian(np.full(N, 3.0), epsilon=0.5, delta=1e-4, calibration="classical", random_state=18)
    assert stats.kstest(x - 3.0, stats.norm(scale=sigma).cdf).pvalue > 1e-3
    for kwargs, message in [({"delta": 0.0}, "delta"), ({"delta": 1.0}, "delta"), ({"epsilon": -1}, "epsilon"),
                            ({"calibration": "tight"}, "calibration"), ({"sensitivity": 0}, "sensitivity")]:
        with pytest.raises(ValueError, match=message):
            m.gaussian(1.0, **{"epsilon": 1.0, "delta": 1e-5, **kwargs})
    assert isinstance(m.gaussian(1.0, epsilon=1.0, delta=1e-5, random_state=0), float)


def test_gaussian_audit_within_epsilon_and_flags_understated_sensitivity():
    call = lambda d, rng, n: m.gaussian(np.full(n, d), epsilon=1.0, delta=1e-5, random_state=rng)
    assert not privacy_loss(call, 0.0, 1.0, batched=True, n_samples=200_000, random_state=19).violates(1.0)
    broken = lambda d, rng, n: m.gaussian(np.full(n, 4.0 * d), epsilon=1.0, delta=1e-5, random_state=rng)
    assert privacy_loss(broken, 0.0, 1.0, batched=True, n_samples=200_000, random_state=20).violates(1.0)


def test_the_monotone_exponential_mechanism_is_private_for_monotone_neighbours_only():
    """Without its factor 2 the mechanism is ε-DP when a neighbour moves every utility the same way
    by at most Δ (exactly: the largest log-ratio of the selection probabilities stays ≤ ε), and
    not when utilities move both ways (a substitution), where it reaches 2ε."""
    rng = np.random.default_rng(0)
    eps, delta = 0.7, 1.0
    worst_monotone = worst_mixed = 0.0
    for _ in range(300):
        u = rng.normal(0.0, 3.0, 6)
        p = m.exponential_probabilities(u, epsilon=eps, sensitivity=delta, monotone=True)
        up = u + rng.uniform(0.0, delta, 6) * (rng.random(6) < 0.5)                    # each raised by 0..Δ
        q = m.exponential_probabilities(up, epsilon=eps, sensitivity=delta, monotone=True)
        worst_monotone = max(worst_monotone, float(np.abs(np.log(p) - np.log(q)).max()))
        mixed = u + delta * np.where(np.arange(6) == 0, 1.0, -1.0)                       # one up, the rest down
        r = m.exponential_probabilities(mixed, epsilon=eps, sensitivity=delta, monotone=True)
        worst_mixed = max(worst_mixed, float(np.abs(np.log(p) - np.log(r)).max()))
    assert worst_monotone <= eps + 1e-12
    assert worst_mixed > 1.5 * eps
    general = m.exponential_probabilities([0.0, 1.0], epsilon=2.0, sensitivity=1.0)
    monotone = m.exponential_probabilities([0.0, 1.0], epsilon=2.0, sensitivity=1.0, monotone=True)
    assert monotone[1] / monotone[0] == pytest.approx(np.exp(2.0)) and general[1] / general[0] == pytest.approx(np.e)
