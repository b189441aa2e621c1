"""PrivPfCExplorer: slide ε, the budget split and Θ; see the pool, the choice, the noise, the error.

Built once per train/test split: the node codes of every record at every taxonomy level (train
and test) and a :class:`GapScorer`, which keeps, per candidate grid, what its quality needs
whatever ε_pert is (the sum of the cells' largest counts and the histogram of the cells' leads),
precomputed for the pools the ε slider can reach. A slider step then rescores a pool with one
sparse product, runs ``run_privpfc`` (noise, selection) and redraws small charts.
"""
from __future__ import annotations

import json
import math
import warnings
from typing import Any, Mapping, Sequence

import altair as alt
import ipywidgets as W
import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.preprocessing import OneHotEncoder
from sklearn.tree import DecisionTreeClassifier
from tqdm.auto import tqdm

from ..domain import PrivacyLeakWarning, Schema
from ..histogram import LevelCodes
from ..models.histogram import HistogramClassifier
from ..plots._render import vegalite_metadata
from ._display import show_chart
from ..plots.privpfc import (candidates_chart, candidates_data, counts_chart, counts_data, errors_bar_chart,
                             errors_data, grid_levels_chart, levels_data, selection_chart, selection_data)
from ..publish.privpfc import (GridScorer, PrivPfCRun, compare_counts, describe_grid, enumerate_grids,
                               grid_levels, grid_threshold, run_privpfc, win_probability)

__all__ = ["PrivPfCExplorer", "GapScorer", "release_tree_error", "run_errors", "error_sweep"]

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


class GapScorer(GridScorer):
    """A :class:`GridScorer` whose qualities cost one sparse product per ε_pert.

    A grid's quality (Eq. 1, Eq. 5) is Σ_cells n⁽¹⁾ − Σ_cells G·a(G; ε_pert), with G = n⁽¹⁾ − n⁽²⁾
    the lead of a cell's largest count over its second (empty cells add 0). Only the second sum
    depends on ε_pert, and only through the multiset of leads. So each grid is counted once (the
    true counts: a NON-PRIVATE input of the exponential mechanism, as in the parent class) and
    stored as its Σ n⁽¹⁾ and a sparse row "number of cells with lead G"; scoring any pool at any
    ε_pert is then ``top − M @ ψ`` with ψ(G) = G·(1 − P[win](G)). Same qualities as
    :class:`GridScorer` up to float rounding (summation order). ``_cache`` maps each ε_pert seen
    to the qualities of the stored grids (extended when grids are added).
    """

    def __init__(self, codes: LevelCodes, y_codes: Any, n_classes: int, weights: Any = None):
        super().__init__(codes, y_codes, n_classes, weights)
        self._radix = np.array([8 ** j for j in range(len(self.attributes))], dtype=np.int64)
        if any(len(ls) > 8 for ls in self.level_sizes) or 8 ** len(self.attributes) > 2 ** 62:
            raise ValueError("GapScorer keys grids in base 8: at most 8 taxonomy levels and 20 attributes")
        self._all_keys = np.zeros(0, dtype=np.int64)
        self._sorted_keys = np.zeros(0, dtype=np.int64)
        self._sorted_rows = np.zeros(0, dtype=np.int64)
        self._top: list[float] = []
        self._rows: list[tuple[np.ndarray, np.ndarray]] = []   # (leads, number of cells) per grid
        self._matrix: sp.csr_matrix | None = None
        self.names: list[str] = []

    def _quality(self, counts: np.ndarray, psi: np.ndarray, phi: np.ndarray) -> tuple:
        """Hook of :meth:`GridScorer._score_into`: instead of the quality at one ε_pert, keep
        what it needs at every ε_pert: Σ n⁽¹⁾ and the leads' histogram of a (classes, cells) table."""
        counts = counts[:, counts.sum(axis=0) > 0]
        if not counts.shape[1]:
            return 0.0, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        top = np.partition(counts, self.n_classes - 2, axis=0)[-2:]
        leads, cells = np.unique(top[1] - top[0], return_counts=True)
        return float(top[1].sum()), leads.astype(np.int64), cells

    def _keys(self, grids: np.ndarray) -> np.ndarray:
        return grids @ self._radix     # one int64 per grid (mixed radix over the depths)

    def _lookup_rows(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if not len(self._sorted_keys):
            return np.zeros(len(keys), dtype=np.int64), np.zeros(len(keys), dtype=bool)
        pos = np.minimum(np.searchsorted(self._sorted_keys, keys), len(self._sorted_keys) - 1)
        return self._sorted_rows[pos], self._sorted_keys[pos] == keys

    def add(self, grids: Any) -> np.ndarray:
        """Count every grid not seen yet (prefix-sharing passes of the parent); return their store rows."""
        grids = np.asarray(grids, dtype=np.int64).reshape(-1, len(self.attributes))
        keys = self._keys(grids)
        rows, found = self._lookup_rows(keys)
        if not found.all():
            new = np.unique(grids[~found], axis=0)
            stats: dict[tuple, tuple] = {}
            self._score_into(new, 1.0, stats)
            for key in map(tuple, new.tolist()):
                top, leads, cells = stats[key]
                self._top.append(top)
                self._rows.append((leads, cells))
                self.names.append(describe_grid(key, self.attributes))
            self._all_keys = np.concatenate([self._all_keys, self._keys(new)])
            order = np.argsort(self._all_keys, kind="stable")
            self._sorted_keys, self._sorted_rows = self._all_keys[order], order
            rows, found = self._lookup_rows(keys)
        return rows

    def _qualities(self, eps: float) -> np.ndarray:
        """Qualities of every stored grid at ``eps`` (cached; grids stored later are appended)."""
        key = float(f"{eps:.12g}")   # ε_pert from a split: ignore float dust
        done = self._cache.get(key)
        if done is None or len(done) < len(self._top):
            have = 0 if self._matrix is None else self._matrix.shape[0]
            if have < len(self._rows):   # stack only the rows of the grids counted since
                rows = self._rows[have:]
                indptr = np.concatenate([[0], np.cumsum([len(leads) for leads, _ in rows])])
                cols = np.concatenate([leads for leads, _ in rows])
                vals = np.concatenate([cells for _, cells in rows]).astype(float)
                width = max(int(cols.max(initial=0)) + 1, 0 if self._matrix is None else self._matrix.shape[1])
                block = sp.csr_matrix((vals, cols, indptr), shape=(len(rows), width))
                if self._matrix is not None:
                    old = self._matrix
                    old.resize((old.shape[0], width))
                    block = sp.vstack([old, block], format="csr")
                self._matrix = block
                self._top_array = np.asarray(self._top)
            start = 0 if done is None else len(done)
            lead = np.arange(self._matrix.shape[1], dtype=float)
            psi = lead * (1.0 - win_probability(lead, eps))     # G·a(G): expected loss of a cell (Eq. 10)
            block = self._matrix if start == 0 else self._matrix[start:]
            new = self._top_array[start:] - block @ psi
            self._cache[key] = new if done is None else np.concatenate([done, new])
        return self._cache[key]

    def score(self, grids: Any, epsilon_pert: float) -> np.ndarray:
        """Grid quality (Eq. 1 for two classes, Eq. 5 otherwise) of each row of ``grids``."""
        rows = self.add(grids)
        return self._qualities(float(epsilon_pert))[rows]

    def warm(self, theta: int, taus: Sequence[float]) -> None:
        """Count in advance the pools of Θ = ``theta`` grids at each cell cap in ``taus``."""
        for tau in sorted(set(math.floor(t) for t in taus)):
            self.add(enumerate_grids(self.level_sizes, theta, tau))


def _initial_preset(sel: float, pert: float) -> str:
    return next((name for name, shares in PRESETS.items() if np.allclose(shares, (sel, pert))), "(custom)")


class PrivPfCExplorer:
    """Interactive PrivPfC on a fixed train/test split.

    Sliders: total ε (log scale), the selection and histogram shares (the record count gets the
    rest), Θ, and the seed. Shows the pool (quality against size, chosen grid ringed), the
    selection probabilities, the chosen grid on the taxonomies, the test errors against the
    baselines, and true vs noisy counts of six released cells from the largest to the smallest
    (a non-private view). Every grid the ε slider can reach at the initial split and Θ is
    counted once at construction (``warm``), so a step only rescores (a sparse product), adds
    noise and redraws. ``update()`` redraws; ``.widget`` is the container to display.
    ``baselines``: name -> error lines for the status text (e.g. majority, non-private tree).
    """

    def __init__(self, X_train: pd.DataFrame, y_train: Any, X_test: pd.DataFrame, y_test: Any,
                 schema: Schema, *, epsilon: float = 1.0, theta: int = 10_000, seed: int = 0,
                 split: Sequence[float] = (0.03, 0.37, 0.60), noise_to_signal: float = 0.2,
                 baselines: Mapping[str, float] | None = None, warm: bool = True):
        if len(split) != 3 or not math.isclose(sum(split), 1.0, abs_tol=1e-9):
            raise ValueError(f"split must hold three shares adding up to 1 (record count, selection, "
                             f"histogram), e.g. (0.03, 0.37, 0.60); got {split!r}")
        self.schema = schema
        self.noise_to_signal = noise_to_signal
        self.scorer = GapScorer(LevelCodes(X_train, schema), schema.encode_target(y_train), schema.n_classes)
        self.test_codes = LevelCodes(X_test, schema)
        self.y_test = schema.encode_target(y_test)
        self.baselines = dict(baselines or {})
        style = {"description_width": "130px"}
        wide = W.Layout(width="420px", flex="0 0 auto")
        self.epsilon = W.FloatLogSlider(value=epsilon, base=10, min=-2, max=0.5, step=0.05, description="ε (total)",
                                        readout_format=".3g", continuous_update=False, style=style, layout=wide)
        self.preset = W.Dropdown(options=["(custom)"] + list(PRESETS), value=_initial_preset(split[1], split[2]),
                                 description="split preset", style=style, layout=wide)
        self.sel_share = W.FloatSlider(value=split[1], min=0.01, max=0.8, step=0.01, description="share: selection",
                                       readout_format=".2f", continuous_update=False, style=style, layout=wide)
        self.pert_share = W.FloatSlider(value=split[2], min=0.1, max=0.95, step=0.01, description="share: histogram",
                                        readout_format=".2f", continuous_update=False, style=style, layout=wide)
        self.theta = W.SelectionSlider(options=list(THETA_CHOICES), value=theta if theta in THETA_CHOICES else 10_000,
                                       description="Θ (max candidates)", continuous_update=False, style=style,
                                       layout=wide)
        self.seed = W.BoundedIntText(value=seed, min=0, max=10**6, description="seed", style=style,
                                     layout=W.Layout(width="240px", flex="0 0 auto"))
        self.status = W.HTML(layout=W.Layout(flex="1 1 380px", min_width="360px", margin="0 0 0 16px"))
        self.out = W.Output()
        for w in (self.epsilon, self.sel_share, self.pert_share, self.theta, self.seed):
            w.observe(self._on_change, names="value")
        self.preset.observe(self._apply_preset, names="value")
        controls = W.VBox([self.epsilon, self.preset, self.sel_share, self.pert_share, self.theta, self.seed],
                          layout=W.Layout(flex="0 0 auto", width="430px"))
        self.widget = W.VBox([W.HBox([controls, self.status],
                                     layout=W.Layout(flex_flow="row wrap", align_items="flex-start")), self.out])
        self.last_run = None
        self._muted = False
        self._template = None
        self._skeleton = None
        if warm:   # every pool the ε slider reaches at this split and Θ (N̂ ≈ N: τ moves by < 1%)
            # every 3rd slider position: the pools in between differ by a few grids, counted when reached
            grid_eps = 10 ** np.arange(self.epsilon.min, self.epsilon.max + 1e-9, 3 * self.epsilon.step)
            self.scorer.warm(self.theta.value, [grid_threshold(self.scorer.n_rows, e * split[2], noise_to_signal)
                                                for e in grid_eps])
        self.update()

    def _on_change(self, change) -> None:
        if self._muted:
            return
        if change["owner"] in (self.sel_share, self.pert_share):
            self._muted = True
            try:
                self.preset.value = _initial_preset(self.sel_share.value, self.pert_share.value)
            finally:
                self._muted = False
        self.update()

    def _apply_preset(self, change) -> None:
        if self._muted or change["new"] not in PRESETS:
            return
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
                "candidates": self._candidates(run), "comparison": comparison}

    def _candidates(self, run: PrivPfCRun) -> pd.DataFrame:
        """The pool as a table (names cached per grid): grid, size, n_refined, quality, probability, chosen."""
        rows = self.scorer.add(run.pool)
        frame = pd.DataFrame({"grid": np.asarray(self.scorer.names, dtype=object)[rows],
                              "size": self.scorer.sizes(run.pool), "n_refined": (run.pool > 0).sum(axis=1),
                              "quality": run.qualities, "probability": run.probabilities})
        frame["chosen"] = np.arange(len(frame)) == run.index
        return frame

    def _status_html(self, res: dict) -> str:
        run = res["run"]
        eps = run.epsilons
        cand = res["candidates"]
        top = cand["probability"].max()
        majority = next((v for k, v in self.baselines.items() if k.startswith("majority")), None)
        rows = [
            ("ε: count / select / histogram",
             f"{eps['record count']:.3g} / {eps['grid selection']:.3g} / {eps['histogram counts']:.3g}"),
            ("noisy record count N̂", f"{run.n_hat:,.0f}"),
            ("cell cap τ = 0.2·N̂·ε_pert", f"{run.tau:,.0f}"),
            ("candidates (≤ τ cells)", f"{len(cand):,} of Θ = {self.theta.value:,}"),
            ("sensitivity Δ(ε_pert)", f"{run.sensitivity:.4f}"),
            ("chosen grid", cand.loc[cand["chosen"], "grid"].iloc[0]),
            ("P[this grid] / largest P", f"{run.probabilities[run.index]:.3f} / {top:.3f}"),
            ("error: histogram classifier", f"{res['histogram_error']:.2%}"),
            ("error: tree on synthetic data", f"{res['tree_error']:.2%}"),
        ] + [(name if "non-private" in name else f"{name} (non-private)", f"{value:.2%}")
             for name, value in self.baselines.items()]
        notes = []
        if self.split()[2] < 0.3:
            notes.append("The histogram gets under 30% of ε: the paper found accuracy drops.")
        if majority is not None and res["histogram_error"] >= majority:
            notes.append("This release does no better than always predicting the majority class.")
        body = "".join(f"<tr><td style='padding:1px 10px 1px 0'>{k}</td><td><b>{v}</b></td></tr>" for k, v in rows)
        warn = "".join(f"<p style='color:#b00;margin:4px 0'>{n}</p>" for n in notes)
        return f"<table style='font-size:13px;line-height:1.3'>{body}</table>{warn}"

    def _frames(self, res: dict) -> dict:
        """The data of every chart for one :meth:`compute` result (what changes between redraws)."""
        shown = res["candidates"].assign(quality=res["candidates"]["quality"].round(1))   # a smaller spec
        errors = {"PrivPfC histogram classifier": res["histogram_error"],
                  "tree on PrivPfC synthetic data": res["tree_error"]}
        return {"candidates": candidates_data(shown, 150), "tau": pd.DataFrame({"tau": [res["run"].tau]}),
                "errors": errors_data(errors, self.baselines), "selection": selection_data(res["candidates"], 6),
                "levels": levels_data(grid_levels(res["grid"], self.schema)),
                "counts": counts_data(res["comparison"])}

    def charts(self, res: dict) -> alt.VConcatChart:
        """The explorer's charts for one :meth:`compute` result: one small spec (150 candidate points).

        Built once; later calls only swap the data of each chart (building altair objects costs
        far more than the redraw itself). Each chart's data is recognised by its columns.
        """
        frames = self._frames(res)
        by_columns = {frozenset(f.columns): f for f in frames.values()}
        if self._template is None:
            run = res["run"]
            top = alt.hconcat(candidates_chart(res["candidates"], tau=max(run.tau, 1.0), n_records=self.scorer.n_rows,
                                               max_points=150, width=270, height=190,
                                               title="Candidate grids: chosen one ringed, red line: τ"),
                              errors_bar_chart({}, {}, width=140)).resolve_scale(color="independent")
            middle = alt.hconcat(selection_chart(res["candidates"], top=6, width=130, label_limit=230),
                                 grid_levels_chart(grid_levels(res["grid"], self.schema), width=190)
                                 ).resolve_scale(color="independent")
            bottom = counts_chart(res["comparison"], width=90, height=110)
            chart = alt.vconcat(top, middle, bottom).resolve_scale(color="independent")
            leaves, stack = [], [chart]
            while stack:
                node = stack.pop()
                node.description = alt.Undefined   # the sub-charts' texts would go stale: one, rebuilt per redraw
                data = getattr(node, "data", alt.Undefined)
                if isinstance(data, pd.DataFrame):
                    leaves.append((node, frozenset(data.columns)))
                for attr in ("vconcat", "hconcat", "layer"):
                    stack.extend(getattr(node, attr, None) or [])
            self._template = (chart, leaves)
        chart, leaves = self._template
        for node, columns in leaves:
            node.data = by_columns[columns]
        chart.description = self._description(res)
        return chart

    def _description(self, res: dict) -> str:
        """The charts' text description (their aria-label and alt text) for one :meth:`compute` result."""
        drawn = res["candidates"][res["candidates"]["chosen"]]
        cells = f" with {int(drawn['size'].iloc[0]):,} cells" if len(drawn) else ""
        return (f"PrivPfC at ε = {self.epsilon.value:.3g}. Top: the candidate grids' expected accuracy against "
                "their number of cells, the drawn grid ringed, next to the test errors of this release and of "
                "non-private baselines. Middle: the selection probabilities of the most likely grids and the "
                "chosen grid on the taxonomies. Bottom: true (non-private diagnostic) and noisy counts of a few "
                f"cells. Take-away: the drawn grid{cells} gives a test error of {res['histogram_error']:.3f} "
                f"(histogram classifier) and {res['tree_error']:.3f} (tree on synthetic data).")

    def _show(self, res: dict) -> None:
        """Display the charts of ``res``: the first time through altair (:func:`show_chart`), then by
        putting the new records into the first spec's datasets (each recognised by its columns),
        which skips altair's spec traversal. Same spec as :meth:`charts` would give."""
        if self._skeleton is None:
            show_chart(self.out, self.charts(res))
            bundle = self.out.outputs[0]["data"]
            mime = next(k for k in bundle if "vegalite" in k)
            names = {name: frozenset(rows[0]) if rows else None for name, rows in bundle[mime]["datasets"].items()}
            if None not in names.values():
                self._skeleton = (bundle, mime, names)
            return
        bundle, mime, names = self._skeleton
        frames = {frozenset(f.columns): f for f in self._frames(res).values()}
        # pandas' JSON writer: numpy types and NaN (→ null) handled in C, as altair's own data step does
        spec = dict(bundle[mime], datasets={name: json.loads(frames[cols].to_json(orient="records", double_precision=15))
                                            for name, cols in names.items()}, description=self._description(res))
        self.out.outputs = ({"output_type": "display_data", "data": {**bundle, mime: spec},
                             "metadata": vegalite_metadata()},)

    def update(self) -> None:
        """Redraw: one PrivPfC run (stored counts) and its charts, displayed as one chart."""
        try:
            res = self.compute()
        except ValueError as err:
            self.status.value = f"<p style='color:#b00'>{err}</p>"
            return
        self.status.value = self._status_html(res)
        self._show(res)
