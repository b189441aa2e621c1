"""The accuracy-or-shape chart (dpexplore.plots.fidelity): data in, Vega-Lite spec asserted."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dpexplore.plots.fidelity import fidelity_chart, fidelity_points

METHODS = ["PrivPfC", "DiffMulti", "DiffGen"]
EPSILONS = [0.1, 1.0]


def _runs() -> pd.DataFrame:
    rows = []
    for m_idx, method in enumerate(METHODS):
        for eps in EPSILONS:
            for seed in range(3):
                rows.append({"dataset": "adult", "method": method, "epsilon": eps, "seed": seed,
                             "tvd_1way": 0.1 * (m_idx + 1) / eps / 10 + 0.01 * seed,
                             "tvd_2way": 0.2 * (m_idx + 1) / eps / 10 + 0.01 * seed,
                             "accuracy": 0.80 - 0.02 * m_idx + 0.01 * seed, "majority": 0.75})
    return pd.DataFrame(rows)


def _peers() -> pd.DataFrame:
    rows = [{"label": "opendp MST", "epsilon": eps, "metric": metric, "value": value}
            for eps in (0.03, 0.1, 1.0)
            for metric, value in (("accuracy", 0.77), ("tvd_1way", 0.02), ("tvd_2way", 0.05))]
    rows.append({"label": "diffprivlib GaussianNB", "epsilon": 1.0, "metric": "accuracy", "value": 0.79})
    return pd.DataFrame(rows)


def _layers(spec: dict) -> list[dict]:
    """Every layer of every panel of a (v)concat spec."""
    out = []
    for row in spec.get("vconcat", [spec]):
        for panel in row.get("hconcat", [row]):
            out += panel["layer"]
    return out


def _rows(spec: dict, layer: dict) -> list[dict]:
    return spec["datasets"][layer["data"]["name"]]


def test_points_are_medians_with_the_run_range_and_complete_peers_only():
    points = fidelity_points(_runs(), _peers())
    ours = points[points["kind"] == "dpexplore"]
    assert len(ours) == len(METHODS) * len(EPSILONS)
    first = ours[(ours["method"] == "PrivPfC") & (ours["epsilon"] == 1.0)].iloc[0]
    assert first["accuracy"] == pytest.approx(0.81)           # median of 0.80, 0.81, 0.82
    assert (first["accuracy_lo"], first["accuracy_hi"]) == pytest.approx((0.80, 0.82))
    assert first["tvd_1way_hi"] - first["tvd_1way_lo"] == pytest.approx(0.02)
    peers = points[points["kind"] == "peer"]
    # MST at the chart's ε only (not 0.03); GaussianNB has no shape figures: left out
    assert peers["method"].tolist() == ["opendp MST", "opendp MST"]
    assert sorted(peers["epsilon"]) == EPSILONS


def test_chart_encodes_accuracy_against_tvd_one_point_per_method_and_epsilon():
    chart = fidelity_chart(_runs(), peers=_peers(), title="Adult")
    spec = chart.to_dict()
    assert len(spec["vconcat"]) == 2 and all(len(r["hconcat"]) == len(EPSILONS) for r in spec["vconcat"])
    points = [lay for lay in _layers(spec) if lay["mark"].get("type") == "point" and lay["mark"].get("filled")]
    assert len(points) == 2 * len(EPSILONS)                   # one point layer per panel
    for lay in points:
        enc = lay["encoding"]
        assert enc["y"]["field"] == "accuracy" and enc["x"]["field"] in ("tvd_1way", "tvd_2way")
        assert enc["color"]["field"] == "method" and enc["shape"]["field"] == "method"   # a cue beside colour
        data = _rows(spec, lay)
        assert len(data) == len(METHODS) and len({r["epsilon"] for r in data}) == 1
    assert {lay["encoding"]["x"]["field"] for lay in points} == {"tvd_1way", "tvd_2way"}
    hollow = [lay for lay in _layers(spec) if lay["mark"].get("type") == "point" and lay["mark"].get("filled") is False]
    assert len(hollow) == 2 * len(EPSILONS) and all(_rows(spec, h)[0]["method"] == "opendp MST" for h in hollow)
    rules = [lay for lay in _layers(spec) if lay["mark"].get("type") == "rule" and lay["mark"].get("strokeDash")]
    assert all(_rows(spec, r)[0]["accuracy"] == 0.75 for r in rules) and len(rules) == 2 * len(EPSILONS)


def test_description_states_what_and_the_take_away_from_the_data():
    text = fidelity_chart(_runs(), peers=_peers()).description
    assert "test accuracy against the mean 1-way TVD" in text and "Take-away" in text
    # PrivPfC is both the most accurate and the closest here; the take-away says so at each ε
    assert "at ε = 1, the best classifier is PrivPfC (accuracy 0.810), the closest table PrivPfC" in text
    assert "opendp MST: accuracy 0.770, TVD 0.020 / 0.050" in text
    runs = _runs()
    runs.loc[runs["method"] == "DiffGen", "accuracy"] = 0.9
    assert "at ε = 1, the best classifier is DiffGen (accuracy 0.900)" in fidelity_chart(runs).description


def test_one_measure_one_row_and_json_clean():
    chart = fidelity_chart(_runs(), ways=["tvd_2way"], majority=0.7)
    spec = chart.to_dict()
    assert "vconcat" not in spec and len(spec["hconcat"]) == len(EPSILONS)
    assert "2-way" in chart.description and "1-way TVD (each" not in chart.description
    json.dumps(spec, allow_nan=False)   # no NaN or inf reaches the browser


@pytest.mark.parametrize("bad, match", [
    (lambda r: r.drop(columns="tvd_2way"), "columns"),
    (lambda r: r.assign(dataset=np.where(r.index % 2, "adult", "messy")), "several tables"),
    (lambda r: r.iloc[:0], "no results"),
])
def test_bad_input_is_refused(bad, match):
    with pytest.raises(ValueError, match=match):
        fidelity_chart(bad(_runs()))
    with pytest.raises(ValueError, match="ways"):
        fidelity_chart(_runs(), ways=["tvd_3way"])
