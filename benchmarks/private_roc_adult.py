"""Private ROC on Adult: PriROC vs LaplaceROC AUC errors (Stoddard et al. 2014, Table 1 style).

Setting (ours, after Stoddard et al. 2014 §5.2): a test set of 600 Adult records (the paper's folds have 558 and 684), scores
from a non-private scikit-learn logistic regression trained on other Adult records, ε = 1.
Every method sees the same scores and the same seeds; the error is |AUC(true) − AUC(private)|,
the median over the repetitions (the paper takes the median of 10 runs; we use more).

Prints: the Table-1-style grid over ε, the paper's paired (k, t) settings, a k sweep, how often
the smooth-sensitivity medians fall back to the midpoint, the targets (PriROC median error < 0.05
and ≤ 0.7 × LaplaceROC at ε = 1) on the main split and on four other random test sets, and the
widgets' redraw latency.

Run: python benchmarks/private_roc_adult.py   (DPEXPLORE_QUICK=1 for fewer repetitions)
"""
from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from dpexplore.config import repetitions
from dpexplore.datasets import load_adult
from dpexplore.evaluate.roc import (DegenerateCurveWarning, area_between_curves, laplace_roc_curve,
                                    private_roc_curve, recursive_median_thresholds, roc_curve_exact)

TEST_SIZE = 600
TRAIN_SIZE = 10_000
CLASSES = [0, 1]   # the 0/1-binarised Adult target: public labels, negative first (never read from y)


def adult_scores(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Labels and logistic-regression scores of a 600-record Adult test set (not private)."""
    frame, schema = load_adult()
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(frame))
    test, train = frame.iloc[order[:TEST_SIZE]], frame.iloc[order[TEST_SIZE:TEST_SIZE + TRAIN_SIZE]]
    target = schema.target
    predictors = [c for c in frame.columns if c != target]
    numeric = [c for c in predictors if pd.api.types.is_numeric_dtype(frame[c])]
    categorical = [c for c in predictors if c not in numeric]
    model = make_pipeline(
        ColumnTransformer([("num", StandardScaler(), numeric),
                           ("cat", OneHotEncoder(handle_unknown="ignore"), categorical)]),
        LogisticRegression(max_iter=1000))
    positive = schema.classes[-1]
    model.fit(train[predictors], (train[target] == positive).astype(int))
    scores = model.predict_proba(test[predictors])[:, 1]
    return (test[target] == positive).to_numpy().astype(int), scores


METHODS = {
    "PriROC RecursiveMedians (default)": lambda y, s, e, r: private_roc_curve(
        y, s, epsilon=e, classes=CLASSES, random_state=r),
    "PriROC RecursiveMedians, EM median": lambda y, s, e, r: private_roc_curve(
        y, s, epsilon=e, classes=CLASSES, median="exponential", random_state=r),
    "PriROC RecursiveMedians, parallel TP/FP": lambda y, s, e, r: private_roc_curve(
        y, s, epsilon=e, classes=CLASSES, counts_split="parallel", random_state=r),
    "PriROC FixedSpace": lambda y, s, e, r: private_roc_curve(
        y, s, epsilon=e, classes=CLASSES, thresholds="fixed_space", random_state=r),
    "LaplaceROC t=10 (paper: sensitivity 2t+1)": lambda y, s, e, r: laplace_roc_curve(
        y, s, epsilon=e, classes=CLASSES, n_thresholds=10, random_state=r),
    "LaplaceROC t=10 (tight t+1, isotonic)": lambda y, s, e, r: laplace_roc_curve(
        y, s, epsilon=e, classes=CLASSES, n_thresholds=10, sensitivity="tight", isotonic=True, random_state=r),
}


def errors(y, s, true_curve, method, epsilon, seeds) -> tuple[float, float]:
    auc_err, area_err = [], []
    for seed in seeds:
        curve = METHODS[method](y, s, epsilon, seed)
        auc_err.append(abs(curve.attrs["auc"] - true_curve.attrs["auc"]))
        area_err.append(area_between_curves(true_curve, curve))
    return float(np.median(auc_err)), float(np.median(area_err))


def main() -> None:
    warnings.simplefilter("ignore", DegenerateCurveWarning)
    y, s = adult_scores()
    true_curve = roc_curve_exact(y, s)
    n_rep = repetitions(50, 10)
    seeds = range(n_rep)
    print(f"Adult test set: n = {y.size}, positives = {y.sum()}, true AUC = {true_curve.attrs['auc']:.4f}; "
          f"{n_rep} seeds per cell, same seeds for every method\n")

    rows = []
    for eps in (1.0, 0.5, 0.25, 0.1):
        for method in METHODS:
            auc_e, area_e = errors(y, s, true_curve, method, eps, seeds)
            rows.append({"epsilon": eps, "method": method, "median |AUC error|": auc_e,
                         "median area between curves": area_e})
    table = pd.DataFrame(rows)
    with pd.option_context("display.width", 160, "display.max_colwidth", 50):
        print("Median AUC error (Table 1 style)")
        print(table.pivot(index="method", columns="epsilon", values="median |AUC error|")
              .sort_index(axis=1, ascending=False).round(4).to_string())
        print("\nMedian area between true and private curves")
        print(table.pivot(index="method", columns="epsilon", values="median area between curves")
              .sort_index(axis=1, ascending=False).round(4).to_string())

    print("\nThe paper's paired settings at ε = 1 (PriROC with 2^k bins vs LaplaceROC with t thresholds, "
          "paper sensitivity): median |AUC error|")
    for k, t in ((10, 10), (9, 9), (8, 8), (7, 7), (4, 10)):
        pri_k = [abs(private_roc_curve(y, s, epsilon=1.0, n_thresholds=2 ** k, classes=CLASSES, random_state=r)
                     .attrs["auc"] - true_curve.attrs["auc"]) for r in seeds]
        lap_t = [abs(laplace_roc_curve(y, s, epsilon=1.0, n_thresholds=t, classes=CLASSES, random_state=r)
                     .attrs["auc"] - true_curve.attrs["auc"]) for r in seeds]
        tag = "  (package default)" if k == 4 else ""
        print(f"  k = {k:2d}, t = {t:2d}: PriROC {np.median(pri_k):.4f}   LaplaceROC {np.median(lap_t):.4f}{tag}")

    print("\nNumber of bins 2^k (RecursiveMedians, smooth median, ε = 1): median |AUC error|")
    for k in range(3, 11):
        errs = [abs(private_roc_curve(y, s, epsilon=1.0, n_thresholds=2 ** k, classes=CLASSES, random_state=r)
                    .attrs["auc"] - true_curve.attrs["auc"]) for r in seeds]
        print(f"  k = {k:2d} ({2 ** k:4d} bins): {np.median(errs):.4f}")

    print("\nNoisy medians that fell outside their interval (midpoint used), ε1 = 0.2 (ε = 1):")
    for median in ("smooth", "exponential"):
        for k in (4, 10):
            rate = np.mean([recursive_median_thresholds(s, epsilon=0.2, depth=k, median=median,
                                                        return_fallbacks=True, random_state=r)[1].mean()
                            for r in seeds])
            print(f"  {median:11s} median, k = {k:2d}: {100 * rate:5.1f} %")

    at1 = table[table["epsilon"] == 1.0].set_index("method")["median |AUC error|"]
    pri = at1["PriROC RecursiveMedians (default)"]
    lap = at1["LaplaceROC t=10 (paper: sensitivity 2t+1)"]
    tight = at1["LaplaceROC t=10 (tight t+1, isotonic)"]
    print(f"\nTarget at ε = 1: PriROC median AUC error {pri:.4f} < 0.05 -> {'PASS' if pri < 0.05 else 'FAIL'}")
    print(f"Target at ε = 1: PriROC / LaplaceROC (paper's baseline) = {pri / lap:.2f} ≤ 0.7 -> "
          f"{'PASS' if pri <= 0.7 * lap else 'FAIL'}")
    print(f"   (against the strengthened baseline, tight sensitivity + isotonic: {pri / tight:.2f})")

    print(f"\nOther random test sets of {TEST_SIZE} records (classifier retrained), ε = 1, {n_rep} seeds each:")
    for split in range(1, 5):
        ys, ss = adult_scores(seed=split)
        truth = roc_curve_exact(ys, ss).attrs["auc"]
        pri_s = np.median([abs(METHODS["PriROC RecursiveMedians (default)"](ys, ss, 1.0, r).attrs["auc"] - truth)
                           for r in seeds])
        lap_s = np.median([abs(METHODS["LaplaceROC t=10 (paper: sensitivity 2t+1)"](ys, ss, 1.0, r)
                               .attrs["auc"] - truth) for r in seeds])
        verdict = "PASS" if pri_s < 0.05 and pri_s <= 0.7 * lap_s else "FAIL"
        print(f"  split {split}: positives {ys.sum()}, true AUC {truth:.3f}, PriROC {pri_s:.4f}, "
              f"LaplaceROC {lap_s:.4f}, ratio {pri_s / lap_s:.2f} -> {verdict}")

    print_latencies(y, s)


def print_latencies(y: np.ndarray, s: np.ndarray) -> None:
    """Slider → redraw time of both explorers of notebook 05 (display output discarded)."""
    import contextlib
    import io

    from dpexplore.select.stoddard import binarize_leaves
    from dpexplore.widgets.roc import FeatureSelectionExplorer, PrivateROCExplorer

    def timed(explorer, control, values):
        times = []
        for v in values:
            control.value = v                           # the observer redraws once
            t0 = time.perf_counter()
            explorer.update()
            times.append(time.perf_counter() - t0)
        return 1000 * np.median(times), 1000 * np.max(times)

    with contextlib.redirect_stdout(io.StringIO()):
        roc_explorer = PrivateROCExplorer(y, s, classes=CLASSES)
        roc_ms = timed(roc_explorer, roc_explorer.levels, (4, 5, 6, 7, 8, 5, 4, 6))
        frame, schema = load_adult()
        order = np.random.default_rng(0).permutation(len(frame))
        test, train = frame.iloc[order[:TEST_SIZE]], frame.iloc[order[TEST_SIZE:TEST_SIZE + TRAIN_SIZE]]
        positive = schema.classes[-1]
        fs_explorer = FeatureSelectionExplorer(
            binarize_leaves(train, schema), (train[schema.target] == positive).astype(int),
            binarize_leaves(test, schema), (test[schema.target] == positive).astype(int),
            max_ones=len(schema.predictors), classes=CLASSES)
        fs_ms = timed(fs_explorer, fs_explorer.epsilon, (0.1, 0.2, 0.5, 1.0, 2.0, 0.3))
    print(f"\nPrivateROCExplorer redraw (5 draws, k = 4..8): median {roc_ms[0]:.0f} ms, max {roc_ms[1]:.0f} ms")
    print(f"FeatureSelectionExplorer redraw (selection + LR on {TRAIN_SIZE} rows): "
          f"median {fs_ms[0]:.0f} ms, max {fs_ms[1]:.0f} ms")


if __name__ == "__main__":
    main()
