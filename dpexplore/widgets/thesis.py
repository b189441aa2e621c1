"""Interactive explorers for the thesis notebook: private feature selection + DP-NB, and DP-LR noise.

Thin wrappers: sliders → library calls (:class:`~dpexplore.models.pipeline.SelectThenTrain` over
:mod:`dpexplore.select.thesis` and :mod:`dpexplore.models.naive_bayes`; :mod:`dpexplore.models.logistic`)
→ charts from :mod:`dpexplore.plots.thesis`. Everything that does not depend on a slider (binary
matrices, the exact scores of the teaching views, baselines) is computed once when the explorer is built.
"""
from __future__ import annotations

from typing import Any

import altair as alt
import ipywidgets as widgets
import numpy as np
import pandas as pd

from ..domain import declared_classes
from ..mechanisms import exponential_subset, exponential_subset_inclusion
from ..models.logistic import (l1_noise, l2_noise, objective_branch_boundary, objective_perturbation_parameters,
                               output_perturbation_scale)
from ..models.naive_bayes import PrivateNaiveBayes
from ..models.pipeline import SelectThenTrain
from ..plots.thesis import lambda_noise_chart, noise_cloud_chart, selection_probability_chart, stability_chart
from ..select.scores import information_gain, purity_index
from ..select.thesis import PrivateKSubsetSelector
from ._display import show_chart

__all__ = ["FeatureSelectionNBExplorer", "LogisticNoiseExplorer"]


_STYLE = {"description_width": "170px"}
_LAYOUT = widgets.Layout(width="480px")


class FeatureSelectionNBExplorer:
    """Slide ε, k, the selection share of ε, the score and the clamp quantile.

    Shows, for the current settings: the exact selection probability of every feature against
    its true score, the features chosen in this draw, how often each is chosen over
    ``repeats`` draws, and the test accuracy of DP-NB trained on the chosen features, next to the
    majority and non-private baselines. ``X``s are 0/1 DataFrames, ``y``s binary labels;
    ``n_min`` is the public lower bound on N used for the MI sensitivity; ``classes`` the two
    public class labels, negative first (``None`` reads them from ``y_train`` with a
    :class:`~dpexplore.domain.PrivacyLeakWarning`). ``k``: the starting number of features (5:
    a first draw that beats the majority class at ε = 0.1). A private run is one
    :class:`~dpexplore.models.pipeline.SelectThenTrain` fit (selection, then DP-NB on the chosen
    features, one ε split between them) from the scores computed once (``fit_scores``). The
    stability re-draws are cached per (score, k, ε for selection), so a slider step costs one such
    fit.
    """

    def __init__(self, X_train: pd.DataFrame, y_train: Any, X_test: pd.DataFrame, y_test: Any, *,
                 n_min: int, classes: Any = None, repeats: int = 50, k: int = 5, random_state: int = 0):
        from sklearn.naive_bayes import BernoulliNB

        self.names = np.asarray(X_train.columns, dtype=object)
        self.Xtr, self.Xte = X_train.to_numpy(dtype=np.int64), X_test.to_numpy(dtype=np.int64)
        # declared labels (the last one is positive); None: read from y_train, with a warning
        labels, codes = declared_classes(y_train, classes, type(self).__name__)
        if len(labels) != 2:
            raise ValueError(f"classes must be two labels [negative, positive], got {list(labels)!r}")
        self.ytr = (codes == 1).astype(int)
        self.yte = (declared_classes(y_test, list(labels), type(self).__name__)[1] == 1).astype(int)
        self.repeats = repeats
        self.rng = np.random.default_rng(random_state)
        self._frequency_cache: dict = {}   # (score, k, ε_sel) → selection frequency over ``repeats`` draws
        # ε-independent, computed once
        self.scores = {"count": purity_index(self.Xtr, self.ytr),
                       "mi": information_gain(self.Xtr, self.ytr, base=2)}
        self.n_min = n_min
        self.majority = float(max(self.yte.mean(), 1 - self.yte.mean()))
        self.nonprivate = float(BernoulliNB(alpha=1.0).fit(self.Xtr, self.ytr).score(self.Xte, self.yte))

        self.epsilon = widgets.FloatLogSlider(value=0.1, base=10, min=-2, max=1, step=0.1,
                                              description="total ε", readout_format=".3g",
                                              continuous_update=False, style=_STYLE, layout=_LAYOUT)
        self.k = widgets.IntSlider(value=k, min=1, max=min(40, self.Xtr.shape[1]), description="k (features)",
                                   continuous_update=False, style=_STYLE, layout=_LAYOUT)
        self.split = widgets.FloatSlider(value=0.5, min=0.1, max=0.9, step=0.05, description="share of ε for selection",
                                         continuous_update=False, style=_STYLE, layout=_LAYOUT)
        self.score = widgets.ToggleButtons(options=[("count score", "count"), ("mutual information", "mi")],
                                           value="count", description="score", style=_STYLE)
        self.clamp = widgets.FloatSlider(value=0.65, min=0.5, max=0.99, step=0.01, description="NB clamp quantile",
                                         continuous_update=False, style=_STYLE, layout=_LAYOUT)
        self.redraw = widgets.Button(description="new random draw")
        self.summary = widgets.HTML()
        self.output = widgets.Output()
        controls = [self.epsilon, self.k, self.split, self.score, self.clamp]
        for control in controls:
            control.observe(self.update, names="value")
        self.redraw.on_click(lambda _: self.update())
        self.widget = widgets.VBox(controls + [self.redraw, self.summary, self.output])
        self.update()

    def state(self) -> dict:
        """One private run at the current settings (a fresh accountant); returns its pieces."""
        k, score = self.k.value, self.score.value
        selector = PrivateKSubsetSelector(k, feature_score=score, n_min=self.n_min)
        model = PrivateNaiveBayes(clamp_quantile=self.clamp.value)
        q = self.scores[score]
        # the scores of this training set, computed once (fit_scores: same spends and draws as fit)
        pipe = SelectThenTrain(selector, model, epsilon=self.epsilon.value, selection_share=self.split.value,
                               classes=[0, 1], random_state=self.rng).fit_scores(q, self.Xtr, self.ytr)
        chosen, e_sel = pipe.get_support(indices=True), pipe.epsilon_selection_
        sensitivity = pipe.selector_.subset_sensitivity_     # k·Δq (thesis §3.5.5)
        # NOT private (exact scores): the teaching view of the distribution the draw came from
        probability = exponential_subset_inclusion(q, k, epsilon=e_sel, sensitivity=sensitivity)
        key = (score, k, round(e_sel, 9))
        if key not in self._frequency_cache:   # re-draws for the stability view only (not released)
            draws = [exponential_subset(q, k, epsilon=e_sel, sensitivity=sensitivity, random_state=self.rng)
                     for _ in range(self.repeats)]
            self._frequency_cache[key] = np.bincount(np.concatenate(draws), minlength=q.size) / self.repeats
        # the fitted model on the test set's chosen columns (pipe.score without re-validating the test set)
        accuracy = float(pipe.model_.score(self.Xte[:, chosen], self.yte))
        return {"q": q, "probability": probability, "chosen": chosen, "accuracy": accuracy,
                "frequency": self._frequency_cache[key], "ledger": pipe.ledger_, "nb": pipe.model_}

    def update(self, change: Any = None) -> None:
        """Redraw: one selection + one DP-NB fit, the exact probabilities and a stability view."""
        s = self.state()
        mask = np.zeros(s["q"].size, dtype=bool)
        mask[s["chosen"]] = True
        table = pd.DataFrame({"feature": self.names, "score": s["q"], "probability": s["probability"],
                              "chosen": mask})
        top = np.argsort(-(s["probability"] + s["frequency"]))[:20]
        freq = pd.DataFrame({"feature": self.names[top], "frequency": s["frequency"][top],
                             "probability": s["probability"][top]})
        nb = s["nb"]
        verdict = ("beats" if s["accuracy"] > self.majority else
                   "<span style='color:#d62728'>does not beat</span>")
        self.summary.value = (
            f"chosen: <b>{', '.join(self.names[s['chosen']])}</b><br>"
            f"DP-NB test accuracy <b>{s['accuracy']:.3f}</b> ({verdict} the majority class {self.majority:.3f}) · "
            f"non-private NB (all features) {self.nonprivate:.3f}<br>"
            f"NB noise scale k/ε = {nb.noise_scale_:.4g}, clamp at {nb.clamp_threshold_:.4g} "
            f"({100 * nb.clamped_fraction_:.0f}% of counts clamped) · ε spent: "
            + ", ".join(f"{r.label} {r.charged:.3g}" for r in s["ledger"].itertuples()))
        score_title = "count score q" if self.score.value == "count" else "mutual information (bits)"
        chart = alt.vconcat(selection_probability_chart(table, score_title=score_title),
                            stability_chart(freq, title=f"Top features: frequency over {self.repeats} draws (bars) "
                                               "vs exact probability (ticks)")).resolve_scale(color="independent")
        show_chart(self.output, chart)


class LogisticNoiseExplorer:
    """Slide ε and λ: the noise of output vs objective perturbation and its 2-D shape (thesis §4.3–4.4, §2.2.1)."""

    def __init__(self, *, n_points: int = 300, random_state: int = 0):
        self.n_points = n_points
        self.rng = np.random.default_rng(random_state)
        self.lams = 10.0 ** np.linspace(-3, 5, 81)
        self.epsilon = widgets.FloatLogSlider(value=0.1, base=10, min=-2, max=1, step=0.1, description="ε",
                                              readout_format=".3g", style=_STYLE, layout=_LAYOUT)
        self.lam = widgets.FloatLogSlider(value=10.0, base=10, min=-3, max=5, step=0.05, description="λ",
                                          readout_format=".3g", style=_STYLE, layout=_LAYOUT)
        self.summary = widgets.HTML()
        self.output = widgets.Output()
        for control in (self.epsilon, self.lam):
            control.observe(self.update, names="value")
        self.widget = widgets.VBox([self.epsilon, self.lam, self.summary, self.output])
        self.update()

    def curves(self, epsilon: float) -> pd.DataFrame:
        """Noise-norm scales against λ for both methods at ``epsilon`` (formulas only, no data)."""
        rows = []
        for lam in self.lams:
            rows.append({"lam": lam, "method": "output (2/(λε))",
                         "noise_scale": output_perturbation_scale(epsilon, lam)})
            p = objective_perturbation_parameters(epsilon, lam)
            rows.append({"lam": lam, "method": "objective (2/ε_obj, divided by the effective λ)",
                         "noise_scale": p["noise_scale"] / p["effective_lambda"]})
        return pd.DataFrame(rows)

    def update(self, change: Any = None) -> None:
        eps, lam = self.epsilon.value, self.lam.value
        p = objective_perturbation_parameters(eps, lam)
        out_scale = output_perturbation_scale(eps, lam)
        l2 = l2_noise(2, out_scale, size=self.n_points, random_state=self.rng)
        l1 = l1_noise(2, out_scale, size=self.n_points, random_state=self.rng)
        cloud = pd.concat([pd.DataFrame({"x": l1[:, 0], "y": l1[:, 1], "norm": "L1: Laplace per coordinate"}),
                           pd.DataFrame({"x": l2[:, 0], "y": l2[:, 1], "norm": "L2: Gamma norm, uniform direction"})])
        boundary = objective_branch_boundary(eps)
        self.summary.value = (f"objective perturbation: branch {p['branch']}, ε_obj = {p['epsilon_prime']:.3g}, "
                              f"‖b‖ scale 2/ε_obj = {p['noise_scale']:.4g}, effective λ = {p['effective_lambda']:.4g} · "
                              f"λ* = {boundary:.4g} · output perturbation: ‖b‖ scale 2/(λε) = {out_scale:.4g}")
        chart = alt.vconcat(lambda_noise_chart(self.curves(eps), boundary,
                                               title=f"ε = {eps:.3g}: noise-norm scale against λ"),
                            noise_cloud_chart(cloud, title=f"Output-perturbation noise at ε = {eps:.3g}, "
                                                           f"λ = {lam:.3g} (scale {out_scale:.3g})")
                            ).resolve_scale(color="independent").resolve_legend(color="independent")
        show_chart(self.output, chart)
