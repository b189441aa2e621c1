"""What one Voilà visitor costs: the CPU a fresh kernel spends on a page, cell by cell.

A Voilà page is a fresh kernel running the notebook; on a 2-core server CPU, not memory, decides
how many students one server holds. This script runs a stored notebook the way Voilà does
(nbclient, a new ``python3`` kernel whose environment says Voilà started it) and reads the kernel
process's CPU time (user + system, psutil) before and after each code cell:

    python benchmarks/voila_visitor_cost.py 07 01            # per-cell CPU of notebooks 07 and 01
    python benchmarks/voila_visitor_cost.py 07 --importtime  # + `python -X importtime` of its import cell
    python benchmarks/voila_visitor_cost.py 07 --stored      # the stored .ipynb, not the .py source

Printed per notebook: the kernel's start (interpreter + ipykernel, before the first cell), each
code cell (CPU-s, wall-s, what it shows), **to first chart** (start + every cell up to the first
that displays a chart or a widget: what a visitor waits for) and the whole page. The target
(a class on one small server) is ≤ 1.5 CPU-s to the first chart. ``--importtime`` runs the
notebook's first code cell in a fresh ``python -X importtime`` and prints the slowest
top-level imports and whether the heavy ones (scikit-learn, scipy.stats, jsonschema's
rfc3987_syntax) are on the path. ``--json FILE`` also writes the figures. The notebook is made
from its jupytext source ``notebooks/NN_*.py`` (what the next build stores) unless ``--stored``;
it runs in ``notebooks/`` (it reads ``results/``).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
TARGET_CPU_S = 1.5
CHART_MIMES = ("application/vnd.vegalite.v5+json", "application/vnd.vegalite.v6+json",
               "application/vnd.jupyter.widget-view+json", "image/png")
HEAVY = ("sklearn", "scipy.stats", "rfc3987_syntax", "jsonschema", "matplotlib", "duckdb", "pyspark")


def notebook_file(prefix: str, stored: bool = False) -> Path:
    """``notebooks/<prefix>*.ipynb`` if ``stored``, else its ``.py`` source."""
    found = sorted(NOTEBOOKS.glob(f"{prefix}*.ipynb" if stored else f"{prefix}*.py"))
    if not found:
        raise SystemExit(f"no notebooks/{prefix}*")
    return found[0]


def read_notebook(path: Path):
    """A notebook node from a stored ``.ipynb`` or a jupytext percent ``.py`` source."""
    import nbformat

    if path.suffix == ".py":
        import jupytext

        return jupytext.read(path)
    return nbformat.read(path, as_version=4)


def _kernel_env() -> dict:
    """The environment Voilà gives a kernel (``VOILA_*`` variables; no quick mode: a real class)."""
    env = {k: v for k, v in os.environ.items() if k != "DPEXPLORE_QUICK"}
    env.update(VOILA_BASE_URL="/", VOILA_SERVER_URL="/", VOILA_APP_PORT="8866", VOILA_PREHEAT="False",
               PYTHONPATH=os.pathsep.join([str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]))
    return env


def _shows(outputs: list) -> str:
    kinds = []
    for out in outputs:
        data = out.get("data", {})
        if any(m in data for m in CHART_MIMES[:2]):
            kinds.append("chart")
        elif CHART_MIMES[2] in data:
            kinds.append("widget")
        elif out.get("output_type") == "error":
            kinds.append("ERROR")
        elif data or out.get("output_type") == "stream":
            kinds.append("text")
    return ",".join(dict.fromkeys(kinds))


def cell_costs(ipynb: Path, timeout: float = 600) -> dict:
    """Run ``ipynb`` in a fresh kernel (cwd: ``notebooks/``); CPU and wall time per code cell."""
    import psutil
    from nbclient import NotebookClient

    nb = read_notebook(ipynb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}})
    rows = []
    t0 = time.perf_counter()
    with client.setup_kernel(env=_kernel_env(), cwd=str(NOTEBOOKS)):
        proc = psutil.Process(client.km.provisioner.process.pid)

        def cpu() -> float:
            t = proc.cpu_times()
            return t.user + t.system

        start_cpu, start_wall = cpu(), time.perf_counter() - t0
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            c, w = cpu(), time.perf_counter()
            client.execute_cell(cell, index)
            rows.append({"cell": index, "cpu_s": cpu() - c, "wall_s": time.perf_counter() - w,
                         "shows": _shows(cell.outputs), "first_line": cell.source.strip().splitlines()[0][:60]
                         if cell.source.strip() else ""})
        rss = proc.memory_info().rss
    first = next((i for i, r in enumerate(rows) if "chart" in r["shows"] or "widget" in r["shows"]), len(rows) - 1)
    return {"notebook": ipynb.name, "start_cpu_s": start_cpu, "start_wall_s": start_wall, "cells": rows,
            "to_first_chart_cpu_s": start_cpu + sum(r["cpu_s"] for r in rows[:first + 1]),
            "first_chart_cell": rows[first]["cell"] if rows else None,
            "page_cpu_s": start_cpu + sum(r["cpu_s"] for r in rows), "kernel_rss_mb": rss / 2**20}


def import_profile(ipynb: Path, top: int = 12) -> dict:
    """The notebook's first code cell in ``python -X importtime``: total CPU, slowest imports."""
    nb = read_notebook(ipynb)
    source = next(c.source for c in nb.cells if c.cell_type == "code")
    probe = ("import resource as _r, sys as _s\n" + source +
             "\n_u = _r.getrusage(_r.RUSAGE_SELF)\n"
             f"print('CPU', _u.ru_utime + _u.ru_stime)\nprint('HEAVY', [m for m in {HEAVY!r} if m in _s.modules])\n")
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", probe], capture_output=True, text=True,
                         cwd=NOTEBOOKS, env=_kernel_env(), timeout=300)
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    rows = []
    for line in out.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if m and len(m.group(3)) <= 1:          # a top-level import of the cell
            rows.append((int(m.group(2)) / 1e6, m.group(4)))
    cpu = float(re.search(r"^CPU (\S+)", out.stdout, re.M).group(1))
    heavy = re.search(r"^HEAVY (.*)$", out.stdout, re.M).group(1)
    return {"cpu_s": cpu, "heavy": heavy, "slowest": sorted(rows, reverse=True)[:top]}


def report(res: dict) -> None:
    print(f"\n== {res['notebook']}: kernel start {res['start_cpu_s']:.2f} CPU-s ({res['start_wall_s']:.1f} s wall)")
    print(f"{'cell':>4} {'CPU-s':>6} {'wall-s':>6}  shows          first line")
    for r in res["cells"]:
        print(f"{r['cell']:>4} {r['cpu_s']:6.2f} {r['wall_s']:6.2f}  {r['shows'] or '-':<14} {r['first_line']}")
    ok = "≤" if res["to_first_chart_cpu_s"] <= TARGET_CPU_S else ">"
    print(f"to first chart (cell {res['first_chart_cell']}): {res['to_first_chart_cpu_s']:.2f} CPU-s "
          f"({ok} target {TARGET_CPU_S}); whole page {res['page_cpu_s']:.2f} CPU-s; kernel RSS "
          f"{res['kernel_rss_mb']:.0f} MB; load average {os.getloadavg()[0]:.2f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("notebooks", nargs="*", default=["07", "01"], help="name prefixes (default: 07 01)")
    p.add_argument("--importtime", action="store_true", help="also profile the import cell with -X importtime")
    p.add_argument("--runs", type=int, default=1, help="repeat each notebook, print each run")
    p.add_argument("--json", default=None, help="write the results to this file")
    p.add_argument("--stored", action="store_true", help="run the stored .ipynb instead of the .py source")
    args = p.parse_args()
    everything = []
    for prefix in args.notebooks:
        ipynb = notebook_file(prefix, args.stored)
        for _ in range(args.runs):
            res = cell_costs(ipynb)
            report(res)
            everything.append(res)
        if args.importtime:
            prof = import_profile(ipynb)
            print(f"import cell alone (python -X importtime): {prof['cpu_s']:.2f} CPU-s, heavy modules loaded: "
                  f"{prof['heavy']}")
            for seconds, module in prof["slowest"]:
                print(f"   {seconds:6.3f} s  {module}")
            everything[-1]["import_profile"] = prof
    if args.json:
        Path(args.json).write_text(json.dumps(everything, indent=1) + "\n")


if __name__ == "__main__":
    main()
