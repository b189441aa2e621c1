"""ShowdownExplorer: slide ε along the showdown's grid and see the methods ranked at that budget.

Everything is precomputed by the sweep; a slider move only filters the summary and redraws.
"""
from __future__ import annotations

import ipywidgets as widgets
import numpy as np
import pandas as pd
from IPython.display import display

from ..plots.mechanisms import vegalite_bundle
from ..plots.showdown import ranking_chart

__all__ = ["ShowdownExplorer"]


class ShowdownExplorer:
    """An ε slider (log scale, snapping to the swept budgets) over a ranking chart.

    ``summary`` is :func:`~dpexplore.evaluate.sweeps.summarise` output, with ``dataset`` if several
    tables were swept; ``.widget`` is the box to display and ``.epsilon_`` the budget shown.
    """

    def __init__(self, summary: pd.DataFrame, *, epsilon: float | None = None, metric: str = "error"):
        eps = np.asarray(sorted(set(summary["epsilon"][np.isfinite(summary["epsilon"])])), dtype=float)
        if eps.size == 0:
            raise ValueError("summary has no private results (every ε is inf)")
        self.summary, self.metric, self.grid = summary, metric, eps
        start = eps[len(eps) // 2] if epsilon is None else self._snap(epsilon)
        lo, hi = np.log10(eps[0]), np.log10(eps[-1])
        self.epsilon = widgets.FloatLogSlider(value=start, base=10, min=lo, max=hi if hi > lo else lo + 1,
                                              step=0.01, description="ε", continuous_update=False,
                                              readout_format=".3g")
        self.info = widgets.HTML()
        self.output = widgets.Output()
        self.epsilon.observe(self.update, names="value")
        self.widget = widgets.VBox([self.epsilon, self.info, self.output])
        self.update()

    def _snap(self, value: float) -> float:
        """The swept ε nearest to ``value`` on the log scale."""
        return float(self.grid[np.argmin(np.abs(np.log(self.grid) - np.log(value)))])

    def update(self, change=None) -> None:
        self.epsilon_ = self._snap(self.epsilon.value)
        self.chart = ranking_chart(self.summary, self.epsilon_, metric=self.metric)
        self.info.value = (f"showing the swept budget nearest to the slider: <b>ε = {self.epsilon_:g}</b> "
                           "(bars: median, black line: quartiles, dashed: majority class and non-private)")
        with self.output:
            self.output.clear_output(wait=True)
            display(vegalite_bundle(self.chart), raw=True)

    def _ipython_display_(self) -> None:
        display(self.widget)
