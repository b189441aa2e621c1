"""PrivPfCExplorer: slide ε, the budget split and Θ; see the pool, the choice, the noise, the error.

Built once per train/test split: the node codes of every record at every taxonomy level (train
and test) and a :class:`~dpexplore.publish.privpfc.GridScorer` whose quality cache is keyed by
ε_pert, so moving a slider that leaves ε_pert unchanged (the selection share, Θ within an already
scored pool, the seed) costs no re-scoring. Each redraw is one ``run_privpfc`` call plus plots.
"""
from __future__ import annotations

import warnings
from typing import Any, Mapping, Sequence

import altair as alt
import ipywidgets as W
import numpy as np
import pandas as pd
from IPython.display import display
from sklearn.preprocessing import OneHotEncoder
from sklearn.tree import DecisionTreeClassifier
from tqdm.auto import tqdm

from ..domain import PrivacyLeakWarning, Schema
from ..histogram import LevelCodes
from ..models.histogram import HistogramClassifier
from ..plots.privpfc import candidates_chart, counts_chart, errors_bar_chart, grid_levels_chart, selection_chart
from ..publish.privpfc import (GridScorer, PrivPfCRun, candidates_table, compare_counts, grid_levels,
                               run_privpfc)

__all__ = ["PrivPfCExplorer", "release_tree_error", "run_errors", "error_sweep"]

THETA_CHOICES = (10, 30, 100, 300, 1_000, 3_000, 10_000, 30_000, 100_000, 200_000)
PRESETS = {"3/37/60 (paper)": (0.37, 0.60), "3/10/87 (Fig. 9)": (0.10, 0.87), "3/57/40": (0.57, 0.40)}


def release_tree_error(counts: np.ndarray, grid: Mapping[str, int], test_codes: LevelCodes,
                       y_test: np.ndarray, random_state: int = 0) -> float:
    """Test error of a decision tree trained on the synthetic data of a released histogram.

    The synthetic data set (round(max(0, count)) copies of each (cell, class)) is passed as one
    weighted row per (cell, class); features are the one-hot node codes of the refined
    attributes, and test records are generalised to the same grid. Post-processing only.
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
        return float(np.mean(y_test != majority))
    shape = tuple(test_codes.level_sizes[a][grid[a]] for a in test_codes.attributes)
    nodes = np.unravel_index(cells, shape)
    idx = [test_codes.attributes.index(a) for a in used]
    Xs = np.column_stack([nodes[i] for i in idx])
    Xt = np.column_stack([test_codes.codes(a, grid[a]) for a in used])
    enc = OneHotEncoder(categories=[np.arange(shape[i]) for i in idx], handle_unknown="ignore")
    tree = DecisionTreeClassifier(random_state=random_state)
    tree.fit(enc.fit_transform(Xs), labels, sample_weight=reps[keep])
    return float(np.mean(tree.predict(enc.transform(Xt)) != y_test))


def run_errors(run: PrivPfCRun, attributes: Sequence[str], schema: Schema, test_codes: LevelCodes,
               y_test: np.ndarray, tree: bool = True) -> dict[str, float]:
    """Test errors of one release: its histogram classifier and (``tree``) a tree on its synthetic data.

    Test records are generalised to the released grid through ``test_codes`` (the same taxonomy
    lookup as the release's counts). ``y_test`` holds class indices. Post-processing only.
    """
    grid = {a: int(d) for a, d in zip(attributes, run.grid)}
    clf = HistogramClassifier.from_counts(run.noisy_counts, grid, schema)
    truth = np.asarray(schema.classes, dtype=object)[y_test]
    out = {"histogram": float(np.mean(clf.predict_cells(test_codes.cell_codes(grid)) != truth))}
    if tree:
        out["tree"] = release_tree_error(run.noisy_counts, grid, test_codes, y_test)
    return out


def error_sweep(X_train: pd.DataFrame, y_train: Any, X_test: pd.DataFrame, y_test: Any, schema: Schema,
                epsilons: Sequence[float], repetitions: int, *, theta: int = 10_000,
                split: Sequence[float] = (0.03, 0.37, 0.60), tree: bool = True, selnf: bool = True,
                desc: str | None = None) -> pd.DataFrame:
    """Test error of PrivPfC releases over ε and seeds, with a ``tqdm`` progress bar.

    Seed s at budget ε is exactly ``PrivPfC(epsilon=ε, theta=theta, split=split,
    random_state=s).fit(X_train, y_train, schema=schema)``; the qualities are scored once per
    ε_pert and reused across seeds (they do not depend on the noise). One row per (ε, seed,
    method): "PrivPfC histogram classifier", "tree on PrivPfC synthetic data" (``tree``) and,
    with ``selnf``, one run of the NOT PRIVATE diagnostic PrivPfC-SelNF (noise-free selection,
    paper §7.4) per ε.
    """
    scorer = GridScorer(LevelCodes(X_train, schema), schema.encode_target(y_train), schema.n_classes)
    test_codes = LevelCodes(X_test, schema)
    y_codes = schema.encode_target(y_test)
    names = {"histogram": "PrivPfC histogram classifier", "tree": "tree on PrivPfC synthetic data"}
    rows = []
    for eps in tqdm(list(epsilons), desc=desc or "ε sweep"):
        for seed in range(int(repetitions)):
            run = run_privpfc(scorer, epsilon=eps, theta=theta, split=split, random_state=seed)
            for key, err in run_errors(run, scorer.attributes, schema, test_codes, y_codes, tree).items():
                rows.append({"epsilon": eps, "seed": seed, "method": names[key], "error": err})
        if selnf:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PrivacyLeakWarning)  # labelled in the method name
                run = run_privpfc(scorer, epsilon=eps, theta=theta, split=split, random_state=0,
                                  private_selection=False)
            err = run_errors(run, scorer.attributes, schema, test_codes, y_codes, tree=False)["histogram"]
            rows.append({"epsilon": eps, "seed": 0, "method": "SelNF histogram (non-private)", "error": err})
    return pd.DataFrame(rows)


class PrivPfCExplorer:
    """Interactive PrivPfC on a fixed train/test split.

    Sliders: total ε (log scale), the selection and histogram shares (the record count gets the
    rest), Θ, and the seed. Shows the pool (quality against size, chosen grid ringed), the
    selection probabilities, the chosen grid on the taxonomies, the test errors against the
    baselines, and true vs noisy counts of six released cells from the largest to the smallest
    (a non-private view). The selection share, Θ and the seed leave ε_pert unchanged, so they
    redraw from cached qualities. ``update()`` redraws; ``.widget`` is the container to display.
    ``baselines``: name -> error lines for the status text (e.g. majority, non-private tree).
    """

    def __init__(self, X_train: pd.DataFrame, y_train: Any, X_test: pd.DataFrame, y_test: Any,
                 schema: Schema, *, epsilon: float = 1.0, theta: int = 10_000, seed: int = 0,
                 noise_to_signal: float = 0.2, baselines: Mapping[str, float] | None = None):
        self.schema = schema
        self.noise_to_signal = noise_to_signal
        self.scorer = GridScorer(LevelCodes(X_train, schema), schema.encode_target(y_train), schema.n_classes)
        self.test_codes = LevelCodes(X_test, schema)
        self.y_test = schema.encode_target(y_test)
        self.baselines = dict(baselines or {})
        style = {"description_width": "150px"}
        layout = W.Layout(width="460px")
        self.epsilon = W.FloatLogSlider(value=epsilon, base=10, min=-2, max=0.5, step=0.05, description="ε (total)",
                                        readout_format=".3f", continuous_update=False, style=style, layout=layout)
        self.sel_share = W.FloatSlider(value=0.37, min=0.01, max=0.8, step=0.01, description="share: selection",
                                       continuous_update=False, style=style, layout=layout)
        self.pert_share = W.FloatSlider(value=0.60, min=0.1, max=0.95, step=0.01, description="share: histogram",
                                        continuous_update=False, style=style, layout=layout)
        self.preset = W.Dropdown(options=["(custom)"] + list(PRESETS), value="(custom)", description="split preset",
                                 style=style, layout=layout)
        self.theta = W.SelectionSlider(options=list(THETA_CHOICES), value=theta if theta in THETA_CHOICES else 10_000,
                                       description="Θ (max candidates)", continuous_update=False, style=style,
                                       layout=layout)
        self.seed = W.IntText(value=seed, description="seed", style=style, layout=W.Layout(width="260px"))
        self.status = W.HTML()
        self.out = W.Output()
        for w in (self.epsilon, self.sel_share, self.pert_share, self.theta, self.seed):
            w.observe(self._on_change, names="value")
        self.preset.observe(self._apply_preset, names="value")
        controls = W.VBox([self.epsilon, self.preset, self.sel_share, self.pert_share, self.theta, self.seed])
        self.widget = W.VBox([W.HBox([controls, self.status]), self.out])
        self.last_run = None
        self._muted = False
        self.update()

    def _on_change(self, change) -> None:
        if not self._muted:
            self.update()

    def _apply_preset(self, change) -> None:
        if change["new"] in PRESETS:
            self._muted = True
            try:
                self.sel_share.value, self.pert_share.value = PRESETS[change["new"]]
            finally:
                self._muted = False
            self.update()

    def split(self) -> tuple[float, float, float]:
        """(record count, selection, histogram) shares; the record count gets what is left."""
        sel, pert = self.sel_share.value, self.pert_share.value
        return round(1.0 - sel - pert, 10), sel, pert

    def compute(self) -> dict:
        """One PrivPfC run with the current slider values (no plotting)."""
        size, sel, pert = self.split()
        if size < 0.005:
            raise ValueError(f"the record-count share 1 - {sel:.2f} - {pert:.2f} = {size:.3f} is too small; "
                             "lower the selection or histogram share")
        run = run_privpfc(self.scorer, epsilon=self.epsilon.value, theta=self.theta.value, split=(size, sel, pert),
                          noise_to_signal=self.noise_to_signal, random_state=int(self.seed.value))
        grid = {a: int(d) for a, d in zip(self.scorer.attributes, run.grid)}
        errors = run_errors(run, self.scorer.attributes, self.schema, self.test_codes, self.y_test)
        # NON-PRIVATE diagnostic: the true counts of the chosen grid, to show the size of the noise
        comparison = compare_counts(self.scorer.counts(run.grid), run.noisy_counts, grid, self.schema,
                                    n_cells=6, pick="spread")
        self.last_run = run
        return {"run": run, "grid": grid, "histogram_error": errors["histogram"], "tree_error": errors["tree"],
                "candidates": candidates_table(run, self.scorer), "comparison": comparison}

    def _status_html(self, res: dict) -> str:
        run = res["run"]
        eps = run.epsilons
        cand = res["candidates"]
        reached = len(cand)
        top = cand["probability"].max()
        rows = [
            ("ε split (count / select / histogram)",
             f"{eps['record count']:.4f} / {eps['grid selection']:.4f} / {eps['histogram counts']:.4f}"),
            ("noisy record count N̂", f"{run.n_hat:,.0f}"),
            ("cell cap τ = 0.2·N̂·ε_pert", f"{run.tau:,.0f}"),
            ("candidates (≤ τ, at most Θ)", f"{reached:,} of Θ = {self.theta.value:,}"),
            ("sensitivity Δ(ε_pert)", f"{run.sensitivity:.6f}"),
            ("chosen grid", cand.loc[cand["chosen"], "grid"].iloc[0]),
            ("its selection probability / the largest", f"{run.probabilities[run.index]:.3f} / {top:.3f}"),
            ("test error: histogram classifier", f"{res['histogram_error']:.2%}"),
            ("test error: tree on synthetic data", f"{res['tree_error']:.2%}"),
        ] + [(name if "non-private" in name else f"{name} (non-private)", f"{value:.2%}")
             for name, value in self.baselines.items()]
        warn = ""
        if self.split()[2] < 0.3:
            warn = "<p style='color:#b00'>The histogram gets under 30% of ε: the paper found accuracy drops.</p>"
        body = "".join(f"<tr><td style='padding-right:12px'>{k}</td><td><b>{v}</b></td></tr>" for k, v in rows)
        return f"<table>{body}</table>{warn}"

    def charts(self, res: dict) -> alt.VConcatChart:
        """The explorer's charts for one :meth:`compute` result (each keeps its own colours)."""
        run = res["run"]
        errors = {"PrivPfC histogram classifier": res["histogram_error"],
                  "tree on PrivPfC synthetic data": res["tree_error"]}
        top = alt.hconcat(candidates_chart(res["candidates"], tau=run.tau, n_records=self.scorer.n_rows, width=380,
                                           height=240),
                          selection_chart(res["candidates"], top=8, width=260)).resolve_scale(color="independent")
        bottom = alt.hconcat(grid_levels_chart(grid_levels(res["grid"], self.schema), width=220),
                             errors_bar_chart(errors, self.baselines, width=300)).resolve_scale(color="independent")
        return alt.vconcat(top, bottom).resolve_scale(color="independent")

    def update(self) -> None:
        """Redraw: one PrivPfC run (cached qualities) and its charts."""
        try:
            res = self.compute()
        except ValueError as err:
            self.status.value = f"<p style='color:#b00'>{err}</p>"
            return
        self.status.value = self._status_html(res)
        charts = self.charts(res)
        self.out.clear_output(wait=True)
        with self.out:
            display(charts)
            display(counts_chart(res["comparison"], width=110, height=130))
