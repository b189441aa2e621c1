"""Scale: count once, release many. Adult resampled to millions of rows, per engine and method.

    python benchmarks/scale.py                      # 10M rows, DuckDB (Parquet)
    python benchmarks/scale.py --sizes 1M,10M,100M --engines duckdb,spark --out results.json

For each method that ``tables.release`` offers and that fits a source (the registry's "tables"
and "fits_source" tags: the publishers and Naive Bayes) a fresh child process
makes a fresh source and times:

* **first**: that method's fit on the fresh source (the scan that builds the count table and
  checks every record, then the fit);
* **after another**: each other method's first fit on that source (it reuses the count table;
  the projected histogram's default bins, s public before the fit (Vinterbo 2012, §2.1), are no
  union of the schema's leaves: the first scan of whichever method ran first counted them, at the
  common refinement of the leaves and the bins, so no method scans again);
* **later**: every method once more (different seed), once each method has run: the cost of any
  later release from the source, the count reused.

Peak RSS is the child's VmHWM (for Spark the Python driver plus the JVM). The tables are
generated once (Adult rows drawn with replacement, numpy in 1M-row chunks, each chunk written
to Parquet by DuckDB) and cached under $TMPDIR/dpexplore-scale/<rows>/; nothing is shipped.
This is a NON-PRIVATE benchmark on generated data: it prints the number of occupied cells,
which a release of real data must never show.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHUNK = 1_000_000


def parse_size(text: str) -> int:
    text = text.strip().upper()
    mult = {"K": 1_000, "M": 1_000_000, "G": 1_000_000_000}.get(text[-1], 1)
    return int(float(text[:-1] if text[-1] in "KMG" else text) * mult)


def table_dir(rows: int) -> Path:
    return Path(tempfile.gettempdir()) / "dpexplore-scale" / str(rows)


def generate(rows: int) -> Path:
    """Adult resampled to ``rows`` rows as Parquet parts of ≤ 1M rows (cached)."""
    import duckdb
    import numpy as np
    from dpexplore.datasets import load_adult
    out = table_dir(rows)
    done = out / "_complete"
    if done.exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    frame, _ = load_adult()
    rng = np.random.default_rng(rows)
    con = duckdb.connect()
    for i, start in enumerate(range(0, rows, CHUNK)):
        n = min(CHUNK, rows - start)
        part = frame.iloc[rng.integers(0, len(frame), n)].reset_index(drop=True)
        con.register("part", part)
        con.execute(f"COPY (SELECT * FROM part) TO '{out / f'part-{i:04d}.parquet'}' (FORMAT parquet)")
        con.unregister("part")
    done.write_text("ok")
    return out


def peak_rss_mib(pids: list[int]) -> float:
    """Sum of VmHWM (peak resident memory) of the given processes, MiB."""
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def _methods() -> tuple[str, ...]:
    """The methods of ``tables.release`` that fit a source (the registry's "tables" and
    "fits_source" tags), in the registry's order."""
    from dpexplore.registry import all_methods
    return tuple(s.name for s in all_methods(tag="tables") if "fits_source" in s.tags)


METHODS = _methods()


def make(method: str, seed: int):
    """The method at ε = 1 (library defaults otherwise), built from its registry entry."""
    from dpexplore.registry import get_method
    return get_method(method).build(None, epsilon=1.0, random_state=seed)


def timed_fit(method: str, source, seed: int) -> float:
    t = time.perf_counter()
    make(method, seed).fit(source)
    return time.perf_counter() - t


def open_source(engine: str, rows: int, result: dict):
    """A fresh source over the generated table (pandas: loaded whole first, timed apart)."""
    from dpexplore import sources
    from dpexplore.datasets import load_adult
    _, schema = load_adult()
    glob = str(table_dir(rows) / "part-*.parquet")
    if engine == "pandas":
        import duckdb
        t = time.perf_counter()
        frame = duckdb.read_parquet(glob).df()
        result["load_s"] = time.perf_counter() - t
        return sources.pandas(frame, schema)
    if engine == "duckdb":
        return sources.parquet(glob, schema)
    if engine == "spark":
        t = time.perf_counter()
        spark = sources.local_spark_session("dpexplore-scale", "local[*]", **{
            "spark.driver.memory": "4g", "spark.sql.shuffle.partitions": "8"})
        spark.sparkContext.setLogLevel("ERROR")
        result["jvm_start_s"] = time.perf_counter() - t
        return sources.spark(spark.read.parquet(glob), schema)
    raise ValueError(f"unknown engine {engine!r}")


def measure(engine: str, rows: int, first: str) -> dict:
    """One child process: ``first``'s fit on a fresh source, then every method after it, then
    every method again."""
    import warnings
    # the fits on a source raise no warning (public schema, ε = 1); the Spark engine's pyspark 4.x
    # warns once that it does not fully support pandas ≥ 3 (notebook 09 filters the same one)
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
    result: dict = {"engine": engine, "rows": rows, "first_method": first}
    source = open_source(engine, rows, result)
    result["first_s"] = timed_fit(first, source, 0)
    result["after_s"] = {m: timed_fit(m, source, 1) for m in METHODS}
    result["later_s"] = {m: timed_fit(m, source, 2) for m in METHODS}
    table = source.count_table()
    result["peak_rss_mib"] = peak_rss_mib(descendants(os.getpid()) if engine == "spark" else [os.getpid()])
    result["occupied_cells"] = table.n_occupied  # NON-PRIVATE benchmark on generated data only
    result["records_ok"] = table.n_records == rows
    return result


def scan_costs(rows: int) -> dict:
    """DuckDB on Parquet: the one checking group-by that builds a count table now, against the
    two scans it replaces (the checking aggregate, then the group-by of leaf codes), and the same
    group-by at the refinement by the projected histogram's default bins (what a first fit
    scans: :func:`dpexplore.sources.bins.default_bins`); best of 3."""
    # no warning filter: these DuckDB scans raise no warning
    from dpexplore import sources
    from dpexplore.datasets import load_adult
    from dpexplore.sources._tables import refinement
    from dpexplore.sources.bins import default_bins
    _, schema = load_adult()
    src = sources.parquet(str(table_dir(rows) / "part-*.parquet"), schema)
    keys = [src.leaf_expr(n) for n in schema.predictors] + [src.class_expr(checked=False)]
    fine = refinement(schema, default_bins(schema))
    steps = {"checking aggregate": src.validate,
             "group-by of leaf codes": lambda: src.run(lambda: src.group_count(keys)),
             "one checking group-by": lambda: src.with_schema(schema)._build(),
             "refined by the bins": lambda: src.with_schema(fine)._build()}
    out = {}
    for label, step in steps.items():
        best = []
        for _ in range(3):
            t = time.perf_counter()
            step()
            best.append(time.perf_counter() - t)
        out[label] = min(best)
    return out


def summarise(runs: list[dict]) -> dict:
    """Per method: its first fit, its worst first fit after another method, its worst later fit."""
    out = {}
    for m in METHODS:
        own = next(r for r in runs if r["first_method"] == m)
        out[m] = {"first_s": own["first_s"],
                  "after_another_s": max(r["after_s"][m] for r in runs if r["first_method"] != m),
                  "later_s": max([r["later_s"][m] for r in runs] + [own["after_s"][m]]),
                  "peak_rss_mib": own["peak_rss_mib"], "occupied_cells": own["occupied_cells"],
                  "records_ok": own["records_ok"]}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10M", help="comma-separated row counts (1M, 10M, 100M)")
    ap.add_argument("--engines", default="duckdb", help="comma-separated: pandas, duckdb, spark")
    ap.add_argument("--pandas-max", default="10M", help="largest table loaded whole into pandas")
    ap.add_argument("--out", help="also write the runs and the summary to this JSON file")
    ap.add_argument("--scan", action="store_true", help="only time one count-table scan, old and new (DuckDB)")
    ap.add_argument("--measure", nargs=3, metavar=("ENGINE", "ROWS", "METHOD"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.scan:
        for rows in [parse_size(s) for s in args.sizes.split(",")]:
            generate(rows)
            for label, seconds in scan_costs(rows).items():
                print(f"{rows:>12,} duckdb {label:>24} {seconds:7.2f} s", flush=True)
        return
    if args.measure:
        print(json.dumps(measure(args.measure[0], int(args.measure[1]), args.measure[2])))
        return
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    engines = [e.strip() for e in args.engines.split(",")]
    header = (f"{'rows':>12} {'engine':>7} {'method':>19} {'first fit s':>12} {'after another s':>16} "
              f"{'later fit s':>12} {'peak RSS MiB':>13} {'occupied cells':>15}")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())   # other users of the cores at the start
    print(f"# {os.cpu_count()} cores; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average {load}")
    print(header)
    print("-" * len(header))
    report = []
    for rows in sizes:
        t = time.perf_counter()
        generate(rows)
        print(f"# {rows:,} rows ready in {time.perf_counter() - t:.1f} s (Parquet, cached in {table_dir(rows)})",
              flush=True)
        for engine in engines:
            if engine == "pandas" and rows > parse_size(args.pandas_max):
                continue
            runs = []
            for method in METHODS:
                proc = subprocess.run([sys.executable, __file__, "--measure", engine, str(rows), method],
                                      capture_output=True, text=True)
                if proc.returncode != 0:
                    tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
                    print(f"{rows:>12,} {engine:>7} {method:>19}  failed: {tail[:120]}", flush=True)
                    break
                runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
            if len(runs) != len(METHODS):
                continue
            summary = summarise(runs)
            for m, r in summary.items():
                print(f"{rows:>12,} {engine:>7} {m:>19} {r['first_s']:>12.2f} {r['after_another_s']:>16.2f} "
                      f"{r['later_s']:>12.2f} {r['peak_rss_mib']:>13.0f} {r['occupied_cells']:>15,}"
                      + ("" if r["records_ok"] else "  (record count wrong!)"), flush=True)
            report.append({"rows": rows, "engine": engine, "runs": runs, "summary": summary,
                           "load_average": os.getloadavg()})
    print("# load average at the end " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
