"""Cached sweeps and audit for notebook 05 (private feature selection after Stoddard et al. 2014).

    python benchmarks/05_private_roc_cache.py          # full: writes notebooks/results/05_*.csv (a few minutes)
    DPEXPLORE_QUICK=1 python benchmarks/05_private_roc_cache.py --out /tmp/05   # small, for a look

The notebook reads these CSVs instead of re-running: accuracy after private selection against ε,
the fully private pipelines, the F1 of each selector against F_τ, and the privacy audit of the
selectors on the PTT counterexample (20,000 runs per side; the notebook re-runs a small audit live).
Data preparation is the notebook's §1 (10,000 training and 600 test records of Adult, 0/1 leaf
indicators). Seeded: re-running gives the same files. ``tests/test_notebook_caches.py`` checks them.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

from dpexplore.config import repetitions  # noqa: E402
from dpexplore.budget import BudgetAccountant  # noqa: E402
from dpexplore.datasets import load_adult  # noqa: E402
from dpexplore.models.logistic import PrivateLogisticRegression  # noqa: E402
from dpexplore.select import stoddard  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "notebooks" / "results"
CLASSES = [0, 1]      # public: the schema's classes as 0/1, negative first
SELECTION_EPS = [0.01, 0.03, 0.1, 0.3, 1.0]


def adult_leaves() -> tuple:
    """Notebook 05 §1: 10,000 training / 600 test Adult records as 0/1 leaf indicators."""
    frame, schema = load_adult()
    order = np.random.default_rng(0).permutation(len(frame))
    test, train = frame.iloc[order[:600]], frame.iloc[order[600:10_600]]
    X_train, y_train = schema.split(train)
    X_test, y_test = schema.split(test)
    positive = schema.classes[-1]
    B_train = stoddard.binarize_leaves(X_train, schema)
    B_test = stoddard.binarize_leaves(X_test, schema)
    return (B_train, (y_train == positive).astype(int).to_numpy(), B_test,
            (y_test == positive).astype(int).to_numpy(), len(schema.predictors))


def _accuracy(B_train, y_train, B_test, y_test, support) -> float:
    if not support.any():
        return float(max(y_test.mean(), 1 - y_test.mean()))
    clf = LogisticRegression(max_iter=500).fit(B_train.loc[:, support], y_train)
    return float(clf.score(B_test.loc[:, support], y_test))


def selection_accuracy(B_train, y_train, B_test, y_test, s, epsilons, reps: int, k: int = 15) -> tuple:
    """Accuracy of non-private LR after each sound private selector (rows per run), and references."""
    tau = 0.3 * len(B_train)
    selectors = {
        "score perturbation": lambda e, r: stoddard.ScorePerturbationSelector(epsilon=e, k=k, max_ones=s,
                                                                              classes=CLASSES, random_state=r),
        "exponential top-k": lambda e, r: stoddard.ExponentialTopKSelector(k=k, epsilon=e, max_ones=s,
                                                                           classes=CLASSES, random_state=r),
        "sparse vector": lambda e, r: stoddard.SparseVectorSelector(threshold=tau, cutoff=k, epsilon=e,
                                                                    max_ones=s, classes=CLASSES, random_state=r),
    }
    rows = []
    for name, make in selectors.items():
        for eps in epsilons:
            for r in range(reps):
                support = make(eps, r).fit(B_train, y_train).get_support()
                rows.append({"method": name, "epsilon": eps, "run": r,
                             "accuracy": _accuracy(B_train, y_train, B_test, y_test, support)})
    tc = stoddard.total_count(B_train)
    references = pd.DataFrame({
        "reference": ["all features", "exact top-k by TC (not private)", "majority class"],
        "accuracy": [_accuracy(B_train, y_train, B_test, y_test, np.ones(B_train.shape[1], bool)),
                     _accuracy(B_train, y_train, B_test, y_test, np.isin(np.arange(tc.size), np.argsort(-tc)[:k])),
                     float(max(y_test.mean(), 1 - y_test.mean()))]})
    return pd.DataFrame(rows), references


def private_pipelines(B_train, y_train, B_test, y_test, s, reps: int) -> pd.DataFrame:
    """Total ε = 1: all to PrivateLogisticRegression, or 0.5 score perturbation (top k) + 0.5 classifier."""
    def run(r, k_sel):
        acc = BudgetAccountant(1.0)
        if k_sel is None:
            support, eps_clf = np.ones(B_train.shape[1], bool), 1.0
        else:
            support = stoddard.ScorePerturbationSelector(epsilon=0.5, k=k_sel, max_ones=s, random_state=r,
                                                         classes=CLASSES, accountant=acc).fit(
                B_train, y_train).get_support()
            eps_clf = 0.5
        model = PrivateLogisticRegression(epsilon=eps_clf, C=0.1, bounds=(0, 1), fit_intercept=True, classes=CLASSES,
                                          random_state=r, accountant=acc).fit(B_train.loc[:, support], y_train)
        assert abs(acc.spent - 1.0) < 1e-9
        return float(model.score(B_test.loc[:, support], y_test))

    return pd.DataFrame([{"pipeline": name, "run": r, "accuracy": run(r, k_sel)}
                         for name, k_sel in [(f"all {B_train.shape[1]} features, ε = 1 to the classifier", None),
                                             ("SP top 30 (ε = 0.5) + classifier (ε = 0.5)", 30),
                                             ("SP top 15 (ε = 0.5) + classifier (ε = 0.5)", 15)]
                         for r in range(reps)])


def selection_quality(B_train, y_train, s, reps: int, epsilon: float = 0.01,
                      quantiles=(0.2, 0.35, 0.5, 0.65, 0.8, 0.9)) -> pd.DataFrame:
    """F1 of each selector's output against the exact F_τ = {TC > τ} as τ varies (paper's Fig. 3)."""
    tc = stoddard.total_count(B_train)
    quality = []
    for t in np.quantile(tc, list(quantiles)):
        exact = tc > t
        for r in range(reps):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", stoddard.NotDifferentiallyPrivateWarning)
                picks = {
                    "score perturbation": stoddard.ScorePerturbationSelector(
                        epsilon=epsilon, threshold=t, max_ones=s, classes=CLASSES, random_state=r),
                    "sparse vector (c = 40)": stoddard.SparseVectorSelector(
                        threshold=t, cutoff=40, epsilon=epsilon, max_ones=s, classes=CLASSES, random_state=r),
                    "PTT — NOT DP": stoddard.PrivateThresholdTesting(threshold=t, epsilon=epsilon, classes=CLASSES,
                                                                     random_state=r),
                }
                for name, sel in picks.items():
                    q = stoddard.selection_quality(sel.fit(B_train, y_train).get_support(), exact)
                    quality.append({"method": name, "tau": round(float(t)), "run": r, "f1": q["f1"],
                                    "n_exact": int(exact.sum())})
    return pd.DataFrame(quality)


def audit(n_samples: int, cluster: bool = True) -> pd.DataFrame:
    """The selectors' audit on the PTT counterexample (notebook 05 §7), with the sample size used."""
    table = stoddard.audit_selectors(epsilon=1.0, n_samples=n_samples, cluster=cluster, random_state=5)
    return table.assign(n_samples=n_samples)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS, help="directory for the CSVs")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    B_train, y_train, B_test, y_test, s = adult_leaves()
    sel, refs = selection_accuracy(B_train, y_train, B_test, y_test, s, SELECTION_EPS, repetitions(5, 1))
    jobs = [("05_selection_accuracy.csv", lambda: sel),
            ("05_selection_references.csv", lambda: refs),
            ("05_private_pipelines.csv", lambda: private_pipelines(B_train, y_train, B_test, y_test, s,
                                                                   repetitions(10, 1))),
            ("05_selection_quality.csv", lambda: selection_quality(B_train, y_train, s, repetitions(10, 2))),
            ("05_audit.csv", lambda: audit(repetitions(20_000, 2_000)))]
    for name, make in jobs:
        t = time.perf_counter()
        table = make()
        table.to_csv(args.out / name, index=False, float_format="%.6g")
        print(f"{name:30s} {len(table):4d} rows  {time.perf_counter() - t:6.1f} s", flush=True)
    print(f"total {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    sys.exit(main())
