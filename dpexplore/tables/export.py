"""The one-page summary of a release and its export to files (not megabytes inside the HTML).

The summary is the file meant to be shared: it holds released values and public facts only. The
utility measured on the held-out rows is not private; it goes to its own file, labelled so in
its name and its text, rounded (:data:`UTILITY_DECIMALS`).
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from .._validation import format_number
from ..domain import Schema
from .draft import schema_leaks
from .release import ReleaseResult

__all__ = ["UTILITY_DECIMALS", "ledger_table", "markdown_frame", "summary_markdown", "utility_markdown",
           "majority_verdict",
           "synthetic_csv", "rounded_to_resolution", "resolution_decimals", "export_release"]

#: decimals of the non-private test errors written to a file. An error is k/n for an unknown
#: held-out size n; for every n > 100 some k/n lies within 1/(2n) < 0.005 of any two-decimal
#: figure, so the rounded figures are consistent with every held-out size above 100 and give back
#: no exact count (the exact errors 0.1321 and 0.6226 did: 7/53 and 33/53). The rounding is the
#: same for every table: a rule that depended on the test set's size would itself read it.
UTILITY_DECIMALS = 2

_SOURCE_TEXT = {"modelled": "modelled by the method (carries the relation to the target)",
                "marginal": ("drawn from a paid DP marginal: two-way, given a privately chosen parent (the target or "
                             "another column), when ε allows the choice, else one-way"),
                "uniform": "uniform over the declared domain: pure filler, carries no information",
                "computed": "computed from its source column by its declared public rule (no ε)",
                "left out": "left out of the synthetic table"}


def resolution_decimals(resolution: float) -> int:
    """Decimals that show a value of a numeric column of public ``resolution`` (the spacing of its
    released values, :class:`~dpexplore.domain.Attribute`): the fewest d with 10⁻ᵈ ≤ resolution."""
    return max(0, math.ceil(-math.log10(resolution) - 1e-12))


def rounded_to_resolution(synthetic: pd.DataFrame, schema: Schema) -> pd.DataFrame:
    """A copy whose decimal columns are rounded to the decimals of their public resolution
    (post-processing of released values): 83.4521, not 83.45213317871094."""
    out = synthetic.copy()
    for name in schema.numeric:
        if name in out.columns and pd.api.types.is_float_dtype(out[name]):
            out[name] = out[name].round(resolution_decimals(schema[name].resolution))
    return out


def synthetic_csv(result: ReleaseResult) -> bytes:
    """The synthetic table as UTF-8 CSV bytes, decimal columns written with the digits of their
    public resolution (:func:`rounded_to_resolution`)."""
    return rounded_to_resolution(result.synthetic, result.schema).to_csv(index=False).encode("utf-8")


def markdown_frame(frame: pd.DataFrame) -> str:
    """A DataFrame as a Markdown table: floats with 4 significant digits, NaN as an empty cell.

    >>> print(markdown_frame(pd.DataFrame({"method": ["a"], "tvd": [0.12345], "n": [3]})))
    | method | tvd | n |
    |---|---|---|
    | a | 0.1235 | 3 |
    """
    cols = list(frame.columns)
    lines = ["| " + " | ".join(map(str, cols)) + " |", "|" + "---|" * len(cols)]
    for row in frame.itertuples(index=False):
        cells = ["" if isinstance(v, float) and np.isnan(v) else f"{v:.4g}" if isinstance(v, float) else str(v)
                 for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def ledger_table(ledger: pd.DataFrame) -> pd.DataFrame:
    """The ledger per label (methods that spend per split record hundreds of rows): label,
    number of spends, ε charged; a last row with the total."""
    if ledger.empty:
        return pd.DataFrame({"spent on": ["total"], "spends": [0], "ε charged": [0.0]})
    g = ledger.groupby("label", sort=False)["charged"]
    out = pd.DataFrame({"spent on": g.size().index, "spends": g.size().to_numpy(), "ε charged": g.sum().to_numpy()})
    total = pd.DataFrame({"spent on": ["total"], "spends": [len(ledger)], "ε charged": [ledger["charged"].sum()]})
    return pd.concat([out, total], ignore_index=True)


#: how many parts of a scope path the exported ledger shows
SCOPE_PARTS = 3


def ledger_csv_table(ledger: pd.DataFrame) -> pd.DataFrame:
    """The ledger as exported: spends with the same label at the same scope depth in one row.

    A top-down partition (DiffMulti, DiffGen) spends once per node and per split, in
    ``parallel`` scopes whose paths name every ancestor: thousands of rows with paths of hundreds
    of characters. Here each (label, depth) group is one row: ``scope`` is the part of the path
    its spends share (its first :data:`SCOPE_PARTS` parts), ``spends`` how many there were, ``epsilon`` the largest ε one of them asked
    for, ``charged`` what they added to the total together (the ledger's total is unchanged). A
    spend alone in its group keeps its full scope. ``result.ledger`` keeps one row per spend.

    >>> import pandas as pd
    >>> ledger = pd.DataFrame({"label": ["count", "split", "split"],
    ...                        "scope": ["", "tree/node 1", "tree/node 2"],
    ...                        "epsilon": [0.1, 0.2, 0.2], "charged": [0.1, 0.2, 0.0]})
    >>> ledger_csv_table(ledger)
       label scope  spends  epsilon  charged
    0  count             1      0.1      0.1
    1  split  tree       2      0.2      0.2
    """
    columns = ["label", "scope", "spends", "epsilon", "charged"]
    if ledger.empty:
        return pd.DataFrame(columns=columns)
    parts = ledger["scope"].fillna("").map(lambda path: path.split("/") if path else [])
    depth = parts.map(len)
    rows = []
    for (label, _), group in ledger.groupby([ledger["label"], depth], sort=False):
        paths = parts.loc[group.index].tolist()
        shared = paths[0]
        for path in paths[1:]:
            k = 0
            while k < min(len(shared), len(path)) and shared[k] == path[k]:
                k += 1
            shared = shared[:k]
        if len(shared) > SCOPE_PARTS:                       # deep in a tree: the top of the path
            shared = shared[:SCOPE_PARTS] + [f"… ({len(shared) - SCOPE_PARTS} levels)"]
        rows.append({"label": label, "scope": "/".join(shared), "spends": len(group),
                     "epsilon": float(group["epsilon"].max()), "charged": float(group["charged"].sum())})
    return pd.DataFrame(rows, columns=columns)


def _domain(a) -> str:
    if a.source is not None and a.partial:   # a rule column: fixed by its source where the rule maps it
        return f"fixed by {a.source} where {_rule(a.rule)}; else one of {', '.join(a.free_labels)} (no ε for the fixed rows)"
    if a.source is not None:        # a derived column: its public rule (Attribute.derived)
        return f"public function of {a.source}: {_rule(a.rule)}"
    if a.kind == "categorical":
        cats = list(a.categories)
        return ", ".join(cats[:8]) + (f", … ({len(cats)} values)" if len(cats) > 8 else "")
    leaves = list(a.taxonomy.leaves) if a.taxonomy is not None else []
    bins = f"; bins {' · '.join(map(str, leaves[:10]))}{' · …' if len(leaves) > 10 else ''}" if leaves else ""
    return f"[{a.lower:g}, {a.upper:g}]{' integers' if a.integer else ''}{bins}"


def _rule(rule: dict) -> str:
    """A derived column's rule as the summary shows it: "[17, 30) young · … · [65, 90] old" or
    "north → N · …" (at most 8 parts)."""
    if "edges" in rule:
        edges, labels = rule["edges"], rule["labels"]
        parts = [f"[{format_number(lo)}, {format_number(hi)}{']' if i == len(labels) - 1 else ')'} {label}"
                 for i, (lo, hi, label) in enumerate(zip(edges, edges[1:], labels))]
    else:
        parts = [f"{category} → {label}" for category, label in rule["mapping"].items()]
    return " · ".join(parts[:8]) + (f" · … ({len(parts)} in all)" if len(parts) > 8 else "")


def _budget_line(result: ReleaseResult) -> str:
    """The ε asked for and the ε the ledger shows spent; when less was spent, why."""
    spent = float(result.ledger["charged"].sum()) if len(result.ledger) else 0.0
    line = (f"- Method: **{result.method}**, budget **ε = {result.epsilon:.3g}**, spent **ε = {spent:.4g}** "
            "(the ledger's total)")
    unused = result.epsilon - spent
    if unused <= 1e-9 * result.epsilon:
        return line
    share = result.epsilon * result.marginal_share
    src = result.sources
    no_marginal = not len(src) or not (src["produced by"] == "marginal").any()
    if share > 0 and no_marginal and math.isclose(unused, share, rel_tol=1e-6, abs_tol=1e-12):
        return line + (f": the share set aside for one-way marginals (ε = {share:.3g}) went unused, "
                       "as the method modelled every column")
    return line + f": ε = {unused:.3g} was left unspent"


def _sources_table(src: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """How each column was produced with its OWN ε (a one-way marginal's; 0 for filler), and a
    sentence for the modelled columns, which share the joint model's ε (spent once, not per
    column)."""
    modelled = src["produced by"] == "modelled"
    table = src.assign(**{"ε": src["ε"].astype(object)}).rename(columns={"ε": "own ε"})
    table.loc[modelled, "own ε"] = "shared"
    table = table.assign(meaning=src["produced by"].map(_SOURCE_TEXT).fillna(""))
    model_eps = src.loc[modelled, "ε"].dropna()
    amount = f" ε = {model_eps.iloc[0]:.3g}" if len(model_eps) else " ε"
    note = (f"The {int(modelled.sum())} modelled columns (target included) come from one model of them "
            f"together: they share its{amount}, spent once for all of them, not per column."
            if modelled.any() else "")
    return table, note


def summary_markdown(result: ReleaseResult, title: str = "Your data") -> str:
    """One page to share: what was released, how each synthetic column was produced, the ε
    ledger, the grid occupancy and the privacy caveats — released values and public facts only.
    The non-private utility is not in it (:func:`utility_markdown`). What the schema took from
    the data is listed: the ``leaks`` of the release, else those :func:`build_schema` recorded
    for this schema (:func:`~dpexplore.tables.draft.schema_leaks`)."""
    s = result.schema
    src = result.sources
    n_modelled = int((src["produced by"] == "modelled").sum() - 1) if len(src) else len(s.predictors)
    built = schema_leaks(s)
    leaks = list(result.leaks) or list(built or [])
    parts = [f"# {title}: differentially private release", "",
             _budget_line(result),
             f"- Target: `{s.target}` with classes {', '.join(map(str, s.classes))}",
             f"- Predictors: {len(s.predictors)} declared ({len(s.numeric)} numeric, {len(s.categorical)} "
             f"categorical), {n_modelled} modelled by the method"
             + (f"; {len(s.derived)} computed from another column (public function, no ε)"
                if s.derived else ""),
             "- What ε protects: **add/remove one record** (the table with or without any one row). "
             f"Each row was held out for testing independently with probability {result.test_fraction:g}, "
             "so one record changes the training part by at most itself",
             f"- Noise: {'exact discrete (hardened) sampler' if result.hardened else 'textbook floating-point sampler'}",
             (f"- Synthetic rows released: {len(result.synthetic)} (a public cap bounds it; no exact row count "
              "of the private table is printed: it is not covered by ε)"
              if getattr(result, "released", "synthetic table") == "synthetic table" else
              f"- Released: a classifier ({result.method}'s noisy parameters), **no synthetic table**"), ""]
    if len(src):
        table, note = _sources_table(src)
        parts += ["## How each synthetic column was produced", "", markdown_frame(table), ""]
        parts += [note, ""] if note else []
        if result.marginal_share == 0 and (src["produced by"] == "uniform").any():
            parts += ["Columns marked *uniform* are filler: give them a share of ε (marginal_share) to draw "
                      "them from a DP marginal, or drop them.", ""]
    if result.occupancy:
        o = result.occupancy
        clamped = (" (the noisy record count came out below 0 and is shown as 0: post-processing of a "
                   "released value)" if o.get("clamped") else "")
        parts += [f"- Grid: {o['cells']:,} histogram cells (grid cells × classes) for about {o['n_hat']:,.0f} training "
                  f"records{clamped}: **{o['records per cell']:.2g} records per cell** expected"
                  + (" — too fine: most cells are noise; a coarser grid (fewer bins, groups) or a larger "
                     "table helps" if o["records per cell"] < 5 else ""), ""]
    parts += ["## Budget ledger", "", markdown_frame(ledger_table(result.ledger)), ""]
    if len(result.utility):
        parts += ["The test error on the held-out rows is not in this summary: it is not private "
                  "(it is written to its own file, for the data owner only).", ""]
    rows = [{"column": n, "kind": "derived" if n in s.derived else s[n].kind, "domain": _domain(s[n])}
            for n in s.columns]
    parts += ["## Public schema", "", markdown_frame(pd.DataFrame(rows)), "",
              "Numeric values outside their declared bounds were clipped to them before the release "
              "(categorical values outside their declared lists are refused).", ""]
    if leaks:
        parts += ["## ⚠ PrivacyLeakWarning", "",
                  "These parts of the schema were read from the private data and are not covered by ε. "
                  "The guarantee holds only if they are public knowledge:", ""]
        parts += [f"- {leak}" for leak in leaks]
    elif built is not None:
        parts += ["Every bound, category and class was declared as public knowledge."]
    else:
        parts += ["The schema was given as it is (not built from a reviewed draft here): the guarantee "
                  "holds if its bounds, categories and classes were chosen without looking at the data."]
    return "\n".join(parts) + "\n"


def _rounded(x: float) -> str:
    return f"{x:.{UTILITY_DECIMALS}f}" if np.isfinite(x) else ""


def fidelity_table(fidelity: dict) -> pd.DataFrame:
    """The shape figures of a release (:attr:`ReleaseResult.fidelity`) as a table: one row per
    way (columns one at a time, pairs of columns), the mean and the largest total-variation
    distance. Empty without figures."""
    if not fidelity:
        return pd.DataFrame(columns=["compared", "mean TVD", "largest TVD"])
    return pd.DataFrame([{"compared": "each column (1-way)", "mean TVD": fidelity["tvd_1way"],
                          "largest TVD": fidelity["max_1way"]},
                         {"compared": "each pair of columns (2-way)", "mean TVD": fidelity["tvd_2way"],
                          "largest TVD": fidelity["max_2way"]}])


def majority_verdict(utility: pd.DataFrame) -> str:
    """One sentence on the release's classifier against always predicting the majority class, from
    a release's NOT PRIVATE utility table (:attr:`ReleaseResult.utility`: the release's row first,
    then the references), compared as shown: rounded to :data:`UTILITY_DECIMALS` decimals. Empty
    text when either error is missing (no held-out row, no majority-class reference).

    >>> table = pd.DataFrame({"model": ["DiffGen (ε = 1)", "majority class"], "private": [True, False],
    ...                       "error": [0.2961, 0.2662]})
    >>> majority_verdict(table).split(":")[0]
    'Below always predicting the majority class'
    """
    majority = utility.loc[utility["model"] == "majority class", "error"].astype(float)
    private = utility.loc[utility["private"].astype(bool), "error"].astype(float)
    if majority.empty or private.empty or not (np.isfinite(majority.iloc[0]) and np.isfinite(private.iloc[0])):
        return ""
    ours, floor = (round(float(e), UTILITY_DECIMALS) for e in (private.iloc[0], majority.iloc[0]))
    figures = (f"the release's classifier errs on {_rounded(ours)} of the held-out rows, the majority class "
               f"on {_rounded(floor)}")
    if ours > floor:
        return (f"Below always predicting the majority class: {figures}. Do not use this classifier to predict; "
                "a larger ε, fewer columns or more rows may give one worth using.")
    if ours == floor:
        return f"Level with always predicting the majority class: {figures}. Its predictions add nothing to it."
    return f"Above always predicting the majority class: {figures}."


#: what the utility page says of a release that classifies with the regression on its completed table
TABLE_CLASSIFIER_NOTE = ("The release's classifier is a logistic regression fitted on its completed synthetic "
                         "table (its marginals are two-way tables with chosen parents): post-processing, no ε.")


def utility_markdown(result: ReleaseResult, title: str = "Your data") -> str:
    """The NOT PRIVATE page for the data owner: the test errors of the release's classifier and
    of the references on the held-out rows and, for a synthetic table, its distance to the
    training part's shape (:func:`fidelity_table`), all rounded to :data:`UTILITY_DECIMALS`
    decimals. Empty text when the release was not evaluated."""
    if not len(result.utility):
        return ""
    table = result.utility.assign(error=[_rounded(e) for e in result.utility["error"].astype(float)])
    shape = fidelity_table(getattr(result, "fidelity", {}))
    shape_part = [] if shape.empty else [
        "## Shape: the synthetic table against the training part", "",
        markdown_frame(shape.assign(**{c: [_rounded(v) for v in shape[c].astype(float)]
                                       for c in ("mean TVD", "largest TVD")})), "",
        "Total-variation distance between the two tables' shares of rows over the schema's public bins "
        "(0: the same shape, 1: nothing in common), for every column and every pair of columns, the "
        "target included, rounded like the errors. The errors above say whether to use the release's "
        "classifier; the shape, whether to use its synthetic table for counts and cross-tabulations.", ""]
    return "\n".join([
        f"# NOT PRIVATE — {title}: utility of the {result.method} release (ε = {result.epsilon:.3g})", "",
        "**For the data owner only: do not publish or share this file.** These errors were measured on "
        "the held-out rows of the private table, outside the release's ε.", "",
        markdown_frame(table), "", *([verdict, ""] if (verdict := majority_verdict(result.utility)) else []),
        *([TABLE_CLASSIFIER_NOTE, ""] if getattr(result.estimator, "classifier_data_", None) == "synthetic" else []),
        f"Errors are rounded to {UTILITY_DECIMALS} decimals, so that they give back no exact count of "
        "held-out rows. The majority class and the non-private logistic regression are references: the "
        "error a release should beat, and the error no private release can beat here.", "", *shape_part])


def export_release(result: ReleaseResult, folder: str | Path = ".", stem: str | None = None) -> dict[str, Path]:
    """Write the release next to the notebook (``folder``): the synthetic table (CSV), the ledger
    (CSV, grouped by :func:`ledger_csv_table`), the public schema (JSON) and the summary (Markdown) — the files to share — and, when
    the release was evaluated, the NOT PRIVATE utility (``<stem>_utility_not_private.md``, for
    the data owner only). Returns {kind: path}."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if stem is None:
        stem = re.sub(r"[^A-Za-z0-9]+", "_", f"{result.method}_eps_{result.epsilon:.3g}").strip("_").lower()
    paths = {"synthetic": folder / f"{stem}_synthetic.csv", "ledger": folder / f"{stem}_ledger.csv",
             "schema": folder / f"{stem}_schema.json", "summary": folder / f"{stem}_summary.md"}
    paths["synthetic"].write_bytes(synthetic_csv(result))
    ledger_csv_table(result.ledger).to_csv(paths["ledger"], index=False)
    paths["schema"].write_text(json.dumps(result.schema.to_dict(), indent=1), encoding="utf-8")
    paths["summary"].write_text(summary_markdown(result), encoding="utf-8")
    if len(result.utility):
        paths["utility"] = folder / f"{stem}_utility_not_private.md"
        paths["utility"].write_text(utility_markdown(result), encoding="utf-8")
    return paths
