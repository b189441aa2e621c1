"""Drive JupyterLab in Debian's Chromium (Playwright; nothing is downloaded): start a server on a
folder of notebooks, open a notebook, Run All, find its explorers, move their controls with the
keyboard and time the redraw in the page. Shared by the browser tests (``tests/browser``) and
``benchmarks/widget_latency_browser.py``: one piece of code for each of these steps.
"""
from __future__ import annotations

import ast
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
CHROMIUM = Path(os.environ.get("DPEXPLORE_CHROMIUM", "/usr/bin/chromium"))
VIEWPORT = {"width": 1400, "height": 1000}

# text that must never be on a page (checked on the page's inner text)
PAGE_PROBLEMS = {
    "Error loading script": re.compile(r"Error loading script[^\n]*"),
    "Error displaying widget": re.compile(r"Error displaying widget[^\n]*"),
    "Javascript Error": re.compile(r"Javascript Error[^\n]*"),
    "raw widget repr": re.compile(r"\b(?:VBox|HBox|Box|GridBox|Tab|Accordion)\(children=[^\n]{0,60}"),
}


def skip_reason() -> str | None:
    """Why the browser cannot run here, or None."""
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing (apt-get install chromium): browser tests skipped"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install playwright): browser tests skipped"
    return None


# ----------------------------------------------------------------------------- servers
def root_flag() -> list[str]:
    """CI containers run as root; Jupyter refuses that without --allow-root."""
    return ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_env(tmp: Path, quick: bool = True) -> dict:
    env = dict(os.environ)
    for var, sub in (("JUPYTER_RUNTIME_DIR", "runtime"), ("JUPYTER_CONFIG_DIR", "config"),
                     ("JUPYTERLAB_SETTINGS_DIR", "settings"), ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"),
                     ("IPYTHONDIR", "ipython")):
        (tmp / sub).mkdir(parents=True, exist_ok=True)
        env[var] = str(tmp / sub)
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    # no "notified about Jupyter news?" toast over the notebook (it would fetch from the internet)
    news = tmp / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    news.parent.mkdir(parents=True, exist_ok=True)
    news.write_text('{"fetchNews": "false", "checkForUpdates": false}')
    if quick:
        env["DPEXPLORE_QUICK"] = "1"
    else:
        env.pop("DPEXPLORE_QUICK", None)
    # the notebooks import dpexplore from the repository, wherever the server runs
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env


def _wait_http(url: str, proc: subprocess.Popen, log: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.5)
    raise RuntimeError(f"server at {url} not ready after {timeout} s:\n{log.read_text()[-3000:]}")


class Server:
    """A server process on a free localhost port; ``stop()`` ends it (and only it)."""

    def __init__(self, args: list[str], url: str, probe: str, tmp: Path, quick: bool = True):
        self.url = url
        self.log = tmp / "server.log"
        self._fh = open(self.log, "w")
        self.proc = subprocess.Popen(args, cwd=tmp, env=server_env(tmp, quick), stdout=self._fh,
                                     stderr=subprocess.STDOUT)
        try:
            _wait_http(probe, self.proc, self.log)
        except Exception:
            self.stop()
            raise

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._fh.close()


def copy_notebooks(target: Path, extra: list[Path] = ()) -> Path:
    """Copies of the stored notebooks (servers may write to them) and the results they read."""
    target.mkdir(parents=True, exist_ok=True)
    for nb in list(NOTEBOOKS.glob("*.ipynb")) + list(extra):
        shutil.copy(nb, target / nb.name)
    for sub in ("results", "data"):   # cached sweep results the notebooks load by relative path
        if (NOTEBOOKS / sub).is_dir() and not (target / sub).exists():
            shutil.copytree(NOTEBOOKS / sub, target / sub)
    return target


def start_lab(root: Path, tmp: Path, quick: bool = True) -> Server:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    return Server([sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
                   "--ServerApp.port_retries=0", "--IdentityProvider.token=", "--ServerApp.password=",
                   f"--ServerApp.root_dir={root}", "--LabApp.expose_app_in_browser=True",
                   "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
                  + root_flag(), url, f"{url}/lab", tmp, quick)


def new_page(browser, offline: bool = True):
    """A 1400×1000 page; with ``offline`` every request not to the local server is aborted at
    once (a CDN request that hangs would otherwise hold the page's load event). The aborted URLs
    are collected in ``page.aborted``."""
    context = browser.new_context(viewport=VIEWPORT)
    pg = context.new_page()
    pg.aborted = []

    def route(r):
        if r.request.url.startswith("http://127.0.0.1") or not offline:
            r.continue_()
        else:
            pg.aborted.append(r.request.url)
            r.abort()

    pg.route("**/*", route)
    pg.set_default_timeout(60_000)
    return pg


# ----------------------------------------------------------------------------- the notebook in Lab
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


def lab_state(page) -> dict | None:
    return page.evaluate(LAB_STATE_JS)


def wait_lab(page, predicate, timeout: float, what: str) -> dict:
    deadline = time.monotonic() + timeout
    state = None
    while time.monotonic() < deadline:
        state = lab_state(page)
        if state is not None and predicate(state):
            return state
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}; last state {state}")


def open_notebook(page, url: str, name: str, kernel: bool = True) -> None:
    page.goto(f"{url}/lab/tree/{name}")
    if kernel:
        wait_lab(page, lambda s: s["status"] == "idle" and s["ready"], 180, "the kernel to start")
    else:
        wait_lab(page, lambda s: True, 120, "the notebook to open")
    if page.locator(".jp-Dialog").count():          # e.g. a kernel or trust prompt
        page.keyboard.press("Escape")


_RUN_BELOW_JS = """() => {
  const panel = window.jupyterapp.shell.currentWidget, nb = panel.content, cells = nb.model.cells;
  let next = -1;
  for (let i = cells.length - 1; i >= 0; i--) {
    const c = cells.get(i);
    if (c.type !== 'code') continue;
    if (c.executionCount !== null) break;
    next = i;
  }
  if (next < 0) return false;
  nb.activeCellIndex = next;
  window.jupyterapp.commands.execute('notebook:run-all-below');
  return true;
}"""


def run_all(page, name: str, timeout: float = 900, keep_going: bool = False) -> tuple[dict, float]:
    """Clear the stored outputs, Run All, wait for the kernel to be idle. Returns (state, seconds).
    Lab stops at a cell error; with ``keep_going`` the cells below it are run too (the benchmark
    measures the explorers even when an unrelated cell fails), and every error is reported."""
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
    wait_lab(page, lambda s: s["pending"] == s["code"], 30, "outputs to clear")
    start = time.monotonic()
    for attempt in range(3):   # a run-all sent while the kernel connection settles can be dropped
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        try:
            wait_lab(page, lambda s: s["pending"] < s["code"] or s["busy"] or s["status"] == "busy", 60,
                     "the first cell to start")
            break
        except AssertionError:
            if attempt == 2:
                raise
    done = lambda s: s["status"] == "idle" and not s["busy"] and (s["pending"] == 0 or bool(s["errors"]))  # noqa: E731
    state = wait_lab(page, done, timeout, f"all cells of {name} to run")
    for _ in range(10 if keep_going else 0):
        if not state["errors"] or state["pending"] == 0 or not page.evaluate(_RUN_BELOW_JS):
            break
        time.sleep(1.0)
        errors = len(state["errors"])
        state = wait_lab(page, lambda s: s["status"] == "idle" and not s["busy"]
                         and (s["pending"] == 0 or len(s["errors"]) > errors), timeout, f"the cells of {name} below an error")
    return state, time.monotonic() - start


def page_problems(page) -> list[str]:
    """Every occurrence of PAGE_PROBLEMS in the page's text."""
    text = page.inner_text("body")
    return [f"{what}: {m.group(0)[:120]}" for what, rx in PAGE_PROBLEMS.items() for m in rx.finditer(text)]


# ----------------------------------------------------------------------------- explorers
EXPLORER_CALL = re.compile(r"\b([A-Z]\w*(?:Explorer|App)|\w+_explorer)\s*\(")


def explorer_names(ipynb: Path) -> dict[int, str]:
    """Cell index → explorer name for code cells that build or display an explorer: the class or
    function called in the cell, else the class of the variable the cell displays (``x.widget``)."""
    nb = json.loads(ipynb.read_text())
    assigned: dict[str, str] = {}
    out: dict[int, str] = {}
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        src = "".join(cell["source"])
        for m in re.finditer(r"^(\w+)\s*=\s*(?:\w+\.)?([A-Z]\w*(?:Explorer|App)|\w+_explorer)\s*\(", src, re.M):
            assigned[m.group(1)] = m.group(2)
        calls = EXPLORER_CALL.findall(src)
        if calls:
            out[i] = calls[-1]
            continue
        try:
            body = ast.parse(src).body
        except SyntaxError:
            continue
        last = body[-1] if body else None
        if isinstance(last, ast.Expr):
            names = [n.id for n in ast.walk(last.value) if isinstance(n, ast.Name)]
            for n in names:
                if n in assigned:
                    out[i] = assigned[n]
                    break
    return out


FIND_CONTROLS_JS = """
() => {
  const nb = window.jupyterapp.shell.currentWidget.content;
  const found = [];
  nb.widgets.forEach((cell, i) => {
    if (cell.model.type !== 'code') return;
    const area = cell.node.querySelector('.jp-OutputArea');
    if (!area) return;
    const label = el => { const l = el.querySelector('.widget-label'); return l ? l.textContent.trim() : ''; };
    const sliders = [...area.querySelectorAll('.widget-slider')].map(label);
    const dropdowns = [...area.querySelectorAll('.widget-dropdown')].map(label);
    if (sliders.length || dropdowns.length) found.push({cell: i, sliders, dropdowns});
  });
  return found;
}
"""


@dataclass
class Control:
    cell: int             # index of the notebook cell whose output holds the explorer
    explorer: str         # e.g. "NoiseExplorer"
    kind: str             # "slider" or "dropdown"
    index: int            # among the cell's controls of that kind
    label: str            # the control's description


def find_controls(page, names: dict[int, str]) -> list[Control]:
    """One control per explorer (a cell output with sliders or dropdowns): its first slider
    labelled with ε, else its first slider, else its first dropdown."""
    out = []
    for f in page.evaluate(FIND_CONTROLS_JS):
        name = names.get(f["cell"], f"cell {f['cell']}")
        eps = [j for j, lab in enumerate(f["sliders"]) if "ε" in lab]
        if f["sliders"]:
            j = eps[0] if eps else 0
            out.append(Control(f["cell"], name, "slider", j, f["sliders"][j]))
        else:
            out.append(Control(f["cell"], name, "dropdown", 0, f["dropdowns"][0]))
    return out


_LOCATE_JS = """
  const nb = window.jupyterapp.shell.currentWidget.content;
  const cellNode = nb.widgets[a.cell].node;
  const area = cellNode.querySelector('.jp-OutputArea');
  const ctl = area.querySelectorAll(a.kind === 'slider' ? '.widget-slider' : '.widget-dropdown')[a.index];
  const focusable = a.kind === 'slider' ? ctl.querySelector('.noUi-handle') : ctl.querySelector('select');
  const readout = () => a.kind === 'slider' ? (ctl.querySelector('.widget-readout') || {}).textContent || ''
                                            : focusable.value;
"""

ARM_JS = "(a) => {" + _LOCATE_JS + """
  if (window.__lat && window.__lat.obs) window.__lat.obs.disconnect();
  const lat = window.__lat = {muts: [], t0: null, status: [], draws: 0, readout};
  // a chart drawn by Vega: its canvas or svg of class "marks" enters the page
  lat.charts = () => [...area.querySelectorAll('.marks')].filter(e => !ctl.contains(e)).length;
  lat.obs = new MutationObserver(recs => {
    const t = performance.now();
    if (recs.some(r => !ctl.contains(r.target))) lat.muts.push(t);
    for (const r of recs) for (const n of r.addedNodes)
      if (n.nodeType === 1) lat.draws += n.classList.contains('marks') + n.querySelectorAll('.marks').length;
  });
  lat.obs.observe(area, {subtree: true, childList: true, attributes: true, characterData: true});
  if (!window.__latKey) {
    window.__latKey = true;
    document.addEventListener('keydown', () => { if (window.__lat && window.__lat.t0 === null) window.__lat.t0 = performance.now(); }, {capture: true});
  }
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  if (window.__latKernel !== kernel) {
    window.__latKernel = kernel;
    kernel.statusChanged.connect((_, s) => { if (window.__lat) window.__lat.status.push([performance.now(), s]); });
  }
  focusable.scrollIntoView({block: 'center'});
  focusable.focus();
  return readout();
}
"""

RESET_JS = "() => { const l = window.__lat; l.muts = []; l.t0 = null; l.status = []; l.draws = 0; return l.readout(); }"

WAIT_JS = """
async ([settle, timeout, quietNoRedraw]) => {
  const l = window.__lat;
  const start = performance.now();
  while (true) {
    await new Promise(r => setTimeout(r, 15));
    const now = performance.now();
    if (now - start > timeout) return {result: 'timeout', readout: l.readout()};
    if (l.t0 === null) continue;
    const busy = l.status.filter(([t, s]) => s === 'busy').map(([t]) => t);
    const idle = l.status.filter(([t, s]) => s === 'idle').map(([t]) => t);
    const lastBusy = busy.length ? busy[busy.length - 1] : null;
    const idleAfter = idle.length && (lastBusy === null || idle[idle.length - 1] >= lastBusy);
    const kernelDone = lastBusy === null ? now - l.t0 > settle : idleAfter;
    if (!kernelDone) continue;
    if (l.muts.length) {
      const last = l.muts[l.muts.length - 1];
      if (now - last >= settle) return {result: 'ok', ms: last - l.t0, n: l.muts.length, readout: l.readout(),
                                        draws: [l.draws, l.charts()]};
    } else if (now - l.t0 > quietNoRedraw) {
      return {result: 'no redraw', readout: l.readout()};
    }
  }
}
"""


def press_and_time(page, control: Control, presses: int = 15, settle_ms: float = 150,
                   timeout_ms: float = 60_000, no_redraw_ms: float = 5_000) -> dict:
    """Focus ``control`` and press ArrowRight (ArrowLeft once the control stops moving, and back)
    ``presses`` times, each time waiting for the redraw (a dropdown gets its next option). The latency of a press is the time from
    its keydown to the last mutation of the explorer's output (outside the control itself) that
    is followed by ``settle_ms`` of quiet after the kernel went idle; the quiet is not counted.
    Returns {"times": [ms...], "values": [...], "no_redraw": k, "timeouts": k, "draws": [(charts
    drawn by the press, charts shown after it)...]}: a press that draws a chart twice (JupyterLab
    does when a chart's bundle has no "image/png") draws more charts than it shows."""
    a = {"cell": control.cell, "kind": control.kind, "index": control.index}
    page.evaluate(ARM_JS, a)
    keys = ("ArrowRight", "ArrowLeft")
    direction, times, values, no_redraw, timeouts, stuck, draws = 0, [], [], 0, 0, 0, []
    while len(times) + no_redraw + timeouts < presses and stuck < 4:
        page.evaluate(_FOCUS_JS, a)
        before = page.evaluate(RESET_JS)
        if control.kind == "slider":
            page.keyboard.press(keys[direction])
        elif not page.evaluate(_SELECT_NEXT_JS, {**a, "step": 1 if direction == 0 else -1}):
            direction, stuck = 1 - direction, stuck + 1   # a closed <select> ignores arrow keys in
            continue                                      # headless Chromium: next option, by script
        r = page.evaluate(WAIT_JS, [settle_ms, timeout_ms, no_redraw_ms])
        if r["readout"] == before:           # at the end of its range: turn around (not counted)
            direction, stuck = 1 - direction, stuck + 1
            continue
        stuck = 0
        values.append(r["readout"])
        if r["result"] == "ok":
            times.append(float(r["ms"]))
            draws.append(tuple(r["draws"]))
        elif r["result"] == "no redraw":
            no_redraw += 1
        else:
            timeouts += 1
    return {"times": times, "values": values, "no_redraw": no_redraw, "timeouts": timeouts, "draws": draws}


_SELECT_NEXT_JS = "(a) => {" + _LOCATE_JS + """
  const i = focusable.selectedIndex + a.step;
  if (i < 0 || i >= focusable.options.length) return false;
  window.__lat.t0 = performance.now();
  focusable.selectedIndex = i;
  focusable.dispatchEvent(new Event('change', {bubbles: true}));
  return true;
}"""

_FOCUS_JS = "(a) => {" + _LOCATE_JS + "if (document.activeElement !== focusable) focusable.focus(); return 0; }"


def chart_fingerprint(page, cell: int) -> str:
    """What the explorer's cell output draws now: its markup plus the pixels of its canvases."""
    return page.evaluate("""(cell) => {
      const nb = window.jupyterapp.shell.currentWidget.content;
      const area = nb.widgets[cell].node.querySelector('.jp-OutputArea');
      const parts = [];
      area.querySelectorAll('.widget-output, .jp-RenderedVegaCommon5, .vega-embed, img, svg').forEach(e => {
        if (!e.closest('.widget-slider')) parts.push(e.outerHTML.length + ':' + e.outerHTML.slice(0, 20000));
      });
      area.querySelectorAll('canvas').forEach(c => { try { parts.push(c.toDataURL()); } catch (e) {} });
      return parts.join('|');
    }""", cell)
