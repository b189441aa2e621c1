"""AboveThreshold and the sparse vector technique (dpexplore.svt): exact output distribution,
accounting, checks. The privacy audits (the sound version and the broken variants) are in
tests/test_audit_svt.py."""
import numpy as np
import pytest
from scipy import integrate, stats

from dpexplore import BudgetAccountant, BudgetExceededError
from dpexplore.mechanisms import laplace_cdf
from dpexplore.svt import above_threshold, above_threshold_probabilities, sparse_vector


def _first_above_probabilities(queries, threshold, epsilon, sensitivity):
    """P[the first ⊤ is query i] for each i, then P[no ⊤], by integrating over the threshold
    noise ρ ~ Lap(2Δ/ε) with query noise Lap(4Δ/ε) (Dwork & Roth 2014, Alg. 1)."""
    b_rho = 2 * sensitivity / epsilon

    def below(i, r):            # P[q_i + ν_i < τ + r]
        return laplace_cdf(threshold + r - queries[i], epsilon=epsilon / 2, sensitivity=2 * sensitivity)

    def prob(i):
        def integrand(r):
            p = np.prod([below(j, r) for j in range(min(i, len(queries)))])
            return stats.laplace.pdf(r, scale=b_rho) * (p * (1 - below(i, r)) if i < len(queries) else p)
        return integrate.quad(integrand, -np.inf, np.inf, points=None, limit=200)[0]

    return np.array([prob(i) for i in range(len(queries) + 1)])


@pytest.mark.parametrize("sensitivity", [1.0, 3.0])
def test_above_threshold_frequencies_match_the_exact_distribution(sensitivity):
    queries, tau, eps, n = np.array([2.0, 5.0, 4.0]) * sensitivity, 4.5 * sensitivity, 1.0, 30_000
    exact = _first_above_probabilities(queries, tau, eps, sensitivity)
    assert exact.sum() == pytest.approx(1.0, abs=1e-6)
    rng = np.random.default_rng(0)
    first = [np.flatnonzero(a)[0] if a.any() else len(queries)
             for a in (above_threshold(queries, tau, epsilon=eps, sensitivity=sensitivity, random_state=rng)
                       for _ in range(n))]
    observed = np.bincount(first, minlength=len(queries) + 1)
    assert stats.chisquare(observed, exact * n).pvalue > 1e-3


def test_above_threshold_halts_at_the_first_above_and_is_sparse_vector_with_one_answer():
    answers = above_threshold([1.0, 10, 2, 12], 5.0, epsilon=1e7, random_state=0)
    np.testing.assert_array_equal(answers, [False, True])                  # halted after the first ⊤
    np.testing.assert_array_equal(above_threshold([1.0, 2.0], 5.0, epsilon=1e7, random_state=0), [False, False])
    q = np.random.default_rng(1).normal(0, 3, size=40)
    for seed in range(20):
        answers = above_threshold(q, 2.0, epsilon=0.7, sensitivity=2.0, random_state=seed)
        chosen = sparse_vector(q, 2.0, epsilon=0.7, cutoff=1, sensitivity=2.0, threshold_share=0.5, random_state=seed)
        assert answers.size == (chosen[0] + 1 if chosen.size else q.size)
        np.testing.assert_array_equal(np.flatnonzero(answers), chosen)
        assert not answers[:-1].any()


def test_above_threshold_spends_once_and_checks_before_spending():
    acc = BudgetAccountant(1.0)
    q = [1.0, 2.0]
    for kwargs, message in [({"epsilon": 0.0}, "epsilon"), ({"threshold": float("nan")}, "threshold"),
                            ({"queries": [1.0, np.inf]}, "queries"), ({"sensitivity": -1.0}, "sensitivity"),
                            ({"queries": []}, "queries")]:
        args = {"queries": q, "threshold": 0.0, "epsilon": 0.4, **kwargs}
        with pytest.raises(ValueError, match=message):
            above_threshold(args.pop("queries"), args.pop("threshold"), accountant=acc, **args)
    assert acc.ledger.empty
    above_threshold(q, 0.0, epsilon=0.4, random_state=0, accountant=acc)
    above_threshold(q, 0.0, epsilon=0.4, random_state=0, accountant=acc)
    assert acc.ledger["label"].tolist() == ["sparse vector: AboveThreshold"] * 2
    assert acc.spent == pytest.approx(0.8)
    rng = np.random.default_rng(2)
    state = rng.bit_generator.state
    with pytest.raises(BudgetExceededError):
        above_threshold(q, 0.0, epsilon=0.4, random_state=rng, accountant=acc)
    assert acc.n_spends == 2 and rng.bit_generator.state == state          # refused before any draw
    queries = np.array([3.0, 1.0])
    above_threshold(queries, 0.0, epsilon=1.0, random_state=0)
    assert queries.tolist() == [3.0, 1.0]                                    # the input is not written to


def test_sparse_vector_noise_scales_draw_by_draw():
    """ρ ~ Lap(Δ/ε1), then ν_i ~ Lap(2cΔ/ε2) per query in order, stopping at the c-th ⊤ (Lyu et al.
    Alg. 1): the selection equals the one computed from the same Generator's draws."""
    q = np.array([3.0, 9.0, 1.0, 8.0, 7.0])
    for seed in range(10):
        rng = np.random.default_rng(seed)
        rho = rng.laplace(0.0, 1.0 / (0.5 * 0.25))
        nu = [rng.laplace(0.0, 2 * 2 / (0.5 * 0.75)) for _ in q]
        expected = np.flatnonzero(q + np.array(nu) >= 6.0 + rho)[:2]
        np.testing.assert_array_equal(
            sparse_vector(q, 6.0, epsilon=0.5, cutoff=2, threshold_share=0.25, random_state=seed), expected)


@pytest.mark.parametrize("queries, tau, eps, sensitivity", [
    ([2.0, 5.0, 4.0], 4.5, 1.0, 1.0),
    ([6.0, 15.0, 12.0], 13.5, 1.0, 3.0),
    ([-1.0] * 5 + [1.0], 0.0, 1.0, 1.0),                    # the audit's "below then above"
    (list(np.random.default_rng(0).normal(0, 5, 12)), 1.0, 0.5, 1.0),
])
def test_the_exact_distribution_of_above_threshold_agrees_with_direct_integration(queries, tau, eps, sensitivity):
    exact = above_threshold_probabilities(queries, tau, epsilon=eps, sensitivity=sensitivity)
    assert exact.shape == (len(queries) + 1,) and exact.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(exact, _first_above_probabilities(np.array(queries), tau, eps, sensitivity),
                               atol=1e-7)
