"""Charts for private ROC curves and private feature selection (notebook 05).

Pure functions: tidy DataFrames in, altair Charts out. Nothing here computes privacy; the data
come from :mod:`dpexplore.evaluate.roc` and :mod:`dpexplore.select.stoddard`.
"""
from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from ._accessible import CONSISTENT, REFUTED, describe, fmt, spread

__all__ = ["roc_chart", "auc_error_chart", "threshold_rug_chart", "prefix_sum_chart",
           "audit_chart", "ptt_split_chart", "selection_accuracy_chart", "selection_quality_chart",
           "stack_curves", "feature_selection_bars"]

TRUE_CURVE = "true ROC (not private)"
_PALETTE = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#ff9da6", "#9d755d"]


def stack_curves(curves: dict, true_curve: pd.DataFrame | None = None) -> pd.DataFrame:
    """Tidy frame (curve, draw, fpr, tpr) from {name: [curve, ...]} and an optional true curve."""
    parts = []
    if true_curve is not None:
        parts.append(true_curve[["fpr", "tpr"]].assign(curve=TRUE_CURVE, draw=0))
    for name, draws in curves.items():
        for i, c in enumerate(draws):
            parts.append(c[["fpr", "tpr"]].assign(curve=name, draw=i))
    return pd.concat(parts, ignore_index=True)


def roc_chart(tidy: pd.DataFrame, *, title: str = "True vs private ROC curves",
              width: int = 360, height: int = 320) -> alt.Chart:
    """ROC curves from a tidy frame with columns curve, draw, fpr, tpr (see :func:`stack_curves`).

    The true curve is drawn thick and black; each private draw is a thin coloured line, so the
    spread of the draws shows the noise. One legend names them all (the true curve included).
    """
    data = tidy.assign(key=tidy["curve"].astype(str) + " #" + tidy["draw"].astype(str),
                       order=tidy.groupby(["curve", "draw"]).cumcount())
    names = list(dict.fromkeys(data["curve"].astype(str)))
    domain = ([TRUE_CURVE] if TRUE_CURVE in names else []) + [c for c in names if c != TRUE_CURVE]
    colors = (["black"] if TRUE_CURVE in names else []) + _PALETTE[: len(domain) - (TRUE_CURVE in names)]
    color = alt.Color("curve:N", title=None, scale=alt.Scale(domain=domain, range=colors),
                      legend=alt.Legend(orient="bottom", direction="vertical", labelLimit=400))
    is_true = alt.datum.curve == TRUE_CURVE
    base = alt.Chart(data).encode(
        x=alt.X("fpr:Q", title="false positive rate", scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("tpr:Q", title="true positive rate", scale=alt.Scale(domain=[0, 1])),
        order=alt.Order("order:Q"), detail=alt.Detail("key:N"))
    private = base.transform_filter(~is_true).mark_line(opacity=0.55, strokeWidth=1.3).encode(color=color)
    true = base.transform_filter(is_true).mark_line(strokeWidth=2.5).encode(color=color)
    diagonal = alt.Chart(pd.DataFrame({"fpr": [0, 1], "tpr": [0, 1]})).mark_line(
        color="lightgray", strokeDash=[4, 4]).encode(x=alt.X("fpr:Q"), y=alt.Y("tpr:Q"))
    n_draws = data.loc[data["curve"] != TRUE_CURVE, "key"].nunique()
    return describe(
        (diagonal + private + true).properties(title=title, width=width, height=height),
        f"{title}: ROC curves, true positive rate against false positive rate"
        + ("; the true curve thick and black" if TRUE_CURVE in names else "")
        + f"; {n_draws} private draws ({', '.join(c for c in domain if c != TRUE_CURVE)}) as thin coloured lines; "
        "the diagonal is a random classifier.",
        "Take-away: the spread of the private draws around the true curve shows the noise; curves "
        "closer to the top-left corner classify better.")


def auc_error_chart(errors: pd.DataFrame, *, title: str = "AUC error against ε",
                    width: int = 420, height: int = 280) -> alt.Chart:
    """Median |ΔAUC| with an interquartile band per method against ε (log axes).

    ``errors``: tidy rows (method, epsilon, error), one per repetition.
    """
    summary = (errors.groupby(["method", "epsilon"])["error"]
               .quantile([0.25, 0.5, 0.75]).unstack().reset_index()
               .rename(columns={0.25: "q25", 0.5: "median", 0.75: "q75"}))
    x = alt.X("epsilon:Q", scale=alt.Scale(type="log"), title="total ε",
              axis=alt.Axis(values=sorted(summary["epsilon"].unique().tolist()), format="~g", labelOverlap="greedy"))
    color = alt.Color("method:N", title=None)
    band = alt.Chart(summary).mark_area(opacity=0.18).encode(
        x=x, y=alt.Y("q25:Q", title="|AUC error| (median, IQR)"), y2=alt.Y2("q75:Q"), color=color)
    line = alt.Chart(summary).mark_line(point=True).encode(
        x=x, y=alt.Y("median:Q"), color=color,
        tooltip=[alt.Tooltip("method"), alt.Tooltip("epsilon"), alt.Tooltip("median:Q", format=".3f")])
    last = summary[summary["epsilon"] == summary["epsilon"].max()]
    return describe(
        (band + line).properties(title=title, width=width, height=height),
        f"{title}: lines of the median absolute AUC error against the total ε (log axis), one per method "
        f"({', '.join(map(str, summary['method'].unique()))}), each with its inter-quartile band.",
        f"Take-away: the error shrinks as ε grows; at ε = {fmt(summary['epsilon'].max())} the medians are "
        + ", ".join(f"{m} {v:.3f}" for m, v in zip(last["method"], last["median"])) + ".")


def threshold_rug_chart(scores: np.ndarray, thresholds: pd.DataFrame, *, bins: int = 40,
                        title: str = "Where the thresholds fall (scores shown non-privately)",
                        width: int = 420, height: int = 200) -> alt.Chart:
    """Histogram of the scores with each strategy's thresholds as a rug below it.

    ``thresholds``: rows (strategy, threshold). The histogram itself is not private: it is here
    to teach why skewed scores favour data-dependent thresholds.
    """
    counts, edges = np.histogram(np.asarray(scores, dtype=float), bins=bins)
    hist = pd.DataFrame({"left": edges[:-1], "right": edges[1:], "count": counts})
    bars = alt.Chart(hist).mark_rect(color="#bbb").encode(
        x=alt.X("left:Q", title="score"), x2=alt.X2("right:Q"), y=alt.Y("count:Q", title="records"))
    rug = alt.Chart(thresholds).mark_tick(thickness=1.2, size=14).encode(
        x=alt.X("threshold:Q"), y=alt.Y("strategy:N", title=None), color=alt.Color("strategy:N", legend=None))
    return describe(
        alt.vconcat(bars.properties(width=width, height=height), rug.properties(width=width), title=title),
        f"{title}: a histogram of the classifier's scores (not private) above one row of tick marks per "
        f"threshold strategy ({', '.join(map(str, thresholds['strategy'].unique()))}).",
        "Take-away: fixed-space thresholds sit evenly across the score range while data-dependent ones "
        "follow where the scores are dense.")


def prefix_sum_chart(sums: pd.DataFrame, *, title: str = "Noisy prefix sums before and after isotonic regression",
                     width: int = 420, height: int = 240) -> alt.Chart:
    """Step plot of prefix sums against the bin index; ``sums`` rows (bin, value, series)."""
    series = list(dict.fromkeys(sums["series"]))
    return describe(
        alt.Chart(sums).mark_line(interpolate="step-after").encode(
            x=alt.X("bin:Q", title="bin (from the highest threshold down)"),
            y=alt.Y("value:Q", title="positives with score above the threshold"),
            color=alt.Color("series:N", title=None, sort=series),
            strokeDash=alt.StrokeDash("series:N", title=None, sort=series),
        ).properties(title=title, width=width, height=height),
        f"{title}: step lines of the number of positives above each threshold against the bin, for "
        f"{', '.join(map(str, series))} (colour and dash pattern tell them apart).",
        "Take-away: noisy prefix sums can go down, which no true count does; isotonic regression makes "
        "them increase again and pulls them back towards the truth.")


def audit_chart(table: pd.DataFrame, *, title: str = "Measured privacy loss vs the claimed ε",
                width: int = 360, height: int = 200, item: str = "selector") -> alt.Chart:
    """Bars of each audited mechanism's lower bound on ε, with the claimed ε as a dashed rule.

    ``table``: the output of :func:`dpexplore.select.stoddard.audit_selectors`, or any table with
    ``epsilon_lower``, ``epsilon_hat``, ``violates``, ``claimed_epsilon`` and the column ``item``
    naming each bar (``"selector"``, ``"variant"``, …).
    """
    data = table.assign(verdict=np.where(table["violates"], "claim refuted", "consistent with claim"),
                        mark=np.where(table["violates"], "✗ refuted", "✓ consistent"))
    # colour-blind-safe verdict colours, and the verdict written at the end of each bar as a second cue
    y = alt.Y(f"{item}:N", sort=None, title=None)
    bars = alt.Chart(data).mark_bar().encode(
        y=y, x=alt.X("epsilon_lower:Q", title="lower confidence bound on the privacy loss ε"),
        color=alt.Color("verdict:N", scale=alt.Scale(domain=["claim refuted", "consistent with claim"],
                                                     range=[REFUTED, CONSISTENT]), title=None),
        tooltip=[alt.Tooltip(f"{item}:N"), alt.Tooltip("epsilon_lower:Q", format=".2f"),
                 alt.Tooltip("epsilon_hat:Q", format=".2f")])
    words = alt.Chart(data).mark_text(align="left", dx=4, fontSize=11, fontWeight="bold").encode(
        y=y, x=alt.X("epsilon_lower:Q"), text=alt.Text("mark:N"),
        color=alt.Color("verdict:N", legend=None, scale=alt.Scale(domain=["claim refuted", "consistent with claim"],
                                                                  range=[REFUTED, CONSISTENT])))
    claimed = alt.Chart(data.head(1)).mark_rule(color="black", strokeDash=[4, 3]).encode(
        x=alt.X("claimed_epsilon:Q"))
    refuted = list(data.loc[data["violates"], item])
    return describe(
        (bars + words + claimed).properties(title=title, width=width, height=height),
        f"{title}: one bar per {item}, the audit's lower confidence bound on its privacy loss, with the "
        f"claimed ε = {fmt(data['claimed_epsilon'].iloc[0])} as a dashed line; each bar is labelled "
        "refuted or consistent.",
        "Take-away: " + (f"the audit refutes the claim of {', '.join(map(str, refuted))}: its measured loss "
                         "exceeds the claimed ε." if refuted else f"no {item}'s measured loss exceeds the claimed ε."))


def ptt_split_chart(frequencies: pd.DataFrame, *, title: str = "PTT output frequencies on neighbours",
                    width: int = 300, height: int = 200) -> alt.Chart:
    """Grouped bars of each output pattern's frequency on D and D'; rows (output, dataset, frequency)."""
    return describe(
        alt.Chart(frequencies).mark_bar().encode(
            x=alt.X("dataset:N", title=None), y=alt.Y("frequency:Q", title="frequency"),
            color=alt.Color("dataset:N", title=None), column=alt.Column("output:N", title="output"),
            tooltip=[alt.Tooltip("output"), alt.Tooltip("dataset"), alt.Tooltip("frequency:Q", format=".3f")],
        ).properties(title=title, width=width // 4, height=height),
        f"{title}: grouped bars, one group per output pattern, of how often the mechanism produced it on "
        "a dataset and on its neighbour (the bars are labelled by dataset on the x axis).",
        "Take-away: an output that appears on one dataset and never on its neighbour breaks any finite ε.")


def selection_accuracy_chart(results: pd.DataFrame, references: pd.DataFrame | None = None, *,
                             title: str = "Test accuracy after feature selection",
                             width: int = 420, height: int = 260) -> alt.Chart:
    """Accuracy against ε per selection method (median over repetitions), with reference rules.

    ``results``: rows (method, epsilon, accuracy); ``references``: rows (reference, accuracy),
    e.g. "all features (not private)" and "majority class".
    """
    summary = results.groupby(["method", "epsilon"], as_index=False)["accuracy"].median()
    chart = alt.Chart(summary).mark_line(point=True).encode(
        x=alt.X("epsilon:Q", scale=alt.Scale(type="log"), title="ε for feature selection",
                axis=alt.Axis(values=sorted(summary["epsilon"].unique().tolist()), format="~g", labelOverlap="greedy")),
        y=alt.Y("accuracy:Q", scale=alt.Scale(zero=False), title="test accuracy (median)"),
        color=alt.Color("method:N", title=None))
    refs = ""
    if references is not None and len(references):
        rules = alt.Chart(references).mark_rule(strokeDash=[5, 3]).encode(
            y=alt.Y("accuracy:Q"), color=alt.ColorValue("gray"),
            tooltip=[alt.Tooltip("reference"), alt.Tooltip("accuracy")])
        # labels sit on their lines, moved apart when two references are close (13 px at least)
        lo = min(float(summary["accuracy"].min()), float(references["accuracy"].min()))
        hi = max(float(summary["accuracy"].max()), float(references["accuracy"].max()))
        placed = references.assign(label_y=spread(references["accuracy"], 13 * (hi - lo) / height))
        labels = alt.Chart(placed).mark_text(align="left", dx=4, dy=-6, color="#555555").encode(
            y=alt.Y("label_y:Q"), x=alt.XValue(0), text=alt.Text("reference:N"))
        chart = chart + rules + labels
        refs = "; references as grey dashed lines: " + ", ".join(
            f"{r} {a:.3f}" for r, a in zip(references["reference"], references["accuracy"]))
    best = summary.loc[summary["accuracy"].idxmax()]
    return describe(
        chart.properties(title=title, width=width, height=height),
        f"{title}: lines of the median test accuracy against the ε for feature selection (log axis), one per "
        f"method ({', '.join(map(str, summary['method'].unique()))}){refs}.",
        f"Take-away: the best median accuracy is {best['accuracy']:.3f} ({best['method']} at ε = "
        f"{fmt(best['epsilon'])}); more ε brings the private selections closer to the references.")


def selection_quality_chart(quality: pd.DataFrame, *, title: str = "How close is the private selection to F_τ?",
                            width: int = 420, height: int = 260) -> alt.Chart:
    """F1 of the selected set against the exact F_τ as τ varies (Stoddard et al. Fig. 3 style).

    ``quality``: rows (method, tau, f1, n_exact), one per repetition; median per (method, τ) is
    drawn, and a method whose name contains "NOT DP" is dashed.
    """
    summary = quality.groupby(["method", "tau"], as_index=False).agg(
        f1=("f1", "median"), n_exact=("n_exact", "first"))
    summary["sound"] = ~summary["method"].str.contains("NOT DP")
    return describe(alt.Chart(summary).mark_line(point=True).encode(
        x=alt.X("tau:Q", title="τ (total count, records)"),
        y=alt.Y("f1:Q", title="F1 against the exact F_τ (median)", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("method:N", title=None),
        strokeDash=alt.StrokeDash("sound:N", legend=None,
                                  scale=alt.Scale(domain=[True, False], range=[[1, 0], [6, 3]])),
        tooltip=[alt.Tooltip("method"), alt.Tooltip("tau"), alt.Tooltip("f1:Q", format=".2f"),
                 alt.Tooltip("n_exact:Q", title="|F_τ|")],
    ).properties(title=title, width=width, height=height),
        f"{title}: lines of the median F1 score of each method's selected set against the exact set F_τ, "
        f"against τ, for {', '.join(map(str, summary['method'].unique()))}; methods that are not "
        "differentially private are dashed.",
        "Take-away: a higher F1 means the private selection is closer to the exact one; it improves as "
        "τ moves away from the scores of the features.")


def feature_selection_bars(references: dict, private_accuracy: np.ndarray, private_kept: np.ndarray,
                           exact_kept: int, *, n_features: int, title: str = "Test accuracy") -> alt.HConcatChart:
    """Accuracy bars (references + the mean of the private draws, each draw a tick, their range a
    rule) next to how many features the private draws and the exact rule kept.

    ``references``: {label: accuracy}; ``private_accuracy``/``private_kept``: one value per draw.
    """
    private = "private selection (mean of draws)"
    acc = np.asarray(private_accuracy, dtype=float)
    kept = np.asarray(private_kept, dtype=float)
    order = list(references) + [private]
    bars = pd.DataFrame({"model": order, "accuracy": list(references.values()) + [float(acc.mean())]})
    draws = pd.DataFrame({"model": private, "accuracy": acc, "kept": kept})
    spread = pd.DataFrame({"model": [private], "low": [acc.min()], "high": [acc.max()]})
    y = alt.Y("model:N", sort=order, title=None, axis=alt.Axis(labelLimit=260))
    x_scale = alt.Scale(domain=[0.5, 1.0], clamp=True)
    accuracy = alt.layer(
        alt.Chart(bars).mark_bar().encode(
            x=alt.X("accuracy:Q", scale=x_scale, title="test accuracy"), y=y,
            color=alt.Color("model:N", legend=None, sort=order),
            tooltip=[alt.Tooltip("model"), alt.Tooltip("accuracy:Q", format=".3f")]),
        alt.Chart(spread).mark_rule(color="black", strokeWidth=2).encode(x=alt.X("low:Q"), x2=alt.X2("high:Q"), y=y),
        alt.Chart(draws).mark_tick(color="black", thickness=1.5, size=12).encode(
            x=alt.X("accuracy:Q", scale=x_scale), y=y, tooltip=[alt.Tooltip("accuracy:Q", format=".3f")]),
    ).properties(width=320, height=alt.Step(26), title=title)
    kept_rows = pd.DataFrame({"selection": ["private draws", "exact rule"], "kept": [float(kept.mean()), exact_kept]})
    ky = alt.Y("selection:N", title=None, sort=["private draws", "exact rule"])
    k_scale = alt.Scale(domain=[0, max(1, n_features)])
    kept_chart = alt.layer(
        alt.Chart(kept_rows).mark_bar(color="#9ecae9").encode(
            x=alt.X("kept:Q", scale=k_scale, title=f"features kept (of {n_features})"), y=ky,
            tooltip=[alt.Tooltip("kept:Q", format=".1f")]),
        alt.Chart(draws.assign(selection="private draws")).mark_tick(color="black", thickness=1.5, size=12).encode(
            x=alt.X("kept:Q", scale=k_scale), y=ky),
    ).properties(width=200, height=alt.Step(26), title="Features kept")
    refs = ", ".join(f"{k} {v:.3f}" for k, v in references.items())
    return describe(
        alt.hconcat(accuracy, kept_chart),
        f"Left: {title}: bars of the test accuracy of {refs} and the mean of {len(acc)} private selections "
        f"({acc.mean():.3f}; each draw a tick, their range {acc.min():.3f} to {acc.max():.3f}). Right: how many "
        f"of {n_features} features the private draws (mean {kept.mean():.1f}) and the exact rule ({exact_kept}) kept.",
        "Take-away: the private selection's accuracy varies from draw to draw; compare its mean with the "
        "references.")
