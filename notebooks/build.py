"""Build the stored notebooks from their jupytext sources (run from anywhere).

Each notebook ``notebooks/NN_name.ipynb`` is paired with ``notebooks/NN_name.py`` (jupytext's
percent format; see ``jupytext.toml``). The ``.py`` file is the source of truth: edit it (or the
notebook in JupyterLab with jupytext installed), then build::

    .venv/bin/python notebooks/build.py 02 05     # sync, execute in full mode, store outputs
    .venv/bin/python notebooks/build.py           # every notebook
    .venv/bin/python notebooks/build.py --no-execute 02   # sync cells, keep outputs (+ fallbacks)

Executing stores every output and the widgets' state, and prints each notebook's Run All time.
Then every stored output gets a static fallback, so that the notebook reads before any kernel
runs — in an untrusted JupyterLab, offline, on GitHub or nbviewer (:func:`add_static_fallbacks`):

- a Vega-Lite chart also gets an ``image/png`` rendered offline with ``vl-convert-python``;
- a widget view (JupyterLab does not draw widgets in an untrusted notebook; it would show the
  raw ``VBox(children=(...`` repr) gets an ``image/png`` of the charts inside the widget, from
  the saved widget state, under the caption "Interactive: run the notebook to move the sliders",
  and a clean ``text/plain``; a tqdm progress bar gets its final state as ``text/plain``.

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


def build(source: Path, execute: bool = True, timeout: int = 1200) -> float:
    """Write ``source``'s notebook; execute it first unless ``execute`` is False. Returns seconds."""
    nb = jupytext.read(source)
    stable_cell_ids(nb)
    nb.metadata.pop("jupytext", None)
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
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
    else:   # keep the stored outputs (and widget state) of cells whose source did not change
        target = source.with_suffix(".ipynb")
        if target.exists():
            stored = nbformat.read(target, as_version=4)
            nb = combine_inputs_with_outputs(nb, stored, fmt="py:percent")
            if "widgets" in stored.metadata:
                nb.metadata["widgets"] = stored.metadata["widgets"]
    add_static_fallbacks(nb)
    nbformat.write(nb, source.with_suffix(".ipynb"))
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


def _widget_fallback(state: dict, model_id: str) -> dict[str, str]:
    """``image/png`` (charts in the widget's Output children) and ``text/plain`` for a widget view."""
    progress = _progress_text(state, model_id)
    if progress is not None:
        return {"text/plain": progress}
    images, controls = [], []
    for model in _walk(state, model_id):
        s = model["state"]
        if model["model_name"] == "OutputModel":
            for out in s.get("outputs", []):
                data = out.get("data", {})
                if VEGALITE in data:
                    images.append(chart_png(data[VEGALITE]))
                elif "image/png" in data and len(data["image/png"]) > 200:   # not a placeholder
                    images.append(base64.b64decode(data["image/png"]))
        elif s.get("description") and ("value" in s or "index" in s) and model["model_name"] != "HTMLModel":
            controls.append(_plain(s["description"]))
    listed = f" ({', '.join(controls)})" if controls else ""
    bundle = {"text/plain": (CAPTION if images else CAPTION_NO_CHART) + listed + "."}
    if images:
        bundle["image/png"] = base64.b64encode(_stack(images, CAPTION)).decode()
    return bundle


def add_static_fallbacks(nb: nbformat.NotebookNode) -> dict[str, int]:
    """Give every chart and widget output of ``nb`` a static fallback (see the module docstring).

    Idempotent: a chart that already has a real PNG keeps it. Returns counts for the log line.
    """
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    done = {"charts": 0, "widgets": 0}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data")
            if not data:
                continue
            if VEGALITE in data:
                if len(data.get("image/png", "")) <= 200:
                    data["image/png"] = base64.b64encode(chart_png(data[VEGALITE])).decode()
                    done["charts"] += 1
                _display_size(out)
            if WIDGET_VIEW in data:
                fallback = _widget_fallback(state, data[WIDGET_VIEW]["model_id"])
                data.pop("image/png", None)
                data.update(fallback)
                _display_size(out)
                done["widgets"] += 1
    return done


def _display_size(out: nbformat.NotebookNode) -> None:
    """Show the PNG at the chart's own size (it is rendered at ``PNG_SCALE`` for sharpness)."""
    from PIL import Image

    if "image/png" not in out.get("data", {}) or "metadata" not in out:
        return
    width, height = Image.open(io.BytesIO(base64.b64decode(out["data"]["image/png"]))).size
    out["metadata"]["image/png"] = {"width": round(width / PNG_SCALE), "height": round(height / PNG_SCALE)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", help="name prefixes, e.g. 02 05 (default: all)")
    parser.add_argument("--no-execute", action="store_true", help="only sync cells, no outputs")
    args = parser.parse_args(argv)
    for source in sources(args.notebooks):
        seconds = build(source, execute=not args.no_execute)
        took = f"Run All {seconds:6.1f} s" if not args.no_execute else "synced (not executed)"
        print(f"{source.with_suffix('.ipynb').name:34s} {took}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
