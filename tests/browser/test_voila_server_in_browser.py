"""The class server (``python -m dpexplore.apps``) in Chromium, on a tiny app: an ε slider that
redraws a line of text.

* The page drives its own kernel: the kernel's websocket is open to the visitor whose cookie the
  page set (``dpexplore.app_server``), so a key press on the slider redraws the text.
* A server restart (the server stopped and started again on the same port) is said at once: the
  template's kernel watch asks the server as soon as the connection drops, so the lost-kernel
  message comes from that check ("server unreachable" or "kernel not found"), not from the 10 s
  wait for a reconnection; the page's reload button then brings a working page from the new
  server. Screenshot ``voila_server_restarted.png``. No timing is asserted.
"""
from __future__ import annotations

import shutil
import sys

import pytest

from conftest import ROOT, Server, free_port

NAME = "07_showdown.ipynb"
APP = """import ipywidgets as w
out = w.Output()
slider = w.FloatSlider(description="ε", value=1.0, min=0.1, max=5.0, step=0.1)
def show(change=None):
    out.outputs = ({"output_type": "stream", "name": "stdout", "text": f"epsilon is {slider.value:.1f}"},)
slider.observe(show, "value")
show()
w.VBox([slider, out])"""


def start(root, tmp, port: int) -> Server:
    tmp.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "voila.json", tmp / "voila.json")
    url = f"http://127.0.0.1:{port}"
    return Server([sys.executable, "-m", "dpexplore.apps", "--no-browser", f"--port={port}", "--Voila.ip=127.0.0.1",
                   "--Voila.port_retries=0", str(root)], url, f"{url}/", tmp)


@pytest.fixture
def app_root(tmp_path):
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(APP)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    root = tmp_path / "root"
    root.mkdir()
    nbformat.write(nb, root / NAME)
    return root


def _open(page, url: str) -> None:
    page.goto(f"{url}/voila/render/{NAME}", wait_until="load", timeout=120_000)
    page.wait_for_function("() => document.body.getAttribute('data-dpexplore-kernel') === 'watched'",
                           timeout=60_000)


def _step(page, expected: str) -> None:
    """One ArrowRight on the slider; the kernel redraws the text."""
    page.locator(".widget-slider .noUi-handle, .widget-slider [role=slider]").first.focus()
    page.keyboard.press("ArrowRight")
    page.get_by_text(expected).wait_for(timeout=30_000)


def test_a_restarted_server_is_said_at_once_and_reload_works(app_root, tmp_path, browser, screenshot_dir):
    port = free_port()
    server = start(app_root, tmp_path / "first", port)
    context = browser.new_context(viewport={"width": 1000, "height": 700})
    try:
        page = context.new_page()
        page.set_default_timeout(60_000)
        _open(page, server.url)
        _step(page, "epsilon is 1.1")                  # the visitor's cookie opens its own kernel

        page.evaluate("""() => new MutationObserver((_, observer) => {   // when the message appears
            if (document.getElementById("dpexplore-kernel-lost")) { window.lostAt = Date.now(); observer.disconnect(); }
        }).observe(document.body, {childList: true})""")
        stopped = page.evaluate("() => Date.now()")
        server.stop()                                  # the instructor restarts the server
        server = start(app_root, tmp_path / "second", port)
        up = page.evaluate("() => Date.now()")
        page.wait_for_selector("#dpexplore-kernel-lost", state="visible", timeout=60_000)
        lost_at = page.evaluate("() => window.lostAt")
        print(f"\nlost-connection message {(lost_at - stopped) / 1000:.1f} s after the server was told to stop "
              f"(the new server answered {(up - stopped) / 1000:.1f} s after)")
        reason = page.evaluate("() => document.body.getAttribute('data-dpexplore-lost-reason')")
        page.screenshot(path=str(screenshot_dir / "voila_server_restarted.png"))
        assert reason in ("server unreachable", "kernel not found", "connection closed"), reason
        assert "Reload the page" in page.inner_text("#dpexplore-kernel-lost")

        page.get_by_role("button", name="Reload the page").click()
        page.wait_for_function("() => document.body.getAttribute('data-dpexplore-kernel') === 'watched'",
                               timeout=60_000)
        assert page.locator("#dpexplore-kernel-lost").count() == 0
        _step(page, "epsilon is 1.1")                  # a new kernel on the new server, driven again
    finally:
        context.close()
        server.stop()
