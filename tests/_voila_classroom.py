"""A Voilà server started through ``python -m dpexplore.apps`` on a folder of small notebooks, for
the tests of the classroom settings (pools, culling): tiny pages that start in a second.

The server runs from a temporary folder with a copy of the repository's ``voila.json`` (Voilà
reads it from its working directory), on a free localhost port, with temporary Jupyter
directories; ``stop()`` ends it. Kernel processes are found as the server's children.
"""
from __future__ import annotations

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


def tiny_notebook(path: Path, cells: list[str]) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
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
        import psutil

        return [p for p in psutil.Process(self.proc.pid).children()
                if any("ipykernel" in part for part in p.cmdline())]

    def page(self, name: str, timeout: float = 120) -> tuple[str, str]:
        """GET the page (Voilà streams it until the notebook has run): (html, kernel id)."""
        with urllib.request.urlopen(f"{self.url}/voila/render/{name}", timeout=timeout) as response:
            html = response.read().decode()
        config = re.search(r'<script id="jupyter-config-data" type="application/json">\s*(\{.*?\})\s*</script>',
                           html, re.S)
        return html, json.loads(config.group(1))["kernelId"]

    def kernel_exists(self, kernel_id: str) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/api/kernels/{kernel_id}", timeout=10) as r:
                return r.status == 200
        except urllib.error.HTTPError as err:
            if err.code == 404:
                return False
            raise

    def connect(self, kernel_id: str):
        """A websocket to the kernel, as the page's widget manager opens it (websocket-client)."""
        import websocket

        return websocket.create_connection(f"ws://127.0.0.1:{self.port}/api/kernels/{kernel_id}/channels",
                                           timeout=10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._fh.close()
