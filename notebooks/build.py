"""Build the stored notebooks from their jupytext sources (run from anywhere).

The source of truth is ``notebooks/NN_name.py`` (jupytext's percent format), solutions included.
From it the build writes the student version ``notebooks/NN_name.ipynb`` (solutions removed) and
the instructor version ``notebooks/instructor/NN_name.ipynb`` (solutions in place), see
``_versions.py`` and ``README.md``. Edit the ``.py`` (in JupyterLab with jupytext: open it as a
notebook), then build::

    .venv/bin/python notebooks/build.py 02 05     # sync, execute in full mode, store outputs
    .venv/bin/python notebooks/build.py           # every notebook
    .venv/bin/python notebooks/build.py --no-execute 02   # sync cells, keep outputs (+ fallbacks)

Executing stores every output and the widgets' state, and prints each notebook's Run All time;
the student version then drops the outputs of its ``reveal`` cells (the answer to a "predict, then
run" exercise shows only when the student runs it, ``_versions.hide_reveals``).
Then every stored output gets a static fallback, so that the notebook reads before any kernel
runs — in an untrusted JupyterLab, offline, on GitHub or nbviewer (:func:`add_static_fallbacks`):

- a Vega-Lite chart also gets an ``image/png`` rendered offline with ``vl-convert-python``, and
  the same picture with its alt text (the chart's description) as a ``text/markdown`` <img>;
- a widget view (JupyterLab does not draw widgets in an untrusted notebook; it would show the
  raw ``VBox(children=(...`` repr) gets a clean ``text/plain`` and, as the next output, a picture
  of the charts inside the widget (from the saved widget state, under the caption "Interactive:
  run the notebook to move the sliders", with alt text), which also stands in for the widget in
  the HTML export; a tqdm progress bar gets its final state as ``text/plain``;
- a figure that carries alt text in its metadata gets it as a ``text/markdown`` <img> too.

The saved widget state stays, so a trusted JupyterLab still restores the live widgets; Voilà
re-executes the notebook and never sees these fallbacks.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import html
import io
import os
import re
import sys
import time
from pathlib import Path

import jupytext
from jupytext.combine import combine_inputs_with_outputs
import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _versions  # noqa: E402 (next to this script: the student and instructor versions)

VEGALITE = "application/vnd.vegalite.v5+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
CAPTION = "Interactive: run the notebook to move the sliders"
CAPTION_NO_CHART = "Interactive: run the notebook to use these controls"   # e.g. an upload form
PNG_SCALE = 1.25          # crisp on a laptop screen, ~1.5× the bytes of scale 1
VEGALITE_VERSION = "5.20"  # what JupyterLab 4's built-in Vega extension draws


def sources(selected: list[str]) -> list[Path]:
    """The ``NN_name.py`` sources whose names start with one of ``selected`` (all when empty)."""
    found = sorted(p for p in HERE.glob("[0-9][0-9]_*.py"))
    if not selected:
        return found
    chosen = [p for p in found if any(p.name.startswith(s) for s in selected)]
    missing = [s for s in selected if not any(p.name.startswith(s) for p in found)]
    if missing:
        raise SystemExit(f"no notebook source starts with {missing}; have {[p.stem for p in found]}")
    return chosen


def stable_cell_ids(nb: nbformat.NotebookNode) -> None:
    """Cell ids from the cell's content (jupytext draws random ones): rebuilds diff cleanly."""
    seen: dict[str, int] = {}
    for cell in nb.cells:
        base = hashlib.sha1(f"{cell.cell_type}\0{cell.source}".encode()).hexdigest()[:8]
        seen[base] = seen.get(base, 0) + 1
        cell.id = base if seen[base] == 1 else f"{base}-{seen[base] - 1}"


def build(source: Path, execute: bool = True, timeout: int = 1200) -> dict[str, float]:
    """Write ``source``'s student notebook and, when it has exercises, its instructor notebook
    (:mod:`_versions`); execute each first unless ``execute`` is False. Returns seconds per version."""
    seconds = {}
    for label, nb, target in _versions.versions(jupytext.read(source), source):
        if label == "instructor":
            _versions.link_results(target.parent)
        # the student version keeps no output under a prediction: its reveal cells show as not run
        after_run = _versions.hide_reveals if label == "student" else None
        seconds[label] = _write(nb, target, execute, timeout, after_run)
    return seconds


def _write(nb: nbformat.NotebookNode, target: Path, execute: bool, timeout: int,
           after_run=None) -> float:
    """Execute ``nb`` in ``notebooks/`` (unless ``execute`` is False), apply ``after_run`` to it,
    add fallbacks, write ``target``."""
    stable_cell_ids(nb)
    nb.metadata.pop("jupytext", None)
    # what ipykernel's kernelspec says: JupyterLab rewrites any other display name when a kernel
    # starts, which marks the notebook modified before the reader changed anything
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    seconds = 0.0
    if execute:
        env_quick = os.environ.pop("DPEXPLORE_QUICK", None)   # stored outputs come from full runs
        try:
            start = time.perf_counter()
            NotebookClient(nb, timeout=timeout, kernel_name="python3", store_widget_state=True,
                           resources={"metadata": {"path": str(HERE)}}).execute()
            seconds = time.perf_counter() - start
        finally:
            if env_quick is not None:
                os.environ["DPEXPLORE_QUICK"] = env_quick
    elif target.exists():   # keep the stored outputs (and widget state) of cells whose source did not change
        stored = nbformat.read(target, as_version=4)
        nb = combine_inputs_with_outputs(nb, stored, fmt="py:percent")
        if "widgets" in stored.metadata:
            nb.metadata["widgets"] = stored.metadata["widgets"]
    if after_run is not None:
        after_run(nb)
    add_static_fallbacks(nb)
    nbformat.write(nb, target)
    return seconds


# --------------------------------------------------------------------------- static fallbacks
def _small_png(image) -> bytes:
    """``image`` on white, as a 256-colour PNG (≈ 10× smaller than vl-convert's RGBA output)."""
    from PIL import Image

    if image.mode != "RGB":
        flat = Image.new("RGB", image.size, "white")
        flat.paste(image, mask=image.convert("RGBA").getchannel("A"))
        image = flat
    out = io.BytesIO()
    image.quantize(colors=256).save(out, format="PNG", optimize=True)
    return out.getvalue()


def chart_png(spec: dict, scale: float = PNG_SCALE) -> bytes:
    """PNG bytes of a Vega-Lite 5 spec, rendered offline (no browser, no network)."""
    import vl_convert
    from PIL import Image

    raw = vl_convert.vegalite_to_png(spec, vl_version=VEGALITE_VERSION, scale=scale)
    return _small_png(Image.open(io.BytesIO(raw)))


def _plain(markup: str) -> str:
    """Text of a bit of widget HTML: tags dropped, entities decoded, whitespace collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", markup or "")).split())


def _children(model: dict) -> list[str]:
    return [c.removeprefix("IPY_MODEL_") for c in model["state"].get("children", [])
            if isinstance(c, str)]


def _walk(state: dict, model_id: str, seen: set | None = None):
    """The models of a widget tree, depth first (each once)."""
    seen = set() if seen is None else seen
    if model_id in seen or model_id not in state:
        return
    seen.add(model_id)
    yield state[model_id]
    for child in _children(state[model_id]):
        yield from _walk(state, child, seen)


def _progress_text(state: dict, model_id: str) -> str | None:
    """A tqdm.auto bar (HBox of description HTML, progress, postfix HTML) as its final text."""
    model = state.get(model_id)
    if model is None or model["model_name"] != "HBoxModel":
        return None
    kids = [state[c] for c in _children(model) if c in state]
    if not any(k["model_name"] in ("FloatProgressModel", "IntProgressModel") for k in kids):
        return None
    texts = [_plain(k["state"].get("value", "")) for k in kids if k["model_name"] == "HTMLModel"]
    return " ".join(t for t in texts if t).replace("| ", "").strip() or "progress bar"


def _stack(images: list[bytes], caption: str) -> bytes:
    """The PNGs one under another on white, under a one-line caption."""
    from PIL import Image, ImageDraw, ImageFont

    pictures = [Image.open(io.BytesIO(b)).convert("RGB") for b in images]
    font = ImageFont.load_default(size=round(13 * PNG_SCALE))
    pad, band = 8, round(24 * PNG_SCALE)
    width = max([p.width for p in pictures] + [round(420 * PNG_SCALE)])
    height = band + sum(p.height + pad for p in pictures)
    sheet = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(sheet)
    draw.rectangle([0, 0, width, band - 4], fill="#eef3fb")
    draw.text((pad, (band - 4) // 2), caption, fill="#1f4e8c", font=font, anchor="lm")
    y = band
    for p in pictures:
        sheet.paste(p, (0, y))
        y += p.height + pad
    return _small_png(sheet)


def _widget_fallback(state: dict, model_id: str) -> tuple[str, bytes | None, str]:
    """What stands for a widget view before any kernel runs: (``text/plain``, the PNG of the charts
    in the widget's Output children or None, the picture's alt text)."""
    progress = _progress_text(state, model_id)
    if progress is not None:
        return progress, None, ""
    images, controls, texts = [], [], []
    for model in _walk(state, model_id):
        s = model["state"]
        if model["model_name"] == "OutputModel":
            for out in s.get("outputs", []):
                data = out.get("data", {})
                if VEGALITE in data:
                    images.append(chart_png(data[VEGALITE]))
                    texts.append(chart_alt(data[VEGALITE]))
                elif "image/png" in data and len(data["image/png"]) > 200:   # not a placeholder
                    images.append(base64.b64decode(data["image/png"]))
                    texts.append(out.get("metadata", {}).get("image/png", {}).get("alt", ""))
        elif s.get("description") and ("value" in s or "index" in s) and model["model_name"] != "HTMLModel":
            controls.append(_plain(s["description"]))
    listed = f" ({', '.join(controls)})" if controls else ""
    text = (CAPTION if images else CAPTION_NO_CHART) + listed + "."
    if not images:
        return text, None, ""
    alt = " ".join([f"Picture of an interactive explorer{listed}, as stored: run the notebook to move its controls."]
                   + [t for t in texts if t])
    return text, _stack(images, CAPTION), alt


# ------------------------------------------------------------------ alt text and the HTML export
# JupyterLab 4 draws an "image/png" output as an <img> without alt text, and nbconvert's HTML
# export gives it alt="No description has been provided for this image" (the alt kept in the
# output's metadata, IPython's convention, is read by neither). Both render a "text/markdown"
# output as HTML, and both rank it *after* Vega-Lite and *before* "image/png": so a stored chart
# also gets a "text/markdown" <img alt=…> — JupyterLab still draws the Vega-Lite chart, the HTML
# export shows the described picture.
#
# A widget view is drawn by nbconvert's HTML export only with the widget library from a CDN:
# offline, nothing shows. So its picture is a separate output right after the view ("text/html",
# marked in the output's metadata), and the view keeps its "text/plain" caption only. A style rule
# in that output hides the picture wherever the live widget was drawn beside it (a trusted
# JupyterLab restoring the saved state, the HTML export online); an untrusted JupyterLab strips
# the rule and shows the picture.
PICTURE_KEY = "dpexplore"            # output metadata: {"static_picture_of": model_id}
PICTURE_CLASS = "dpexplore-static-explorer"
_HIDE_WHEN_LIVE = (f"<style>.jp-OutputArea-child:has(.widget-container) + .jp-OutputArea-child .{PICTURE_CLASS}"
                   "{display:none}</style>")


def chart_alt(spec: dict) -> str:
    """Alt text of a chart: its Vega-Lite ``description`` (see ``dpexplore.plots._accessible``),
    else its title."""
    title = spec.get("title", "")
    title = title.get("text", "") if isinstance(title, dict) else title
    return str(spec.get("description") or (" ".join(title) if isinstance(title, list) else title) or "A chart.")


def _img(png_b64: str, alt: str, width: int | None) -> str:
    size = f' width="{width}"' if width else ""
    return f'<img src="data:image/png;base64,{png_b64}" alt="{html.escape(alt, quote=True)}"{size}>'


def _describe_png(out: nbformat.NotebookNode, alt: str) -> None:
    """Give an output's PNG its alt text: in its metadata and as a "text/markdown" <img alt=…>."""
    _display_size(out)
    meta = out.setdefault("metadata", {}).setdefault("image/png", {})
    meta["alt"] = alt
    out["data"]["text/markdown"] = _img(out["data"]["image/png"], alt, meta.get("width"))


def _picture_output(png: bytes, alt: str, model_id: str) -> nbformat.NotebookNode:
    """The separate output that shows a widget's picture where the widget itself cannot be drawn."""
    from PIL import Image

    width = round(Image.open(io.BytesIO(png)).width / PNG_SCALE)
    body = _img(base64.b64encode(png).decode(), alt, width)
    return nbformat.v4.new_output("display_data", data={
        "text/html": f'{_HIDE_WHEN_LIVE}<div class="{PICTURE_CLASS}">{body}</div>', "text/plain": alt},
        metadata={PICTURE_KEY: {"static_picture_of": model_id}})


def _is_picture(out: nbformat.NotebookNode) -> bool:
    return PICTURE_KEY in out.get("metadata", {})


def add_static_fallbacks(nb: nbformat.NotebookNode) -> dict[str, int]:
    """Give every chart, figure and widget output of ``nb`` a static fallback with alt text (see
    the module docstring and the notes above :data:`PICTURE_KEY`).

    Idempotent: a chart that already has a real PNG keeps it, widget pictures are made anew.
    Returns counts for the log line.
    """
    from dpexplore.plots._render import described_spec, vegalite_metadata   # the package's renderer

    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    done = {"charts": 0, "widgets": 0, "figures": 0}
    for cell in nb.cells:
        if "outputs" not in cell:
            continue
        outputs = []
        for out in cell.outputs:
            if _is_picture(out):            # made anew below, next to its widget view
                continue
            outputs.append(out)
            data = out.get("data")
            if not data:
                continue
            if VEGALITE in data:
                # what the package's renderer gives a chart today (a description, no actions menu),
                # also for outputs stored before it did
                data[VEGALITE] = described_spec(data[VEGALITE])
                out.setdefault("metadata", {}).update(vegalite_metadata())
                if len(data.get("image/png", "")) <= 200:
                    data["image/png"] = base64.b64encode(chart_png(data[VEGALITE])).decode()
                    done["charts"] += 1
                _describe_png(out, chart_alt(data[VEGALITE]))
            elif WIDGET_VIEW in data:
                text, png, alt = _widget_fallback(state, data[WIDGET_VIEW]["model_id"])
                for mime in ("image/png", "text/markdown", "text/html"):
                    data.pop(mime, None)
                out.get("metadata", {}).pop("image/png", None)
                data["text/plain"] = text
                if png is not None:
                    outputs.append(_picture_output(png, alt, data[WIDGET_VIEW]["model_id"]))
                done["widgets"] += 1
            elif "image/png" in data and out.get("metadata", {}).get("image/png", {}).get("alt"):
                _describe_png(out, out["metadata"]["image/png"]["alt"])   # e.g. a described matplotlib figure
                done["figures"] += 1
        cell.outputs = outputs
    return done


def _display_size(out: nbformat.NotebookNode) -> None:
    """Show a chart's PNG at the chart's own size (it is rendered at ``PNG_SCALE`` for sharpness)."""
    from PIL import Image

    if "image/png" not in out.get("data", {}) or "metadata" not in out:
        return
    if VEGALITE not in out["data"]:
        return
    width, height = Image.open(io.BytesIO(base64.b64decode(out["data"]["image/png"]))).size
    meta = out["metadata"].get("image/png", {})
    out["metadata"]["image/png"] = {**meta, "width": round(width / PNG_SCALE), "height": round(height / PNG_SCALE)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", help="name prefixes, e.g. 02 05 (default: all)")
    parser.add_argument("--no-execute", action="store_true", help="only sync cells, no outputs")
    args = parser.parse_args(argv)
    for source in sources(args.notebooks):
        for label, seconds in build(source, execute=not args.no_execute).items():
            took = f"Run All {seconds:6.1f} s" if not args.no_execute else "synced (not executed)"
            print(f"{source.with_suffix('.ipynb').name:34s} {label:10s} {took}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
