"""Explorer for notebook 11: randomized response (local DP) against the Laplace count (central DP).

A thin ipywidgets wrapper over :mod:`dpexplore.mechanisms` and :mod:`dpexplore.plots.local_dp`.
The population's answers are shuffled once when the explorer is built; a move takes the first n,
releases them ``repeats`` times with :func:`~dpexplore.mechanisms.randomized_response` (every
person's own coin) and with :func:`~dpexplore.mechanisms.laplace` on their count (one noise draw
by a trusted curator), and redraws the error curves and the histograms of the estimates. A fixed
default seed is deliberate: a teaching view of the public Adult data.
"""
from __future__ import annotations

from typing import Any

import altair as alt
import ipywidgets as widgets
import numpy as np

from ..mechanisms import laplace, randomized_response, randomized_response_estimate
from ..plots._accessible import describe
from ..plots.local_dp import CENTRAL, LOCAL, error_chart, error_frame, estimates_chart
from ._display import LAYOUT, STYLE, Explorer, log_slider

__all__ = ["LocalCentralExplorer"]


class LocalCentralExplorer(Explorer):
    """Slide ε and the number of people n; compare the error of randomized response's estimate of
    a proportion with the central Laplace count's, at the same ε.

    ``answers``: every person's true 0/1 answer (the sensitive question); n runs from 100 to all
    of them. Each redraw makes ``repeats`` releases of both mechanisms.
    """

    def __init__(self, answers: Any, *, epsilon: float = 1.0, n: int = 1000, repeats: int = 100,
                 random_state: int = 0):
        self.answers = np.random.default_rng(random_state).permutation(np.asarray(answers, dtype=np.int64))
        self.repeats = int(repeats)
        self.random_state = random_state
        top = float(np.log10(self.answers.size))
        self._grid = np.unique(np.round(np.logspace(2, top, 40)).astype(np.int64))   # the curves' n
        self.epsilon = log_slider(epsilon, "ε")
        self.n = widgets.FloatLogSlider(value=n, base=10, min=2, max=top, step=0.05, description="people n",
                                        readout_format=",.0f", continuous_update=False, style=STYLE,
                                        layout=LAYOUT)
        self._build([self.epsilon, self.n])

    def releases(self) -> dict[str, np.ndarray]:
        """``repeats`` estimates of the proportion of 1s among the first n people, per model."""
        eps, n = float(self.epsilon.value), int(round(self.n.value))
        rng = np.random.default_rng(self.random_state)
        answers = self.answers[:n]
        reports = randomized_response(np.broadcast_to(answers, (self.repeats, n)), epsilon=eps, random_state=rng)
        local = np.array([randomized_response_estimate(r, epsilon=eps) for r in reports])
        central = laplace(np.full(self.repeats, float(answers.sum())), epsilon=eps, random_state=rng) / n
        return {LOCAL: local, CENTRAL: central}

    def update(self, change: Any = None) -> None:
        """Redraw: both models' releases at the current ε and n, against their exact errors."""
        eps, n = float(self.epsilon.value), int(round(self.n.value))
        estimates = self.releases()
        truth = float(self.answers[:n].mean())
        observed = {m: float(np.std(v)) for m, v in estimates.items()}
        exact = error_frame([n], epsilon=eps).set_index("model")["sd"]
        self.ratio = float(exact[LOCAL] / exact[CENTRAL])
        top = error_chart(error_frame(self._grid, epsilon=eps), n=n, epsilon=eps, observed=observed)
        bottom = estimates_chart(estimates, truth=truth,
                                 title=f"{self.repeats} releases from n = {n:,} people at ε = {eps:.3g}")
        self.summary.value = (
            f"<b>n = {n:,}, ε = {eps:.3g}</b> · true proportion (not private) {truth:.3f} · error (sd): "
            f"randomized response <b>{exact[LOCAL]:.3g}</b> (simulated {observed[LOCAL]:.3g}), Laplace count "
            f"<b>{exact[CENTRAL]:.3g}</b> (simulated {observed[CENTRAL]:.3g}) · local DP costs <b>×{self.ratio:.1f}</b>"
            f" here (√n = {np.sqrt(n):.3g})")
        self._draw(describe(alt.vconcat(top, bottom), f"{top.description} Below: {bottom.description}",
                            "Take-away: at the same ε the local model's error is about √n times the central one's."))
