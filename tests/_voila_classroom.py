"""A Voilà server started through ``python -m dpexplore.apps`` on a folder of small notebooks, for
the tests of the classroom settings (pools, culling): tiny pages that start in a second.

The server runs from a temporary folder with a copy of the repository's ``voila.json`` (Voilà
reads it from its working directory), on a free localhost port, with temporary Jupyter
directories; ``stop()`` ends it. Kernel processes are found as the server's children. The server's requests
go through one cookie jar, as one browser's would: the class server answers a kernel's requests
only from the visitor (cookie) its page was handed to; ``stranger()`` gives another visitor.
"""
from __future__ import annotations

import http.cookiejar
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
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]


def wait_until(predicate, timeout: float) -> bool:
    """Poll ``predicate`` every 0.25 s until it is true or ``timeout`` seconds passed: its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.25)
    return predicate()


def tiny_notebook(path: Path, cells: list) -> Path:
    """A notebook of code cells: each a source, or (source, tags)."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(c) if isinstance(c, str) else
                nbformat.v4.new_code_cell(c[0], metadata={"tags": list(c[1])}) for c in cells]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class VoilaServer:
    """``python -m dpexplore.apps <root> <args>`` on 127.0.0.1; the environment has no thread
    variables (the launcher sets them) and the repository on ``PYTHONPATH``."""

    def __init__(self, root: Path, tmp: Path, args: list[str] = (), ready_timeout: float = 120):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        tmp.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / "voila.json", tmp / "voila.json")
        env = {k: v for k, v in os.environ.items()
               if k not in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "DPEXPLORE_QUICK")}
        for var, sub in (("JUPYTER_RUNTIME_DIR", "runtime"), ("JUPYTER_CONFIG_DIR", "config"), ("IPYTHONDIR", "ipython")):
            (tmp / sub).mkdir(exist_ok=True)
            env[var] = str(tmp / sub)
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
        env["PYTHONUNBUFFERED"] = "1"
        self.log = tmp / "server.log"
        self._fh = open(self.log, "w")
        self.visitor = Visitor(self)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "dpexplore.apps", "--no-browser", f"--port={self.port}", "--Voila.ip=127.0.0.1",
             "--Voila.port_retries=0", "--show_tracebacks=True", *args, str(root)],
            cwd=tmp, env=env, stdout=self._fh, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + ready_timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"Voilà exited with {self.proc.returncode}:\n{self.log_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/", timeout=5):
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"Voilà not ready after {ready_timeout} s:\n{self.log_text()[-3000:]}")
                time.sleep(0.3)

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_log(self, pattern: str, timeout: float = 120) -> re.Match:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = re.search(pattern, self.log_text())
            if m:
                return m
            time.sleep(0.2)
        raise AssertionError(f"{pattern!r} not in the server log after {timeout} s:\n{self.log_text()[-3000:]}")

    def kernel_processes(self) -> list:
        """The server's live kernel processes: a kernel that exited but is not yet reaped (a
        zombie, whose command line can no longer be read) or one gone meanwhile is not counted."""
        import psutil

        live = []
        for p in psutil.Process(self.proc.pid).children():
            try:
                if p.status() != psutil.STATUS_ZOMBIE and any("ipykernel" in part for part in p.cmdline()):
                    live.append(p)
            except (psutil.ZombieProcess, psutil.NoSuchProcess):
                continue
        return live

    def stranger(self) -> "Visitor":
        """Another visitor of this server: a browser with cookies of its own."""
        return Visitor(self)

    def page(self, name: str = "", timeout: float = 120) -> tuple[str, str]:
        return self.visitor.page(name, timeout)

    def kernel_exists(self, kernel_id: str) -> bool:
        return self.visitor.kernel_exists(kernel_id)

    def connect(self, kernel_id: str):
        return self.visitor.connect(kernel_id)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._fh.close()


class Visitor:
    """One browser's requests to a :class:`VoilaServer`: its own cookies (the visitor cookie of the
    class server, the ``_xsrf`` cookie)."""

    def __init__(self, server: VoilaServer):
        self.server = server
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def cookies(self) -> dict[str, str]:
        return {c.name: c.value for c in self.jar}

    def get(self, path: str, timeout: float = 120) -> tuple[int, str]:
        """``GET path``: (status, body), errors included."""
        try:
            with self.opener.open(f"{self.server.url}{path}", timeout=timeout) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as err:
            return err.code, err.read().decode(errors="replace")

    def request(self, path: str, method: str, data: bytes | None = None, timeout: float = 30) -> int:
        """A ``method`` request (``DELETE``, ``POST``) with this visitor's ``_xsrf``: its status."""
        xsrf = self.cookies().get("_xsrf", "")
        request = urllib.request.Request(f"{self.server.url}{path}", method=method, data=data,
                                         headers={"X-XSRFToken": xsrf})
        try:
            with self.opener.open(request, timeout=timeout) as response:
                return response.status
        except urllib.error.HTTPError as err:
            return err.code

    def page(self, name: str = "", timeout: float = 120) -> tuple[str, str]:
        """GET the page (Voilà streams it until the notebook has run): (html, kernel id). ``name``
        is the notebook of a folder (``/voila/render/<name>``), "" for the one app of a server."""
        status, html = self.get(f"/voila/render/{name}" if name else "/", timeout)
        assert status == 200, f"page {name!r}: {status}\n{html[-2000:]}"
        config = re.search(r'<script id="jupyter-config-data" type="application/json">\s*(\{.*?\})\s*</script>',
                           html, re.S)
        return html, json.loads(config.group(1))["kernelId"]

    def kernel_exists(self, kernel_id: str) -> bool:
        """``GET /api/kernels/<id>`` answers 200 (the kernel lives and is this visitor's)."""
        status, _ = self.get(f"/api/kernels/{kernel_id}", timeout=10)
        if status not in (200, 404):
            raise AssertionError(f"GET /api/kernels/{kernel_id}: {status}")
        return status == 200

    def connect(self, kernel_id: str):
        """A websocket to the kernel, as the page's widget manager opens it (websocket-client)."""
        import websocket

        cookie = "; ".join(f"{k}={v}" for k, v in self.cookies().items())
        return websocket.create_connection(f"ws://127.0.0.1:{self.server.port}/api/kernels/{kernel_id}/channels",
                                           timeout=10, cookie=cookie or None)
