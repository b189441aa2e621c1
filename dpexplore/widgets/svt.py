"""Explorer for notebook 14: where AboveThreshold's first ⊤ falls. Thin: sliders →
:func:`dpexplore.svt.above_threshold_probabilities` (exact) and :func:`dpexplore.svt.above_threshold`
(sampled runs) → the chart of :mod:`dpexplore.plots.svt`; ``update()`` is the redraw, ``.chart`` the
last chart drawn.
"""
from __future__ import annotations

from typing import Any, Sequence

import ipywidgets as widgets
import numpy as np

from ..svt import above_threshold, above_threshold_probabilities
from ..plots.svt import first_above_chart
from ._display import LAYOUT, STYLE, Explorer, log_slider

__all__ = ["SparseVectorExplorer"]


class SparseVectorExplorer(Explorer):
    """Slide ε and the threshold τ over a fixed list of count queries (Δ = 1; ``names`` label them): the
    exact probability that the first ⊤ is each query (or none), and the share of ``n_runs`` runs of
    :func:`~dpexplore.svt.above_threshold` that stopped there. The runs use a seeded generator
    (``random_state``): the same slider position gives the same picture. The queries are a teaching
    view: no budget is spent.
    """

    def __init__(self, queries: Sequence[float], *, threshold: float, epsilon: float = 1.0,
                 names: Sequence[str] | None = None, n_runs: int = 500, random_state: int = 0):
        self.queries = np.asarray(queries, dtype=float)
        self.names = names
        self.n_runs, self.random_state = int(n_runs), random_state
        self.epsilon = log_slider(epsilon, "ε", lo=-1, hi=1)
        top = float(self.queries.max())
        self.threshold = widgets.FloatSlider(value=threshold, min=0.0, max=top * 1.2, step=max(1.0, round(top / 60)),
                                             description="threshold τ", readout_format=".0f", continuous_update=False,
                                             style=STYLE, layout=LAYOUT)
        self._build([self.epsilon, self.threshold])

    def update(self, change: Any = None) -> None:
        """Redraw: exact probabilities and sampled shares at the current ε and τ."""
        eps, tau = self.epsilon.value, self.threshold.value
        self.exact = above_threshold_probabilities(self.queries, tau, epsilon=eps)
        rng = np.random.default_rng(self.random_state)
        n = self.queries.size
        first = [int(np.argmax(a)) if a[-1] else n
                 for a in (above_threshold(self.queries, tau, epsilon=eps, random_state=rng) for _ in range(self.n_runs))]
        self.sampled = np.bincount(first, minlength=n + 1) / self.n_runs
        above = int((self.queries >= tau).sum())
        self.summary.value = (
            f"noise: threshold Lap(2/ε) = Lap({2 / eps:.3g}), each query Lap(4/ε) = Lap({4 / eps:.3g}) · "
            f"{above} of {n} queries are at or above τ = {tau:.0f} · P(no ⊤) = {self.exact[-1]:.3f} · "
            f"{self.n_runs:,} runs drawn (black ticks)")
        self._draw(first_above_chart(self.exact, queries=self.queries, threshold=tau, epsilon=eps,
                                     sampled=self.sampled, names=self.names))
