"""Accessible charts and notebooks, without a browser (the axe-core runs are tests/browser/test_axe.py).

- Every chart function of ``dpexplore.plots`` gives its chart a Vega-Lite ``description`` (what it
  shows and its take-away; Vega renders it as the chart's aria-label, the build uses it as alt text).
- Charts told apart by colour alone get a colour-blind-safe palette and a second cue (dash, shape,
  direct labels), checked by simulating colour-vision deficiencies (Machado et al. 2009).
- Labels that overlapped in the stored notebooks no longer do (checked on the rendered SVG).
- ``notebooks/build.py`` gives every stored picture alt text that JupyterLab and nbconvert show,
  stores the kernelspec a starting kernel does not rewrite, and a stand-in picture for each widget.
"""
from __future__ import annotations

import base64
import html
import importlib.util
import inspect
import json
import re
from pathlib import Path

import altair as alt
import numpy as np
import pandas as pd
import pytest

from dpexplore.plots import (attacks, composition, diffmulti, fidelity, gaussian, local_dp, mechanisms, privpfc,
                             projected, roc, showdown, svt, taxonomy, thesis, your_data)
from dpexplore.plots._accessible import CONSISTENT, DASHES, OKABE_ITO, REFUTED, describe, spread

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
MODULES = [mechanisms, privpfc, diffmulti, projected, roc, showdown, taxonomy, thesis, your_data, fidelity, attacks,
           local_dp, gaussian, composition, svt]


# --------------------------------------------------------------------------- every chart is described
def _more_charts() -> dict:
    """Chart functions that ``test_perf_equivalence._all_charts`` does not build."""
    rng = np.random.default_rng(1)
    rects = pd.DataFrame({"x0": [0, 1], "x1": [1, 2], "y0": [0, 0], "y1": [1, 1], "majority": ["a", "b"],
                          "count": [3.1, 2.7], "label_x": ["p", "q"], "label_y": ["r", "s"]})
    private = pd.DataFrame({"age": rng.integers(20, 70, 50), "sex": rng.choice(["F", "M"], 50)})
    synthetic = pd.DataFrame({"age": rng.integers(20, 70, 40), "sex": rng.choice(["F", "M"], 40)})
    sweep = pd.DataFrame({"method": ["PrivPfC", "PrivPfC", "DiffGen", "DiffGen"], "epsilon": [0.1, 1.0] * 2,
                          "error": [0.3, 0.2, 0.35, 0.25], "majority": 0.4, "nonprivate_lr": 0.15,
                          "cells": [10, 100, 5, 50], "records_per_cell": [30.0, 3.0, 60.0, 6.0]})
    noise = mechanisms.noise_frames({"Laplace": rng.laplace(0, 2, 500)}, epsilon=0.5, sensitivity=1.0)
    runs = pd.DataFrame([{"n_queries": k, "noise": e, "rep": r, "rate": 1 - e / 40 - r / 100}
                         for k in (100, 400) for e in (0, 2, 10, 20) for r in range(2)])
    roc_curves = attacks.roc_frame({"forest": [pd.DataFrame({"fpr": [0, 0.2, 1], "tpr": [0, 0.6, 1]})],
                                    "DP NB": [pd.DataFrame({"fpr": [0, 0.5, 1], "tpr": [0, 0.52, 1]})] * 2})
    return {
        "attacks.difference_chart": lambda: attacks.difference_chart(
            {"bit 0": rng.laplace(0, 4, 300), "bit 1": 1 + rng.laplace(0, 4, 300)}, edges=np.linspace(-15, 15, 31),
            threshold=0.5),
        "attacks.reconstruction_chart": lambda: attacks.reconstruction_chart(
            attacks.reconstruction_summary(runs), n_records=100, n_queries=400, noise=2),
        "attacks.records_chart": lambda: attacks.records_chart([0, 1, 1, 0], [0, 1, 0, 0], columns=2),
        "attacks.membership_chart": lambda: attacks.membership_chart(roc_curves, epsilon=1.0, aucs={"forest": 0.7}),
        "local_dp.error_chart": lambda: local_dp.error_chart(local_dp.error_frame([100, 1000], epsilon=1.0), n=300,
                                                             epsilon=1.0, observed={local_dp.LOCAL: 0.05}),
        "local_dp.estimates_chart": lambda: local_dp.estimates_chart(
            {local_dp.LOCAL: rng.normal(0.3, 0.03, 50), local_dp.CENTRAL: rng.normal(0.3, 0.001, 50)}, truth=0.3),
        "mechanisms.accuracy_chart": lambda: mechanisms.accuracy_chart(*noise, epsilon=0.5, sensitivity=1.0,
                                                                        alpha=0.05, exceeded=0.048),
        "diffmulti.partition_chart": lambda: diffmulti.partition_chart(rects, "X", "Y", title="DiffMulti"),
        "your_data.marginal_chart": lambda: your_data.marginal_chart(private, synthetic, "sex"),
        "your_data.marginals_chart": lambda: your_data.marginals_chart(private, synthetic, ["age", "sex"]),
        "your_data.utility_chart": lambda: your_data.utility_chart(pd.DataFrame(
            {"model": ["release", "non-private"], "error": [0.2, 0.15], "private": [True, False]})),
        "your_data.ledger_chart": lambda: your_data.ledger_chart(pd.DataFrame({"label": ["a", "b"], "charged": [0.1, 0.2]})),
        "your_data.method_chart": lambda: your_data.method_chart(sweep),
        "your_data.occupancy_chart": lambda: your_data.occupancy_chart(sweep),
        "fidelity.fidelity_chart": lambda: fidelity.fidelity_chart(sweep.assign(
            accuracy=1 - sweep["error"], tvd_1way=[0.2, 0.05, 0.3, 0.1], tvd_2way=[0.4, 0.1, 0.5, 0.2])),
        **_notebook_12_to_14_charts(),
    }


def _notebook_12_to_14_charts() -> dict:
    """The charts of the Gaussian mechanism, composition and sparse vector notebooks."""
    from dpexplore.composition import composed_epsilon

    calibrations = gaussian.calibration_frame([0.1, 0.5, 2.0], delta=1e-5)
    loss, areas = gaussian.loss_distribution_frame(sigma=1.0, epsilon=1.0)
    totals = composition.composition_frame(composed_epsilon(0.1, [1, 10, 100, 1000], delta=1e-6))
    audits = pd.DataFrame({"variant": ["AboveThreshold", "no halting"] * 2, "pair": "p", "n_samples": [500, 500, 4000, 4000],
                           "claimed_epsilon": 1.0, "epsilon_lower": [0.1, 0.8, 0.3, 2.5], "epsilon_hat": [0.2, 1.0, 0.4, 2.9],
                           "violates": [False, False, False, True]})
    return {
        "gaussian.calibration_chart": lambda: gaussian.calibration_chart(calibrations, delta=1e-5, epsilon=0.5),
        "gaussian.loss_distribution_chart": lambda: gaussian.loss_distribution_chart(loss, areas),
        "composition.composition_chart": lambda: composition.composition_chart(totals, epsilon=0.1, delta=1e-6, mark_k=100),
        "svt.first_above_chart": lambda: svt.first_above_chart(np.array([0.2, 0.5, 0.3]), queries=np.array([1.0, 5.0]),
                                                               threshold=4.0, epsilon=1.0, sampled=np.array([0.2, 0.5, 0.3])),
        "svt.audit_verdicts_chart": lambda: svt.audit_verdicts_chart(audits),
        "svt.audit_draws_chart": lambda: svt.audit_draws_chart(audits),
    }


def _charts() -> dict:
    spec = importlib.util.spec_from_file_location("perf_charts", ROOT / "tests" / "test_perf_equivalence.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {**module._all_charts(), **_more_charts()}


CHARTS = _charts()


def _chart_functions() -> set[str]:
    """"module.function" of every public function of the plot modules that returns an altair chart."""
    found = set()
    for module in MODULES:
        for name in module.__all__:
            fn = getattr(module, name)
            if inspect.isfunction(fn) and fn.__module__ == module.__name__:
                returns = str(inspect.signature(fn).return_annotation)
                if "alt." in returns or "Chart" in returns:
                    found.add(f"{module.__name__.rsplit('.', 1)[1]}.{name}")
    return found


def test_every_chart_function_is_covered():
    built = {key.split(" ")[0] for key in CHARTS}
    missing = _chart_functions() - built
    assert not missing, f"chart functions without a case here (add one to _more_charts): {sorted(missing)}"


@pytest.mark.parametrize("name", sorted(CHARTS))
def test_every_chart_has_a_description(name):
    spec = CHARTS[name]().to_dict()
    text = spec.get("description", "")
    assert len(text) >= 60, f"{name}: no text description of what the chart shows ({text!r})"
    assert "Take-away" in text or "take-away" in text.lower(), f"{name}: the description gives no take-away: {text!r}"
    assert "nan" not in re.findall(r"\b\w+\b", text), f"{name}: {text!r}"


def test_tree_figure_carries_alt_text_in_its_display_metadata():
    from IPython.core.formatters import DisplayFormatter

    spec = importlib.util.spec_from_file_location("plots_diffmulti", ROOT / "tests" / "test_plots_diffmulti.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fig = diffmulti.tree_figure(module._tree(), max_depth=2)
    _, metadata = DisplayFormatter().format(fig)
    alt_text = metadata["image/png"]["alt"]
    assert "partition tree" in alt_text and "Take-away" in alt_text
    import matplotlib.pyplot as plt
    plt.close(fig)


def test_renderer_describes_an_undescribed_chart_by_its_titles_and_drops_the_actions_menu():
    from dpexplore.plots._render import _renderer

    bare = alt.hconcat(alt.Chart(pd.DataFrame({"a": [1]})).mark_point().encode(x=alt.X("a:Q")).properties(title="left"),
                       alt.Chart(pd.DataFrame({"a": [1]})).mark_bar().encode(x=alt.X("a:Q")).properties(title="right"))
    bundle, metadata = _renderer(bare.to_dict())
    spec = bundle["application/vnd.vegalite.v5+json"]
    assert spec["description"] == "left right"
    assert metadata["application/vnd.vegalite.v5+json"]["embed_options"]["actions"] is False
    described = describe(bare, "Two panels.", "Take-away: none.")
    assert _renderer(described.to_dict())[0]["application/vnd.vegalite.v5+json"]["description"] == \
        "Two panels. Take-away: none."


# --------------------------------------------------------------------------- colour and a second cue
# Machado, Oliveira & Fernandes (2009): simulation of full protanopia, deuteranopia, tritanopia
# in linear RGB
_CVD = {"protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
        "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
        "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]]}


def _lab(hex_color: str, vision: str | None = None) -> np.ndarray:
    c = np.array([int(hex_color[i:i + 2], 16) for i in (1, 3, 5)]) / 255
    rgb = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    if vision:
        rgb = np.clip(np.array(_CVD[vision]) @ rgb, 0, 1)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ rgb
    n = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(n > (6 / 29) ** 3, np.cbrt(n), n / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def _min_difference(colors: list[str]) -> float:
    """Smallest CIE76 colour difference between two of ``colors`` for any common deficiency."""
    return min(np.linalg.norm(_lab(a, v) - _lab(b, v)) for v in _CVD
               for i, a in enumerate(colors) for b in colors[i + 1:])


def test_palettes_stay_apart_for_colour_blind_readers():
    assert _min_difference(OKABE_ITO[:7]) > 15
    assert _min_difference([REFUTED, CONSISTENT]) > 60
    # power: the red/green verdict of before, and category10, collapse for some reader
    assert _min_difference(["#d62728", "#2ca02c"]) < 10
    assert _min_difference(["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2"]) < 10


def _layers(spec: dict):
    """Every unit spec in a (layered, concatenated, faceted) Vega-Lite spec."""
    if "mark" in spec:
        yield spec
    for key in ("layer", "hconcat", "vconcat", "concat"):
        for sub in spec.get(key, []):
            yield from _layers(sub)
    if isinstance(spec.get("spec"), dict):
        yield from _layers(spec["spec"])


def _mark(unit: dict) -> str:
    return unit["mark"]["type"] if isinstance(unit["mark"], dict) else unit["mark"]


def test_exponential_lines_differ_by_dash_and_are_labelled():
    names = [f"c{i}" for i in range(12)]
    utilities = np.arange(12, 0, -1) * 30.0
    curves = mechanisms.exponential_frame(names, utilities, np.logspace(-2, 1, 31))
    spec = mechanisms.exponential_chart(curves[curves["epsilon"] == curves["epsilon"].max()], curves).to_dict()
    lines = [u for u in _layers(spec) if _mark(u) == "line"]
    dash = lines[0]["encoding"]["strokeDash"]["scale"]
    combos = {(str(c), str(d)) for c, d in zip(lines[0]["encoding"]["color"]["scale"]["range"], dash["range"])}
    assert len(combos) == 12, "two candidates share both colour and dash"
    assert set(lines[0]["encoding"]["color"]["scale"]["range"]) <= set(OKABE_ITO)
    texts = [u for u in _layers(spec) if _mark(u) == "text" and u["encoding"].get("text", {}).get("field") == "candidate"]
    assert texts, "the curves carry no direct labels"


def test_audit_verdict_is_written_next_to_each_bar_in_safe_colours():
    table = pd.DataFrame({"selector": ["exponential", "PTT"], "epsilon_lower": [0.4, 3.0], "epsilon_hat": [0.5, 3.4],
                          "violates": [False, True], "claimed_epsilon": [1.0, 1.0]})
    spec = roc.audit_chart(table).to_dict()
    bar = next(u for u in _layers(spec) if _mark(u) == "bar")
    assert bar["encoding"]["color"]["scale"]["range"] == [REFUTED, CONSISTENT]
    words = next(u for u in _layers(spec) if _mark(u) == "text")
    rows = spec["datasets"][words["data"]["name"]] if "data" in words else next(iter(spec["datasets"].values()))
    assert {r["mark"] for r in rows} == {"✗ refuted", "✓ consistent"}
    assert "refutes the claim of PTT" in spec["description"]


@pytest.mark.parametrize("name", ["attacks.difference_chart", "attacks.reconstruction_chart", "attacks.membership_chart",
                                  "local_dp.error_chart", "local_dp.estimates_chart"])
def test_attack_and_local_dp_series_differ_by_dash_as_well_as_colour(name):
    spec = CHARTS[name]().to_dict()
    lines = [u for u in _layers(spec) if _mark(u) == "line" and "strokeDash" in u.get("encoding", {})]
    assert lines, f"{name}: no line told apart by its dash pattern"
    enc = lines[0]["encoding"]
    colours, dashes = enc["color"]["scale"]["range"], enc["strokeDash"]["scale"]["range"]
    assert set(colours) <= set(OKABE_ITO) and len({str(d) for d in dashes}) == len(dashes) == len(colours)
    assert any(_mark(u) == "text" for u in _layers(spec)), f"{name}: no direct label"


def test_attacked_records_differ_by_shape_and_safe_colours():
    spec = attacks.records_chart([0, 1, 1], [0, 0, 1]).to_dict()
    point = next(u for u in _layers(spec) if _mark(u) == "point")
    assert point["encoding"]["shape"]["scale"]["range"] == ["square", "cross"]
    assert point["encoding"]["color"]["scale"]["range"] == [CONSISTENT, REFUTED]
    assert "2 of 3 secret bits" in spec["description"]


def test_survival_lines_differ_by_shape_and_dash():
    table = pd.DataFrame({"z": list(range(5)) * 3, "probability": np.linspace(0, 1, 15),
                          "epsilon_h": [0.1] * 5 + [0.5] * 5 + [1.0] * 5, "tau": [3.0] * 5 + [2.0] * 5 + [1.0] * 5})
    spec = projected.survival_chart(table, floor=0.05).to_dict()
    line = next(u for u in _layers(spec) if _mark(u) == "line")
    assert len(set(map(str, line["encoding"]["shape"]["scale"]["range"]))) == 3
    assert len(set(map(str, line["encoding"]["strokeDash"]["scale"]["range"]))) == 3
    assert any(_mark(u) == "text" for u in _layers(spec)), "the floor is not labelled"


def test_showdown_methods_differ_by_dash_and_legends_sit_below():
    summary = pd.DataFrame({"dataset": ["Adult"] * 8, "method": list("ABCD") * 2,
                            "epsilon": [0.1] * 4 + [1.0] * 4, "median": np.linspace(0.6, 0.8, 8),
                            "q25": 0.5, "q75": 0.9, "metric": "accuracy"})
    peers = pd.DataFrame({"label": ["a peer with a long name (δ = 1e-06)"] * 2, "epsilon": [0.1, 1.0],
                          "metric": ["accuracy"] * 2, "value": [0.7, 0.75]})
    spec = showdown.error_chart(summary, metric="accuracy", peers=peers).to_dict()
    line = next(u for u in _layers(spec) if _mark(u) == "line" and "strokeDash" in u["encoding"]
                and u["encoding"]["strokeDash"].get("field") == "method")
    assert len({str(d) for d in line["encoding"]["strokeDash"]["scale"]["range"]}) == 4
    legends = [enc["legend"] for u in _layers(spec) for enc in u["encoding"].values()
               if isinstance(enc, dict) and isinstance(enc.get("legend"), dict)]
    assert legends and all(leg.get("orient") == "bottom" for leg in legends)


# --------------------------------------------------------------------------- labels that overlapped
def _svg_texts(chart) -> list[dict]:
    """Text elements of the chart rendered by Vega (vl-convert): text, x, y, font size, role."""
    vl_convert = pytest.importorskip("vl_convert")
    svg = vl_convert.vegalite_to_svg(chart.to_dict(), vl_version="5.20")
    out = []
    for group in re.finditer(r'<g class="mark-text role-([\w-]+)[^"]*"[^>]*>(.*?)</g>', svg, re.S):
        for m in re.finditer(r'<text(?: text-anchor="(\w+)")?[^>]*transform="translate\(([-\d.]+),\s*([-\d.]+)\)[^"]*"'
                             r'[^>]*font-size="([\d.]+)px"[^>]*>([^<]*)</text>', group.group(2)):
            out.append({"role": group.group(1), "anchor": m.group(1) or "start", "x": float(m.group(2)),
                        "y": float(m.group(3)), "size": float(m.group(4)), "text": m.group(5)})
    return out


def _overlaps(texts: list[dict]) -> list[tuple[str, str]]:
    """Pairs of horizontal labels whose boxes (≈ 0.55 em per character, placed by their text
    anchor, plus a gap of a quarter em) intersect."""
    boxes = []
    for t in texts:
        width = 0.55 * t["size"] * len(t["text"])
        left = t["x"] - {"start": 0.0, "middle": width / 2, "end": width}[t["anchor"]]
        boxes.append((t["text"], left, left + width, t["y"], t["size"]))
    hits = []
    for i, (a, a0, a1, ay, ah) in enumerate(boxes):
        for b, b0, b1, by, bh in boxes[i + 1:]:
            gap = 0.25 * min(ah, bh)
            if abs(ay - by) < 0.8 * min(ah, bh) and a0 < b1 + gap and b0 < a1 + gap:
                hits.append((a, b))
    return hits


def test_ledger_axis_labels_do_not_run_together():
    ledger = pd.DataFrame({"label": ["feature selection: k-subset EM (count of on-values)", "naive Bayes: on/off counts (Δ = 5)"],
                           "charged": [0.05, 0.05]})
    labels = [t for t in _svg_texts(thesis.ledger_chart(ledger)) if t["role"] == "axis-label"]
    x_labels = [t for t in labels if re.fullmatch(r"[\d.]+", t["text"])]
    assert len(x_labels) >= 3 and not _overlaps(x_labels), [t["text"] for t in x_labels]


def test_reference_labels_are_moved_apart():
    results = pd.DataFrame({"method": ["exp"] * 3, "epsilon": [0.01, 0.1, 1.0], "accuracy": [0.82, 0.84, 0.848]})
    refs = pd.DataFrame({"reference": ["exact top-k by TC (not private)", "all features", "majority class"],
                         "accuracy": [0.849, 0.847, 0.769]})
    texts = [t for t in _svg_texts(roc.selection_accuracy_chart(results, refs)) if t["text"] in set(refs["reference"])]
    assert len(texts) == 3 and not _overlaps(texts)


def test_histogram_rows_have_no_axis_title_over_their_labels():
    table = pd.DataFrame({"cell": [f"[{i}, {i + 2.66667})" for i in range(6)], "class": ["setosa"] * 6,
                          "true_count": [3, 0, 5, 0, 1, 9], "noisy_count": [2.5, np.nan, 4.0, 1.2, np.nan, 8.8],
                          "status": ["kept", "empty, dropped", "kept", "kept, empty in truth", "dropped", "kept"]})
    spec = projected.histogram_chart(table, tau=1.5).to_dict()
    assert all(u["encoding"]["y"].get("title", "x") is None for u in _layers(spec) if "y" in u["encoding"]
               and u["encoding"]["y"].get("field") == "key")
    assert "cell · class" in str(spec["title"])


def test_spread_keeps_order_and_gap():
    placed = spread([0.849, 0.847, 0.769, 0.8485], 0.005)
    assert placed[2] == 0.769                                  # far from the others: untouched
    order = np.argsort([0.849, 0.847, 0.769, 0.8485], kind="mergesort")
    assert np.all(np.diff(placed[order]) >= 0.005 - 1e-12)
    assert np.all(placed >= np.array([0.849, 0.847, 0.769, 0.8485]))   # never below its own line


def test_dash_cycle_starts_solid():
    assert DASHES[0] == [1, 0]


# --------------------------------------------------------------------------- the build's fallbacks
def _build_module():
    pytest.importorskip("vl_convert")
    spec = importlib.util.spec_from_file_location("notebooks_build_a11y", NOTEBOOKS / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _img_alts(markup: str) -> list[str]:
    """The alt texts of the <img> tags in ``markup`` ("" for an <img> without one)."""
    return [html.unescape(m.group(1) or "") for m in re.finditer(r'<img\b(?:[^>]*?\balt="([^"]*)")?[^>]*>', markup)]


def test_build_gives_charts_figures_and_widgets_alt_text_and_the_kernelspec():
    nbformat = pytest.importorskip("nbformat")
    build = _build_module()
    chart = mechanisms.budget_chart(pd.DataFrame({"item": ["count"], "charged": [0.3]}), 1.0)
    bundle = {"application/vnd.vegalite.v5+json": chart.to_dict(), "text/plain": "<altair chart>"}
    png = base64.b64encode(build.chart_png(bundle["application/vnd.vegalite.v5+json"])).decode()
    state = {"box": {"model_name": "VBoxModel", "state": {"children": ["IPY_MODEL_eps", "IPY_MODEL_out"]}},
             "eps": {"model_name": "FloatLogSliderModel", "state": {"description": "ε", "value": 1.0}},
             "out": {"model_name": "OutputModel", "state": {"outputs": [
                 {"output_type": "display_data", "data": bundle, "metadata": {}}]}}}
    view = {"application/vnd.jupyter.widget-view+json": {"version_major": 2, "version_minor": 0, "model_id": "box"},
            "text/plain": "VBox(children=(FloatLogSlider(value=1.0", "image/png": png}
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("chart", outputs=[nbformat.v4.new_output("display_data", data=dict(bundle))]),
                nbformat.v4.new_code_cell("figure", outputs=[nbformat.v4.new_output(
                    "display_data", data={"image/png": png, "text/plain": "<Figure>"},
                    metadata={"image/png": {"alt": "A tree of regions."}})]),
                nbformat.v4.new_code_cell("explorer", outputs=[nbformat.v4.new_output("display_data", data=view)])]
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": state}}
    build.add_static_fallbacks(nb)
    chart_out, figure_out = nb.cells[0].outputs[0], nb.cells[1].outputs[0]
    assert _img_alts(chart_out.data["text/markdown"]) == [chart.to_dict()["description"]]
    assert chart_out.metadata["image/png"]["alt"] == chart.to_dict()["description"]
    assert _img_alts(figure_out.data["text/markdown"]) == ["A tree of regions."]
    view_out, picture = nb.cells[2].outputs
    assert set(view_out.data) == {"application/vnd.jupyter.widget-view+json", "text/plain"}   # no picture of its own
    alts = _img_alts(picture.data["text/html"])
    assert len(alts) == 1 and "interactive explorer (ε)" in alts[0] and "Where did ε go?" in alts[0]
    assert ":has(.widget-container)" in picture.data["text/html"]      # hidden where the live widget is drawn
    before = json.dumps(nb, sort_keys=True)
    build.add_static_fallbacks(nb)
    assert json.dumps(nb, sort_keys=True) == before                     # idempotent: one picture, not two
    assert "(ipykernel)" in inspect.getsource(build._write)


def test_stored_pictures_have_alt_text_and_the_kernelspec_lab_writes():
    """Every picture a stored notebook shows carries alt text (run ``notebooks/build.py NN`` if not)."""
    for path in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")):
        nb = json.loads(path.read_text())
        assert nb["metadata"]["kernelspec"]["display_name"] == "Python 3 (ipykernel)", \
            f"{path.name}: stored kernelspec differs from ipykernel's (rebuild it)"
        for i, cell in enumerate(nb["cells"]):
            for out in cell.get("outputs", []):
                data = out.get("data", {})
                shown = "".join(data.get("text/markdown", "")) + "".join(data.get("text/html", ""))
                alts = _img_alts(shown)
                assert all(len(a) > 20 for a in alts), f"{path.name} cell {i}: an <img> without alt text: {alts}"
                if "image/png" in data and "application/vnd.jupyter.widget-view+json" not in data:
                    assert alts, f"{path.name} cell {i}: a PNG shown without alt text (rebuild the notebook)"
