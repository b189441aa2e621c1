"""Cached input of notebook 03, sections 4-5: DiffMulti and DiffGen accuracy against h and ε on Adult.

    python benchmarks/03_diffmulti_sweeps.py [--reps 5] [--out notebooks/results/03_diffmulti_accuracy.csv]

Protocol (DiffMulti §5, the notebook's split): 2/3 train, 1/3 test with random_state=0; regions
built on the training split; a C4.5-like tree trained on the released generalized records weighted
by their noisy counts (``release.train_classifier``); test records generalized through the same
regions. Seeds 0..reps-1. Two sweeps: DiffMulti at ε = 1 over h, and DiffMulti (h = 1000, 100)
and DiffGen (10 steps) over ε. Each row also holds the discernibility penalty Σ (released
records per region)² of the release. One row per (sweep, method, h or ε, seed).
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import pandas as pd  # noqa: E402
from tqdm.auto import tqdm  # noqa: E402

from dpexplore.datasets import load_adult, train_test_split  # noqa: E402
from dpexplore.publish.diffgen import DiffGen  # noqa: E402
from dpexplore.publish.diffmulti import DiffMulti  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
H_VALUES = (10, 30, 100, 300, 1000, 3000, 10000)
EPSILONS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0)
METHODS = {"DiffMulti h=1000": (DiffMulti, {"h": 1000}), "DiffMulti h=100": (DiffMulti, {"h": 100}),
           "DiffGen 10 steps": (DiffGen, {"steps": 10})}
COLUMNS = ["sweep", "method", "h", "epsilon", "seed", "accuracy", "discernibility"]


def evaluate(method, X_tr, X_te, y_tr, y_te, schema, seed: int, **params) -> dict:
    """Test accuracy of the tree trained on one seeded release, and its discernibility penalty."""
    release = method(random_state=seed, **params, schema=schema).fit(X_tr, y_tr)
    accuracy = release.train_classifier(random_state=seed).score(X_te, y_te)
    penalty = float((release.released_counts().sum(axis=1).astype(float) ** 2).sum())
    return {"seed": seed, "accuracy": float(accuracy), "discernibility": penalty}


def sweep(reps: int, h_values=H_VALUES, epsilons=EPSILONS, methods=None) -> pd.DataFrame:
    """Both sweeps of the notebook as one tidy table (columns :data:`COLUMNS`)."""
    frame, schema = load_adult()
    data = train_test_split(frame, schema, test_size=1 / 3, random_state=0)
    rows = []
    for h in tqdm(h_values, desc="DiffMulti over h"):
        for seed in range(reps):
            rows.append({"sweep": "h", "method": "DiffMulti", "h": h, "epsilon": 1.0,
                         **evaluate(DiffMulti, *data, schema, seed, epsilon=1.0, h=h)})
    for eps in tqdm(epsilons, desc="ε sweep"):
        for name, (method, params) in (methods or METHODS).items():
            for seed in range(reps):
                rows.append({"sweep": "epsilon", "method": name, "h": params.get("h"), "epsilon": eps,
                             **evaluate(method, *data, schema, seed, epsilon=eps, **params)})
    return pd.DataFrame(rows)[COLUMNS]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--out", type=Path, default=ROOT / "notebooks" / "results" / "03_diffmulti_accuracy.csv")
    args = parser.parse_args()
    t0 = time.perf_counter()
    table = sweep(args.reps)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out, index=False, float_format="%.6g")
    print(f"{len(table)} rows written to {args.out} in {time.perf_counter() - t0:.0f} s")
    print(table.groupby(["sweep", "method", "h", "epsilon"], dropna=False)["accuracy"].agg(["mean", "std"])
          .round(4).to_string())


if __name__ == "__main__":
    main()
