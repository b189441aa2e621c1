"""Notebook 02's ε explorer (PrivPfCExplorer) over Adult records and over a large Parquet source.

    python benchmarks/explorer_scale.py                      # 100M rows, DuckDB (Parquet)
    python benchmarks/explorer_scale.py --rows 10M

For each case, in a fresh child process: the construction time (for a source: the one scan that
builds its count table, then the warm-up that counts every grid the ε slider can reach) and the
time of each slider step: setting the ε slider or the seed as a user does, which runs the
explorer's ``update()`` (one PrivPfC run, the test errors, the status and the charts). Cases:
Adult's training split as records (the notebook's call), the same split through
``sources.pandas``, and the generated table (Adult resampled, see ``benchmarks/scale.py``)
through ``sources.parquet``; the test data is Adult's test split in every case. The generated
table is drawn from all of Adult, test rows included: its test errors are no accuracy figures.
A NON-PRIVATE benchmark on public data: it prints the number of occupied cells.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import generate, parse_size  # noqa: E402  (the generated tables and their cache)

#: ε slider positions (10 ** (-2 + 0.05 k)), warmed and not, then back to ε = 1 for the seeds
EPSILONS = [10 ** (-2 + 0.05 * k) for k in (33, 26, 20, 14, 7, 0, 45, 50, 41, 40)]
SEEDS = [1, 2, 3, 4, 5]


def run_case(case: str, rows: int) -> dict:
    """One case in this process: construction, then every slider step, timed."""
    from dpexplore import sources
    from dpexplore.datasets import load_adult, train_test_split
    from dpexplore.widgets.privpfc import PrivPfCExplorer
    frame, schema = load_adult()
    X_train, X_test, y_train, y_test = train_test_split(frame, schema, test_size=0.2, random_state=0)
    scan = 0.0
    t = time.perf_counter()
    if case == "adult records":
        explorer = PrivPfCExplorer(X_train, y_train, X_test, y_test, schema)
    elif case == "adult pandas source":
        train = sources.pandas(X_train.assign(**{schema.target: y_train}), schema)
        explorer = PrivPfCExplorer.from_source(train, (X_test, y_test))
    else:
        train = sources.parquet(str(generate(rows) / "part-*.parquet"), schema)
        train.count_table()                       # the one scan, timed apart; from_source reuses it
        scan = time.perf_counter() - t
        explorer = PrivPfCExplorer.from_source(train, (X_test, y_test))
    built = time.perf_counter() - t
    steps = []
    for eps in EPSILONS:
        t = time.perf_counter()
        explorer.epsilon.value = eps
        steps.append(("epsilon", round(explorer.epsilon.value, 4), time.perf_counter() - t))
    for seed in SEEDS:
        t = time.perf_counter()
        explorer.seed.value = seed
        steps.append(("seed", seed, time.perf_counter() - t))
    run = explorer.last_run
    return {"case": case, "construction_s": built, "scan_s": scan, "steps": steps, "records": explorer.scorer.n_rows,
            "occupied_cells": len(explorer.scorer.y), "stored_grids": len(explorer.scorer.names),
            "last_grid_cells": int(run.noisy_counts.shape[0])}


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="100M", help="rows of the generated Parquet table (default 100M)")
    parser.add_argument("--case", help=argparse.SUPPRESS)   # child process: run one case, print JSON
    args = parser.parse_args()
    rows = parse_size(args.rows)
    if args.case:
        print(json.dumps(run_case(args.case, rows)))
        return
    generate(rows)   # outside the timings: the table is made once and cached
    print(f"PrivPfCExplorer: construction and slider steps; Parquet source: {rows:,} rows (DuckDB)")
    print(f"uptime before: {uptime()}")
    cases = ["adult records", "adult pandas source", f"parquet {args.rows} rows"]
    for case in cases:
        out = subprocess.run([sys.executable, __file__, "--rows", args.rows, "--case", case],
                             capture_output=True, text=True, check=True).stdout
        res = json.loads(out.strip().splitlines()[-1])
        times = [s for _, _, s in res["steps"]]
        print(f"\n{case}: {res['records']:,} training records in {res['occupied_cells']:,} rows of the scorer "
              f"(non-private), {res['stored_grids']:,} grids counted")
        of_which = f" (of which the scan that builds the count table: {res['scan_s']:.2f} s)" if res["scan_s"] else ""
        print(f"  construction {res['construction_s']:.2f} s{of_which}")
        print(f"  slider steps ({len(times)}): median {statistics.median(times) * 1e3:.0f} ms, "
              f"max {max(times) * 1e3:.0f} ms, total {sum(times):.2f} s")
        print("  " + ", ".join(f"{kind} {value}: {s * 1e3:.0f} ms" for kind, value, s in res["steps"]))
        print(f"  last release: {res['last_grid_cells']:,} cells")
    print(f"\nuptime after: {uptime()}")


if __name__ == "__main__":
    main()
