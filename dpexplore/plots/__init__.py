"""dpexplore.plots: altair charts for the notebooks.

Importing this package (or any ``dpexplore.plots.*`` module) enables the package's offline
renderer (:mod:`dpexplore.plots._render`): every altair chart is displayed as a Vega-Lite 5
bundle that JupyterLab and Voilà draw without network access, trusted or not.
"""
from ._render import enable, load_charts, save_charts, vegalite_bundle

__all__ = ["enable", "load_charts", "save_charts", "vegalite_bundle"]

enable()
