"""Feature scores against direct definitions, and their per-score sensitivity."""
import numpy as np
import pytest
from sklearn.metrics import mutual_info_score

from dpexplore.select import scores


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, (300, 6))
    y = (X[:, 0] ^ (rng.random(300) < 0.2)).astype(int)
    return X, y


def test_scores_match_definitions(data):
    X, y = data
    for j in range(X.shape[1]):
        f = X[:, j]
        n11, n10 = np.sum((f == 1) & (y == 1)), np.sum((f == 1) & (y == 0))
        n01, n00 = np.sum((f == 0) & (y == 1)), np.sum((f == 0) & (y == 0))
        assert scores.total_count(X)[j] == f.sum()
        assert scores.difference_count(X, y)[j] == abs(n11 - n10)
        assert scores.purity_index(X, y)[j] == max(abs(n11 - n10), abs(n01 - n00))
        assert scores.information_gain(X, y)[j] == pytest.approx(mutual_info_score(f, y))
    assert np.argmax(scores.information_gain(X, y)) == 0


def test_each_score_moves_by_at_most_one_when_a_record_is_added(data):
    X, y = data
    base = [scores.total_count(X), scores.difference_count(X, y), scores.purity_index(X, y)]
    rng = np.random.default_rng(1)
    for _ in range(50):
        row, label = rng.integers(0, 2, (1, 6)), rng.integers(0, 2)
        X2, y2 = np.vstack([X, row]), np.append(y, label)
        new = [scores.total_count(X2), scores.difference_count(X2, y2), scores.purity_index(X2, y2)]
        for a, b in zip(base, new):
            assert np.max(np.abs(a - b)) <= 1


def test_mutual_information_sensitivity_table():
    # thesis Table 3.2 as tabulated in the spec (bits), and the ratio is base-free
    for n, bits in [(100, 0.0808), (900, 0.01251), (4663, 0.00292), (32561, 0.00050)]:
        assert scores.mutual_information_sensitivity(n) == pytest.approx(bits, rel=0.01, abs=5e-6)
    assert scores.mutual_information_sensitivity(100, base=np.e) == pytest.approx(0.0560, abs=1e-4)


def test_mi_sensitivity_bounds_brute_force_changes():
    rng = np.random.default_rng(2)
    worst = 0.0
    for _ in range(300):
        n = 40
        f, y = rng.integers(0, 2, n), rng.integers(0, 2, n)
        base = scores.information_gain(f[:, None], y, base=2)[0]
        for extra in [(0, 0), (0, 1), (1, 0), (1, 1)]:
            g = scores.information_gain(np.append(f, extra[0])[:, None], np.append(y, extra[1]), base=2)[0]
            worst = max(worst, abs(g - base))
    assert worst <= scores.mutual_information_sensitivity(41, base=2)


def test_bad_input():
    with pytest.raises(ValueError, match="0/1"):
        scores.purity_index(np.array([[0, 2]]), [1])
    with pytest.raises(ValueError, match="labels"):
        scores.purity_index(np.array([[0, 1]]), [1, 0])


def test_inputs_are_not_mutated_and_tables_are_accepted(data):
    import pandas as pd

    X, y = data
    frame = pd.DataFrame(X.astype(bool), columns=[f"f{j}" for j in range(X.shape[1])])
    labels = pd.Series(y)
    frame_copy, labels_copy = frame.copy(), labels.copy()
    for f in (scores.difference_count, scores.purity_index, scores.information_gain):
        np.testing.assert_allclose(f(frame, labels), f(X, y))
    np.testing.assert_array_equal(scores.total_count(frame), X.sum(axis=0))
    pd.testing.assert_frame_equal(frame, frame_copy)
    pd.testing.assert_series_equal(labels, labels_copy)
