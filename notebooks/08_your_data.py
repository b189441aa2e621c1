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
# # 08 · Your data: from a messy export to a private synthetic table
#
# **What you will learn**
#
# * **what one record is** — the unit of privacy: here a row is a hospital *stay*, so a patient with
#   k stays is protected at kε, not ε, unless each patient's stays are capped;
# * the analyst's path with a table dpexplore has never seen, as a script first
#   (`dpexplore.tables`: **read → pick columns → draft → declare → build → release → export**),
#   then as an app that calls the same functions;
# * why the schema must be *public*: bounds, category lists and classes read from the private table
#   leak information that no ε pays for, so every drafted value is flagged until you declare it;
# * how to declare a **rule** a column follows (one column fixed by another), so that every
#   synthetic row keeps it, for no ε;
# * how to bin long-tailed counts with **public cut points** (0 | 1 | 2–3 | 4–7 | …) instead of
#   equal-width intervals, and how to group a column with thousands of values;
# * how to read a release: which synthetic columns the method modelled and which were drawn from a
#   small paid marginal, where ε went, and why PrivPfC's grid can be too fine for a small table;
# * what happens with bad input: a one-line message saying what to do, and nothing spent.
#
# The table is generated here (`make_messy_table`, no download): six thousand hospital stays with
# the problems of a real export — fifty columns, many mostly empty, an integer 0/1 target,
# long-tailed counts, a numeric column with a few stray strings, a code with thousands of values.
# The exercises have an *exercise* cell where you type an answer and a *self-check* cell that says
# whether it is right (it never shows the answer).

# %%
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from IPython.display import Markdown, display

import dpexplore.plots  # noqa: F401  (charts drawn offline by JupyterLab and Voilà)
from dpexplore import lab, tables
from dpexplore.datasets import make_customer_table, make_messy_table
from dpexplore.domain import Attribute
from dpexplore.evaluate.showdown_results import rule_breaks
from dpexplore.exceptions import PrivacyLeakWarning
from dpexplore.plots.your_data import ledger_chart, marginals_chart, method_chart, occupancy_chart
from dpexplore.widgets.your_data import YourDataApp

folder = Path(tempfile.mkdtemp())          # where "your" file lives in this demo
raw = make_messy_table(6000, random_state=2026)
path = folder / "hospital_export.csv.gz"
raw.to_csv(path, index=False)              # a gzip-compressed CSV, as exports often are
print(f"{raw.shape[1]} columns, {int(raw.isna().any().sum())} of them with missing values")
raw.iloc[:5, [1, 2, 4, 9, 10, 14, 15, 17, 50]]

# %% [markdown]
# ## The unit of privacy: one stay, not one patient
#
# Each row of this export is one hospital **stay** (`encounter_id` numbers stays), not one patient.
# Differential privacy protects whatever neighbouring tables add or remove — here one stay. A patient
# with k stays is k records, and by group privacy a release at ε protects that patient only at **kε**
# (Dwork & Roth 2014, §2.3): at ε = 1, a patient with four stays is protected at ε = 4.
#
# To protect *patients*, bound what one patient can contribute before anything is counted: keep at
# most k stays per patient (by the patient identifier of the real export, with a rule that looks only
# at that patient's own rows, e.g. their first k stays), then release at ε/k per stay. Otherwise, say
# plainly that the guarantee is per stay. This generated table has no patient identifier, so the
# rest of the notebook releases per stay.
#
# **Exercise 08.1 (compute, 2 min).** The hospital wants every **patient** protected at ε = 1 and
# keeps at most **4 stays per patient**. What ε must the release use (per stay)?

# %% tags=["exercise"]
eps_per_stay = None   # your answer: a number
### BEGIN SOLUTION
eps_per_stay = 1.0 / 4
### END SOLUTION

# %% tags=["self-check"]
lab.check("08.1")

# %% [markdown]
# ## 1. Read the file and keep the columns you need
#
# `read_table` reads CSV, CSV.gz and Parquet (through DuckDB). Columns you leave out may hold
# anything: the 35 mostly-empty columns would otherwise stop the release. Keep nine predictors and
# the target; the identifier `encounter_id` goes too (an identifier is never a predictor).
#
# `check_table` is a **non-private** diagnosis, for your own machine: it may show the offending
# values and rows. The release itself never does: its messages name the column and the rule only,
# since an error message is an output too.

# %%
KEEP = ["n_visits", "n_meds", "n_emergency", "n_inpatient", "n_outpatient",
        "admission_type", "discharge", "age_band", "weight_kg", "readmitted"]
try:
    tables.check_table(tables.read_table(path), "readmitted")
except tables.InputError as err:
    print("all 51 columns →", err)
frame = tables.read_table(path, columns=KEEP)
frame.head(3)

# %% [markdown]
# ## 2. Draft a schema, then declare it
#
# The draft reads every domain from the data — a convenience, and a leak. Its notes say what to
# do about the rest: here, `weight_kg` holds a few strings ("?", "unknown"), so it is drafted as
# a number with those values missing (not as a category in text order).

# %%
with warnings.catch_warnings(record=True) as leaks:   # the draft reads domains from the data, so it
    warnings.simplefilter("always", PrivacyLeakWarning)  # warns PrivacyLeakWarning: its text is the first note below
    draft, notes = tables.draft_schema(frame, "readmitted")
assert any(issubclass(w.category, PrivacyLeakWarning) for w in leaks)
for note in notes:
    print("•", note)
draft[["column", "kind", "lower", "upper", "integer", "cuts", "from_data"]]

# %% [markdown]
# Declaring means typing what you know **without looking at the data**: visit counts are between
# 0 and 60 in this hospital's system, weights between 30 and 200 kg, the category lists come from
# the data dictionary. Do **not** copy a value from the draft: the draft read it from the private
# table, and a bound copied from it is still a function of the data, whoever typed it (a maximum
# copied from the draft tells whether the largest record is in). Take each value from a source that
# does not depend on the rows — the data dictionary, the system's rules, the range of the form —
# even when it happens to agree with the draft.
#
# Cut points: a count column is long-tailed (most stays list 0–3 visits, a few list 40).
# `cuts="long-tail"` proposes bins that double in width — 0 | 1 | 2–3 | 4–7 | 8–15 | … — computed from
# the declared bounds only. You can also type your own (`cuts=[1, 2, 4, 11]`).

# %%
COUNT_BOUNDS = {"n_visits": 60, "n_meds": 60, "n_emergency": 30, "n_inpatient": 30, "n_outpatient": 30}
for name, upper in COUNT_BOUNDS.items():
    draft = tables.declare(draft, name, lower=0, upper=upper, integer=True, cuts="long-tail")
draft = tables.declare(draft, "weight_kg", lower=30, upper=200, integer=False,
                       cuts=[50, 60, 70, 80, 90, 100, 120, 150])
draft = tables.declare(draft, "age_band", categories=[f"[{10 * i}-{10 * (i + 1)})" for i in range(10)])
draft = tables.declare(draft, "admission_type",
                       categories=["emergency", "urgent", "elective", "newborn", "trauma", "other"])
draft = tables.declare(draft, "discharge", categories=["home", "home care", "transfer", "rehab", "hospice",
                                                       "left", "other", "unknown"])
draft = tables.declare(draft, "readmitted", categories=["0", "1"])
schema, encoded, leaks = tables.build_schema(frame, draft, missing="drop-rows")
print("still read from the data:", leaks or "nothing")

# %% [markdown]
# **Exercise 08.2 (predict, then run, 2 min).** With 8 equal-width bins over the declared [0, 60]
# instead (0–7, 8–15, …), what share of the stays would the first bin hold? (a) about an eighth,
# (b) about half, (c) nearly all of them (over 80 %). Answer with a letter; the cell after the
# self-check prints it.

# %% tags=["exercise"]
first_bin_share = None   # your answer: "a", "b" or "c"
### BEGIN SOLUTION
first_bin_share = "c"
### END SOLUTION

# %% tags=["self-check"]
lab.check("08.2")

# %% tags=["reveal"]
long_tail = schema["n_visits"].taxonomy
shares = np.bincount(long_tail.leaf_codes(encoded["n_visits"]), minlength=long_tail.n_leaves) / len(encoded)
print("n_visits per long-tail bin:", " · ".join(f"{b}: {s:.0%}" for b, s in zip(long_tail.leaves, shares)))
equal = tables.parse_cuts("n_visits", "equal", 0, 60, True, (2, 2, 2))   # 8 equal-width bins
print("with 8 equal-width bins over [0, 60], the first bin (0–7) would hold "
      f"{np.mean(equal.leaf_codes(encoded['n_visits']) == 0):.0%} of the rows")

# %% [markdown]
# <details><summary>What the equal-width bins would do (open it after you ran the cell)</summary>
#
# Most stays list few visits: the long-tail bins 0, 1, 2–3 and 4–7 hold about a fifth of the stays
# each, while one equal-width bin, 0–7, would hold over 80 % of them and leave seven bins to share
# the rest. A grid over such bins sees almost no difference between the stays, and its sparse upper
# bins are mostly noise. Bins that double in width follow the long tail.
# </details>

# %% [markdown]
# `missing="drop-rows"` removed the rows with a missing or text weight: a rule applied to each
# record on its own (it does not look at other rows), so it costs no ε.
#
# ### A rule you know: declare it too
#
# No column of this table is fixed by another, so the draft's notes suggest no rule. Many tables
# have some: in the customer table of notebook 07 (`make_customer_table`) an add-on service says
# "No internet service" exactly when `InternetService` is "No". The draft notes each rule that holds
# in every row, with its declaration ready to paste; it read them from the data (**not private**), so
# declare only the rules you know from the system, after `build_schema`. A declared rule is kept in
# every synthetic row and costs no ε: what it fixes is not measured.

# %%
customers, customer_schema = make_customer_table(7000, random_state=2026)   # declared, no rule yet
with warnings.catch_warnings(record=True):
    warnings.simplefilter("always", PrivacyLeakWarning)   # the draft reads the data: noted, as above
    _, customer_notes = tables.draft_schema(customers, "Churn")
print("•", next(note for note in customer_notes if note.startswith("'OnlineSecurity'")))
customer_schema = customer_schema.replace(Attribute.derived(
    "OnlineSecurity", "InternetService", mapping={"No": "No internet service"}, otherwise=["No", "Yes"]))
print("declared rules (column: its source):", customer_schema.rules)

# %% [markdown]
# The stored runs of notebook 07 (`benchmarks/fidelity.py`, ε = 1, PrivPfC, ten runs) with all
# seven rules declared and without, next to OpenDP's MST, which cannot be told a rule:

# %%
at_one = rule_breaks(Path("results")).xs(1.0, level="epsilon")
mst = at_one.loc[at_one.index.str.startswith("opendp MST")].iloc[0]
display(Markdown("\n".join(
    f"- {who}: worst add-on rule broken in {row['rules_addon_max']:.0%} of the synthetic rows, "
    f"mean 2-way TVD {row['tvd_2way']:.3f}"
    for who, row in [("PrivPfC, rules not declared", at_one.loc["PrivPfC", "not declared"]),
                     ("PrivPfC, rules declared", at_one.loc["PrivPfC", "declared"]),
                     ("MST (pure ε)", mst["not declared"])])))

# %% [markdown]
# ## 3. Release, with a progress bar
#
# PrivPfC at ε = 1. 20 % of the rows are held out, each independently, to measure the error; 0.7
# of ε (`marginal_share`, every method's default: PrivPfC's grid choice keeps its accuracy with the
# rest, and the other methods' classifiers learn from the table it completes) pays small marginals of the columns:
# each a two-way table with a privately chosen parent (the class or a column drawn before it), so
# that no synthetic column is uniform filler and each keeps its strongest relation; the columns
# the method models are drawn together inside the cells it releases, each given its parent. At
# small ε (a column's share for the choice below 0.004) the choice would be mostly chance, and
# every column gets a one-way marginal instead. The summary says, per column, how it was produced.

# %%
result = tables.release(encoded, schema, "PrivPfC", 1.0, leaks=leaks, random_state=8)
display(Markdown(tables.summary_markdown(result, title="Hospital stays")))

# %% [markdown]
# The summary above holds released values only: it is the page to share. How well the release
# classifies the held-out rows is measured on the true rows, so it is **not private**: it is
# shown apart, rounded, and written to a file of its own (`…_utility_not_private.md`) that stays
# with the data owner. So is the synthetic table's **shape** next to it: its total-variation distance
# (TVD) to the training part over the public bins, for each column and each pair of columns
# (0 = the same shares of rows). The errors say whether to use the release's classifier (the page
# says it in words: above, level with or **below always predicting the majority class**, a model
# worse than no model at all); the shape says whether to use its table for counts and
# cross-tabulations (notebook 07, section 7, compares the methods on both).

# %%
display(Markdown(tables.utility_markdown(result)))

# %% [markdown]
# The files go **next to this notebook** (not inside its HTML): the synthetic table, the ledger, the
# public schema (JSON, to reload with `Schema.from_json`), this summary and, apart, the non-private
# utility page.

# %%
files = tables.export_release(result, "dp_release")
{kind: str(p) for kind, p in files.items()}

# %%
ledger_chart(result.ledger)

# %% [markdown]
# ## 4. Every method on this table, and a lesson about grids
#
# One release per method, ε and seed takes minutes, so the notebook reads a stored run of
# `benchmarks/08_your_data_sweep.py` (same table, same declarations, 3 seeds; recompute with
# `python benchmarks/08_your_data_sweep.py`). Grey dashes: majority class; black: a non-private
# logistic regression (the error no private release can beat here).

# %%
sweep = pd.read_csv(Path("results") / "08_messy_sweep.csv")
display(method_chart(sweep))
sweep.pivot_table(index="method", columns="epsilon", values="error").round(3)

# %% [markdown]
# PrivPfC does **not** improve steadily with ε here. Its quality score is the accuracy of the
# noisy histogram *on the training table*; with more ε, finer grids look better on that score, and
# it picks grids with thousands of cells for a few thousand records. Expected records per cell (the
# released record count divided by the grid's cells) shows it — the summary above reports it for
# every PrivPfC release. When it drops below a handful, coarsen: fewer cut points, grouped
# categories, fewer columns.

# %%
occupancy_chart(sweep)

# %% [markdown]
# **Exercise 08.3 (interpret the chart, 3 min).** Read the chart above at the largest ε: about how
# many records per cell does PrivPfC's chosen grid hold? (a) more than 50, (b) between 5 and 50,
# (c) about one or fewer. Then decide what you would change in the declarations.

# %% tags=["exercise"]
records_per_cell = None   # your answer: "a", "b" or "c"
### BEGIN SOLUTION
records_per_cell = "c"
### END SOLUTION

# %% tags=["self-check"]
lab.check("08.3")

# %% [markdown]
# ## 5. The same path as an app
#
# The app calls the functions above and nothing else. Read it top to bottom: **1.** upload a file
# (CSV, CSV.gz, Parquet) or type a path and press **Load**; **2.** tick the columns to keep (columns
# with missing values start unticked) and choose the **Target**; **3.** one row per column, the
# drafted values shown in grey and flagged **⚠ from data** until you type a value (or tick
# *public*, only when a public source such as the data dictionary gives that same value); cut
# points for numbers, a list — or groups `A: a, b; other: *` — for categories; under the rows, a **derived column** (`tables.declare` with `derived_from`): choose the column it
# is computed from, type its name and either edges and one label per band (a number) or a mapping
# `label: value, value*; other: *` (categories), press **Add** — it is listed as *derived* and every
# release computes it from its source, with no ε; **4.** method, **ε** (typed: outside 0.01–10 is
# an error, never a silent clamp), the share of ε for marginals, **Release**: a progress bar, the
# summary, links to the files.

# %%
app = YourDataApp(method="DiffGen", random_state=11)
app.load(str(path))                                      # what typing the path and Load does
app.columns.value = tuple(KEEP)
app.apply_columns.click()
app.drop_missing.value = True
for name, upper in COUNT_BOUNDS.items():                 # typing the public bounds
    row = app.rows[name]
    row["lower"].value, row["upper"].value = "0", str(upper)
app.rows["weight_kg"]["lower"].value, app.rows["weight_kg"]["upper"].value = "30", "200"
app.derived_source.value, app.derived_name.value = "n_visits", "visit_band"   # a derived column
app.derived_edges.value, app.derived_labels.value = "0, 1, 5, 60", "none, 1-4, 5+"
app.derived_add.click()
for name in ("admission_type", "discharge", "age_band"):
    app.rows[name]["public"].value = True               # the drafted lists are in the data dictionary
print("still ⚠ from data:", app.leak_rows())
app.release()
display(app.widget)

# %% [markdown]
# The target's classes were left flagged on purpose: the summary's last section lists them as a
# PrivacyLeakWarning, and so does the message above the summary.
#
# ## 6. Bad input gets one line that says what to do
#
# Each of these is refused **before** anything is spent.

# %%
dup = folder / "duplicated_header.csv"
make_messy_table(200, random_state=1, duplicate_names=True).to_csv(dup, index=False)
codes = tables.read_table(path, columns=["diag_code", "gender", "readmitted"])
cases = {
    "duplicate header": lambda: tables.read_table(dup),
    "a spreadsheet": lambda: tables.read_table(b"PK\x03\x04 not a table", "stays.xlsx"),
    "text in a number column": lambda: tables.build_schema(frame, draft),
    "ε = 0": lambda: tables.release(encoded, schema, "PrivPfC", 0),
    "ε = 10⁶": lambda: tables.release(encoded, schema, "PrivPfC", 1e6),
    "classes typed as words": lambda: tables.build_schema(
        frame, tables.declare(draft, "readmitted", categories=["no", "yes"]), missing="drop-rows"),
}
for case, call in cases.items():
    try:
        call()
    except tables.InputError as err:
        print(f"{case:>24}: {err}")
with warnings.catch_warnings(record=True) as caught:     # a warning, with a remedy
    warnings.simplefilter("always")
    tables.draft_schema(codes, "readmitted")
    tables.build_schema(codes, tables.declare(tables.declare(tables.draft_schema(codes, "readmitted")[0],
                                                            "gender"), "readmitted"))
print(f"{'thousands of codes':>24}:", next(str(w.message) for w in caught
                                        if issubclass(w.category, tables.HighCardinalityWarning)))

# %% [markdown]
# ## 7. The synthetic table next to the private one
#
# Shares of rows per declared bin or category, private (blue) and synthetic (orange), for the
# scripted PrivPfC release of section 3. PrivPfC counts records at the level of its grid: inside a
# column it kept coarse (say `n_visits` in two bins, 0–7 and 8–60), the synthetic values are drawn
# from that column's small paid one-way marginal at its declared bins, so the shares inside a coarse
# bin follow the data's, up to noise. Columns it did not model come from their own paid marginal,
# counted jointly with one "parent" column chosen privately (the target or another column) and
# drawn given each synthetic row's parent value: their shares match too, and so does their relation
# to that parent, but not to the other columns. The summary's table says which
# column is which; the 1-way TVD of section 3 sums up the gaps you see here in one number.

# %%
marginals_chart(encoded, result.synthetic, schema.predictors, schema=schema)

# %% [markdown]
# ## Take-aways
#
# * Script it or click it: `dpexplore.tables` is the workflow, the app is a thin layer over it.
# * Know your unit of privacy: ε protects one row. When a person has several rows (stays, visits,
#   transactions), cap their rows and divide ε, or the person is protected only at k·ε.
# * The guarantee covers the rows, not the schema: type the bounds, categories and classes you would
#   know without the data; whatever is still read from it is listed as a PrivacyLeakWarning.
# * Bins matter: long-tail cut points keep the information of count columns; group columns with
#   thousands of values; keep the grid coarse enough that cells hold more than a few records.
# * Read the summary: which columns the method modelled, which came from a marginal, where ε went.
