"""Chart output for the explorers: one state update of an ``Output`` widget, no validation pass;
the plumbing every explorer shares (:class:`Explorer`, :func:`log_slider`); and the fast redraw of a
chart whose shape stays while its data change (:class:`DataSwap`).

Writing the ``outputs`` trait (rather than ``with output: display(...)``) replaces the content in
one message (no flicker), works without an IPython shell, and does not route output messages
through the executing cell (a headless runner such as nbclient could otherwise miss the cell's
idle message). The bundle is the package's offline Vega-Lite 5 bundle, built without schema
validation: validation roughly doubles a redraw, and the tests validate every chart.
"""
from __future__ import annotations

import json
from typing import Any, Callable, Iterable

import altair as alt
import ipywidgets as widgets
import pandas as pd
from IPython.display import display

from ..plots import vegalite_bundle
from ..plots._render import vegalite_metadata

__all__ = ["show_chart", "chart_outputs", "Explorer", "log_slider", "DataSwap", "STYLE", "LAYOUT"]

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


class DataSwap:
    """The fast redraw of one chart whose shape stays while its data change, into ``output``.

    The chart is built once by altair (``build()``); each of its data frames is then recognised
    by its columns, so a redraw only swaps data. :meth:`chart` swaps the frames of the altair
    chart (building altair objects costs far more than a redraw); :meth:`show` displays the
    first chart through altair, then puts the new records into a copy of that first spec's
    datasets, which skips altair's spec traversal: the same spec as :meth:`chart` gives. The
    sub-charts' own descriptions would go stale: the one ``description`` is set per redraw.
    """

    def __init__(self, output: Any):
        self.output = output
        self.template: tuple | None = None   # (altair chart, [(sub-chart, the columns of its data)])
        self.skeleton: tuple | None = None   # (first bundle, its Vega-Lite MIME type, {dataset: columns})

    def chart(self, build: Callable[[], Any], frames: Iterable[pd.DataFrame], description: str) -> Any:
        """The altair chart of ``build()`` (built on the first call only) holding ``frames``."""
        by_columns = {frozenset(f.columns): f for f in frames}
        if self.template is None:
            chart = build()
            leaves, stack = [], [chart]
            while stack:
                node = stack.pop()
                node.description = alt.Undefined
                data = getattr(node, "data", alt.Undefined)
                if isinstance(data, pd.DataFrame):
                    leaves.append((node, frozenset(data.columns)))
                for attr in ("vconcat", "hconcat", "layer"):
                    stack.extend(getattr(node, attr, None) or [])
            self.template = (chart, leaves)
        chart, leaves = self.template
        for node, columns in leaves:
            node.data = by_columns[columns]
        chart.description = description
        return chart

    def show(self, build: Callable[[], Any], frames: Iterable[pd.DataFrame], description: str) -> None:
        """Display the chart holding ``frames`` (see the class docstring)."""
        if self.skeleton is None:
            show_chart(self.output, self.chart(build, frames, description))
            bundle = self.output.outputs[0]["data"]
            mime = next(k for k in bundle if "vegalite" in k)
            names = {name: frozenset(rows[0]) if rows else None for name, rows in bundle[mime]["datasets"].items()}
            if None not in names.values():   # an empty dataset cannot be recognised: altair each time
                self.skeleton = (bundle, mime, names)
            return
        bundle, mime, names = self.skeleton
        by_columns = {frozenset(f.columns): f for f in frames}
        # pandas' JSON writer: numpy types and NaN (→ null) handled in C, as altair's own data step does
        spec = dict(bundle[mime], datasets={name: json.loads(by_columns[cols].to_json(orient="records",
                                                                                   double_precision=15))
                                            for name, cols in names.items()}, description=description)
        self.output.outputs = ({"output_type": "display_data", "data": {**bundle, mime: spec},
                                "metadata": vegalite_metadata()},)
