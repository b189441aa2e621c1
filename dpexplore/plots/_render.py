"""The one altair renderer of dpexplore: charts as Vega-Lite 5 MIME bundles, drawn offline.

``import dpexplore.plots`` (and so any ``dpexplore.plots.*`` import) calls :func:`enable`, which
registers and enables the ``"dpexplore"`` altair renderer. Notebooks never need to choose one.

altair ≥ 6 emits either HTML that loads Vega from a CDN and runs only in *trusted* notebooks,
or a Vega-Lite 6 MIME type that JupyterLab 4 does not know. The specs of our charts are valid
Vega-Lite 5, so we label them as such: JupyterLab (and Voilà) draw them with their built-in Vega
extension, without network access, trusted or not. ``notebooks/build.py`` adds a static PNG
next to every stored chart for viewers without that extension (GitHub, nbviewer).
"""
from __future__ import annotations

import os

import altair as alt

__all__ = ["VEGALITE_V5_MIME", "vegalite_bundle", "enable", "enable_jupyterlab_renderer"]

VEGALITE_V5_MIME = "application/vnd.vegalite.v5+json"
_VEGALITE_V5_SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"
RENDERER_NAME = "dpexplore"

# A 1×1 transparent PNG. JupyterLab's Vega renderer, once a chart is drawn, stores a PNG copy
# of it with ``model.setData``; the output models of Voilà 0.5 have no ``setData``, so each chart
# there shows "Javascript Error: e.setData is not a function" under it. The renderer skips that
# step when the bundle already holds an "image/png", so inside Voilà we add this placeholder
# (Vega-Lite still wins the MIME ranking: the placeholder is never what is shown).
_PLACEHOLDER_PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA"
                    "60e6kgAAAABJRU5ErkJggg==")


def _in_voila() -> bool:
    """True in a kernel started by Voilà (it sets ``VOILA_BASE_URL`` in the kernel's environment)."""
    return "VOILA_BASE_URL" in os.environ


def _renderer(spec: dict, **metadata) -> dict:
    """altair renderer: the spec under the Vega-Lite 5 MIME type (see :func:`vegalite_bundle`)."""
    spec = dict(spec)
    spec["$schema"] = _VEGALITE_V5_SCHEMA
    bundle = {VEGALITE_V5_MIME: spec, "text/plain": "<altair chart>"}
    if _in_voila():
        bundle["image/png"] = _PLACEHOLDER_PNG
    return bundle


def vegalite_bundle(chart: alt.TopLevelMixin, *, validate: bool = False) -> dict:
    """A display bundle JupyterLab draws with its built-in, offline Vega-Lite 5 renderer.

    For an ``Output`` widget's ``outputs`` or ``display(bundle, raw=True)``. Schema validation
    is off by default (it doubles the time of a widget redraw; the tests validate every chart).
    """
    return _renderer(chart.to_dict(validate=validate))


def enable() -> None:
    """Register (once) and enable the ``"dpexplore"`` altair renderer. Safe to call repeatedly."""
    if RENDERER_NAME not in alt.renderers.names():
        alt.renderers.register(RENDERER_NAME, _renderer)
    if alt.renderers.active != RENDERER_NAME:
        alt.renderers.enable(RENDERER_NAME)


def enable_jupyterlab_renderer() -> None:
    """Old name of :func:`enable` (kept importable; ``import dpexplore.plots`` already enables it)."""
    enable()
