"""Explorer for notebook 13: the total ε of k mechanisms under basic composition, advanced
composition and zCDP. Thin: sliders → :func:`dpexplore.composition.composed_epsilon` → the chart of
:mod:`dpexplore.plots.composition`; ``update()`` is the redraw, ``.chart`` the last chart drawn.
"""
from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import numpy as np

from ..composition import composed_epsilon
from ..plots.composition import RULES, composition_chart, composition_frame
from ._display import LAYOUT, STYLE, Explorer, log_slider

__all__ = ["CompositionExplorer"]

_KS = np.unique(np.round(np.logspace(0, 4, 49)).astype(int))     # 1 to 10,000 steps


class CompositionExplorer(Explorer):
    """Slide the ε of each step, the δ of the two curved bounds and a number of steps k to read off:
    the three totals against k (1 to 10,000), with k marked and the smallest total named."""

    def __init__(self, *, epsilon: float = 0.1, delta: float = 1e-6, k: int = 100):
        self.epsilon = log_slider(epsilon, "ε per step", lo=-3, hi=0)
        self.delta = log_slider(delta, "δ", lo=-10, hi=-2, step=0.5, readout_format=".1e")
        self.k = widgets.IntSlider(value=k, min=1, max=int(_KS[-1]), description="k to read off",
                                   continuous_update=False, style=STYLE, layout=LAYOUT)
        self._build([self.epsilon, self.delta, self.k])

    def update(self, change: Any = None) -> None:
        """Redraw the three totals at the current ε and δ, and read them off at k."""
        eps, delta, k = self.epsilon.value, self.delta.value, int(self.k.value)
        self.table = composed_epsilon(eps, np.union1d(_KS, [k]), delta=delta)
        row = self.table.set_index("k").loc[k]
        best = row.idxmin()
        self.summary.value = (
            f"after <b>k = {k:,}</b> steps of ε = {eps:.3g}: basic {row['basic']:.3g} (δ = 0) · advanced "
            f"{row['advanced']:.3g} · zCDP {row['zcdp']:.3g} (both with δ = {delta:.2g}) · the smallest: "
            f"<b>{RULES[best][0]}</b>")
        self._draw(composition_chart(composition_frame(self.table), epsilon=eps, delta=delta, mark_k=k))
