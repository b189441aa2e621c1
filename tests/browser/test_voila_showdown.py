"""Voilà 07 as a visitor meets it: a fresh Voilà server with dpexplore's template
(``share/jupyter/voila/templates/dpexplore``), the showdown page opened in Chromium with every
request logged.

Asserts: no request leaves the machine (no CDN: Font Awesome was Voilà's), no cell error, no
"Error displaying widget" / "model not found", every chart drawn (the run-time chart has its
marks), and a key press on the ε slider moves one swept budget and redraws the ranking. Prints
the time from the request to the last chart (the target: ≤ 15 s), for the report; no
timing is asserted (shared CI machines).

A lost kernel says so: when the visitor's kernel is killed, or shut down by the server as the idle
culler does, the template shows a plain message with a reload button (screenshots
``voila_07_kernel_lost.png``, ``voila_07_kernel_culled.png``); closing the page shuts its kernel down.
"""
from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import pytest

from conftest import NOTEBOOKS, ROOT, Server, free_port, notebook_path

NAME = "07_showdown.ipynb"
pytestmark = pytest.mark.skipif(notebook_path(NAME) is None, reason=f"notebooks/{NAME} does not exist yet")


def voila_command(port: int, root: Path) -> list[str]:
    """Voilà serving ``root``; started next to a copy of the repository's ``voila.json`` (template
    ``dpexplore``, pre-heated kernels for the apps), as from the repository root, through the
    package's launcher (which also finds the template in a source checkout)."""
    return [sys.executable, "-m", "dpexplore.apps", "--no-browser", f"--port={port}", "--Voila.ip=127.0.0.1",
            "--Voila.port_retries=0", "--show_tracebacks=True", str(root)]


@pytest.fixture(scope="module")
def showdown_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("served_showdown")
    shutil.copy(NOTEBOOKS / NAME, root / NAME)
    shutil.copytree(NOTEBOOKS / "results", root / "results")     # the stored sweep 07 opens from
    tmp = tmp_path_factory.mktemp("voila_showdown")
    shutil.copy(ROOT / "voila.json", tmp / "voila.json")           # Voilà reads it from its working dir
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = Server(voila_command(port, root), url, f"{url}/", tmp)
    yield server
    server.stop()


def _charts(page) -> int:
    return page.evaluate("() => document.querySelectorAll('.vega-embed canvas, .vega-embed svg.marks').length")


def test_voila_showdown_opens_offline_without_widget_errors(showdown_server, browser, screenshot_dir):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("http://127.0.0.1")
               else route.abort())
    page.set_default_timeout(120_000)
    start = time.perf_counter()
    page.goto(f"{showdown_server.url}/voila/render/{NAME}", wait_until="load", timeout=240_000)
    loaded = time.perf_counter() - start
    page.wait_for_function("() => document.querySelectorAll('.vega-embed canvas, .vega-embed svg.marks').length >= 3",
                           timeout=120_000)
    # the last chart: wait until no new chart appears for a second
    count, stable_since = _charts(page), time.perf_counter()
    while time.perf_counter() - stable_since < 1.0:
        time.sleep(0.1)
        now = _charts(page)
        if now != count:
            count, stable_since = now, time.perf_counter()
    last_chart = stable_since - start
    print(f"\nVoilà 07: page loaded in {loaded:.1f} s, last of {count} charts drawn at {last_chart:.1f} s "
          f"({len(requests)} requests)")
    page.screenshot(path=str(screenshot_dir / "voila_07_showdown_open.png"), full_page=True)
    # the lab's exercises and self-checks run but nothing of them is in the app's page
    assert page.locator(".celltag_self-check, .celltag_exercise").count() == 0
    assert "Not answered yet" not in page.content()

    external = [u for u in requests if not u.startswith("http://127.0.0.1")]
    assert external == [], f"Voilà 07 requested resources from the network: {external}"
    text = page.inner_text("body")
    for bad in ("Traceback", "There was an error when executing cell", "Error displaying widget",
                "model not found", "Javascript Error", "Error loading script"):
        assert bad not in text, f"Voilà 07 shows {bad!r}"
    assert count >= 3

    # a key press on the ε slider moves exactly one swept budget and redraws the ranking
    label = page.locator("label.widget-label", has_text="ε").first
    slider = page.locator(".widget-slider").filter(has=label).first
    readout = slider.locator(".widget-readout")
    before_value = readout.inner_text().strip()
    box = slider.locator("xpath=ancestor::div[contains(@class, 'widget-box')][1]")
    output = box.locator(".widget-output").first
    before = output.screenshot()
    slider.locator(".noUi-handle, .ui-slider-handle, [role=slider]").first.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function("([el, old]) => el.innerText.trim() !== old", arg=[readout.element_handle(), before_value],
                           timeout=30_000)
    after_value = readout.inner_text().strip()
    deadline = time.monotonic() + 30
    after = output.screenshot()
    while after == before and time.monotonic() < deadline:
        time.sleep(0.2)
        after = output.screenshot()
    page.screenshot(path=str(screenshot_dir / "voila_07_showdown_moved.png"))
    assert (before_value, after_value) in {("0.1", "0.3"), ("0.3", "1"), ("0.03", "0.1")}, (before_value, after_value)
    assert after != before, "the ranking did not change after one step of the ε slider"
    assert "model not found" not in page.inner_text("body")
    context.close()


# ----------------------------------------------------------------------------- a lost kernel says so
def _open_showdown(browser, server):
    """A fresh visitor's 07 page, drawn, with the template's kernel watch armed; (page, kernel id)."""
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("http://127.0.0.1")
               else route.abort())
    page.set_default_timeout(120_000)
    page.goto(f"{server.url}/voila/render/{NAME}", wait_until="load", timeout=240_000)
    page.wait_for_function("() => document.querySelectorAll('.vega-embed canvas, .vega-embed svg.marks').length >= 3")
    page.wait_for_function("() => document.body.getAttribute('data-dpexplore-kernel') === 'watched'", timeout=60_000)
    config = page.evaluate("() => JSON.parse(document.getElementById('jupyter-config-data').textContent)")
    return page, config["kernelId"]


def _kernel_process(server, kernel_id: str):
    import psutil

    found = [p for p in psutil.Process(server.proc.pid).children()
             if any(kernel_id in part for part in p.cmdline())]
    assert len(found) == 1, f"no single kernel process for {kernel_id}"
    return found[0]


def _banner(page) -> str:
    page.wait_for_selector("#dpexplore-kernel-lost", state="visible", timeout=60_000)
    return page.inner_text("#dpexplore-kernel-lost")


def test_voila_showdown_killed_kernel_shows_a_reload_message(showdown_server, browser, screenshot_dir):
    """The visitor's kernel dies (the server restarts it empty): the page says so and offers a
    reload, which brings a working page back."""
    page, kernel_id = _open_showdown(browser, showdown_server)
    assert page.locator("#dpexplore-kernel-lost").count() == 0
    _kernel_process(showdown_server, kernel_id).kill()
    text = _banner(page)
    page.screenshot(path=str(screenshot_dir / "voila_07_kernel_lost.png"))
    assert "connection to this app's computer was lost" in text and "Reload the page" in text
    page.get_by_role("button", name="Reload the page").click()
    page.wait_for_function("() => document.querySelectorAll('.vega-embed canvas, .vega-embed svg.marks').length >= 3")
    page.wait_for_function("() => document.body.getAttribute('data-dpexplore-kernel') === 'watched'", timeout=60_000)
    assert page.locator("#dpexplore-kernel-lost").count() == 0
    new_kernel = page.evaluate("() => JSON.parse(document.getElementById('jupyter-config-data').textContent).kernelId")
    assert new_kernel != kernel_id
    page.context.close()


def test_voila_showdown_culled_kernel_says_so_and_a_closed_page_frees_its_kernel(showdown_server, browser,
                                                                                 screenshot_dir):
    """The server shuts the kernel down (what the idle culler does; the page's connection stays
    open and silent): at the visitor's next key press the page says so. Closing a page sends
    Voilà's shutdown request, which the launcher's _xsrf cookie lets through."""
    page, kernel_id = _open_showdown(browser, showdown_server)
    status = page.evaluate("""async (kernelId) => {
        const xsrf = document.cookie.split('; ').find(c => c.startsWith('_xsrf='));
        const form = new FormData();
        form.append('_xsrf', xsrf ? xsrf.slice(6) : '');
        return (await fetch('/voila/api/shutdown/' + kernelId, {method: 'POST', body: form})).status;
    }""", kernel_id)
    assert status == 204
    page.locator(".widget-slider .noUi-handle, .widget-slider [role=slider]").first.focus()
    page.keyboard.press("ArrowRight")             # the visitor moves the slider of a page whose kernel is gone
    assert "Reload the page" in _banner(page)
    page.screenshot(path=str(screenshot_dir / "voila_07_kernel_culled.png"))
    page.context.close()

    page, kernel_id = _open_showdown(browser, showdown_server)
    process = _kernel_process(showdown_server, kernel_id)
    page.close(run_before_unload=True)            # the visitor closes the tab
    process.wait(timeout=30)                      # its kernel is shut down, not left to the culler
