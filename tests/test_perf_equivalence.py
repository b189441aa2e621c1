"""Speed-ups that must not change a single output (explorer latency).

Each rewrite is compared with a reference kept here: the former implementation (or a plain
loop), on random inputs and edge cases, for equality (bit-for-bit where the arithmetic is the
same). No timings here: ``benchmarks/widget_latency.py`` measures speed.
"""
from __future__ import annotations

import ast
import math
import warnings
from pathlib import Path

import altair as alt
import numpy as np
import pandas as pd
import pytest

from dpexplore.evaluate.roc import median_smooth_sensitivity, recursive_median_thresholds
from dpexplore.plots._accessible import spread
from dpexplore.select import stoddard

ROOT = Path(__file__).resolve().parents[1]


# =========================================================================== median smooth sensitivity
def _order_stat_ref(sorted_x, index, left, right):
    padded = np.concatenate([[left], sorted_x, [right]])
    return padded[np.clip(index, 0, sorted_x.size + 1)]


def _smooth_sensitivity_matrix(values, *, beta, left, right):
    """The former O(n²) implementation: every split a + r = j of the j changes, chunked."""
    x = np.sort(np.asarray(values, dtype=float))
    n = x.size
    best = 0.0
    j_max = n + 3
    chunk = max(1, 1_000_000 // (j_max + 1))
    for start in range(0, j_max + 1, chunk):
        j = np.arange(start, min(j_max, start + chunk - 1) + 1)[:, None]
        if math.exp(-start * beta) * (right - left) <= best:
            break
        a = np.arange(j_max + 1)[None, :]
        valid = a <= j
        m_prime = (n + 2 * a - j + 1) // 2
        upper = _order_stat_ref(x, m_prime + 1 + (j - a), left, right)
        lower = _order_stat_ref(x, m_prime - 1 - a, left, right)
        width = np.where(valid, upper - lower, 0.0).max(axis=1)
        best = max(best, float((np.exp(-j[:, 0] * beta) * width).max()))
    return best


def _smooth_sensitivity_loops(values, *, beta, left, right):
    """The definition read literally: S = max_j e^{−jβ} max_{a+r=j} (x_{m'+1+r} − x_{m'−1−a})."""
    x = sorted(float(v) for v in values)
    n = len(x)

    def at(i):
        return left if i <= 0 else right if i > n else x[i - 1]

    best = 0.0
    for j in range(n + 4):
        for a in range(j + 1):
            r = j - a
            m_prime = (n + a - r + 1) // 2
            best = max(best, math.exp(-j * beta) * (at(m_prime + 1 + r) - at(m_prime - 1 - a)))
    return best


def _random_cases():
    rng = np.random.default_rng(20261124)
    cases = [([], 0.1, 0.0, 1.0), ([0.5], 0.1, 0.0, 1.0), ([0.2, 0.9], 0.05, 0.0, 1.0),
             ([0.0, 0.0, 1.0, 1.0], 0.3, 0.0, 1.0),                  # values on both bounds
             ([0.5] * 7, 0.2, 0.25, 0.75),                           # all tied
             ([0.3, 0.31], 50.0, 0.0, 1.0),                          # large β: local sensitivity
             (list(rng.random(30)), 1e-6, 0.0, 1.0),                 # tiny β: ≈ right − left
             ([-0.5, 0.2, 1.7], 0.1, 0.0, 1.0)]                      # outside the range (not documented)
    for n in (1, 2, 3, 5, 8, 13, 40, 101, 600):
        for beta in (0.005, 0.05, 0.5):
            lo = float(rng.uniform(-1, 0.5))
            hi = lo + float(rng.uniform(0.1, 2))
            x = rng.uniform(lo, hi, n)
            if n > 3:
                x[: n // 4] = x[0]                                   # ties
            cases.append((list(x), beta, lo, hi))
    skew = rng.beta(0.3, 4.0, 1500)                                   # several chunks (n > 1000)
    cases.append((list(skew), 0.01, 0.0, 1.0))
    cases.append((list(skew), 0.0005, 0.0, 1.0))
    return cases


@pytest.mark.parametrize("values, beta, left, right", _random_cases())
def test_median_smooth_sensitivity_equals_the_former_implementation(values, beta, left, right):
    fast = median_smooth_sensitivity(values, beta=beta, left=left, right=right)
    assert fast == _smooth_sensitivity_matrix(values, beta=beta, left=left, right=right)   # bit-for-bit
    if len(values) <= 101 and min(values, default=left) >= left and max(values, default=right) <= right:
        assert fast == pytest.approx(_smooth_sensitivity_loops(values, beta=beta, left=left, right=right),
                                     rel=1e-12, abs=1e-15)


def test_recursive_median_thresholds_unchanged():
    """The whole threshold search (15 smooth-sensitivity medians) against the former helper."""
    import dpexplore.evaluate.roc as roc_module

    scores = np.random.default_rng(3).beta(0.5, 3.0, 600)
    fast = recursive_median_thresholds(scores, epsilon=0.2, depth=4, random_state=11)
    original = roc_module.median_smooth_sensitivity
    try:
        roc_module.median_smooth_sensitivity = _smooth_sensitivity_matrix
        reference = recursive_median_thresholds(scores, epsilon=0.2, depth=4, random_state=11)
    finally:
        roc_module.median_smooth_sensitivity = original
    np.testing.assert_array_equal(fast, reference)


# =========================================================================== Stoddard selectors
def _binary_ref(X, name="X"):
    """The former 0/1 check (np.isin over the whole matrix)."""
    a = np.asarray(X.to_numpy() if isinstance(X, pd.DataFrame) else X)
    if a.ndim != 2 or a.shape[0] == 0 or a.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty 2-D array of 0/1 features")
    if a.dtype == bool:
        return a.astype(np.int64)
    if a.dtype == object or not np.isin(a, (0, 1)).all():
        raise ValueError(f"{name} must hold only 0/1 values (binarise with public cut points first)")
    return a.astype(np.int64)


def _cap_row_ones_ref(X, max_ones, *, random_state=None):
    """The former cap_row_ones (two copies, always called)."""
    a = _binary_ref(X)
    s = stoddard.check_int(max_ones, "max_ones", minimum=1)
    rng = np.random.default_rng(random_state) if not isinstance(random_state, np.random.Generator) \
        else random_state
    out = a.copy()
    too_many = np.flatnonzero(out.sum(axis=1) > s)
    for row in too_many:
        on = np.flatnonzero(out[row])
        out[row, rng.choice(on, size=on.size - s, replace=False)] = 0
    return out, int(too_many.size)


def _scores_ref(self, Xb, yb, w, score, rng):
    """The former _BinarySelector._scores: the cap always runs for TC/DC."""
    n_min = getattr(self, "n_min", None)
    if score == "IG" and n_min is not None and w.sum() < n_min:
        raise ValueError("n_min too large")
    if self.max_ones is not None and score in ("TC", "DC"):
        Xb, _ = stoddard.cap_row_ones(Xb, self.max_ones, random_state=rng)
    return Xb, (stoddard.SCORES[score](Xb, yb, weights=w) if score != "TC"
                else stoddard.total_count(Xb, weights=w))


@pytest.mark.parametrize("X", [
    np.array([[0, 1], [1, 0]], dtype=np.int8), np.array([[0, 1], [1, 1]], dtype=np.uint8),
    np.array([[0.0, 1.0], [-0.0, 1.0]]), np.array([[True, False]]), np.array([[0, 2]]),
    np.array([[0, -1]]), np.array([[0.5, 1.0]]), np.array([[np.nan, 1.0]]), np.array([[np.inf, 0.0]]),
    np.array([["0", "1"]]), np.array([[0, 1]], dtype=object), np.array([[0, 1]], dtype=np.float32),
    pd.DataFrame({"a": [0, 1], "b": [1, 1]}), np.zeros((0, 3)), np.array([0, 1]),
])
def test_binary_check_matches_isin(X):
    try:
        expected = _binary_ref(X)
    except ValueError as error:
        with pytest.raises(ValueError, match=str(error).split(" (")[0]):
            stoddard.check_binary_matrix(X)
    else:
        got = stoddard.check_binary_matrix(X)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cap_row_ones_unchanged_and_leaves_input_alone(seed):
    X = (np.random.default_rng(seed).random((200, 12)) < 0.4).astype(np.int64)
    before = X.copy()
    got, cut = stoddard.cap_row_ones(X, 3, random_state=seed)
    expected, expected_cut = _cap_row_ones_ref(X, 3, random_state=seed)
    np.testing.assert_array_equal(got, expected)
    assert cut == expected_cut > 0
    np.testing.assert_array_equal(X, before)
    assert not np.shares_memory(got, X)


def _selector_cases():
    return [(stoddard.ScorePerturbationSelector, {"threshold": 20.0}),
            (stoddard.ScorePerturbationSelector, {"k": 3}),
            (stoddard.ExponentialTopKSelector, {"k": 3, "method": "peeling"}),
            (stoddard.SparseVectorSelector, {"threshold": 20.0, "cutoff": 4}),
            (stoddard.PrivateThresholdTesting, {"threshold": 20.0}),
            (stoddard.ClusterSelection, {"threshold": 20.0})]


@pytest.mark.parametrize("cls, params", _selector_cases())
@pytest.mark.parametrize("score", ["TC", "DC"])
@pytest.mark.parametrize("max_ones", [2, 12])     # 2: many rows are cut; 12: no row exceeds
def test_selector_fits_unchanged(monkeypatch, cls, params, score, max_ones):
    rng = np.random.default_rng(5)
    X = pd.DataFrame((rng.random((300, 12)) < 0.3).astype(np.int8), columns=[f"f{i}" for i in range(12)])
    y = rng.integers(0, 2, 300)
    kwargs = dict(params, epsilon=0.5, feature_score=score, max_ones=max_ones, classes=[0, 1])

    def fit():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", stoddard.NotDifferentiallyPrivateWarning)
            return cls(random_state=7, **kwargs).fit(X, y)

    fast = fit()
    monkeypatch.setattr(stoddard, "check_binary_matrix", _binary_ref)
    monkeypatch.setattr(stoddard, "cap_row_ones", _cap_row_ones_ref)
    monkeypatch.setattr(stoddard._BinarySelector, "_scores", _scores_ref)
    reference = fit()
    np.testing.assert_array_equal(fast.get_support(), reference.get_support())
    for attribute in ("noisy_scores_", "centers_", "epsilon_spent_"):
        if hasattr(reference, attribute):
            np.testing.assert_array_equal(getattr(fast, attribute), getattr(reference, attribute))



# =========================================================================== altair channels
# A bare shorthand in .encode() (x2="end:Q", tooltip=["item"], text="nodes:Q") or a plain dict
# (alt.value(...), alt.datum(...), alt.condition(value, value)) makes altair rebuild a lookup table
# for each channel (10–20 ms; vega/altair#3547); an explicit channel object (alt.X2("end:Q"),
# alt.ColorValue(...)) costs microseconds. The specs must not change.
from dpexplore.plots import (diffmulti, mechanisms as mech_plots, privpfc, projected,  # noqa: E402
                             roc as roc_plots, showdown, taxonomy, thesis)


def _levels():
    return pd.DataFrame({"attribute": ["a", "a", "b", "b"], "depth": [0, 1, 0, 1], "level": [1, 2, 1, 2],
                         "nodes": [1, 3, 1, 4], "chosen": [False, True, True, False],
                         "refined": [False, True, False, False]})


def _grid_levels_shorthand(levels, width=300):
    data = privpfc.levels_data(levels)
    base = alt.Chart(data).encode(
        x=alt.X("depth:O", title="depth (0 = root; paper level = depth + 1)"),
        y=alt.Y("attribute:N", sort=list(dict.fromkeys(data["attribute"])), title=None))
    boxes = base.mark_rect(stroke="white").encode(
        color=alt.Color("state:N", scale=alt.Scale(domain=["chosen depth", "root (attribute dropped)", "not used"],
                                                   range=["#D55E00", "#c7c7c7", "#f2f2f2"]), title=None),
        tooltip=["attribute:N", "depth:O", alt.Tooltip("level:O", title="paper level"), "nodes:Q"])
    text = base.mark_text(fontSize=10).encode(text="nodes:Q")
    return (boxes + text).properties(width=width, title="Chosen grid (numbers: nodes per depth)")


def _budget_shorthand(summary, total, title="Where did ε go?", width=560, height=60):
    rows = mech_plots.budget_frame(summary, total)
    items = rows["item"].tolist()
    palette = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#ff9da6", "#9d755d"]
    colors = [("#d0d0d0" if it == "unspent" else palette[i % len(palette)]) for i, it in enumerate(items)]
    x_scale = alt.Scale(domain=[0, float(total)], nice=False)
    bar = alt.Chart(rows).mark_bar(height=height * 0.6).encode(
        x=alt.X("start:Q", scale=x_scale, title=f"ε (total {total:.3g})"), x2="end:Q",
        y=alt.Y("bar:N", title=None, axis=None),
        color=alt.Color("item:N", sort=items, scale=alt.Scale(domain=items, range=colors),
                        title=None, legend=alt.Legend(orient="bottom", columns=2)),
        tooltip=["item", alt.Tooltip("charged:Q", format=".4f"), alt.Tooltip("share:Q", format=".1%")])
    text = alt.Chart(rows).transform_filter(alt.datum.share >= 0.08).transform_calculate(
        mid="(datum.start + datum.end) / 2").mark_text(fontSize=11).encode(
        x=alt.X("mid:Q", scale=x_scale), y=alt.Y("bar:N", axis=None),
        color=alt.condition(alt.datum.item == "unspent", alt.value("black"), alt.value("white")),
        text=alt.Text("charged:Q", format=".3g"))
    return (bar + text).properties(title=title, width=width, height=height)


def _selection_accuracy_shorthand(results, references):
    summary = results.groupby(["method", "epsilon"], as_index=False)["accuracy"].median()
    chart = alt.Chart(summary).mark_line(point=True).encode(
        x=alt.X("epsilon:Q", scale=alt.Scale(type="log"), title="ε for feature selection",
                axis=alt.Axis(values=sorted(summary["epsilon"].unique().tolist()), format="~g",
                              labelOverlap="greedy")),
        y=alt.Y("accuracy:Q", scale=alt.Scale(zero=False), title="test accuracy (median)"),
        color=alt.Color("method:N", title=None))
    rules = alt.Chart(references).mark_rule(strokeDash=[5, 3]).encode(
        y="accuracy:Q", color=alt.value("gray"), tooltip=["reference", "accuracy"])
    lo = min(summary["accuracy"].min(), references["accuracy"].min())
    hi = max(summary["accuracy"].max(), references["accuracy"].max())
    placed = references.assign(label_y=spread(references["accuracy"], 13 * (hi - lo) / 260))
    labels = alt.Chart(placed).mark_text(align="left", dx=4, dy=-6, color="#555555").encode(
        y="label_y:Q", x=alt.value(0), text="reference:N")
    return (chart + rules + labels).properties(title="Test accuracy after feature selection", width=420, height=260)


def _bare(chart) -> dict:
    """The spec without its text description (what the shorthand copies below do not repeat)."""
    spec = chart.to_dict()
    spec.pop("description", None)
    return spec


def test_explicit_channels_give_the_shorthand_specs():
    assert _bare(privpfc.grid_levels_chart(_levels())) == _bare(_grid_levels_shorthand(_levels()))
    summary = pd.DataFrame({"item": ["count", "mean"], "charged": [0.3, 0.5]})
    assert _bare(mech_plots.budget_chart(summary, 1.0)) == _bare(_budget_shorthand(summary, 1.0))
    results = pd.DataFrame({"method": ["SP"] * 4, "epsilon": [0.1, 0.1, 1, 1], "accuracy": [0.7, 0.72, 0.8, 0.81]})
    references = pd.DataFrame({"reference": ["all features"], "accuracy": [0.85]})
    assert _bare(roc_plots.selection_accuracy_chart(results, references)) == \
        _bare(_selection_accuracy_shorthand(results, references))


def _all_charts():
    """Every public chart function of the plot modules on small inputs (name, thunk)."""
    rng = np.random.default_rng(0)
    c1 = pd.DataFrame({"threshold": [1, 0.5, 0], "fpr": [0, 0.3, 1], "tpr": [0, 0.7, 1]})
    cand = pd.DataFrame({"grid": [f"g{i}" for i in range(20)], "size": np.arange(1, 21) * 10,
                         "n_refined": np.arange(20) % 3, "quality": rng.random(20) * 100,
                         "probability": rng.random(20) / 20, "chosen": [i == 15 for i in range(20)]})
    rects = pd.DataFrame({"x0": [0, 1], "x1": [1, 2], "y0": [0, 0], "y1": [1, 1], "majority": ["a", "b"],
                          "count": [3.1, 2.7], "label_x": ["p", "q"], "label_y": ["r", "s"]})
    summary = pd.DataFrame({"dataset": ["Adult"] * 6 + ["Iris"] * 6,
                            "method": ["A", "A", "B", "B", "majority", "non-private"] * 2,
                            "epsilon": [0.1, 1.0, 0.1, 1.0, np.inf, np.inf] * 2, "median": rng.random(12),
                            "q25": rng.random(12), "q75": rng.random(12), "seconds": rng.random(12) + 0.01})
    peers = pd.DataFrame({"label": ["peer NB"] * 2, "epsilon": [0.1, 1.0], "metric": ["accuracy"] * 2,
                          "value": [0.7, 0.8]})
    ef = mech_plots.exponential_frame(["a", "b", "c"], np.array([1.0, 2.0, 3.0]), [0.1, 1.0, 10.0])
    hist, theory = mech_plots.noise_frames({"Laplace": 10 + rng.laplace(0, 1, 100),
                                            "geometric": 10 + rng.integers(-3, 4, 100)},
                                           epsilon=1.0, sensitivity=1.0, true_value=10.0)
    dens, loss = mech_plots.privacy_loss_frames(10, 11, epsilon=1.0, sensitivity=1.0)
    audit = pd.DataFrame({"x": [9.0], "log_ratio": [0.5], "lower_bound": [0.1], "count": [30]})
    tax = _toy_taxonomy()
    two = lambda c: c.assign(method=np.where(np.arange(len(c)) % 2, "A", "B"))  # noqa: E731
    return {
        "mechanisms.noise_chart": lambda: mech_plots.noise_chart(hist, theory, true_value=10.0),
        "mechanisms.privacy_loss_chart": lambda: mech_plots.privacy_loss_chart(dens, loss, epsilon=1.0, audit=audit),
        "mechanisms.exponential_chart": lambda: mech_plots.exponential_chart(ef[ef.epsilon == 1.0], ef),
        "mechanisms.budget_chart": lambda: mech_plots.budget_chart(
            pd.DataFrame({"item": ["count"], "charged": [0.3]}), 1.0),
        "privpfc.sensitivity_chart": lambda: privpfc.sensitivity_chart(
            pd.DataFrame({"epsilon": [0.1, 1], "sensitivity": [1.0, 1.1], "constant": [1.1, 1.1]})),
        "privpfc.win_probability_chart": lambda: privpfc.win_probability_chart(
            pd.DataFrame({"gap": [0, 1], "epsilon": [0.1, 0.1], "probability": [0.5, 0.6]})),
        "privpfc.candidates_chart": lambda: privpfc.candidates_chart(cand, tau=5.0, n_records=1000),
        "privpfc.selection_chart": lambda: privpfc.selection_chart(cand, top=5),
        "privpfc.grid_levels_chart": lambda: privpfc.grid_levels_chart(_levels()),
        "privpfc.counts_chart": lambda: privpfc.counts_chart(pd.DataFrame(
            {"cell": ["c1"] * 4, "class": ["x", "y"] * 2, "kind": ["true"] * 2 + ["noisy"] * 2, "count": [1.0] * 4})),
        "privpfc.error_chart": lambda: privpfc.error_chart(
            two(pd.DataFrame({"epsilon": [0.1] * 4 + [1.0] * 4, "error": rng.random(8)})),
            baselines={"majority": 0.24}),
        "privpfc.errors_bar_chart": lambda: privpfc.errors_bar_chart({"PrivPfC": 0.2}, {"majority": 0.24}),
        "diffmulti.partition_comparison": lambda: diffmulti.partition_comparison(
            rects, rects, "X", "Y", points=pd.DataFrame({"x": [0.5], "y": [0.5], "class": ["a"]})),
        "diffmulti.split_density_chart": lambda: diffmulti.split_density_chart([0, 1, 3], [0.3, 0.7], split=1.5),
        "diffmulti.accuracy_chart": lambda: diffmulti.accuracy_chart(
            pd.DataFrame({"method": ["A", "A"], "epsilon": [0.1, 1], "mean": [0.7, 0.8], "std": [0.01, 0.02]}),
            x="epsilon", baselines=pd.DataFrame({"name": ["majority"], "accuracy": [0.76]})),
        "thesis.selection_probability_chart": lambda: thesis.selection_probability_chart(pd.DataFrame(
            {"feature": ["f1"], "score": [1.0], "probability": [0.3], "chosen": [True]})),
        "thesis.stability_chart": lambda: thesis.stability_chart(pd.DataFrame(
            {"feature": ["f1"], "frequency": [0.3], "probability": [0.35], "setting": ["TC"]})),
        "thesis.accuracy_curve_chart": lambda: thesis.accuracy_curve_chart(
            pd.DataFrame({"k": [1, 2], "pipeline": ["A", "A"], "median": [0.7, 0.8], "q25": [0.6, 0.7],
                          "q75": [0.8, 0.9]}),
            pd.DataFrame({"baseline": ["majority"], "accuracy": [0.7]})),
        "thesis.lambda_noise_chart": lambda: thesis.lambda_noise_chart(
            pd.DataFrame({"lam": [1, 10], "noise_scale": [1, 0.1], "method": ["out", "out"]}), boundary=5.0),
        "thesis.noise_cloud_chart": lambda: thesis.noise_cloud_chart(
            pd.DataFrame({"x": [0.1], "y": [0.3], "norm": ["L1"]})),
        "thesis.ledger_chart": lambda: thesis.ledger_chart(pd.DataFrame({"label": ["a"], "charged": [0.1]})),
        "roc.roc_chart": lambda: roc_plots.roc_chart(roc_plots.stack_curves({"PriROC": [c1]}, true_curve=c1)),
        "roc.auc_error_chart": lambda: roc_plots.auc_error_chart(
            pd.DataFrame({"method": ["A"] * 2, "epsilon": [0.1, 1], "error": [0.1, 0.05]})),
        "roc.threshold_rug_chart": lambda: roc_plots.threshold_rug_chart(
            rng.random(30), pd.DataFrame({"strategy": ["a"], "threshold": [0.2]}), bins=5),
        "roc.prefix_sum_chart": lambda: roc_plots.prefix_sum_chart(
            pd.DataFrame({"bin": [0, 1], "value": [1, 2], "series": ["noisy", "noisy"]})),
        "roc.audit_chart": lambda: roc_plots.audit_chart(pd.DataFrame(
            {"selector": ["PTT"], "epsilon_lower": [3.0], "epsilon_hat": [3.5], "violates": [True],
             "claimed_epsilon": [1.0]})),
        "roc.ptt_split_chart": lambda: roc_plots.ptt_split_chart(
            pd.DataFrame({"output": ["00", "00"], "dataset": ["D", "D'"], "frequency": [0.1, 0.2]})),
        "roc.selection_accuracy_chart": lambda: roc_plots.selection_accuracy_chart(
            pd.DataFrame({"method": ["SP"], "epsilon": [0.1], "accuracy": [0.7]}),
            pd.DataFrame({"reference": ["all"], "accuracy": [0.85]})),
        "roc.selection_quality_chart": lambda: roc_plots.selection_quality_chart(pd.DataFrame(
            {"method": ["SP", "PTT (NOT DP)"], "tau": [10, 10], "f1": [0.5, 0.6], "n_exact": [3, 3]})),
        "roc.feature_selection_bars": lambda: roc_plots.feature_selection_bars(
            {"all": 0.85}, np.array([0.8, 0.82]), np.array([5, 6]), 7, n_features=10),
        "projected.selection_chart": lambda: projected.selection_chart(pd.DataFrame(
            {"step": [1, 1], "attribute": ["a", "b"], "gain": [0.1, 0.4], "probability": [0.3, 0.7],
             "chosen": [False, True]})),
        "projected.histogram_chart": lambda: projected.histogram_chart(pd.DataFrame(
            {"cell": ["c1", "c2"], "class": ["x", "y"], "true_count": [3, 0], "noisy_count": [2.5, np.nan],
             "status": ["kept", "empty, dropped"]}), tau=1.5),
        "projected.survival_chart": lambda: projected.survival_chart(pd.DataFrame(
            {"z": [0, 1], "probability": [0.1, 0.5], "epsilon_h": [0.1, 0.1], "tau": [1.0, 1.0]}), floor=0.05),
        "projected.auc_chart": lambda: projected.auc_chart(pd.DataFrame(
            {"dataset": ["iris"] * 2, "parameter": ["epsilon"] * 2, "value": [0.1, 1], "method": ["A"] * 2,
             "auc": [0.6, 0.7]})),
        "projected.budget_chart": lambda: projected.budget_chart(
            {"record count": 0.1, "selection": 0.3, "histogram": 0.6}, 3),
        "showdown.error_chart": lambda: showdown.error_chart(summary, peers=peers),
        "showdown.runtime_chart": lambda: showdown.runtime_chart(summary),
        "showdown.runtime_chart (one table)": lambda: showdown.runtime_chart(summary.drop(columns="dataset")),
        "showdown.ranking_chart": lambda: showdown.ranking_chart(summary, 0.1, peers=peers),
        "taxonomy.taxonomy_tree_chart": lambda: taxonomy.taxonomy_tree_chart(tax),
        "taxonomy.taxonomy_levels_chart": lambda: taxonomy.taxonomy_levels_chart([tax]),
    }


def _toy_taxonomy():
    from dpexplore.datasets import load_adult
    return load_adult()[1]["education"].taxonomy


@pytest.fixture
def slow_channel_wraps(monkeypatch):
    """Records every encode() argument altair has to convert (string, dict) instead of taking it as is."""
    core = pytest.importorskip("altair.utils.core")
    cache = getattr(core, "_ChannelCache", None)
    if cache is None or not hasattr(cache, "_wrap_in_channel"):
        pytest.skip("altair's channel cache changed: this guard needs updating")
    from altair.utils.schemapi import SchemaBase
    seen = []
    original = cache._wrap_in_channel

    def spy(self, obj, encoding):
        if not isinstance(obj, (SchemaBase, list, tuple)):
            seen.append((encoding, repr(obj)[:60]))
        return original(self, obj, encoding)

    monkeypatch.setattr(cache, "_wrap_in_channel", spy)
    return seen


def test_no_chart_uses_bare_shorthand_channels(slow_channel_wraps):
    for label, build in _all_charts().items():
        slow_channel_wraps.clear()
        build()
        assert not slow_channel_wraps, f"{label}: bare channel shorthand {slow_channel_wraps}"


@pytest.mark.parametrize("a", [
    np.array([], dtype=np.int64), np.array([[0, 1], [1, 1]], dtype=np.int8), np.array([0, 2], dtype=np.uint8),
    np.array([0, -1]), np.array([0.0, -0.0, 1.0]), np.array([0.0, np.nan]), np.array([0.5, 1.0]),
    np.array([np.inf]), np.array(["0", "1"]), np.array([0, 1], dtype=object), np.array([True, False]),
])
def test_is_zero_one_agrees_with_isin(a):
    from dpexplore._validation import is_zero_one

    assert is_zero_one(a) == bool(np.isin(a, (0, 1)).all())
