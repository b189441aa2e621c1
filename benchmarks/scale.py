"""Scale: building the CountTable of Adult resampled to millions of rows, per engine.

    python benchmarks/scale.py                      # sizes 1M,10M; engines pandas,duckdb,spark
    python benchmarks/scale.py --sizes 1M,10M,100M --engines duckdb

The tables are generated once (Adult rows drawn with replacement, numpy in 1M-row chunks, each
chunk written to Parquet by DuckDB) and cached under $TMPDIR/dpexplore-scale/<rows>/; nothing is
shipped. Each measurement runs in a fresh child process, so its peak RSS (VmHWM; for Spark the
Python driver plus the JVM) is its own. pandas runs up to 10M rows (the whole table is loaded
into memory first; its load time is printed apart). Spark runs in local mode on every core, JVM
start included in its total. "PrivPfC fit after table" times PrivPfC(epsilon=1).fit(source) once the
count table is built (DuckDB's and Spark's "total" include it: end to end); the first row is the
45k-row Adult fit from records, the reference for that column.

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


def fit_after_table(source, result: dict) -> None:
    """PrivPfC(epsilon=1).fit(source) once the source's count table is built (cached)."""
    from dpexplore.publish.privpfc import PrivPfC
    t = time.perf_counter()
    PrivPfC(epsilon=1.0, random_state=0).fit(source)
    result["fit_s"] = time.perf_counter() - t


def measure_baseline() -> dict:
    """The 45k-row Adult fit from records, fit(X, y, schema): the reference for "fit after table"."""
    import warnings
    warnings.simplefilter("ignore")
    from dpexplore.datasets import load_adult
    from dpexplore.publish.privpfc import PrivPfC
    frame, schema = load_adult()
    X, y = frame[schema.predictors], frame[schema.target]
    t = time.perf_counter()
    PrivPfC(epsilon=1.0, random_state=0, schema=schema).fit(X, y)
    return {"engine": "records", "rows": len(frame), "fit_s": time.perf_counter() - t,
            "peak_rss_mib": peak_rss_mib([os.getpid()])}


def measure(engine: str, rows: int) -> dict:
    """One measurement, in this (child) process."""
    import warnings
    warnings.simplefilter("ignore")
    from dpexplore import sources
    from dpexplore.datasets import load_adult
    if engine == "baseline":
        return measure_baseline()
    _, schema = load_adult()
    glob = str(table_dir(rows) / "part-*.parquet")
    result: dict = {"engine": engine, "rows": rows}
    t0 = time.perf_counter()
    if engine == "pandas":
        import duckdb
        frame = duckdb.read_parquet(glob).df()
        result["load_s"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        source = sources.pandas(frame, schema)
        table = source.count_table()
        result["table_s"] = time.perf_counter() - t1
        fit_after_table(source, result)
    elif engine == "duckdb":
        source = sources.parquet(glob, schema)
        table = source.count_table()
        result["table_s"] = time.perf_counter() - t0
        fit_after_table(source, result)
        result["total_s"] = time.perf_counter() - t0
    elif engine == "spark":
        spark = sources.local_spark_session("dpexplore-scale", "local[*]", **{
            "spark.driver.memory": "4g", "spark.sql.shuffle.partitions": "8"})
        spark.sparkContext.setLogLevel("ERROR")
        result["jvm_start_s"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        source = sources.spark(spark.read.parquet(glob), schema)
        table = source.count_table()
        result["table_s"] = time.perf_counter() - t1
        fit_after_table(source, result)
        result["total_s"] = time.perf_counter() - t0
        result["peak_rss_mib"] = peak_rss_mib(descendants(os.getpid()))
        spark.stop()
    else:
        raise ValueError(f"unknown engine {engine!r}")
    result.setdefault("peak_rss_mib", peak_rss_mib([os.getpid()]))
    result["occupied_cells"] = table.n_occupied  # NON-PRIVATE benchmark on generated data only
    result["records_ok"] = table.n_records == rows
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1M,10M", help="comma-separated row counts (1M, 10M, 100M)")
    ap.add_argument("--engines", default="pandas,duckdb,spark")
    ap.add_argument("--pandas-max", default="10M", help="largest table loaded whole into pandas")
    ap.add_argument("--measure", nargs=2, metavar=("ENGINE", "ROWS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure[0], int(args.measure[1]))))
        return
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    engines = [e.strip() for e in args.engines.split(",")]
    header = (f"{'rows':>12} {'engine':>7} {'count table s':>14} {'other s':>22} {'peak RSS MiB':>13} "
              f"{'occupied cells':>15} {'PrivPfC fit after table s':>28}")
    print(header)
    print("-" * len(header))
    proc = subprocess.run([sys.executable, __file__, "--measure", "baseline", "0"], capture_output=True, text=True)
    if proc.returncode == 0:
        b = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"{b['rows']:>12,} {'records':>7} {'—':>14} {'Adult fit(X, y, schema)':>22} "
              f"{b['peak_rss_mib']:>13.0f} {'—':>15} {b['fit_s']:>28.2f}", flush=True)
    for rows in sizes:
        t = time.perf_counter()
        generate(rows)
        print(f"# {rows:,} rows ready in {time.perf_counter() - t:.1f} s (Parquet, cached in {table_dir(rows)})",
              flush=True)
        for engine in engines:
            if engine == "pandas" and rows > parse_size(args.pandas_max):
                continue
            proc = subprocess.run([sys.executable, __file__, "--measure", engine, str(rows)],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
                print(f"{rows:>12,} {engine:>7}  failed: {tail[:120]}", flush=True)
                continue
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            other = (f"load {r['load_s']:.1f}" if "load_s" in r else
                     f"JVM {r['jvm_start_s']:.1f}, total {r['total_s']:.1f}" if "jvm_start_s" in r else
                     f"total {r['total_s']:.1f}" if "total_s" in r else "")
            print(f"{rows:>12,} {engine:>7} {r['table_s']:>14.2f} {other:>22} {r['peak_rss_mib']:>13.0f} "
                  f"{r['occupied_cells']:>15,} {r['fit_s']:>28.2f}" + ("" if r["records_ok"] else "  (record count wrong!)"),
                  flush=True)


if __name__ == "__main__":
    main()
