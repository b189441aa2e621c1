"""Evaluating PrivPfC releases, and the tidy frames of the paper's figures.

Su, Cao, Li & Lyu, "PrivPfC: differentially private data publication for classification",
The VLDB Journal 27(2):201-223, 2018. Test errors of a release (its histogram classifier and a
tree trained on its synthetic data, §5.1), the error-against-ε sweep of §5.3 (Figs. 4-7, with the
noise-free selection of §5.5 as a reference), and small tables for plots: the quality
sensitivity against ε (Lemma 1), the win probability against the count lead (Eq. 10), a grid on
the taxonomies, and true against noisy counts of a few cells (a NON-PRIVATE diagnostic).

Post-processing of releases and evaluation on held-out data: nothing here spends budget.
"""
from __future__ import annotations

import warnings
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
from sklearn.preprocessing import OneHotEncoder
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.validation import check_is_fitted
from tqdm.auto import tqdm

from .. import sources
from ..inputs import is_source, source_input
from ..domain import PrivacyLeakWarning, Schema
from ..histogram import LevelCodes
from ..models.histogram import HistogramClassifier
from ..publish.privpfc import PrivPfC, PrivPfCRun, cell_labels, run_privpfc
from ..publish.privpfc_scoring import CONSTANT_SENSITIVITY, GridScorer, quality_sensitivity, win_probability

__all__ = ["held_out_cells", "release_tree_error", "run_errors", "error_sweep", "sensitivity_curve",
           "win_probability_curve", "grid_levels", "compare_counts", "counts_comparison"]


# =========================================================================== test errors of releases
def held_out_cells(test: Any, schema: Schema) -> tuple[LevelCodes, np.ndarray, np.ndarray]:
    """Test data as weighted cells: (node codes, class codes, counts) of its occupied cells.

    ``test``: a :class:`~dpexplore.sources.Source` (its count table, built once where the data
    lives), a DataFrame of the predictors and the target column ``schema.target``, or a pair
    ``(X_test, y_test)``. Checked against ``schema`` like ``fit(source)``. Errors computed on
    these cells with ``weights=counts`` equal the record-by-record ones, at a cost set by the
    number of cells, not of records. Evaluation data: nothing is released.
    """
    if isinstance(test, tuple) and len(test) == 2:
        X, y = test
        test = pd.DataFrame(X).assign(**{schema.target: np.asarray(y)})
    if not is_source(test):
        test = sources.pandas(test, schema)
    table, _ = source_input(test, None, schema)
    return LevelCodes.from_table(table), np.asarray(table.class_codes, dtype=np.int64), table.counts


def _error_rate(wrong: np.ndarray, weights: np.ndarray | None) -> float:
    """Share of test records misclassified; with ``weights``, each row stands for that many
    records (the same float as on the records: integer sums, one division)."""
    if weights is None:
        return float(np.mean(wrong))
    w = np.asarray(weights, dtype=np.int64)
    return float(w[wrong].sum() / w.sum())


def release_tree_error(counts: np.ndarray, grid: Mapping[str, int], test_codes: LevelCodes,
                       y_test: np.ndarray, random_state: int = 0, weights: np.ndarray | None = None) -> float:
    """Test error of a decision tree trained on the synthetic data of a released histogram.

    The synthetic data set (round(max(0, count)) copies of each (cell, class)) is passed as one
    weighted row per (cell, class); features are the one-hot node codes of the refined
    attributes, and test records are generalised to the same grid. ``weights``: records per
    test row (the counts of :func:`held_out_cells`). Post-processing only.
    """
    used = [a for a, d in grid.items() if d > 0]
    k = counts.shape[1]
    reps = np.rint(np.clip(counts, 0, None)).astype(np.int64).ravel()
    keep = np.flatnonzero(reps > 0)
    if keep.size == 0:
        return float("nan")
    cells, labels = np.divmod(keep, k)
    if not used:  # a one-cell release: the tree can only predict the synthetic majority
        majority = np.argmax(np.bincount(labels, weights=reps[keep], minlength=k))
        return _error_rate(y_test != majority, weights)
    shape = tuple(test_codes.level_sizes[a][grid[a]] for a in test_codes.attributes)
    nodes = np.unravel_index(cells, shape)
    idx = [test_codes.attributes.index(a) for a in used]
    Xs = np.column_stack([nodes[i] for i in idx])
    Xt = np.column_stack([test_codes.codes(a, grid[a]) for a in used])
    enc = OneHotEncoder(categories=[np.arange(shape[i]) for i in idx], handle_unknown="ignore")
    tree = DecisionTreeClassifier(random_state=random_state)
    tree.fit(enc.fit_transform(Xs), labels, sample_weight=reps[keep])
    return _error_rate(tree.predict(enc.transform(Xt)) != y_test, weights)


def run_errors(run: PrivPfCRun, attributes: Sequence[str], schema: Schema, test_codes: LevelCodes,
               y_test: np.ndarray, tree: bool = True, weights: np.ndarray | None = None) -> dict[str, float]:
    """Test errors of one release: its histogram classifier and (``tree``) a tree on its synthetic data.

    Test records are generalised to the released grid through ``test_codes`` (the same taxonomy
    lookup as the release's counts). ``y_test`` holds class indices; ``weights`` the records per
    test row (weighted cells from :func:`held_out_cells`; None: one record each). Post-processing only.
    """
    grid = {a: int(d) for a, d in zip(attributes, run.grid)}
    clf = HistogramClassifier.from_counts(run.noisy_counts, grid, schema)
    truth = np.asarray(schema.classes, dtype=object)[y_test]
    out = {"histogram": _error_rate(clf.predict_cells(test_codes.cell_codes(grid)) != truth, weights)}
    if tree:
        out["tree"] = release_tree_error(run.noisy_counts, grid, test_codes, y_test, weights=weights)
    return out


def error_sweep(X_train: pd.DataFrame, y_train: Any, X_test: pd.DataFrame, y_test: Any, schema: Schema,
                epsilons: Sequence[float], repetitions: int, *, theta: int = 10_000,
                shares: Sequence[float] = (0.03, 0.37, 0.60), tree: bool = True, selnf: bool = True,
                desc: str | None = None) -> pd.DataFrame:
    """Test error of PrivPfC releases over ε and seeds, with a ``tqdm`` progress bar.

    Seed s at budget ε is exactly ``PrivPfC(epsilon=ε, theta=theta, shares=shares,
    schema=schema, random_state=s).fit(X_train, y_train)``; the qualities are scored once per
    ε_pert and reused across seeds (they do not depend on the noise). One row per (ε, seed,
    method): "PrivPfC histogram classifier", "tree on PrivPfC synthetic data" (``tree``) and,
    with ``selnf``, one run of the NOT PRIVATE diagnostic PrivPfC-SelNF (noise-free selection,
    paper §5.5, Fig. 10) per ε. ``shares``: of ε for the record count, the selection and the
    histogram (Alg. 2 line 2).
    """
    scorer = GridScorer(LevelCodes(X_train, schema), schema.encode_target(y_train), schema.n_classes)
    test_codes = LevelCodes(X_test, schema)
    y_codes = schema.encode_target(y_test)
    names = {"histogram": "PrivPfC histogram classifier", "tree": "tree on PrivPfC synthetic data"}
    rows = []
    for eps in tqdm(list(epsilons), desc=desc or "ε sweep"):
        for seed in range(int(repetitions)):
            run = run_privpfc(scorer, epsilon=eps, theta=theta, shares=shares, random_state=seed)
            for key, err in run_errors(run, scorer.attributes, schema, test_codes, y_codes, tree).items():
                rows.append({"epsilon": eps, "seed": seed, "method": names[key], "error": err})
        if selnf:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PrivacyLeakWarning)  # labelled in the method name
                run = run_privpfc(scorer, epsilon=eps, theta=theta, shares=shares, random_state=0,
                                  private_selection=False)
            err = run_errors(run, scorer.attributes, schema, test_codes, y_codes, tree=False)["histogram"]
            rows.append({"epsilon": eps, "seed": 0, "method": "SelNF histogram (non-private)", "error": err})
    return pd.DataFrame(rows)


# =========================================================================== tidy data for plots
def sensitivity_curve(epsilons: Any) -> pd.DataFrame:
    """Δ_gq(ε) of Lemma 1 for each ε, next to the paper's constant 1.1 (the Fig. 2 analogue)."""
    eps = np.asarray(epsilons, dtype=float).ravel()
    return pd.DataFrame({"epsilon": eps, "sensitivity": [quality_sensitivity(e) for e in eps],
                         "constant": CONSTANT_SENSITIVITY})


def win_probability_curve(gaps: Any, epsilons: Sequence[float]) -> pd.DataFrame:
    """P[the leading class stays ahead after noise] against the count lead, per ε (Eq. 10)."""
    gaps = np.asarray(gaps, dtype=float).ravel()
    return pd.concat([pd.DataFrame({"gap": gaps, "epsilon": float(e), "probability": win_probability(gaps, e)})
                      for e in epsilons], ignore_index=True)


def grid_levels(grid: Mapping[str, int], schema: Schema) -> pd.DataFrame:
    """One row per (attribute, depth): node count and whether the grid uses that depth.

    ``level`` is the paper's numbering (depth + 1).
    """
    rows = []
    for a in schema.predictors:
        tax = schema[a].taxonomy
        for depth, size in enumerate(tax.level_sizes):
            rows.append({"attribute": a, "depth": depth, "level": depth + 1, "nodes": size,
                         "chosen": grid.get(a, 0) == depth, "refined": grid.get(a, 0) > 0})
    return pd.DataFrame(rows)


def compare_counts(true: Any, noisy: Any, grid: Mapping[str, int], schema: Schema,
                   n_cells: int = 6, pick: str = "largest") -> pd.DataFrame:
    """True vs noisy counts of ``n_cells`` cells of a released grid (tidy).

    NON-PRIVATE DIAGNOSTIC: ``true`` holds the raw counts (n_cells, n_classes) of the grid.
    The cells shown are picked from the noisy totals (the release), not from the true ones:
    ``pick="largest"`` takes the largest, ``"spread"`` takes cells at evenly spaced ranks from
    the largest to the smallest (so small and empty cells, where the noise shows, appear too).
    Columns: cell (node labels of the refined attributes), class, kind ("true"/"noisy"), count.
    """
    true, noisy = np.asarray(true, dtype=float), np.asarray(noisy, dtype=float)
    if true.shape != noisy.shape:
        raise ValueError(f"true and noisy counts differ in shape: {true.shape} vs {noisy.shape}")
    if pick not in ("largest", "spread"):
        raise ValueError(f"pick must be 'largest' or 'spread', got {pick!r}")
    ranked = np.argsort(-noisy.sum(axis=1), kind="stable")
    if pick == "largest" or len(ranked) <= n_cells:
        order = ranked[:n_cells]
    else:
        order = ranked[np.unique(np.linspace(0, len(ranked) - 1, n_cells).round().astype(int))]
    labels = cell_labels(order, grid, schema)
    used = [a for a in schema.predictors if grid.get(a, 0) > 0]
    names = labels[used].astype(str).agg(" · ".join, axis=1) if used else pd.Series(["(all records)"] * len(order))
    rows = []
    for name, cell in zip(names, order):
        for i, c in enumerate(schema.classes):
            rows.append({"cell": name, "class": c, "kind": "true", "count": float(true[cell, i])})
            rows.append({"cell": name, "class": c, "kind": "noisy", "count": float(noisy[cell, i])})
    return pd.DataFrame(rows)


def counts_comparison(model: PrivPfC, X: pd.DataFrame, y: Any, n_cells: int = 6,
                      pick: str = "largest") -> pd.DataFrame:
    """:func:`compare_counts` for a fitted PrivPfC and its training data (NON-PRIVATE diagnostic).

    The true counts are recounted with the histogram classifier's generalisation, which is the
    one used for the release and for test records.
    """
    check_is_fitted(model, "counts_")
    true = HistogramClassifier(schema=model.schema_, grid=model.grid_).fit(X, y).counts_
    return compare_counts(true, model.counts_, model.grid_, model.schema_, n_cells=n_cells, pick=pick)
