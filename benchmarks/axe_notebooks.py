"""axe-core's violations on every stored notebook, in JupyterLab and in its HTML export.

    python benchmarks/axe_notebooks.py [--notebooks 02 05] [--ref HEAD] [--refresh] [--out benchmarks/results/axe_after.csv]

Each stored ``notebooks/NN_*.ipynb`` (or, with ``--ref``, the version of that git revision) is
opened as stored (no Run All) in JupyterLab in Debian's Chromium (1400×1000, every cell attached,
no network), and exported with ``jupyter nbconvert --to html`` and opened from a local server
(its CDN scripts refused, as offline). axe-core (``axe-playwright-python``'s copy) runs on each
page. The CSV has one row per notebook × view × owner × rule: ``owner`` is ``content`` when the
node lies in what the notebook shows (outputs, rendered markdown), ``theme`` otherwise
(JupyterLab's or nbconvert's page, and link styling: see ``tests/browser/axedriver.py``),
``widget-library`` for ipywidgets' unnamed slider handles. The printed summary counts serious +
critical nodes. ``--refresh`` first passes the copies through ``notebooks/build.py``'s fallbacks.
"""
from __future__ import annotations

import argparse
import collections
import csv
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))

import axedriver as axe  # noqa: E402
import labdriver as lab  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
FIELDS = ["notebook", "view", "owner", "rule", "impact", "nodes"]


def notebooks_at(ref: str | None, prefixes: list[str], target: Path, refresh: bool = False) -> list[Path]:
    """Copies of the stored notebooks (of git revision ``ref`` when given) in ``target``; with
    ``refresh``, passed through the build's last step (``notebooks/build.py``: static fallbacks,
    alt texts, the kernelspec), as ``build.py --no-execute`` would leave them."""
    lab.copy_notebooks(target)
    found = sorted(target.glob("[0-9][0-9]_*.ipynb"))
    if ref:
        for p in found:
            stored = subprocess.run(["git", "show", f"{ref}:notebooks/{p.name}"], cwd=ROOT, capture_output=True)
            if stored.returncode == 0:
                p.write_bytes(stored.stdout)
    chosen = [p for p in found if not prefixes or any(p.name.startswith(s) for s in prefixes)]
    if refresh:
        import importlib.util

        import nbformat
        spec = importlib.util.spec_from_file_location("notebooks_build", ROOT / "notebooks" / "build.py")
        build = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(build)
        for p in chosen:
            nb = nbformat.read(p, as_version=4)
            nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
            build.add_static_fallbacks(nb)
            nbformat.write(nb, p)
    return chosen


def rows_of(notebook: str, view: str, findings: list[axe.Finding]) -> list[dict]:
    count = collections.Counter((f.owner, f.rule, f.impact) for f in findings)
    return [{"notebook": notebook, "view": view, "owner": o, "rule": r, "impact": i, "nodes": n}
            for (o, r, i), n in sorted(count.items())]


def measure(notebooks: list[Path], work: Path, log=print) -> list[dict]:
    from playwright.sync_api import sync_playwright

    rows: list[dict] = []
    root = notebooks[0].parent
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(lab.CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        axe.all_cells_attached(work / "lab")
        server = lab.start_lab(root, work / "lab")
        (work / "html").mkdir(parents=True, exist_ok=True)
        static = axe.StaticServer(work / "html")
        try:
            for ipynb in notebooks:
                page = lab.new_page(browser)
                try:
                    axe.open_stored_in_lab(page, server.url, ipynb.name)
                    rows += rows_of(ipynb.stem, "lab", axe.axe_findings(page))
                finally:
                    page.context.close()
                html = axe.export_html(ipynb, work / "html")
                page = lab.new_page(browser)
                try:
                    axe.open_html(page, f"{static.url}/{html.name}")
                    rows += rows_of(ipynb.stem, "html", axe.axe_findings(page))
                finally:
                    page.context.close()
                log(summary_line(ipynb.stem, rows))
        finally:
            static.stop()
            server.stop()
            browser.close()
    return rows


def summary_line(notebook: str, rows: list[dict]) -> str:
    parts = []
    for view in ("lab", "html"):
        for owner in ("content", "theme"):
            n = sum(r["nodes"] for r in rows if r["notebook"] == notebook and r["view"] == view
                    and r["owner"] == owner and r["impact"] in axe.SEVERE)
            parts.append(f"{view}/{owner} {n:3d}")
    return f"{notebook:28s} serious+critical nodes: " + "  ".join(parts)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebooks", nargs="*", default=[], help="name prefixes (default: all)")
    parser.add_argument("--ref", default=None, help="measure the notebooks stored at this git revision")
    parser.add_argument("--refresh", action="store_true",
                        help="pass the copies through build.py's fallbacks first (as --no-execute)")
    parser.add_argument("--out", type=Path, default=RESULTS / "axe_after.csv")
    args = parser.parse_args(argv)
    reason = lab.skip_reason()
    if reason:
        raise SystemExit(reason)
    with tempfile.TemporaryDirectory(prefix="axe-") as tmp:
        work = Path(tmp)
        notebooks = notebooks_at(args.ref, args.notebooks, work / "served", refresh=args.refresh)
        rows = measure(notebooks, work)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {args.out} ({len(rows)} rows)")


if __name__ == "__main__":
    main()
