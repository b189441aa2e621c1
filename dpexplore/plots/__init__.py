"""dpexplore.plots: altair charts for the notebooks.

Importing this package (or any ``dpexplore.plots.*`` module) enables the package's offline
renderer (:mod:`dpexplore.plots._render`): every altair chart is displayed as a Vega-Lite 5
bundle that JupyterLab and Voilà draw without network access, trusted or not.
"""
from ._render import (StoredChart, enable as _enable_renderer, enable_jupyterlab_renderer, load_charts, save_charts,
                      vegalite_bundle)

__all__ = ["StoredChart", "enable_jupyterlab_renderer", "load_charts", "save_charts", "vegalite_bundle"]

_enable_renderer()
