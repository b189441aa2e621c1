"""Explorers for notebook 05: private ROC curves and private feature selection.

Thin ipywidgets wrappers: everything that does not depend on a slider (the true curve, the
scores, the non-private baselines) is computed once when the explorer is built; each slider
move calls the library once and redraws one chart. ``update()`` is the redraw callback and
``.widget`` the container, so a benchmark can time slider → redraw.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

import ipywidgets as widgets
import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression

from ..evaluate.roc import (DegenerateCurveWarning, laplace_roc_curve, private_roc_curve,
                            roc_curve_exact)
from ..plots.roc import roc_chart, stack_curves
from ..select.scores import total_count
from ..select.stoddard import (ExponentialTopKSelector, NotDifferentiallyPrivateWarning,
                               PrivateThresholdTesting, ScorePerturbationSelector,
                               SparseVectorSelector)

__all__ = ["PrivateROCExplorer", "FeatureSelectionExplorer"]

_ROC_METHODS = [("PriROC · RecursiveMedians", "recursive_medians"),
                ("PriROC · FixedSpace", "fixed_space"),
                ("LaplaceROC (baseline)", "laplace")]


def _show(output: widgets.Output, chart: Any) -> None:
    """Replace the Output widget's content by ``chart``.

    Written through the widget's ``outputs`` state rather than ``with output: display(...)``:
    the context-manager capture routes messages by the executing cell's id, and a headless
    executor (nbclient, nbval) can then miss the cell's idle message and wait for its timeout.
    """
    output.outputs = ()
    output.append_display_data(chart)


class PrivateROCExplorer:
    """Slide ε, the threshold strategy and the number of thresholds; see private ROC draws.

    Parameters: test labels and classifier scores (the test set is the private data); ``scores``
    may be one array or a dict {classifier name: scores} to compare classifiers (a dropdown then
    picks one); the public ``score_range``; ``classes``, the public labels ``[negative,
    positive]`` (``None`` reads them from y: every draw warns PrivacyLeakWarning); a seed so
    that the same slider position gives the same draws. The true curves and AUCs (not private,
    for comparison) are computed once.
    """

    def __init__(self, y_true: Any, scores: Any, *, score_range: tuple[float, float] = (0.0, 1.0),
                 classes: Any = None, n_draws: int = 5, random_state: int = 0):
        self.y_true = np.asarray(y_true)
        self.classes = classes
        if isinstance(scores, dict):
            if not scores:
                raise ValueError("scores must not be an empty dict")
            self.score_sets = {str(k): np.asarray(v, dtype=float) for k, v in scores.items()}
        else:
            self.score_sets = {"classifier": np.asarray(scores, dtype=float)}
        self.score_range = score_range
        self.random_state = random_state
        self.true_curves = {k: roc_curve_exact(self.y_true, v) for k, v in self.score_sets.items()}
        style = {"description_width": "150px"}
        layout = widgets.Layout(width="460px")
        names = list(self.score_sets)
        self.classifier = widgets.Dropdown(options=names, value=names[0], description="classifier",
                                           style=style, layout=layout)
        self.epsilon = widgets.FloatLogSlider(value=1.0, base=10, min=-1.3, max=0.7, step=0.05,
                                              description="total ε", style=style, layout=layout)
        self.method = widgets.Dropdown(options=_ROC_METHODS, value="recursive_medians",
                                       description="threshold strategy", style=style, layout=layout)
        self.levels = widgets.IntSlider(value=4, min=2, max=10, description="k (2^k bins; t for Laplace)",
                                        style=style, layout=layout)
        self.median = widgets.ToggleButtons(options=[("smooth sensitivity (paper)", "smooth"),
                                                     ("exponential mechanism", "exponential")],
                                            value="smooth", description="noisy median", style=style)
        self.split = widgets.ToggleButtons(options=[("ε2/2 each (paper)", "sequential"),
                                                    ("parallel (tighter)", "parallel")],
                                           value="sequential", description="TP/FP budget",
                                           style=style)
        self.draws = widgets.IntSlider(value=n_draws, min=1, max=20, description="private draws",
                                       style=style, layout=layout)
        self.summary = widgets.HTML()
        self.output = widgets.Output()
        controls = [self.epsilon, self.method, self.levels, self.median, self.split, self.draws]
        if len(names) > 1:
            controls.insert(0, self.classifier)
        for control in controls:
            control.observe(self.update, names="value")
        self.widget = widgets.VBox(controls + [self.summary, self.output])
        self.update()

    @property
    def scores(self) -> np.ndarray:
        """Scores of the selected classifier."""
        return self.score_sets[self.classifier.value]

    @property
    def true_curve(self) -> pd.DataFrame:
        """Exact ROC curve of the selected classifier (not private; precomputed)."""
        return self.true_curves[self.classifier.value]

    def curves(self) -> list[pd.DataFrame]:
        """The private curves for the current slider values (one library call per draw)."""
        rng = np.random.default_rng(self.random_state)
        out = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateCurveWarning)
            for _ in range(self.draws.value):
                if self.method.value == "laplace":
                    out.append(laplace_roc_curve(self.y_true, self.scores, epsilon=self.epsilon.value,
                                                 n_thresholds=self.levels.value,
                                                 score_range=self.score_range, classes=self.classes,
                                                 random_state=rng))
                else:
                    out.append(private_roc_curve(
                        self.y_true, self.scores, epsilon=self.epsilon.value,
                        thresholds=self.method.value, n_thresholds=2 ** self.levels.value,
                        median=self.median.value, counts_split=self.split.value,
                        score_range=self.score_range, classes=self.classes, random_state=rng))
        return out

    def update(self, change: Any = None) -> None:
        """Redraw: private curves for the current sliders over the precomputed true curve."""
        uses_medians = self.method.value == "recursive_medians"
        self.median.disabled = not uses_medians
        self.split.disabled = self.method.value == "laplace"
        curves = self.curves()
        true_auc = self.true_curve.attrs["auc"]
        errors = np.array([abs(c.attrs["auc"] - true_auc) for c in curves])
        name = dict((v, k) for k, v in _ROC_METHODS)[self.method.value]
        chart = roc_chart(stack_curves({name: curves}, self.true_curve),
                          title=f"{name}, ε = {self.epsilon.value:.2g}")
        aucs = ", ".join(f"{c.attrs['auc']:.3f}" for c in curves[:8])
        more = " …" if len(curves) > 8 else ""
        spent = curves[0].attrs["ledger"]["charged"].sum()
        self.summary.value = (f"true AUC (not private) <b>{true_auc:.3f}</b> · private AUCs "
                              f"{aucs}{more} · median |AUC error| <b>{np.median(errors):.3f}</b>"
                              f" · ε spent per draw {spent:.3g}")
        _show(self.output, chart)


class FeatureSelectionExplorer:
    """Slide ε and τ (or k); compare test accuracy with private, exact and no feature selection.

    ``X_train``/``X_test`` are binary (0/1) DataFrames with at most ``max_ones`` ones per row
    (public bound), ``y`` binary. The score is TC. The classifier (``classifier``: a factory of
    unfitted estimators; default non-private scikit-learn logistic regression, so the chart
    isolates the effect of private selection) is refitted on the selected columns for each
    slider move. The references (all features, majority class) are fitted once; the exact
    selection with the same rule is cached per (rule, τ, k). ``classes``: the public labels
    ``[negative, positive]``, passed to the selectors (TC reads no labels; declared classes
    also make them check y).
    """

    _METHODS = [("score perturbation (DP)", "sp"), ("exponential top-k (DP)", "em"),
                ("sparse vector (DP)", "svt"), ("PTT — NOT DP (paper's Alg. 2)", "ptt")]

    def __init__(self, X_train: pd.DataFrame, y_train: Any, X_test: pd.DataFrame, y_test: Any, *,
                 max_ones: int, classifier: Callable[[], Any] | None = None, classes: Any = None,
                 random_state: int = 0):
        self.X_train, self.X_test = X_train, X_test
        self.classes = classes
        self.y_train, self.y_test = np.asarray(y_train), np.asarray(y_test)
        self.max_ones = max_ones
        self.random_state = random_state
        self.make_classifier = classifier or (lambda: LogisticRegression(max_iter=500))
        # precomputed once: scores, and the two selection-free references
        self.total_counts = total_count(X_train)
        self.accuracy_majority = float(max(np.mean(self.y_test == v) for v in np.unique(self.y_test)))
        self.accuracy_all = self._fit_score(np.ones(X_train.shape[1], dtype=bool))
        self._exact_cache: dict = {}
        style = {"description_width": "150px"}
        layout = widgets.Layout(width="460px")
        self.epsilon = widgets.FloatLogSlider(value=0.1, base=10, min=-2, max=0.7, step=0.05,
                                              description="ε for selection", style=style, layout=layout)
        self.method = widgets.Dropdown(options=self._METHODS, value="sp", description="method",
                                       style=style, layout=layout)
        self.rule = widgets.ToggleButtons(options=[("noisy TC > τ", "threshold"), ("top k", "top_k")],
                                          value="threshold", description="SP keeps", style=style)
        high = float(np.max(self.total_counts))
        self.tau = widgets.FloatSlider(value=round(high / 4), min=0, max=high, step=max(1.0, round(high / 200)),
                                       description="τ (TC, records)", style=style, layout=layout)
        self.k = widgets.IntSlider(value=10, min=1, max=min(60, X_train.shape[1]),
                                   description="k (top-k / SVT cutoff)", style=style, layout=layout)
        self.summary = widgets.HTML()
        self.output = widgets.Output()
        controls = [self.epsilon, self.method, self.rule, self.tau, self.k]
        for control in controls:
            control.observe(self.update, names="value")
        self.widget = widgets.VBox(controls + [self.summary, self.output])
        self.update()

    def _fit_score(self, support: np.ndarray) -> float:
        if not support.any():
            return self.accuracy_majority
        clf = self.make_classifier().fit(self.X_train.loc[:, support], self.y_train)
        return float(clf.score(self.X_test.loc[:, support], self.y_test))

    def _uses_threshold(self) -> bool:
        return self.method.value in ("svt", "ptt") or (self.method.value == "sp"
                                                       and self.rule.value == "threshold")

    def selector(self) -> Any:
        """The selector for the current slider values (a fresh, unfitted transformer)."""
        eps, k, tau, rs = self.epsilon.value, self.k.value, self.tau.value, self.random_state
        common = {"epsilon": eps, "classes": self.classes, "random_state": rs}
        if self.method.value == "sp":
            rule = {"threshold": tau} if self.rule.value == "threshold" else {"k": k}
            return ScorePerturbationSelector(max_ones=self.max_ones, **common, **rule)
        if self.method.value == "em":
            return ExponentialTopKSelector(k=k, max_ones=self.max_ones, **common)
        if self.method.value == "svt":
            return SparseVectorSelector(threshold=tau, cutoff=k, max_ones=self.max_ones, **common)
        return PrivateThresholdTesting(threshold=tau, **common)

    def exact_support(self) -> np.ndarray:
        """The same rule without noise (not private): F_τ = {TC > τ} (first k for SVT) or top k."""
        tc = self.total_counts
        if self._uses_threshold():
            support = tc > self.tau.value
            if self.method.value == "svt":        # SVT stops after the first k (cutoff)
                support &= np.cumsum(support) <= self.k.value
            return support
        return np.isin(np.arange(tc.size), np.argsort(-tc, kind="stable")[: self.k.value])

    def accuracy(self) -> tuple[float, int]:
        """Test accuracy of the classifier on the privately selected features, and how many."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotDifferentiallyPrivateWarning)
            selector = self.selector().fit(self.X_train, self.y_train)
        support = selector.get_support()
        return self._fit_score(support), int(support.sum())

    def exact_accuracy(self) -> tuple[float, int]:
        """Accuracy with the exact (non-private) selection of the same rule; cached."""
        support = self.exact_support()
        key = support.tobytes()
        if key not in self._exact_cache:
            self._exact_cache[key] = self._fit_score(support)
        return self._exact_cache[key], int(support.sum())

    def update(self, change: Any = None) -> None:
        """Redraw: one selection + one classifier fit, then a bar chart against the references."""
        import altair as alt

        self.rule.disabled = self.method.value != "sp"
        self.tau.disabled = not self._uses_threshold()
        self.k.disabled = self.method.value in ("ptt",) or (self.method.value == "sp"
                                                             and self.rule.value == "threshold")
        acc, kept = self.accuracy()
        exact_acc, exact_kept = self.exact_accuracy()
        warning = (" <span style='color:#d62728'><b>PTT is not differentially private</b></span>"
                   if self.method.value == "ptt" else "")
        self.summary.value = (f"features kept: <b>{kept}</b> of {self.X_train.shape[1]} privately, "
                              f"{exact_kept} by the exact rule (not private){warning}")
        data = pd.DataFrame({"model": ["majority class", "all features (no selection)",
                                       "exact selection (not private)", "private selection"],
                             "accuracy": [self.accuracy_majority, self.accuracy_all, exact_acc, acc]})
        chart = alt.Chart(data).mark_bar().encode(
            x=alt.X("accuracy:Q", scale=alt.Scale(domain=[0.5, 1.0], clamp=True)),
            y=alt.Y("model:N", sort=None, title=None),
            color=alt.Color("model:N", legend=None),
            tooltip=["model", alt.Tooltip("accuracy:Q", format=".3f")],
        ).properties(width=380, height=130, title="Test accuracy")
        _show(self.output, chart)
