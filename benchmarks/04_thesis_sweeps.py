"""Cached sweeps for notebook 04 (private feature selection, DP-NB, DP-LR on Adult and toy data).

    python benchmarks/04_thesis_sweeps.py          # full: writes notebooks/results/04_*.csv (a few minutes)
    DPEXPLORE_QUICK=1 python benchmarks/04_thesis_sweeps.py --out /tmp/04   # small, for a look

The notebook reads these CSVs instead of re-running the sweeps (each would take minutes of a
lesson): accuracy against k and against ε at total ε = 0.1 on Adult (median and quartiles over
seeded runs), and accuracy against λ on the thesis's toy Gaussian data. Everything is seeded, so
re-running gives the same files. ``tests/test_notebook_caches.py`` recomputes a tiny version and
checks the shipped files against it.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.naive_bayes import BernoulliNB  # noqa: E402

from dpexplore.config import quick, repetitions  # noqa: E402
from dpexplore.datasets import load_adult, train_test_split  # noqa: E402
from dpexplore.models.logistic import PrivateLogisticRegression, make_gaussian_toy  # noqa: E402
from dpexplore.models.naive_bayes import Binarizer, PrivateNaiveBayes  # noqa: E402
from dpexplore.models.pipeline import SelectThenTrain  # noqa: E402
from dpexplore.select.scores import purity_index  # noqa: E402
from dpexplore.select.thesis import PrivateKSubsetSelector  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "notebooks" / "results"
CLASSES = [0, 1]        # public: the schema's two classes as 0/1, negative first
N_MIN = 30_000          # public lower bound on the number of records (MI sensitivity)
K_GRID = [1, 2, 3, 5, 8, 10, 15, 20, 30, 50]
EPS_GRID = [0.01, 0.03, 0.1, 0.3, 1.0, 3.0]
LAMBDA_GRID = [0.01, 0.1, 1, 3, 5, 7, 10, 30, 100, 1000, 10_000]


def adult_binary() -> tuple:
    """Adult one-hot from the public schema, split 2:1 as in notebook 04 §1: (B_tr, y_tr, B_te, y_te)."""
    frame, schema = load_adult()
    X_tr, X_te, y_tr, y_te = train_test_split(frame, schema, test_size=1 / 3, random_state=0)
    binarizer = Binarizer(schema).fit()
    B_tr, B_te = binarizer.transform(X_tr), binarizer.transform(X_te)
    y_train = (y_tr == schema.classes[1]).astype(int).to_numpy()
    y_test = (y_te == schema.classes[1]).astype(int).to_numpy()
    return B_tr, y_train, B_te, y_test


def _summary(accs: list[float]) -> dict:
    return {"median": float(np.median(accs)), "q25": float(np.percentile(accs, 25)),
            "q75": float(np.percentile(accs, 75)), "runs": len(accs)}


def accuracy_against_k(B_tr, y_tr, B_te, y_te, ks, reps: int, lr_reps: int, epsilon: float = 0.1) -> pd.DataFrame:
    """Notebook 04 §6: test accuracy of four pipelines against k at total ``epsilon`` (split 1:1)."""
    order = np.argsort(-purity_index(B_tr.to_numpy(), y_tr))
    rows = []
    for kk in ks:
        fns = {
            "private k-subset (count) + DP-NB": lambda s: SelectThenTrain(
                PrivateKSubsetSelector(k=kk), PrivateNaiveBayes(), epsilon=epsilon, classes=CLASSES,
                random_state=s).fit(B_tr, y_tr).score(B_te, y_te),
            "private k-subset (MI) + DP-NB": lambda s: SelectThenTrain(
                PrivateKSubsetSelector(k=kk, feature_score="mi", n_min=N_MIN), PrivateNaiveBayes(),
                epsilon=epsilon, classes=CLASSES, random_state=s).fit(B_tr, y_tr).score(B_te, y_te),
            "non-private top-k (oracle) + DP-NB": lambda s: PrivateNaiveBayes(
                epsilon, classes=CLASSES, random_state=s).fit(B_tr.iloc[:, order[:kk]], y_tr).score(
                B_te.iloc[:, order[:kk]], y_te),
            "private k-subset (count) + DP-LR": lambda s: SelectThenTrain(
                PrivateKSubsetSelector(k=kk), PrivateLogisticRegression(lam=100.0, bounds=(0, 1), fit_intercept=True),
                epsilon=epsilon, classes=CLASSES, random_state=s).fit(B_tr, y_tr).score(B_te, y_te),
        }
        for name, fn in fns.items():
            accs = [fn(s) for s in range(lr_reps if "DP-LR" in name else reps)]
            rows.append({"k": kk, "pipeline": name, **_summary(accs)})
    return pd.DataFrame(rows)


def accuracy_against_epsilon(B_tr, y_tr, B_te, y_te, epsilons, reps: int, lr_reps: int) -> pd.DataFrame:
    """Notebook 04 §7: k = 10 selection + DP-NB, DP-NB and DP-LR with all features, against total ε."""
    makes = {
        "k-subset (count) k=10 + DP-NB": lambda e, s: SelectThenTrain(
            PrivateKSubsetSelector(k=10), PrivateNaiveBayes(), epsilon=e, classes=CLASSES, random_state=s),
        "DP-NB, all features": lambda e, s: SelectThenTrain(None, PrivateNaiveBayes(), epsilon=e, classes=CLASSES,
                                                            random_state=s),
        "DP-LR (λ=100), all features": lambda e, s: SelectThenTrain(
            None, PrivateLogisticRegression(lam=100.0, bounds=(0, 1), fit_intercept=True), epsilon=e,
            classes=CLASSES, random_state=s),
    }
    rows = []
    for eps in epsilons:
        for name, make in makes.items():
            accs = [make(eps, s).fit(B_tr, y_tr).score(B_te, y_te)
                    for s in range(lr_reps if "DP-LR" in name else reps)]
            rows.append({"epsilon": eps, "pipeline": name, **_summary(accs)})
    return pd.DataFrame(rows)


def baselines(B_tr, y_tr, B_te, y_te, reps: int, epsilon: float = 0.1) -> pd.DataFrame:
    """Majority, non-private NB and LR (all features), and DP-NB with all features at ``epsilon``."""
    majority = float(max(y_te.mean(), 1 - y_te.mean()))
    nb = float(BernoulliNB(alpha=1.0).fit(B_tr, y_tr).score(B_te, y_te))
    lr = float(LogisticRegression(max_iter=2000).fit(B_tr, y_tr).score(B_te, y_te))
    dp = float(np.median([PrivateNaiveBayes(epsilon, classes=CLASSES, random_state=s).fit(B_tr, y_tr).score(B_te, y_te)
                          for s in range(reps)]))
    return pd.DataFrame({"baseline": ["majority class", "non-private NB, all features", "non-private LR, all features",
                                      f"DP-NB, all features, ε = {epsilon:g}"],
                         "accuracy": [majority, nb, lr, dp]})


def accuracy_against_lambda(lambdas, reps: int, D: int = 5, N: int = 1024, epsilon: float = 0.1,
                            n_test: int = 20_000) -> pd.DataFrame:
    """Notebook 04 §9: output vs objective perturbation on the toy data (best accuracy 90%) against λ."""
    X, y, bounds = make_gaussian_toy(N + n_test, D, random_state=0)
    rows = []
    for lam in lambdas:
        for method in ["output", "objective"]:
            accs = [PrivateLogisticRegression(epsilon, method=method, lam=lam, bounds=bounds, classes=[0, 1],
                                              random_state=s).fit(X[:N], y[:N]).score(X[N:], y[N:])
                    for s in range(reps)]
            rows.append({"lam": lam, "pipeline": method + " perturbation", **_summary(accs)})
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS, help="directory for the CSVs")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    reps, lr_reps = repetitions(10, 2), repetitions(5, 1)
    ks = [1, 3, 5, 10, 30] if quick() else K_GRID
    epsilons = [0.03, 0.3, 3.0] if quick() else EPS_GRID
    start = time.perf_counter()
    data = adult_binary()
    for name, make in [("04_accuracy_k.csv", lambda: accuracy_against_k(*data, ks, reps, lr_reps)),
                       ("04_accuracy_epsilon.csv", lambda: accuracy_against_epsilon(*data, epsilons, reps, lr_reps)),
                       ("04_baselines.csv", lambda: baselines(*data, reps)),
                       ("04_accuracy_lambda.csv", lambda: accuracy_against_lambda(LAMBDA_GRID, repetitions(20, 3)))]:
        t = time.perf_counter()
        table = make()
        table.to_csv(args.out / name, index=False, float_format="%.6g")
        print(f"{name:28s} {len(table):4d} rows  {time.perf_counter() - t:6.1f} s", flush=True)
    print(f"total {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    sys.exit(main())
