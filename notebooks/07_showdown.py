# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 07 · Showdown: which private method for which budget?
#
# ## What you will learn
#
# - how every private classifier of dpexplore does on the same two tables — **Adult** (income,
#   2 classes) and **Adult-Multiclass** (marital status, 3 classes) — across ε;
# - how to read **accuracy against ε with its spread**: the median over repeated runs, the band
#   between the quartiles, and the reference lines: the **majority class** (what a method must
#   beat), a **non-private** logistic regression (what privacy costs) and, in grey, what you would
#   use **instead of dpexplore** at the same ε (diffprivlib's naive Bayes and logistic regression,
#   OpenDP's MST synthesizer);
# - what each method costs in **run time**;
# - a **"which one when"** verdict, computed from the results below (not typed in);
# - **accuracy or shape**: a release's classifier and its synthetic table serve different uses, and
#   the best at one is not always the best at the other.
# - **a table's logic**: what share of synthetic rows break a rule every real row keeps, and what
#   declaring the rule changes.
#
# The methods: four that *publish* a private table and classify with it — **PrivPfC** (notebook 02),
# **DiffMulti** and its baseline **DiffGen** (03), the **projected histogram** (06) — and two private
# models — **k-subset selection + naive Bayes** (04) and **objective-perturbation logistic
# regression** (04/05). Every run uses the same train/test split for all methods (paired
# comparison); the test accuracy is measured without noise (not private: this is the analyst's
# benchmark, not a release).
#
# **This page opens from a stored run.** Fitting six methods at four budgets, three times, on two
# tables takes many minutes, so the sweep was run once by `benchmarks/showdown_sweep.py`
# and its results ship with the notebooks (`notebooks/results/07_showdown_*`). Opening the page —
# in JupyterLab or as a Voilà app — only reads those files and draws; in the Voilà app, move the
# **ε slider** in section 3 to rank the methods at another budget.

# %%
from pathlib import Path

import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from dpexplore import lab
from dpexplore.config import quick
from dpexplore.evaluate.sweeps import summarise
from dpexplore.evaluate.showdown_results import (RULE_BREAKS, load_fidelity, load_peers,   # no scikit-learn
                                                 load_showdown, rule_breaks, which_one_when)
from dpexplore.plots import load_charts
from dpexplore.plots.showdown import error_chart, runtime_chart
from dpexplore.widgets.showdown import ShowdownExplorer
import altair as alt   # after dpexplore.plots, which loads altair quickly (dpexplore/plots/_render.py)

_ = alt.data_transformers.disable_max_rows()

RESULTS = Path("results")             # notebooks/results, next to this notebook
METRIC = "accuracy"

# %% [markdown]
# ## Recompute (off by default)
#
# Set `RECOMPUTE = True` in JupyterLab and run the notebook to redo the sweep here with the same
# function and settings the stored run used (about 10–20 minutes on 2 cores; with
# `DPEXPLORE_QUICK=1`, a 3,000-row sample, two budgets and one run: about a minute). From a terminal,
# `python benchmarks/showdown_sweep.py` rewrites the stored files instead.

# %%
RECOMPUTE = False

# %%
if RECOMPUTE:
    from dpexplore.evaluate.showdown import SHOWDOWN_SETTINGS, showdown_sweep, showdown_tables

    run = dict(SHOWDOWN_SETTINGS, **({"epsilons": [0.1, 1.0], "repetitions": 1, "rows": 3000} if quick() else {}))
    data = showdown_tables(run["rows"], run["seed"])
    results, availability = showdown_sweep(data, run["epsilons"], run["repetitions"], random_state=run["seed"],
                                           n_jobs=2)
    meta = {"settings": dict(run, created="now, in this notebook", commit="this working tree"),
            "epsilons": run["epsilons"], "repetitions": run["repetitions"]}
else:
    results, availability, meta = load_showdown(RESULTS)

settings = meta["settings"]
rows = settings.get("rows")
sample = "all rows" if rows in (None, "all") else f"a stratified sample of {rows:,} rows"
display(Markdown(
    f"**{'Recomputed here' if RECOMPUTE else 'Stored run'}**: ε grid {', '.join(f'{e:.3g}' for e in meta['epsilons'])}, "
    f"{meta['repetitions']} run(s) per point on "
    f"{sample} of each table (80% to fit, 20% to test); "
    f"made {settings.get('created', '?')} from commit `{str(settings.get('commit', '?'))[:10]}` "
    f"({settings.get('wall_seconds', '?')} s of wall time)."))

# %% [markdown]
# ## 1. Which methods are available?
#
# Before the sweep, each candidate was fitted once on 2,000 rows of each table; a method that fails
# (not installed, or not made for this kind of target) is left out, with the reason. With three
# classes, the thesis's k-subset selection scores the last class against the rest.

# %%
availability.pivot(index="method", columns="dataset", values="status")

# %%
excluded = availability[availability.status == "excluded"]
display(Markdown("Every candidate ran on both tables." if excluded.empty else
                 "\n".join(f"- {r.method} on {r.dataset}: {r.reason}" for r in excluded.itertuples())))

# %% [markdown]
# ## 2. The sweep
#
# `showdown_sweep` calls `sweep(methods, data, epsilons, repetitions)`, which fits every method at
# every ε on stratified 80/20 splits and returns one tidy row per (method, ε, run, metric). The seed
# of each fit comes from a `SeedSequence` keyed by method, ε and run, so the table is the same
# whether the runs are serial or in parallel processes. `baselines` scores the majority class and a
# non-private logistic regression on the same splits (their ε is "inf": no privacy). `summarise`
# turns the runs into a median and quartiles per point.
#
# The sweep is a **benchmark, not a release**: it fits many private models on the same people and
# measures them without noise. Were it a release, what would it cost? (In the lab: exercise 07.1.)

# %% tags=["exercise"]
# Exercise 07.1 (compute, 3 min). The stored sweep fits each of the 6 methods at ε = 0.03, 0.1, 0.3
# and 1, three times, on training splits drawn from the same people of one table. If these fits were
# released, what ε would sequential composition charge a person who is in every training split?
sweep_epsilon = None   # your answer: a number
### BEGIN SOLUTION
sweep_epsilon = 6 * 3 * (0.03 + 0.1 + 0.3 + 1.0)
### END SOLUTION

# %% tags=["self-check"]
lab.check("07.1")

# %%
results.head()

# %%
summary = pd.concat([summarise(g).assign(dataset=d) for d, g in results.groupby("dataset", sort=False)],
                    ignore_index=True)
table = summary[np.isfinite(summary.epsilon) & (summary.metric == METRIC)].pivot_table(
    index=["dataset", "method"], columns="epsilon", values="median")
table.columns = [f"ε = {e:.3g}" for e in table.columns]
table.round(3)

# %% [markdown]
# ## 3. Accuracy against ε
#
# One line per method: the median test accuracy over the runs; the shaded band spans the quartiles.
# Dashed lines: the majority class and the non-private logistic regression (no ε). In grey, the
# **other libraries** at the same ε on Adult (from `benchmarks/peers.py`, a separate stored run;
# their settings are in its notes). Read a column of the chart as "at this budget, who is best?"
# and a line as "how fast does this method recover when ε grows?".

# %%
peers = load_peers(RESULTS / "peers.csv")
if peers is None:
    display(Markdown("*No stored peers benchmark (`notebooks/results/peers.csv`): the chart shows "
                     "dpexplore's methods only.*"))
else:
    notes = peers.drop_duplicates("label")
    display(Markdown("Other libraries, at the same ε on Adult, the mean over "
                     f"{int(peers['n_runs'].max())} run(s) at most:\n" +
                     "\n".join(f"- **{r.label}** ({r.library} {r.library_version})" +
                               (f": ε-DP relaxed to (ε, δ)-DP with δ = {r.delta:.0e}" if r.delta > 0 else ": pure ε-DP")
                               + (f"; {r.notes}" if r.notes else "") for r in notes.itertuples())))
error_chart(summary, metric=METRIC, peers=peers,
            title=f"Test accuracy against ε (median and quartiles over {meta['repetitions']} runs)")

# %% tags=["exercise"]
# Exercise 07.2 (interpret the chart, 2 min). On Adult, at the smallest ε of the chart (0.03): is the
# projected histogram's median accuracy "above" or "below" DiffGen's?
projected_vs_diffgen = None   # your answer: "above" or "below"
### BEGIN SOLUTION
projected_vs_diffgen = "below"
### END SOLUTION

# %% tags=["self-check"]
lab.check("07.2")

# %% tags=["exercise"]
# Exercise 07.3 (interpret the bands, 3 min). Each point of the chart summarises three runs. What is
# the lower edge of a shaded band (the 25 % quantile of three values)? (a) a 95 % confidence bound on
# the median, (b) the value halfway between the lowest run and the median, (c) the lowest run.
band_edge = None   # your answer: "a", "b" or "c"
### BEGIN SOLUTION
band_edge = "b"
### END SOLUTION

# %% tags=["self-check"]
lab.check("07.3")

# %% [markdown]
# ### At your budget
#
# Move the **ε slider**: each step is one budget of the sweep, and the chart ranks the methods at
# that budget, best first — bars are median accuracies, the black line the quartiles, the dashed
# lines the majority class and the non-private reference, grey bars the other libraries. Nothing is
# refitted: the charts were made from the stored results when the page opened.

# %%
explorer = ShowdownExplorer(summary, metric=METRIC, peers=peers, epsilon=0.1)
explorer.widget

# %% [markdown]
# ## 4. Run time
#
# Median fit time of one release (or model) in seconds, on the machine of the stored run (its
# settings above), log scale. Publishing methods spend most of it choosing the grid or the
# partition; the private logistic regression solves a perturbed optimisation problem per class.

# %%
runtime_chart(summary)

# %%
times = summary[np.isfinite(summary.epsilon)].groupby(["dataset", "method"])["seconds"].median().unstack(0)
times.round(2)

# %% [markdown]
# ## 5. Which one when
#
# Computed from the summary: per dataset and ε, the method with the highest median accuracy, the
# runner-up, whether the best one's lower quartile is above the majority class (does it reliably
# beat guessing?), its gap to the non-private reference, and the fastest method within one point of
# accuracy of the best.

# %%
verdict = which_one_when(summary, metric=METRIC, tolerance=0.01)
verdict[["dataset", "epsilon", "best", "median", "runner_up", "beats_majority", "gap_to_nonprivate",
         "fastest_good"]].round(3)   # the columns described above: the table fits a laptop's window

# %%
lines = []
for row in verdict.itertuples():
    beat = "beats the majority class" if row.beats_majority else "does **not** reliably beat the majority class"
    fast = ("" if row.fastest_good == row.best else
            f" {row.fastest_good} is within one point and faster ({row.fastest_seconds:.2f} s).")
    lines.append(f"- **{row.dataset}, ε = {row.epsilon:.3g}**: {row.best} (median accuracy {row.median:.3f}, "
                 f"runner-up {row.runner_up} {row.runner_up_median:.3f}) {beat}; "
                 f"{row.gap_to_nonprivate:+.3f} from non-private.{fast}")
wins = verdict.groupby("dataset")["best"].agg(lambda s: s.value_counts().idxmax())
lines.append("")
lines += [f"Most often best on {d}: **{m}**." for d, m in wins.items()]
lo, hi = verdict["epsilon"].min(), verdict["epsilon"].max()
for d, g in verdict.groupby("dataset"):
    best_lo = g.loc[g["epsilon"] == lo, "best"].iloc[0]
    best_hi = g.loc[g["epsilon"] == hi, "best"].iloc[0]
    change = "the same method" if best_lo == best_hi else "the ranking changes with ε"
    lines.append(f"On {d}: best at the smallest ε ({lo:.3g}) **{best_lo}**, at the largest ({hi:.3g}) "
                 f"**{best_hi}**: {change}.")
if peers is not None:
    adult = summary[(summary.dataset == "Adult") & (summary.metric == METRIC) & np.isfinite(summary.epsilon)]
    best_ours = adult.groupby("epsilon")["median"].max()
    for e, g in peers[peers.metric == METRIC].groupby("epsilon"):
        if e in best_ours.index:
            top = g.loc[g["value"].idxmax()]
            side = "ahead of" if top["value"] > best_ours[e] else "behind"
            lines.append(f"Adult, ε = {e:.3g}: the best other library ({top['label']}, {top['value']:.3f}) is "
                         f"{side} dpexplore's best ({best_ours[e]:.3f}).")
display(Markdown("\n".join(lines)))

# %% [markdown]
# ## 6. Does one histogram degrade more gracefully?
#
# A common expectation: at small ε, a method that spends its budget on *one* noisy histogram
# (PrivPfC, the projected histogram) should hold up better than one that splits ε over many steps
# (DiffMulti, DiffGen) or many noisy parameters (naive Bayes, logistic regression). The cell below
# tests it on the results: each method's rank at the smallest ε (1 = best median accuracy) and how
# much median accuracy it loses from the largest ε to the smallest.

# %%
ONE_HISTOGRAM = ["PrivPfC", "Projected histogram"]     # one noisy histogram each
private = summary[(summary.metric == METRIC) & np.isfinite(summary.epsilon)]
small_eps, large_eps = private["epsilon"].min(), private["epsilon"].max()
medians = private.pivot_table(index=["dataset", "method"], columns="epsilon", values="median")
report, held = [], {m: True for m in ONE_HISTOGRAM}
for d, g in medians.groupby(level="dataset", sort=False):
    g = g.droplevel("dataset")
    rank = g[small_eps].rank(ascending=False, method="min").astype(int)
    parts = []
    for m in ONE_HISTOGRAM:
        parts.append(f"{m} ranks {rank[m]} of {len(g)} (median {g.loc[m, small_eps]:.3f}, "
                     f"{g.loc[m, large_eps] - g.loc[m, small_eps]:.3f} below its ε = {large_eps:.3g} median)")
        held[m] &= bool(rank[m] <= len(g) // 2)          # in the better half of the methods
    report.append(f"- **{d}**, ε = {small_eps:.3g}: " + "; ".join(parts) + ".")
kept_up = [m for m in ONE_HISTOGRAM if held[m]]
fell_behind = [m for m in ONE_HISTOGRAM if not held[m]]
if not fell_behind:
    report.append("\nThe expectation held: both single-histogram methods are in the better half at the smallest ε "
                  "on every table.")
elif not kept_up:
    report.append("\nThe expectation did **not** hold: neither single-histogram method is in the better half at "
                  "the smallest ε on every table.")
else:
    report.append(f"\nThe expectation held for **{', '.join(kept_up)}** but **not** for **{', '.join(fell_behind)}**: "
                  "publishing one histogram is not enough by itself — how the histogram is chosen decides.")
report.append(f"\nEach median summarises {meta['repetitions']} run(s) per point.")
display(Markdown("\n".join(report)))

# %% [markdown]
# ## 7. Accuracy or shape: which one when
#
# The accuracy above judges one use of a release: its **classifier**. A publishing method also
# releases a **synthetic table**, which an analyst uses as a table — counts, shares, cross-tabulations.
# For that use what matters is its **shape**: how close its share of rows in each public bin is to
# the real table's. The measure is the total-variation distance (TVD: half the summed absolute
# differences of the shares; 0 = the same shape, 1 = nothing in common), averaged over every column
# (**1-way**) and over every pair of columns (**2-way**, what a cross-tabulation sees), the target
# included.
#
# The chart puts both on one page, from a stored run of `benchmarks/fidelity.py` (every publisher with
# its documented defaults, ε = 0.1 and 1, three runs (ten on the customers), the real rows split 80/20 record by record; its
# accuracies come from that run, so they differ slightly from the sweep above). **Higher** is a
# better classifier, **further left** a closer table; the grey hollow points are OpenDP's **MST**
# synthesizer (McKenna, Miklau & Sheldon 2021), what analysts usually pick for synthetic data, on
# the same bins and training rows (from `benchmarks/peers.py`: one run on Adult; three runs on the
# hospital stays, under (ε, δ) and under pure ε; ten runs under pure ε on the customers). Like the test accuracy, the distances read the real rows: an evaluation, **not
# private**. Recompute with `python benchmarks/fidelity.py --datasets adult messy --out
# notebooks/results/07_fidelity.csv` and `--datasets customers --out
# notebooks/results/07_fidelity_customers.csv` (a few minutes each).
#
# The third table, **customers**, is generated too (`dpexplore.datasets.make_customer_table`: 7,000
# rows modelled on the public telco churn tables, target `Churn`) and has a **logic**: its six
# add-on services say "No internet service" exactly when `InternetService` is "No", and
# `MultipleLines` says "No phone service" exactly when `PhoneService` is "No". Its chart shows the
# releases made with the plain schema, which is all MST knows too.
#
# The three charts depend on no control, and drawing them
# (`fidelity_chart(shape[shape.dataset == "adult"], peers=mst_on["adult"])`, from
# `dpexplore.plots.fidelity`) takes about a second of CPU, which every visitor of the Voilà app
# would pay: `python benchmarks/showdown_charts.py` draws them from the stored files, and this page
# reads them back.

# %%
shape, mst_on = load_fidelity(RESULTS)     # the runs of each table, and MST's points on it
TABLES = {"adult": "Adult", "messy": "Hospital stays (the generated table of notebook 08)",
          "customers": "Customers (rules not declared)"}
charts = load_charts(RESULTS / "07_fidelity_charts.json")   # fidelity_chart of each table, drawn once
charts["adult"]

# %%
charts["messy"]

# %%
charts["customers"]

# %%
by_point = shape.groupby(["dataset", "epsilon", "method"], sort=False)
medians = by_point[["accuracy", "tvd_1way", "tvd_2way", "majority"]].median().reset_index()
spread = by_point["tvd_2way"].agg(lambda runs: runs.max() - runs.min())   # a thin line's length
lines = []
for (d, e), g in medians.groupby(["dataset", "epsilon"], sort=False):
    top, close = g.loc[g["accuracy"].idxmax()], g.loc[g["tvd_2way"].idxmin()]
    gap = top["tvd_2way"] - close["tvd_2way"]
    runs = max(spread[d, e, top["method"]], spread[d, e, close["method"]])   # the longer of the two
    same = ("the same method" if gap == 0 else
            f"the best classifier's table is {gap:.3f} further, within the spread of the runs ({runs:.3f}): "
            "as close, as far as these runs can tell" if gap <= runs else
            f"**not** the same method: the best classifier's table is {gap:.3f} further, more than the "
            f"spread of the runs ({runs:.3f})")
    text = (f"- **{TABLES[d]}, ε = {e:.3g}**: best classifier **{top['method']}** (accuracy {top['accuracy']:.3f}, "
            f"majority class {top['majority']:.3f}); closest table **{close['method']}** (TVD "
            f"{close['tvd_1way']:.3f} 1-way, {close['tvd_2way']:.3f} 2-way): {same}.")
    if not (g["accuracy"] > g["majority"]).any():
        text += " No release's classifier beats the majority class here."
    if mst_on[d] is not None:
        for label, rows in mst_on[d][np.isclose(mst_on[d]["epsilon"], e)].groupby("label", sort=False):
            mst = rows.set_index("metric")["value"]
            if {"accuracy", "tvd_1way", "tvd_2way"} <= set(mst.index):
                text += (f" {label}: accuracy {mst['accuracy']:.3f}, TVD {mst['tvd_1way']:.3f} 1-way, "
                         f"{mst['tvd_2way']:.3f} 2-way (mean of {int(rows['n_runs'].max())} run(s)).")
    lines.append(text)
display(Markdown("\n".join(lines)))

# %% tags=["exercise"]
# Exercise 07.4 (interpret the chart, 3 min). On the generated table (the second chart) at ε = 1 you
# will publish a synthetic table that analysts will cross-tabulate (pairs of columns), with the
# guarantee of every dpexplore method: pure ε-DP (δ = 0). Which table would you pick: (a) PrivPfC's,
# (b) DiffMulti's, (c) OpenDP MST's under pure ε, or (d) none: these runs cannot tell them apart?
# Read the 2-way distances; a gap counts only when it is larger than the spread of the runs (the
# thin lines; the summary above gives both).
table_for_crosstabs = None   # your answer: "a", "b", "c" or "d"
### BEGIN SOLUTION
table_for_crosstabs = "d"
### END SOLUTION

# %% tags=["self-check"]
lab.check("07.4")

# %% [markdown] tags=["lab-only"]
# <details><summary>Like with like: same ε, same δ, several runs (open it after the check)</summary>
#
# On the generated table at ε = 1, under the same pure ε-DP, PrivPfC's and DiffMulti's tables are
# the closest: 0.044 and 0.049 2-way (the medians of their three runs), MST's 0.063 (pure ε). The
# gap between the two (0.005) is smaller than the longest thin line of the methods compared (0.007:
# PrivPfC's runs go from 0.042 to 0.049), so these runs cannot tell them apart: run more before
# choosing between them. MST also runs under (ε, δ)-DP with δ = 10⁻⁶, a weaker guarantee (an
# additive slack δ on the probability of every outcome, notebook 00); there it comes to 0.052,
# still above every run of both.
#
# On Adult the stored MST point is a single run under (ε, δ = 10⁻⁶): 0.040 against PrivPfC's
# median of three, 0.041. A single run has no spread of its own and the guarantees differ: that
# comparison cannot rank the two tables. Three runs of MST under pure ε on Adult (in the
# repository's `benchmarks/results/peers_mst_pure.csv`) come to 0.042: about PrivPfC's,
# as far as these runs can tell. Pick the method for the use (accuracy for predictions, shape for
# tables), and compare methods at the same ε and δ, over several runs.
# </details>

# %% [markdown]
# ### A table's logic: rules an analyst knows
#
# In every real customer row an add-on service says "No internet service" exactly when the
# internet service is "No". Open the first rows of a synthetic table and you may see a customer
# without internet who streams films: a **rule break**. The table below gives, for each method, the
# share of synthetic rows that break the rule of the worst of the six add-ons and the phone rule
# (mean of ten runs; in the real table: 0), with the mean 2-way TVD beside them:
#
# - **not declared**: the releases of the chart above, with the plain schema;
# - **declared**: the same releases with the rules declared in the schema
#   (`Attribute.derived(..., mapping=..., otherwise=...)`, notebook 08 shows how). A declared rule is
#   kept in every synthetic row, and costs no ε: what it fixes is not measured.
#
# MST has no way to be told a rule (it keeps the plain schema): its "declared" cells are empty.

# %%
breaks = rule_breaks(RESULTS)
MEASURES = {"tvd_2way": "2-way TVD", **RULE_BREAKS}
shown = breaks.rename(columns=MEASURES, level=1).rename(index=lambda m: m.removesuffix(" + LR"), level=0)
shown.index.names = ["method", "ε"]
shown.map(lambda v: "–" if pd.isna(v) else f"{v:.3f}")   # shares of rows (0.350 = 35 %), "–": no such run

# %%
at_one = breaks.xs(1.0, level="epsilon")
mst = at_one.index[at_one.index.str.startswith("opendp MST")][0]
ours = at_one.drop(mst)
closer = (ours[("declared", "tvd_2way")] < ours[("not declared", "tvd_2way")]).all()   # for every method?
display(Markdown(
    f"At ε = 1, with the rules **not declared**, dpexplore's tables break the worst add-on rule in "
    f"{ours[('not declared', 'rules_addon_max')].min():.0%}–{ours[('not declared', 'rules_addon_max')].max():.0%} "
    f"of their rows, MST's in {at_one.loc[mst, ('not declared', 'rules_addon_max')]:.0%}; **declared**, in "
    f"{ours[('declared', 'rules_addon_max')].max():.0%}, and the 2-way TVD {'falls' if closer else 'comes'} to "
    f"{ours[('declared', 'tvd_2way')].min():.3f}–{ours[('declared', 'tvd_2way')].max():.3f} "
    f"(MST: {at_one.loc[mst, ('not declared', 'tvd_2way')]:.3f}).\n\n"
    "**What it teaches:** a rule you know is free to declare, and every row keeps it; what the model "
    "cannot see, it can only approach: every method's noisy counts, MST's included, leave rows that "
    "break the rule (a noisy count is not a rule)."))

# %% [markdown]
# ## Take-aways
#
# - The stored verdict is a measurement on two tables with **three runs per point**. With three
#   values the "quartiles" of the bands are interpolated: the lower edge lies halfway between the
#   lowest run and the median, the upper edge halfway between the median and the highest run. They
#   show the spread of three runs, not a confidence interval: overlapping bands mean the two methods
#   are not distinguishable here, and even separate bands are weak evidence. Recompute with more
#   repetitions (`python benchmarks/showdown_sweep.py --repetitions 10`) and try your own table
#   (notebook 08) before trusting small differences.
# - "One histogram degrades more gracefully" is a hypothesis, not a rule: section 6 computes, from the
#   results, for which single-histogram method it held on these tables.
# - The other libraries are a reference, not a race: OpenDP's MST runs under (ε, δ)-DP (δ > 0: an
#   additive slack δ on the probability of every outcome; see notebook 00 and the
#   [glossary](../docs/glossary.md)), a weaker guarantee than the pure ε-DP of every dpexplore
#   method, and under pure ε; each library declares its domain differently (see
#   `benchmarks/peers.py`). Compare like with like: the same ε, the same δ.
# - Run time differs by orders of magnitude; a method that is nearly as good and much faster is often
#   the practical choice for exploring ε interactively.
# - Pick for the use: for predictions, the highest accuracy; for a table to count and cross-tabulate,
#   the smallest distance (section 7). dpexplore's methods choose their histogram for classification
#   (the papers' goal) and each spends half of ε or more on the table's shape by default; MST chooses its
#   marginals for the shape alone. A difference smaller than the spread of the runs is no
#   difference.
# - Declare the rules you know (section 7, and notebook 08): they are kept in every row for no ε.
