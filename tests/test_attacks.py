"""The attacks of dpexplore.attacks: reconstruction succeeds on exact answers and falls to guessing
as the noise grows past √n; membership inference sees an overfit model and not a DP one."""
import numpy as np
import pytest

from dpexplore.attacks import (membership_bound, membership_roc, membership_scores, noisy_subset_counts,
                               reconstruct, reconstruction_rate, subset_queries)
from dpexplore.mechanisms import laplace_cdf

N = 100


def _mean_rate(noise: float, n_queries: int = 4 * N, seeds=range(5)) -> float:
    return float(np.mean([reconstruction_rate(np.random.default_rng(100 + s).integers(0, 2, N), n_queries=n_queries,
                                              noise=noise, random_state=s) for s in seeds]))


def test_reconstruction_is_exact_without_noise_and_falls_to_guessing_with_noise_past_root_n():
    rates = {noise: _mean_rate(noise) for noise in (0.0, 1.0, np.sqrt(N), 5 * np.sqrt(N))}
    print("reconstruction rate by noise:", {round(k, 1): round(v, 3) for k, v in rates.items()})
    assert rates[0.0] == 1.0 and rates[1.0] >= 0.97
    assert rates[np.sqrt(N)] < 0.85                    # noise √n: the attack is well off exact
    assert rates[5 * np.sqrt(N)] < 0.65                # far past √n: close to a coin (0.5)
    assert rates[0.0] > rates[1.0] - 1e-12 >= rates[np.sqrt(N)] > rates[5 * np.sqrt(N)]


def test_reconstruction_needs_enough_queries():
    assert _mean_rate(0.0, n_queries=N // 4, seeds=range(3)) < 0.9 < _mean_rate(0.0, n_queries=2 * N, seeds=range(3))


def test_answers_are_within_the_noise_bound_and_inputs_are_checked():
    secret = np.random.default_rng(0).integers(0, 2, 30)
    A = subset_queries(30, 50, random_state=1)
    exact = A @ secret
    noisy = noisy_subset_counts(secret, A, noise=2.5, random_state=2)
    assert np.all(np.abs(noisy - exact) <= 2.5) and np.abs(noisy - exact).max() > 1.5
    np.testing.assert_array_equal(reconstruct(A, exact), secret)
    with pytest.raises(ValueError, match="secret"):
        noisy_subset_counts([0, 2], A[:, :2], noise=1.0)
    with pytest.raises(ValueError, match="noise"):
        noisy_subset_counts(secret, A, noise=-1.0)
    with pytest.raises(ValueError, match="one column per record"):
        noisy_subset_counts(secret, A[:, :5], noise=1.0)
    with pytest.raises(ValueError, match="one answer per query"):
        reconstruct(A, exact[:-1])


def _membership_data(seed: int):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(400, 20))
    y = np.where(rng.random(400) < 0.8, X[:, 0], 1 - X[:, 0])      # a noisy label: overfitting memorises it
    return (X[:200], y[:200]), (X[200:], y[200:])


def test_membership_inference_sees_an_overfit_model_and_not_a_dp_one():
    from sklearn.ensemble import RandomForestClassifier
    from dpexplore.models import PrivateNaiveBayes

    (X_in, y_in), (X_out, y_out) = _membership_data(0)
    overfit = RandomForestClassifier(n_estimators=50, random_state=0).fit(X_in, y_in)
    roc, auc = membership_roc(membership_scores(overfit, X_in, y_in), membership_scores(overfit, X_out, y_out))
    assert auc > 0.85 and roc["fpr"].is_monotonic_increasing and roc["tpr"].iloc[-1] == 1.0
    aucs = []
    for seed in range(5):
        dp = PrivateNaiveBayes(0.5, classes=[0, 1], random_state=seed).fit(X_in, y_in)
        aucs.append(membership_roc(membership_scores(dp, X_in, y_in), membership_scores(dp, X_out, y_out))[1])
    print(f"membership AUC: random forest {auc:.3f}, DP Naive Bayes at ε = 0.5 {np.mean(aucs):.3f}")
    assert abs(np.mean(aucs) - 0.5) < 0.06


def test_membership_scores_check_labels():
    from sklearn.tree import DecisionTreeClassifier

    model = DecisionTreeClassifier(random_state=0).fit([[0], [1]], ["a", "b"])
    assert membership_scores(model, [[0], [1]], ["a", "b"]).tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="classes are"):
        membership_scores(model, [[0]], ["c"])
    with pytest.raises(ValueError, match="non-empty"):
        membership_roc([], [0.1])


def _laplace_test_roc(epsilon: float, move: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact ROC of the best test between the Laplace mechanism's outputs on the counts 0 and
    ``move`` (noise for Δ = 1): "member" when the output exceeds t, for every t."""
    t = np.linspace(-15, 15, 3001)
    fpr = 1 - np.asarray(laplace_cdf(t, epsilon=epsilon))
    tpr = 1 - np.asarray(laplace_cdf(t - move, epsilon=epsilon))
    return fpr, tpr


@pytest.mark.parametrize("epsilon", [0.25, 1.0, 3.0])
def test_membership_bound_holds_for_a_dp_mechanism_is_tight_and_is_broken_by_a_leak(epsilon):
    fpr, tpr = _laplace_test_roc(epsilon, 1.0)                       # ε-DP: on or under the bound
    bound = membership_bound(fpr, epsilon=epsilon)
    assert np.all(tpr <= bound + 1e-12)
    assert np.isclose(tpr, bound, atol=1e-9).mean() > 0.4           # tight: Laplace's tails reach it
    fpr, tpr = _laplace_test_roc(epsilon, 2.0)                       # Δ = 2, noise for Δ = 1: a leak
    assert np.any(tpr > membership_bound(fpr, epsilon=epsilon) + 0.01)
    assert np.all(tpr <= membership_bound(fpr, epsilon=2 * epsilon) + 1e-12)   # … it is 2ε-DP


def test_membership_bound_is_a_valid_roc_region_and_checks_its_inputs():
    fpr = np.linspace(0, 1, 101)
    bound = membership_bound(fpr, epsilon=1.0)
    assert bound[0] == 0 and bound[-1] == 1 and np.all(np.diff(bound) >= 0) and np.all(bound >= fpr)
    assert np.all(membership_bound(fpr, epsilon=0.5) <= bound)                 # smaller ε: a tighter region
    assert membership_bound([0.0], epsilon=1.0, delta=0.01)[0] == pytest.approx(0.01)   # δ: slack at FPR 0
    assert membership_bound([0.1], epsilon=1e-9)[0] == pytest.approx(0.1)      # ε → 0: no better than chance
    for bad in ([-0.1], [1.5], []):
        with pytest.raises(ValueError, match="fpr"):
            membership_bound(bad, epsilon=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        membership_bound([0.1], epsilon=0.0)
    with pytest.raises(ValueError, match="delta"):
        membership_bound([0.1], epsilon=1.0, delta=1.0)
