"""A class arrives at once: N visitors open one Voilà app page on one server, move ε once, leave.

    python benchmarks/voila_load_test.py 07 --visitors 1 5 10 20 30           # one cold server per N
    python benchmarks/voila_load_test.py 07 --visitors 30 --pool 30 --browser  # the class recipe
    python benchmarks/voila_load_test.py 07 --visitors 10 --code /tmp/old-checkout --label before

For each N a fresh server is started through ``python -m dpexplore.apps`` (the checkout's own
``voila.json`` and template; ``--pool N`` and ``--pool-max M`` if given) on a temporary folder holding the page and the
stored results it reads, on 127.0.0.1 only. When the server keeps a pool of pre-heated kernels the
visitors come once it is full, as in the recipe (start the server before the lab); the time it
took and the kernels' memory then are printed. Then N visitors arrive ``--stagger`` seconds apart
(0.5 s: 30 visitors within 15 s). Each is a plain HTTP client, so the server's cores are the
server's alone:

1. **page**: GET ``/voila/render/<page>`` and read it to its end (Voilà streams the page while the
   notebook runs and ends it with the last cell), then open the kernel's websocket and fetch the
   widgets' state, as the page's widget manager does (``jupyter.widget.control``
   ``request_states``): a chart inside a widget is in that state. *Page complete* is the time
   from arrival to that state;
2. **redraw**: one step of the page's first ε slider (a ``comm_msg`` update, as a key press
   sends), timed until the kernel is idle again, with the redraw's outputs received;
3. **leave**: the request the page sends when closed (``voila/api/shutdown`` with the page's
   ``_xsrf`` cookie), then the websocket closes.

With ``--browser`` one of the visitors (the middle one) is Debian's Chromium instead (Playwright,
every non-local request aborted): the time a student sees from the request to the last chart
drawn, and from the key press on the ε slider to the end of the redraw in the page (the last
change of the chart's widget, followed by 300 ms of quiet). Its browser shares the cores.

Printed per N, and written to ``benchmarks/results/voila_load_<label>.csv``: page complete median
and max, visitors that never finished within ``--deadline``, redraw median and max, the
browser's figures, the peak memory of all kernels, kernels still alive 5 s after everyone left,
and the load average when the run started (other work on the machine inflates the figures).
Bounded: at most 60 visitors, each given up after ``--deadline`` seconds.
"""
from __future__ import annotations

import argparse
import asyncio
import csv
import datetime
import json
import math
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
CHROMIUM = Path(os.environ.get("DPEXPLORE_CHROMIUM", "/usr/bin/chromium"))
MAX_VISITORS = 60
SLIDERS = ("SelectionSliderModel", "FloatLogSliderModel", "FloatSliderModel", "IntSliderModel")
FIELDS = ["label", "page", "visitors", "stagger_s", "pool", "warm_s", "warm_memory_gb", "complete_median_s",
          "complete_max_s", "never_finished", "redraw_median_s", "redraw_max_s", "no_redraw", "browser_last_chart_s",
          "browser_redraw_s", "kernel_memory_peak_gb", "kernels_after_leave", "load_average", "errors"]


# ----------------------------------------------------------------------------- the served page
def served_notebook(code: Path, prefix: str, folder: Path) -> str:
    """Copy the page ``prefix`` of checkout ``code`` (and the results it reads) into ``folder``.

    From the current checkout the page is the student version built from the jupytext source
    (what ``notebooks/build.py`` stores); from another checkout (``--code``) its stored ``.ipynb``.
    """
    notebooks = code / "notebooks"
    shutil.copytree(notebooks / "results", folder / "results")
    if code.resolve() != ROOT.resolve():
        source = sorted(notebooks.glob(f"{prefix}*.ipynb"))[0]
        shutil.copy(source, folder / source.name)
        return source.name
    import jupytext
    import nbformat

    source = sorted(notebooks.glob(f"{prefix}*.py"))[0]
    nb = jupytext.read(source)
    try:
        sys.path.insert(0, str(notebooks))
        from _versions import student_version

        nb = student_version(nb, source.name)
    except ImportError:
        pass
    finally:
        sys.path.remove(str(notebooks))
    name = source.with_suffix(".ipynb").name
    nbformat.write(nb, folder / name)
    return name


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``python -m dpexplore.apps`` of checkout ``code`` serving ``folder`` on 127.0.0.1."""

    def __init__(self, code: Path, folder: Path, tmp: Path, extra: list[str]):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        shutil.copy(code / "voila.json", tmp / "voila.json")
        env = {k: v for k, v in os.environ.items() if k != "DPEXPLORE_QUICK"}
        for var, sub in (("JUPYTER_RUNTIME_DIR", "runtime"), ("JUPYTER_CONFIG_DIR", "config"), ("IPYTHONDIR", "ipython")):
            (tmp / sub).mkdir(exist_ok=True)
            env[var] = str(tmp / sub)
        env.update(PYTHONPATH=str(code), PYTHONUNBUFFERED="1")
        self.log = tmp / "server.log"
        self._fh = open(self.log, "w")
        self.proc = subprocess.Popen([sys.executable, "-m", "dpexplore.apps", "--no-browser", f"--port={self.port}",
                                      "--Voila.ip=127.0.0.1", "--Voila.port_retries=0", *extra, str(folder)],
                                     cwd=tmp, env=env, stdout=self._fh, stderr=subprocess.STDOUT)
        self._wait(lambda: self._get_ok(f"{self.url}/"), 120, "the server to answer")

    def _get_ok(self, url: str) -> bool:
        import urllib.request

        try:
            with urllib.request.urlopen(url, timeout=5):
                return True
        except OSError:
            return False

    def _wait(self, predicate, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"waiting for {what}:\n{self.log.read_text()[-3000:]}")
            time.sleep(0.2)

    def wait_pool(self, timeout: float = 900) -> bool:
        """Wait until a pool is full (False if the server keeps none)."""
        time.sleep(2)
        if "Kernel pool of" not in self.log.read_text() and not self.kernels():
            return False
        self._wait(lambda: re.search(r"Kernel pool of .* is filled", self.log.read_text()), timeout, "the kernel pool")
        return True

    def kernels(self) -> list:
        import psutil

        try:
            return [p for p in psutil.Process(self.proc.pid).children()
                    if any("ipykernel" in part for part in p.cmdline())]
        except psutil.Error:
            return []

    def kernel_memory(self) -> float:
        import psutil

        total = 0
        for p in self.kernels():
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        return total / 2**30

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._fh.close()


# ----------------------------------------------------------------------------- a plain visitor
def _message(session: str, msg_type: str, content: dict, metadata: dict | None = None) -> dict:
    return {"header": {"msg_id": uuid.uuid4().hex, "username": "visitor", "session": session, "msg_type": msg_type,
                       "version": "5.3", "date": datetime.datetime.now(datetime.timezone.utc).isoformat()},
            "parent_header": {}, "metadata": metadata or {}, "content": content, "channel": "shell", "buffers": []}


def _next_value(state: dict):
    """The state change one ArrowRight key press on this slider sends (ArrowLeft at its end)."""
    name = state["_model_name"]
    if name == "SelectionSliderModel":
        i, n = state["index"], len(state["_options_labels"])
        return {"index": i + 1 if i + 1 < n else i - 1}
    if name == "FloatLogSliderModel":
        exponent = math.log(state["value"], state["base"]) + state["step"]
        if exponent > state["max"]:
            exponent -= 2 * state["step"]
        return {"value": state["base"] ** exponent}
    value = state["value"] + state["step"]
    return {"value": value if value <= state["max"] else state["value"] - state["step"]}


async def plain_visitor(url: str, page: str, deadline: float) -> dict:
    """One visitor's page, first slider move and leaving; times in seconds from its arrival."""
    from tornado.httpclient import AsyncHTTPClient, HTTPRequest
    from tornado.websocket import websocket_connect

    t0 = time.monotonic()
    out = {"complete": None, "redraw": None, "redrew": False, "error": ""}
    chunks, cookies = [], {}

    def header(line: str) -> None:
        m = re.match(r"Set-Cookie:\s*([^=]+)=([^;]*)", line, re.I)
        if m:
            cookies[m.group(1)] = m.group(2)

    try:
        await AsyncHTTPClient().fetch(HTTPRequest(f"{url}/voila/render/{page}", request_timeout=deadline,
                                                  streaming_callback=chunks.append, header_callback=header))
        html = b"".join(chunks).decode()
        if "window.voila_finish()" not in html:
            raise RuntimeError("the page ended before its last cell")
        if "There was an error when executing cell" in html or '"output_type": "error"' in html:
            out["error"] = "cell error"
        kernel = json.loads(re.search(r'<script id="jupyter-config-data" type="application/json">\s*(\{.*?\})\s*</script>',
                                      html, re.S).group(1))["kernelId"]
        session = uuid.uuid4().hex
        cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
        ws = await asyncio.wait_for(websocket_connect(HTTPRequest(
            f"{url.replace('http', 'ws', 1)}/api/kernels/{kernel}/channels?session_id={session}",
            headers={"Cookie": cookie} if cookie else {})), deadline - (time.monotonic() - t0))

        async def reply(parent: str, until) -> list:
            got = []
            while True:
                remaining = deadline - (time.monotonic() - t0)
                raw = await asyncio.wait_for(ws.read_message(), max(remaining, 0.01))
                if raw is None:
                    raise RuntimeError("the kernel's websocket closed")
                if not isinstance(raw, str):
                    continue
                msg = json.loads(raw)
                if msg.get("parent_header", {}).get("msg_id") == parent:
                    got.append(msg)
                    if until(msg):
                        return got

        info = _message(session, "kernel_info_request", {})
        await ws.write_message(json.dumps(info))
        await reply(info["header"]["msg_id"], lambda m: m["msg_type"] == "kernel_info_reply")
        control = uuid.uuid4().hex
        await ws.write_message(json.dumps(_message(session, "comm_open", {"comm_id": control, "target_name":
                                                                   "jupyter.widget.control", "data": {}},
                                                   {"version": "1.0.0"})))   # ipywidgets' control protocol
        ask = _message(session, "comm_msg", {"comm_id": control, "data": {"method": "request_states"}})
        await ws.write_message(json.dumps(ask))
        got = await reply(ask["header"]["msg_id"], lambda m: m["msg_type"] == "comm_msg"
                          and m["content"]["data"].get("method") == "update_states")
        states = got[-1]["content"]["data"]["states"]
        out["complete"] = time.monotonic() - t0
        sliders = [(mid, s["state"]) for mid, s in states.items() if s["state"].get("_model_name") in SLIDERS]
        eps = [x for x in sliders if "ε" in (x[1].get("description") or "")] or sliders
        if not eps:
            raise RuntimeError("no slider on the page")
        model, state = eps[0]
        move = _message(session, "comm_msg", {"comm_id": model, "data": {"method": "update", "state": _next_value(state),
                                                                        "buffer_paths": []}})
        t1 = time.monotonic()
        await ws.write_message(json.dumps(move))
        got = await reply(move["header"]["msg_id"], lambda m: m["msg_type"] == "status"
                          and m["content"]["execution_state"] == "idle")
        out["redraw"] = time.monotonic() - t1
        out["redrew"] = any(m["msg_type"] in ("display_data", "clear_output") or
                            (m["msg_type"] == "comm_msg" and "outputs" in m["content"]["data"].get("state", {}))
                            for m in got)
        await _leave(url, kernel, cookies)
        ws.close()
    except Exception as exc:  # noqa: BLE001 - a visitor that fails is counted, with its reason
        out["error"] = out["error"] or f"{type(exc).__name__}: {exc}"[:120]
    return out


async def _leave(url: str, kernel: str, cookies: dict) -> None:
    """The request a closing page sends (Voilà's widget manager, ``beforeunload``)."""
    from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest

    body = f"_xsrf={cookies.get('_xsrf', '')}"
    cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
    try:
        await AsyncHTTPClient().fetch(HTTPRequest(f"{url}/voila/api/shutdown/{kernel}", method="POST", body=body,
                                                  headers={"Cookie": cookie} if cookie else {}, request_timeout=30))
    except HTTPClientError:
        pass        # refused (no _xsrf cookie): the kernel stays, as with a browser


# ----------------------------------------------------------------------------- the browser visitor
MARK_JS = """() => {
  const slider = [...document.querySelectorAll('.widget-slider')].find(s => (s.querySelector('.widget-label') || {}).textContent.includes('ε'))
                 || document.querySelector('.widget-slider');
  let box = slider.parentElement;
  while (box && !box.querySelector('.widget-output, .vega-embed')) box = box.parentElement;
  window.__moved = {t0: null, last: null};
  new MutationObserver(recs => { if (recs.some(r => !slider.contains(r.target))) window.__moved.last = performance.now(); })
    .observe(box, {subtree: true, childList: true, attributes: true, characterData: true});
  document.addEventListener('keydown', () => { if (window.__moved.t0 === null) window.__moved.t0 = performance.now(); },
                            {capture: true});
  const handle = slider.querySelector('.noUi-handle, [role=slider]');
  handle.scrollIntoView({block: 'center'});
  handle.focus();
}"""
CHARTS_JS = "() => document.querySelectorAll('.vega-embed canvas, .vega-embed svg.marks').length"


async def browser_visitor(browser, url: str, page_name: str, deadline: float) -> dict:
    out = {"last_chart": None, "redraw": None, "error": ""}
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    await page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("http://127.0.0.1") else r.abort())
    t0 = time.monotonic()
    try:
        await page.goto(f"{url}/voila/render/{page_name}", wait_until="load", timeout=deadline * 1000)
        await page.wait_for_function("() => !document.getElementById('loading') && document.querySelector('.widget-slider')",
                                     timeout=max(1, deadline - (time.monotonic() - t0)) * 1000)
        count, stable = await page.evaluate(CHARTS_JS), time.monotonic()
        while time.monotonic() - stable < 1.0 and time.monotonic() - t0 < deadline:
            await asyncio.sleep(0.1)
            now = await page.evaluate(CHARTS_JS)
            if now != count:
                count, stable = now, time.monotonic()
        out["last_chart"] = stable - t0
        await page.evaluate(MARK_JS)
        await page.keyboard.press("ArrowRight")
        start = time.monotonic()
        while time.monotonic() - start < 30:
            await asyncio.sleep(0.05)
            m = await page.evaluate("() => window.__moved")
            if m["last"] is not None and await page.evaluate("() => performance.now()") - m["last"] > 300:
                out["redraw"] = (m["last"] - m["t0"]) / 1000
                break
        await page.close(run_before_unload=True)
    except Exception as exc:  # noqa: BLE001
        out["error"] = f"browser: {type(exc).__name__}: {exc}"[:120]
    finally:
        await asyncio.sleep(1)
        await context.close()
    return out


# ----------------------------------------------------------------------------- one run
async def _visitors(server: Server, page: str, n: int, stagger: float, deadline: float, use_browser: bool) -> tuple:
    from tornado.httpclient import AsyncHTTPClient

    AsyncHTTPClient.configure(None, max_clients=MAX_VISITORS + 10)
    memory = [server.kernel_memory()]

    async def sample() -> None:
        while True:
            memory.append(server.kernel_memory())
            await asyncio.sleep(0.5)

    sampler = asyncio.ensure_future(sample())
    browser_index = n // 2 if use_browser else -1
    playwright = browser = None
    if use_browser:
        from playwright.async_api import async_playwright

        playwright = await async_playwright().start()
        browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])

    async def arrive(i: int):
        await asyncio.sleep(i * stagger)
        if i == browser_index:
            return await browser_visitor(browser, server.url, page, deadline)
        return await plain_visitor(server.url, page, deadline)

    try:
        results = await asyncio.gather(*(arrive(i) for i in range(n)))
    finally:
        if browser is not None:
            await browser.close()
            await playwright.stop()
    await asyncio.sleep(5)
    sampler.cancel()
    return results, max(memory), len(server.kernels())


def run(code: Path, prefix: str, n: int, args: argparse.Namespace) -> dict:
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="voila-load-") as tmp:
        tmp = Path(tmp)
        folder = tmp / "served"
        folder.mkdir()
        page = served_notebook(code, prefix, folder)
        extra = ["--pool", str(args.pool)] if args.pool is not None else []
        extra += ["--pool-max", str(args.pool_max)] if args.pool_max is not None else []
        # every visitor comes from 127.0.0.1: one address, as behind a NAT (the class server's
        # per-client bound would refuse all but the first few)
        extra.append(f"--ClassroomVoila.max_kernels_per_client={n + 1}")
        t0 = time.monotonic()
        server = Server(code, folder, tmp, extra)
        try:
            pooled = server.wait_pool()
            warm = time.monotonic() - t0
            warm_memory = server.kernel_memory()
            results, peak, after = asyncio.run(_visitors(server, page, n, args.stagger, args.deadline, args.browser))
        finally:
            server.stop()
    plain = [r for r in results if "complete" in r]
    browser = [r for r in results if "last_chart" in r]
    complete = [r["complete"] for r in plain if r["complete"] is not None]
    redraw = [r["redraw"] for r in plain if r["redraw"] is not None]
    med = lambda v: round(statistics.median(v), 2) if v else None  # noqa: E731
    errors = sorted({r["error"] for r in results if r["error"]})
    return {"label": args.label, "page": page, "visitors": n, "stagger_s": args.stagger,
            "pool": (args.pool if args.pool is not None else "voila.json")
                    if args.pool_max is None else f"{args.pool if args.pool is not None else 'voila.json'} (max {args.pool_max})",
            "warm_s": round(warm, 1) if pooled else None,
            "warm_memory_gb": round(warm_memory, 2), "complete_median_s": med(complete),
            "complete_max_s": round(max(complete), 2) if complete else None,
            "never_finished": len(plain) - len(complete), "redraw_median_s": med(redraw),
            "redraw_max_s": round(max(redraw), 2) if redraw else None,
            "no_redraw": sum(1 for r in plain if r["redraw"] is not None and not r["redrew"]),
            "browser_last_chart_s": round(browser[0]["last_chart"], 2) if browser and browser[0]["last_chart"] else None,
            "browser_redraw_s": round(browser[0]["redraw"], 2) if browser and browser[0]["redraw"] else None,
            "kernel_memory_peak_gb": round(peak, 2), "kernels_after_leave": after, "load_average": round(load, 2),
            "errors": "; ".join(errors)[:300]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("page", help="notebook name prefix, e.g. 07 or 01")
    p.add_argument("--visitors", type=int, nargs="+", default=[30], help="one cold server per count (≤ 60)")
    p.add_argument("--stagger", type=float, default=0.5, help="seconds between arrivals")
    p.add_argument("--pool", type=int, default=None, help="the launcher's --pool (default: voila.json's)")
    p.add_argument("--pool-max", type=int, default=None, help="the launcher's --pool-max (default: no growth)")
    p.add_argument("--deadline", type=float, default=120.0, help="seconds after which a visitor gives up")
    p.add_argument("--browser", action="store_true", help="one visitor is Chromium (the timing a student sees)")
    p.add_argument("--code", type=Path, default=ROOT, help="checkout to serve from (default: this one)")
    p.add_argument("--label", default="current", help="name of the run in the CSV")
    args = p.parse_args()
    if any(not 1 <= n <= MAX_VISITORS for n in args.visitors):
        p.error(f"--visitors must be between 1 and {MAX_VISITORS}")
    if args.browser and not CHROMIUM.exists():
        p.error(f"{CHROMIUM} is missing (apt-get install chromium)")
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"voila_load_{args.label}.csv"
    new = not out.exists()
    for n in args.visitors:
        row = run(args.code.resolve(), args.page, n, args)
        print(" ".join(f"{k}={row[k]}" for k in FIELDS), flush=True)
        with out.open("a", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=FIELDS)
            if new:
                writer.writeheader()
                new = False
            writer.writerow(row)


if __name__ == "__main__":
    main()
