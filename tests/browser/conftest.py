"""Servers and browser for the end-to-end tests: JupyterLab and Voilà on free localhost ports,
driven by Playwright with Debian's Chromium (/usr/bin/chromium; nothing is downloaded).

The tests skip, with the reason, when Chromium or Playwright is missing. Each server runs on a
copy of the notebooks in a temporary folder, with temporary runtime/config/settings directories
and no token, and with ``DPEXPLORE_QUICK=1`` so that the notebooks run their quick sweeps.
Every request that is not to the local server is aborted (no network, as in a classroom proxy).
Screenshots go to ``test-output/browser/`` (gitignored) or ``$DPEXPLORE_SCREENSHOT_DIR``.
The server and page helpers live in ``labdriver.py`` (shared with
``benchmarks/widget_latency_browser.py``).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from labdriver import (CHROMIUM, NOTEBOOKS, ROOT, Server, copy_notebooks, free_port,  # noqa: E402,F401
                       new_page, root_flag, skip_reason, start_lab)

FIXTURES = Path(__file__).resolve().parent / "fixtures"
_root_flag = root_flag   # the name test_voila_showdown.py imports


def pytest_collection_modifyitems(config, items):
    reason = skip_reason()
    if reason:
        for item in items:
            if "tests/browser" in str(item.fspath).replace(os.sep, "/"):
                item.add_marker(pytest.mark.skip(reason=reason))


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
    return copy_notebooks(tmp_path_factory.mktemp("served"), list(FIXTURES.glob("*.ipynb")))


@pytest.fixture
def lab_server(served_root, tmp_path_factory):
    """One JupyterLab per test: in a server that already ran a notebook, a second notebook's
    run-all was observed to queue its cells without ever executing them."""
    server = start_lab(served_root, tmp_path_factory.mktemp("lab"))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def static_lab_server(served_root, tmp_path_factory):
    """One JupyterLab for the tests that only open stored notebooks (nothing is run)."""
    server = start_lab(served_root, tmp_path_factory.mktemp("lab-static"))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def all_cells_lab(served_root, tmp_path_factory):
    """A JupyterLab that attaches every cell to the page: axe sees the whole notebook, and a cell
    far down is in the DOM without scrolling (``axedriver.all_cells_attached``)."""
    from axedriver import all_cells_attached

    tmp = tmp_path_factory.mktemp("all-cells-lab")
    all_cells_attached(tmp)
    server = start_lab(served_root, tmp)
    yield server
    server.stop()


def _voila(target: Path, tmp: Path) -> Server:
    """The package's launcher (Voilà with its fixes and the class server's rules) on ``target``:
    a folder (its app pages, /voila/render/<name>) or one notebook (served at /)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    probe = f"{url}/voila/templates/dpexplore/static/voila-style.js" if target.is_file() else f"{url}/"  # "/" takes a kernel
    return Server([sys.executable, "-m", "dpexplore.apps", "--no-browser", f"--port={port}", "--Voila.ip=127.0.0.1",
                   "--Voila.port_retries=0", "--show_tracebacks=True", "--VoilaExecutor.timeout=900", str(target)],
                  url, probe, tmp)


@pytest.fixture(scope="session")
def voila_server(served_root, tmp_path_factory):
    """The notebooks' folder, as the docs serve it: its two apps."""
    server = _voila(served_root, tmp_path_factory.mktemp("voila"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def voila_fixture_server(served_root, tmp_path_factory):
    """The tiny fixture notebook alone (a folder serves only the apps)."""
    server = _voila(served_root / "tiny_slider.ipynb", tmp_path_factory.mktemp("voila-fixture"))
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
    pg = new_page(browser, offline=True)
    yield pg
    pg.context.close()
