"""What a student feels: key press to redraw of every explorer, measured in the browser.

    python benchmarks/widget_latency_browser.py [--notebooks 02 05] [--presses 15] [--csv] [--full]

For each notebook ``notebooks/NN_*.ipynb`` (01–08 by default) a fresh JupyterLab server is started
on a copy of the notebooks and the notebook is opened in Debian's Chromium (Playwright, 1400×1000,
every non-localhost request aborted: no network, no browser download), Run All. Every explorer
(a cell output holding sliders or dropdowns; its name comes from the cell's source) gets one
control: its first slider whose label has "ε", else its first slider, else its first dropdown. That
control is focused and ArrowRight is pressed ``--presses`` times (ArrowLeft once the range ends),
each press waiting for its redraw. A MutationObserver in the page records every change of the
explorer's output (outside the control itself); the latency of a press is from its keydown to the
last change, which must be followed by ``--settle-ms`` of quiet after the kernel went idle (the
quiet is not counted). So the figure includes the kernel's work, the messages, the chart's
serialisation and Vega's rendering, but not the time the canvas pixels take after the last DOM
change. Presses that change nothing in the output count as "no redraw".

Target (ours): median < 300 ms and p90 < 600 ms per explorer on this 2-core machine.
``benchmarks/widget_latency.py`` measures the same moves inside the kernel (a diagnostic).
``DPEXPLORE_QUICK=1`` is set in the server unless ``--full``: the explorers are the same, only the
notebooks' sweeps shrink (so Run All is faster; 07's slider snaps to fewer swept ε).
"""
from __future__ import annotations

import argparse
import csv
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))

import labdriver as lab  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
TARGET_MEDIAN, TARGET_P90 = 300.0, 600.0
FIELDS = ["notebook", "explorer", "control", "median_ms", "p90_ms", "n", "no_redraw", "timeouts",
          "run_all_s", "quick", "run"]


def p90(values: list[float]) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, int(round(0.9 * (len(v) - 1))))]


def measure_notebook(browser, ipynb: Path, presses: int, settle_ms: float, quick: bool, log=print) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="latency-") as tmp:
        tmp = Path(tmp)
        root = lab.copy_notebooks(tmp / "served")
        server = lab.start_lab(root, tmp, quick=quick)
        page = lab.new_page(browser)
        try:
            lab.open_notebook(page, server.url, ipynb.name)
            state, seconds = lab.run_all(page, ipynb.name, keep_going=True)
            log(f"{ipynb.stem}: Run All {seconds:.0f} s" + (f"; cell errors {state['errors']}" if state["errors"] else ""))
            if state["errors"]:   # the cells below an error were run anyway: say so in the table
                rows.append({"notebook": ipynb.stem, "explorer": "(cell error; ran on)",
                             "control": state["errors"][0][:60], "median_ms": "", "p90_ms": "", "n": 0,
                             "no_redraw": 0, "timeouts": 0, "run_all_s": round(seconds), "quick": int(quick),
                             "run": time.strftime("%H:%M", time.gmtime())})
            names = lab.explorer_names(root / ipynb.name)   # the copy the server runs
            for control in lab.find_controls(page, names):
                r = lab.press_and_time(page, control, presses=presses, settle_ms=settle_ms)
                t = r["times"]
                row = {"notebook": ipynb.stem, "explorer": control.explorer, "control": control.label,
                       "median_ms": round(statistics.median(t)) if t else "", "p90_ms": round(p90(t)) if t else "",
                       "n": len(t), "no_redraw": r["no_redraw"], "timeouts": r["timeouts"],
                       "run_all_s": round(seconds), "quick": int(quick),
                       "run": time.strftime("%H:%M", time.gmtime())}
                rows.append(row)
                log(f"  {control.explorer:<28} {control.label:<22} median {row['median_ms']} ms, p90 {row['p90_ms']} ms, "
                    f"n {len(t)}, no redraw {r['no_redraw']}, timeouts {r['timeouts']}")
        finally:
            page.context.close()
            server.stop()
    return rows


def table(rows: list[dict]) -> str:
    lines = [f"{'notebook':<28} {'explorer':<28} {'control':<22} {'median ms':>9} {'p90 ms':>7} {'n':>3}  verdict"]
    for r in rows:
        if r["n"]:
            ok = r["median_ms"] < TARGET_MEDIAN and r["p90_ms"] < TARGET_P90
            verdict = "ok" if ok else "TOO SLOW"
        else:
            verdict = "no redraw measured"
        if r["no_redraw"] or r["timeouts"]:
            verdict += f" ({r['no_redraw']} presses redrew nothing, {r['timeouts']} timed out)"
        lines.append(f"{r['notebook']:<28} {r['explorer']:<28} {r['control'][:22]:<22} {r['median_ms']:>9} "
                     f"{r['p90_ms']:>7} {r['n']:>3}  {verdict}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebooks", nargs="*", default=["01", "02", "03", "04", "05", "06", "07", "08"],
                        help="name prefixes (default 01 … 08)")
    parser.add_argument("--presses", type=int, default=15)
    parser.add_argument("--settle-ms", type=float, default=150.0)
    parser.add_argument("--full", action="store_true", help="run the notebooks without DPEXPLORE_QUICK")
    parser.add_argument("--csv", nargs="?", const=str(RESULTS / "widget_latency_browser.csv"), default=None,
                        help="save the table (default path benchmarks/results/widget_latency_browser.csv)")
    args = parser.parse_args(argv)
    reason = lab.skip_reason()
    if reason:
        raise SystemExit(reason)
    notebooks = [p for p in sorted(lab.NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
                 if any(p.name.startswith(s) for s in args.notebooks)]
    if not notebooks:
        raise SystemExit(f"--notebooks {args.notebooks}: no notebook matches in {lab.NOTEBOOKS}")
    from playwright.sync_api import sync_playwright

    rows: list[dict] = []
    start = time.monotonic()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(lab.CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        try:
            for nb in notebooks:
                try:
                    rows += measure_notebook(browser, nb, args.presses, args.settle_ms, quick=not args.full,
                                             log=lambda m: print(m, file=sys.stderr, flush=True))
                except Exception as exc:   # one notebook failing must not lose the others' figures
                    print(f"{nb.stem}: FAILED {type(exc).__name__}: {str(exc)[:300]}", file=sys.stderr, flush=True)
                    rows.append({"notebook": nb.stem, "explorer": "(notebook failed)", "control": str(exc)[:60],
                                 "median_ms": "", "p90_ms": "", "n": 0, "no_redraw": 0, "timeouts": 0,
                                 "run_all_s": "", "quick": int(not args.full), "run": time.strftime("%H:%M", time.gmtime())})
        finally:
            browser.close()
    print(table(rows))
    print(f"\ntarget: median < {TARGET_MEDIAN:.0f} ms, p90 < {TARGET_P90:.0f} ms; settle window "
          f"{args.settle_ms:.0f} ms (not counted); {'full' if args.full else 'DPEXPLORE_QUICK=1'}; "
          f"took {time.monotonic() - start:.0f} s")
    if args.csv:
        path = Path(args.csv)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=FIELDS)
            w.writeheader()
            w.writerows(rows)
        print(f"saved {path}")


if __name__ == "__main__":
    main()
