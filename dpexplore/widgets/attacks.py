"""Explorers for notebook 10: reconstruction from subset counts, and membership inference.

Thin ipywidgets wrappers over :mod:`dpexplore.attacks` and :mod:`dpexplore.plots.attacks`.
:class:`ReconstructionExplorer` reads the cached grid of ``benchmarks/10_reconstruction_grid.py``
(a linear program per setting and run is too slow for a slider), so a move only picks rows and
redraws. :class:`MembershipExplorer` scores the fixed reference models once when it is built; a
move fits a few DP models (milliseconds each) and redraws their ROC curves. Fixed default seeds
are deliberate: these are teaching views of the public Adult data, where reproducible pictures
matter and nothing private is released.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

import altair as alt
import ipywidgets as widgets
import numpy as np
import pandas as pd

from ..attacks import membership_bound, membership_roc, membership_scores
from ..models import PrivateLogisticRegression, PrivateNaiveBayes
from ..plots.attacks import membership_chart, reconstruction_chart, reconstruction_summary, records_chart, roc_frame
from ..plots._accessible import describe
from ._display import LAYOUT, STYLE, Explorer, log_slider

__all__ = ["ReconstructionExplorer", "MembershipExplorer", "dp_models"]


def _bits(text: str) -> np.ndarray:
    """The bits of a cached run, stored as "0 1 1 0 …"."""
    return np.array(str(text).split(), dtype=np.int64)


class ReconstructionExplorer(Explorer):
    """Slide the number of subset queries and the error bound E of their answers; see the share of
    the secret column the linear-programming attack recovers (mean and range over the cached runs)
    and which records its first run got right.

    ``runs``: the rows of ``notebooks/results/10_reconstruction.csv`` (n_queries, noise, rep, rate;
    the first run of each setting with its guessed bits and the secret).
    """

    def __init__(self, runs: pd.DataFrame, *, n_queries: int = 400, noise: float = 2):
        self.summary_table = reconstruction_summary(runs)
        first = runs[runs["guess"].notna() & (runs["guess"].astype(str) != "")]
        self.secret = _bits(first["secret"].iloc[0])
        self.guesses = {(int(r.n_queries), float(r.noise)): _bits(r.guess) for r in first.itertuples()}
        self.n_records = int(self.secret.size)
        ks = sorted(int(k) for k in self.summary_table["n_queries"].unique())
        es = sorted(float(e) for e in self.summary_table["noise"].unique())
        self.queries = widgets.SelectionSlider(options=ks, value=n_queries, description="queries",
                                               continuous_update=False, style=STYLE, layout=LAYOUT)
        self.noise = widgets.SelectionSlider(options=[(f"{e:g}", e) for e in es], value=float(noise),
                                             description="error bound E", continuous_update=False, style=STYLE,
                                             layout=LAYOUT)
        self._build([self.queries, self.noise])

    def update(self, change: Any = None) -> None:
        """Redraw: the curves with the chosen setting marked, and that setting's first run."""
        k, e = int(self.queries.value), float(self.noise.value)
        row = self.summary_table[(self.summary_table["n_queries"] == k) & np.isclose(self.summary_table["noise"], e)]
        rate, low, high = (float(row[c].iloc[0]) for c in ("rate", "low", "high"))
        self.rate = rate
        guess = self.guesses[(k, e)]
        top = reconstruction_chart(self.summary_table, n_records=self.n_records, n_queries=k, noise=e)
        bottom = records_chart(self.secret, guess, title=f"First run at {k} queries, E = {e:g}")
        chart = alt.vconcat(top, bottom)
        self.summary.value = (
            f"<b>{k} subset counts, each off by up to E = {e:g}</b>: the attack recovers <b>{rate:.0%}</b> of "
            f"the {self.n_records} secret bits on average (runs from {low:.0%} to {high:.0%}); √n = "
            f"{np.sqrt(self.n_records):.3g}, and a coin flip gets 50%.")
        self._draw(describe(chart, f"{top.description} Below: {bottom.description}",
                            "Take-away: small errors leave the secret column exposed; errors of order √n and more "
                            "push the attack towards a coin flip."))


def dp_models(classes: Any, bounds: Any = (0, 1)) -> dict[str, Callable[[float, int], Any]]:
    """The DP models the membership explorer can train: {name: factory(ε, seed) → unfitted model},
    DP Naive Bayes (thesis Alg. 1) and DP logistic regression (objective perturbation, Chaudhuri et
    al. 2011), with the public ``classes`` and feature ``bounds``."""
    return {"DP Naive Bayes": lambda eps, seed: PrivateNaiveBayes(eps, classes=classes, random_state=seed),
            "DP logistic regression": lambda eps, seed: PrivateLogisticRegression(
                eps, classes=classes, bounds=bounds, random_state=seed)}


class MembershipExplorer(Explorer):
    """Slide ε and pick a DP model: the loss-threshold membership attack's ROC curves against
    ``n_draws`` DP models trained on the members, beside the fixed ``reference`` models (fitted,
    not private, e.g. an overfit random forest) and under the ε-DP limit
    (:func:`~dpexplore.attacks.membership_bound`).

    ``members`` = (X, y) the models are trained on; ``non_members`` = (X, y) they never see.
    ``models`` maps a name to a factory(ε, seed) of an unfitted DP model (:func:`dp_models`).
    """

    def __init__(self, members: tuple, non_members: tuple, reference: Mapping[str, Any], *,
                 models: Mapping[str, Callable[[float, int], Any]], epsilon: float = 1.0, n_draws: int = 4):
        self.X_in, self.y_in = members
        self.X_out, self.y_out = non_members
        self.models = dict(models)
        self.n_draws = int(n_draws)
        self.reference_rocs, self.reference_aucs = {}, {}
        for name, model in reference.items():     # slider-independent
            roc, auc = membership_roc(membership_scores(model, self.X_in, self.y_in),
                                      membership_scores(model, self.X_out, self.y_out))
            self.reference_rocs[name], self.reference_aucs[name] = roc, auc
        self.epsilon = log_slider(epsilon, "ε", lo=-1.3, hi=1.7)
        self.model = widgets.Dropdown(options=list(self.models), value=next(iter(self.models)),
                                      description="DP model", style=STYLE, layout=LAYOUT)
        self._build([self.epsilon, self.model])

    def rocs(self) -> tuple[list[pd.DataFrame], list[float]]:
        """The attack's ROC curve and AUC against each of the ``n_draws`` DP models at the current ε."""
        make = self.models[self.model.value]
        curves, aucs = [], []
        for seed in range(self.n_draws):
            model = make(self.epsilon.value, seed).fit(self.X_in, self.y_in)
            roc, auc = membership_roc(membership_scores(model, self.X_in, self.y_in),
                                      membership_scores(model, self.X_out, self.y_out))
            curves.append(roc)
            aucs.append(auc)
        return curves, aucs

    def update(self, change: Any = None) -> None:
        """Redraw: new DP models at the current ε, their ROC curves under the ε-DP limit."""
        eps, name = float(self.epsilon.value), self.model.value
        curves, aucs = self.rocs()
        label = f"{name}, ε = {eps:.3g} ({self.n_draws} draws)"
        tidy = roc_frame({**{k: [v] for k, v in self.reference_rocs.items()}, label: curves})
        self.aucs = aucs
        at = 0.05
        best = max(float(np.interp(at, c["fpr"], c["tpr"])) for c in curves)
        limit = float(membership_bound([at], epsilon=eps)[0])
        refs = " · ".join(f"{k} AUC <b>{v:.2f}</b>" for k, v in self.reference_aucs.items())
        self.summary.value = (
            f"{refs} · {name} at ε = {eps:.3g}: median AUC <b>{np.median(aucs):.2f}</b> over {self.n_draws} draws "
            f"(0.5 = guessing) · flagging 5% of the non-members, the attack flags at most {best:.0%} of the members; "
            f"the ε-DP limit allows {limit:.0%}")
        self._draw(membership_chart(tidy, epsilon=eps,
                                    aucs={**self.reference_aucs, f"{name} (median)": float(np.median(aucs))},
                                    title=f"Membership inference: {name} at ε = {eps:.3g}"))
