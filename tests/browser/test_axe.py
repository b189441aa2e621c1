"""axe-core on the notebooks, in Chromium, offline (``axedriver.py``; before/after counts:
``benchmarks/axe_notebooks.py`` → ``benchmarks/results/axe_*.csv``).

- Every stored notebook, opened in JupyterLab without running it and exported with
  ``jupyter nbconvert --to html``: no serious or critical axe violation in what the notebook itself
  shows (outputs, rendered markdown); JupyterLab's and nbconvert's own page are not asserted (the
  benchmark lists them). Every picture of the export has real alt text, not nbconvert's placeholder.
- The HTML export shows each explorer's stored picture where the widget itself cannot be drawn.
- 07 fits a 1400-px window: no output of it scrolls sideways.
- A kernel starting on a stored notebook does not mark it modified (the stored kernelspec).
- After Run All, the explorers' controls break no serious rule, except the slider handles that
  ipywidgets draws without a name (owner "widget-library", see ``axedriver.py``).
"""
from __future__ import annotations

import time

import pytest

import axedriver as axe
import labdriver as lab
from conftest import NOTEBOOKS

ALL_NOTEBOOKS = [pytest.param(p.name, id=p.stem) for p in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))]
PLACEHOLDER_ALT = "No description has been provided for this image"


def _explain(findings: list[axe.Finding]) -> str:
    return "\n".join(f"{f.rule} ({f.impact}): {f.html[:160]} — {f.summary[:160]}" for f in findings[:12])


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    folder = tmp_path_factory.mktemp("axe-html")
    server = axe.StaticServer(folder)
    yield server, folder
    server.stop()


@pytest.mark.parametrize("name", ALL_NOTEBOOKS)
def test_stored_notebook_in_lab_breaks_no_serious_rule_of_its_own(all_cells_lab, page, name):
    axe.open_stored_in_lab(page, all_cells_lab.url, name)
    bad = axe.severe(axe.axe_findings(page), "content")
    assert not bad, f"{name} in JupyterLab:\n{_explain(bad)}"


@pytest.mark.parametrize("name", ALL_NOTEBOOKS)
def test_html_export_breaks_no_serious_rule_of_its_own_and_describes_its_pictures(exports, served_root, page, name):
    server, folder = exports
    html = axe.export_html(served_root / name, folder)
    axe.open_html(page, f"{server.url}/{html.name}")
    bad = axe.severe(axe.axe_findings(page), "content")
    assert not bad, f"{name} exported to HTML:\n{_explain(bad)}"
    alts = page.evaluate("() => [...document.querySelectorAll('img')].map(i => i.getAttribute('alt') || '')")
    assert PLACEHOLDER_ALT not in alts and all(len(a) > 20 for a in alts), \
        f"{name}: pictures without alt text in the HTML export: {[a[:40] for a in alts if len(a) <= 20 or a == PLACEHOLDER_ALT]}"


@pytest.mark.parametrize("name", ["02_privpfc.ipynb", "07_showdown.ipynb"])
def test_html_export_shows_the_explorers_picture_offline(exports, served_root, page, name):
    server, folder = exports
    html = axe.export_html(served_root / name, folder)
    axe.open_html(page, f"{server.url}/{html.name}")
    pictures = page.locator(".dpexplore-static-explorer img")
    assert pictures.count() >= 1, f"{name}: no explorer picture in the HTML export"
    for i in range(pictures.count()):
        box = pictures.nth(i).bounding_box()
        assert box and box["height"] > 100 and box["width"] > 200, f"{name}: explorer picture {i} is not shown"


def test_showdown_fits_a_1400px_window(all_cells_lab, page):
    axe.open_stored_in_lab(page, all_cells_lab.url, "07_showdown.ipynb")
    wide = page.evaluate("""() => [...document.querySelectorAll('.jp-Notebook .jp-OutputArea-output')]
        .filter(o => o.scrollWidth > o.clientWidth + 2).map(o => o.textContent.slice(0, 60))""")
    assert not wide, f"07 outputs wider than the notebook at 1400 px: {wide}"


def test_a_starting_kernel_leaves_the_stored_notebook_unmodified(lab_server, page):
    lab.open_notebook(page, lab_server.url, "00_start_here.ipynb")      # waits for the kernel to be idle
    time.sleep(2.0)
    state = page.evaluate("""() => { const p = window.jupyterapp.shell.currentWidget;
        return {dirty: p.context.model.dirty, kernel: p.sessionContext.kernelDisplayName}; }""")
    assert state == {"dirty": False, "kernel": "Python 3 (ipykernel)"}


def test_explorer_controls_after_run_all_break_no_serious_rule(lab_server, page):
    name = "01_mechanisms.ipynb"
    lab.open_notebook(page, lab_server.url, name)
    state, _ = lab.run_all(page, name)
    assert state["errors"] == []
    time.sleep(2.0)
    findings = axe.axe_findings(page)
    bad = axe.severe(findings, "content")
    assert not bad, f"{name} after Run All:\n{_explain(bad)}"
    handles = [f for f in findings if f.owner == "widget-library"]
    assert all(f.rule == "aria-input-field-name" and "noUi-handle" in f.html for f in handles)
