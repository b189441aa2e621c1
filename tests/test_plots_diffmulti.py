"""Pictures of notebook 03: a legible partition tree, uncluttered accuracy axes."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from dpexplore.plots.diffmulti import _compact, accuracy_chart, tree_figure  # noqa: E402


def _tree(fan=(2, 3, 2)):
    rows = [dict(node=0, parent=-1, depth=0, h=1000, noisy_size=np.nan, region="all records", children=True)]
    parents = [0]
    for depth, k in enumerate(fan, start=1):
        nxt = []
        for p in parents:
            for i in range(k):
                n = len(rows)
                rows.append(dict(node=n, parent=p, depth=depth, h=10 * i, noisy_size=1500.0 - 700 * i,
                                 region="education: Without-Post-Secondary" if i % 2 else "fnlwgt: [61436, 1500000]",
                                 children=depth < len(fan)))
                nxt.append(n)
        parents = nxt
    return pd.DataFrame(rows)


def test_tree_figure_fits_a_notebook_column_with_legible_text():
    fig = tree_figure(_tree(), max_depth=3)
    width_px = fig.get_size_inches()[0] * fig.dpi
    assert width_px <= 900                      # shown unscaled next to an open file browser
    texts = [t for t in fig.axes[0].texts if "h'=" in t.get_text()]
    assert len(texts) == 1 + 2 + 6 + 12 and min(t.get_fontsize() for t in texts) >= 9
    assert all(len(line) <= 24 for t in texts for line in t.get_text().split("\n"))
    assert any("61.4k" in t.get_text() and "1500000" not in t.get_text() for t in texts)
    plt.close(fig)


def test_compact_shortens_only_long_numbers():
    assert _compact("fnlwgt: [61436, 1500000]") == "fnlwgt: [61.4k, 1.5M]"
    assert _compact("age: [14, 65]") == "age: [14, 65]"
    assert _compact("capital-gain: [-1, 84123]") == "capital-gain: [-1, 84.1k]"


def test_accuracy_chart_ticks_are_the_swept_values():
    res = pd.DataFrame({"method": "DiffMulti", "h": [10, 30, 100, 300, 1000, 3000, 10000, 30000, 100000],
                        "mean": 0.8, "std": 0.01})
    spec = accuracy_chart(res, x="h").to_dict()
    axis = spec["layer"][0]["encoding"]["x"]["axis"]
    assert axis["values"] == [10, 100, 1000, 10000, 100000]      # every other one: no overlap
    eps = accuracy_chart(res.rename(columns={"h": "epsilon"}).head(4), x="epsilon").to_dict()
    assert eps["layer"][0]["encoding"]["x"]["title"] == "ε (total)"
