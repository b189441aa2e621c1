"""Tests for the notebook-01 charts and explorers and the taxonomy trees (notebook 00)."""
from __future__ import annotations

import altair as alt
import numpy as np
import pytest

from dpexplore.audit import privacy_loss
from dpexplore.budget import BudgetAccountant
from dpexplore.datasets import load_adult
from dpexplore.domain import Taxonomy
from dpexplore.mechanisms import (exponential_probabilities, geometric, geometric_pmf, laplace,
                                  laplace_pdf)
from dpexplore.plots.mechanisms import (audit_points, budget_chart, budget_frame, exponential_chart,
                                        exponential_frame, noise_chart, noise_frames,
                                        privacy_loss_chart, privacy_loss_frames)
from dpexplore.plots.taxonomy import taxonomy_frames, taxonomy_levels_chart, taxonomy_tree_chart
from dpexplore.widgets.mechanisms import (BudgetExplorer, ExponentialExplorer, NoiseExplorer,
                                          PrivacyLossExplorer)


@pytest.fixture(scope="module")
def adult():
    return load_adult()


def _datasets(chart: alt.TopLevelMixin) -> list[list[dict]]:
    """Inline datasets of a chart's Vega-Lite spec (what the browser would draw)."""
    return list(chart.to_dict()["datasets"].values())


# --------------------------------------------------------------------------- noise
def test_noise_frames_theory_is_closed_form_and_histogram_integrates_to_one():
    rng = np.random.default_rng(1)
    n, eps, delta, true = 50_000, 0.5, 2, 40
    samples = {"Laplace": laplace(np.full(n, true), epsilon=eps, sensitivity=delta, random_state=rng),
               "geometric": geometric(np.full(n, true), epsilon=eps, sensitivity=delta, random_state=rng)}
    hist, theory = noise_frames(samples, epsilon=eps, sensitivity=delta, true_value=true)
    lap = theory[theory.mechanism == "Laplace"]
    np.testing.assert_allclose(lap.density, laplace_pdf(lap.x - true, epsilon=eps, sensitivity=delta))
    geo = theory[theory.mechanism == "geometric"]
    np.testing.assert_allclose(geo.density, geometric_pmf((geo.x - true).astype(int), epsilon=eps,
                                                          sensitivity=delta))
    for name, h in hist.groupby("mechanism"):
        mass = (h.density * (h.right - h.left)).sum()
        assert mass == pytest.approx(h["count"].sum() / n)
        assert 0.99 < mass <= 1.0  # ±6 scales hold all but e^-6 of the mass
    # geometric bins are integer-aligned: each integer sits strictly inside one bin
    g = hist[hist.mechanism == "geometric"]
    assert np.allclose(g.left % 1, 0.5)


def test_noise_histogram_matches_density_within_sampling_error():
    rng = np.random.default_rng(2)
    n, eps = 200_000, 1.0
    samples = {"Laplace": laplace(np.zeros(n), epsilon=eps, random_state=rng)}
    hist, _ = noise_frames(samples, epsilon=eps, sensitivity=1.0)
    mids = (hist.left + hist.right) / 2
    width = (hist.right - hist.left).to_numpy()
    lo, hi = hist.left.to_numpy(), hist.right.to_numpy()
    # expected bin probability from the closed-form cdf of Laplace(1): exact, no midpoint error
    cdf = lambda x: np.where(x < 0, 0.5 * np.exp(x), 1 - 0.5 * np.exp(-x))  # noqa: E731
    p = cdf(hi) - cdf(lo)
    expected = n * p
    sd = np.sqrt(n * p * (1 - p))
    assert np.all(np.abs(hist["count"].to_numpy() - expected) < 5 * sd + 1)
    assert np.all(hist.density.to_numpy() * width * n == pytest.approx(hist["count"].to_numpy()))
    assert len(mids) > 10


def test_noise_frames_rejects_unknown_mechanism_and_bad_epsilon():
    with pytest.raises(ValueError, match="unknown mechanism"):
        noise_frames({"gaussian": np.zeros(10)}, epsilon=1.0, sensitivity=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        noise_frames({"Laplace": np.zeros(10)}, epsilon=0.0, sensitivity=1.0)


def test_noise_chart_draws_both_mechanisms():
    hist, theory = noise_frames({"Laplace": np.zeros(100) + 0.3, "geometric": np.zeros(100, int)},
                                epsilon=1.0, sensitivity=1, true_value=0)
    spec = noise_chart(hist, theory, true_value=0).to_dict()
    assert len(spec["hconcat"]) == 2


# --------------------------------------------------------------------------- privacy loss
@pytest.mark.parametrize("eps,delta", [(0.1, 1), (1.0, 3), (2.5, 2)])
def test_privacy_loss_is_bounded_by_epsilon_and_reaches_it(eps, delta):
    dens, loss = privacy_loss_frames(10.0, 10.0 + delta, epsilon=eps, sensitivity=delta)
    assert np.abs(loss.log_ratio).max() == pytest.approx(eps)
    assert np.all(np.abs(loss.log_ratio) <= eps + 1e-12)
    d = dens[dens.dataset == "D"].set_index("x").density
    d2 = dens[dens.dataset != "D"].set_index("x").density
    np.testing.assert_allclose(np.log(d / d2).to_numpy(), loss.log_ratio.to_numpy(), atol=1e-9)


def test_privacy_loss_with_wrong_noise_exceeds_epsilon():
    _, loss = privacy_loss_frames(0.0, 3.0, epsilon=1.0, sensitivity=3, noise_sensitivity=1)
    assert np.abs(loss.log_ratio).max() == pytest.approx(3.0)


def test_audit_points_read_back_bins_and_chart_builds():
    def mech(data, rng, n):
        return laplace(np.full(n, data), epsilon=1.0, random_state=rng)

    edges = np.linspace(-3, 4, 15)
    result = privacy_loss(mech, 0.0, 1.0, n_samples=50_000, bins=edges, batched=True, random_state=3)
    pts = audit_points(result)
    assert len(pts) >= 10
    assert pts.x.between(-3, 4).all()
    assert np.all(np.abs(pts.log_ratio) < 1.0 + 0.15)  # true loss ≤ ε = 1, sampling error ≪ 0.15
    dens, loss = privacy_loss_frames(0.0, 1.0, epsilon=1.0, sensitivity=1)
    spec = privacy_loss_chart(dens, loss, epsilon=1.0, audit=pts).to_dict()
    assert len(spec["vconcat"]) == 2


# --------------------------------------------------------------------------- exponential mechanism
def test_exponential_frame_matches_closed_form_and_sums_to_one():
    u = np.array([5.0, 3.0, 3.0, 0.0])
    frame = exponential_frame(list("abcd"), u, [0.1, 1.0, 4.0])
    for eps, part in frame.groupby("epsilon"):
        assert part.probability.sum() == pytest.approx(1.0)
        expected = np.exp(eps * u / 2) / np.exp(eps * u / 2).sum()  # Dwork–Roth Def. 3.9, Δu = 1
        np.testing.assert_allclose(part.probability, expected)
    with pytest.raises(ValueError, match="same length"):
        exponential_frame(["a"], u, [1.0])
    spec = exponential_chart(frame[frame.epsilon == 1.0], frame).to_dict()
    assert len(spec["hconcat"]) == 2


# --------------------------------------------------------------------------- budget
def test_budget_frame_sums_to_spent_and_total():
    acc = BudgetAccountant(2.0)
    acc.spend(0.25, "count")
    with acc.parallel("histogram"):
        for i in range(4):
            acc.spend(0.5, f"bin {i}")
    acc.spend(0.75, "selection")
    rows = budget_frame(acc.summary(), acc.total)
    spent_rows = rows[rows.item != "unspent"]
    assert spent_rows.charged.sum() == pytest.approx(acc.spent) == pytest.approx(1.5)
    assert rows.charged.sum() == pytest.approx(2.0)
    assert rows.end.iloc[-1] == pytest.approx(2.0)
    assert list(spent_rows.item) == ["count", "histogram", "selection"]
    data = _datasets(budget_chart(acc.summary(), acc.total))[0]
    assert sum(r["charged"] for r in data if r["item"] != "unspent") == pytest.approx(acc.spent)


def test_budget_frame_without_remainder_has_no_unspent_row():
    acc = BudgetAccountant(1.0)
    for e, name in [(0.03, "a"), (0.37, "b"), (0.6, "c")]:
        acc.spend(e, name)
    rows = budget_frame(acc.summary(), acc.total)
    assert "unspent" not in set(rows.item)


# --------------------------------------------------------------------------- taxonomy trees
def test_taxonomy_frames_form_a_tree(adult):
    _, schema = adult
    for name in ["education", "age", "workclass", "native-country"]:
        tax = schema[name].taxonomy
        nodes, edges = taxonomy_frames(tax)
        assert len(nodes) == sum(tax.level_sizes)
        assert len(edges) == len(nodes) - 1  # a tree: one edge into every non-root node
        for depth in range(tax.height):
            level = nodes[nodes.depth == depth]
            assert list(level.label) == tax.labels(depth)
            assert level.n_leaves.sum() == tax.n_leaves
        leaves = nodes[nodes.depth == tax.height - 1]
        assert sorted(leaves.y) == list(range(tax.level_sizes[-1]))
    nodes, _ = taxonomy_frames(schema["education"].taxonomy)
    padded = set(nodes[nodes.padded].label)
    assert padded == {"Preschool", "Some-college"}  # short branches copied down, nothing else


def test_taxonomy_frames_parent_is_centred_on_children():
    tax = Taxonomy.from_spec("t", {"type": "categorical", "tree": {"Any": {"A": ["a1", "a2", "a3"], "B": None}}})
    nodes, edges = taxonomy_frames(tax)
    a = nodes[(nodes.depth == 1) & (nodes.label == "A")].y.item()
    kids = nodes[(nodes.depth == 2) & nodes.label.isin(["a1", "a2", "a3"])].y
    assert a == pytest.approx(kids.mean())
    assert nodes[(nodes.depth == 2) & (nodes.label == "B")].padded.item()
    spec = taxonomy_tree_chart(tax).to_dict()
    assert "layer" in spec
    assert "layer" in taxonomy_levels_chart([tax]).to_dict()


# --------------------------------------------------------------------------- widgets
def test_noise_explorer_epsilon_slider_changes_chart():
    # (speed is measured by benchmarks/widget_latency*.py, not asserted: timings flake under load)
    ex = NoiseExplorer(46, epsilon=1.0)
    assert ex.epsilon.description == "ε"
    before = _datasets(ex.chart)
    ex.epsilon.value = 0.2
    after = _datasets(ex.chart)
    assert before != after
    assert ex.hist.right.max() - ex.hist.left.min() >= 2 * 6 * 5  # window ±6b with b = Δ/ε = 5
    ex.sensitivity.value = 3
    lap = ex.theory[ex.theory.mechanism == "Laplace"]
    np.testing.assert_allclose(lap.density, laplace_pdf(lap.x - 46, epsilon=0.2, sensitivity=3))


def test_privacy_loss_explorer_audit_flags_the_bug():
    ex = PrivacyLossExplorer(46, epsilon=1.0, sensitivity=3, n_samples=50_000)
    assert not ex.result.violates(1.0)
    ex.bug.value = True
    assert ex.result.violates(1.0)
    assert ex.result.epsilon_lower > 2.0  # true loss is 3ε with noise calibrated for Δ = 1
    assert np.abs(ex.loss.log_ratio).max() == pytest.approx(3.0)


def test_exponential_explorer_uses_public_categories_and_precomputes(adult):
    frame, schema = adult
    small = frame[frame["workclass"] != "Never-worked"].head(300)
    ex = ExponentialExplorer(small, schema, ["workclass", "education"], epsilon=1.0)
    u = ex.utilities["workclass"]
    assert list(u.index) == list(schema["workclass"].categories)
    assert u["Never-worked"] == 0  # a public category nobody in the data has is still a candidate
    curves = ex.curves["workclass"]
    ex.epsilon.value = 0.1
    assert ex.curves["workclass"] is curves  # not recomputed on a slider move
    np.testing.assert_allclose(ex.current.probability,
                               exponential_probabilities(u.to_numpy(), epsilon=0.1, sensitivity=1.0))
    ex.attribute.value = "education"
    assert set(ex.current.candidate) == set(schema["education"].categories)
    with pytest.raises(ValueError, match="numeric"):
        ExponentialExplorer(small, schema, ["age"])
    with pytest.raises(ValueError, match="nope"):
        ExponentialExplorer(small, schema, ["nope"])


def test_budget_explorer_bar_sums_to_spent_and_parallel_bins_charged_once(adult):
    frame, schema = adult
    ex = BudgetExplorer(frame, schema, total=1.0)
    acc = ex.accountant
    assert acc.spent == pytest.approx(0.9)  # the "keep for later" share (0.1) stays unspent
    ledger = acc.ledger
    hist = ledger[ledger.scope == "age histogram"]
    assert len(hist) == 4 and hist.charged.sum() == pytest.approx(hist.epsilon.iloc[0])
    data = _datasets(ex.chart)[0]
    assert sum(r["charged"] for r in data if r["item"] != "unspent") == pytest.approx(acc.spent)
    ex.shares["keep for later"].value = 0.0
    assert ex.accountant.spent == pytest.approx(ex.total.value)
    ex.total.value = 2.0
    assert ex.accountant.spent == pytest.approx(2.0)
    for s in ex.shares.values():
        s.value = 0.0
    assert ex.accountant.spent == 0.0 and ex.answers == {}
    with pytest.raises(ValueError, match="categorical"):
        BudgetExplorer(frame, schema, category="age")
    with pytest.raises(ValueError, match="nope"):
        BudgetExplorer(frame, schema, numeric="nope")
    for build in (BudgetExplorer, lambda f, s: ExponentialExplorer(f, s, ["workclass"])):   # one wording
        with pytest.raises(ValueError, match="frame is empty: at least one row is needed"):
            build(frame.head(0), schema)


# --------------------------------------------------------------------------- rendering
def test_vegalite_bundle_is_offline_vegalite5_and_renderer_uses_it():
    from dpexplore.plots import enable, vegalite_bundle

    acc = BudgetAccountant(1.0)
    acc.spend(0.4, "a")
    chart = budget_chart(acc.summary(), acc.total)
    bundle = vegalite_bundle(chart)
    assert set(bundle) == {"application/vnd.vegalite.v5+json", "text/plain", "image/png"}
    spec = bundle["application/vnd.vegalite.v5+json"]
    assert spec["$schema"].endswith("vega-lite/v5.json")
    assert "<script" not in str(spec)  # no HTML/JS: JupyterLab draws it offline, trusted or not
    previous = alt.renderers.active
    try:
        alt.renderers.enable("default")
        enable()
        enable()  # idempotent
        assert alt.renderers.active == "dpexplore"
        out = chart._repr_mimebundle_()
        out = out[0] if isinstance(out, tuple) else out
        assert "application/vnd.vegalite.v5+json" in out and "text/html" not in out
    finally:
        alt.renderers.enable(previous)


def test_importing_dpexplore_plots_enables_the_offline_renderer():
    """One renderer for the whole package, chosen on import: no notebook has to call anything."""
    import subprocess
    import sys

    code = ("import altair as alt; import dpexplore.plots.taxonomy; "
            "b = alt.Chart({'values': [{'a': 1}]}).mark_point().encode(x='a:Q')._repr_mimebundle_(); "
            "b = b[0] if isinstance(b, tuple) else b; print(alt.renderers.active, sorted(b))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split()[0] == "dpexplore"
    assert "application/vnd.vegalite.v5+json" in out and "text/html" not in out


def test_placeholder_png_on_every_redraw_and_on_every_chart_in_voila(monkeypatch):
    """JupyterLab rasterises and redraws a chart whose bundle has no "image/png": an explorer's
    redraw skips that everywhere; a displayed chart keeps JupyterLab's copy, except in Voilà."""
    from dpexplore.plots._render import _PLACEHOLDER_PNG, enable, vegalite_bundle

    enable()
    chart = alt.Chart(alt.Data(values=[{"a": 1}])).mark_point().encode(x="a:Q")
    displayed = lambda: chart._repr_mimebundle_()[0]  # noqa: E731  (what display(chart) sends)
    monkeypatch.delenv("VOILA_BASE_URL", raising=False)
    assert vegalite_bundle(chart)["image/png"] == _PLACEHOLDER_PNG
    assert "image/png" not in displayed()
    monkeypatch.setenv("VOILA_BASE_URL", "/")
    assert vegalite_bundle(chart)["image/png"] == _PLACEHOLDER_PNG
    assert displayed()["image/png"] == _PLACEHOLDER_PNG


def test_chart_data_is_rounded_but_faithful():
    dens, loss = privacy_loss_frames(0.0, 1.0, epsilon=0.7, sensitivity=1)
    data = _datasets(privacy_loss_chart(dens, loss, epsilon=0.7))
    values = [r["log_ratio"] for d in data for r in d if "log_ratio" in r]
    np.testing.assert_allclose(values, loss.log_ratio, rtol=1e-3, atol=1e-12)
    assert all(len(repr(v)) <= 12 for v in values)
    # probabilities far below display precision (here ≈ 1e-300) become 0 rather than overflow
    tiny = exponential_frame(["a", "b"], np.array([0.0, 2000.0]), [1.0])
    shown = _datasets(exponential_chart(tiny))[0]
    assert {r["candidate"]: r["probability"] for r in shown} == {"a": 0.0, "b": 1.0}


def test_exponential_curves_label_only_decades_on_the_log_axis():
    """Issue 13: altair's default log ticks crowded into "0.010.02…"; only decades are labelled."""
    frame = exponential_frame(["a", "b"], np.array([3.0, 1.0]), np.logspace(-2, 1, 13))
    spec = exponential_chart(frame[frame.epsilon == frame.epsilon.iloc[0]], frame).to_dict()
    axes = [layer["encoding"]["x"].get("axis", {}) for layer in spec["hconcat"][1]["layer"]
            if layer["encoding"]["x"]["field"] == "epsilon" and "scale" in layer["encoding"]["x"]]
    assert axes and axes[0]["values"] == [0.01, 0.1, 1, 10]
