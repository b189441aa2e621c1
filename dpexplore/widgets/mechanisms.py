"""Explorers for notebook 01: noise, privacy loss, the exponential mechanism and budgets.

Thin ipywidgets wrappers over :mod:`dpexplore.plots.mechanisms`. Everything that does not
depend on a slider (true answers, utilities, the probability curves over a grid of ε) is
computed once when an explorer is built; a slider move makes one library call and redraws one
altair chart inside ``.output`` (a ``widgets.Output``). ``update()`` is that redraw callback,
``.chart`` the last chart drawn and ``.widget`` the container to display, so a benchmark or a
test can time slider → redraw and inspect what was drawn.

Fixed default seeds (``random_state=0``) are deliberate here: these explorers are teaching
views of toy counts and of the *public* Adult data, where reproducible pictures matter and no
private data is released. A release of private data must never default to a fixed seed (the
your-data app defaults to fresh entropy). The explorers use the textbook Laplace sampler: its
density is the curve drawn next to the samples.
"""
from __future__ import annotations

import html
from typing import Any, Sequence

import ipywidgets as widgets
import numpy as np
import pandas as pd

from ..accuracy import epsilon_for_accuracy, laplace_accuracy
from ..audit import privacy_loss
from ..budget import BudgetAccountant
from ..domain import Schema
from ..mechanisms import (exponential, exponential_probabilities, geometric, geometric_variance,
                          laplace, laplace_scale, laplace_variance)
from ._display import LAYOUT, STYLE, Explorer, log_slider
from ..plots.mechanisms import (accuracy_chart, audit_points, budget_chart, curve_labels, exponential_chart,
                                exponential_frame, noise_chart, noise_frames, privacy_loss_chart,
                                privacy_loss_frames)

__all__ = ["NoiseExplorer", "AccuracyExplorer", "PrivacyLossExplorer", "ExponentialExplorer", "BudgetExplorer"]


def _check_categorical(frame: pd.DataFrame, schema: Schema, attributes: Sequence[str]) -> list[str]:
    """The declared ``attributes`` of ``frame``, each categorical (the candidates of a selection),
    and at least one row; checked before anything is counted."""
    attributes = schema.check_columns(attributes, "attributes")
    for name in attributes:
        if schema[name].kind != "categorical":
            raise ValueError(f"attribute {name!r} is numeric: the explorer needs a categorical attribute")
    if len(frame) == 0:
        raise ValueError("frame is empty: at least one row is needed")
    return attributes


class NoiseExplorer(Explorer):
    """Laplace vs geometric noise on one count: slide ε and the sensitivity Δ.

    ``true_count`` is the count to protect; each redraw adds noise to it ``n_samples`` times
    with :func:`~dpexplore.mechanisms.laplace` and :func:`~dpexplore.mechanisms.geometric` (one
    seeded Generator, so the same slider position gives the same picture) and draws the
    histograms against the closed-form density and pmf.
    """

    def __init__(self, true_count: int, *, epsilon: float = 1.0, sensitivity: int = 1,
                 n_samples: int = 20_000, random_state: int = 0):
        self.true_count = int(true_count)
        self.n_samples = int(n_samples)
        self.random_state = random_state
        self._truth = np.full(self.n_samples, self.true_count, dtype=np.int64)  # slider-independent
        self.epsilon = log_slider(epsilon, "ε")
        self.sensitivity = widgets.IntSlider(value=sensitivity, min=1, max=5, description="sensitivity Δ",
                                             continuous_update=False, style=STYLE, layout=LAYOUT)
        self._build([self.epsilon, self.sensitivity])

    def samples(self) -> dict[str, np.ndarray]:
        """Released values of both mechanisms at the current slider values."""
        rng = np.random.default_rng(self.random_state)
        eps, delta = self.epsilon.value, self.sensitivity.value
        return {"Laplace": laplace(self._truth, epsilon=eps, sensitivity=delta, random_state=rng),
                "geometric": geometric(self._truth, epsilon=eps, sensitivity=delta, random_state=rng)}

    def update(self, change: Any = None) -> None:
        """Redraw: new samples at the current ε and Δ, histograms against the theory."""
        eps, delta = self.epsilon.value, self.sensitivity.value
        samples = self.samples()
        self.hist, self.theory = noise_frames(samples, epsilon=eps, sensitivity=delta,
                                              true_value=self.true_count)
        b = laplace_scale(epsilon=eps, sensitivity=delta)
        lap, geo = samples["Laplace"] - self.true_count, samples["geometric"] - self.true_count
        self.summary.value = (
            f"<b>scale b = Δ/ε = {b:.3g}</b> &nbsp;·&nbsp; standard deviation: Laplace "
            f"{np.sqrt(laplace_variance(epsilon=eps, sensitivity=delta)):.3g} (samples {lap.std():.3g}), "
            f"geometric {np.sqrt(geometric_variance(epsilon=eps, sensitivity=delta)):.3g} "
            f"(samples {geo.std():.3g}) &nbsp;·&nbsp; 95% of Laplace releases within "
            f"±{b * np.log(20):.3g} of the true count {self.true_count}")
        self._draw(noise_chart(self.hist, self.theory, true_value=self.true_count,
                               title=f"{self.n_samples:,} releases of the count {self.true_count} "
                                     f"at ε = {eps:.3g}, Δ = {delta}"))


class AccuracyExplorer(Explorer):
    """Accuracy before release: slide ε, Δ and α and read the (1 − α) error bound a = b·ln(1/α)
    of the Laplace mechanism (:func:`~dpexplore.accuracy.laplace_accuracy`), drawn on the noise
    distribution, with an empirical check: the share of ``n_samples`` noise draws at or beyond ±a.

    The draws are made once at scale 1 (with :func:`~dpexplore.mechanisms.laplace`) and scaled by
    b = Δ/ε on each redraw, so the same slider position gives the same picture. The bound needs
    no data: it is what an analyst can promise before releasing anything.
    """

    def __init__(self, *, epsilon: float = 1.0, sensitivity: int = 1, alpha: float = 0.05,
                 n_samples: int = 20_000, random_state: int = 0):
        self.n_samples = int(n_samples)
        # slider-independent: Laplace(1) draws, scaled by b on each redraw
        self._unit = laplace(np.zeros(self.n_samples), epsilon=1.0, sensitivity=1.0,
                             random_state=np.random.default_rng(random_state))
        self.epsilon = log_slider(epsilon, "ε")
        self.sensitivity = widgets.IntSlider(value=sensitivity, min=1, max=5, description="sensitivity Δ",
                                             continuous_update=False, style=STYLE, layout=LAYOUT)
        self.alpha = widgets.FloatLogSlider(value=alpha, base=10, min=-3, max=-0.3, step=0.05,
                                            description="α (miss chance)", readout_format=".3g",
                                            continuous_update=False, style=STYLE, layout=LAYOUT)
        self._build([self.epsilon, self.sensitivity, self.alpha])

    def update(self, change: Any = None) -> None:
        """Redraw: the bound at the current ε, Δ, α and the share of the draws beyond it."""
        eps, delta, alpha = self.epsilon.value, self.sensitivity.value, self.alpha.value
        b = laplace_scale(epsilon=eps, sensitivity=delta)
        self.bound = laplace_accuracy(eps, delta, alpha)
        noise = b * self._unit
        self.exceeded = float(np.mean(np.abs(noise) >= self.bound))
        hist, theory = noise_frames({"Laplace": noise}, epsilon=eps, sensitivity=delta, true_value=0.0,
                                    n_scales=max(6.0, 1.25 * np.log(1 / alpha)))
        self.summary.value = (
            f"<b>a = b·ln(1/α) = {b:.3g} × {np.log(1 / alpha):.3g} = {self.bound:.3g}</b>: with probability "
            f"{1 - alpha:.1%} a release is within ±{self.bound:.3g} of the truth · check: "
            f"{self.exceeded:.2%} of {self.n_samples:,} draws fell at or beyond ±a (α = {alpha:.2%}) · "
            f"to halve the bound, spend ε = {epsilon_for_accuracy(self.bound / 2, delta, alpha):.3g}")
        self._draw(accuracy_chart(hist, theory, epsilon=eps, sensitivity=delta, alpha=alpha,
                                  exceeded=self.exceeded))


class PrivacyLossExplorer(Explorer):
    """The privacy-loss picture on two neighbouring datasets, with an empirical audit.

    D has true answer ``value``; its neighbour D′ differs by one person, which moves the answer
    by the sensitivity Δ (the worst case). The checkbox ``forget_sensitivity`` simulates a
    common bug: noise calibrated to Δ = 1 whatever the true Δ, so the loss leaves the ±ε band
    and the audit (:func:`~dpexplore.audit.privacy_loss`) catches it.
    """

    def __init__(self, value: float, *, epsilon: float = 1.0, sensitivity: int = 1,
                 n_samples: int = 100_000, random_state: int = 0):
        self.value = float(value)
        self.n_samples = int(n_samples)
        self.random_state = random_state
        self.epsilon = log_slider(epsilon, "claimed ε")
        self.sensitivity = widgets.IntSlider(value=sensitivity, min=1, max=5, description="sensitivity Δ",
                                             continuous_update=False, style=STYLE, layout=LAYOUT)
        self.bug = widgets.Checkbox(value=False, description="bug: noise for Δ = 1", indent=False)
        self._build([self.epsilon, self.sensitivity, self.bug])

    def audit(self):
        """Audit the mechanism as currently configured on (D, D′) (batched Laplace draws)."""
        eps, delta = self.epsilon.value, self.sensitivity.value
        noise_delta = 1 if self.bug.value else delta

        def mechanism(data: float, rng: np.random.Generator, n: int) -> np.ndarray:
            return laplace(np.full(n, data), epsilon=eps, sensitivity=noise_delta, random_state=rng)

        b = noise_delta / eps
        lo, hi = self.value - 3 * b, self.value + delta + 3 * b
        edges = np.linspace(lo, hi, 25)
        return privacy_loss(mechanism, self.value, self.value + delta, n_samples=self.n_samples,
                            bins=edges, batched=True, random_state=self.random_state)

    def update(self, change: Any = None) -> None:
        """Redraw: both output densities, the exact loss, and the audit's per-bin estimate."""
        eps, delta = self.epsilon.value, self.sensitivity.value
        noise_delta = 1 if self.bug.value else delta
        self.densities, self.loss = privacy_loss_frames(self.value, self.value + delta, epsilon=eps,
                                                        sensitivity=delta, noise_sensitivity=noise_delta)
        self.result = self.audit()
        self.points = audit_points(self.result)
        verdict = ("<span style='color:#c00'><b>contradicts</b></span>" if self.result.violates(eps)
                   else "<span style='color:#080'>is consistent with</span>")
        self.summary.value = (
            f"exact worst-case loss {delta / (noise_delta / eps):.3g} · audit ({self.n_samples:,} draws per "
            f"dataset): estimate ε̂ = {self.result.epsilon_hat:.3g}, {self.result.confidence:.0%} lower "
            f"bound {self.result.epsilon_lower:.3g}, which {verdict} the claimed ε = {eps:.3g}")
        self._draw(privacy_loss_chart(self.densities, self.loss, epsilon=eps, audit=self.points))


class ExponentialExplorer(Explorer):
    """The exponential mechanism picking the most common category of an attribute.

    Utility u(D, c) = number of records with category c (sensitivity Δu = 1). The candidates
    are the attribute's **public** categories from the schema (also those nobody has), the
    utilities are counted once per attribute when the explorer is built, and the probability
    curves over a grid of ε are precomputed; a slider move only recomputes the bars.
    """

    def __init__(self, frame: pd.DataFrame, schema: Schema, attributes: Sequence[str], *,
                 epsilon: float = 0.5, epsilon_grid: Sequence[float] | None = None, random_state: int = 0):
        attributes = _check_categorical(frame, schema, attributes)
        self.random_state = random_state
        grid = np.logspace(-2, 1, 41) if epsilon_grid is None else np.asarray(epsilon_grid, dtype=float)
        self.utilities: dict[str, pd.Series] = {}
        self.curves: dict[str, pd.DataFrame] = {}
        for name in attributes:  # ε-independent: counts and the whole probability-vs-ε frame
            cats = list(schema[name].categories)
            self.utilities[name] = frame[name].astype(str).value_counts().reindex(cats, fill_value=0).astype(float)
            self.curves[name] = exponential_frame(cats, self.utilities[name].to_numpy(), grid)
        self._labels = {name: curve_labels(c) for name, c in self.curves.items()}   # the curves' names
        self.attribute = widgets.Dropdown(options=attributes, value=attributes[0], description="attribute",
                                          style=STYLE, layout=LAYOUT)
        self.epsilon = log_slider(epsilon, "ε (selection)", lo=-2, hi=1)
        self._build([self.attribute, self.epsilon])

    def update(self, change: Any = None) -> None:
        """Redraw: exact probabilities at the current ε; one private draw for illustration."""
        u = self.utilities[self.attribute.value]
        eps = self.epsilon.value
        self.current = exponential_frame(list(u.index), u.to_numpy(), [eps])
        pick = exponential(u.to_numpy(), epsilon=eps, sensitivity=1.0,
                           random_state=np.random.default_rng(self.random_state))
        best = u.index[int(np.argmax(u.to_numpy()))]
        p_best = exponential_probabilities(u.to_numpy(), epsilon=eps, sensitivity=1.0)[int(np.argmax(u.to_numpy()))]
        self.summary.value = (
            f"true most common: <b>{html.escape(best)}</b> (count {int(u.max())}, not private) · "
            f"P[the mechanism picks it] = {p_best:.3f} · one private draw picked "
            f"<b>{html.escape(u.index[pick])}</b>")
        self._draw(exponential_chart(self.current, self.curves[self.attribute.value],
                                     title=f"Most common {self.attribute.value}: selection probabilities",
                                     labels=self._labels[self.attribute.value]))


class BudgetExplorer(Explorer):
    """Split a total ε over three private questions and see where it went.

    The questions (all on ``frame``): the number of records (Laplace, Δ = 1); the most common
    value of ``category`` (exponential mechanism, Δu = 1); the histogram of ``numeric`` at one
    taxonomy depth (Laplace on each bin: the bins hold disjoint records, so the accountant's
    ``parallel`` scope charges their ε once). Each share slider is a weight; a share of 0 skips
    the question, and the "keep for later" share stays unspent.
    """

    def __init__(self, frame: pd.DataFrame, schema: Schema, *, category: str = "education",
                 numeric: str = "age", depth: int = 2, total: float = 1.0, random_state: int = 0):
        schema.check_columns([category, numeric], "attributes")
        _check_categorical(frame, schema, [category])
        self.random_state = random_state
        self.category, self.numeric = category, numeric
        # ε-independent: true answers (kept to compare, never released) and the public domains
        self._n = len(frame)
        cats = list(schema[category].categories)
        self._cat_counts = frame[category].astype(str).value_counts().reindex(cats, fill_value=0)
        taxonomy = schema[numeric].taxonomy
        self._bins = taxonomy.labels(depth)
        codes = taxonomy.node_codes(taxonomy.leaf_codes(frame[numeric]), depth)
        self._hist = np.bincount(codes, minlength=len(self._bins))
        self.total = log_slider(total, "total ε", lo=-1, hi=1)
        self.shares = {
            "record count": widgets.FloatSlider(value=0.1, min=0, max=1, step=0.05, description="share: count"),
            f"most common {category}": widgets.FloatSlider(value=0.3, min=0, max=1, step=0.05,
                                                           description=f"share: {category}"),
            f"{numeric} histogram": widgets.FloatSlider(value=0.5, min=0, max=1, step=0.05,
                                                        description=f"share: {numeric} hist."),
            "keep for later": widgets.FloatSlider(value=0.1, min=0, max=1, step=0.05,
                                                  description="share: keep"),
        }
        for s in self.shares.values():
            s.style, s.layout, s.continuous_update = STYLE, LAYOUT, False
        self.results = widgets.HTML()
        self._build([self.total] + list(self.shares.values()))
        self.widget.children = self.widget.children + (self.results,)

    def run(self) -> BudgetAccountant:
        """Answer the three questions with the current split; every spend goes through a ledger."""
        rng = np.random.default_rng(self.random_state)
        acc = BudgetAccountant(self.total.value)
        names = list(self.shares)
        weights = np.array([self.shares[k].value for k in names])
        self.answers = {}
        if weights.sum() <= 0:
            return acc
        positive = [k for k, w in zip(names, weights) if w > 0]
        amounts = dict.fromkeys(names, 0.0)
        amounts.update(zip(positive, acc.split([self.shares[k].value for k in positive])))
        eps = amounts["record count"]
        if eps > 0:
            self.answers["record count"] = (laplace(self._n, epsilon=acc.spend(eps, "record count"),
                                                    random_state=rng), self._n)
        label = f"most common {self.category}"
        if amounts[label] > 0:
            u = self._cat_counts.to_numpy(dtype=float)
            pick = exponential(u, epsilon=acc.spend(amounts[label], label), sensitivity=1.0, random_state=rng)
            self.answers[label] = (self._cat_counts.index[pick], self._cat_counts.idxmax())
        label = f"{self.numeric} histogram"
        if amounts[label] > 0:
            noisy = []
            with acc.parallel(label):  # disjoint bins: parallel composition (Dwork–Roth §3.5)
                for name, count in zip(self._bins, self._hist):
                    noisy.append(laplace(int(count), epsilon=acc.spend(amounts[label], f"bin {name}"),
                                         random_state=rng))
            self.answers[label] = (np.round(noisy).astype(int), self._hist)
        return acc

    def update(self, change: Any = None) -> None:
        """Redraw: rerun the three questions, chart the accountant's summary."""
        self.accountant = self.run()
        summary = self.accountant.summary()
        self.summary.value = (f"spent {self.accountant.spent:.4g} of {self.accountant.total:.4g} "
                              f"({self.accountant.n_spends} spends in the ledger, "
                              f"remaining {self.accountant.remaining:.3g})")
        rows = []
        for label, (private, true) in self.answers.items():
            if isinstance(private, np.ndarray):
                private = ", ".join(map(str, private))
                true = ", ".join(map(str, true))
            elif isinstance(private, float):
                private = f"{private:,.1f}"
            rows.append(f"<tr><td>{html.escape(label)}</td><td>{html.escape(str(private))}</td>"
                        f"<td style='color:#888'>{html.escape(str(true))}</td></tr>")
        self.results.value = ("<table><tr><th>question</th><th>private answer</th>"
                              "<th>true answer (not private)</th></tr>" + "".join(rows) + "</table>")
        self._draw(budget_chart(summary, self.accountant.total))
