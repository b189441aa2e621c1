"""ShowdownExplorer: step ε along the showdown's grid and see the methods ranked at that budget.

Everything is precomputed: the chart of every swept ε is built once, when the explorer is made,
so a slider step only swaps the displayed bundle (no refit, no chart building).
"""
from __future__ import annotations

import ipywidgets as widgets
import numpy as np
import pandas as pd
from IPython.display import display

from ..plots._render import vegalite_bundle, vegalite_metadata
from ..plots.showdown import HIGHER_IS_BETTER, ranking_chart

__all__ = ["ShowdownExplorer"]


class ShowdownExplorer:
    """A slider over the swept budgets (each step is one ε of the sweep, so every step changes the
    picture) above the ranking chart at that ε.

    ``summary`` is :func:`~dpexplore.evaluate.sweeps.summarise` output, with ``dataset`` if several
    tables were swept; ``peers`` (optional) the other libraries' results
    (:func:`~dpexplore.evaluate.showdown.load_peers`). ``.widget`` is the box to display,
    ``.epsilon`` the slider and ``.epsilon_`` the budget shown.
    """

    def __init__(self, summary: pd.DataFrame, *, epsilon: float | None = None, metric: str = "error",
                 peers: pd.DataFrame | None = None):
        finite = summary["epsilon"][np.isfinite(summary["epsilon"])]
        eps = np.asarray(sorted(set(finite)), dtype=float)
        if eps.size == 0:
            raise ValueError("summary has no private results (every ε is inf)")
        self.summary, self.metric, self.grid, self.peers = summary, metric, eps, peers
        start = eps[len(eps) // 2] if epsilon is None else self._snap(epsilon)
        self._bundles = {float(e): vegalite_bundle(ranking_chart(summary, e, metric=metric, peers=peers))
                         for e in eps}
        self.epsilon = widgets.SelectionSlider(
            options=[(f"{e:.3g}", float(e)) for e in eps], value=float(start), description="ε",
            continuous_update=True, layout=widgets.Layout(width="420px"))
        better = "higher" if metric in HIGHER_IS_BETTER else "lower"
        self.info = widgets.HTML(
            f"Each step of the slider is one budget of the sweep. Bars: median test {metric} "
            f"({better} is better), best first; black line: quartiles over the runs; dashed lines: "
            "majority class and non-private reference; grey bars: other libraries at the same ε.")
        self.output = widgets.Output()
        self.epsilon.observe(self.update, names="value")
        self.widget = widgets.VBox([self.epsilon, self.info, self.output])
        self.update()

    def _snap(self, value: float) -> float:
        """The swept ε nearest to ``value`` on the log scale."""
        return float(self.grid[np.argmin(np.abs(np.log(self.grid) - np.log(value)))])

    def update(self, change=None) -> None:
        """Show the precomputed chart of the selected ε."""
        self.epsilon_ = self._snap(self.epsilon.value)
        self.chart_bundle = self._bundles[self.epsilon_]
        self.output.outputs = ({"output_type": "display_data", "data": self.chart_bundle,
                                "metadata": vegalite_metadata()},)

    @property
    def chart(self):
        """The altair chart shown (rebuilt on demand; the widget displays the cached bundle)."""
        return ranking_chart(self.summary, self.epsilon_, metric=self.metric, peers=self.peers)

    def _ipython_display_(self) -> None:
        display(self.widget)
