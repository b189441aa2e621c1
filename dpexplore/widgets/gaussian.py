"""Explorer for notebook 12: the Gaussian mechanism's two calibrations and its privacy-loss
distribution. Thin: sliders → :mod:`dpexplore.mechanisms` (closed forms, no sampling) → the charts
of :mod:`dpexplore.plots.gaussian`; ``update()`` is the redraw, ``.chart`` the last chart drawn.
"""
from __future__ import annotations

from typing import Any

import altair as alt
import ipywidgets as widgets
import numpy as np

from ..mechanisms import gaussian_scale
from ..plots._accessible import describe
from ..plots.gaussian import calibration_chart, calibration_frame, loss_distribution_chart, loss_distribution_frame
from ._display import LAYOUT, STYLE, Explorer, log_slider

__all__ = ["GaussianExplorer"]

_EPSILONS = np.logspace(-1.3, 0.7, 25)     # the σ curves' grid (0.05 to 5), plus the slider's ε


class GaussianExplorer(Explorer):
    """Slide ε, δ and the L2 sensitivity Δ₂: σ of both calibrations against ε (the current ε marked),
    and the privacy-loss distribution of the analytic σ with P[L > ε] and δ(ε) shaded.

    Each move recomputes the σ curves (one bisection per point of the grid, Balle & Wang 2018 Thm 8)
    and the loss density; nothing is sampled, so the picture is exact.
    """

    def __init__(self, *, epsilon: float = 1.0, delta: float = 1e-5, sensitivity: float = 1.0):
        self.epsilon = log_slider(epsilon, "ε")
        self.delta = log_slider(delta, "δ", lo=-10, hi=-1, step=0.5, readout_format=".1e")
        self.sensitivity = widgets.FloatSlider(value=sensitivity, min=0.5, max=5.0, step=0.5,
                                               description="L2 sensitivity Δ₂", readout_format=".1f",
                                               continuous_update=False, style=STYLE, layout=LAYOUT)
        self._build([self.epsilon, self.delta, self.sensitivity])

    def update(self, change: Any = None) -> None:
        """Redraw both charts at the current ε, δ and Δ₂."""
        eps, delta, sens = self.epsilon.value, self.delta.value, self.sensitivity.value
        frame = calibration_frame(np.union1d(_EPSILONS, [eps]), delta=delta, sensitivity=sens)
        sigma = gaussian_scale(epsilon=eps, delta=delta, sensitivity=sens)
        loss, self.areas = loss_distribution_frame(sigma=sigma, epsilon=eps, sensitivity=sens, n_points=161)
        classical = (f"classical σ = {gaussian_scale(epsilon=eps, delta=delta, sensitivity=sens, calibration='classical'):.4g}"
                     if eps < 1 else "classical σ: not valid for ε ≥ 1")
        self.summary.value = (
            f"<b>analytic σ = {sigma:.4g}</b> · {classical} · the loss exceeds ε with probability "
            f"P[L &gt; ε] = {self.areas['tail']:.3g}, while δ(ε) = {self.areas['delta']:.3g} "
            f"(≤ δ = {delta:.3g}: the analytic σ is the smallest that keeps it there)")
        top = calibration_chart(frame, delta=delta, sensitivity=sens, epsilon=eps, height=200)
        bottom = loss_distribution_chart(loss, self.areas, height=180)
        self._draw(describe(alt.vconcat(top, bottom), f"Top: {top.description} Bottom: {bottom.description}"))
