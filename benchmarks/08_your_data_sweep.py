"""Cached input of notebook 08, section 6: every method on the generated messy table, by ε.

    python benchmarks/08_your_data_sweep.py [--rows 6000] [--reps 3] [--out notebooks/results/08_messy_sweep.csv]

Protocol: ``make_messy_table(rows, random_state=2026)``, the notebook's columns and declarations
(:func:`declared_messy`: counts on public bounds with long-tail cut points, weight 30–200 kg,
rows with a missing or text value dropped per record), then for each ε and seed s exactly
``dpexplore.tables.release(encoded, schema, method, ε, random_state=s, progress=False)`` (20 %
held out per record, the default ``marginal_share``, 0.7). One row per (method, ε, seed): held-out error of the release's classifier, of the majority
class and of a non-private logistic regression, the synthetic table's rows, and for PrivPfC its
grid's cells and expected records per cell (what ``PrivPfC(min_records_per_cell=...)`` bounds).
The notebook reads the CSV so that Run All stays short.
"""
from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from dpexplore import tables  # noqa: E402
from dpexplore.datasets import make_messy_table  # noqa: E402
from dpexplore.domain import PrivacyLeakWarning  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EPSILONS = (0.1, 0.3, 1.0, 3.0, 10.0)
COLUMNS = ["method", "epsilon", "seed", "error", "majority", "nonprivate_lr", "synthetic_rows", "cells",
           "records_per_cell", "seconds"]
#: the notebook's choice: nine predictors and the target, with their public domains
COUNT_BOUNDS = {"n_visits": 60, "n_meds": 60, "n_emergency": 30, "n_inpatient": 30, "n_outpatient": 30}
CATEGORICAL = ["admission_type", "discharge", "age_band"]
KEEP = list(COUNT_BOUNDS) + CATEGORICAL + ["weight_kg", "readmitted"]


def declared_messy(rows: int = 6000, seed: int = 2026):
    """(schema, encoded table, leaks) of the messy table as notebook 08 declares it."""
    frame = tables.select_columns(make_messy_table(rows, random_state=seed), KEEP)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        draft, _ = tables.draft_schema(frame, "readmitted")
    for name, upper in COUNT_BOUNDS.items():
        draft = tables.declare(draft, name, lower=0, upper=upper, integer=True, cuts="long-tail")
    draft = tables.declare(draft, "weight_kg", lower=30, upper=200, integer=False,
                           cuts=[50, 60, 70, 80, 90, 100, 120, 150])
    draft = tables.declare(draft, "age_band", categories=[f"[{10 * i}-{10 * (i + 1)})" for i in range(10)])
    draft = tables.declare(draft, "admission_type",
                           categories=["emergency", "urgent", "elective", "newborn", "trauma", "other"])
    draft = tables.declare(draft, "discharge", categories=["home", "home care", "transfer", "rehab", "hospice",
                                                           "left", "other", "unknown"])
    draft = tables.declare(draft, "readmitted", categories=["0", "1"])
    return tables.build_schema(frame, draft, missing="drop-rows")


def sweep(rows: int, reps: int, epsilons=EPSILONS, methods=None) -> pd.DataFrame:
    """One row per (method, ε, seed) with the columns :data:`COLUMNS`."""
    schema, encoded, leaks = declared_messy(rows)
    out = []
    # the publishing methods (a model, e.g. PrivateNaiveBayes, releases no synthetic table),
    # recorded under their display names, as notebook 08 shows them
    publishers = [name for name, spec in tables.METHODS.items() if spec.kind == "publisher"]
    for method in methods or publishers:
        for eps in epsilons:
            for seed in range(reps):
                t0 = time.perf_counter()
                res = tables.release(encoded, schema, method, eps, random_state=seed, progress=False, leaks=leaks)
                u = res.utility.set_index("model")["error"]
                occ = res.occupancy
                out.append({"method": tables.METHODS[method].display, "epsilon": eps, "seed": seed, "error": float(u.iloc[0]),
                            "majority": float(u["majority class"]),
                            "nonprivate_lr": float(u["non-private logistic regression"]),
                            "synthetic_rows": len(res.synthetic), "cells": occ.get("cells", np.nan),
                            "records_per_cell": occ.get("records per cell", np.nan),
                            "seconds": time.perf_counter() - t0})
    return pd.DataFrame(out, columns=COLUMNS)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=6000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "notebooks" / "results" / "08_messy_sweep.csv")
    args = ap.parse_args()
    t0 = time.perf_counter()
    res = sweep(args.rows, args.reps)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    res.to_csv(args.out, index=False, float_format="%.6g")
    print(res.groupby(["method", "epsilon"])[["error", "majority", "nonprivate_lr", "records_per_cell"]].mean()
          .round(4).to_string())
    print(f"{len(res)} rows -> {args.out} in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
