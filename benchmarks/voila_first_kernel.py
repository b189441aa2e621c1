"""Reproduce the Voilà page that never finishes and measure a fix.

Root cause (found with this script): Voilà runs the notebook with nbclient, which mimics a
frontend for ``ipywidgets.Output``: when a cell displays into an Output widget, nbclient sends a
``comm_msg`` on the *shell* channel from its IOPub task while its reply task awaits
``shell_channel.get_msg()`` on the same ``zmq.asyncio`` socket. ``jupyter_client.Session.send``
sends through a *sync shadow* of that socket (``zmq.Socket.shadow(stream.underlying)``), bypassing
pyzmq's asyncio wrapper. ZMQ_FD is edge-triggered: a raw send processes the socket's pending
commands (including the "message arrived" activation of an ``execute_reply`` that has just come
in) and clears the fd, and the wrapper, which never sees that send, does not re-check
ZMQ_EVENTS. The reply sits in the socket (ZMQ_EVENTS has POLLIN) but the awaiting poll is never
woken: the page spins forever. Upstream: jupyter/nbclient#312 (open, PR #311 open).

Fix (``apply_rearm_patch``): after ``Session.send``/``send_raw`` on a ``zmq.asyncio.Socket``, call
``socket.get(zmq.EVENTS)`` on the asyncio socket; pyzmq's override then schedules the pending
recv/poll futures if a message is waiting. Must run in the Voilà *server* process.

Usage (plain script; timings on a shared 2-core machine are inflated):
  python benchmarks/voila_first_kernel.py voila --runs 20 --notebook NB [--patch] [--python PY]
      N fresh ``voila`` servers, one HTTP GET of /voila/render/NB each (the GET streams the
      executed page), counting pages that do not finish within --timeout.
  python benchmarks/voila_first_kernel.py cells --cells 200 [--patch] [--python PY]
      Faster: one kernel, nbclient executes many cells that draw into an Output widget, as Voilà
      does; counts cells whose execute_reply is stranded (reply in the socket, poll not woken).
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve()

TINY_CELLS = [
    "import ipywidgets as widgets\nfrom IPython.display import display\n"
    "slider = widgets.FloatSlider(value=1.0, min=0.1, max=5.0, description='eps', continuous_update=False)\n"
    "out = widgets.Output()\n"
    "def redraw(change=None):\n    with out:\n        out.clear_output(wait=True)\n"
    "        display(f'eps = {slider.value:.3g}')\n"
    "slider.observe(redraw, names='value')\nredraw()\ndisplay(widgets.VBox([slider, out]))",
    "print('second cell', 1 + 1)",
    "slider.value = 2.0\nslider.value",
]


from dpexplore.apps import apply_rearm_patch  # noqa: E402  (the fix under test)


def tiny_notebook(path: Path) -> Path:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell("# Tiny widget page")]
    nb.cells += [nbformat.v4.new_code_cell(c) for c in TINY_CELLS]
    nbformat.write(nb, path)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_voila(args: argparse.Namespace) -> None:
    base = Path(tempfile.mkdtemp(prefix="voila_first_kernel_"))
    nb_src = Path(args.notebook) if args.notebook else tiny_notebook(base / "tiny_widgets.ipynb")
    hangs = 0
    times: list[float] = []
    for i in range(args.runs):
        d = base / f"run{i}"
        d.mkdir()
        shutil.copy(nb_src, d / nb_src.name)
        if nb_src.parent.joinpath("results").is_dir():
            shutil.copytree(nb_src.parent / "results", d / "results")
        env = dict(os.environ, PYTHONUNBUFFERED="1", DPEXPLORE_QUICK=os.environ.get("DPEXPLORE_QUICK", "1"))
        for var, sub in (("JUPYTER_RUNTIME_DIR", "runtime"), ("JUPYTER_CONFIG_DIR", "config"), ("IPYTHONDIR", "ipython")):
            (d / sub).mkdir()
            env[var] = str(d / sub)
        port = free_port()
        launcher = [str(HERE), "_serve", "--patch"] if args.patch else ["-m", "voila"]
        log = open(d / "server.log", "w")
        proc = subprocess.Popen(
            [args.python, *launcher, "--no-browser", f"--port={port}", "--Voila.ip=127.0.0.1", str(d)],
            cwd=d, env=env, stdout=log, stderr=subprocess.STDOUT,
        )
        try:
            t0 = time.monotonic()
            while time.monotonic() - t0 < 120:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).read()
                    break
                except OSError:
                    time.sleep(0.3)
            t1 = time.monotonic()
            html, ok = b"", False
            try:  # Voilà streams the page: read it with an overall deadline, not a per-read one
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/voila/render/{nb_src.name}", timeout=args.timeout
                ) as resp:
                    while time.monotonic() - t1 < args.timeout:
                        chunk = resp.read1(65536)
                        if not chunk:
                            ok = b"</html>" in html
                            break
                        html += chunk
            except OSError:  # socket timeout
                pass
            if ok:
                status = f"ok ({len(html)} bytes)"
                times.append(time.monotonic() - t1)
            else:
                status = f"HANG (page incomplete after {time.monotonic() - t1:.0f} s, {len(html)} bytes)"
                hangs += 1
            print(f"run {i:2d}: server up {t1 - t0:5.1f} s, page {time.monotonic() - t1:5.1f} s  {status}", flush=True)
        finally:
            proc.terminate()
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log.close()
    med = sorted(times)[len(times) // 2] if times else float("nan")
    print(f"SUMMARY voila patch={args.patch} python={args.python} notebook={nb_src.name}: "
          f"{hangs}/{args.runs} hung (timeout {args.timeout:.0f} s); median page {med:.1f} s; logs in {base}")


async def _cells(n: int, patch: bool, watch: float) -> tuple[int, int]:
    import asyncio

    import nbformat
    import zmq
    from nbclient import NotebookClient

    if patch:
        apply_rearm_patch()
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(TINY_CELLS[0])]
    nb.cells += [nbformat.v4.new_code_cell("redraw()\nprint('x')") for _ in range(n)]
    client = NotebookClient(nb, kernel_name="python3")
    stranded = 0
    orig = NotebookClient._async_poll_for_reply

    async def watched(self, msg_id, cell, timeout, *a, **k):  # type: ignore[no-untyped-def]
        nonlocal stranded
        task = asyncio.ensure_future(orig(self, msg_id, cell, timeout, *a, **k))
        done, _ = await asyncio.wait([task], timeout=watch)
        if not done:
            sock = self.kc.shell_channel.socket
            if sock.get(zmq.EVENTS) & zmq.POLLIN:  # reply waiting, poll not woken: a stranded wake-up
                stranded += 1
            await task  # the get() above re-armed the socket, so the cell now completes
        return task.result()

    NotebookClient._async_poll_for_reply = watched  # type: ignore[method-assign]
    async with client.async_setup_kernel():
        for i, cell in enumerate(nb.cells):
            await client.async_execute_cell(cell, i)
    return stranded, n


def run_cells(args: argparse.Namespace) -> None:
    cmd = [args.python, str(HERE), "_cells", str(args.cells), str(args.watch)] + (["--patch"] if args.patch else [])
    t0 = time.monotonic()
    out = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"))
    last = (out.stdout.strip().splitlines() or ["?"])[-1]
    print(f"SUMMARY cells patch={args.patch} python={args.python}: {last} ({time.monotonic() - t0:.0f} s)")
    if out.returncode:
        print(out.stderr[-2000:])


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_serve":  # voila launcher with the fix applied
        argv = sys.argv[2:]
        if argv and argv[0] == "--patch":
            argv = argv[1:]
            apply_rearm_patch()
        from voila.app import main as voila_main

        sys.argv = ["voila", *argv]
        sys.exit(voila_main())
    if len(sys.argv) > 1 and sys.argv[1] == "_cells":
        import asyncio

        stranded, n = asyncio.run(_cells(int(sys.argv[2]), "--patch" in sys.argv, float(sys.argv[3])))
        print(f"{stranded}/{n} cells stranded their execute_reply")
        return
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["voila", "cells"])
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--cells", type=int, default=200)
    p.add_argument("--notebook", default=None, help="default: a tiny slider + Output widget notebook")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds before a page counts as hung")
    p.add_argument("--watch", type=float, default=5.0, help="cells mode: seconds before a cell counts as stranded")
    p.add_argument("--patch", action="store_true", help="apply the re-arm fix in the server/client process")
    p.add_argument("--python", default=sys.executable, help="interpreter of the environment to test")
    args = p.parse_args()
    (run_voila if args.mode == "voila" else run_cells)(args)


if __name__ == "__main__":
    main()
