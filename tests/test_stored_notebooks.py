"""The stored notebooks read before they run: fast checks of the .ipynb files, no kernel.

Each source ``notebooks/NN_name.py`` is built into a student version ``NN_name.ipynb`` and, when
it has exercises, an instructor version ``instructor/NN_name.ipynb`` (``notebooks/_versions.py``).
Each stored version must match what its source gives, hold the outputs of one full run (no
errors, no warnings on stderr; the student version without the outputs of its ``reveal`` cells),
give every chart and widget a static fallback that an untrusted JupyterLab, GitHub or nbviewer can
show (``notebooks/build.py`` adds them), and reference no CDN.
Rebuild a failing notebook with ``python notebooks/build.py NN``.
"""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from _benchmarks import load_script
from _notebooks import NOTEBOOKS, SOURCES, versions

nbformat = pytest.importorskip("nbformat")
jupytext = pytest.importorskip("jupytext")


def _has_exercises(source: Path) -> bool:
    return 'tags=["exercise"]' in source.read_text(encoding="utf-8")


# (source, "student" | "instructor"): every stored notebook the build writes
BUILT = [(s, "student") for s in SOURCES] + [(s, "instructor") for s in SOURCES if _has_exercises(s)]
VEGALITE = "application/vnd.vegalite.v5+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
CDN = ("cdn.jsdelivr", "unpkg", "vega@", "font-awesome")
# What a widget looks like when JupyterLab cannot draw it: its Python repr or a fresh tqdm bar.
RAW_WIDGET = re.compile(r"^\s*\w+\((children|value|layout|description|options)=|\b0%\|")
SHOWING_CALL = re.compile(r"chart|^display$|^head$|DataFrame|Series|^concat$|^round$")
RAW_REPR = re.compile(r"\b(np\.(int|float|bool|str)\w*\(|DataTransformerRegistry|RendererRegistry)")


def _path(source: Path, version: str = "student") -> Path:
    return versions.student_path(source) if version == "student" else versions.instructor_path(source)


def _notebook(source: Path, version: str = "student"):
    target = _path(source, version)
    if not target.exists():
        pytest.fail(f"{target} is missing: build it with `python notebooks/build.py {source.name[:2]}`")
    return nbformat.read(target, as_version=4)


def _outputs(nb):
    for index, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            yield index, out


def _where(source: Path, index: int, version: str = "student") -> str:
    return f"{_path(source, version).relative_to(NOTEBOOKS)} cell {index}"


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _shows_something(source: str) -> bool:
    """Whether a cell must leave an output: its last statement is a bare expression (no ';')."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    if not tree.body or source.rstrip().endswith(";"):
        return False
    last = tree.body[-1]
    if not isinstance(last, ast.Expr) or isinstance(last.value, ast.Constant):
        return False
    if isinstance(last.value, ast.Call):   # a call may return None: only those known to show
        func = last.value.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return bool(SHOWING_CALL.search(name))
    return True


ids = [f"{s.stem}-{v}" for s, v in BUILT]


def test_every_source_has_a_notebook_and_back():
    stems = {p.stem for p in SOURCES}
    stored = {p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")}
    assert stems and stems == stored, f"sources without notebook: {stems - stored}; notebooks without source: {stored - stems}"
    with_exercises = {s.stem for s in SOURCES if _has_exercises(s)}
    instructor = {p.stem for p in (NOTEBOOKS / versions.INSTRUCTOR_DIR).glob("[0-9][0-9]_*.ipynb")}
    assert instructor == with_exercises, (f"instructor versions missing: {with_exercises - instructor}; "
                                          f"without a source with exercises: {instructor - with_exercises}")


@pytest.mark.parametrize("source, version", BUILT, ids=ids)
def test_notebook_is_in_sync_with_its_source(source, version):
    make = versions.student_version if version == "student" else versions.instructor_version
    expected = [(c.cell_type, c.source) for c in make(jupytext.read(source), source.name).cells]
    stored = [(c.cell_type, c.source) for c in _notebook(source, version).cells]
    assert stored == expected, (f"{_path(source, version).relative_to(NOTEBOOKS)} differs from {source.name}: "
                                f"rebuild with `python notebooks/build.py {source.name[:2]}`")


@pytest.mark.parametrize("source, version", BUILT, ids=ids)
def test_notebook_holds_one_clean_full_run(source, version):
    nb = _notebook(source, version)
    # the student version stores no output under a prediction: its reveal cells show as not run
    # (notebooks/_versions.py; tests/test_no_spoilers.py checks them)
    hidden = versions.REVEAL if version == "student" else None
    code = [(i, c) for i, c in enumerate(nb.cells)
            if c.cell_type == "code" and c.source.strip() and hidden not in versions.tags(c)]
    counts = [c.execution_count for _, c in code]
    assert all(isinstance(n, int) for n in counts), f"{source.stem}: cells never executed (build it)"
    assert counts == sorted(counts) and len(set(counts)) == len(counts), f"{source.stem}: not one Run All"
    for i, cell in code:
        if _shows_something(cell.source):
            assert cell.outputs, f"{_where(source, i, version)} ends with an expression but stores no output"
    for i, out in _outputs(nb):
        assert out.output_type != "error", f"{_where(source, i, version)}: {out.get('ename')}: {out.get('evalue')}"
        if out.output_type == "stream" and out.name == "stderr":
            text = _text(out.text)
            assert "warning" not in text.lower(), f"{_where(source, i, version)} stores a warning on stderr: {text[:200]!r}"
        texts = [_text(out.get("text", ""))] + [_text(v) for k, v in out.get("data", {}).items()
                                                 if k == "text/plain"]
        for text in texts:
            assert not RAW_REPR.search(text), f"{_where(source, i, version)} shows a raw repr: {text[:200]!r}"


@pytest.mark.parametrize("source, version", BUILT, ids=ids)
def test_every_chart_and_widget_has_a_static_fallback(source, version):
    nb = _notebook(source, version)
    for i, out in _outputs(nb):
        data = out.get("data", {})
        if VEGALITE in data:
            assert len(data.get("image/png", "")) > 200, f"{_where(source, i, version)}: chart without PNG fallback"
        if WIDGET_VIEW in data:
            # an untrusted JupyterLab skips the widget view and shows the best safe MIME type
            if "text/html" in data:
                best = _text(data["text/html"])
            elif "image/png" in data:
                best = "image"
            else:
                best = _text(data.get("text/plain", ""))
            assert best.strip() and not RAW_WIDGET.search(best), \
                f"{_where(source, i, version)}: widget falls back to a raw repr: {best[:120]!r}"
            assert not RAW_WIDGET.search(_text(data.get("text/plain", ""))), \
                f"{_where(source, i, version)}: widget's text/plain is a raw repr"
    if any(WIDGET_VIEW in out.get("data", {}) for _, out in _outputs(nb)):
        assert "application/vnd.jupyter.widget-state+json" in nb.metadata.get("widgets", {}), \
            f"{source.stem}: widget views without saved widget state"


@pytest.mark.parametrize("source, version", BUILT, ids=ids)
def test_no_output_references_a_cdn(source, version):
    nb = _notebook(source, version)
    stored = json.dumps([c.get("outputs", []) for c in nb.cells]) + json.dumps(nb.metadata)
    found = [c for c in CDN if c in stored]
    assert not found, f"{_path(source, version).relative_to(NOTEBOOKS)} references {found}: charts must render offline"


# --------------------------------------------------------------------------- the build step itself
def _build_module():
    pytest.importorskip("vl_convert")
    pytest.importorskip("PIL")
    return load_script(NOTEBOOKS / "build.py", "notebooks_build")


def _model(name, **state):
    return {"model_module": "@jupyter-widgets/controls", "model_module_version": "2.0.0",
            "model_name": name, "state": state}


def test_build_adds_png_fallbacks_for_charts_widgets_and_progress_bars():
    build = _build_module()
    spec = {"$schema": "https://vega.github.io/schema/vega-lite/v5.json", "mark": "bar",
            "data": {"values": [{"a": "x", "b": 1}, {"a": "y", "b": 2}]},
            "encoding": {"x": {"field": "a", "type": "nominal"}, "y": {"field": "b", "type": "quantitative"}}}
    chart = {VEGALITE: spec, "text/plain": "<altair chart>"}
    state = {
        "box": _model("VBoxModel", children=["IPY_MODEL_slider", "IPY_MODEL_out"]),
        "slider": _model("FloatLogSliderModel", description="ε", value=1.0),
        "out": {"model_module": "@jupyter-widgets/output", "model_module_version": "1.0.0",
                "model_name": "OutputModel",
                "state": {"outputs": [{"output_type": "display_data", "data": chart, "metadata": {}}]}},
        "bar": _model("HBoxModel", children=["IPY_MODEL_l", "IPY_MODEL_p", "IPY_MODEL_r"]),
        "l": _model("HTMLModel", value="sweep: 100%"),
        "p": _model("FloatProgressModel", value=72, max=72),
        "r": _model("HTMLModel", value=" 72/72 [00:03&lt;00:00]"),
    }

    def view(model_id, raw):
        return nbformat.v4.new_output("display_data", data={
            WIDGET_VIEW: {"version_major": 2, "version_minor": 0, "model_id": model_id}, "text/plain": raw})

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("chart", outputs=[nbformat.v4.new_output("display_data", data=dict(chart))]),
                nbformat.v4.new_code_cell("explorer", outputs=[view("box", "VBox(children=(FloatLogSlider(value=1.0")]),
                nbformat.v4.new_code_cell("sweep", outputs=[view("bar", "sweep:   0%|          | 0/72")])]
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": state, "version_major": 2,
                                                                            "version_minor": 0}}
    build.add_static_fallbacks(nb)
    chart_out, widget_out, bar_out = (c.outputs[0] for c in nb.cells)
    assert len(chart_out.data["image/png"]) > 200
    assert {k: v for k, v in chart_out.data[VEGALITE].items() if k != "description"} == spec   # + a description
    assert chart_out.metadata["image/png"]["width"] > 0
    picture = nb.cells[1].outputs[1]            # the widget's picture: the output after its view
    assert picture.metadata["dpexplore"] == {"static_picture_of": "box"}
    assert '<img src="data:image/png;base64,' in picture.data["text/html"] and 'alt="' in picture.data["text/html"]
    assert len(nb.cells[1].outputs) == 2 and len(nb.cells[2].outputs) == 1
    assert widget_out.data["text/plain"].startswith("Interactive: run the notebook") and "ε" in widget_out.data["text/plain"]
    assert not RAW_WIDGET.search(widget_out.data["text/plain"])
    assert bar_out.data["text/plain"].startswith("sweep: 100% 72/72") and "image/png" not in bar_out.data
    assert WIDGET_VIEW in widget_out.data       # a trusted Lab still restores the live widget
    again = json.dumps(nb, sort_keys=True)
    build.add_static_fallbacks(nb)              # idempotent
    assert json.dumps(nb, sort_keys=True) == again
