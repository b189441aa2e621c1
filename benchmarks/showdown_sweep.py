"""Run the showdown of notebook 07 and store it: notebooks/results/07_showdown_*.csv + .json.

Every private classifier of dpexplore on Adult (income) and Adult-Multiclass (marital status),
at every ε of the grid, ``--repetitions`` paired 80/20 splits, plus the majority class and a
non-private logistic regression on the same splits (``dpexplore.evaluate.showdown.showdown_sweep``).
Notebook 07 (and its Voilà app) opens from these files instead of re-running the sweep; its
``RECOMPUTE`` cell runs the same function in the notebook.

    .venv/bin/python benchmarks/showdown_sweep.py                  # the stored run
    .venv/bin/python benchmarks/showdown_sweep.py --rows 2000 --repetitions 1 --out /tmp/sd   # a quick look

By default each table is a stratified sample of 12,000 rows (the same rows for a given seed), so
that the run fits in ~10 minutes on 2 cores; ``--rows 0`` uses all 45,222 rows.

The sidecar ``07_showdown_sweep.json`` records the settings, the commit (and whether the tree
had uncommitted changes), the package versions and the wall time.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dpexplore.evaluate.showdown import SHOWDOWN_SETTINGS, save_showdown, showdown_sweep, showdown_tables  # noqa: E402

#: The showdown's grid (benchmarks/peers.py runs the peers at the same budgets).
EPSILONS = SHOWDOWN_SETTINGS["epsilons"]
REPETITIONS = SHOWDOWN_SETTINGS["repetitions"]
ROWS = SHOWDOWN_SETTINGS["rows"]
SEED = SHOWDOWN_SETTINGS["seed"]


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epsilons", type=float, nargs="+", default=EPSILONS)
    ap.add_argument("--repetitions", type=int, default=REPETITIONS)
    ap.add_argument("--rows", type=int, default=ROWS,
                    help=f"stratified sample of this many rows of each table (default {ROWS}; 0: all 45,222)")
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--out", type=Path, default=ROOT / "notebooks" / "results")
    args = ap.parse_args(argv)

    data = showdown_tables(args.rows or None, args.seed)
    start = time.perf_counter()
    results, availability = showdown_sweep(data, args.epsilons, args.repetitions, random_state=args.seed,
                                           n_jobs=args.n_jobs, progress=sys.stderr.isatty())
    wall = time.perf_counter() - start
    settings = {"epsilons": args.epsilons, "repetitions": args.repetitions, "seed": args.seed,
                "rows": args.rows or "all", "n_jobs": args.n_jobs, "test_size": 0.2,
                "table_rows": {d: len(f) for d, (f, _) in data.items()},
                "commit": _git("rev-parse", "HEAD"), "uncommitted_changes": bool(_git("status", "--porcelain")),
                "command": "python benchmarks/showdown_sweep.py " + " ".join(sys.argv[1:] if argv is None else argv),
                "wall_seconds": round(wall, 1), "cpu_count": os.cpu_count(),
                "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    save_showdown(results, availability, args.out, settings)
    print(f"{len(results)} rows in {wall:.0f} s → {args.out}")
    print(availability.to_string(index=False))


if __name__ == "__main__":
    main()
