"""benchmarks/ablations.py: each variant changes one part of the joint fit, the parent choice or the classifier,
and only while it is active; its stored runs pair with the stored fidelity runs."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpexplore import mechanisms
from dpexplore.publish import complete
from dpexplore.publish.histogram_release import HistogramRelease

from _benchmarks import BENCHMARKS, load_benchmark


@pytest.fixture(scope="module")
def ablations():
    import sys
    sys.path.insert(0, str(BENCHMARKS))          # the script imports fidelity.py as a sibling
    try:
        yield load_benchmark("ablations.py", "ablations_benchmark")
    finally:
        sys.path.remove(str(BENCHMARKS))


def _state():
    cls = complete.CompleteSynthetic
    return (complete.noise_ceiling, complete.MODEL_PRIOR_SHARE, complete.PARENT_SELECTION_SHARE,
            complete.mechanisms, cls.__dict__["_pair_margins"], cls.__dict__["_class_totals"],
            cls.__dict__["_record_total"], HistogramRelease.__dict__["_uses_table_classifier"])


@pytest.mark.parametrize("name", ["no-band", "no-prior", "no-pairs", "class-totals-from-table",
                                  "total-from-table", "selection-share=0.5", "exponential-parent",
                                  "best-parent", "own-classifier"])
def test_each_variant_changes_one_part_and_restores_it(ablations, name):
    before = _state()
    with pytest.raises(RuntimeError), ablations.variant(name):
        during = _state()
        assert sum(a is not b for a, b in zip(before, during)) == 1
        raise RuntimeError("a failing run must not leave the library changed")
    assert all(a is b for a, b in zip(before, _state()))


def test_selection_share_variant_sets_the_share(ablations):
    with ablations.variant("selection-share=0.35"):
        assert complete.PARENT_SELECTION_SHARE == 0.35
    assert complete.PARENT_SELECTION_SHARE == 0.2


def test_best_parent_takes_the_top_score_and_draws_as_the_mechanism_does(ablations):
    """At an ε where the mechanism is nearly uniform the variant still picks the best score, and
    the random stream after it is the private release's (the rest of the release is the same)."""
    scores = [3.0, 40.0, 5.0, 39.0]
    rngs = np.random.default_rng(7), np.random.default_rng(7)
    picks = [mechanisms.permute_and_flip(scores, epsilon=1e-6, sensitivity=1.0, random_state=rngs[0])
             for _ in range(200)]
    assert len(set(picks)) > 2                                  # the private choice is mostly chance
    with ablations.variant("best-parent"):
        best = [complete.mechanisms.permute_and_flip(scores, epsilon=1e-6, sensitivity=1.0, random_state=rngs[1])
                for _ in range(200)]
    assert set(best) == {1}
    assert rngs[0].random() == rngs[1].random()


def test_exponential_parent_variant_draws_the_exponential_mechanism(ablations):
    """The variant's parent choice is the exponential mechanism's, draw for draw."""
    scores = [3.0, 9.0, 5.0]
    rngs = np.random.default_rng(8), np.random.default_rng(8)
    with ablations.variant("exponential-parent"):
        got = [complete.mechanisms.permute_and_flip(scores, epsilon=0.3, sensitivity=1.0, random_state=rngs[0])
               for _ in range(50)]
    want = [mechanisms.exponential(scores, epsilon=0.3, sensitivity=1.0, random_state=rngs[1]) for _ in range(50)]
    assert got == want


def test_unknown_variant_is_refused_naming_the_choices(ablations):
    with pytest.raises(ValueError, match="unknown variant 'no-such'.*best-parent"):
        with ablations.variant("no-such"):
            pass


def test_stored_runs_as_shipped_are_the_stored_fidelity_runs(ablations):
    """The 'none' rows of benchmarks/results/ablations.csv are the stored fidelity runs (same
    splits, seeds and releases), so each variant's rows compare with them run for run."""
    stored = pd.read_csv(BENCHMARKS / "results" / "ablations.csv")
    fidelity = pd.read_csv(BENCHMARKS / "results" / "fidelity.csv")
    keys = ["dataset", "method", "epsilon", "seed"]
    assert set(stored.variant) >= set(ablations.VARIANTS)
    shipped = stored[stored.variant == "none"].merge(fidelity, on=keys, suffixes=("", "_stored"))
    assert len(shipped) == len(fidelity) == (stored.variant == "none").sum()
    for column in ["tvd_1way", "tvd_2way", "accuracy", "synthetic_rows"]:
        np.testing.assert_allclose(shipped[column], shipped[f"{column}_stored"], rtol=1e-5)


def test_own_classifier_variant_keeps_each_release_classifier(ablations):
    """Inside the variant a release with two-way marginals classifies with its own counts; after
    it, with its completed table's regression again."""
    from test_table_classifier import _build, _three_witnesses
    X, y, schema = _three_witnesses(2000, seed=5)
    with ablations.variant("own-classifier"):
        inside = _build("DiffGen", schema, epsilon=5.0, marginal_share=0.5, random_state=0).fit(X, y)
    after = _build("DiffGen", schema, epsilon=5.0, marginal_share=0.5, random_state=0).fit(X, y)
    assert inside.joint_marginals_ and inside.classifier_data_ == "release"
    assert after.classifier_data_ == "synthetic"
