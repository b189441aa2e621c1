"""Chart output for the explorers: one state update of an ``Output`` widget, no validation pass;
and the plumbing every explorer shares (:class:`Explorer`, :func:`log_slider`).

Writing the ``outputs`` trait (rather than ``with output: display(...)``) replaces the content in
one message (no flicker), works without an IPython shell, and does not route output messages
through the executing cell (a headless runner such as nbclient could otherwise miss the cell's
idle message). The bundle is the package's offline Vega-Lite 5 bundle, built without schema
validation: validation roughly doubles a redraw, and the tests validate every chart.
"""
from __future__ import annotations

from typing import Any

import ipywidgets as widgets
from IPython.display import display

from ..plots import vegalite_bundle
from ..plots._render import vegalite_metadata

__all__ = ["show_chart", "chart_outputs", "Explorer", "log_slider", "STYLE", "LAYOUT"]

STYLE = {"description_width": "120px"}
LAYOUT = widgets.Layout(width="440px")


def chart_outputs(*charts: Any) -> tuple:
    """The ``Output.outputs`` value showing ``charts`` one below the other (cacheable)."""
    return tuple({"output_type": "display_data", "data": vegalite_bundle(c), "metadata": vegalite_metadata()}
                 for c in charts)


def show_chart(output: Any, *charts: Any) -> None:
    """Replace the content of the ``ipywidgets.Output`` ``output`` by the altair ``charts``."""
    output.outputs = chart_outputs(*charts)


def log_slider(value: float, description: str, lo: float = -1.3, hi: float = 0.7,
               step: float = 0.05, readout_format: str = ".3g") -> widgets.FloatLogSlider:
    """A slider over 10^lo … 10^hi (ε by default: 0.05 to 5) that redraws on release; its readout in
    d3-format (``".1e"`` for a δ: d3's ``"g"`` writes 10⁻⁶ as 0.00000100)."""
    return widgets.FloatLogSlider(value=value, base=10, min=lo, max=hi, step=step,
                                  description=description, readout_format=readout_format,
                                  continuous_update=False, style=STYLE, layout=LAYOUT)


class Explorer:
    """Shared plumbing: ``update()`` recomputes and redraws ``self.chart`` into ``self.output``."""

    controls: list[widgets.Widget]

    def _build(self, controls: list[widgets.Widget]) -> None:
        self.controls = controls
        self.summary = widgets.HTML()
        self.output = widgets.Output()
        for control in controls:
            control.observe(self.update, names="value")
        self.widget = widgets.VBox(controls + [self.summary, self.output])
        self.chart = None
        self.update()

    def _draw(self, chart: Any) -> None:
        self.chart = chart
        show_chart(self.output, chart)   # one state update of the Output widget

    def _ipython_display_(self) -> None:
        display(self.widget)
