"""Cached input of notebook 02, section 6-7: PrivPfC test error against ε on Adult and Adult-Multiclass.

    python benchmarks/02_privpfc_sweep.py [--reps 20] [--out notebooks/results/02_privpfc_errors.csv]

Protocol (Su et al. 2018 §5.1, with the notebook's split instead of 10-fold CV): 80/20 train/test
split with random_state=0; at each
ε ∈ {0.05, 0.1, 0.2, 0.5, 1} and seed s = 0..reps-1, exactly ``PrivPfC(epsilon=ε,
random_state=s, schema=schema).fit(X_train, y_train)`` (Θ = 10,000, shares 3/37/60), scored on the
test set as the histogram classifier and as a decision tree trained on the synthetic records; plus
one run of the NON-PRIVATE diagnostic PrivPfC-SelNF per ε (``dpexplore.evaluate.privpfc.error_sweep``).
One row per (dataset, ε, seed, method); the notebook reads the CSV so that Run All stays short.
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import pandas as pd  # noqa: E402

from dpexplore.datasets import load_adult, load_adult_multiclass, train_test_split  # noqa: E402
from dpexplore.evaluate.privpfc import error_sweep  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EPSILONS = (0.05, 0.1, 0.2, 0.5, 1.0)
COLUMNS = ["dataset", "epsilon", "seed", "method", "error"]


def sweep(reps: int, epsilons=EPSILONS, theta: int = 10_000) -> pd.DataFrame:
    """The notebook's two sweeps as one tidy table (columns :data:`COLUMNS`)."""
    parts = []
    for name, loader in (("Adult", load_adult), ("Adult-Multiclass", load_adult_multiclass)):
        frame, schema = loader()
        X_tr, X_te, y_tr, y_te = train_test_split(frame, schema, test_size=0.2, random_state=0)
        res = error_sweep(X_tr, y_tr, X_te, y_te, schema, list(epsilons), reps, theta=theta, desc=name)
        parts.append(res.assign(dataset=name))
    return pd.concat(parts, ignore_index=True)[COLUMNS]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--out", type=Path, default=ROOT / "notebooks" / "results" / "02_privpfc_errors.csv")
    args = parser.parse_args()
    t0 = time.perf_counter()
    table = sweep(args.reps)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out, index=False, float_format="%.6g")
    print(f"{len(table)} rows written to {args.out} in {time.perf_counter() - t0:.0f} s")
    print(table.groupby(["dataset", "method", "epsilon"])["error"].median().unstack().round(4).to_string())


if __name__ == "__main__":
    main()
