"""The one altair renderer of dpexplore: charts as Vega-Lite 5 MIME bundles, drawn offline.

``import dpexplore.plots`` (and so any ``dpexplore.plots.*`` import) calls :func:`enable`, which
registers and enables the ``"dpexplore"`` altair renderer. Notebooks never need to choose one.

altair ≥ 6 emits either HTML that loads Vega from a CDN and runs only in *trusted* notebooks,
or a Vega-Lite 6 MIME type that JupyterLab 4 does not know. The specs of our charts are valid
Vega-Lite 5, so we label them as such: JupyterLab (and Voilà) draw them with their built-in Vega
extension, without network access, trusted or not. ``notebooks/build.py`` adds a static PNG
next to every stored chart for viewers without that extension (GitHub, nbviewer).

Accessibility: every chart carries a ``description`` (:func:`dpexplore.plots._accessible.describe`;
a chart without one gets its titles here), which Vega renders as the chart's ``aria-label``; and
the charts are drawn without vega-embed's "…" actions menu, whose button has no accessible name.
"""
from __future__ import annotations

import importlib.util
import json
import os
import sys
import types
from pathlib import Path
from typing import Mapping


def _deferred_iri_check(*args, **kwargs):
    """jsonschema's "iri" format check, loading ``rfc3987_syntax`` on its first use."""
    from rfc3987_syntax import is_valid_syntax   # the real module (the placeholder is gone by now)

    return is_valid_syntax(*args, **kwargs)


def _import_altair() -> types.ModuleType:
    """``import altair``, without building jsonschema's IRI grammar at import.

    altair imports jsonschema, whose format checkers import ``rfc3987_syntax`` when installed
    (Jupyter's servers install it); that module compiles a Lark grammar at import, about 1 CPU-s,
    most of altair's import and of a Voilà page's start. Vega-Lite's schema has no "iri" format,
    so no chart needs it: while jsonschema is first imported, a placeholder module stands in whose
    ``is_valid_syntax`` imports the real one on first call. jsonschema's checks are unchanged, only
    later; nothing is done when jsonschema or altair is already loaded.
    """
    if ("jsonschema" in sys.modules or "rfc3987_syntax" in sys.modules
            or importlib.util.find_spec("rfc3987_syntax") is None):
        import altair
        return altair
    placeholder = types.ModuleType("rfc3987_syntax", _deferred_iri_check.__doc__)
    placeholder.is_valid_syntax = _deferred_iri_check
    sys.modules["rfc3987_syntax"] = placeholder
    try:
        import jsonschema  # noqa: F401  (binds the placeholder's is_valid_syntax)
    finally:
        if sys.modules.get("rfc3987_syntax") is placeholder:
            del sys.modules["rfc3987_syntax"]
    import altair
    return altair


alt = _import_altair()

__all__ = ["VEGALITE_V5_MIME", "vegalite_bundle", "vegalite_metadata", "described_spec", "enable", "StoredChart",
           "save_charts", "load_charts"]

VEGALITE_V5_MIME = "application/vnd.vegalite.v5+json"
_VEGALITE_V5_SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"
RENDERER_NAME = "dpexplore"

# A 1×1 transparent PNG. JupyterLab's Vega renderer, once a chart is drawn, stores a PNG copy
# of it with ``model.setData``, and the output area then draws the changed output again: a chart
# is drawn twice and rasterised once. The renderer skips that step when the bundle already holds
# an "image/png", so we add this placeholder (Vega-Lite still wins the MIME ranking: the
# placeholder is never what is shown) where the copy is of no use:
# - to every explorer redraw (:func:`vegalite_bundle`): an ``Output`` widget's copy is never
#   saved (the build stores its own pictures), and the second drawing was most of a redraw's
#   time in the browser;
# - to every chart inside Voilà, whose output models have no ``setData`` (each chart would show
#   "Javascript Error: e.setData is not a function" under it).
_PLACEHOLDER_PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA"
                    "60e6kgAAAABJRU5ErkJggg==")


def _in_voila() -> bool:
    """True in a kernel started by Voilà (it sets ``VOILA_BASE_URL`` in the kernel's environment)."""
    return "VOILA_BASE_URL" in os.environ


def _titles(spec: dict) -> list[str]:
    """The titles of a spec and of its sub-views (concat, layer, facet), outermost first."""
    found = []
    title = spec.get("title")
    if isinstance(title, dict):
        title = title.get("text")
    if isinstance(title, list):
        title = " ".join(map(str, title))
    if title:
        found.append(str(title))
    for key in ("hconcat", "vconcat", "concat", "layer"):
        for sub in spec.get(key, []):
            found += _titles(sub)
    if isinstance(spec.get("spec"), dict):
        found += _titles(spec["spec"])
    return found


def described_spec(spec: dict) -> dict:
    """``spec`` with a ``description``: its own, else its sub-views', else its titles."""
    if spec.get("description"):
        return spec
    parts = []
    for key in ("hconcat", "vconcat", "concat", "layer"):
        parts += [sub["description"] for sub in spec.get(key, []) if sub.get("description")]
    if isinstance(spec.get("spec"), dict) and spec["spec"].get("description"):
        parts.append(spec["spec"]["description"])
    parts = parts or list(dict.fromkeys(_titles(spec))) or [_from_encoding(spec)]
    return {**spec, "description": " ".join(parts)}


def _units(spec: dict):
    """The single-view specs (those with a mark) inside ``spec``, depth first."""
    if "mark" in spec:
        yield spec
    for key in ("layer", "hconcat", "vconcat", "concat"):
        for sub in spec.get(key, []):
            yield from _units(sub)
    if isinstance(spec.get("spec"), dict):
        yield from _units(spec["spec"])


def _from_encoding(spec: dict) -> str:
    """A sentence for a chart with neither description nor title, read from its marks and
    channels, e.g. "A bar chart of share of first picks by attribute, one row per ε_p."."""
    units = list(_units(spec))
    if not units:
        return "A chart."
    mark = units[0]["mark"]
    mark = mark.get("type", "") if isinstance(mark, dict) else str(mark)
    names = {}
    for unit in units:
        for channel, enc in unit.get("encoding", {}).items():
            if isinstance(enc, dict) and channel not in names and (enc.get("title") or enc.get("field")):
                names[channel] = str(enc.get("title") or enc.get("field"))
    facets = spec.get("facet", {}) if isinstance(spec.get("facet"), dict) else {}
    for channel in ("row", "column"):
        facet = facets.get(channel) or spec.get(channel)
        if isinstance(facet, dict) and (facet.get("title") or facet.get("field")):
            names.setdefault(channel, str(facet.get("title") or facet.get("field")))
    text = f"A {mark} chart" + (f" of {names['x']}" if "x" in names else "") + (f" by {names['y']}" if "y" in names else "")
    text += f", coloured by {names['color']}" if "color" in names else ""
    text += "".join(f", one {c} per {names[c]}" for c in ("row", "column") if c in names)
    return text + "."


def vegalite_metadata() -> dict:
    """Output metadata for a Vega-Lite bundle: vega-embed without its actions menu."""
    return {VEGALITE_V5_MIME: {"embed_options": {"actions": False}}}


def _renderer(spec: dict, **metadata) -> tuple[dict, dict]:
    """altair renderer: the spec under the Vega-Lite 5 MIME type (see :func:`vegalite_bundle`),
    with the display metadata of :func:`vegalite_metadata`."""
    return _bundle(spec), vegalite_metadata()


def _bundle(spec: dict, redraw: bool = False) -> dict:
    """The bundle of ``spec``; with the placeholder PNG for a ``redraw`` or inside Voilà (above)."""
    spec = described_spec(dict(spec))
    spec["$schema"] = _VEGALITE_V5_SCHEMA
    bundle = {VEGALITE_V5_MIME: spec, "text/plain": "<altair chart>"}
    if redraw or _in_voila():
        bundle["image/png"] = _PLACEHOLDER_PNG
    return bundle


def vegalite_bundle(chart: alt.TopLevelMixin, *, validate: bool = False) -> dict:
    """A display bundle JupyterLab draws with its built-in, offline Vega-Lite 5 renderer, once.

    For an ``Output`` widget's ``outputs`` (an explorer's redraw) or ``display(bundle, raw=True)``.
    It holds a placeholder "image/png", so that JupyterLab neither rasterises the chart nor
    draws it a second time. Schema validation is off by default (it doubles the time of a widget
    redraw; the tests validate every chart). Display it with the metadata of
    :func:`vegalite_metadata`.
    """
    return _bundle(chart.to_dict(validate=validate), redraw=True)


class StoredChart:
    """A chart read back from a file (:func:`load_charts`): displayed like the altair chart it was
    made from, without building it again. ``spec`` is its Vega-Lite spec."""

    def __init__(self, spec: dict):
        self.spec = spec

    def _repr_mimebundle_(self, include=None, exclude=None) -> tuple[dict, dict]:
        return _bundle(self.spec), vegalite_metadata()


def save_charts(charts: Mapping[str, alt.TopLevelMixin], path: str | Path) -> Path:
    """Write ``charts`` (name → altair chart, each validated) to ``path`` as JSON, for pages that
    show the same charts to every visitor (:func:`load_charts`). Returns the path."""
    specs = {name: chart.to_dict() for name, chart in charts.items()}
    path = Path(path)
    path.write_text(json.dumps(specs, indent=None, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def load_charts(path: str | Path) -> dict[str, StoredChart]:
    """The charts :func:`save_charts` wrote, by name, ready to display.

    Building an altair chart of many panels costs a few tenths of a CPU second; a Voilà app pays
    it for every visitor. A chart that depends on no control can be built once, stored, and read
    back here.

    >>> import tempfile, altair as alt, pandas as pd
    >>> chart = alt.Chart(pd.DataFrame({"x": [1, 2]})).mark_bar().encode(x="x:Q")
    >>> with tempfile.TemporaryDirectory() as d:
    ...     stored = load_charts(save_charts({"bars": chart}, Path(d) / "charts.json"))["bars"]
    >>> stored.spec["mark"]["type"], VEGALITE_V5_MIME in stored._repr_mimebundle_()[0]
    ('bar', True)
    """
    specs = json.loads(Path(path).read_text(encoding="utf-8"))
    return {name: StoredChart(spec) for name, spec in specs.items()}


def enable() -> None:
    """Register (once) and enable the ``"dpexplore"`` altair renderer. Safe to call repeatedly."""
    if RENDERER_NAME not in alt.renderers.names():
        alt.renderers.register(RENDERER_NAME, _renderer)
    if alt.renderers.active != RENDERER_NAME:
        alt.renderers.enable(RENDERER_NAME)

