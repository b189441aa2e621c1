"""axe-core in the browser on the stored notebooks: in JupyterLab (opened, not run) and in the
HTML export a teacher posts (``jupyter nbconvert --to html``). Shared by ``tests/browser/test_axe.py``
and ``benchmarks/axe_notebooks.py``.

axe-core comes with ``axe-playwright-python`` (its ``axe.min.js``: nothing is fetched). Every
violating node is told apart by where it lies: **content** when it is inside what the notebook
itself shows (a cell's output, a rendered markdown cell), else **theme** (JupyterLab's or
nbconvert's own page: toolbars, prompts, the code editor's syntax colours). One more owner,
**widget-library**: the handle of an ipywidgets slider (noUiSlider's ``role="slider"`` element),
which ipywidgets 8 draws without an accessible name and gives no way to name from Python (its
``description`` labels the widget, its ``tooltip`` titles the label, neither reaches the handle).
"""
from __future__ import annotations

import dataclasses
import functools
import http.server
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import labdriver as lab

SEVERE = ("serious", "critical")
# rules decided by the page's stylesheet even inside the notebook's own text: a markdown link cannot
# be styled from the notebook; nbconvert's "lab" template draws links without an underline
STYLESHEET_RULES = frozenset({"link-in-text-block"})
# what the notebook itself draws, in JupyterLab and in nbconvert's "lab" template alike
CONTENT_SELECTOR = ".jp-OutputArea-output, .jp-RenderedMarkdown, .jp-MarkdownOutput"


def axe_source() -> str:
    import axe_playwright_python

    return (Path(axe_playwright_python.__file__).parent / "axe.min.js").read_text(encoding="utf-8")


@dataclass(frozen=True)
class Finding:
    rule: str
    impact: str
    owner: str        # "content", "theme" or "widget-library"
    target: str       # axe's CSS selector of the node
    html: str         # the node's markup, cut short
    summary: str      # axe's failure summary, cut short


_RUN_JS = """async ([content]) => {
  const r = await axe.run(document, {resultTypes: ['violations'], elementRef: true});
  const out = [];
  for (const v of r.violations) for (const n of v.nodes) {
    const el = n.element;
    const owner = !(el && el.closest) ? 'theme' : el.closest('.noUi-handle') ? 'widget-library'
                  : el.closest(content) ? 'content' : 'theme';
    out.push({rule: v.id, impact: n.impact || v.impact || 'minor', owner,
              target: JSON.stringify(n.target), html: (n.html || '').slice(0, 300),
              summary: (n.failureSummary || '').slice(0, 300)});
  }
  return out;
}"""


def axe_findings(page) -> list[Finding]:
    """Every node that violates an axe-core rule on the page as it is now."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate(axe_source())
    found = [Finding(**f) for f in page.evaluate(_RUN_JS, [CONTENT_SELECTOR])]
    return [dataclasses.replace(f, owner="theme") if f.rule in STYLESHEET_RULES else f for f in found]


def severe(findings: list[Finding], owner: str | None = None) -> list[Finding]:
    return [f for f in findings if f.impact in SEVERE and (owner is None or f.owner == owner)]


# ----------------------------------------------------------------------------- JupyterLab
def all_cells_attached(tmp: Path) -> None:
    """JupyterLab settings (in the server's own settings folder, see ``labdriver.server_env``)
    that attach every cell to the page, so that axe sees the whole notebook and not the
    cells near the window only."""
    path = tmp / "settings" / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"windowingMode": "none"}')


def open_stored_in_lab(page, url: str, name: str, settle: float = 30.0) -> None:
    """Open a notebook as stored (its outputs, no Run All) in a fresh workspace (no other
    notebook's tab restored beside it), and wait until its outputs have drawn."""
    lab.open_notebook(page, url, f"{name}?reset", kernel=False)
    page.locator(".jp-Notebook .jp-Cell").first.wait_for(state="attached")
    count = "() => document.querySelectorAll('.jp-Notebook .jp-OutputArea-output img, .jp-Notebook canvas, .jp-Notebook svg.marks').length"
    deadline, shown = time.monotonic() + settle, -1
    while time.monotonic() < deadline:
        time.sleep(1.5)
        now = page.evaluate(count)
        if now == shown:
            break
        shown = now


# ----------------------------------------------------------------------------- HTML export
def export_html(ipynb: Path, out_dir: Path) -> Path:
    """``jupyter nbconvert --to html`` with its defaults, as a teacher runs it."""
    out_dir.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", "--output-dir", str(out_dir),
                    str(ipynb)], check=True, capture_output=True, timeout=300)
    return out_dir / (ipynb.stem + ".html")


class StaticServer:
    """Files of a folder on a free localhost port (what ``labdriver.new_page`` lets through)."""

    def __init__(self, root: Path):
        handler = functools.partial(_QuietHandler, directory=str(root))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", lab.free_port()), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def open_html(page, url: str) -> None:
    """Open an exported page; its CDN scripts (widgets, MathJax) are refused, as offline."""
    page.goto(url, wait_until="load")
    time.sleep(1.0)
