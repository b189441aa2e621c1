"""End to end, as people use it: JupyterLab (run all cells, move the ε slider) and Voilà views.

For each notebook: no cell errors, the first slider labelled "ε" changes value when its readout is
edited, and the chart in the same widget box (the explorer's Output widget) is redrawn: its
pixels differ from before. A screenshot of the page is saved for each test.
"""
from __future__ import annotations

import re
import time

import pytest

from conftest import FIXTURES, notebook_path

EPS_LABEL = re.compile(r"^\s*ε\s*$")
FIXTURE = "tiny_slider.ipynb"
VOILA_TIMEOUT_MS = 240_000


def _lab_notebooks() -> list:
    out = [pytest.param(FIXTURE, id="fixture")]
    out.append(pytest.param("01_mechanisms.ipynb", id="01_mechanisms",
                            marks=pytest.mark.skipif(notebook_path("01_mechanisms.ipynb") is None,
                                                     reason="notebooks/01_mechanisms.ipynb does not exist yet")))
    return out


def _voila_notebooks() -> list:
    out = _lab_notebooks()
    out.append(pytest.param("07_showdown.ipynb", id="07_showdown",
                            marks=pytest.mark.skipif(notebook_path("07_showdown.ipynb") is None,
                                                     reason="notebooks/07_showdown.ipynb does not exist yet")))
    return out


# ----------------------------------------------------------------------------- helpers
def epsilon_slider(page):
    """The first slider whose description is exactly "ε" (ipywidgets 8 DOM)."""
    label = page.locator("label.widget-label").filter(has_text=EPS_LABEL)
    slider = page.locator(".widget-slider").filter(has=label).first
    slider.wait_for(state="visible", timeout=300_000)
    return slider


def chart_of(slider):
    """The Output widget in the slider's widget box holding the chart, and its readout."""
    box = slider.locator("xpath=ancestor::div[contains(@class, 'widget-box')][1]")
    output = box.locator(".widget-output").first
    output.locator("canvas, svg").first.wait_for(state="visible", timeout=120_000)
    return output


def move_slider(page, slider) -> tuple[str, str]:
    """Type a new ε into the slider's readout; return (old, new) readout text."""
    readout = slider.locator(".widget-readout")
    old = readout.inner_text().strip()
    new_value = "0.1" if float(old) > 0.5 else "3"
    readout.click()
    page.keyboard.press("Control+A")
    page.keyboard.type(new_value)
    page.keyboard.press("Enter")
    deadline = time.monotonic() + 30
    while readout.inner_text().strip() == old and time.monotonic() < deadline:
        time.sleep(0.2)
    return old, readout.inner_text().strip()


def wait_changed(element, before: bytes, timeout: float = 60) -> bytes:
    deadline = time.monotonic() + timeout
    after = element.screenshot()
    while after == before and time.monotonic() < deadline:
        time.sleep(0.5)
        after = element.screenshot()
    return after


def settle(element, pause: float = 1.0, timeout: float = 30) -> bytes:
    """Screenshot once two consecutive ones agree (vega finished drawing)."""
    deadline = time.monotonic() + timeout
    shot = element.screenshot()
    while time.monotonic() < deadline:
        time.sleep(pause)
        again = element.screenshot()
        if again == shot:
            return shot
        shot = again
    return shot


LAB_STATE_JS = """
() => {
  const app = window.jupyterapp;
  const nb = app && app.shell.currentWidget;
  if (!nb || !nb.content || !nb.content.model) return null;
  const cells = nb.content.model.cells;
  let pending = 0, code = 0;
  const errors = [];
  for (let i = 0; i < cells.length; i++) {
    const c = cells.get(i);
    if (c.type !== 'code') continue;
    code++;
    if (c.executionCount === null) pending++;
    const outs = c.outputs.toJSON();
    for (const o of outs) if (o.output_type === 'error') errors.push(`cell ${i}: ${o.ename}: ${o.evalue}`);
  }
  const kernel = nb.sessionContext.session && nb.sessionContext.session.kernel;
  return {code, pending, errors, status: kernel ? kernel.status : 'none', ready: nb.sessionContext.isReady,
          dialog: !!document.querySelector('.jp-Dialog'),
          busy: nb.content.widgets.some(w => w.model.type === 'code' && w.promptNode && w.promptNode.textContent.includes('*'))};
}
"""


def _wait_lab(page, predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    state = None
    while time.monotonic() < deadline:
        state = page.evaluate(LAB_STATE_JS)
        if state is not None and predicate(state):
            return state
        time.sleep(1)
    raise AssertionError(f"timed out waiting for {what}; last state {state}")


# ----------------------------------------------------------------------------- JupyterLab
@pytest.mark.parametrize("name", _lab_notebooks())
def test_lab_run_all_and_move_epsilon(lab_server, page, screenshot_dir, name):
    page.goto(f"{lab_server.url}/lab/tree/{name}")
    _wait_lab(page, lambda s: s["status"] == "idle" and s["ready"], 180, "the kernel to start")
    if page.evaluate(LAB_STATE_JS)["dialog"]:          # e.g. a kernel or trust prompt
        page.keyboard.press("Escape")
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
    _wait_lab(page, lambda s: s["pending"] == s["code"], 30, "outputs to clear")
    for attempt in range(3):   # a run-all sent while the kernel connection settles can be dropped
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        try:
            _wait_lab(page, lambda s: s["pending"] < s["code"] or s["busy"] or s["status"] == "busy", 60,
                      "the first cell to start")
            break
        except AssertionError:
            if attempt == 2:
                raise
    state = _wait_lab(page, lambda s: (s["pending"] == 0 and s["status"] == "idle" and not s["busy"])
                      or bool(s["errors"]), 900, "all cells to run")
    assert state["errors"] == [], f"cells errored in {name}: {state['errors']}"
    assert state["code"] > 0
    js_errors = re.findall(r"Javascript Error: [^\n]*", page.inner_text("body"))
    assert not js_errors, f"outputs failed to render in {name}: {js_errors}"

    slider = epsilon_slider(page)
    slider.scroll_into_view_if_needed()
    output = chart_of(slider)
    before = settle(output)
    old, new = move_slider(page, slider)
    assert new != old, "the ε readout did not change"
    after = wait_changed(output, before)
    page.screenshot(path=str(screenshot_dir / f"lab_{name.replace('.ipynb', '')}.png"))
    assert after != before, f"the chart next to the ε slider did not change ({old} → {new})"
    state = _wait_lab(page, lambda s: s["status"] == "idle", 120, "the redraw to finish")
    assert state["errors"] == []


# ----------------------------------------------------------------------------- Voilà
def open_voila(page, url: str) -> int:
    """Open a Voilà view; return the attempt that loaded (1 or 2).

    Voilà executes every cell before the page finishes loading, so "load" means all cells ran.
    Seen in CI: the *first* kernel of a fresh Voilà server sometimes never completes its
    handshake with the server (its log shows "Kernel started" and nothing more), and the page
    never loads. A second request starts a new kernel; if that one hangs too, the test fails.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for attempt in (1, 2):
        try:
            page.goto(url, timeout=VOILA_TIMEOUT_MS, wait_until="load")
            return attempt
        except PlaywrightTimeout:
            if attempt == 2:
                raise
            print(f"Voilà page {url} did not load in {VOILA_TIMEOUT_MS / 1000:.0f} s; retrying once")
    return 2


@pytest.mark.parametrize("name", _voila_notebooks())
def test_voila_view_and_move_epsilon(voila_server, page, screenshot_dir, name):
    open_voila(page, f"{voila_server.url}/voila/render/{name}")
    slider = epsilon_slider(page)
    text = page.inner_text("body")
    assert "Traceback" not in text and "There was an error when executing cell" not in text, \
        f"a cell errored in the Voilà view of {name}"
    js_errors = re.findall(r"Javascript Error: [^\n]*", text)
    assert not js_errors, f"outputs failed to render in the Voilà view of {name}: {js_errors}"
    slider.scroll_into_view_if_needed()
    output = chart_of(slider)
    before = settle(output)
    old, new = move_slider(page, slider)
    assert new != old, "the ε readout did not change"
    after = wait_changed(output, before)
    page.screenshot(path=str(screenshot_dir / f"voila_{name.replace('.ipynb', '')}.png"), full_page=False)
    assert after != before, f"the chart next to the ε slider did not change ({old} → {new})"
    assert "Traceback" not in page.inner_text("body")


def test_fixture_exists():
    assert (FIXTURES / FIXTURE).exists()
