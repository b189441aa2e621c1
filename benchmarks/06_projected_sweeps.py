"""Cached AUC sweeps for notebook 06 (Vinterbo's projected histograms on Iris and Adult).

    python benchmarks/06_projected_sweeps.py          # full: writes notebooks/results/06_auc_sweeps.csv (~1-2 min)
    DPEXPLORE_QUICK=1 python benchmarks/06_projected_sweeps.py --out /tmp/06   # small, for a look

The paper's protocol (stratified CV, every private step re-run in each training fold, AUC on the
held-out fold, Hand–Till AUC for Iris): the projected histogram as ε, k or γ moves (the others at
ε = 1 and the heuristics), with non-private LR, "projection only" (ε = 10⁴) and DP-LR as
references. Seeded: re-running gives the same file. ``tests/test_notebook_caches.py`` checks it.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import pandas as pd  # noqa: E402

from dpexplore.config import repetitions  # noqa: E402
from dpexplore.datasets import load_adult, load_iris  # noqa: E402
from dpexplore.publish.projected import ProjectedHistogram  # noqa: E402
from dpexplore.evaluate import projected as explore  # noqa: E402
from dpexplore.models import PrivateLRClassifier  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "notebooks" / "results"
GRIDS = {"epsilon": [0.1, 0.3, 1.0, 3.0], "k": [1, 2, 3, 4], "gamma": [0.1, 0.3, 0.5, 0.7, 0.9]}


def sweeps(data: dict, grids: dict = GRIDS, progress=None) -> pd.DataFrame:
    """``data``: {name: (frame, schema, folds)}. Rows: dataset, parameter, value, method, fold, auc, ..."""
    reference = {}
    for name, (frame, schema, folds) in data.items():
        methods = {"LR (non-private)": lambda s, sc=schema: explore.NonPrivateLR(sc),
                   "projection only (ε = 10⁴)": lambda s, sc=schema: ProjectedHistogram(1e4, random_state=s,
                                                                                        schema=sc)}
        if name == "Adult":
            methods["DP-LR"] = lambda s, sc=schema: PrivateLRClassifier(sc, epsilon=1.0, random_state=s)
        reference[name] = explore.cross_validated_auc(frame, schema, methods, folds=folds)
    parts = []
    for parameter, values in grids.items():
        for name, (frame, schema, folds) in data.items():
            parts.append(explore.auc_sweep(frame, schema, name, parameter, values, folds=folds,
                                           dp_lr=(name == "Iris"), progress=progress))
            ref = reference[name]
            parts.append(explore.broadcast_reference(ref[ref.method != "DP-LR"], name, parameter, values))
            dp_at_1 = ref[ref.method == "DP-LR"]
            if len(dp_at_1):   # DP-LR on Adult is slow: ε = 1 only
                parts.append(explore.broadcast_reference(dp_at_1, name, parameter,
                                                         [1.0] if parameter == "epsilon" else values))
    return pd.concat(parts, ignore_index=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS, help="directory for the CSV")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    (iris, iris_schema), (adult, adult_schema) = load_iris(), load_adult()
    table = sweeps({"Iris": (iris, iris_schema, repetitions(10, 3)),
                    "Adult": (adult, adult_schema, repetitions(5, 2))})
    table.to_csv(args.out / "06_auc_sweeps.csv", index=False, float_format="%.6g")
    print(f"06_auc_sweeps.csv {len(table)} rows  {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    sys.exit(main())
