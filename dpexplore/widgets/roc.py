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
from ..plots.roc import feature_selection_bars, roc_chart, stack_curves
from ..select.scores import total_count
from ._display import show_chart
from ..select.stoddard import (ExponentialTopKSelector, NotDifferentiallyPrivateWarning,
                               PrivateThresholdTesting, ScorePerturbationSelector,
                               SparseVectorSelector, cap_row_ones)

__all__ = ["PrivateROCExplorer", "FeatureSelectionExplorer"]

_ROC_METHODS = [("PriROC · RecursiveMedians", "recursive_medians"),
                ("PriROC · FixedSpace", "fixed_space"),
                ("LaplaceROC (baseline)", "laplace")]


def _thin(curve: pd.DataFrame, points: int) -> pd.DataFrame:
    """Evenly spaced rows of a curve (first and last kept) when it has more than ``points``."""
    if len(curve) <= points:
        return curve
    return curve.iloc[np.unique(np.linspace(0, len(curve) - 1, points).round().astype(int))]


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
        # for display only: at most ~120 of the exact curve's points (a smaller chart to draw)
        self._true_display = {k: _thin(c, 120) for k, c in self.true_curves.items()}
        style = {"description_width": "130px"}
        toggle_style = {"description_width": "130px", "button_width": "auto"}
        layout = widgets.Layout(width="460px")
        names = list(self.score_sets)
        self.classifier = widgets.Dropdown(options=names, value=names[0], description="classifier",
                                           style=style, layout=layout)
        self.epsilon = widgets.FloatLogSlider(value=1.0, base=10, min=-1.3, max=0.7, step=0.05,
                                              description="total ε", readout_format=".3g",
                                              continuous_update=False, style=style, layout=layout)
        self.method = widgets.Dropdown(options=_ROC_METHODS, value="recursive_medians",
                                       description="threshold strategy", style=style, layout=layout)
        self.levels = widgets.IntSlider(value=4, min=2, max=10, description="k (levels)",
                                        continuous_update=False, style=style, layout=layout)
        self.median = widgets.ToggleButtons(options=[("smooth sensitivity (paper)", "smooth"),
                                                     ("exponential mechanism", "exponential")],
                                            value="smooth", description="noisy median", style=toggle_style)
        self.split = widgets.ToggleButtons(options=[("ε2/2 each (paper)", "sequential"),
                                                    ("parallel (tighter)", "parallel")],
                                           value="sequential", description="TP/FP budget",
                                           style=toggle_style)
        self.draws = widgets.IntSlider(value=n_draws, min=1, max=20, description="private draws",
                                       continuous_update=False, style=style, layout=layout)
        self.help = widgets.HTML(
            "<small>k: PriROC uses 2<sup>k</sup> bins; LaplaceROC uses t = k thresholds. "
            "Noisy median: only for RecursiveMedians. The black curve is the true one (not private).</small>")
        self.summary = widgets.HTML()
        self.output = widgets.Output()
        controls = [self.epsilon, self.method, self.levels, self.median, self.split, self.draws]
        if len(names) > 1:
            controls.insert(0, self.classifier)
        for control in controls:
            control.observe(self.update, names="value")
        self.widget = widgets.VBox(controls + [self.help, self.summary, self.output])
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
        chart = roc_chart(stack_curves({name: curves}, self._true_display[self.classifier.value]),
                          title=f"{name}, ε = {self.epsilon.value:.3g}")
        aucs = ", ".join(f"{c.attrs['auc']:.3f}" for c in curves[:8])
        more = " …" if len(curves) > 8 else ""
        spent = curves[0].attrs["ledger"]["charged"].sum()
        self.summary.value = (f"true AUC (not private) <b>{true_auc:.3f}</b> · private AUCs "
                              f"{aucs}{more} · median |AUC error| <b>{np.median(errors):.3f}</b>"
                              f" · ε spent per draw {spent:.3g}")
        show_chart(self.output, chart)


class FeatureSelectionExplorer:
    """Slide ε and τ (or k); compare test accuracy with private, exact and no feature selection.

    ``X_train``/``X_test`` are binary (0/1) DataFrames with at most ``max_ones`` ones per row
    (public bound), ``y`` binary. The score is TC. The classifier (``classifier``: a factory of
    unfitted estimators; default non-private scikit-learn logistic regression, so the chart
    isolates the effect of private selection) is refitted on the selected columns. Each setting
    runs ``n_draws`` seeded private selections, so the bar of the private selection is an average
    over draws with its range, and it moves with ε (one draw at a large ε is almost always the
    exact selection); the exact selection is the selector's own rule without noise
    (``exact_support``). When no training row holds more than ``max_ones`` ones (the selectors' row
    cap, :func:`~dpexplore.select.stoddard.cap_row_ones`, is then a no-op), a draw applies the
    selector's own mechanism to the exact TC scores computed once, the same distribution as
    fitting the selector, without re-reading the table; otherwise each draw fits the selector.
    Fits are cached per selected set, and a fit uses each distinct row of the selected columns
    once, weighted by its count (the same optimum as the full fit, when the classifier takes
    ``sample_weight``). The references (all features, majority class) are fitted once. ``classes``: the public labels ``[negative, positive]``, passed to the selectors (TC
    reads no labels; declared classes also make them check y).
    """

    _METHODS = [("score perturbation (DP)", "sp"), ("exponential top-k (DP)", "em"),
                ("sparse vector (DP)", "svt"), ("PTT — NOT DP (paper's Alg. 2)", "ptt")]

    def __init__(self, X_train: pd.DataFrame, y_train: Any, X_test: pd.DataFrame, y_test: Any, *,
                 max_ones: int, classifier: Callable[[], Any] | None = None, classes: Any = None,
                 n_draws: int = 4, random_state: int = 0):
        self.X_train, self.X_test = X_train, X_test
        self.classes = classes
        self.y_train, self.y_test = np.asarray(y_train), np.asarray(y_test)
        self._Xtr = np.asarray(X_train, dtype=np.int8)
        self._Xte = np.asarray(X_test, dtype=np.int8)
        self.max_ones = max_ones
        self._cap_is_noop = cap_row_ones(self._Xtr, max_ones)[1] == 0   # checks X and max_ones too
        self.n_draws = int(n_draws)
        self.random_state = random_state
        self.make_classifier = classifier or (lambda: LogisticRegression(max_iter=500))
        # precomputed once: scores, and the two selection-free references
        self.total_counts = total_count(X_train)
        self.accuracy_majority = float(max(np.mean(self.y_test == v) for v in np.unique(self.y_test)))
        self._fit_cache: dict = {}
        self.accuracy_all = self._fit_score(np.ones(X_train.shape[1], dtype=bool))
        style = {"description_width": "130px"}
        layout = widgets.Layout(width="460px")
        self.epsilon = widgets.FloatLogSlider(value=0.01, base=10, min=-3, max=0, step=0.1,
                                              description="ε for selection", readout_format=".3g",
                                              continuous_update=False, style=style, layout=layout)
        self.method = widgets.Dropdown(options=self._METHODS, value="sp", description="method",
                                       style=style, layout=layout)
        self.rule = widgets.ToggleButtons(options=[("noisy TC > τ", "threshold"), ("top k", "top_k")],
                                          value="threshold", description="SP keeps",
                                          style={**style, "button_width": "auto"})
        high = float(np.max(self.total_counts))
        self.tau = widgets.FloatSlider(value=round(high / 4), min=0, max=high, step=max(1.0, round(high / 200)),
                                       description="τ (TC, records)", readout_format=".0f",
                                       continuous_update=False, style=style, layout=layout)
        self.k = widgets.IntSlider(value=10, min=1, max=min(60, X_train.shape[1]),
                                   description="k", continuous_update=False, style=style, layout=layout)
        self.help = widgets.HTML("<small>k: how many features top-k keeps, or the sparse vector's cutoff. "
                                 f"Each setting runs {self.n_draws} private draws: the bar is their mean, "
                                 "the black line their range.</small>")
        self.summary = widgets.HTML()
        self.output = widgets.Output()
        controls = [self.epsilon, self.method, self.rule, self.tau, self.k]
        for control in controls:
            control.observe(self.update, names="value")
        self.widget = widgets.VBox(controls + [self.help, self.summary, self.output])
        self.update()

    def _fit_score(self, support: np.ndarray) -> float:
        """Test accuracy of the classifier on the ``support`` columns (cached per support)."""
        if not support.any():
            return self.accuracy_majority
        key = support.tobytes()
        if key not in self._fit_cache:
            from sklearn.utils.validation import has_fit_parameter
            clf = self.make_classifier()
            cols = np.flatnonzero(support)
            labels, codes = np.unique(self.y_train, return_inverse=True)   # any label type
            if has_fit_parameter(clf, "sample_weight"):   # each distinct (row, label) once, weighted
                rows = np.column_stack([self._Xtr[:, cols], codes])
                unique, counts = np.unique(rows, axis=0, return_counts=True)
                clf.fit(unique[:, :-1], unique[:, -1], sample_weight=counts.astype(float))
            else:
                clf.fit(self._Xtr[:, cols], codes)
            predicted = labels[np.asarray(clf.predict(self._Xte[:, cols]), dtype=np.int64)]
            self._fit_cache[key] = float(np.mean(predicted == self.y_test))
        return self._fit_cache[key]

    def _uses_threshold(self) -> bool:
        return self.method.value in ("svt", "ptt") or (self.method.value == "sp"
                                                       and self.rule.value == "threshold")

    def selector(self, draw: int = 0) -> Any:
        """The selector of private draw ``draw`` for the current slider values (fresh, unfitted)."""
        eps, k, tau = self.epsilon.value, self.k.value, self.tau.value
        common = {"epsilon": eps, "classes": self.classes, "random_state": self.random_state + draw}
        if self.method.value == "sp":
            rule = {"threshold": tau} if self.rule.value == "threshold" else {"k": k}
            return ScorePerturbationSelector(max_ones=self.max_ones, **common, **rule)
        if self.method.value == "em":
            return ExponentialTopKSelector(k=k, max_ones=self.max_ones, **common)
        if self.method.value == "svt":
            return SparseVectorSelector(threshold=tau, cutoff=k, max_ones=self.max_ones, **common)
        return PrivateThresholdTesting(threshold=tau, **common)

    def exact_support(self) -> np.ndarray:
        """The selector's rule on the exact TC, without noise (not private): F_τ, its first k (SVT),
        or the top k."""
        return self.selector().exact_support(self.total_counts)

    def support(self, draw: int = 0) -> np.ndarray:
        """Boolean mask of the features kept by private draw ``draw`` at the current settings.

        When no training row has more than ``max_ones`` ones (capping changes nothing), the
        selector runs on the TC scores computed once (``fit_scores``: the same draws as ``fit``)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotDifferentiallyPrivateWarning)
            if self._cap_is_noop:
                return self.selector(draw).fit_scores(self.total_counts).get_support()
            return self.selector(draw).fit(self.X_train, self.y_train).get_support()

    def accuracy(self, draw: int = 0) -> tuple[float, int]:
        """Test accuracy of the classifier on the features of private draw ``draw``, and how many."""
        support = self.support(draw)
        return self._fit_score(support), int(support.sum())

    def draws(self) -> pd.DataFrame:
        """Accuracy and number of features kept for each of the ``n_draws`` private draws."""
        return pd.DataFrame([dict(zip(("accuracy", "kept"), self.accuracy(d)), draw=d)
                             for d in range(self.n_draws)])

    def exact_accuracy(self) -> tuple[float, int]:
        """Accuracy with the exact (non-private) selection of the same rule (cached)."""
        support = self.exact_support()
        return self._fit_score(support), int(support.sum())

    def update(self, change: Any = None) -> None:
        """Redraw: ``n_draws`` selections (fits cached per set), bars against the references."""
        self.rule.disabled = self.method.value != "sp"
        self.tau.disabled = not self._uses_threshold()
        self.k.disabled = self.method.value in ("ptt",) or (self.method.value == "sp"
                                                             and self.rule.value == "threshold")
        draws = self.draws()
        exact_acc, exact_kept = self.exact_accuracy()
        warning = (" <span style='color:#d62728'><b>PTT is not differentially private</b></span>"
                   if self.method.value == "ptt" else "")
        d = self.X_train.shape[1]
        self.summary.value = (f"features kept: <b>{draws['kept'].min()}–{draws['kept'].max()}</b> of {d} "
                              f"over {self.n_draws} private draws, {exact_kept} by the exact rule (not private) · "
                              f"private accuracy {draws['accuracy'].mean():.3f} (range "
                              f"{draws['accuracy'].min():.3f}–{draws['accuracy'].max():.3f}){warning}")
        chart = feature_selection_bars(
            {"majority class": self.accuracy_majority, "all features (no selection)": self.accuracy_all,
             "exact selection (not private)": exact_acc}, draws["accuracy"].to_numpy(),
            draws["kept"].to_numpy(), exact_kept, n_features=d,
            title=f"Test accuracy, ε for selection = {self.epsilon.value:.3g}")
        show_chart(self.output, chart)
