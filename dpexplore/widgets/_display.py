"""Chart output for the explorers: one state update of an ``Output`` widget, no validation pass.

Writing the ``outputs`` trait (rather than ``with output: display(...)``) replaces the content in
one message (no flicker), works without an IPython shell, and does not route output messages
through the executing cell (a headless runner such as nbclient could otherwise miss the cell's
idle message). The bundle is the package's offline Vega-Lite 5 bundle, built without schema
validation: validation roughly doubles a redraw, and the tests validate every chart.
"""
from __future__ import annotations

from typing import Any

from ..plots import vegalite_bundle
from ..plots._render import vegalite_metadata

__all__ = ["show_chart", "chart_outputs"]


def chart_outputs(*charts: Any) -> tuple:
    """The ``Output.outputs`` value showing ``charts`` one below the other (cacheable)."""
    return tuple({"output_type": "display_data", "data": vegalite_bundle(c), "metadata": vegalite_metadata()}
                 for c in charts)


def show_chart(output: Any, *charts: Any) -> None:
    """Replace the content of the ``ipywidgets.Output`` ``output`` by the altair ``charts``."""
    output.outputs = chart_outputs(*charts)
