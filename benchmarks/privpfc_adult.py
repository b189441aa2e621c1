"""PrivPfC accuracy on Adult and Adult-Multiclass (Su et al. 2018 §5), against our targets.

Fixed stratified 80/20 split (seed 0); for each ε ∈ {0.05, 0.1, 0.2, 0.5, 1} PrivPfC
(Θ = 10,000, 3/37/60, exact Δ(ε_pert)) is fitted on the training part with seeds 0..R-1 and the
histogram classifier is evaluated on the test part. Prints median / mean / sd / min / max of the
test error, the non-private PrivPfC-SelNF median (noise-free selection, noisy counts) and the
majority baseline (from the training labels).

Targets (ours): Adult median ≤ 17.5% at ε = 1 and ≤ 19% at ε = 0.05; Adult-MC ≤ 13% at ε = 1.
Run: python benchmarks/privpfc_adult.py [repetitions, default 10]
"""
from __future__ import annotations

import os
import sys
import time
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from dpexplore.datasets import load_adult, load_adult_multiclass, train_test_split  # noqa: E402
from dpexplore.domain import PrivacyLeakWarning  # noqa: E402
from dpexplore.publish.privpfc import PrivPfC, PrivPfCSelNF, describe_grid  # noqa: E402

EPSILONS = (0.05, 0.1, 0.2, 0.5, 1.0)
TARGETS = {("Adult", 1.0): 0.175, ("Adult", 0.05): 0.19, ("Adult-MC", 1.0): 0.13}


def run(name: str, loader, repetitions: int) -> pd.DataFrame:
    frame, schema = loader()
    X_train, X_test, y_train, y_test = train_test_split(frame, schema, test_size=0.2, random_state=0)
    majority = float(np.mean(y_test != y_train.value_counts().idxmax()))
    print(f"\n{name}: {len(X_train):,} training / {len(X_test):,} test rows; majority error {majority:.4f}")
    rows = []
    for eps in EPSILONS:
        t0 = time.perf_counter()
        for seed in range(repetitions):
            model = PrivPfC(epsilon=eps, random_state=seed, schema=schema).fit(X_train, y_train)
            rows.append({"dataset": name, "epsilon": eps, "seed": seed, "method": "PrivPfC",
                         "error": 1 - model.score(X_test, y_test),
                         "grid": describe_grid(list(model.grid_.values()), list(model.grid_))})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            for seed in range(min(repetitions, 3)):
                selnf = PrivPfCSelNF(epsilon=eps, random_state=seed, schema=schema).fit(X_train, y_train)
                rows.append({"dataset": name, "epsilon": eps, "seed": seed, "method": "SelNF (non-private)",
                             "error": 1 - selnf.score(X_test, y_test), "grid": ""})
        res = pd.DataFrame([r for r in rows if r["epsilon"] == eps and r["method"] == "PrivPfC"])
        sel = pd.DataFrame([r for r in rows if r["epsilon"] == eps and r["method"] != "PrivPfC"])
        err = res["error"]
        target = TARGETS.get((name, eps))
        verdict = "" if target is None else f"  target ≤ {target:.3f}: {'MET' if err.median() <= target else 'MISSED'}"
        print(f"  ε = {eps:<4} median {err.median():.4f}  mean {err.mean():.4f} ± {err.std():.4f}  "
              f"[{err.min():.4f}, {err.max():.4f}]  SelNF {sel['error'].median():.4f}  "
              f"({time.perf_counter() - t0:.0f} s){verdict}")
        print(f"           most chosen grid: {res['grid'].mode().iloc[0]} ({(res['grid'] == res['grid'].mode().iloc[0]).mean():.0%} of runs)")
    return pd.DataFrame(rows)


def main() -> None:
    repetitions = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    print(f"PrivPfC, Θ = 10,000, split 3/37/60, histogram classifier, {repetitions} seeded runs per ε")
    run("Adult", load_adult, repetitions)
    run("Adult-MC", load_adult_multiclass, repetitions)


if __name__ == "__main__":
    main()
