"""Servers and browser for the end-to-end tests: JupyterLab and Voilà on free localhost ports,
driven by Playwright with Debian's Chromium (/usr/bin/chromium; nothing is downloaded).

The tests skip, with the reason, when Chromium or Playwright is missing. Each server runs on a
copy of the notebooks in a temporary folder, with temporary runtime/config/settings directories
and no token, and with ``DPEXPLORE_QUICK=1`` so that the notebooks run their quick sweeps.
Screenshots go to ``test-output/browser/`` (gitignored) or ``$DPEXPLORE_SCREENSHOT_DIR``.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
CHROMIUM = Path(os.environ.get("DPEXPLORE_CHROMIUM", "/usr/bin/chromium"))


def _skip_reason() -> str | None:
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing (apt-get install chromium): browser tests skipped"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install playwright): browser tests skipped"
    return None


def pytest_collection_modifyitems(config, items):
    reason = _skip_reason()
    if reason:
        for item in items:
            if "tests/browser" in str(item.fspath).replace(os.sep, "/"):
                item.add_marker(pytest.mark.skip(reason=reason))


def _root_flag() -> list[str]:
    """CI containers run as root; Jupyter refuses that without --allow-root."""
    return ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def notebook_path(name: str) -> Path | None:
    """A notebook of the repository, or None when it does not exist (yet)."""
    p = NOTEBOOKS / name
    return p if p.exists() else None


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    d = Path(os.environ.get("DPEXPLORE_SCREENSHOT_DIR", ROOT / "test-output" / "browser"))
    d.mkdir(parents=True, exist_ok=True)
    return d


@pytest.fixture(scope="session")
def served_root(tmp_path_factory) -> Path:
    """A folder with copies of the notebooks (the servers may write to them) and the fixtures."""
    root = tmp_path_factory.mktemp("served")
    for nb in list(NOTEBOOKS.glob("*.ipynb")) + list(FIXTURES.glob("*.ipynb")):
        shutil.copy(nb, root / nb.name)
    return root


def _env(tmp: Path) -> dict:
    env = dict(os.environ)
    for var, sub in (("JUPYTER_RUNTIME_DIR", "runtime"), ("JUPYTER_CONFIG_DIR", "config"),
                     ("JUPYTERLAB_SETTINGS_DIR", "settings"), ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"),
                     ("IPYTHONDIR", "ipython")):
        (tmp / sub).mkdir(parents=True, exist_ok=True)
        env[var] = str(tmp / sub)
    env.update(DPEXPLORE_QUICK="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", PYTHONUNBUFFERED="1")
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
    def __init__(self, args: list[str], url: str, probe: str, tmp: Path):
        self.url = url
        self.log = tmp / "server.log"
        self._fh = open(self.log, "w")
        self.proc = subprocess.Popen(args, cwd=tmp, env=_env(tmp), stdout=self._fh, stderr=subprocess.STDOUT)
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


@pytest.fixture
def lab_server(served_root, tmp_path_factory):
    """One JupyterLab per test: in a server that already ran a notebook, a second notebook's
    run-all was observed to queue its cells without ever executing them."""
    tmp = tmp_path_factory.mktemp("lab")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = Server([sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
                     "--ServerApp.port_retries=0", "--IdentityProvider.token=", "--ServerApp.password=",
                     f"--ServerApp.root_dir={served_root}", "--LabApp.expose_app_in_browser=True",
                     "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
                    + _root_flag(), url, f"{url}/lab", tmp)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def voila_server(served_root, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("voila")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = Server([sys.executable, "-m", "voila", "--no-browser", f"--port={port}", "--Voila.ip=127.0.0.1",
                     "--Voila.port_retries=0", "--show_tracebacks=True", "--VoilaExecutor.timeout=900",
                     str(served_root)],
                    url, f"{url}/", tmp)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    # no network in CI: refuse anything that is not the local server at once (a CDN request
    # that hangs would otherwise hold the page's load event)
    pg.route("**/*", lambda route: route.continue_() if route.request.url.startswith("http://127.0.0.1")
             else route.abort())
    pg.set_default_timeout(60_000)
    yield pg
    context.close()
