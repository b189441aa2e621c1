"""PrivPfCExplorer: slide ε, the budget split and Θ; see the pool, the choice, the noise, the error.

Built once per train/test split: the node codes of every record (or, over a source, of every
occupied cell of its count table, weighted by its count) at every taxonomy level (train and
test) and a :class:`~dpexplore.publish.privpfc_scoring.GapScorer`, which keeps, per candidate
grid, what its quality needs whatever ε_pert is (the sum of the cells' largest counts and the
histogram of the cells' leads), precomputed for the pools the ε slider can reach. A slider step
then rescores a pool with one sparse product, runs ``run_privpfc`` (noise, selection) and redraws
small charts.
"""
from __future__ import annotations

import inspect
from typing import Any, Mapping, Sequence

import altair as alt
import ipywidgets as W
import numpy as np
import pandas as pd

from ..inputs import source_input
from ..domain import Schema
from ..evaluate import privpfc as evaluation
from ..histogram import LevelCodes
from ..plots.privpfc import (candidates_chart, candidates_data, counts_chart, counts_data, errors_bar_chart,
                             errors_data, grid_levels_chart, levels_data, selection_chart, selection_data)
from ..publish import privpfc_scoring
from ..publish.privpfc import PrivPfCRun, check_shares, grid_threshold, run_privpfc
from ._display import DataSwap

__all__ = ["PrivPfCExplorer"]

THETA_CHOICES = (10, 30, 100, 300, 1_000, 3_000, 10_000, 30_000, 100_000, 200_000)
PAPER_SHARES = (0.03, 0.37, 0.60)   # record count / selection / histogram (Alg. 2 line 2)
PRESETS = {"3/37/60 (paper)": (0.37, 0.60), "3/10/87 (Fig. 9)": (0.10, 0.87), "3/57/40": (0.57, 0.40)}


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
    ``shares``: three weights of ε (record count, selection, histogram), normalised as
    :func:`~dpexplore.publish.privpfc.run_privpfc` does. :meth:`from_source` builds it on a
    :class:`dpexplore.sources.Source` instead of records.
    """

    def __init__(self, X_train: pd.DataFrame, y_train: Any, X_test: pd.DataFrame, y_test: Any,
                 schema: Schema, *, epsilon: float = 1.0, theta: int = 10_000, seed: int = 0,
                 shares: Sequence[float] = PAPER_SHARES, noise_to_signal: float = 0.2,
                 baselines: Mapping[str, float] | None = None, warm: bool = True):
        shares = tuple(check_shares(shares).tolist())   # three weights, normalised, before the counting
        scorer = privpfc_scoring.GapScorer(LevelCodes(X_train, schema), schema.encode_target(y_train), schema.n_classes)
        self._build(scorer, (LevelCodes(X_test, schema), schema.encode_target(y_test), None), schema,
                    epsilon=epsilon, theta=theta, seed=seed, shares=shares, noise_to_signal=noise_to_signal,
                    baselines=baselines, warm=warm)

    @classmethod
    def from_source(cls, train: Any, test: Any, schema: Schema | None = None, **options: Any) -> "PrivPfCExplorer":
        """The explorer on a :class:`dpexplore.sources.Source` of training data: built from its
        count table (one scan, or none if the source has counted before), one weighted row per
        occupied cell: a slider step costs what the cells cost, whatever the number of records.

        ``test``: a second Source, a DataFrame of predictors and target, or ``(X_test, y_test)``
        (:func:`~dpexplore.evaluate.privpfc.held_out_cells`). ``schema``: None (the source's) or
        a subset of its predictors, as in ``fit(source)``. ``options``: the constructor's
        keywords. Same qualities, grids, noise and errors as the constructor on the same records
        and seed.
        """
        inspect.signature(cls._build).bind(None, None, None, None, **options)   # unknown keywords: before the scan
        options["shares"] = tuple(check_shares(options.get("shares", PAPER_SHARES)).tolist())
        table, schema = source_input(train, None, schema)
        self = cls.__new__(cls)
        self._build(privpfc_scoring.GapScorer.from_table(table), evaluation.held_out_cells(test, schema), schema,
                    **options)
        return self

    def _build(self, scorer: privpfc_scoring.GapScorer, test: tuple, schema: Schema, *, epsilon: float = 1.0,
               theta: int = 10_000, seed: int = 0, shares: Sequence[float] = PAPER_SHARES,
               noise_to_signal: float = 0.2, baselines: Mapping[str, float] | None = None,
               warm: bool = True) -> None:
        """The widgets and the first draw, given the scorer and the test (codes, classes, weights)."""
        self.schema = schema
        self.noise_to_signal = noise_to_signal
        self.scorer = scorer
        self.test_codes, self.y_test, self.test_weights = test
        self.baselines = dict(baselines or {})
        style = {"description_width": "130px"}
        wide = W.Layout(width="420px", flex="0 0 auto")
        self.epsilon = W.FloatLogSlider(value=epsilon, base=10, min=-2, max=0.5, step=0.05, description="ε (total)",
                                        readout_format=".3g", continuous_update=False, style=style, layout=wide)
        self.preset = W.Dropdown(options=["(custom)"] + list(PRESETS), value=_initial_preset(shares[1], shares[2]),
                                 description="split preset", style=style, layout=wide)
        self.sel_share = W.FloatSlider(value=shares[1], min=0.01, max=0.8, step=0.01, description="share: selection",
                                       readout_format=".2f", continuous_update=False, style=style, layout=wide)
        self.pert_share = W.FloatSlider(value=shares[2], min=0.1, max=0.95, step=0.01, description="share: histogram",
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
        self._swap = DataSwap(self.out)
        if warm:   # every pool the ε slider reaches at this split and Θ (N̂ ≈ N: τ moves by < 1%)
            # every 3rd slider position: the pools in between differ by a few grids, counted when reached
            grid_eps = 10 ** np.arange(self.epsilon.min, self.epsilon.max + 1e-9, 3 * self.epsilon.step)
            self.scorer.warm(self.theta.value, [grid_threshold(self.scorer.n_rows, e * shares[2], noise_to_signal)
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

    def shares(self) -> tuple[float, float, float]:
        """(record count, selection, histogram) shares; the record count gets what is left."""
        sel, pert = self.sel_share.value, self.pert_share.value
        return round(1.0 - sel - pert, 10), sel, pert

    def compute(self) -> dict:
        """One PrivPfC run with the current slider values (no plotting)."""
        size, sel, pert = self.shares()
        if size < 0.005:
            raise ValueError(f"the record-count share 1 - {sel:.2f} - {pert:.2f} = {size:.3f} is too small; "
                             "lower the selection or histogram share")
        run = run_privpfc(self.scorer, epsilon=self.epsilon.value, theta=self.theta.value, shares=(size, sel, pert),
                          noise_to_signal=self.noise_to_signal, random_state=int(self.seed.value))
        grid = {a: int(d) for a, d in zip(self.scorer.attributes, run.grid)}
        errors = evaluation.run_errors(run, self.scorer.attributes, self.schema, self.test_codes, self.y_test,
                                       weights=self.test_weights)
        # NON-PRIVATE diagnostic: the true counts of the chosen grid, to show the size of the noise
        comparison = evaluation.compare_counts(self.scorer.counts(run.grid), run.noisy_counts, grid, self.schema,
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
        if self.shares()[2] < 0.3:
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
                "levels": levels_data(evaluation.grid_levels(res["grid"], self.schema)),
                "counts": counts_data(res["comparison"])}

    def charts(self, res: dict) -> alt.VConcatChart:
        """The explorer's charts for one :meth:`compute` result: one small spec (150 candidate points).

        Built once; later calls only swap the data of each chart (:class:`~._display.DataSwap`).
        """
        return self._swap.chart(lambda: self._layout(res), self._frames(res).values(), self._description(res))

    def _layout(self, res: dict) -> alt.VConcatChart:
        """The charts of the first result, built by the plot functions (later results swap their data)."""
        run = res["run"]
        top = alt.hconcat(candidates_chart(res["candidates"], tau=max(run.tau, 1.0), n_records=self.scorer.n_rows,
                                           max_points=150, width=270, height=190,
                                           title="Candidate grids: chosen one ringed, red line: τ"),
                          errors_bar_chart({}, {}, width=140)).resolve_scale(color="independent")
        middle = alt.hconcat(selection_chart(res["candidates"], top=6, width=130, label_limit=230),
                             grid_levels_chart(evaluation.grid_levels(res["grid"], self.schema), width=190)
                             ).resolve_scale(color="independent")
        bottom = counts_chart(res["comparison"], width=90, height=110)
        return alt.vconcat(top, middle, bottom).resolve_scale(color="independent")

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

    def update(self) -> None:
        """Redraw: one PrivPfC run (stored counts) and its charts, displayed as one chart."""
        try:
            res = self.compute()
        except ValueError as err:
            self.status.value = f"<p style='color:#b00'>{err}</p>"
            return
        self.status.value = self._status_html(res)
        self._swap.show(lambda: self._layout(res), self._frames(res).values(), self._description(res))
